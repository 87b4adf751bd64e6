#!/usr/bin/env python3
"""How gpuvet's store commands scale with a fleet's runs (issue 17), against SQLite itself.

    tests/bench/fleet_bench.py [--runs 1000,10000,100000] [--keep DIR]

For each size N it builds a store of N runs from the real captures
(tests/fixtures/gpu/: the 30-second-soak runs of an H100 and an H200,
imported with `gpuvet results import`, then copied in SQL under fresh
uuids, two providers and 25 regions, as a fleet's merged stores look), then
times each command (wall seconds, best of 3) and its peak resident memory,
and beside it the sqlite3 shell doing the same rows' work:

  report -o x.html          -
  rank --json               one GROUP BY over the headline metric
  results list --json       SELECT the list's columns FROM runs
  results export --format csv   .mode csv of every metric row joined with its run
  results import F          (F: N fingerprints in one JSON array; N <= 10000) into a fresh store;
                            sqlite3's `.import` of the same rows (CSV dumped from gpuvet's store, a
                            series' points as hex text) into an empty store of the same schema,
                            indexes and pragmas (WAL, synchronous=NORMAL, foreign keys), one
                            transaction, as gpuvet imports one file

A measurement, not a test: it prints a table and exits 0.  The numbers in
README's fleet section come from it.  Peak RSS is the child's ru_maxrss.
"""
import argparse
import csv
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
BIN = os.environ.get("GPUVET_BIN", str(ROOT / "build" / "gpuvet"))
sys.path.insert(0, str(ROOT / "tests"))
from fleetgen import captures, write_array  # noqa: E402
REGIONS = ["us-east-1", "us-east-2", "us-west-1", "us-west-2", "eu-west-1", "eu-west-2", "eu-west-3",
           "eu-central-1", "eu-north-1", "ap-northeast-1", "ap-northeast-2", "ap-northeast-3", "ap-southeast-1",
           "ap-southeast-2", "ap-south-1", "sa-east-1", "ca-central-1", "me-central-1", "af-south-1",
           "ap-east-1", "eu-south-1", "il-central-1", "cn-hangzhou", "cn-beijing", "cn-shanghai"]
SKUS = [("aws", "p5.48xlarge"), ("aws", "p5.4xlarge"), ("lambda", "gpu_1x_h100_sxm5"),
        ("lambda", "gpu_8x_h100_sxm5"), ("aws", "p5en.48xlarge")]
CHILD_TABLES = ("gpus", "benches", "metrics", "series", "flags", "verdicts")
ENV = dict(os.environ, GPUVET_NO_METADATA="1")


TIME = shutil.which("time") or ("/usr/bin/time" if os.path.exists("/usr/bin/time") else None)


LAST_CPU = [0.0]   # the CPU seconds (user + system) of the last run(): a figure a loaded machine leaves alone


def run(cmd, stdout=subprocess.DEVNULL):
    """Wall seconds and peak RSS (MiB) of one child (its CPU seconds in LAST_CPU).  The RSS comes from
    /usr/bin/time's own wait4 on the command: a child forked from this (large) Python process would
    otherwise report the parent's resident size at fork as its own peak."""
    full = [TIME, "-f", "GPUVET_BENCH_RSS_KB %M"] + list(map(str, cmd)) if TIME else cmd
    t0 = time.monotonic()
    p = subprocess.Popen(full, stdout=stdout, stderr=subprocess.PIPE, env=ENV)
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.monotonic() - t0
    LAST_CPU[0] = ru.ru_utime + ru.ru_stime
    err = p.stderr.read().decode(errors="replace")
    p.stderr.close()
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"fleet_bench: {' '.join(map(str, cmd))} failed: {err.strip()[:300]}")
    kb = [int(line.split()[1]) for line in err.splitlines() if line.startswith("GPUVET_BENCH_RSS_KB ")]
    return wall, (kb[-1] if kb else ru.ru_maxrss) / 1024


def best(cmd, n=3):
    r = [run(cmd) for _ in range(n)]
    return min(w for w, _ in r), max(m for _, m in r)


def smaller_store(work, n):
    """The largest store this script kept in work with fewer than n runs, or None."""
    have = sorted((int(p.stem.split("-")[1]), p) for p in work.glob("fleet-*.db")
                  if p.stem.split("-")[1].isdigit() and int(p.stem.split("-")[1]) < n)
    return have[-1][1] if have else None


def build(db, n, base=None):
    """The captures imported, then doubled in SQL (a few set-based statements per round) up to n runs:
    fresh uuids, one of SKUS (two providers) and one of 25 REGIONS per run, started times spread
    over the year before the captures.  With base (a smaller store this script built), its copy
    is the start: a 1M store grows from the kept 100k one in minutes, not from the captures."""
    if base:
        shutil.copyfile(base, db)
        # one read-write open migrates an older schema before the rows are doubled
        run([BIN, "-q", "--db", db, "rank", "--json"], stdout=subprocess.DEVNULL)
    else:
        seed = captures()
        with tempfile.TemporaryDirectory() as td:
            f = Path(td) / "seed.json"
            f.write_text(json.dumps(seed))
            run([BIN, "-q", "--db", db, "results", "import", str(f)])
    c = sqlite3.connect(db, isolation_level=None)
    cols = {t: [r[1] for r in c.execute(f"PRAGMA table_info({t})")] for t in ("runs",) + CHILD_TABLES}
    c.execute("CREATE TEMP TABLE skus (k INTEGER PRIMARY KEY, provider TEXT, instance_type TEXT)")
    c.executemany("INSERT INTO skus VALUES (?, ?, ?)", [(i, p, t) for i, (p, t) in enumerate(SKUS)])
    c.execute("CREATE TEMP TABLE regions (k INTEGER PRIMARY KEY, region TEXT)")
    c.executemany("INSERT INTO regions VALUES (?, ?)", list(enumerate(REGIONS)))
    # ids 1..have, contiguous (a fresh store's import)
    have = c.execute("SELECT count(*) FROM runs").fetchone()[0]
    assert c.execute("SELECT max(id) FROM runs").fetchone()[0] == have
    rc = [x for x in cols["runs"] if x not in ("id", "uuid", "provider", "instance_type", "region",
                                               "started_at", "finished_at")]
    uuid_sql = ("lower(printf('%s-%s-4%s-%s%s-%s', hex(randomblob(4)), hex(randomblob(2)), "
                "substr(hex(randomblob(2)), 2), substr('89ab', 1 + abs(random()) % 4, 1), "
                "substr(hex(randomblob(2)), 2), hex(randomblob(6))))")
    shift = "'-' || ((r.id + ?1) * 7919 % 31536000) || ' seconds'"
    while have < n:
        k = min(have, n - have)
        c.execute("BEGIN")
        c.execute(f"INSERT INTO runs (id, uuid, provider, instance_type, region, started_at, finished_at, "
                  f"{', '.join(rc)}) SELECT r.id + ?1, {uuid_sql}, "
                  f"(SELECT provider FROM skus WHERE k = (r.id + ?1) * 31 % {len(SKUS)}), "
                  f"(SELECT instance_type FROM skus WHERE k = (r.id + ?1) * 31 % {len(SKUS)}), "
                  f"(SELECT region FROM regions WHERE k = (r.id + ?1) * 17 % {len(REGIONS)}), "
                  f"strftime('%Y-%m-%dT%H:%M:%SZ', r.started_at, {shift}), "
                  f"strftime('%Y-%m-%dT%H:%M:%SZ', r.finished_at, {shift}), {', '.join(rc)} "
                  f"FROM runs r WHERE r.id <= ?2 ORDER BY r.id", (have, k))
        for t in CHILD_TABLES:
            cc = [x for x in cols[t] if x not in ("id", "run_id")]
            order = "run_id, id" if "id" in cols[t] else "run_id, rowid"
            c.execute(f"INSERT INTO {t} (run_id, {', '.join(cc)}) SELECT run_id + ?1, {', '.join(cc)} "
                      f"FROM {t} WHERE run_id <= ?2 ORDER BY {order}", (have, k))
        c.execute("COMMIT")
        have += k
    c.execute("ANALYZE")
    c.close()


SQL = {
    "rank --json": "SELECT r.provider, r.instance_type, r.region, count(*), avg(m.value) FROM metrics m "
                   "JOIN runs r ON r.id = m.run_id WHERE m.name = 'gemm.bf16.tflops' AND m.gpu = -1 "
                   "GROUP BY 1, 2, 3;",
    # the list's own statement (results/store_read.c): its columns and three counts per run
    "results list --json": "SELECT r.id, r.uuid, r.status, r.profile, r.gpuvet_version, r.hostname, r.provider, "
                           "r.instance_type, r.region, r.gpu_model, r.gpu_count, r.started_at, r.finished_at, "
                           "(SELECT count(*) FROM benches b WHERE b.run_id = r.id AND b.name <> 'harness'), "
                           "(SELECT count(*) FROM benches b WHERE b.run_id = r.id AND b.name <> 'harness' "
                           "AND b.status = 'ok'), (SELECT count(*) FROM flags f WHERE f.run_id = r.id) "
                           "FROM runs r ORDER BY r.started_at, r.id;",
    "results export --format csv": "SELECT r.id, r.uuid, r.started_at, r.status, r.provider, "
                                   "r.instance_type, r.region, r.gpu_model, r.gpu_count, m.bench, m.name, m.gpu, "
                                   "m.value, m.unit, m.params FROM metrics m JOIN runs r ON r.id = m.run_id "
                                   "ORDER BY r.started_at, r.id, m.id;",
}


def sqlite_time(db, name, repeat=3):
    if not shutil.which("sqlite3"):
        return None
    return best(["sqlite3"] + (["-csv"] if "csv" in name else []) + [db, SQL[name]], repeat)[0]


IMPORT_TABLES = ("runs", "gpus", "benches", "metrics", "series", "flags", "verdicts")


def import_peer(store, work):
    """sqlite3's .import of the rows gpuvet stored: the CSV files and the shell script (not timed),
    then a function timing one import into an empty copy of the schema."""
    c = sqlite3.connect(store)
    ddl = [r[0] for r in c.execute("SELECT sql FROM sqlite_master WHERE sql NOT NULL AND name NOT LIKE 'sqlite_%' "
                                   "ORDER BY type = 'index', rowid")]
    lines = ["PRAGMA journal_mode=WAL;", "PRAGMA synchronous=NORMAL;", "PRAGMA foreign_keys=ON;", "BEGIN;"]
    for t in IMPORT_TABLES:
        path = work / f"peer-{t}.csv"
        with open(path, "w", newline="") as f:
            w = csv.writer(f)
            for row in c.execute(f"SELECT * FROM {t} ORDER BY rowid"):
                w.writerow([v.hex() if isinstance(v, bytes) else v for v in row])
        lines.append(f".import --csv {path} {t}")
    lines.append("COMMIT;")
    c.close()
    script = work / "peer-import.sql"
    script.write_text("\n".join(lines) + "\n")

    def once():
        db = work / "peer.db"
        for x in (db, Path(f"{db}-wal"), Path(f"{db}-shm")):
            x.unlink(missing_ok=True)
        with sqlite3.connect(db) as d:
            d.executescript(";".join(ddl))
        d.close()
        with open(script) as f:
            t0 = time.monotonic()
            p = subprocess.Popen(["sqlite3", str(db)], stdin=f, stdout=subprocess.DEVNULL)
            _, status, ru = os.wait4(p.pid, 0)
            if os.waitstatus_to_exitcode(status):
                raise SystemExit("fleet_bench: sqlite3 .import failed")
            return time.monotonic() - t0, ru.ru_utime + ru.ru_stime
    return once


def bench_import(n, work, array, repeat):
    """`results import` of n fingerprints (one array) into a fresh store, best of repeat, beside
    sqlite3's .import of the same rows, the two alternating."""
    f = Path(array) if array else work / f"import-{n}.json"
    if not array:
        write_array(f, n)
    fresh = work / f"import-{n}.db"

    cpus = []

    def once():
        for x in (fresh, Path(f"{fresh}-wal"), Path(f"{fresh}-shm")):
            x.unlink(missing_ok=True)
        r = run([BIN, "-q", "--db", str(fresh), "results", "import", str(f)])
        cpus.append(LAST_CPU[0])
        return r
    runs = [once()]
    peer = import_peer(str(fresh), work) if shutil.which("sqlite3") else None
    # gpuvet and the peer alternate, so a slow spell of this shared VM falls on both
    peers = [peer()] if peer else []
    for _ in range(repeat - 1):
        runs.append(once())
        peers += [peer()] if peer else []
    w, m = min(x for x, _ in runs), max(y for _, y in runs)
    have = sqlite3.connect(fresh).execute("SELECT count(*) FROM runs").fetchone()[0]
    s = min(x for x, _ in peers) if peers else None
    ratio = f"{w / s:7.1f}" if s else "      -"
    print(f"{n:>7} {'results import (1 file)':<30} {w:9.3f} {m:9.1f} {s if s is not None else float('nan'):9.3f} "
          f"{ratio}", flush=True)
    print(f"{'':>7} {have} runs: gpuvet {have / w:.0f} runs/s" + (f", sqlite3 .import {have / s:.0f} runs/s" if s else ""),
          flush=True)
    if peers:   # CPU seconds, which other processes of a loaded machine do not stretch (issue 57)
        c, sc = min(cpus), min(x for _, x in peers)
        print(f"{'':>7} cpu: gpuvet {c:.3f} s (both threads), sqlite3 .import {sc:.3f} s: ratio {c / sc:.2f}", flush=True)
    if not array:
        f.unlink()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", default="1000,10000")
    ap.add_argument("--keep", help="keep the stores in this directory")
    ap.add_argument("--repeat", type=int, default=3, help="runs of each command (the best is printed)")
    ap.add_argument("--no-import", action="store_true", help="leave out `results import` (slow at 10k)")
    ap.add_argument("--only-import", action="store_true", help="only `results import` (no store is built)")
    ap.add_argument("--array", help="import this array of fingerprints (made by tests/fleetgen.py write_array) "
                    "instead of writing one; its runs are counted from the store")
    a = ap.parse_args()
    work = Path(a.keep or tempfile.mkdtemp(prefix="gpuvet-fleet-bench."))
    work.mkdir(parents=True, exist_ok=True)
    print(f"{'runs':>7} {'command':<30} {'gpuvet s':>9} {'peak MiB':>9} {'sqlite3 s':>9} {'ratio':>7}")
    try:
        for n in (int(x) for x in a.runs.split(",")):
            if a.only_import:
                bench_import(n, work, a.array, a.repeat)
                continue
            db = str(work / f"fleet-{n}.db")
            if not Path(db).exists():
                t0 = time.monotonic()
                build(db, n, smaller_store(work, n))
                print(f"{n:>7} {'(store built)':<30} {time.monotonic() - t0:9.1f}", flush=True)
            rows = [("report -o x.html", [BIN, "-q", "--db", db, "report", "-o", str(work / "x.html")])]
            for name in SQL:
                rows.append((name, [BIN, "-q", "--db", db] + name.split()))
            for name, cmd in rows:
                w, m = best(cmd, a.repeat)
                s = sqlite_time(db, name, a.repeat) if name in SQL else None
                ratio = f"{w / s:7.1f}" if s else "      -"
                print(f"{n:>7} {name:<30} {w:9.3f} {m:9.1f} {s if s is not None else float('nan'):9.3f} {ratio}",
                      flush=True)
            if n <= 10000 and not a.no_import:
                bench_import(n, work, a.array, a.repeat)
    finally:
        if not a.keep:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
