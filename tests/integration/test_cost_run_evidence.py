"""`cost --run` costs a run as the GPU model its devices show, never as its label says (issue 57: "the judge, the
report and `cost` read the struct, not the tree").

The run is the real H100 capture tests/fixtures/gpu/h100-2026-11-22/quick-profile.json (one H100 80GB HBM3).
`cost --run` loads it as `accept RUN` does (typed, derived: judge/derive.h derive_load_run) and reads the model
derive() resolved from the inventory's devices, the one GPU count, the first device's memory and the run's own
instance-level metric rows.  Before, it read the label `run.gpu_model` / `run.gpu_count`: a store whose label
said 8 x H200 (an import before the label was checked on import, #52, or an edited store) was costed as 8 GPUs
sharing the one GPU's GEMM rate; a run without a label was costed as no model at all (a widened band); and a device
no model matches was costed as whatever the label said."""
import json
import sqlite3

import pytest

from conftest import FIXTURES

QUICK = FIXTURES / "gpu" / "h100-2026-11-22" / "quick-profile.json"
JOB = ("--model", "llama-3.2-1b", "--task", "train", "--seq", "2048")
KEYS = ("gpu_model", "gpu_count", "gpu_memory_gib", "fits", "why", "tokens_per_s_per_gpu", "tokens_per_s_per_gpu_low",
        "tokens_per_s_per_gpu_high", "bound", "basis", "inputs")


def edited(tmp_path, edit):
    fp = json.loads(QUICK.read_text())
    edit(fp)
    p = tmp_path / "edited.json"
    p.write_text(json.dumps(fp))
    return p


def gemm_bf16():
    return next(m["value"] for m in json.loads(QUICK.read_text())["metrics"]
                if m["name"] == "gemm.bf16.tflops" and m["gpu"] == -1)


def row(gpuvet, run=1):
    return gpuvet.json("cost", *JOB, "--run", str(run), "--json")["rows"][0]


@pytest.fixture
def truth(gpuvet, tmp_path):
    """The unedited capture's row, from a store of its own."""
    from conftest import Gpuvet
    other = Gpuvet(tmp_path / "truth.db", gpuvet.env)
    other("results", "import", QUICK, check=0)
    r = row(other)
    assert r["gpu_model"] == "H100-SXM" and r["gpu_count"] == 1 and r["fits"]
    return {k: r[k] for k in KEYS}


def test_a_stored_label_of_8_x_h200_is_not_believed(gpuvet, tmp_path, truth):
    """The file edited to say 8 x H200 is refused at import; a store that holds that label anyway (imported before
    #52 checked it, or edited) is costed as the one H100 its inventory shows, with the one H100's GEMM rate."""
    bad = edited(tmp_path, lambda fp: fp["run"].update(gpu_model="H200", gpu_count=8))
    p = gpuvet("results", "import", bad, check=2)
    assert "run.gpu_model 'H200' disagrees" in p.stderr or "gpu_count 8 disagrees" in p.stderr, p.stderr
    gpuvet("results", "import", QUICK, check=0)
    con = sqlite3.connect(gpuvet.db)
    con.execute("UPDATE runs SET gpu_model = 'H200', gpu_count = 8")
    con.commit()
    con.close()
    r = row(gpuvet)
    assert r["gpu_model"] == "H100-SXM" and r["gpu_count"] == 1, (r["gpu_model"], r["gpu_count"])
    assert r["inputs"]["gemm_tflops_per_gpu"] == pytest.approx(gemm_bf16())   # not an eighth of it
    assert r["gpu_memory_gib"] == pytest.approx(85520809984 / 2 ** 30)      # the device's memory, not an H200's
    assert {k: r[k] for k in KEYS} == truth
    line = gpuvet("cost", *JOB, "--run", "1", check=0).stdout
    assert "fits 1 GPU(s) x 1 instance(s)" in line, line


def test_a_run_without_a_label_is_costed_as_its_devices(gpuvet, tmp_path, truth):
    """run.gpu_model absent (taken: it is a label) or null: the model its devices show, the same row as the labelled
    capture's; before, no model (gpu_model null, efficiencies outside the published record, a widened band)."""
    for edit in (lambda fp: fp["run"].pop("gpu_model"),
                 lambda fp: fp["run"].update(gpu_model=None, uuid="b095eb88-5bcd-43fe-a9ff-3979cc2d0002")):
        gpuvet("results", "import", edited(tmp_path, edit), check=0)
    for run in (1, 2):
        r = row(gpuvet, run)
        r["basis"] = r["basis"].replace(f"run {run}'s", "run 1's")
        assert {k: r[k] for k in KEYS} == truth, run


def test_a_device_no_model_matches_is_not_costed(gpuvet, tmp_path):
    """A device gpuvet cannot resolve ('NVIDIA Mystery GPU', no reference model, no label) gives no efficiency and
    no reference to cost by: the row says so, naming the device, and the text line too (before: costed without a
    model, fits true; with a label in the store, as the label's model)."""
    def mystery(fp):
        g = fp["inventory"]["gpus"][0]
        g["name"] = "NVIDIA Mystery GPU"
        g.pop("reference_model", None)
        fp["run"].pop("gpu_model")
    gpuvet("results", "import", edited(tmp_path, mystery), check=0)
    r = row(gpuvet)
    assert r["fits"] is False and r["gpu_model"] is None and r["tokens_per_s_per_gpu"] is None
    assert r["why"].startswith("not costed: gpu 0 resolves to no model gpuvet knows"), r["why"]
    assert "NVIDIA Mystery GPU" in r["why"] and "never as its label says" in r["why"]
    assert r["gpu_count"] == 1 and r["gpu_memory_gib"] == pytest.approx(85520809984 / 2 ** 30)
    p = gpuvet("cost", *JOB, "--run", "1", check=0)
    assert "on the machine of run 1: not costed: gpu 0 resolves to no model" in p.stdout, p.stdout
