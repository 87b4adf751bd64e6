"""A `results import` killed with SIGKILL in the middle of a file (issue 38: the import writes a
whole file in one transaction, so a kill lands inside a transaction whose pages SQLite has already
spilled to the WAL): the store stays whole (integrity_check ok), the runs stored before are all
there, none of the killed file's runs is, and importing the file again stores all of it.

Fingerprints are the real captures (tests/fleetgen.py) under fresh uuids."""
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from conftest import gpuvet_bin  # noqa: E402
import fleetgen  # noqa: E402


def uuids(db):
    con = sqlite3.connect(db)
    try:
        assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        return {r[0] for r in con.execute("SELECT uuid FROM runs")}
    finally:
        con.close()


def test_kill_9_mid_file_keeps_the_store_and_none_of_the_file(gpuvet, tmp_path):
    first = tmp_path / "first.json"
    first.write_text(json.dumps(list(fleetgen.fleet(20))))
    gpuvet("results", "import", first, check=0)
    before = uuids(gpuvet.db)
    assert len(before) == 20
    big = tmp_path / "big.json"
    fleetgen.write_array(big, 800)
    wal = Path(gpuvet.db + "-wal")
    p = subprocess.Popen([gpuvet_bin(), "-q", "--db", gpuvet.db, "results", "import", str(big)], env=gpuvet.env,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    # pages of the open transaction already in the WAL: the kill lands mid-file
    while p.poll() is None and time.monotonic() < deadline and (not wal.exists() or wal.stat().st_size < 4 << 20):
        time.sleep(0.01)
    assert p.poll() is None, "the import finished before it could be killed mid-file"
    os.kill(p.pid, signal.SIGKILL)
    p.wait()
    assert uuids(gpuvet.db) == before
    out = gpuvet("results", "import", big, check=0)
    assert "800 run(s) imported, 0 already present" in out.stdout, out.stdout
    assert len(uuids(gpuvet.db)) == 820
