#!/bin/sh
# report_screenshot.sh - regenerates reports/screenshot.png, the README's picture of a report's first screen,
# and reports/screenshot.json, what the picture rests on (tests/test_screenshot.py holds the code to it).
#
#   tests/bench/report_screenshot.sh [OUT.png] [HEIGHT]
#
# REAL DATA: the H100 and H200 fingerprints of tests/fixtures/gpu/ (captured 2026-11-22, see its
# README), imported with `gpuvet results import`.  The captures do not say what they ran on
# (no metadata service), so they are named with `gpuvet results tag`: the H100 runs as Lambda's
# gpu_1x_h100_sxm5 (priced in the shipped catalog), the H200 runs as gpu_1x_h200 stored with
# --custom (custom:lambda: no catalog sells one H200, so the report lists it as measured but not
# ranked).  Each run is gated with `gpuvet accept`, and the shipped list prices are loaded by the
# first `gpuvet rank`.  The recipe is tests/bench/screenshot_inputs.py, one copy.  The page is drawn
# 1400 px wide by Debian's headless Chromium.
set -eu
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
export GPUVET_BIN=${GPUVET_BIN:-$ROOT/build/gpuvet}
DEFAULT=$ROOT/reports/screenshot.png
OUT=${1:-$DEFAULT}
HEIGHT=${2:-1000}
DIR=$(mktemp -d "${TMPDIR:-/tmp}/gpuvet-shot.XXXXXX")
trap 'rm -rf "$DIR"' EXIT INT TERM
export GPUVET_NO_METADATA=1
mkdir "$DIR/store" "$DIR/manifest"
python3 "$ROOT/tests/bench/screenshot_inputs.py" "$DIR/store" >/dev/null
chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --no-first-run \
	--user-data-dir="$DIR/profile" --window-size=1400,"$HEIGHT" \
	--screenshot="$OUT" "file://$DIR/store/report.html" 2>/dev/null
echo "wrote $OUT"
if [ "$OUT" = "$DEFAULT" ]; then
	python3 "$ROOT/tests/bench/screenshot_inputs.py" "$DIR/manifest" --write-manifest >/dev/null
	echo "wrote $ROOT/reports/screenshot.json"
fi
