"""The GPU benches (gemm, memcpy, allreduce, soak, ingest) through the real binary.

On a machine without a GPU (this one, CI) every one of them must be recorded as
`skipped` with a reason, store no metric, and leave the run's exit status 0.
On a GPU machine the same command is run with NVML hidden and
CUDA_VISIBLE_DEVICES="" so the skip path is exercised there too; the measuring
path is validated by tests/gpu/peer_ratio.py (see tests/gpu/README.md).
The probe() path itself (reason naming the CUDA error) is run by the unit
binary tests/unit/test_gpu_probe.c.
"""
import json

GPU_BENCHES = ["gemm", "memcpy", "allreduce", "soak", "ingest"]
HIDE_GPU = {"CUDA_VISIBLE_DEVICES": "", "GPUVET_NVML_LIB": "/nonexistent/libnvidia-ml.so.1"}


def run_json(gpuvet, *args):
    p = gpuvet("run", "--bench", ",".join(GPU_BENCHES), "--json", *args, env=HIDE_GPU, timeout=120)
    assert p.returncode == 0, (p.returncode, p.stdout, p.stderr)
    return json.loads(p.stdout)


def test_gpu_benches_skip_without_gpu(gpuvet):
    fp = run_json(gpuvet)
    benches = {b["name"]: b for b in fp["benches"]}
    for name in GPU_BENCHES:
        assert name in benches, (name, list(benches))
        b = benches[name]
        assert b["status"] == "skipped", b
        assert b["reason"], b
        assert b["reason"] == b["reason"].strip() and not b["reason"].endswith(".")
    prefixes = tuple(n + "." for n in GPU_BENCHES)
    assert not [m for m in fp["metrics"] if m["name"].startswith(prefixes)]
    assert not [s for s in fp["samples"] if s["series"].startswith(prefixes)]


def test_gpu_benches_skip_is_stored(gpuvet):
    # the skipped benches are in the store, with their config-independent reasons, as
    # `results show` prints the latest run back; bench options are accepted
    run_json(gpuvet, "--soak-seconds", "5", "--profile", "standard")
    fp = gpuvet.json("results", "show")
    st = {b["name"]: (b["status"], b["reason"]) for b in fp["benches"]}
    for name in GPU_BENCHES:
        assert st[name][0] == "skipped" and st[name][1], st
    assert fp["run"]["profile"] == "standard"


def test_help_lists_gpu_benches(gpuvet):
    p = gpuvet("run", "--help", db=False)
    assert p.returncode == 0
    for name in GPU_BENCHES:
        line = [ln for ln in p.stdout.splitlines() if ln.strip().startswith(name + " ")]
        assert line, (name, p.stdout)
        assert "placeholder" not in line[0], line[0]
