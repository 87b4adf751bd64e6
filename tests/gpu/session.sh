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
#   fidelity    issue 12: 5 repeats of `run --bench gemm,memcpy` with 3 `--profile standard
#               --bench gemm` interleaved, one whole quick profile timed; tests/gpu/fidelity.py writes the
#               CV of every headline figure, quick / standard, the quick wall time
#               -> $OUT/fidelity/quick-N.json, standard.json, quick-wall.json, fidelity.json
#   tenant [DUTY] [SOAK_S]  one `run --bench gemm,soak` beside hammer.py at DUTY (default
#               0.25), with GPUVET_TEST_HIDE_FOREIGN=1 so the other process is invisible,
#               as on a time-sliced vGPU                       -> $OUT/tenant/
#   sdc [SOAK_S]  one `run --bench gemm,soak` (default 20 s) with GPUVET_TEST_SDC_FLIP=1000: one
#               bit of one GEMM result flipped on the device; expects soak.sdc.mismatches 1 and
#               DATA_CORRUPTION, then `accept` of it     -> $OUT/sdc/
#   nccl        `run --bench allreduce` (one GPU: skipped with its reason), then a real NCCL
#               debug log (INIT,GRAPH,NET,ENV) of one all-reduce through torch.distributed
#                                                         -> $OUT/nccl/
#   pageable    tests/gpu/pageable_align.cu (pageable copy rate against the buffer's offset
#               from a page), then peer_ratio.py --benches memcpy --rounds 5 -> $OUT/pageable/
#   proof [--sequence 'q1 T1 s1 ...']  tests/gpu/proof.py: 5 quick `run --bench gemm,memcpy`, 3 standard `run --bench
#               gemm` and PyTorch (pinned copies; the MAMF-style bf16 sweep) interleaved: CVs,
#               quick / standard, the MAMF peer ratio      -> $OUT/proof.tgz
#   nccl-pair   issue 49, 2+ GPUs (NOT RUN YET: no machine with 2 GPUs has been lent):
#               benches/nccl_pair.h through .gpubundle/nccl_pair_drive, one process per GPU
#               (CUDA_VISIBLE_DEVICES=0 and =1): the pair both ways (both ranks must report the
#               same figures), a lone rank that must time out and abort within its deadline, the
#               all-reduce as 2 processes x 1 GPU and 1 process x 2 GPUs; nccl-tests'
#               sendrecv_perf beside it when found (PATH or $NCCL_TESTS/build)
#                                                         -> $OUT/nccl-pair/
#   cluster     issue 49, 2+ GPUs (NOT RUN YET): two ranks of `gpuvet cluster run` on this machine,
#               SLURM_PROCID/SLURM_NTASKS set by hand, --rendezvous 127.0.0.1:PORT (a free port),
#               one GPU each; then tests/gpu/nccl_pair_check.py against sendrecv_perf when found
#                                                         -> $OUT/cluster/
#   jobcost [ARGS]  tests/gpu/jobcost.py: a real PyTorch training step (full and LoRA) and a
#               CUDA-graph decode loop of a Llama-3.2-1B-shaped model, interleaved with
#               `run --bench gemm,memcpy`                  -> $OUT/jobcost/
# Exit: 0 as expected, 1 an expectation failed, 2 could not run (no GPU, no bundle).
set -eu
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
GV=$ROOT/.gpubundle/gv
OUT=${OUT:-$ROOT/gpu-session-out}
STEP=${1:-}
export GPUVET_NO_METADATA=1 PYTHONUNBUFFERED=1

die() { echo "session.sh: $*" >&2; exit 2; }
# benches/nccl_pair.h's driver with the bundle's libraries and this machine's CUDA ones (as gv)
drive() { LD_LIBRARY_PATH="$ROOT/.gpubundle/lib:$(cat "$ROOT/.gpubundle/.cudalibs" 2>/dev/null)" \
	"$ROOT/.gpubundle/nccl_pair_drive" "$@"; }
# nccl-tests' sendrecv_perf at the pair's 64 MiB on GPUs 0 and 1, when this machine has it
sendrecv() {
	SR=$(command -v sendrecv_perf || echo "${NCCL_TESTS:-/opt/nccl-tests}/build/sendrecv_perf")
	if [ -x "$SR" ]; then
		CUDA_VISIBLE_DEVICES=0,1 "$SR" -b 64M -e 64M -g 2 > "$1/sendrecv_perf.txt" 2>&1 || :
	else
		echo "sendrecv_perf not found (PATH, \$NCCL_TESTS/build): no nccl-tests comparison" | tee "$1/sendrecv_perf.txt"
	fi
}
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
	# quick and standard interleaved (q s q s q s q q): the GPU's power state drifts as it warms,
	# so a standard run after five quick ones would compare a hotter GPU with a cooler one
	for i in 1 2 3 4 5; do
		echo "# quick gemm,memcpy $i"
		"$GV" --db "$DB" run --profile quick --bench gemm,memcpy --json > "$D/quick-$i.json" || [ $? -eq 1 ]
		[ $i -le 3 ] || continue
		echo "# standard gemm $i"
		"$GV" --db "$DB" run --profile standard --bench gemm --json > "$D/standard-$i.json" || [ $? -eq 1 ]
	done
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
sdc)
	SOAK=${2:-20}
	D=$OUT/sdc
	mkdir -p "$D"
	DB=$(mktemp -d)/s.db
	GPUVET_TEST_SDC_FLIP=1000 "$GV" --db "$DB" run --profile quick --bench gemm,soak --soak-seconds "$SOAK" \
		--json > "$D/flip.json" || [ $? -eq 1 ]
	"$GV" --db "$DB" accept --json > "$D/accept.json" || echo "accept exit $?"
	python3 -c "import sys,json; f=json.load(open(sys.argv[1])); m=[x['value'] for x in f['metrics'] if x['name']=='soak.sdc.mismatches']; c=[x['code'] for x in f['flags']]; print('mismatches', m, 'flags', c); sys.exit(0 if 'DATA_CORRUPTION' in c else 1)" "$D/flip.json"
	;;
nccl)
	D=$OUT/nccl
	mkdir -p "$D"
	"$GV" --db "$(mktemp -d)/n.db" run --profile quick --bench allreduce --json > "$D/allreduce-1gpu.json" || [ $? -eq 1 ]
	python3 -c "import sys,json; f=json.load(open(sys.argv[1])); print([(b['name'], b['status'], b.get('reason')) for b in f['benches']])" "$D/allreduce-1gpu.json" || :
	NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,GRAPH,NET,ENV NCCL_DEBUG_FILE="$D/nccl-torch-1rank.log" \
	MASTER_ADDR=127.0.0.1 MASTER_PORT=29531 python3 -c "
import torch, torch.distributed as dist
dist.init_process_group('nccl', rank=0, world_size=1, device_id=torch.device('cuda:0'))
t = torch.ones(1 << 20, device='cuda')
dist.all_reduce(t); torch.cuda.synchronize()
print('nccl', torch.cuda.nccl.version(), 'sum', float(t[0]))
dist.destroy_process_group()"
	wc -l "$D"/nccl-torch-1rank.log
	;;
pageable)
	# does the host buffer's alignment change a pageable copy's rate? then gpuvet against PyTorch
	mkdir -p "$OUT/pageable"
	nvcc -O2 -arch=sm_90 -o /tmp/pageable_align tests/gpu/pageable_align.cu
	/tmp/pageable_align | tee "$OUT/pageable/align.txt"
	python3 tests/gpu/peer_ratio.py --gpuvet "$GV" --out "$OUT/pageable" --benches memcpy --rounds 5
	;;
proof)
	# issue 39's remaining targets in one call: tests/gpu/proof.py (quick, standard and PyTorch
	# interleaved); $OUT/proof.tgz holds every file and is rewritten after each step
	shift
	python3 tests/gpu/proof.py --gpuvet "$GV" --dir /tmp/proof --out "$OUT" "$@"
	;;
nccl-pair)
	# cannot run on the build machine (no GPU); written for the first lent machine with 2 GPUs
	[ "$(nvidia-smi -L | wc -l)" -ge 2 ] || die "nccl-pair needs 2 GPUs"
	[ -x "$ROOT/.gpubundle/nccl_pair_drive" ] || die "no .gpubundle/nccl_pair_drive: make test-build, then bundle.sh"
	D=$OUT/nccl-pair
	mkdir -p "$D"
	"$GV" --version >/dev/null   # fills .gpubundle/.cudalibs, which drive() reads
	CUDA_VISIBLE_DEVICES=0 drive available | tee "$D/available.json"
	U=$(drive uid) || die "no nccl unique id"
	CUDA_VISIBLE_DEVICES=1 drive pair "$U" 0 60000 > "$D/pair-rank1.json" &
	P1=$!
	CUDA_VISIBLE_DEVICES=0 drive pair "$U" 1 60000 > "$D/pair-rank0.json" || :
	wait "$P1" || :
	# a peer that never comes: bounded by its 5 s deadline, then ncclCommAbort
	CUDA_VISIBLE_DEVICES=0 drive pair "$(drive uid)" 1 5000 > "$D/pair-alone.json" || :
	U=$(drive uid) || die "no nccl unique id"
	CUDA_VISIBLE_DEVICES=1 drive allreduce "$U" 1 1 2 268435456 120000 > "$D/ar-2proc-rank1.json" &
	P1=$!
	CUDA_VISIBLE_DEVICES=0 drive allreduce "$U" 0 1 2 268435456 120000 > "$D/ar-2proc-rank0.json" || :
	wait "$P1" || :
	CUDA_VISIBLE_DEVICES=0,1 drive allreduce "$(drive uid)" 0 2 2 268435456 120000 > "$D/ar-1proc.json" || :
	sendrecv "$D"
	python3 tests/gpu/nccl_pair_check.py drive "$D"
	;;
cluster)
	# cannot run on the build machine (no GPU); written for the first lent machine with 2 GPUs
	[ "$(nvidia-smi -L | wc -l)" -ge 2 ] || die "cluster needs 2 GPUs"
	D=$OUT/cluster
	mkdir -p "$D"
	PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	GPUVET_CLUSTER_TOKEN=$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')
	export GPUVET_CLUSTER_TOKEN
	# two ranks on one host are not paired (#56): each "node" gets a host name of its own (a UTS namespace)
	UNS="unshare --uts"
	[ "$(id -u)" = 0 ] || UNS="unshare --uts --map-root-user"
	rank() {   # the lead's engine detection reads Slurm's variables; one GPU per "node"
		mkdir -p "$D/node$1"
		# shellcheck disable=SC2016  # $0 and $@ are the inner shell's
		CUDA_VISIBLE_DEVICES=$1 SLURM_PROCID=$1 SLURM_NTASKS=2 $UNS sh -c 'hostname "gpuvet-node$0" && exec "$@"' "$1" \
			"$GV" --db "$D/node$1/gpuvet.db" cluster run \
			--rendezvous "127.0.0.1:$PORT" --profile quick --bench memcpy --wait 120 --json \
			> "$D/rank$1.json" 2> "$D/rank$1.err"
	}
	rank 1 &
	R1=$!
	rank 0 &
	R0=$!
	rc0=0; wait "$R0" || rc0=$?      # set -e: a rank's exit 1 (reject) is a result, not the end
	rc1=0; wait "$R1" || rc1=$?
	echo "$rc0" > "$D/rank0.rc"
	echo "$rc1" > "$D/rank1.rc"
	echo "rank 0 exit $rc0, rank 1 exit $rc1"
	sendrecv "$D"
	python3 tests/gpu/nccl_pair_check.py cluster "$D"
	;;
jobcost)
	shift
	python3 tests/gpu/jobcost.py --gpuvet "$GV" --out "$OUT/jobcost" "$@"
	;;
*)
	die "usage: session.sh info|peer [peer_ratio args]|fidelity|proof|contention [SOAK_S]|tenant [DUTY] [SOAK_S]|sdc [SOAK_S]|nccl|nccl-pair|cluster|pageable|jobcost [jobcost.py args]"
	;;
esac
