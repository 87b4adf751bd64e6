#!/usr/bin/env python3
"""Bulk import, merge and the cost of a commit's durability (issue 17 items 3 and 4).

    tests/bench/collect_bench.py [--import-runs 10000] [--stores 1000] [--runs-per-store 10] [--runs 20]

  import   N real fingerprints (the captures under tests/fixtures/gpu/, the 30-60 s soak
           ones, under fresh uuids) in one JSON array: `results import F`, wall seconds
           and the child's peak RSS (ru_maxrss), against python's json.load of the same
           file (the peer: what a whole-document parse costs in time and memory)
  merge    S stores of R runs each (one made by `results import`, copied S-1 times with fresh
           uuids), `results merge S1 .. SS` into a fresh store in one command: wall seconds and
           peak RSS
  sync     `gpuvet run --bench null` (the harness's own fake bench) K times into one store
           with GPUVET_DB_SYNC=normal (the default) and =full: mean wall seconds per run and
           fsync+fdatasync calls per run (strace -f -c), when strace is installed

A measurement, not a test: it prints a table and exits 0.  README's figures come from it.
"""
import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
BIN = os.environ.get("GPUVET_BIN", str(ROOT / "build" / "gpuvet"))
sys.path.insert(0, str(ROOT / "tests"))
from fleetgen import captures, fleet, write_array  # noqa: E402
ENV = dict(os.environ, GPUVET_NO_METADATA="1")


def run(cmd, env=ENV):
    """Wall seconds and peak RSS (MiB) of one child."""
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.monotonic() - t0
    err = p.stderr.read().decode(errors="replace")
    p.stderr.close()
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"collect_bench: {' '.join(map(str, cmd))} failed: {err.strip()[:300]}")
    return wall, ru.ru_maxrss / 1024


def peer_load(path):
    code = f"import json; json.load(open({str(path)!r}))"
    return run(["python3", "-c", code])


def bench_import(work, n, seed):
    f = work / "import.json"
    write_array(f, n, seed=seed)
    db = work / "import.db"
    w, m = run([BIN, "-q", "--db", str(db), "results", "import", str(f)])
    pw, pm = peer_load(f)
    mb = f.stat().st_size / 1e6
    print(f"import   {n} fingerprints ({mb:.0f} MB): {w:.2f} s, peak RSS {m:.1f} MiB   "
          f"(python json.load alone: {pw:.2f} s, {pm:.0f} MiB; time ratio {w / pw:.2f})", flush=True)
    f.unlink()


def bench_merge(work, stores, per, seed):
    """One store of `per` runs made by gpuvet, copied `stores` times with fresh uuids (SQL)."""
    import sqlite3
    d = work / "stores"
    d.mkdir()
    f = d / "runs.json"
    f.write_text(json.dumps(list(fleet(per, seed=seed))))
    first = d / "node0000.db"
    run([BIN, "-q", "--db", str(first), "results", "import", str(f)])
    con = sqlite3.connect(first)
    con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    con.close()
    paths = [str(first)]
    for i in range(1, stores):
        p = d / f"node{i:04d}.db"
        shutil.copyfile(first, p)
        con = sqlite3.connect(p)
        for (rid,) in con.execute("SELECT id FROM runs").fetchall():
            con.execute("UPDATE runs SET uuid = ? WHERE id = ?", (str(uuid.uuid4()), rid))
        con.commit()
        con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        con.close()
        paths.append(str(p))
    db = work / "fleet.db"
    w, m = run([BIN, "-q", "--db", str(db), "results", "merge", *paths])
    con = sqlite3.connect(db)
    n = con.execute("SELECT count(*) FROM runs").fetchone()[0]
    con.close()
    assert n == stores * per, n
    print(f"merge    {stores} stores of {per} runs ({n} runs stored): {w:.2f} s, peak RSS {m:.1f} MiB "
          f"({w / stores * 1000:.1f} ms per store)", flush=True)


def fsyncs(cmd, env):
    if not shutil.which("strace"):
        return None
    out = subprocess.run(["strace", "-f", "-c", "-e", "trace=fsync,fdatasync", "-o", "/dev/stdout", *cmd],
                         env=env, capture_output=True, text=True).stdout
    return sum(int(line.split()[3]) for line in out.splitlines()
               if line.strip().endswith(("fsync", "fdatasync")) and len(line.split()) >= 5)


def bench_sync(work, k):
    for level in ("normal", "full"):
        env = dict(ENV, GPUVET_DB_SYNC=level, GPUVET_TEST_BENCHES="1")
        db = work / f"sync-{level}.db"
        cmd = [BIN, "-q", "--db", str(db), "run", "--bench", "null"]
        run(cmd, env)  # the store exists before timing
        walls = [run(cmd, env)[0] for _ in range(k)]
        n = fsyncs(cmd, env)
        print(f"sync     {level:<6} `run --bench null` x{k}: {sum(walls) / k * 1000:.1f} ms per run "
              f"(min {min(walls) * 1000:.1f}), {n if n is not None else '?'} fsync/fdatasync per run", flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--import-runs", type=int, default=10000)
    ap.add_argument("--stores", type=int, default=1000)
    ap.add_argument("--runs-per-store", type=int, default=10)
    ap.add_argument("--runs", type=int, default=20, help="null-bench runs per sync level")
    ap.add_argument("--only", choices=["import", "merge", "sync"])
    a = ap.parse_args()
    seed = captures()
    with tempfile.TemporaryDirectory(dir=os.environ.get("TMPDIR", "/var/tmp")) as td:
        work = Path(td)
        if a.only in (None, "import"):
            bench_import(work, a.import_runs, seed)
        if a.only in (None, "merge"):
            bench_merge(work, a.stores, a.runs_per_store, seed)
        if a.only in (None, "sync"):
            bench_sync(work, a.runs)


if __name__ == "__main__":
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    main()
