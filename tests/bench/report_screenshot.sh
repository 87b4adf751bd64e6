#!/bin/sh
# report_screenshot.sh - regenerates reports/screenshot.png, the README's picture of a report.
#
#   tests/bench/report_screenshot.sh [OUT.png]
#
# SYNTHETIC DEMO DATA: 12 runs from tests/bench/synth_fingerprints.py (host names
# "synthetic-demo-data-...", prices with source "synthetic demo data"), imported with
# `gpuvet results import`; the report says so in a banner at the top, visible in the picture.
# Replace with real fingerprints (`gpuvet results export --format json`) once there are some.
set -eu
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BIN=${GPUVET_BIN:-$ROOT/build/gpuvet}
OUT=${1:-$ROOT/reports/screenshot.png}
DIR=$(mktemp -d "${TMPDIR:-/tmp}/gpuvet-shot.XXXXXX")
trap 'rm -rf "$DIR"' EXIT INT TERM
export GPUVET_NO_METADATA=1
python3 "$ROOT/tests/bench/synth_fingerprints.py" --runs 12 --soak-seconds 300 -o "$DIR/runs.json"
"$BIN" -q --db "$DIR/s.db" results import "$DIR/runs.json" >/dev/null
"$BIN" -q --db "$DIR/s.db" rank --json >/dev/null   # loads the shipped price catalogs (real list prices)
python3 "$ROOT/tests/bench/synth_fingerprints.py" --prices-db "$DIR/s.db"
"$BIN" -q --db "$DIR/s.db" report -o "$DIR/report.html"
chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --no-first-run \
	--user-data-dir="$DIR/profile" --window-size=1280,1900 \
	--screenshot="$OUT" "file://$DIR/report.html" 2>/dev/null
echo "wrote $OUT"
