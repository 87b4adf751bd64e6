"""`gpuvet accept` and `gpuvet run --accept` end to end with the real binary:
verdicts on stored fingerprints with known answers (the synthetic edge cases
of tests/fixtures/flags/, see its README), each rejecting rule alone, missing
metrics (exit 3), malformed policies (exit 2 naming file and line), fleet
baselines, noise, and `results merge` of overlapping stores."""
import json
import random
import sqlite3
import uuid
from pathlib import Path

import pytest

from conftest import FIXTURES, ROOT
from helpers import gpu_reference

H100_BF16 = gpu_reference("H100-SXM")

FLAGS = FIXTURES / "flags"


def fingerprint(case="clean", memcpy=True, host=None, **run):
    """A fixture fingerprint with a fresh uuid; memcpy adds good H2D metrics
    (the default policy needs them)."""
    fp = json.loads((FLAGS / f"{case}.json").read_text())
    fp["run"]["uuid"] = str(uuid.uuid4())
    if host:
        fp["run"]["hostname"] = host
    fp["run"].update(run)
    if memcpy:   # replacing the fixture's own rows: one row per metric and gpu (issue 34)
        fp["benches"].append({"name": "memcpy", "status": "ok", "reason": None, "duration_s": 5.0, "config": {}})
        fp["metrics"] = [m for m in fp["metrics"] if not (m["name"].startswith("memcpy.h2d.") and m["gpu"] == -1)]
        fp["metrics"] += [
            {"bench": "memcpy", "name": "memcpy.h2d.pinned.gbps", "gpu": -1, "value": 55.0, "unit": "GB/s",
             "params": {"bytes": 268435456, "reps": 20, "spread": 0.01}},
            {"bench": "memcpy", "name": "memcpy.h2d.pct_of_link", "gpu": -1, "value": 87.0, "unit": "%", "params": {}},
        ]
    return fp


def set_metric(fp, name, value, gpu=-1):
    for m in fp["metrics"]:
        if m["name"] == name and m["gpu"] == gpu:
            m["value"] = value
            return fp
    raise KeyError(name)


def store(gpuvet, tmp_path, fp):
    """fp imported; its percentages left to gpuvet, which derives them from the rates (issue 57)."""
    fp = dict(fp, metrics=[m for m in fp["metrics"] if ".pct_of_" not in m["name"]])
    path = tmp_path / f"{fp['run']['uuid']}.json"
    path.write_text(json.dumps(fp))
    gpuvet("results", "import", path, check=0)
    return fp["run"]["uuid"]


def verdicts(gpuvet, run_uuid):
    return gpuvet.json("results", "show", run_uuid)["verdicts"]


def test_clean_machine_is_accepted_and_the_verdict_is_stored(gpuvet, tmp_path):
    u = store(gpuvet, tmp_path, fingerprint())
    p = gpuvet("accept", check=0)
    assert "ACCEPT" in p.stdout
    v = verdicts(gpuvet, u)
    assert [(x["verdict"], x["policy"]) for x in v] == [("accept", "default")]
    assert v[0]["detail"]["failed"] == [] and v[0]["detail"]["exit_code"] == 0


REJECTS = [
    ("thermal_sw_3s", "THROTTLE_THERMAL"), ("thermal_hw_1s", "THROTTLE_THERMAL"),
    ("hw_slowdown_1s", "THROTTLE_HW"), ("combined_powercap_hwslowdown", "THROTTLE_HW"),
    ("remap_pending", "ROW_REMAP_PENDING"), ("remap_failure", "ROW_REMAP_PENDING"),
    ("ecc_uncorrected_1", "ECC_ERRORS"), ("pcie_gen4_of_5", "PCIE_DOWNGRADE"), ("xid_79", "XID"),
    ("foreign_and_dips", "CONTENTION"),
]


@pytest.mark.parametrize("case,code", REJECTS, ids=[c for c, _ in REJECTS])
def test_each_rejecting_flag_alone(gpuvet, tmp_path, case, code):
    u = store(gpuvet, tmp_path, fingerprint(case))
    p = gpuvet("accept", "--run", u[:8], check=1)
    assert f"FAIL  flag {code}" in p.stdout
    assert "reject_flags" in p.stdout            # the threshold's source
    res = gpuvet("accept", "--run", u, "--json", check=1)
    res = json.loads(res.stdout)
    assert res["verdict"] == "reject" and res["exit_code"] == 1
    assert [f["flag"] for f in res["failed"]] == [code]
    assert res["failed"][0]["evidence"]["gpu"] == (-1 if code == "CONTENTION" else 0)
    assert verdicts(gpuvet, u)[0]["verdict"] == "reject"


@pytest.mark.parametrize("metric,gpu,value,threshold,kind,line,unit", [
    # 0.75 x the H100's one reference (common/gpus.c), judged on every GPU: 0.1 under it
    ("gemm.bf16.tflops", 0, round(0.75 * H100_BF16 - 0.1, 1), 0.75 * H100_BF16, "reference", 32, "TFLOP/s"),
    ("memcpy.h2d.pct_of_link", -1, 69.9, 70, "absolute", 43, "%")])
def test_each_rejecting_metric_rule_alone(gpuvet, tmp_path, metric, gpu, value, threshold, kind, line, unit):
    if metric.endswith(".pct_of_link"):   # a percentage is gpuvet's: the copy rate that makes it (gen5 x16 link)
        fp = fingerprint()
        for m in fp["metrics"]:
            if m["name"] == "memcpy.h2d.pinned.gbps":
                m["value"] = value / 100 * 63.01538461538461
        store(gpuvet, tmp_path, fp)
    else:
        store(gpuvet, tmp_path, set_metric(fingerprint(), metric, value, gpu=gpu))
    res = json.loads(gpuvet("accept", "--json", check=1).stdout)
    assert len(res["failed"]) == 1
    f = res["failed"][0]
    assert (f["metric"], f["op"], f["kind"]) == (metric, ">=", kind) and f["value"] == pytest.approx(value)
    assert f["threshold"] == pytest.approx(threshold)
    assert f["source"].endswith(f"(policy default, rule {metric} min_fraction_of_reference 0.75)"
                                if kind == "reference" else f"policy default, rule {metric} min {threshold:g}")
    assert f["rule_line"] == line                                   # the line stays for scripts, not in the words
    if kind == "reference":
        assert "H100-SXM reference %g TFLOP/s (measured)" % H100_BF16 in f["source"]
    text = gpuvet("accept", check=1).stdout
    where = "instance" if gpu < 0 else f"gpu {gpu}"
    assert f"FAIL  {metric} ({where}) = {value:g} {unit}, needs >= {threshold:.4g} {unit}" in text


def test_just_inside_every_threshold_accepts(gpuvet, tmp_path):
    for case in ("thermal_sw_2s", "power_cap_5s", "ecc_corrected_99", "xid_13_app", "foreign_only",
                 "board_limit_5s", "pcie_one_low_sample"):
        u = store(gpuvet, tmp_path, fingerprint(case))
        p = gpuvet("accept", "--run", u)
        assert p.returncode == 0, (case, p.stdout)


def test_missing_metric_is_exit_3_with_the_reason(gpuvet, tmp_path):
    fp = fingerprint(memcpy=False)
    fp["benches"].append({"name": "memcpy", "status": "skipped", "reason": "no gpu visible", "duration_s": 0,
                          "config": None})
    u = store(gpuvet, tmp_path, fp)
    p = gpuvet("accept", check=3)
    assert "NOT MEASURED  memcpy.h2d.pct_of_link (instance): bench memcpy skipped: no gpu visible" in p.stdout
    assert verdicts(gpuvet, u)[0]["verdict"] == "unmeasurable"


def test_skipped_soak_makes_throttle_flags_unmeasurable(gpuvet, tmp_path):
    fp = fingerprint()
    for b in fp["benches"]:
        if b["name"] == "soak":
            b["status"], b["reason"] = "skipped", "no gpu"
    store(gpuvet, tmp_path, fp)
    res = json.loads(gpuvet("accept", "--json", check=3).stdout)
    assert {"THROTTLE_THERMAL", "THROTTLE_HW", "PCIE_DOWNGRADE", "XID"} <= {u.get("flag") for u in res["unmeasurable"]}


def test_reject_wins_over_unmeasurable(gpuvet, tmp_path):
    store(gpuvet, tmp_path, fingerprint("xid_79", memcpy=False))
    gpuvet("accept", check=1)


def test_cpu_only_run_with_accept_exits_3(gpuvet):
    p = gpuvet("run", "--profile", "quick", "--accept")
    assert p.returncode == 3, p.stdout + p.stderr
    assert "UNMEASURABLE" in p.stdout
    assert "no gpu" in p.stdout or "driver" in p.stdout
    p = gpuvet("accept", check=3)
    run = gpuvet.json("results", "list", "--json")[0]
    assert [v["verdict"] for v in gpuvet.json("results", "show", run["uuid"])["verdicts"]] == ["unmeasurable"]


MALFORMED = [
    ("rules:\n  - metric: gemm.bf16.tflops\n    min: lots\n", 3, "'min' must be a plain decimal number"),
    ("name: x\nrules:\n  - metric: gemm.bf16.tflops\n    minimum: 3\n", 4, "unknown rule key 'minimum'"),
    ("reject_flags:\n  - XID\n  - THROTTLE_COSMIC\n", 3, "unknown flag 'THROTTLE_COSMIC'"),
    ("rules: [\n", 2, ""),
    # the example: a typo used to exit 3 (cannot measure), which cloud-init turns into a power-off
    ("name: mine\nrules:\n  - metric: gemm.bf16.tflop\n    min: 500\n", 3, "unknown metric 'gemm.bf16.tflop'"),
    # the fabric rules of `gpuvet cluster` (#49): a typo in a key is refused at load, not ignored
    ("name: mine\nrules:\n  - {metric: gemm.bf16.tflops, min: 500}\ncluster:\n  - metric: cluster.pair.gbps\n"
     "    min_fraction_of_medain: 0.6\n", 6, "unknown key 'min_fraction_of_medain' for cluster.pair.gbps"),
]


@pytest.mark.parametrize("text,line,words", MALFORMED)
def test_malformed_policy_is_exit_2_naming_file_and_line(gpuvet, tmp_path, text, line, words):
    store(gpuvet, tmp_path, fingerprint())
    pol = tmp_path / "bad.yaml"
    pol.write_text(text)
    p = gpuvet("accept", "--policy", pol, check=2)
    assert p.stdout == ""
    err = p.stderr.strip()
    assert "\n" not in err
    assert err.startswith(f"gpuvet: policy '{pol}': line {line}: "), err
    assert words in err
    # nothing stored for a policy that could not be read
    assert verdicts(gpuvet, gpuvet.json("results", "list", "--json")[0]["uuid"]) == []


def test_policy_file_missing_and_bad_usage(gpuvet, tmp_path):
    store(gpuvet, tmp_path, fingerprint())
    p = gpuvet("accept", "--policy", tmp_path / "nope.yaml", check=2)
    assert p.stderr == f"gpuvet: cannot read policy '{tmp_path / 'nope.yaml'}': no such file or directory\n"
    p = gpuvet("accept", "--policy", tmp_path, check=2)
    assert p.stderr.startswith("gpuvet: cannot read policy") and "\n" not in p.stderr.rstrip("\n")
    gpuvet("accept", "--frobnicate", check=2)
    gpuvet("accept", "extra", check=2)
    p = gpuvet("accept", "--run", "999", check=2)


def test_empty_or_absent_store_is_exit_2(gpuvet, tmp_path):
    p = gpuvet("accept", check=2)
    assert "no store" in p.stderr
    gpuvet("results", "list", check=0)   # creates an empty store
    p = gpuvet("accept", check=2)
    assert "no run" in p.stderr


def test_show_policy_is_the_shipped_default_file(gpuvet):
    p = gpuvet("accept", "--show-policy", check=0, db=False)
    assert p.stdout == (ROOT / "judge" / "policies" / "default.yaml").read_text()


def test_custom_policy_absolute_per_gpu_and_flags(gpuvet, tmp_path):
    store(gpuvet, tmp_path, fingerprint("clean_8gpu"))
    pol = tmp_path / "strict.yaml"
    pol.write_text("name: strict\nrules:\n  - metric: gemm.bf16.tflops\n    gpu: each\n    min: 721\n"
                   "reject_flags: [{code: THROTTLE_POWER, severity: info}]\n")
    res = json.loads(gpuvet("accept", "--policy", pol, "--json", check=1).stdout)
    assert res["policy"] == "strict" and res["policy_source"] == str(pol)
    assert sorted(f["gpu"] for f in res["failed"]) == list(range(8))
    assert all(f["value"] == 720 and f["threshold"] == 721 for f in res["failed"])


def fleet_run(gpuvet, tmp_path, tflops, host):
    fp = set_metric(fingerprint(host=host), "gemm.bf16.tflops", tflops, gpu=0)
    u = store(gpuvet, tmp_path, fp)
    return u, gpuvet("accept", "--run", u)


def test_fleet_baseline_median_of_accepted_runs_of_the_sku(gpuvet, tmp_path):
    for i, tf in enumerate((740.0, 750.0, 760.0)):
        _, p = fleet_run(gpuvet, tmp_path, tf, f"n{i}")
        assert p.returncode == 0
    # a rejected run of the SKU never enters the baseline
    bad = set_metric(fingerprint("xid_79", host="bad"), "gemm.bf16.tflops", 200.0, gpu=0)
    gpuvet("accept", "--run", store(gpuvet, tmp_path, bad), check=1)
    # another SKU of the same GPU is another fleet: above the reference floor, under this fleet's
    other = set_metric(fingerprint(host="other", provider="lambda", instance_type="gpu_1x_h100_sxm5", region=None),
                       "gemm.bf16.tflops", 600.0, gpu=0)
    gpuvet("accept", "--run", store(gpuvet, tmp_path, other), check=0)
    u, p = fleet_run(gpuvet, tmp_path, 674.9, "slow")   # median 750 x 0.90 = 675
    assert p.returncode == 1, p.stdout
    res = json.loads(gpuvet("accept", "--run", u, "--json", check=1).stdout)
    f = res["failed"][0]
    assert f["kind"] == "fleet" and f["threshold"] == pytest.approx(675)
    assert "median 750 of 3 accepted run(s) of H100-SXM x1 p5.4xlarge x 0.9" in f["source"]
    _, p = fleet_run(gpuvet, tmp_path, 675.1, "ok")
    assert p.returncode == 0, p.stdout
    # the candidates come from one query: accepted runs of the SKU only (3 + "ok"), not all 7 runs
    p = gpuvet("-v", "accept", "--run", u)
    assert "fleet baseline: 4 candidate run(s)\n" in p.stderr, p.stderr


def test_three_repeats_of_a_clean_machine_with_noise_all_accept(gpuvet, tmp_path):
    """Run-to-run noise of a good machine (GEMM and H2D within +-3%, a few
    seconds of power cap, soak throughput wobbling 2%) never rejects, with and
    without a fleet baseline."""
    rnd = random.Random(7)
    for i in range(6):
        fp = fingerprint("power_cap_5s", host=f"good{i}")
        set_metric(fp, "gemm.bf16.pct_of_peak", 72.8 * rnd.uniform(0.97, 1.03))
        set_metric(fp, "memcpy.h2d.pinned.gbps", 55.0 * rnd.uniform(0.97, 1.03))
        set_metric(fp, "memcpy.h2d.pct_of_link", 87.0 * rnd.uniform(0.97, 1.03))
        for s in fp["samples"]:
            if s["series"] == "soak.tflops":
                for p in s["points"]:
                    p[1] *= rnd.uniform(0.98, 1.02)
        u = store(gpuvet, tmp_path, fp)
        p = gpuvet("accept", "--run", u)
        assert p.returncode == 0, p.stdout
        if i >= 3:
            assert "fleet: median" in gpuvet("accept", "--run", u, "--json").stdout


def uuids(gpuvet, db):
    return sorted(r["uuid"] for r in gpuvet.json("--db", db, "results", "list", "--json", db=False))


def test_merge_of_overlapping_stores_has_no_duplicates(gpuvet, tmp_path):
    a, b, c = tmp_path / "a.db", tmp_path / "b.db", tmp_path / "central.db"
    shared = fingerprint(host="shared")
    fa, fb = fingerprint(host="only-a"), fingerprint(host="only-b")
    for db, fps in ((a, (fa, shared)), (b, (shared, fb))):
        for fp in fps:
            path = tmp_path / f"{fp['run']['uuid']}.json"
            path.write_text(json.dumps(fp))
            gpuvet("--db", db, "results", "import", path, check=0, db=False)
    gpuvet("--db", a, "accept", "--run", shared["run"]["uuid"], check=0, db=False)
    for _ in range(2):   # merging twice adds nothing the second time
        gpuvet("--db", c, "results", "merge", a, b, check=0, db=False)
        assert uuids(gpuvet, c) == sorted(fp["run"]["uuid"] for fp in (fa, fb, shared))
    con = sqlite3.connect(c)
    try:
        assert con.execute("SELECT COUNT(*), COUNT(DISTINCT uuid) FROM runs").fetchone() == (3, 3)
        assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    finally:
        con.close()
    # the verdict travelled with its run; metrics are not doubled
    sh = gpuvet.json("--db", c, "results", "show", shared["run"]["uuid"], db=False)
    assert [v["verdict"] for v in sh["verdicts"]] == ["accept"]
    raw = [m for m in sh["metrics"] if ".pct_of_" not in m["name"]]   # gpuvet's derived percentages beside them
    assert len(raw) == len([m for m in shared["metrics"] if ".pct_of_" not in m["name"]])
    # merge the other way round into a store that already holds some of them
    gpuvet("--db", b, "results", "merge", a, c, check=0, db=False)
    assert uuids(gpuvet, b) == uuids(gpuvet, c)


def test_run_gates_before_it_writes(gpuvet, tmp_path):
    # the README's provisioning command: the JSON and the report of the run carry its verdict
    rep = tmp_path / "r.html"
    p = gpuvet("run", "--profile", "quick", "--bench", "gemm", "--json", "--accept", "--report", rep)
    assert p.returncode == 3, p.stderr                      # no GPU here: cannot measure
    fp = json.loads(p.stdout)                               # stdout is still one document
    assert [v["verdict"] for v in fp["verdicts"]] == ["unmeasurable"]
    assert "UNMEASURABLE" in p.stderr                     # the verdict's text beside it
    html = rep.read_text()
    assert "Not gated" not in html and "unmeasurable" in html
    # without --json the verdict follows the summary on stdout
    p = gpuvet("run", "--profile", "quick", "--bench", "gemm", "--accept")
    assert p.returncode == 3
    assert p.stdout.index("UNMEASURABLE") > p.stdout.index("gemm")


@pytest.mark.parametrize("policy", sorted((ROOT / "contrib" / "policies").glob("*.yaml")),
                         ids=lambda p: p.name)
def test_contrib_example_policies_parse_and_judge(gpuvet, policy):
    """contrib/policies/: examples a user copies; each parses and judges a real capture."""
    gpuvet("accept", "--show-policy", "--policy", policy, check=0)
    gpuvet("results", "import", FIXTURES / "gpu" / "h100-2026-11-22" / "standard-profile.json", check=0)
    p = gpuvet("accept", "--policy", policy, "--json", check=None)
    assert p.returncode in (0, 1, 3), p.stderr
    assert json.loads(p.stdout)["policy"] == policy.stem
