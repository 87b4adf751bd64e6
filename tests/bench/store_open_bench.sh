#!/bin/sh
# store_open_bench.sh - what the corruption check on every open (PRAGMA quick_check) costs.
#
#   tests/bench/store_open_bench.sh [RUNS]     (default 10000 runs, 60 s soak series each)
#
# Builds the same store as report_bench.sh (SYNTHETIC DEMO DATA: 20 synthetic fingerprints
# copied in SQL until there are RUNS runs), then prints, best of 3 each: the wall time of
# `gpuvet results show 1 --text` (open with its quick_check, then one run read), of PRAGMA
# quick_check alone through Python's sqlite3, and of an open that only reads the header (the
# peer: what an open cost before the check), with the ratio of the check to the command.
# DB=PATH measures an existing store instead of building one.
set -eu
RUNS=${1:-10000}
SOAK=60
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BIN=${GPUVET_BIN:-$ROOT/build/gpuvet}
DIR=$(mktemp -d "${TMPDIR:-/tmp}/gpuvet-open-bench.XXXXXX")
[ -n "${KEEP:-}" ] || trap 'rm -rf "$DIR"' EXIT INT TERM
export GPUVET_NO_METADATA=1

if [ -n "${DB:-}" ]; then ln -s "$DB" "$DIR/bench.db"; else
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
fi
python3 - "$BIN" "$DIR/bench.db" <<'PY'
import os, sqlite3, subprocess, sys, time
bin_, db = sys.argv[1], sys.argv[2]
def best(f, n=3):
    b = None
    for _ in range(n):
        t0 = time.monotonic(); f(); t = time.monotonic() - t0
        b = t if b is None else min(b, t)
    return b
def qc():
    c = sqlite3.connect(db); assert c.execute("PRAGMA quick_check").fetchone()[0] == "ok"; c.close()
def hdr():
    c = sqlite3.connect(db); c.execute("PRAGMA user_version").fetchone(); c.close()
c = sqlite3.connect(db)
nruns = c.execute("SELECT count(*) FROM runs").fetchone()[0]
nsamp = c.execute("SELECT coalesce(sum(length(points)), 0) / 16 FROM series").fetchone()[0]
c.close()
lst = best(lambda: subprocess.run([bin_, "-q", "--db", db, "results", "show", "1", "--text"], check=True,
                                  stdout=subprocess.DEVNULL))
q, h = best(qc), best(hdr)
print("store: %d runs, %d sample points, %.0f MB" % (nruns, nsamp, os.path.getsize(db) / 2**20))
print("gpuvet results show 1: %.3f s   quick_check alone: %.3f s   header-only open: %.4f s" % (lst, q, h))
print("quick_check / (results show 1): %.2f   per 1000 runs: %.3f s" % (q / lst, q / nruns * 1000))
PY
