"""A file size limit is an error naming the file, never a silent kill (issue #47 item 7).

Under `ulimit -f` (RLIMIT_FSIZE) a write past the limit raised SIGXFSZ, which killed gpuvet with no
word (rc 153 in a shell), left `x.html.tmp.*` beside the report, and an import killed so had
committed runs without saying which.  gpuvet ignores SIGXFSZ: the write fails with EFBIG, the
command says which file and why, exits 2, removes its temporary, and an import names what it
stored and what it did not.
"""
import json
import os
import resource
import sqlite3
import subprocess
import uuid

from conftest import FIXTURES, gpuvet_bin

Q = FIXTURES / "gpu" / "h100-2026-11-22" / "quick-profile.json"


def limited(gpuvet, limit, *args):
    def lim():
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    return subprocess.run([gpuvet_bin(), "--db", gpuvet.db, *map(str, args)], capture_output=True, text=True,
                          env=gpuvet.env, preexec_fn=lim, timeout=120)


def runs(db):
    con = sqlite3.connect(db)
    n = con.execute("SELECT count(*) FROM runs").fetchone()[0]
    con.close()
    return n


def copies(tmp_path, n):
    fp = json.loads(Q.read_text())
    files = []
    for i in range(n):
        fp["run"]["uuid"] = str(uuid.uuid4())
        files.append(tmp_path / f"f{i}.json")
        files[-1].write_text(json.dumps(fp))
    return files


def test_report_and_export_past_the_limit_say_so_and_leave_no_temporary(gpuvet, tmp_path):
    gpuvet("results", "import", *copies(tmp_path, 4), check=0)   # an export of about 130 KiB
    full = tmp_path / "full.html"
    gpuvet("report", "-o", full, check=0)
    limit = 64 * 1024          # above the store's -shm (32 KiB), below the report (about 160 KiB)
    assert full.stat().st_size > limit
    for args, out in ((("report", "-o"), tmp_path / "x.html"),
                      (("results", "export", "--format", "json", "-o"), tmp_path / "x.json")):
        p = limited(gpuvet, limit, *args, out)
        assert p.returncode == 2, (args, p.returncode, p.stderr)
        assert "File too large" in p.stderr and out.name in p.stderr, p.stderr
        assert not out.exists()
        assert not [f for f in os.listdir(tmp_path) if ".tmp." in f or "gvtmp" in f], os.listdir(tmp_path)


def test_import_past_the_limit_names_what_it_stored(gpuvet, tmp_path):
    files = copies(tmp_path, 40)
    for limit in (256 * 1024, 768 * 1024, 1536 * 1024):   # before, around and after the commit
        gpuvet.db = str(tmp_path / f"s{limit}.db")
        gpuvet("results", "import", Q, check=0)
        con = sqlite3.connect(gpuvet.db)
        con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        con.close()
        before = runs(gpuvet.db)
        p = limited(gpuvet, limit, "results", "import", *files)
        assert p.returncode in (0, 2), (limit, p.returncode, p.stderr)      # never killed by SIGXFSZ
        said = p.stdout.count(": imported as run ")
        assert runs(gpuvet.db) - before == said, (limit, p.stdout, p.stderr)   # every stored run said
        if p.returncode:
            assert "File too large" in p.stderr and "not stored" in p.stderr, p.stderr
