#!/bin/sh
# gpuvet-bench.sh - benchmark a Slurm node out of service: drain, wait for
# its jobs to end, `gpuvet run --accept`, then resume it on accept or keep it
# drained with the reason.  Started detached by gpuvet-healthcheck.sh when
# the last measurement is stale; also fine from cron or a systemd timer.
#
#   1. drain: scontrol update nodename=N state=drain reason="gpuvet: benchmarking"
#   2. wait until squeue lists no job on N (at most GPUVET_WAIT_S, 3600 s;
#      past that, resume and give up: a long job is not ours to kill)
#   3. gpuvet run --profile GPUVET_PROFILE --accept [POLICY], bounded by
#      GPUVET_RUN_TIMEOUT (1800 s)
#   4. accept: resume, but only when the node's drain reason is still ours
#      (an admin's drain in the meantime stands); reject or cannot measure:
#      drain again with gpuvet's reason; a gpuvet error: resume (a broken
#      install must not take the cluster down) and log it.
# One run at a time per node (a lock next to the store).
set -u

GPUVET=${GPUVET:-/opt/gpuvet/bin/gpuvet}    # the release tarball unpacked in /opt/gpuvet, or the .deb
GPUVET_DB=${GPUVET_DB:-/var/lib/gpuvet/gpuvet.db}
GPUVET_POLICY=${GPUVET_POLICY:-/etc/gpuvet/policy.yaml}
GPUVET_PROFILE=${GPUVET_PROFILE:-quick}
GPUVET_BENCHES=${GPUVET_BENCHES:-}           # e.g. gemm,memcpy,allreduce,soak; empty: every bench
GPUVET_WAIT_S=${GPUVET_WAIT_S:-3600}
GPUVET_POLL_S=${GPUVET_POLL_S:-10}
GPUVET_RUN_TIMEOUT=${GPUVET_RUN_TIMEOUT:-1800}
GPUVET_STAMP=${GPUVET_STAMP:-$(dirname "$GPUVET_DB")/last-run}
GPUVET_OUT=${GPUVET_OUT:-$(dirname "$GPUVET_DB")/last-verdict.txt}
NODE=${SLURMD_NODENAME:-$(hostname -s)}
GPUVET_DRAIN_CMD=${GPUVET_DRAIN_CMD:-scontrol update nodename=$NODE state=drain reason=}
GPUVET_RESUME_CMD=${GPUVET_RESUME_CMD:-scontrol update nodename=$NODE state=resume}
GPUVET_REASON_CMD=${GPUVET_REASON_CMD:-sinfo -h -n $NODE -o %E}
OURS="gpuvet: benchmarking"

log() { logger -t gpuvet-bench -- "$*" 2>/dev/null || echo "gpuvet-bench: $*" >&2; }
# shellcheck disable=SC2086  # the *_CMD variables are command lines
drain() { $GPUVET_DRAIN_CMD"$1"; }
resume_if_ours() {
	# shellcheck disable=SC2086
	case $($GPUVET_REASON_CMD 2>/dev/null) in
	"$OURS"*) $GPUVET_RESUME_CMD ;;
	*) log "node $NODE drained for another reason meanwhile: left drained" ;;
	esac
}
jobs_on_node() { squeue -h -w "$NODE" -o %i 2>/dev/null; }

mkdir -p "$(dirname "$GPUVET_DB")" || exit 2
lock=$(dirname "$GPUVET_DB")/bench.lock
if ! mkdir "$lock" 2>/dev/null; then
	log "another gpuvet-bench.sh holds $lock"
	exit 0
fi
trap 'rmdir "$lock"' EXIT
trap 'exit 2' INT TERM

drain "$OURS"
waited=0
while [ -n "$(jobs_on_node)" ]; do
	if [ "$waited" -ge "$GPUVET_WAIT_S" ]; then
		log "jobs still on $NODE after $GPUVET_WAIT_S s: benchmark skipped"
		resume_if_ours
		exit 0
	fi
	sleep "$GPUVET_POLL_S"
	waited=$((waited + GPUVET_POLL_S))
done

policy=""
[ -r "$GPUVET_POLICY" ] && policy=$GPUVET_POLICY
benches=""
[ -n "$GPUVET_BENCHES" ] && benches="--bench $GPUVET_BENCHES"
# shellcheck disable=SC2086  # policy is one path or nothing, benches two words or nothing
timeout "$GPUVET_RUN_TIMEOUT" "$GPUVET" -q --db "$GPUVET_DB" run --profile "$GPUVET_PROFILE" $benches \
	--accept $policy >"$GPUVET_OUT" 2>&1
rc=$?
touch "$GPUVET_STAMP"
case $rc in
0)
	resume_if_ours ;;
1)
	why=$(sed -n 's/^  FAIL  //p' "$GPUVET_OUT" | head -n 1 | cut -c1-120)
	drain "gpuvet reject: ${why:-see $GPUVET_OUT}" ;;
3)
	why=$(sed -n 's/^  NOT MEASURED  //p' "$GPUVET_OUT" | head -n 1 | cut -c1-120)
	drain "gpuvet cannot measure: ${why:-see $GPUVET_OUT}" ;;
124)
	drain "gpuvet timed out after $GPUVET_RUN_TIMEOUT s" ;;
*)
	log "gpuvet failed (exit $rc): $(head -n 1 "$GPUVET_OUT")"
	resume_if_ours ;;
esac
exit 0
