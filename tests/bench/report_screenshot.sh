#!/bin/sh
# report_screenshot.sh - regenerates reports/screenshot.png, the README's picture of a report's first screen.
#
#   tests/bench/report_screenshot.sh [OUT.png] [HEIGHT]
#
# REAL DATA: the H100 and H200 fingerprints of tests/fixtures/gpu/ (captured 2026-11-22, see its
# README), imported with `gpuvet results import`.  The captures do not say what they ran on
# (no metadata service), so they are named with `gpuvet results tag`: the H100 runs as Lambda's
# gpu_1x_h100_sxm5 (priced in the shipped catalog), the H200 runs as gpu_1x_h200 (no shipped
# price: the report lists it as measured but not ranked).  Each run is gated with `gpuvet accept`,
# and the shipped list prices are loaded by the first `gpuvet rank`.  The page is drawn 1400 px
# wide by Debian's headless Chromium.
set -eu
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BIN=${GPUVET_BIN:-$ROOT/build/gpuvet}
OUT=${1:-$ROOT/reports/screenshot.png}
HEIGHT=${2:-1000}
F=$ROOT/tests/fixtures/gpu
DIR=$(mktemp -d "${TMPDIR:-/tmp}/gpuvet-shot.XXXXXX")
trap 'rm -rf "$DIR"' EXIT INT TERM
export GPUVET_NO_METADATA=1
G() { "$BIN" -q --db "$DIR/s.db" "$@"; }
G results import "$F/h100-2026-11-22/contention/clean-1.json" "$F/h100-2026-11-22/contention/clean-2.json" \
	"$F/h100-2026-11-22/contention/loaded-1.json" "$F/h100-2026-11-22/standard-profile.json" \
	"$F/h200-2026-11-22/quick-profile.json" "$F/h200-2026-11-22/standard-profile.json" >/dev/null
for i in 1 2 3 4; do G results tag $i --provider lambda --sku gpu_1x_h100_sxm5; done
for i in 5 6; do G results tag $i --provider lambda --sku gpu_1x_h200; done
for i in 1 2 3 4 5 6; do G accept --run $i >/dev/null || true; done   # exit 1/3 are verdicts too
G rank --json >/dev/null    # loads the shipped price catalogs (real list prices)
G report -o "$DIR/report.html"
chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --no-first-run \
	--user-data-dir="$DIR/profile" --window-size=1400,"$HEIGHT" \
	--screenshot="$OUT" "file://$DIR/report.html" 2>/dev/null
echo "wrote $OUT"
