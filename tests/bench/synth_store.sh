#!/bin/sh
# synth_store.sh - the large synthetic store report_bench.sh and store_open_bench.sh measure.
#
#   tests/bench/synth_store.sh DB RUNS SOAK_SECONDS
#
# 20 synthetic fingerprints (tests/bench/synth_fingerprints.py, 5 instance types, 1 to 8 GPUs,
# every run with its soak series and size sweeps) imported with `gpuvet results import`, then
# copied in SQL under new uuids, later start times and (AWS) 40 regions until there are RUNS runs
# (about 130 instance types).  SYNTHETIC DEMO DATA: it measures gpuvet's store, not any GPU.
set -eu
DB=$1
RUNS=$2
SOAK=$3
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BIN=${GPUVET_BIN:-$ROOT/build/gpuvet}
export GPUVET_NO_METADATA=1
T=$(mktemp "${TMPDIR:-/tmp}/gpuvet-synth.XXXXXX.json")
trap 'rm -f "$T"' EXIT INT TERM
python3 "$ROOT/tests/bench/synth_fingerprints.py" --runs 20 --soak-seconds "$SOAK" -o "$T"
"$BIN" -q --db "$DB" results import "$T" >/dev/null
"$BIN" -q --db "$DB" rank --json >/dev/null   # loads the shipped price catalogs (real list prices)
python3 "$ROOT/tests/bench/synth_fingerprints.py" --prices-db "$DB"
python3 - "$DB" "$RUNS" <<'PY'
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
