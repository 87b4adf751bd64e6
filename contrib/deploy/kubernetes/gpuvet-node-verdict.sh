#!/bin/sh
# gpuvet-node-verdict.sh - entry point of the gpuvet Kubernetes Job: measure
# this node, gate it, and put the verdict on the Node object:
#   label  gpuvet.dev/verdict=accept|reject|unmeasurable|error
#   label  gpuvet.dev/checked-at=YYYYMMDDTHHMMSSZ
#   taint  gpuvet.dev/rejected=<verdict>:NoSchedule  (removed on accept)
# Needs NODE_NAME (downward API spec.nodeName) and RBAC to patch nodes.
set -u
: "${NODE_NAME:?NODE_NAME must be set (fieldRef spec.nodeName)}"

GPUVET=${GPUVET:-gpuvet}
KUBECTL=${KUBECTL:-kubectl}
GPUVET_DB=${GPUVET_DB:-/var/lib/gpuvet/gpuvet.db}
GPUVET_PROFILE=${GPUVET_PROFILE:-standard}
GPUVET_POLICY=${GPUVET_POLICY:-/etc/gpuvet/policy.yaml}   # absent: the built-in default policy
GPUVET_TEXTFILE=${GPUVET_TEXTFILE:-}                      # node-exporter textfile path, optional

mkdir -p "$(dirname "$GPUVET_DB")"
if [ -r "$GPUVET_POLICY" ]; then
	"$GPUVET" --db "$GPUVET_DB" run --profile "$GPUVET_PROFILE" --accept "$GPUVET_POLICY"
else
	"$GPUVET" --db "$GPUVET_DB" run --profile "$GPUVET_PROFILE" --accept
fi
rc=$?
case $rc in
0) verdict=accept ;;
1) verdict=reject ;;
3) verdict=unmeasurable ;;
*) verdict=error ;;
esac
echo "gpuvet: node $NODE_NAME: $verdict (exit $rc)"

if [ -n "$GPUVET_TEXTFILE" ]; then
	"$GPUVET" --db "$GPUVET_DB" results export --format prometheus -o "$GPUVET_TEXTFILE" ||
		echo "gpuvet: prometheus export failed" >&2
fi

"$KUBECTL" label node "$NODE_NAME" --overwrite \
	"gpuvet.dev/verdict=$verdict" "gpuvet.dev/checked-at=$(date -u +%Y%m%dT%H%M%SZ)" || exit 2
case $verdict in
accept)
	# no taint left behind from an earlier reject ("not found" is fine)
	"$KUBECTL" taint node "$NODE_NAME" gpuvet.dev/rejected:NoSchedule- >/dev/null 2>&1 || true ;;
reject | unmeasurable)
	"$KUBECTL" taint node "$NODE_NAME" --overwrite "gpuvet.dev/rejected=$verdict:NoSchedule" || exit 2 ;;
esac
# the Job succeeds once the verdict is on the node; only a gpuvet error fails it
[ "$verdict" = error ] && exit "$rc"
exit 0
