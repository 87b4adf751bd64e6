"""Issue 34, a gate that cannot be fooled: the six ways a hostile user got exit 0 for a machine
that must be rejected, each now ending in REJECT (exit 1), UNMEASURABLE (exit 3) or a refused
import (exit 2); the migration of a version-5 store's verdicts; and a metamorphic test over every
real capture under tests/fixtures/gpu/: each degraded in each way is never accepted by the
default policy.  The captures are read, never edited: every degraded copy is made here."""
import copy
import json
import sqlite3
import uuid
from pathlib import Path

import pytest

from conftest import FIXTURES

GPU = FIXTURES / "gpu"
Q = GPU / "h100-2026-11-22" / "quick-profile.json"
SMOKE = "name: smoke\nrules:\n  - metric: gemm.bf16.tflops\n    gpu: each\n    min: 100\n"


def fresh(src=Q):
    """A real capture with a fresh uuid and no verdicts of its own."""
    fp = json.loads(Path(src).read_text())
    fp["run"]["uuid"] = str(uuid.uuid4())
    fp["verdicts"] = []
    return fp


def put(gpuvet, tmp_path, fp, check=0):
    path = tmp_path / f"{fp['run']['uuid']}.json"
    path.write_text(json.dumps(fp))
    gpuvet("results", "import", path, check=check)
    return fp["run"]["uuid"]


def scale(fp, names, factor):
    """The rates scaled, as a slower machine measures them; their percentages left to gpuvet (issue 57)."""
    for m in fp["metrics"]:
        if m["name"] in names and m["value"] is not None:
            m["value"] *= factor
    fp["metrics"] = [m for m in fp["metrics"] if ".pct_of_" not in m["name"] or m["name"] in names]
    return fp


# ---- the six reproductions ----

def add_sdc(fp):
    fp["metrics"] = [m for m in fp["metrics"] if m["name"] != "soak.sdc.mismatches"]
    fp["metrics"].append({"bench": "soak", "name": "soak.sdc.mismatches", "gpu": 0, "value": 5, "unit": "count",
                          "params": {}})
    if "soak" not in [b["name"] for b in fp["benches"]]:   # a row is stored only under a bench the run lists
        fp["benches"].append({"name": "soak", "status": "ok", "reason": None, "duration_s": 30.0, "config": {}})
    return fp


def test_1_a_gpu_that_computed_wrong_results_is_rejected(gpuvet, tmp_path):
    u = put(gpuvet, tmp_path, add_sdc(fresh()))
    p = gpuvet("accept", "--run", u, check=1)
    assert "REJECT" in p.stdout and "FAIL  flag DATA_CORRUPTION (critical)" in p.stdout
    assert "fail closed" in p.stdout
    report = tmp_path / "r.html"
    gpuvet("report", "--run", u, "-o", report, check=0)
    text = report.read_text()
    assert "Reject" in text and "Healthy" not in text.split('id="verdict"')[1][:400]


def test_6_the_report_never_says_healthy_beside_a_tolerated_critical_flag(gpuvet, tmp_path):
    u = put(gpuvet, tmp_path, add_sdc(fresh()))
    lab = tmp_path / "lab.yaml"
    lab.write_text(SMOKE.replace("smoke", "lab") +
                   "tolerate_flags:\n  - {code: DATA_CORRUPTION, reason: we test the sdc detector here}\n")
    p = gpuvet("accept", "--run", u, "--policy", lab, check=0)
    assert "accepted despite DATA_CORRUPTION (tolerated by lab: we test the sdc detector here)" in p.stdout
    assert "TOLERATED  flag DATA_CORRUPTION (critical) on gpu 0" in p.stdout
    res = json.loads(gpuvet("accept", "--run", u, "--policy", lab, "--json", check=0).stdout)
    assert [t["flag"] for t in res["tolerated"]] == ["DATA_CORRUPTION"]
    report = tmp_path / "r.html"
    # the page judged by the policy that tolerated it (issue 48 item 2: one policy per page)
    gpuvet("report", "--run", u, "-o", report, "--policy", lab, check=0)
    text = report.read_text()
    head = text.split('id="verdict"')[1][:400]
    assert "Accepted despite a critical flag" in head and "Healthy" not in head
    # by the built-in policy, which recorded no verdict on it: a preview that rejects, never "accepted"
    gpuvet("report", "--run", u, "-o", report, check=0)
    head = report.read_text().split('id="verdict"')[1][:400]
    assert "Would be rejected" in head and "Healthy" not in head and "ccepted" not in head
    assert "accepted despite DATA_CORRUPTION (tolerated by lab: we test the sdc detector here)" in text
    assert res["policy_digest"] in text and "lab.yaml" in text


def fail_gemm(fp):
    fp["metrics"] = [m for m in fp["metrics"] if not m["name"].startswith(("gemm.bf16", "gemm.fp8"))]
    fp["samples"] = [s for s in fp["samples"] if "bf16" not in s["series"] and "fp8" not in s["series"]]
    for b in fp["benches"]:
        if b["name"] == "gemm":
            b["status"], b["reason"] = "failed", "bf16 result differs from the fp64 reference"
    return fp


def test_2_a_failed_bench_is_not_judged_on_its_fallback(gpuvet, tmp_path):
    u = put(gpuvet, tmp_path, fail_gemm(fresh()))
    p = gpuvet("accept", "--run", u, check=1)
    assert "FAIL  gemm.bf16.tflops (gpu 0): bench gemm failed: bf16 result differs" in p.stdout
    res = gpuvet("accept", "--run", u, "--json", check=1)
    res = json.loads(res.stdout)
    assert not any(c.get("metric") == "gemm.fp16.tflops" for c in res["passed"])


H2D = ("memcpy.h2d.pinned.gbps", "memcpy.h2d.pct_of_link")


def test_3_the_fleet_baseline_cannot_be_poisoned_by_another_policy(gpuvet, tmp_path):
    good = [put(gpuvet, tmp_path, fresh()) for _ in range(3)]
    for u in good:
        gpuvet("accept", "--run", u, check=0)
    victim = put(gpuvet, tmp_path, scale(fresh(), H2D, 0.81))
    assert "fleet: median" in gpuvet("accept", "--run", victim, check=1).stdout
    smoke = tmp_path / "smoke.yaml"
    smoke.write_text(SMOKE)
    for _ in range(5):
        u = put(gpuvet, tmp_path, scale(fresh(), H2D, 0.81))
        gpuvet("accept", "--run", u, "--policy", smoke, check=0)
    p = gpuvet("accept", "--run", victim, check=1)
    assert "memcpy.h2d.pinned.gbps" in p.stdout
    # the baseline is named, run by run: the three runs the default accepted
    res = json.loads(gpuvet("accept", "--run", victim, "--json", check=1).stdout)
    base = [b["uuid"] for f in res["fleet"] if f["metric"] == "memcpy.h2d.pinned.gbps" for b in f["baseline_runs"]]
    assert sorted(base) == sorted(good)
    assert "fleet baseline for memcpy.h2d.pinned.gbps (instance): runs" in p.stdout


def test_4_a_policy_file_cannot_take_the_builtin_name(gpuvet, tmp_path):
    u = put(gpuvet, tmp_path, scale(fresh(), ("gemm.bf16.tflops",), 0.55))
    gpuvet("accept", "--run", u, check=1)
    shown = gpuvet("accept", "--show-policy", check=0).stdout
    edited = tmp_path / "default.yaml"
    edited.write_text(shown.replace("min_fraction_of_reference: 0.75", "min_fraction_of_reference: 0.5"))
    p = gpuvet("accept", "--run", u, "--policy", edited, check=2)
    assert "'name' default is the built-in policy's" in p.stderr and "line" in p.stderr
    # an unedited copy is the built-in: the same digest, so the same verdict, not a second one
    same = tmp_path / "copy.yaml"
    same.write_text(shown)
    gpuvet("accept", "--run", u, "--policy", same, check=1)
    v = gpuvet.json("results", "show", u)["verdicts"]
    assert len(v) == 1 and v[0]["verdict"] == "reject" and v[0]["policy_digest"].startswith("sha256:")
    text = gpuvet("accept", "--run", u, check=1).stdout
    assert "policy default (built-in, sha256:" in text


def test_5_imported_verdicts_are_history_and_count_for_nothing(gpuvet, tmp_path):
    good = [put(gpuvet, tmp_path, fresh()) for _ in range(3)]
    for u in good:
        gpuvet("accept", "--run", u, check=0)
    digest = json.loads(gpuvet("accept", "--run", good[0], "--json", check=0).stdout)["policy_digest"]
    carried = {"verdict": "accept", "policy": "default", "at": "2026-11-22T22:00:00Z", "policy_digest": digest,
               "detail": {"verdict": "accept", "failed": [], "unmeasurable": [], "passed": [], "notes": []}}
    victim = fresh()
    scale(victim, ("gemm.bf16.tflops",), 0.55)
    victim["verdicts"] = [carried]
    u = put(gpuvet, tmp_path, victim)
    v = gpuvet.json("results", "show", u)["verdicts"]
    assert len(v) == 1 and v[0]["imported"] is True
    report = tmp_path / "r.html"
    gpuvet("report", "--run", u, "-o", report, check=0)
    head = report.read_text().split('id="verdict"')[1][:400]
    assert "accepted" not in head and "not judged" in head
    gpuvet("accept", "--run", u, check=1)
    # five low runs carrying accepts of the same digest: not a fleet
    for _ in range(5):
        fp = scale(fresh(), H2D, 0.81)
        fp["verdicts"] = [carried]
        put(gpuvet, tmp_path, fp)
    low = put(gpuvet, tmp_path, scale(fresh(), H2D, 0.81))
    gpuvet("accept", "--run", low, check=1)


def thin(fp, keep):
    """The soak's clock-event and pcie samples with all but `keep` readings nulled."""
    for s in fp["samples"]:
        if s["series"] in ("soak.clock_events.mask", "soak.pcie.gen"):
            s["points"] = [[x, y if i < keep else None] for i, (x, y) in enumerate(s["points"])]
    return fp


@pytest.mark.parametrize("keep", [1, 0])
def test_6_thin_evidence_is_not_measured(gpuvet, tmp_path, keep):
    u = put(gpuvet, tmp_path, thin(fresh(), keep))
    p = gpuvet("accept", "--run", u, check=3)
    assert "NOT MEASURED  flag THROTTLE_THERMAL" in p.stdout and "90%" in p.stdout


def test_6_points_removed_are_not_measured(gpuvet, tmp_path):
    fp = fresh()
    for s in fp["samples"]:
        if s["series"] == "soak.clock_events.mask":
            s["points"] = s["points"][:1]
    gpuvet("accept", "--run", put(gpuvet, tmp_path, fp), check=3)
    # a soak that declares 2 s, with its 2 readings: too short to say the GPU did not throttle
    fp = fresh()
    for s in fp["samples"]:
        if s["bench"] == "soak":
            s["points"] = s["points"][:2]
    next(b for b in fp["benches"] if b["name"] == "soak")["config"]["duration_s"] = 2
    gpuvet("accept", "--run", put(gpuvet, tmp_path, fp), check=3)


def good_first(fp, degraded):
    """degraded with the good rows of fp put back in front of the bad ones: two rows of one metric."""
    bad = [m for m in degraded["metrics"] if m not in fp["metrics"]]
    degraded["metrics"] = [copy.deepcopy(m) for m in fp["metrics"] if any(
        (m["bench"], m["name"], m["gpu"]) == (b["bench"], b["name"], b["gpu"]) for b in bad)] + degraded["metrics"]
    return degraded


def test_6_a_duplicate_row_cannot_hide_a_bad_one(gpuvet, tmp_path):
    clean = fresh()
    low = good_first(clean, scale(copy.deepcopy(clean), ("gemm.bf16.tflops",), 0.55))
    assert sum(m["name"] == "gemm.bf16.tflops" and m["gpu"] == 0 for m in low["metrics"]) == 2
    p = gpuvet("accept", "--run", put(gpuvet, tmp_path, low), check=1)
    assert "FAIL  gemm.bf16.tflops (gpu 0)" in p.stdout and "judged at its worst row" in p.stdout
    sdc = add_sdc(fresh())   # a clean count first, the mismatches after it
    sdc["metrics"].insert(0, dict(sdc["metrics"][-1], value=0))
    p = gpuvet("accept", "--run", put(gpuvet, tmp_path, sdc), check=1)
    assert "FAIL  flag DATA_CORRUPTION" in p.stdout


def test_6_a_wrong_gpu_count_is_refused(gpuvet, tmp_path):
    fp = fresh()
    fp["run"]["gpu_count"] = 8
    path = tmp_path / "gc.json"
    path.write_text(json.dumps(fp))
    p = gpuvet("results", "import", path, check=2)
    assert "run.gpu_count 8 disagrees with the inventory's 1 gpu(s)" in p.stderr
    assert gpuvet("results", "list", check=0).stdout.strip() == "no runs in the store"


# ---- the store's schema: version 5 verdicts migrate ----

V5_VERDICTS = ("CREATE TABLE verdicts (id INTEGER PRIMARY KEY,"
               " run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
               " verdict TEXT NOT NULL CHECK (verdict IN ('accept','reject','unmeasurable')),"
               " policy TEXT NOT NULL, detail TEXT, at TEXT NOT NULL, UNIQUE (run_id, policy))")


def test_a_version_5_store_migrates_and_its_verdicts_count_for_nothing(gpuvet, tmp_path):
    runs = [put(gpuvet, tmp_path, fresh()) for _ in range(3)]
    victim = put(gpuvet, tmp_path, scale(fresh(), H2D, 0.81))
    # the store as gpuvet 5 left it: verdicts by policy name, three low runs accepted
    db = sqlite3.connect(gpuvet.db)
    db.executescript("DROP TABLE verdicts;" + V5_VERDICTS + ";")
    ids = [r[0] for r in db.execute("SELECT id FROM runs ORDER BY id")]
    for i in ids[:3]:
        db.execute("INSERT INTO verdicts (run_id, verdict, policy, detail, at) VALUES (?,?,?,?,?)",
                   (i, "accept", "default", "{}", "2026-11-20T00:00:00Z"))
    db.execute("PRAGMA user_version = 5")
    db.commit()
    db.close()
    old = [{"verdict": "accept", "policy": "default", "at": "2026-11-20T00:00:00Z", "detail": {},
            "policy_digest": "", "policy_source": None, "imported": False}]
    assert gpuvet.json("results", "show", runs[0])["verdicts"] == old   # read-only: read as version 5
    # the old accepts name no policy text: they count for nothing themselves, and (issue 52) the first
    # judging command judges those runs again with this built-in, so the fleet is theirs again
    p = gpuvet("accept", "--run", victim, "--json", check=1)
    res = json.loads(p.stdout)
    assert {b["uuid"] for f in res["fleet"] for b in f["baseline_runs"]} == set(runs)
    assert "fleet baseline is rebuilt" in p.stderr
    db = sqlite3.connect(gpuvet.db)
    assert db.execute("PRAGMA user_version").fetchone()[0] == 10
    assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    db.close()
    assert gpuvet.json("results", "show", runs[0])["verdicts"][0] == old[0]   # migrated, kept
    gpuvet("accept", "--run", victim, check=1)


# ---- metamorphic: every real capture, degraded every way, is never accepted ----

def captures():
    out = []
    for p in sorted(GPU.rglob("*.json")):
        j = json.loads(p.read_text())
        if isinstance(j, dict) and "metrics" in j and "run" in j:
            out.append(p)
    return out


def null_value(fp):
    for m in fp["metrics"]:
        if m["name"] == "gemm.bf16.tflops":
            m["value"] = None
    return fp


DEGRADE = {
    "critical_flag": add_sdc,
    "bench_failed": fail_gemm,
    "value_nulled": null_value,
    "samples_thinned": lambda fp: thin(fp, 1),
}


@pytest.mark.parametrize("src", captures(), ids=lambda p: str(p.relative_to(GPU)))
def test_metamorphic_no_degraded_capture_is_accepted(gpuvet, tmp_path, src):
    for how, degrade in DEGRADE.items():
        fp = degrade(fresh(src))
        p = gpuvet("accept", "--run", put(gpuvet, tmp_path, fp))
        assert p.returncode in (1, 3), (how, p.returncode, p.stdout)
    # a duplicated row: the good one put back in front of a bad one is judged at the worst
    clean = fresh(src)
    for how, fp in (("dup_low_gemm", good_first(clean, scale(copy.deepcopy(clean), ("gemm.bf16.tflops",), 0.55))),
                    ("dup_sdc", add_sdc(fresh(src)))):
        if how == "dup_sdc":
            fp["metrics"].insert(0, dict(fp["metrics"][-1], value=0))
        p = gpuvet("accept", "--run", put(gpuvet, tmp_path, fp))
        assert p.returncode in (1, 3), (how, p.returncode, p.stdout)
    # a fleet padded by another policy: three clean copies judged by the default, five low ones by smoke
    base = [put(gpuvet, tmp_path, fresh(src)) for _ in range(3)]
    accepted = [gpuvet("accept", "--run", u).returncode == 0 for u in base]
    smoke = tmp_path / "smoke.yaml"
    smoke.write_text(SMOKE)
    for _ in range(5):
        gpuvet("accept", "--run", put(gpuvet, tmp_path, scale(fresh(src), H2D, 0.81)), "--policy", smoke)
    victim = put(gpuvet, tmp_path, scale(fresh(src), H2D, 0.81))
    p = gpuvet("accept", "--run", victim)
    if all(accepted):   # a baseline of three: the low copy is under 0.9 of it
        assert p.returncode == 1, p.stdout
    else:               # no baseline of this capture: the low copy is at least not judged on smoke's
        res = json.loads(gpuvet("accept", "--run", victim, "--json").stdout)
        assert all(len(f["baseline_runs"]) == sum(accepted) for f in res["fleet"])


def test_two_texts_of_one_policy_name_keep_two_verdicts_and_export_the_latest(gpuvet, tmp_path):
    u = put(gpuvet, tmp_path, fresh())
    lo, hi = tmp_path / "lo.yaml", tmp_path / "hi.yaml"
    lo.write_text(SMOKE)
    hi.write_text(SMOKE.replace("min: 100", "min: 5000"))
    gpuvet("accept", "--run", u, "--policy", lo, check=0)
    gpuvet("accept", "--run", u, "--policy", hi, check=1)
    v = gpuvet.json("results", "show", u)["verdicts"]
    assert [(x["policy"], x["verdict"]) for x in v] == [("smoke", "accept"), ("smoke", "reject")]
    assert v[0]["policy_digest"] != v[1]["policy_digest"]
    prom = gpuvet("results", "export", "--format", "prometheus", check=0).stdout
    accepted = [line for line in prom.splitlines() if line.startswith("gpuvet_accepted{")]
    assert len(accepted) == 1 and accepted[0].endswith(" 0"), accepted
