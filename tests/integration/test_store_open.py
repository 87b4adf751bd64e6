"""Opening a store (issue #16 items 5, 10, 15): two first opens at once both succeed, a corrupt page
is refused untouched, a store marked as gpuvet's without a version is refused clearly."""
import json
import os
import signal
import sqlite3
import subprocess
import time
import uuid
from pathlib import Path

import pytest

from conftest import FIXTURES, gpuvet_bin
from helpers import (NULL, Holder, Listener, good_fp, has_fio, import_fixture, integrity_ok, make_store, marked_pids,
                     sha, start_run, stat_fields, tree_env, wait_for, wait_gone)


# ---- 5. concurrent first opens of a new store both succeed ----

def test_two_runs_on_a_new_store_both_succeed(gpuvet, tmp_path):
    env = dict(gpuvet.env, **NULL)
    fails = []
    # 100 pairs, each pair two runs started together on one new store; five pairs (on five stores) at
    # a time, so the hundred races take a fifth of the wall time
    for batch in range(20):  # main failed about 7 pairs in 100 within 30 ms
        dbs = [str(tmp_path / f"s{batch * 5 + k}.db") for k in range(5)]
        ps = [subprocess.Popen([gpuvet_bin(), "--db", db, "run", "--bench", "null", "-q"], env=env,
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
              for db in dbs for _ in range(2)]
        for p in ps:
            _, err = p.communicate(timeout=60)
            if p.returncode:
                fails.append(err.strip())
        for db in dbs:
            con = sqlite3.connect(db)
            assert con.execute("SELECT count(*) FROM runs WHERE status='complete'").fetchone()[0] == 2 \
                or fails
            con.close()
    assert fails == []

# ---- 10. a corrupt page is detected on open and the store refused ----

@pytest.mark.parametrize("args", [["run", "--bench", "null", "-q"], ["results", "list"],
                                  ["results", "export", "--format", "csv"], ["report", "-o", "r.html"]])
def test_a_corrupt_page_is_refused_untouched(gpuvet, tmp_path, args):
    make_store(gpuvet)
    assert os.path.getsize(gpuvet.db) > 20480 + 1024
    with open(gpuvet.db, "r+b") as f:  # what the issue did: 1 KiB over offset 20480
        f.seek(20480)
        f.write(b"\xab" * 1024)
    before = sha(gpuvet.db)
    p = gpuvet(*[str(tmp_path / a) if a == "r.html" else a for a in args], env=NULL)
    assert p.returncode == 2, (p.stdout, p.stderr)
    assert p.stderr.startswith(f"gpuvet: database '{gpuvet.db}' is corrupt ("), p.stderr
    assert p.stderr.count("\n") == 1, p.stderr
    assert sha(gpuvet.db) == before

# ---- 15. a store marked as gpuvet's with user_version 0 ----

def test_marked_store_without_version_is_refused_clearly(gpuvet):
    make_store(gpuvet, runs=1)
    con = sqlite3.connect(gpuvet.db)
    con.execute("PRAGMA user_version=0")
    con.commit()
    con.close()
    before = sha(gpuvet.db)
    p = gpuvet("run", "--bench", "null", "-q", env=NULL)
    assert p.returncode == 2
    assert "marked as gpuvet's but has no schema version" in p.stderr, p.stderr
    assert "already exists" not in p.stderr
    assert sha(gpuvet.db) == before
