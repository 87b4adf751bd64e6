#!/bin/sh
# price_csv_bench.sh - streams multi-hundred-MB AWS-format price lists through the
# fetcher's parser (the same aws_parser/csvrows/libcsv code that libcurl's write
# callback feeds, in 16 KiB chunks) and compares with `wc -l` on the same file.
#
#   tests/bench/price_csv_bench.sh [MB] [MIX...]
#
# MB (default 400): size of each generated file.  MIX (default: region gpu kept),
# files written by tests/bench/make_price_csv.py (see it for the row model):
#   region  a region's list: 5% of the instance types are GPU types, each type
#           with AWS's 588 rows of terms, operating systems, tenancies (the target)
#   gpu     every instance type a GPU type (an upper bound on libcsv's share)
#   kept    every row a kept price (the worst case: libcsv parses every byte)
# The parser runs in tests/bench/price_csv_bench.c, a small binary linking only the
# pricing sources (its peak RSS is the parser's; the shipped CLI has no hidden
# parse command since issue #27).  Targets (issue 6): at least 0.25 of wc -l's
# speed and under 64 MB peak RSS.  Not part of `make check`.
set -eu
MB=${1:-400}
[ $# -gt 0 ] && shift
MIXES=${*:-region gpu kept}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
DIR=$(mktemp -d)
trap 'rm -rf "$DIR"' EXIT INT TERM

PB=$DIR/price_csv_bench
LIB=${GPUVET_LIB:-$ROOT/build/libgpuvet.a}   # `make` builds it; only the objects the parser needs are linked
CUDA=${CUDA:-/usr/local/cuda}
cc -O2 -std=c11 -D_GNU_SOURCE -pthread -I"$ROOT" -o "$PB" "$ROOT/tests/bench/price_csv_bench.c" "$LIB" \
	-L"$CUDA/lib64" -lsqlite3 -ljansson -lcsv -lcurl -lcrypto -lhwloc -luuid -lyaml -lturbojpeg \
	-lcudart_static -lstdc++ -ldl -lrt -lm

best() { # best wall time of 3 runs of "$@", seconds
	b=
	for _ in 1 2 3; do
		s=$(date +%s.%N); "$@" > /dev/null; e=$(date +%s.%N)
		t=$(echo "$e - $s" | bc -l)
		if [ -z "$b" ] || [ "$(echo "$t < $b" | bc -l)" = 1 ]; then b=$t; fi
	done
	echo "$b"
}
mbs() { printf '%.0f' "$(echo "$1 / 1000000 / $2" | bc -l)"; }
ratio() { printf '%.2f' "$(echo "$1 / $2" | bc -l)"; }

echo "machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(uname -r)"
for MIX in $MIXES; do
	F=$DIR/index-$MIX.csv
	python3 "$ROOT/tests/bench/make_price_csv.py" "$F" "$MB" --mix "$MIX"
	cat "$F" > /dev/null            # every run reads from the page cache
	BYTES=$(stat -c %s "$F")
	WC=$(best wc -l "$F")
	PBT=$(best "$PB" "$F")
	STATS=$("$PB" "$F")
	RSS_PB=$(/usr/bin/time -f %M "$PB" "$F" 2>&1 >/dev/null | tail -1)
	echo "== mix $MIX: $(echo "$BYTES / 1000000" | bc) MB, $(wc -l < "$F") lines"
	echo "wc -l:               $(mbs "$BYTES" "$WC") MB/s"
	echo "parser (bench bin):  $(mbs "$BYTES" "$PBT") MB/s, ratio to wc -l $(ratio "$WC" "$PBT") (target >= 0.25), peak RSS $(echo "$RSS_PB / 1024" | bc) MB (target < 64 MB)"
	echo "                     $STATS"
	rm -f "$F"
done
