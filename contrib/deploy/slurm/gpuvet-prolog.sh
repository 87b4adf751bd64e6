#!/bin/sh
# gpuvet-prolog.sh - Slurm Prolog: refuse to start a job on a node whose
# stored gpuvet verdict is a reject.  Measures nothing (jobs must not wait
# for a benchmark): it gates the run stored last, written by
# gpuvet-healthcheck.sh or by cloud-init at boot.
#
#   slurm.conf:  Prolog=/usr/local/sbin/gpuvet-prolog.sh
#
# A non-zero exit makes slurmd drain the node and requeue the job.
# Reject (1) and cannot-measure (3) fail the prolog; no stored run yet or a
# gpuvet error (2) let the job start (fail open) unless GPUVET_FAIL_CLOSED=1.
set -u

GPUVET=${GPUVET:-/opt/gpuvet/bin/gpuvet}    # the release tarball unpacked in /opt/gpuvet, or the .deb
GPUVET_DB=${GPUVET_DB:-/var/lib/gpuvet/gpuvet.db}
GPUVET_POLICY=${GPUVET_POLICY:-/etc/gpuvet/policy.yaml}
GPUVET_FAIL_CLOSED=${GPUVET_FAIL_CLOSED:-0}

if [ -r "$GPUVET_POLICY" ]; then
	out=$("$GPUVET" --db "$GPUVET_DB" accept --policy "$GPUVET_POLICY" 2>&1)
else
	out=$("$GPUVET" --db "$GPUVET_DB" accept 2>&1)
fi
rc=$?
case $rc in
0) exit 0 ;;
1 | 3)
	# the verdict line, and the run it judged (a plain accept judges the run stored last)
	verdict=$(printf '%s\n' "$out" | grep -m 1 -E '^(REJECT|UNMEASURABLE)')
	run=$(printf '%s\n' "$out" | sed -n 's/^judging run \([0-9]*\),.*/run \1/p')
	echo "gpuvet-prolog: job ${SLURM_JOB_ID:-?} refused on $(hostname -s): $verdict (${run:-run ?})" >&2
	exit 1 ;;
*)
	echo "gpuvet-prolog: gpuvet exit $rc: $(printf '%s\n' "$out" | head -n 1)" >&2
	[ "$GPUVET_FAIL_CLOSED" = 1 ] && exit 1
	exit 0 ;;
esac
