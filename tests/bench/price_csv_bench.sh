#!/bin/sh
# price_csv_bench.sh - streams a multi-hundred-MB AWS-format price list through the
# fetcher's parser (the same aws_parser/csvrows/libcsv code that libcurl's write
# callback feeds, in 16 KiB chunks) and compares with `wc -l` on the same file.
# Two runs: tests/bench/price_csv_bench.c, a small binary linking only the pricing
# sources (its peak RSS is the parser's), and the hidden `gpuvet prices parse-aws`
# (whose RSS includes the CUDA libraries gpuvet maps at start; shown beside the RSS
# of `gpuvet --version` for that baseline).
#
#   tests/bench/price_csv_bench.sh [MB] [GPU_PERCENT]
#
# MB (default 400): size of the generated file.  GPU_PERCENT (default 2): share of
# rows that are GPU instances (the rest is skipped by the "GPU instance" prefilter
# before libcsv); 100 parses every row with libcsv.  Targets (issue 6): at least
# 0.25 of wc -l's speed and under 64 MB peak RSS.  Not part of `make check`.
set -eu
MB=${1:-400}
PCT=${2:-2}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BIN=${GPUVET_BIN:-$ROOT/build/gpuvet}
FIX=$ROOT/tests/fixtures/pricing/aws-ec2-us-east-1.csv
DIR=$(mktemp -d)
trap 'rm -rf "$DIR"' EXIT INT TERM
F=$DIR/index.csv

python3 - "$FIX" "$F" "$MB" "$PCT" <<'PY'
import sys
fix, out, mb, pct = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
lines = open(fix, "rb").read().splitlines(keepends=True)
head, rows = lines[:6], lines[6:]
other = [r for r in rows if b"GPU instance" not in r]
gpu = [r for r in rows if b"GPU instance" in r]
# a block of 100 rows with PCT GPU rows, repeated to the size asked for
n_gpu = int(round(pct))
block = b"".join((gpu[i % len(gpu)] for i in range(n_gpu))) + \
        b"".join((other[i % len(other)] for i in range(100 - n_gpu)))
target = mb * 1000 * 1000
with open(out, "wb") as f:
    f.write(b"".join(head))
    written = 0
    big = block * max(1, (8 << 20) // len(block))
    while written < target:
        f.write(big)
        written += len(big)
PY

PB=$DIR/price_csv_bench
cc -O2 -std=c11 -D_GNU_SOURCE -I"$ROOT" -o "$PB" "$ROOT/tests/bench/price_csv_bench.c" \
	"$ROOT/pricing/csvrows.c" "$ROOT/pricing/fetch_aws.c" "$ROOT/pricing/fetch.c" "$ROOT/pricing/catalog.c" \
	"$ROOT/pricing/catalog_data.c" "$ROOT/runners/util.c" -lcsv -lsqlite3 -lcurl -ljansson -lm

cat "$F" > /dev/null            # every run reads from the page cache
BYTES=$(stat -c %s "$F")

best() { # best wall time of 3 runs of "$@", seconds
	b=
	for _ in 1 2 3; do
		s=$(date +%s.%N); "$@" > /dev/null; e=$(date +%s.%N)
		t=$(echo "$e - $s" | bc -l)
		if [ -z "$b" ] || [ "$(echo "$t < $b" | bc -l)" = 1 ]; then b=$t; fi
	done
	echo "$b"
}

WC=$(best wc -l "$F")
PBT=$(best "$PB" "$F")
GV=$(best "$BIN" prices parse-aws "$F")
STATS=$("$PB" "$F")
RSS_PB=$(/usr/bin/time -f %M "$PB" "$F" 2>&1 >/dev/null | tail -1)
RSS_GV=$(/usr/bin/time -f %M "$BIN" prices parse-aws "$F" 2>&1 >/dev/null | tail -1)
RSS_BASE=$(/usr/bin/time -f %M "$BIN" --version 2>&1 >/dev/null | tail -1)

echo "file: $(echo "$BYTES / 1000000" | bc) MB, $(wc -l < "$F") lines, ${PCT}% GPU rows"
echo "machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(uname -r)"
echo "wc -l:               $(printf '%.0f' "$(echo "$BYTES / 1000000 / $WC" | bc -l)") MB/s"
echo "parser (bench bin):  $(printf '%.0f' "$(echo "$BYTES / 1000000 / $PBT" | bc -l)") MB/s, ratio to wc -l $(printf '%.2f' "$(echo "$WC / $PBT" | bc -l)") (target >= 0.25), peak RSS $(echo "$RSS_PB / 1024" | bc) MB (target < 64 MB)"
echo "                     $STATS"
echo "gpuvet parse-aws:    $(printf '%.0f' "$(echo "$BYTES / 1000000 / $GV" | bc -l)") MB/s, ratio $(printf '%.2f' "$(echo "$WC / $GV" | bc -l)"), peak RSS $(echo "$RSS_GV / 1024" | bc) MB (gpuvet --version alone: $(echo "$RSS_BASE / 1024" | bc) MB)"
