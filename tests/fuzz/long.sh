#!/bin/sh
# Fuzzes each target for RUNS executions (default 10 million), then merges
# what it found that adds coverage into the kept seed corpus
# (tests/fuzz/corpus/NAME, minimised by libFuzzer's -merge=1), and prints a
# line per target: executions, seconds, executions per second, corpus files
# before and after.  A crash stops it, with the reproducer in build-fuzz/long/.
#
#   tests/fuzz/long.sh [RUNS] [TARGET...]      (make fuzz-long FUZZ_RUNS=N)
#
# FUZZ_MAX_SECONDS=S caps each target's time (0, the default: no cap); the
# executions column then says how many it reached.  ASan records no stack for
# each allocation (malloc_context_size=0: about 20 % more executions a second,
# the same checks); rerun a reproducer with the target alone for full stacks.
# FUZZ_TIMEOUT=S (default 10) is the seconds one input may take before it
# counts as a hang: wall time, so a machine paused or starved meanwhile needs more.
# FUZZ_BIN_DIR=build-fuzz-ub (make fuzz-build-ub) fuzzes with UBSan alone: no
# ASan, so neither memory errors nor leaks stop it, at 2-3x the speed; the
# corpus it keeps is replayed under ASan by make test (make fuzz-replay).
set -eu
runs=${1:-10000000}
cap=${FUZZ_MAX_SECONDS:-0}
[ $# -gt 0 ] && shift
bins=${FUZZ_BIN_DIR:-build-fuzz}
dir=$bins/long
mkdir -p "$dir"
targets=${*:-$(find "$bins" -maxdepth 1 -name 'fuzz_*' -type f -printf '%f\n' | sort)}
printf '%-22s %12s %8s %10s %8s\n' target executions seconds exec/s corpus
for n in $targets; do
	bin=$bins/$n
	[ -x "$bin" ] || { echo "long.sh: $bin is not built (make fuzz-build or fuzz-build-ub)" >&2; exit 2; }
	seed=tests/fuzz/corpus/$n
	work=$dir/$n.work
	mkdir -p "$work" "$seed"
	before=$(find "$seed" -type f | wc -l)
	t0=$(date +%s)
	ASAN_OPTIONS=detect_leaks=1:malloc_context_size=0 "$bin" -runs="$runs" -max_total_time="$cap" -timeout="${FUZZ_TIMEOUT:-10}" -rss_limit_mb=2048 -print_final_stats=1 \
		-artifact_prefix="$dir/$n-" "$work" "$seed" >"$dir/$n.log" 2>&1 ||
		{ tail -40 "$dir/$n.log"; exit 1; }
	t1=$(date +%s)
	done_runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$dir/$n.log" | tail -1)
	"$bin" -merge=1 "$seed" "$work" >"$dir/$n.merge.log" 2>&1 || { tail -20 "$dir/$n.merge.log"; exit 1; }
	after=$(find "$seed" -type f | wc -l)
	secs=$((t1 - t0 > 0 ? t1 - t0 : 1))
	printf '%-22s %12s %8s %10s %4s->%s\n' "$n" "$done_runs" "$secs" $((done_runs / secs)) "$before" "$after"
done
