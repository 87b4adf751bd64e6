#!/bin/sh
# bundle.sh - run HERE (the build machine): builds gpuvet and packs it with the shared
# libraries it links that a bare GPU machine may lack, into .gpubundle/ (ignored by git),
# for tests/gpu/session.sh on a device machine whose image has CUDA and PyTorch but
# none of Debian's -dev libraries and no package registry.
#
#   tests/gpu/bundle.sh            then carry .gpubundle to the device machine
#
# Kept out: the C runtime (libc, libm, ld-linux), libstdc++ and libgcc_s, which every
# Linux image has in a version at least as new; cuBLASLt, NCCL and NVML, which gpuvet
# opens with dlopen from the machine's own CUDA install and driver.
set -eu
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${GPUVET_BUNDLE_DIR:-$ROOT/.gpubundle}
BIN=${GPUVET_BIN:-}
if [ -z "$BIN" ]; then
	make -C "$ROOT" -j"$(nproc)" all build/tests/gpu/nccl_pair_drive >/dev/null
	BIN=$ROOT/build/gpuvet
fi
DRIVE=$(dirname "$BIN")/tests/gpu/nccl_pair_drive   # built beside the gpuvet it goes with
rm -rf "$OUT"
mkdir -p "$OUT/lib"
cp "$BIN" "$OUT/gpuvet"
strip "$OUT/gpuvet"
# benches/nccl_pair.h driven directly (session.sh nccl-pair); it links what gpuvet links
if [ -x "$DRIVE" ]; then
	cp "$DRIVE" "$OUT/nccl_pair_drive"
	strip "$OUT/nccl_pair_drive"
else
	echo "bundle.sh: no $DRIVE (make test-build): session.sh nccl-pair will refuse" >&2
fi
ldd "$BIN" | awk '$2 == "=>" && $3 ~ /^\// { print $1, $3 }' | while read -r name path; do
	case $name in
	libc.so.*|libm.so.*|libstdc++.so.*|libgcc_s.so.*|ld-linux*|libdl.so.*|librt.so.*|libpthread.so.*) ;;
	*) cp -L "$path" "$OUT/lib/$name" ;;
	esac
done
# gv: gpuvet with the bundled libraries and the CUDA libraries of the machine it runs on
# (found once, cached in .cudalibs); for gpuvet alone: python3 and torch keep their own
cp "$ROOT/tests/gpu/gv.sh" "$OUT/gv"
chmod +x "$OUT/gv"
# a bundle that cannot start here will not start there
"$OUT/gv" --version >/dev/null
if LD_LIBRARY_PATH=$OUT/lib ldd "$OUT/gpuvet" | grep -q 'not found'; then
	echo "bundle.sh: unresolved libraries" >&2
	exit 1
fi
rm -f "$OUT/.cudalibs"   # this machine's paths; gv looks again where it runs
echo "$(git -C "$ROOT" rev-parse --short HEAD)$(git -C "$ROOT" diff --quiet HEAD -- . || echo -dirty)" > "$OUT/COMMIT"
du -sh "$OUT" | awk -v d="$OUT" '{ print "bundle.sh: " $1 " in " d " (carry it; the limit is 64 MiB with the tree)" }'
