#!/bin/sh
# gpuvet-healthcheck.sh - Slurm HealthCheckProgram: drain this node when
# gpuvet rejects it (or cannot measure it).
#
#   slurm.conf:  HealthCheckProgram=/usr/local/sbin/gpuvet-healthcheck.sh
#                HealthCheckInterval=3600
#                HealthCheckNodeState=IDLE,CYCLE
#
# Measures again (`gpuvet run --accept`) only when the node runs no job and
# the last measurement is older than GPUVET_MAX_AGE_MIN; otherwise gates the
# stored run (`gpuvet accept`, instant).  Benchmarks never run under a job.
# Exit codes of gpuvet: 0 accept, 1 reject, 3 cannot measure, 2 error.
set -u

GPUVET=${GPUVET:-/usr/local/bin/gpuvet}
GPUVET_DB=${GPUVET_DB:-/var/lib/gpuvet/gpuvet.db}
GPUVET_POLICY=${GPUVET_POLICY:-/etc/gpuvet/policy.yaml}   # absent: the built-in default policy
GPUVET_PROFILE=${GPUVET_PROFILE:-quick}
GPUVET_MAX_AGE_MIN=${GPUVET_MAX_AGE_MIN:-1440}
GPUVET_STAMP=${GPUVET_STAMP:-$(dirname "$GPUVET_DB")/last-run}
GPUVET_OUT=${GPUVET_OUT:-$(dirname "$GPUVET_DB")/last-verdict.txt}
NODE=${SLURMD_NODENAME:-$(hostname -s)}
# how to drain: the reason is appended as one argument
GPUVET_DRAIN_CMD=${GPUVET_DRAIN_CMD:-scontrol update nodename=$NODE state=drain reason=}

log() { logger -t gpuvet-healthcheck -- "$*" 2>/dev/null || echo "gpuvet-healthcheck: $*" >&2; }

mkdir -p "$(dirname "$GPUVET_DB")" || exit 0
policy_arg=""
[ -r "$GPUVET_POLICY" ] && policy_arg=$GPUVET_POLICY

busy=0
if command -v squeue >/dev/null 2>&1 && [ -n "$(squeue -h -w "$NODE" -o %i 2>/dev/null)" ]; then
	busy=1
fi
fresh=0
if [ -f "$GPUVET_STAMP" ] && [ -n "$(find "$GPUVET_STAMP" -mmin "-$GPUVET_MAX_AGE_MIN" 2>/dev/null)" ]; then
	fresh=1
fi

if [ "$busy" = 0 ] && [ "$fresh" = 0 ]; then
	# shellcheck disable=SC2086  # policy_arg is one path or nothing
	"$GPUVET" -q --db "$GPUVET_DB" run --profile "$GPUVET_PROFILE" --accept $policy_arg >"$GPUVET_OUT" 2>&1
	rc=$?
	touch "$GPUVET_STAMP"
elif [ -n "$policy_arg" ]; then
	"$GPUVET" --db "$GPUVET_DB" accept --policy "$policy_arg" >"$GPUVET_OUT" 2>&1
	rc=$?
else
	"$GPUVET" --db "$GPUVET_DB" accept >"$GPUVET_OUT" 2>&1
	rc=$?
fi

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
	# a broken gpuvet install or store must not drain the whole cluster
	log "gpuvet failed (exit $rc), node left as is: $(head -n 1 "$GPUVET_OUT")"
	exit 0 ;;
esac
log "draining $NODE: $reason"
# shellcheck disable=SC2086  # GPUVET_DRAIN_CMD is a command line
$GPUVET_DRAIN_CMD"$reason"
exit 0
