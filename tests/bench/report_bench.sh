#!/bin/sh
# report_bench.sh - how long `gpuvet report` takes on a large store, and how big the file is.
#
#   tests/bench/report_bench.sh [RUNS] [SOAK_SECONDS]     (defaults: 10000 runs, 60 s soak)
#
# Builds a store of RUNS runs: 20 synthetic fingerprints (tests/bench/synth_fingerprints.py,
# 5 instance types, 1 to 8 GPUs, every run with its soak series and size sweeps) imported with
# `gpuvet results import`, then copied in SQL under new uuids, later start times and (AWS) 40
# regions until there are RUNS runs (about 130 instance types, so the detail cap and the size
# budget are exercised).  SYNTHETIC DEMO DATA: it measures the report, not any GPU.
# Prints the store's size, the report's wall time (best of 3) and the file's size; exits 1 when
# the report takes 2 s or more or the file is 10 MB or more.
set -eu
RUNS=${1:-10000}
SOAK=${2:-60}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BIN=${GPUVET_BIN:-$ROOT/build/gpuvet}
DIR=$(mktemp -d "${TMPDIR:-/tmp}/gpuvet-report-bench.XXXXXX")
[ -n "${KEEP:-}" ] || trap 'rm -rf "$DIR"' EXIT INT TERM
export GPUVET_NO_METADATA=1

python3 "$ROOT/tests/bench/synth_fingerprints.py" --runs 20 --soak-seconds "$SOAK" -o "$DIR/t.json"
"$BIN" -q --db "$DIR/bench.db" results import "$DIR/t.json" >/dev/null
"$BIN" -q --db "$DIR/bench.db" rank --json >/dev/null   # loads the shipped price catalogs (real list prices)
python3 "$ROOT/tests/bench/synth_fingerprints.py" --prices-db "$DIR/bench.db"
python3 - "$DIR/bench.db" "$RUNS" <<'PY'
import sqlite3, sys
db, want = sys.argv[1], int(sys.argv[2])
# AWS copies spread over regions, so the store has many instance types (provider/type/region)
REGIONS = ["us-east-1", "us-east-2", "us-west-2", "eu-west-1", "eu-central-1", "eu-north-1", "ap-northeast-1",
           "ap-southeast-2", "ap-south-1", "sa-east-1", "ca-central-1", "us-west-1", "eu-west-2", "ap-northeast-2",
           "ap-southeast-1", "me-central-1", "eu-south-2", "il-central-1", "af-south-1", "ap-east-1",
           "eu-west-3", "us-gov-west-1", "ap-northeast-3", "eu-central-2", "mx-central-1", "ap-southeast-3",
           "ap-south-2", "eu-south-1", "me-south-1", "ca-west-1", "us-gov-east-1", "ap-southeast-4",
           "ap-southeast-5", "ap-southeast-7", "eu-north-2", "ap-east-2", "us-east-3", "us-west-3", "eu-west-4",
           "ap-northeast-4"]
c = sqlite3.connect(db)
tmpl = [r[0] for r in c.execute("SELECT id FROM runs ORDER BY id")]
cols = {t: [r[1] for r in c.execute("PRAGMA table_info(%s)" % t)] for t in
        ("runs", "gpus", "benches", "metrics", "series", "flags", "verdicts")}
n, k = len(tmpl), 0
while n < want:
    k += 1
    for old in tmpl:
        if n >= want:
            break
        rc = [x for x in cols["runs"] if x != "id"]
        sel = ["printf('%s-%06d', uuid, :k)" if x == "uuid" else
               "strftime('%Y-%m-%dT%H:%M:%SZ', started_at, printf('+%d hours', :h))" if x == "started_at" else
               "CASE WHEN provider = 'aws' THEN :region ELSE region END" if x == "region" else x
               for x in rc]
        cur = c.execute("INSERT INTO runs (%s) SELECT %s FROM runs WHERE id = :old" % (",".join(rc), ",".join(sel)),
                        {"k": k, "h": 20 * k, "old": old, "region": REGIONS[k % len(REGIONS)]})
        new = cur.lastrowid
        for t in ("gpus", "benches", "metrics", "series", "flags", "verdicts"):
            tc = [x for x in cols[t] if x not in ("run_id", "id")]
            c.execute("INSERT INTO %s (run_id, %s) SELECT ?, %s FROM %s WHERE run_id = ?"
                      % (t, ",".join(tc), ",".join(tc), t), (new, old))
        n += 1
    c.commit()
c.execute("PRAGMA wal_checkpoint(TRUNCATE)")
c.close()
PY
python3 - "$BIN" "$DIR" <<'PY'
import os, sqlite3, subprocess, sys, time
bin_, d = sys.argv[1], sys.argv[2]
db, out = os.path.join(d, "bench.db"), os.path.join(d, "report.html")
c = sqlite3.connect(db)
nruns = c.execute("SELECT count(*) FROM runs").fetchone()[0]
nsamp = c.execute("SELECT coalesce(sum(length(points)), 0) / 16 FROM series").fetchone()[0]
c.close()
print("store: %d runs, %d sample points, %.0f MB" % (nruns, nsamp, os.path.getsize(db) / 2**20))
best = None
for _ in range(3):
    t0 = time.monotonic()
    subprocess.run([bin_, "-q", "--db", db, "report", "-o", out], check=True)
    t = time.monotonic() - t0
    best = t if best is None else min(best, t)
size = os.path.getsize(out)
with open(out, encoding="utf-8") as f:
    detail = f.read().count('<section class="run"')
print("report: %d runs, %d in detail, %.3f s (best of 3), %d bytes (%.2f MB)" % (nruns, detail, best, size, size / 2**20))
bad = []
if best >= 2:
    bad.append("took 2 s or more")
if size >= 10_000_000:
    bad.append("10 MB or more")
if bad:
    print("FAIL: " + ", ".join(bad), file=sys.stderr)
sys.exit(1 if bad else 0)
PY
