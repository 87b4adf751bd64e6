#!/bin/bash
# host_peers.sh - the host bench (benches/host.c) against its peers, with the
# same threads, binding and data:
#
#   memory bandwidth  McCalpin's STREAM (stream.c, OpenMP), built here from a
#                     source you downloaded (never committed to this project),
#                     compiled for the bench's array size and pass count, run with
#                     the bench's thread count, one thread per core of the node,
#                     threads and memory bound to the node (hwloc-bind)
#   JPEG decode       libjpeg-turbo's tjbench (Debian libjpeg-turbo-progs) on the
#                     bench's four images (benches/host_jpeg/), one core; the
#                     bench is run with GPUVET_HOST_DECODE_THREADS=1 on that core.
#                     It decodes the images in turn, so its peer rate is
#                     4 / sum(1 / tjbench fps of each image), each image's best
#                     fps over the rounds so far
#
#   STREAM_SRC=/path/to/stream.c tests/bench/host_peers.sh [ROUNDS]
#
# STREAM_SRC defaults to /tmp/stream/stream.c (e.g. `curl -o /tmp/stream/stream.c
# https://www.cs.virginia.edu/stream/FTP/Code/stream.c`, or stream.c of the
# jeffhammond/STREAM repository).  Each side runs ROUNDS times (default 3),
# alternating, and keeps its best, as STREAM itself does.  Prints gpuvet/peer;
# target >= 0.95 for copy, triad and decode per core.  Not part of `make check`.
set -euo pipefail
ROUNDS=${1:-3}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BIN=${GPUVET_BIN:-$ROOT/build/gpuvet}
SRC=${STREAM_SRC:-/tmp/stream/stream.c}
CC=${CC:-gcc}
[ -x "$BIN" ] || { echo "host_peers: no gpuvet binary at '$BIN' (make all)" >&2; exit 2; }
[ -r "$SRC" ] || { echo "host_peers: no stream.c at '$SRC' (set STREAM_SRC)" >&2; exit 2; }
command -v tjbench >/dev/null || { echo "host_peers: tjbench not found (apt-get install libjpeg-turbo-progs)" >&2; exit 2; }
command -v hwloc-bind >/dev/null || { echo "host_peers: hwloc-bind not found (apt-get install hwloc)" >&2; exit 2; }
DIR=$(mktemp -d)
trap 'rm -rf "$DIR"' EXIT INT TERM
export GPUVET_NO_METADATA=1 GPUVET_NVML_LIB=${GPUVET_NVML_LIB:-/nonexistent/libnvidia-ml.so.1}

host_json() { # gpuvet's host bench once, the fingerprint on stdout
	GPUVET_DB=$DIR/g.db "$@" "$BIN" run --bench host --json
}
field() { # field FILE METRIC KEY: a metric's value (KEY=value) or one of its params
	python3 - "$1" "$2" "$3" <<'EOF'
import json, sys
fp = json.load(open(sys.argv[1]))
m = [m for m in fp["metrics"] if m["name"] == sys.argv[2] and m["gpu"] == -1][0]
v = m["value"] if sys.argv[3] == "value" else m["params"][sys.argv[3]]
print(v if not isinstance(v, float) else repr(v))
EOF
}
max() { python3 -c 'import sys; print(max(float(x) for x in sys.argv[1:]))' "$@"; }

# ---- the bench's own configuration: node, threads, array size, passes ----
host_json env > "$DIR/first.json"
NODE=$(field "$DIR/first.json" host.membw.triad.gbps node)
THREADS=$(field "$DIR/first.json" host.membw.triad.gbps threads)
ELEMS=$(field "$DIR/first.json" host.membw.triad.gbps elements)
PASSES=$(field "$DIR/first.json" host.membw.triad.gbps passes)
CPUSET=$(field "$DIR/first.json" host.membw.triad.gbps cpuset)
echo "bench: numa node $NODE, $THREADS threads on cpus $CPUSET, 3 x $ELEMS doubles, $PASSES passes"

# ---- STREAM, same size, passes, threads and binding ----
$CC -O2 -fopenmp -mcmodel=medium -DSTREAM_ARRAY_SIZE="$ELEMS" -DNTIMES="$PASSES" "$SRC" -o "$DIR/stream"
stream_run() {
	OMP_NUM_THREADS=$THREADS OMP_PROC_BIND=spread OMP_PLACES=cores \
		hwloc-bind --membind "node:$NODE" --cpubind "node:$NODE" -- "$DIR/stream" > "$DIR/stream.out"
	# "Copy:  12345.6  ..." Best Rate MB/s (1e6 bytes/s) -> GB/s
	awk '/^Copy:/ {c = $2 / 1000} /^Triad:/ {t = $2 / 1000} END {print c, t}' "$DIR/stream.out"
}

# ---- decode: one core, the last the bench used ----
CPU=${CPUSET##*[,-]}
declare -A tjbest
tj_rate() { # TJ_RATE: images/s decoding the four images in turn, from tjbench's best fps of each so far
	local inv=0 fps img
	for img in "$ROOT"/benches/host_jpeg/*.jpg; do
		fps=$(taskset -c "$CPU" tjbench "$img" -rgb -nowrite -benchtime 1 -warmup 0.5 |
			awk '/Decompress.*Frame rate/ {print $(NF-1)}')
		tjbest[$img]=$(max "$fps" "${tjbest[$img]:-0}")
		inv=$(python3 -c "print($inv + 1 / ${tjbest[$img]})")
	done
	TJ_RATE=$(python3 -c "print(4 / $inv)")
}

gc=(); gt=(); sc=(); st=(); gd=(); td=()
for r in $(seq "$ROUNDS"); do
	host_json env > "$DIR/g.json"
	gc+=("$(field "$DIR/g.json" host.membw.copy.gbps value)")
	gt+=("$(field "$DIR/g.json" host.membw.triad.gbps value)")
	read -r c t <<< "$(stream_run)"
	sc+=("$c"); st+=("$t")
	host_json env GPUVET_HOST_DECODE_THREADS=1 taskset -c "$CPU" > "$DIR/d.json"
	gd+=("$(field "$DIR/d.json" host.decode.images_per_s value)")
	tj_rate   # not in $(...): the best fps per image must outlive the round
	td+=("$TJ_RATE")
	echo "round $r: gpuvet copy ${gc[-1]} triad ${gt[-1]} GB/s, stream copy $c triad $t GB/s;" \
	     "decode on cpu $CPU: gpuvet ${gd[-1]} images/s, tjbench ${td[-1]} images/s"
done
python3 - "$(max "${gc[@]}")" "$(max "${sc[@]}")" "$(max "${gt[@]}")" "$(max "${st[@]}")" \
	"$(max "${gd[@]}")" "$(max "${td[@]}")" "$ROUNDS" <<'EOF'
import sys
gc, sc, gt, st, gd, td, n = (float(x) for x in sys.argv[1:])
print(f"best of {int(n)}            gpuvet        peer   gpuvet/peer")
for what, g, p, u in (("copy", gc, sc, "GB/s"), ("triad", gt, st, "GB/s"), ("decode, 1 core", gd, td, "images/s")):
    print(f"{what:16s} {g:10.2f} {p:11.2f}   {g / p:6.3f}   ({u}; target >= 0.95)")
EOF
