#!/bin/sh
# session.sh - the GPU validation of issues 3 and 4, run ON the device machine from the
# repository root with the bundle made by tests/gpu/bundle.sh carried along:
#
#   here:    tests/gpu/bundle.sh
#   device:  run(command="tests/gpu/session.sh peer", carry=[".gpubundle"])
#            run(command="tests/gpu/session.sh contention", carry=[".gpubundle"])
#
# Steps (each writes under $OUT, which the device tool brings back):
#   info        nvidia-smi and gpuvet's inventory             -> $OUT/info/
#   peer        tests/gpu/peer_ratio.py: gemm, memcpy, allreduce against PyTorch in the
#               same command; the real fingerprint and the ratios -> $OUT/peer/
#   contention [SOAK_S]  three clean `run --bench gemm,soak` (soak SOAK_S s, default 30),
#               then three while tests/gpu/hammer.py runs its own GEMM loop on GPU 0;
#               expects no CONTENTION flag in the clean runs and one in every loaded run
#               -> $OUT/contention/{clean,loaded}-N.json and summary.json
#   fidelity    issue 12: 5 repeats of `run --bench gemm,memcpy`, one `--profile standard
#               --bench gemm`, one whole quick profile timed; tests/gpu/fidelity.py writes the
#               CV of every headline figure, quick / standard, the quick wall time
#               -> $OUT/fidelity/quick-N.json, standard.json, quick-wall.json, fidelity.json
#   tenant [DUTY] [SOAK_S]  one `run --bench gemm,soak` beside hammer.py at DUTY (default
#               0.25), with GPUVET_TEST_HIDE_FOREIGN=1 so the other process is invisible,
#               as on a time-sliced vGPU                       -> $OUT/tenant/
# Exit: 0 as expected, 1 an expectation failed, 2 could not run (no GPU, no bundle).
set -eu
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
GV=$ROOT/.gpubundle/gv
OUT=${OUT:-$ROOT/gpu-session-out}
STEP=${1:-}
export GPUVET_NO_METADATA=1 PYTHONUNBUFFERED=1

die() { echo "session.sh: $*" >&2; exit 2; }
[ -x "$GV" ] || die "no .gpubundle/gv: run tests/gpu/bundle.sh on the build machine and carry .gpubundle"
nvidia-smi -L >/dev/null 2>&1 || die "no NVIDIA GPU here (nvidia-smi -L failed)"
echo "# bundle $(cat "$ROOT/.gpubundle/COMMIT" 2>/dev/null), $(date -u +%Y-%m-%dT%H:%M:%SZ), $(nvidia-smi -L | head -1)"

case $STEP in
info)
	mkdir -p "$OUT/info"
	nvidia-smi -q > "$OUT/info/nvidia-smi-q.txt"
	"$GV" inventory --json > "$OUT/info/inventory.json"
	"$GV" inventory
	;;
peer)
	shift
	python3 tests/gpu/peer_ratio.py --gpuvet "$GV" --out "$OUT/peer" "$@"
	;;
fidelity)
	D=$OUT/fidelity
	mkdir -p "$D"
	DB=$(mktemp -d)/f.db
	for i in 1 2 3 4 5; do
		echo "# quick gemm,memcpy $i"
		"$GV" --db "$DB" run --profile quick --bench gemm,memcpy --json > "$D/quick-$i.json" || [ $? -eq 1 ]
	done
	echo "# standard gemm"
	"$GV" --db "$DB" run --profile standard --bench gemm --json > "$D/standard.json" || [ $? -eq 1 ]
	echo "# whole quick profile, timed"
	t0=$(date +%s.%N)
	"$GV" --db "$DB" run --profile quick --json > "$D/quick-all.json" || [ $? -eq 1 ]
	python3 -c "import sys,json; print(json.dumps({'seconds': float(sys.argv[2]) - float(sys.argv[1])}))" \
		"$t0" "$(date +%s.%N)" > "$D/quick-wall.json"
	python3 tests/gpu/fidelity.py "$D"
	;;
tenant)
	DUTY=${2:-0.25}
	SOAK=${3:-30}
	D=$OUT/tenant
	mkdir -p "$D"
	READY=$(mktemp -u)
	python3 tests/gpu/hammer.py "$READY" --duty "$DUTY" &
	HAMMER=$!
	trap 'kill $HAMMER 2>/dev/null || :' EXIT INT TERM
	n=0
	while [ ! -f "$READY" ]; do
		sleep 1
		n=$((n + 1))
		[ $n -lt 120 ] || die "hammer.py did not start"
	done
	GPUVET_TEST_HIDE_FOREIGN=1 "$GV" --db "$(mktemp -d)/t.db" run --profile quick --bench gemm,soak \
		--soak-seconds "$SOAK" --json > "$D/duty$DUTY.json" || [ $? -eq 1 ]
	kill "$HAMMER"
	python3 -c "import sys,json; f=json.load(open(sys.argv[1])); c=[x for x in f['flags'] if x['code']=='CONTENTION']; print('CONTENTION' if c else 'no CONTENTION', json.dumps(c)[:400]); sys.exit(0 if c else 1)" "$D/duty$DUTY.json"
	;;
contention)
	SOAK=${2:-30}
	D=$OUT/contention
	mkdir -p "$D"
	DB=$(mktemp -d)/c.db
	for i in 1 2 3; do
		echo "# clean run $i"
		"$GV" --db "$DB" run --profile quick --bench gemm,soak --soak-seconds "$SOAK" --json > "$D/clean-$i.json" || [ $? -eq 1 ]
	done
	READY=$(mktemp -u)
	python3 tests/gpu/hammer.py "$READY" &
	HAMMER=$!
	trap 'kill $HAMMER 2>/dev/null || :' EXIT INT TERM
	n=0
	while [ ! -f "$READY" ]; do
		sleep 1
		n=$((n + 1))
		[ $n -lt 120 ] || die "hammer.py did not start"
	done
	for i in 1 2 3; do
		echo "# loaded run $i (hammer.py pid $HAMMER on GPU 0)"
		"$GV" --db "$DB" run --profile quick --bench gemm,soak --soak-seconds "$SOAK" --json > "$D/loaded-$i.json" || [ $? -eq 1 ]
	done
	kill "$HAMMER"
	python3 tests/gpu/contention_summary.py "$D"
	;;
*)
	die "usage: session.sh info|peer [peer_ratio args]|fidelity|contention [SOAK_S]|tenant [DUTY] [SOAK_S]"
	;;
esac
