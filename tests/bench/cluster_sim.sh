#!/bin/sh
# cluster_sim.sh - builds tests/bench/cluster_sim.c against build/libgpuvet.a and
# prints the schedule and analysis time of a 1,024-node cluster run on each
# schedule (#49; docs/cluster.md "At scale" quotes it).  Not part of `make check`.
#
#   tests/bench/cluster_sim.sh [N] [REPEATS]
set -eu
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
DIR=$(mktemp -d)
trap 'rm -rf "$DIR"' EXIT INT TERM
LIB=${GPUVET_LIB:-$ROOT/build/libgpuvet.a}   # `make` builds it
CUDA=${CUDA:-/usr/local/cuda}
cc -O2 -std=c11 -D_GNU_SOURCE -pthread -I"$ROOT" -o "$DIR/cluster_sim" "$ROOT/tests/bench/cluster_sim.c" "$LIB" \
	-L"$CUDA/lib64" -lsqlite3 -ljansson -lcsv -lcurl -lcrypto -lhwloc -luuid -licui18n -licuuc -lyaml -lturbojpeg \
	-lcudart_static -lstdc++ -ldl -lrt -lm
cd "$ROOT"   # the analysis reads nothing from disk; run from the root as the unit tests do
"$DIR/cluster_sim" "$@"
