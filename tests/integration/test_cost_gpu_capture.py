"""`gpuvet cost` against a real job on the GPU it predicts for.

tests/fixtures/gpu/h100-2026-11-25/jobcost/ (one H100 80GB HBM3) and h200-2026-11-28/jobcost/ (one H200, copied
unchanged from shared/captures/h200-2026-11-28; its README gives every command): tests/gpu/jobcost.py alternated
gpuvet's `run --bench gemm,memcpy` (fingerprint-N.json) with a real PyTorch job on a Llama-3.2-1B-shaped model
with an untied output layer (torch-N.json): full training and LoRA at 4 x 2,048 tokens, and a CUDA-graph decode
at 1,024 tokens of context, batch 1 to 256.  For each round, `cost --run` on that round's fingerprint must
bracket what the job did there within its own stated band, and come within 15 % of it (LoRA: 0.75-0.90 of the
centre, see below; docs/cost.md); and the H200's lead over the H100, at the same GEMM rate and 1.41x the DRAM rate,
must be the model's too."""
import json

import pytest

from conftest import FIXTURES

CAPTURES = {"h100": FIXTURES / "gpu" / "h100-2026-11-25" / "jobcost",
            "h200": FIXTURES / "gpu" / "h200-2026-11-28" / "jobcost"}
SHAPE = ["--layers", "16", "--hidden", "2048", "--ffn", "8192", "--heads", "32", "--kv-heads", "8",
         "--vocab", "128256"]
CASES = [(gpu, rnd, i) for gpu in CAPTURES for rnd in (1, 2) for i in range(6)]


@pytest.mark.parametrize("gpu,rnd,i", CASES)
def test_prediction_brackets_the_measured_job(gpuvet, gpu, rnd, i):
    job_dir = CAPTURES[gpu]
    gpuvet("results", "import", str(job_dir / f"fingerprint-{rnd}.json"), check=0)
    job = json.loads((job_dir / f"torch-{rnd}.json").read_text())
    assert job["shape"] == {"layers": 16, "hidden": 2048, "ffn": 8192, "heads": 32, "kv_heads": 8,
                            "vocab": 128256}
    assert job["device"].startswith("NVIDIA " + gpu.upper())
    t = job["results"][i]
    args = ["cost", *SHAPE, "--task", t["task"], "--run", "1", "--json"]
    args += ["--batch", str(t["batch"]), "--context", str(t["context"])] if t["task"] == "infer" \
        else ["--seq", str(t["seq"])]
    row = gpuvet.json(*args)["rows"][0]
    assert row["fits"] and not row["estimate"] and row["layout"]
    lo, mid, hi = (row[k] for k in ("tokens_per_s_per_gpu_low", "tokens_per_s_per_gpu",
                                    "tokens_per_s_per_gpu_high"))
    measured = t["tokens_per_s"]
    assert lo <= measured <= hi, (gpu, t["task"], t.get("batch"), lo, mid, hi, measured)
    # LoRA's efficiency is fitted on NeMo Automodel's published 8B LoRA (fused adapters, torch.compile): this plain
    # PyTorch loop (unfused rank-16 adapters on a 1.5 B shape) reaches 0.80-0.81 of it on the H100, 0.83-0.87 on the
    # H200; the PyTorch LoRA band's low end (0.78, judge/cost_stack.c) is set to hold it
    near = (0.75, 0.90) if t["task"] == "lora" else (0.85, 1.15)
    assert near[0] <= measured / mid <= near[1], (gpu, t["task"], t.get("batch"), measured / mid)



@pytest.mark.parametrize("rnd", (1, 2))
@pytest.mark.parametrize("task", ("train", "lora"))
def test_the_h200s_lead_is_the_models(gpuvet, task, rnd):
    """The same step ran 8.7-9.4 % (training) and 12.9-13.7 % (LoRA) faster on the H200 than on the H100, whose GEMM
    rates measured within 5 % of each other: a third or more of the step moves bytes at the DRAM rate, 1.41x on the
    H200 (judge/cost_model.c torch_layer_bytes_per_token_hidden).  The model's H200 / H100 must be that lead within
    8 %; charging the GEMM rate alone, it was 0.95-0.98 against the measured 1.09-1.14."""
    measured, predicted = [], []
    for run, gpu in enumerate(("h100", "h200"), start=1):
        gpuvet("results", "import", str(CAPTURES[gpu] / f"fingerprint-{rnd}.json"), check=0)
        job = json.loads((CAPTURES[gpu] / f"torch-{rnd}.json").read_text())
        t = next(t for t in job["results"] if t["task"] == task)
        args = ("cost", *SHAPE, "--task", task, "--seq", str(t["seq"]), "--run", str(run), "--json")
        row = gpuvet.json(*args)["rows"][0]
        measured.append(t["tokens_per_s"])
        predicted.append(row["tokens_per_s_per_gpu"])
    lead, model = measured[1] / measured[0], predicted[1] / predicted[0]
    assert 0.92 <= lead / model <= 1.08, (task, rnd, lead, model)
