#!/bin/sh
# gpuvet-healthcheck.sh - Slurm HealthCheckProgram: drain this node when its
# stored gpuvet verdict is a reject (or cannot measure), and hand a stale
# node to the benchmark step.  Slurm kills a health check after 60 s, so this
# never benchmarks: it only reads.
#
#   slurm.conf:  HealthCheckProgram=/usr/local/sbin/gpuvet-healthcheck.sh
#                HealthCheckInterval=3600
#                HealthCheckNodeState=IDLE,CYCLE
#
# 1. gates the run stored last (`gpuvet accept`, instant), each gpuvet call
#    bounded by GPUVET_CHECK_TIMEOUT (40 s) so the whole check ends in time;
# 2. when the node runs no job and the last measurement is older than
#    GPUVET_MAX_AGE_MIN (or there is none), starts gpuvet-bench.sh detached:
#    it drains the node, benchmarks it, and resumes it on accept.
# Exit codes of gpuvet: 0 accept, 1 reject, 3 cannot measure, 2 error; a
# gpuvet error or time-out drains nothing.
set -u

GPUVET=${GPUVET:-/opt/gpuvet/bin/gpuvet}    # the release tarball unpacked in /opt/gpuvet, or the .deb
GPUVET_DB=${GPUVET_DB:-/var/lib/gpuvet/gpuvet.db}
GPUVET_POLICY=${GPUVET_POLICY:-/etc/gpuvet/policy.yaml}   # absent: the built-in default policy
GPUVET_MAX_AGE_MIN=${GPUVET_MAX_AGE_MIN:-1440}
GPUVET_CHECK_TIMEOUT=${GPUVET_CHECK_TIMEOUT:-40}
GPUVET_STAMP=${GPUVET_STAMP:-$(dirname "$GPUVET_DB")/last-run}
GPUVET_OUT=${GPUVET_OUT:-$(dirname "$GPUVET_DB")/last-verdict.txt}
GPUVET_BENCH_CMD=${GPUVET_BENCH_CMD:-$(dirname "$0")/gpuvet-bench.sh}
NODE=${SLURMD_NODENAME:-$(hostname -s)}
# how to drain: the reason is appended as one argument
GPUVET_DRAIN_CMD=${GPUVET_DRAIN_CMD:-scontrol update nodename=$NODE state=drain reason=}

log() { logger -t gpuvet-healthcheck -- "$*" 2>/dev/null || echo "gpuvet-healthcheck: $*" >&2; }

mkdir -p "$(dirname "$GPUVET_DB")" || exit 0

busy=0
if command -v squeue >/dev/null 2>&1 && [ -n "$(timeout 10 squeue -h -w "$NODE" -o %i 2>/dev/null)" ]; then
	busy=1
fi
fresh=0
if [ -f "$GPUVET_STAMP" ] && [ -n "$(find "$GPUVET_STAMP" -mmin "-$GPUVET_MAX_AGE_MIN" 2>/dev/null)" ]; then
	fresh=1
fi
if [ "$busy" = 0 ] && [ "$fresh" = 0 ]; then
	# the benchmark runs on its own, after this check has returned
	log "last measurement older than $GPUVET_MAX_AGE_MIN min: starting $GPUVET_BENCH_CMD"
	setsid "$GPUVET_BENCH_CMD" </dev/null >/dev/null 2>&1 &
	exit 0
fi
[ -f "$GPUVET_DB" ] || exit 0   # nothing measured yet and busy: nothing to gate

if [ -r "$GPUVET_POLICY" ]; then
	timeout "$GPUVET_CHECK_TIMEOUT" "$GPUVET" --db "$GPUVET_DB" accept --policy "$GPUVET_POLICY" >"$GPUVET_OUT" 2>&1
else
	timeout "$GPUVET_CHECK_TIMEOUT" "$GPUVET" --db "$GPUVET_DB" accept >"$GPUVET_OUT" 2>&1
fi
rc=$?

case $rc in
0)
	exit 0 ;;
1)
	why=$(sed -n 's/^  FAIL  //p' "$GPUVET_OUT" | head -n 1 | cut -c1-120)
	reason="gpuvet reject: ${why:-see $GPUVET_OUT}" ;;
3)
	why=$(sed -n 's/^  NOT MEASURED  //p' "$GPUVET_OUT" | head -n 1 | cut -c1-120)
	reason="gpuvet cannot measure: ${why:-see $GPUVET_OUT}" ;;
*)
	# a broken gpuvet install or store, or a time-out, must not drain the whole cluster
	log "gpuvet failed (exit $rc), node left as is: $(head -n 1 "$GPUVET_OUT")"
	exit 0 ;;
esac
run=$(sed -n 's/^judging run \([0-9]*\),.*/run \1/p' "$GPUVET_OUT")   # the run stored last, the one judged
log "draining $NODE: $reason (${run:-run ?})"
# shellcheck disable=SC2086  # GPUVET_DRAIN_CMD is a command line
$GPUVET_DRAIN_CMD"$reason"
exit 0
