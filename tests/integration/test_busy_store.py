"""A finished bench is never dropped for a busy store (issue 28 item 6).

Another process (here: this test, through Python's sqlite3) holds the store's write lock past the
10 s a commit waits.  gpuvet keeps waiting, says so on stderr, and stores the bench once the lock is
free; stopped while it waits, it keeps the bench's rows in a file beside the store, and the next
command that opens the store for writing stores them."""
import os
import signal
import sqlite3
import subprocess
import time

from conftest import gpuvet_bin
from helpers import wait_for


def start_run(gpuvet):
    env = dict(gpuvet.env, GPUVET_TEST_BENCHES="1", GPUVET_NULL_MODE="slow", GPUVET_NULL_SECONDS="2")
    p = subprocess.Popen([gpuvet_bin(), "--db", gpuvet.db, "run", "--bench", "null", "-q"], env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert wait_for(lambda: sqlite3.connect(gpuvet.db).execute("SELECT count(*) FROM runs").fetchone()[0] == 1)
    lock = sqlite3.connect(gpuvet.db, timeout=30, isolation_level=None)
    lock.execute("BEGIN IMMEDIATE")   # the write lock, held until released below
    return p, lock


def null_rows(gpuvet):
    c = sqlite3.connect(gpuvet.db)
    try:
        return c.execute("SELECT count(*) FROM benches WHERE name = 'null'").fetchone()[0], \
            c.execute("SELECT count(*) FROM metrics WHERE bench = 'null'").fetchone()[0]
    finally:
        c.close()


def read_line(stream, needle, timeout=40):
    """Reads stderr until a line holding needle (the process keeps running)."""
    seen = []
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        ln = stream.readline()
        if not ln:
            break
        seen.append(ln)
        if needle in ln:
            return seen
    raise AssertionError(f"no line with {needle!r}: {seen}")


def test_a_busy_store_is_waited_for_and_the_bench_stored(gpuvet):
    p, lock = start_run(gpuvet)
    try:
        read_line(p.stderr, "still waiting to store the null results")
    finally:
        lock.execute("ROLLBACK")
        lock.close()
    out, err = p.communicate(timeout=60)
    assert p.returncode == 0, err
    assert "stored the null results after" in err
    benches, metrics = null_rows(gpuvet)
    assert benches == 1 and metrics > 0
    assert [r["status"] for r in gpuvet.json("results", "list", "--json")] == ["complete"]


def test_a_stopped_wait_keeps_the_bench_for_the_next_command(gpuvet, tmp_path):
    p, lock = start_run(gpuvet)
    try:
        read_line(p.stderr, "still waiting to store the null results")
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=30)
    finally:
        lock.execute("ROLLBACK")
        lock.close()
    assert p.returncode != 0
    assert "the null results are kept in '" in err, err
    kept = err.split("kept in '")[1].split("'")[0]
    assert kept.startswith(gpuvet.db + ".pending/") and kept.endswith(".null.json")
    assert null_rows(gpuvet)[0] == 0
    # the next command that writes to the store stores them, and says so
    r = gpuvet("accept", check=None)
    assert "stored the null results of run 1 kept in" in r.stderr, r.stderr
    benches, metrics = null_rows(gpuvet)
    assert benches == 1 and metrics > 0
    assert not os.path.exists(kept) and not os.path.exists(gpuvet.db + ".pending")
    # and only once
    r = gpuvet("accept", check=None)
    assert "stored the null results" not in r.stderr
    assert null_rows(gpuvet) == (benches, metrics)
