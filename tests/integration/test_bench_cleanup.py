"""Nothing a bench starts outlives it (issue #16 items 1, 2 and its crash loop): processes a bench
starts die with a stop or a deadline, work files go however the bench ends, and kill -9 at random
points never leaves a process, a work file or a damaged store."""
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
                     sha, start_run, stat_fields, tree_env, wait_for, wait_gone, within)


# ---- 1. nothing a bench starts outlives a stop or a deadline ----

@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_detached_bench_processes_die_with_a_stop(gpuvet, tmp_path, sig):
    p, marker = start_run(gpuvet, ["--bench", "null"], tree_env(tmp_path))
    # gpuvet, the keeper, the bench, its child and the detached grandchild
    assert wait_for(lambda: len(marked_pids(marker)) >= 5), marked_pids(marker)
    p.send_signal(sig)
    assert p.wait(timeout=20) == 2
    assert wait_gone(marker) == []
    assert [x.name for x in tmp_path.iterdir() if x.name.startswith("gpuvet-")] == []


def test_detached_bench_processes_die_at_the_deadline(gpuvet, tmp_path):
    p, marker = start_run(gpuvet, ["--bench", "null"], tree_env(tmp_path, GPUVET_NULL_DEADLINE=2))
    assert p.wait(timeout=30) == 0
    assert wait_gone(marker, within(1.0)) == []  # gone before gpuvet exits, not eventually
    assert [x.name for x in tmp_path.iterdir() if x.name.startswith("gpuvet-")] == []


@pytest.mark.skipif(not has_fio(), reason="fio not installed (Debian package fio)")
def test_fio_job_processes_die_with_a_stop(gpuvet, tmp_path):
    d = tmp_path / "nvme"
    d.mkdir()
    p, marker = start_run(gpuvet, ["--bench", "nvme", "--nvme-dir", str(d)], {})

    def fio_jobs():
        n = 0
        for pid in marked_pids(marker):
            try:
                n += open(f"/proc/{pid}/comm").read().strip() == "fio"
            except OSError:
                pass
        return n >= 3  # fio and its job processes (own sessions)
    assert wait_for(fio_jobs, 30)
    p.send_signal(signal.SIGTERM)
    assert p.wait(timeout=20) == 2
    assert wait_gone(marker) == []
    assert list(d.iterdir()) == []

# ---- 2. work files are removed however the bench ends ----

def test_kill_9_of_gpuvet_removes_the_work_directory(gpuvet, tmp_path):
    p, marker = start_run(gpuvet, ["--bench", "null"], tree_env(tmp_path))
    assert wait_for(lambda: any(tmp_path.glob("gpuvet-null-*/work.dat")))
    p.kill()
    p.wait(timeout=10)
    assert wait_gone(marker) == []
    assert list(tmp_path.glob("gpuvet-*")) == []


@pytest.mark.skipif(not has_fio(), reason="fio not installed (Debian package fio)")
def test_kill_9_during_fio_removes_its_files(gpuvet, tmp_path):
    d = tmp_path / "nvme"
    d.mkdir()
    p, marker = start_run(gpuvet, ["--bench", "nvme", "--nvme-dir", str(d)], {})
    assert wait_for(lambda: any(d.glob("gpuvet-fio-*/*.dat")), 30)
    p.kill()
    p.wait(timeout=10)
    assert wait_gone(marker) == []
    assert list(d.iterdir()) == []


def test_kill_9_of_the_bench_process_removes_the_work_directory(gpuvet, tmp_path):
    p, marker = start_run(gpuvet, ["--bench", "null"], tree_env(tmp_path))
    assert wait_for(lambda: any(tmp_path.glob("gpuvet-null-*/work.dat")))
    # the bench is the marked process with a child in a session of its own: kill it alone
    time.sleep(0.2)
    st = {q: stat_fields(q) for q in marked_pids(marker)}
    bench = [q for q, f in st.items() if any(g[1] == str(q) and g[3] != f[3] for g in st.values())]
    assert len(bench) == 1, st
    bench = bench[0]
    os.kill(bench, signal.SIGKILL)
    assert p.wait(timeout=20) == 0
    assert wait_gone(marker) == []
    assert list(tmp_path.glob("gpuvet-*")) == []


# ---- the hunt as a habit: kill -9 at random points, 100 times ----

def test_crash_loop_kill_9_at_random_points(gpuvet, tmp_path):
    import random
    rng = random.Random(16)
    work = tmp_path / "work"
    work.mkdir()
    complete_before = 0
    modes = ["ok", "tree", "slow", "ok"]

    def null_env(mode, marker):
        return dict(gpuvet.env, GPUVET_TEST_BENCHES="1", GPUVET_NULL_MODE=mode, GPUVET_NULL_SECONDS="1",
                    GPUVET_NULL_WORKDIR=str(work), GPUVET_TEST_MARKER=marker)

    # How long a whole "ok" run takes on this machine (a slow CI box takes several times
    # what a laptop does): the kills are drawn over twice that, so some land after the
    # commit and most before it, whatever the machine's speed.
    t0 = time.monotonic()
    subprocess.run([gpuvet_bin(), "--db", str(tmp_path / "calibrate.db"), "run", "-q", "--bench", "null,objstore"],
                   env=null_env("ok", str(uuid.uuid4())), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   check=True, timeout=60)
    t_ok = time.monotonic() - t0
    # The machine's speed drifts while the loop runs (a loaded CI box, the other suite beside this
    # one): each run that finishes before its kill says how long a whole run takes now, and the
    # next kills are drawn over twice the median of the latest such times.
    seen = [t_ok]
    t_start = time.monotonic()
    for i in range(100):
        mode = modes[i % len(modes)]
        marker = str(uuid.uuid4())
        env = null_env(mode, marker)
        t_run = time.monotonic()
        p = subprocess.Popen([gpuvet_bin(), "--db", gpuvet.db, "run", "-q", "--bench", "null,objstore"], env=env,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            p.wait(timeout=rng.uniform(0.0, 2.0 * t_ok))
            if mode == "ok" and p.returncode == 0:
                seen.append(time.monotonic() - t_run)
                t_ok = sorted(seen[-5:])[len(seen[-5:]) // 2]
        except subprocess.TimeoutExpired:
            pass
        p.kill()
        p.wait(timeout=10)
        left = wait_gone(marker, within(3.0))
        assert left == [], (i, mode, left)
        assert list(work.iterdir()) == [], (i, mode)
        if os.path.exists(gpuvet.db):
            con = sqlite3.connect(gpuvet.db)
            try:
                assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok", i
                # the first run killed between creating the file and committing its schema leaves a file
                # without tables (the next run writes the schema): only before any run was complete
                tables = con.execute("SELECT count(*) FROM sqlite_master WHERE name='runs'").fetchone()[0]
                assert tables or complete_before == 0, (i, "the store lost its schema")
                n = con.execute("SELECT count(*) FROM runs WHERE status='complete'").fetchone()[0] if tables else 0
            finally:
                con.close()
            assert n >= complete_before, (i, n, complete_before)  # no committed run is lost
            complete_before = n
    assert complete_before > 0, t_ok  # some runs finished between the kills: the kills hit all phases
    assert complete_before < 60, t_ok  # and most were cut short (about a quarter finish)
    assert time.monotonic() - t_start < 60 + 200 * max(seen)
