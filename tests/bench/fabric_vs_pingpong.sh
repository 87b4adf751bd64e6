#!/bin/sh
# fabric_vs_pingpong.sh - gpuvet's fabric pair (benches/fabric.c) against libfabric's own
# fi_pingpong (libfabric-bin), same provider (tcp, RDM endpoints), same address, in one run,
# interleaved round by round so both see the same machine load.
#
#   tests/bench/fabric_vs_pingpong.sh [ROUNDS [IP]]      (5, 127.0.0.1)
#
# Per round: two gpuvet pairs (1 s each way, 1 MiB messages, 8 in flight; 2,000 round trips of
# 8 bytes), one polling its completion queue and one sleeping in it (GPUVET_FABRIC_WAIT), fi_pingpong with 1 MiB messages (-S 1048576 -I 500) and with 8 bytes (-S 8 -I 2000).
# Printed: the medians over the rounds and the ratios gpuvet / fi_pingpong.  What each
# measures: gpuvet's GB/s is one direction streamed with a window of sends, timed by the
# receiver; fi_pingpong's MB/sec is a ping-pong of one message at a time (bytes both ways over
# the time), so it waits a round trip per message and is expected to be lower.  Latency: gpuvet
# the median round trip / 2, fi_pingpong its usec/xfer (the mean, per one-way transfer).
# Not part of make check.
set -eu
ROUNDS=${1:-5}
IP=${2:-127.0.0.1}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
DIR=$(mktemp -d)
trap 'rm -rf "$DIR"' EXIT INT TERM
command -v fi_pingpong > /dev/null || { echo "fi_pingpong not found (Debian: libfabric-bin)" >&2; exit 2; }

FB=$DIR/fabric_pair_bench
LIB=${GPUVET_LIB:-$ROOT/build/libgpuvet.a}   # `make` builds it
CUDA=${CUDA:-/usr/local/cuda}
cc -O2 -std=c11 -D_GNU_SOURCE -pthread -I"$ROOT" -o "$FB" "$ROOT/tests/bench/fabric_pair_bench.c" "$LIB" \
	-L"$CUDA/lib64" -lsqlite3 -ljansson -lcsv -lcurl -lcrypto -lhwloc -luuid -lyaml -lturbojpeg \
	-lcudart_static -lstdc++ -ldl -lrt -lm

free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
# fi_pingpong SIZE ITERS: its result line's "MB/sec usec/xfer"; the server is started afresh for
# each try and the client started once its control port listens
pingpong() {
	try=0
	while :; do
		port=$(free_port)
		timeout 60 fi_pingpong -p tcp -e rdm -S "$1" -I "$2" -B "$port" > "$DIR/srv" 2>&1 &
		srv=$!
		n=0
		until ss -ltn "sport = :$port" | grep -q LISTEN || [ $n -ge 100 ]; do sleep 0.05; n=$((n + 1)); done
		if timeout 60 fi_pingpong -p tcp -e rdm -S "$1" -I "$2" -P "$port" "$IP" > "$DIR/cli" 2>&1; then
			wait "$srv" || true
			break
		fi
		kill "$srv" 2> /dev/null || true
		wait "$srv" 2> /dev/null || true
		try=$((try + 1))
		[ $try -lt 5 ] || { cat "$DIR/cli" "$DIR/srv" >&2; exit 1; }
	done
	awk '$1 ~ /^[0-9]/ { print $6, $7 }' "$DIR/cli"
}
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

echo "machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(uname -r); $(fi_info --version | head -1)"
: > "$DIR/poll"; : > "$DIR/sleep"; : > "$DIR/pb"; : > "$DIR/pl"
r=1
while [ $r -le "$ROUNDS" ]; do
	for w in poll sleep; do
		GPUVET_FABRIC_WAIT=$w GPUVET_FABRIC_PROVIDER=tcp "$FB" "$IP" 1 2000 >> "$DIR/$w"
	done
	pingpong 1048576 500 >> "$DIR/pb"
	pingpong 8 2000 >> "$DIR/pl"
	echo "round $r: gpuvet $(tail -1 "$DIR/poll" | cut -d' ' -f2-) | $(tail -1 "$DIR/sleep" | cut -d' ' -f2-);" \
	     "fi_pingpong 1 MiB $(tail -1 "$DIR/pb") (MB/s us), 8 B $(tail -1 "$DIR/pl")"
	r=$((r + 1))
done
PBW=$(awk '{ print $1 / 1000 }' "$DIR/pb" | median)    # MB/s -> GB/s
PLAT=$(awk '{ print $2 }' "$DIR/pl" | median)
echo "medians over $ROUNDS rounds on $IP, provider $(awk 'NR == 1 { print $1 }' "$DIR/poll"):"
echo "  fi_pingpong -p tcp -e rdm: 1 MiB ping-pong $PBW GB/s, 8 B $PLAT us/xfer"
for w in poll sleep; do
	GAB=$(awk '{ print $3 }' "$DIR/$w" | median)
	GBA=$(awk '{ print $4 }' "$DIR/$w" | median)
	GLAT=$(awk '{ print $5 }' "$DIR/$w" | median)
	echo "  gpuvet (GPUVET_FABRIC_WAIT=$w): a->b $GAB GB/s, b->a $GBA GB/s, latency $GLAT us (median round trip / 2)"
	awk -v a="$GAB" -v b="$GBA" -v p="$PBW" -v l="$GLAT" -v q="$PLAT" 'BEGIN {
		printf "    ratio to fi_pingpong: bandwidth %.2f (a->b), %.2f (b->a); latency %.2f\n", a / p, b / p, l / q }'
done
