#!/bin/sh
# price_csv_bench.sh - streams a multi-hundred-MB AWS-format price list through the
# fetcher's parser (gpuvet prices parse-aws: the same aws_parser/csvrows/libcsv code
# that libcurl's write callback feeds) and compares with `wc -l` on the same file.
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

cat "$F" > /dev/null            # both runs read from the page cache
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
GV=$(best "$BIN" prices parse-aws "$F")
STATS=$("$BIN" prices parse-aws "$F")
RSS_KB=$(/usr/bin/time -f %M "$BIN" prices parse-aws "$F" 2>&1 >/dev/null | tail -1)

echo "file: $(echo "$BYTES / 1000000" | bc) MB, $(wc -l < "$F") lines, ${PCT}% GPU rows"
echo "machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(uname -r)"
echo "wc -l:             $(printf '%.0f' "$(echo "$BYTES / 1000000 / $WC" | bc -l)") MB/s"
echo "gpuvet parse-aws:  $(printf '%.0f' "$(echo "$BYTES / 1000000 / $GV" | bc -l)") MB/s ($STATS)"
echo "ratio to wc -l:    $(printf '%.2f' "$(echo "$WC / $GV" | bc -l)") (target >= 0.25)"
echo "peak RSS:          $(echo "$RSS_KB / 1024" | bc) MB (target < 64 MB)"
