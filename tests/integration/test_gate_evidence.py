"""Issue 52, a gate that cannot be fooled, round two (items 1 to 4 and the smaller values): the
reproductions of a probe on f4570a0, each a real capture of tests/fixtures/gpu/h100-2026-11-22/
edited here and imported, each now ending in REJECT (exit 1), UNMEASURABLE (exit 3) or a
refused import (exit 2) naming what is wrong.  A plain accept judges the run stored last, never
the latest date a run carries; the GPU model is the one the inventory's devices resolve to;
every metric row is under the bench that declares it; values are within physical bounds; the
fleet is keyed by the resolved model (docs/acceptance.md, "What is derived from evidence")."""
import copy
import json
import sqlite3
import uuid

import pytest

from conftest import FIXTURES

CAP = FIXTURES / "gpu" / "h100-2026-11-22"
Q = CAP / "quick-profile.json"
INFERENCE = FIXTURES.parent.parent / "contrib" / "policies" / "inference-single-gpu.yaml"
H2D = ("memcpy.h2d.pinned.gbps", "memcpy.h2d.pct_of_link")


def fresh(src=Q, started=None):
    fp = json.loads(src.read_text())
    fp["run"]["uuid"] = str(uuid.uuid4())
    fp["verdicts"] = []
    if started:
        fp["run"]["started_at"], fp["run"]["finished_at"] = started, None
    return fp


def put(gpuvet, tmp_path, fp, check=0):
    path = tmp_path / f"{fp['run']['uuid']}.json"
    path.write_text(json.dumps(fp))
    return gpuvet("results", "import", path, check=check)


def scale(fp, names, factor):
    for m in fp["metrics"]:
        if m["name"] in names and m["value"] is not None:
            m["value"] *= factor
    return fp


def gemm(fp, factor):
    return scale(fp, [m["name"] for m in fp["metrics"] if m["name"].startswith("gemm.")], factor)


def refused(gpuvet, tmp_path, fp, *words):
    p = put(gpuvet, tmp_path, fp, check=2)
    for w in words:
        assert w in p.stderr, p.stderr
    assert gpuvet("results", "list", "--json", check=0).stdout.count(fp["run"]["uuid"]) == 0
    return p


# ---- 1. the run judged is the run meant ----

def test_1_a_plain_accept_judges_the_run_stored_last_not_the_latest_date(gpuvet, tmp_path):
    put(gpuvet, tmp_path, fresh(started="2026-11-26T10:00:00Z"))      # clean, dated later
    put(gpuvet, tmp_path, gemm(fresh(started="2026-11-22T10:00:00Z"), 0.6))   # measured after it: 60 %
    p = gpuvet("accept", check=1)
    assert "judging run 2, the run stored last" in p.stdout and "REJECT" in p.stdout


@pytest.mark.parametrize("started", ["2099-01-01T00:00:00Z", "2030-06-01T00:00:00+02:00"])
def test_1_a_start_time_in_the_future_is_refused(gpuvet, tmp_path, started):
    put(gpuvet, tmp_path, fresh())
    refused(gpuvet, tmp_path, fresh(started=started), "run.started_at", "more than a day ahead")
    assert "judging run 1" in gpuvet("accept", check=0).stdout


def test_1_a_start_time_before_the_gpu_was_announced_is_refused(gpuvet, tmp_path):
    refused(gpuvet, tmp_path, fresh(started="2021-06-01T00:00:00Z"), "before the H100-SXM was announced (2022-03")


def test_1_a_merged_store_with_a_future_run_is_refused(gpuvet, tmp_path):
    # a store written before the check holds a run dated 2099: a merge refuses it, names it
    other = tmp_path / "other.db"
    fp = fresh()
    (tmp_path / "f.json").write_text(json.dumps(fp))
    gpuvet("--db", other, "results", "import", tmp_path / "f.json", check=0)
    db = sqlite3.connect(other)
    db.execute("UPDATE runs SET started_at = '2099-01-01T00:00:00Z', finished_at = NULL")
    db.commit()
    db.close()
    p = gpuvet("results", "merge", other)
    assert p.returncode == 2 and "more than a day ahead" in p.stderr, (p.returncode, p.stderr)


# ---- 2. the GPU model is the devices', never the label ----

@pytest.mark.parametrize("label", ["L4", "T4", "A10G", "h100-sxm", "H100-SXM5", "H100-SXM "])
def test_2_a_gpu_model_label_that_disagrees_with_the_inventory_is_refused(gpuvet, tmp_path, label):
    fp = gemm(fresh(), 0.2)
    fp["run"]["gpu_model"] = label
    refused(gpuvet, tmp_path, fp, "run.gpu_model", "disagrees with the inventory's gpu 0 (H100-SXM)")


def test_2_an_h100_labelled_l4_is_not_accepted_by_the_inference_policy(gpuvet, tmp_path):
    fp = gemm(fresh(), 0.2)
    fp["run"]["gpu_model"] = "L4"
    fp["inventory"]["gpus"][0]["reference_model"] = "L4"
    refused(gpuvet, tmp_path, fp, "reference_model 'L4' disagrees with its device")
    # the same run as measured: rejected against the H100's reference
    p = put(gpuvet, tmp_path, gemm(fresh(), 0.2))
    assert p.returncode == 0
    assert gpuvet("accept", "--policy", INFERENCE).returncode == 1


def test_2_a_label_without_a_device_is_never_judged_on(gpuvet, tmp_path):
    fp = gemm(fresh(), 0.2)
    fp["run"]["gpu_model"] = "L4"
    fp["inventory"]["gpus"] = []
    put(gpuvet, tmp_path, fp, check=0)   # kept, for the price list; no reference is read from it
    p = gpuvet("accept", "--policy", INFERENCE, check=3)
    assert "UNMEASURABLE" in p.stdout


def test_2_a_label_naming_a_model_no_device_shows_is_refused(gpuvet, tmp_path):
    fp = gemm(fresh(), 0.2)
    fp["run"]["gpu_model"] = "L4"
    for g in fp["inventory"]["gpus"]:
        g["name"], g["reference_model"] = "NVIDIA Hopper-X 96GB", None
    refused(gpuvet, tmp_path, fp, "run.gpu_model 'L4' names a model no gpu of the inventory shows")


# ---- 3. every metric row under the bench that declares it ----

def test_3_a_row_under_a_bench_the_run_does_not_list_is_refused(gpuvet, tmp_path):
    fp = gemm(fresh(), 0.5)
    fp["metrics"].insert(0, {"bench": "aaa", "name": "gemm.bf16.tflops", "gpu": 0, "value": 800.0,
                             "unit": "TFLOP/s", "params": {}})
    refused(gpuvet, tmp_path, fp, "'gemm.bf16.tflops' is under bench 'aaa'; bench 'gemm' declares it")
    fp["benches"].append({"name": "aaa", "status": "ok", "reason": None, "duration_s": 1.0, "config": None})
    refused(gpuvet, tmp_path, fp, "under bench 'aaa'; bench 'gemm' declares it")


def test_3_a_metric_moved_to_another_bench_is_refused(gpuvet, tmp_path):
    fp = fresh()
    for m in fp["metrics"]:
        if m["name"] == "gemm.bf16.tflops":
            m["bench"] = "memcpy"
    refused(gpuvet, tmp_path, fp, "is under bench 'memcpy'; bench 'gemm' declares it")


def test_3_a_series_under_an_unlisted_bench_is_refused(gpuvet, tmp_path):
    fp = fresh()
    fp["samples"][0]["bench"] = "zzz"
    # a series some bench declares belongs under that bench (issue 57); one none declares under a listed bench
    refused(gpuvet, tmp_path, fp, "samples[0]", "is under bench 'zzz'; bench 'allreduce' declares it")
    fp = fresh()
    fp["samples"][0].update(bench="zzz", series="zzz.newer.gbps")
    refused(gpuvet, tmp_path, fp, "samples[0]", "bench 'zzz', which the fingerprint's benches do not list")


# ---- 4. the fleet: the resolved model, and the config the judge reads as declared ----

def test_4_a_memcpy_timing_the_bench_never_writes_is_refused(gpuvet, tmp_path):
    fp = scale(fresh(), H2D, 0.81)
    for b in fp["benches"]:
        if b["name"] == "memcpy":
            b["config"]["timing"] = "other"
    refused(gpuvet, tmp_path, fp, "'memcpy': config timing 'other' is not what the bench declares (none)")
    for b in fp["benches"]:
        if b["name"] == "gemm":
            b["config"]["timing"] = "burst"
    fp["benches"] = [b for b in fp["benches"] if b["name"] != "memcpy"] + [
        b for b in fresh()["benches"] if b["name"] == "memcpy"]
    refused(gpuvet, tmp_path, fp, "'gemm': config timing 'burst' is not what the bench declares (steady)")


def test_4_the_fleet_floor_holds_for_the_victim(gpuvet, tmp_path):
    for _ in range(3):
        put(gpuvet, tmp_path, fresh())
        gpuvet("accept", check=0)
    put(gpuvet, tmp_path, scale(fresh(), H2D, 0.81))
    p = gpuvet("accept", check=1)
    assert "fleet: median" in p.stdout and "H100-SXM x1" in p.stdout


# ---- the smaller ones: values no machine gives ----

@pytest.mark.parametrize("name,value,words", [
    ("gemm.bf16.tflops", 1e300, "gemm.bf16.tflops on gpu 0 = 1e+300 is outside its physical bounds [0, 4500]"),
    ("memcpy.h2d.pinned.gbps", -1, "memcpy.h2d.pinned.gbps on gpu 0 = -1 is outside its physical bounds [0,"),
    ("memcpy.h2d.pct_of_link", 5000, "memcpy.h2d.pct_of_link on gpu 0 = 5000 is outside its physical bounds [0, 100]"),
])
def test_impossible_values_are_refused_naming_metric_and_bound(gpuvet, tmp_path, name, value, words):
    fp = fresh()
    hit = [m for m in fp["metrics"] if m["name"] == name and m["gpu"] == 0]
    assert hit, name
    hit[0]["value"] = value
    refused(gpuvet, tmp_path, fp, words)


def test_an_impossible_point_of_a_series_is_refused(gpuvet, tmp_path):
    fp = fresh(CAP / "standard-profile.json")
    s = [s for s in fp["samples"] if s["series"] == "soak.pcie.gen"][0]
    s["points"][3][1] = 1e300
    refused(gpuvet, tmp_path, fp, "soak.pcie.gen", "outside its physical bounds [-1, 7]")


def test_run_stores_an_impossible_value_as_not_measured_and_says_so(gpuvet):
    env = {"GPUVET_TEST_BENCHES": "1", "GPUVET_NULL_MODE": "impossible"}
    p = gpuvet("run", "--bench", "null", "--json", env=env)
    assert "null: null.value.count = -1 is outside its physical bounds [0, inf]" in p.stderr, p.stderr
    assert "stored as not measured" in p.stderr and p.stderr.count("physical bounds") == 1   # once a bench
    fp = gpuvet.json("results", "show")
    assert [m["value"] for m in fp["metrics"] if m["name"] == "null.value.count"] == [None]
    pts = [s["points"] for s in fp["samples"] if s["series"] == "null.series.count"][0]
    assert pts == [[0, 0], [1, None], [2, 4]]


def test_every_real_capture_still_imports(gpuvet, tmp_path):
    n = 0
    for p in sorted((FIXTURES / "gpu").rglob("*.json")):
        j = json.loads(p.read_text())
        if isinstance(j, dict) and j.get("schema") == "gpuvet.fingerprint/1":
            j = copy.deepcopy(j)
            j["run"]["uuid"] = str(uuid.uuid4())
            put(gpuvet, tmp_path, j, check=0)
            n += 1
    assert n >= 40
