#!/bin/sh
# store_open_bench.sh - what the corruption check on every open (PRAGMA quick_check) costs.
#
#   tests/bench/store_open_bench.sh [RUNS]     (default 10000 runs, 60 s soak series each)
#
# Builds the same store as report_bench.sh (tests/bench/synth_store.sh, SYNTHETIC DEMO DATA: 20
# synthetic fingerprints copied in SQL until there are RUNS runs), then prints, best of 3 each: the wall time of
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
sh "$ROOT/tests/bench/synth_store.sh" "$DIR/bench.db" "$RUNS" "$SOAK"
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
