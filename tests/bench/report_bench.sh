#!/bin/sh
# report_bench.sh - how long `gpuvet report` takes on a large store, and how big the file is.
#
#   tests/bench/report_bench.sh [RUNS] [SOAK_SECONDS]     (defaults: 10000 runs, 60 s soak)
#
# Builds a store of RUNS runs with tests/bench/synth_store.sh: 20 synthetic fingerprints
# copied in SQL until there are RUNS runs of about 130 instance types, so the detail cap and the
# size budget are exercised.  SYNTHETIC DEMO DATA: it measures the report, not any GPU.
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

sh "$ROOT/tests/bench/synth_store.sh" "$DIR/bench.db" "$RUNS" "$SOAK"
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
