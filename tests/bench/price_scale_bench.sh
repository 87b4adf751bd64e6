#!/bin/sh
# price_scale_bench.sh - `gpuvet report` and `gpuvet rank` over a 1.1 M-row price table (issue 35:
# "the report of a 1.1 M-row price table stays under 64 MB of memory").
#
#   tests/bench/price_scale_bench.sh [ROWS [MIX]]    (defaults 1100000 zones)
#
# Writes a price CSV of ROWS rows in gpuvet's format (docs/prices.md) of provider "bench", GPU
# models from the reference table (H100-SXM, A100-80-SXM, L40S, L4, A10G) so every type has an
# estimate, prices 0.5 to 100 USD/h, as MIX says:
#   zones  1,000 instance types, each priced in many regions and zones (on-demand per region,
#          spot per zone): a provider's whole price history in one table, the shape of a real one
#   types  every row a distinct instance type, 4 of 5 on-demand, 1 of 5 spot: the worst case for
#          a ranking (one SKU per row)
# SYNTHETIC price data: it measures
# gpuvet's memory and time, not any market.  Imports it and one real run (the H100 quick
# capture of tests/fixtures/gpu/, tagged as one of the types), then prints the peak resident
# size (/usr/bin/time %M) and wall time of: `report -o`, `rank --json`, `rank --estimates --json`.
# Not part of `make check`.
set -eu
ROWS=${1:-1100000}
MIX=${2:-zones}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BIN=${GPUVET_BIN:-$ROOT/build/gpuvet}
DIR=$(mktemp -d "${TMPDIR:-/tmp}/gpuvet-price-scale.XXXXXX")
[ -n "${KEEP:-}" ] || trap 'rm -rf "$DIR"' EXIT INT TERM
export GPUVET_NO_METADATA=1
DB=$DIR/s.db

python3 - "$DIR/prices.csv" "$ROWS" "$MIX" <<'PY'
import random, sys
out, rows, mix = sys.argv[1], int(sys.argv[2]), sys.argv[3]
models = [("H100-SXM", 80), ("A100-80-SXM", 80), ("L40S", 48), ("L4", 24), ("A10G", 24)]
rnd = random.Random(35)
with open(out, "w") as f:
    f.write("provider,instance_type,region,zone,gpu_model,gpu_count,gpu_memory_gib,market,price,unit,"
            "currency,captured_at\n")
    for i in range(rows):
        if mix == "types":
            t, place = i, i
            spot = i % 5 == 4
            region, zone = "us-east-1", "us-east-1a" if spot else ""
        else:   # 1,000 types; row i is place i // 1000 of type i % 1000: a region, or a zone of one
            t, place = i % 1000, i // 1000
            spot = place % 4 != 0
            region = "r%d" % (place // 4)
            zone = "%s-z%d" % (region, place % 4) if spot else ""
        model, mem = models[t % len(models)]
        gpus = (1, 2, 4, 8)[(t // 5) % 4]
        f.write("bench,b%d.%dx,%s,%s,%s,%d,%d,%s,%.4f,hour,USD,2026-11-20\n"
                % (t, gpus, region, zone, model, gpus, mem, "spot" if spot else "on_demand",
                   rnd.uniform(0.5, 100)))
PY
echo "machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(uname -r)"
echo "prices: $ROWS rows ($MIX), $(($(stat -c %s "$DIR/prices.csv") / 1048576)) MiB of CSV"
measure() { # label, then the command: peak MiB and wall s
	label=$1
	shift
	/usr/bin/time -f "%M %e" -o "$DIR/time" "$@" > "$DIR/out" 2> "$DIR/err" || {
		echo "$label: failed: $(tail -1 "$DIR/err")"
		return 0
	}
	set -- $(cat "$DIR/time")
	echo "$label: peak $(($1 / 1024)) MiB, $2 s wall"
}
measure "prices import" "$BIN" --db "$DB" prices import "$DIR/prices.csv"
"$BIN" -q --db "$DB" results import "$ROOT/tests/fixtures/gpu/h100-2026-11-22/quick-profile.json" \
	--provider bench --sku b0.1x --region "$([ "$MIX" = types ] && echo us-east-1 || echo r0)" > /dev/null
measure "report -o" "$BIN" --db "$DB" report -o "$DIR/r.html"
[ -f "$DIR/r.html" ] && echo "report: $(($(stat -c %s "$DIR/r.html") / 1024)) KiB"
measure "rank --json" "$BIN" --db "$DB" rank --json
# every priced type as a row of JSON: held under an 8 GiB address-space cap so a shared machine is
# not starved (a failure is reported as such)
(ulimit -v 8388608; measure "rank --estimates --json" "$BIN" --db "$DB" rank --estimates --json)
echo "rank --estimates: $(grep -c '"rank":' "$DIR/out" || true) rows"
