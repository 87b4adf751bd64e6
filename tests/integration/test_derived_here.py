"""Issue 57, "raw in, derived here": a fingerprint no longer carries conclusions gpuvet believes.
Each case is a real capture of tests/fixtures/gpu/ edited as a hostile or a careless file would be,
imported and judged through the real binary; on c4fdb45 each was accepted (exit 0) or imported.

- P1: gemm's config.timing removed takes the run out of its fleet no more (the class is the rows').
- P2: a copy of the soak's clock-event series under another bench is refused at import.
- P3: soak coverage counts the soak's measured length, not the config's declared one.
- P4: a GPU gpuvet cannot resolve makes every reference rule not measured; a name its memory
  contradicts is refused.
- P5: a derived percentage a file states otherwise is refused, naming the field and both values;
  one left out is derived from the rate.
- P8 and P11 are at the end: prices cannot re-declare the catalog; rates beyond physics are refused."""
import copy
import json
import uuid

from conftest import FIXTURES

GPU = FIXTURES / "gpu"
INFERENCE = FIXTURES.parent.parent / "contrib" / "policies" / "inference-single-gpu.yaml"


def load(rel):
    fp = json.loads((GPU / rel).read_text())
    fp["run"]["uuid"] = str(uuid.uuid4())
    fp["run"].pop("id", None)
    fp["verdicts"] = []
    return fp


def scale(fp, names, f):
    for m in fp["metrics"]:
        if m["name"] in names and m["value"] is not None:
            m["value"] *= f


def put(gpuvet, tmp_path, fp, check=None):
    p = tmp_path / f"{fp['run']['uuid']}.json"
    p.write_text(json.dumps(fp))
    return gpuvet("results", "import", p, check=check)


def bench(fp, name):
    return next(b for b in fp["benches"] if b["name"] == name)


def test_p1_a_run_without_its_timing_claim_stays_in_its_fleet(gpuvet, tmp_path):
    policy = tmp_path / "fleet.yaml"
    policy.write_text("name: fleet\nrules:\n  - metric: gemm.bf16.tflops\n    gpu: each\n    min_fraction_of_fleet: 0.9\n")
    for i in (1, 2, 3):
        put(gpuvet, tmp_path, load(f"h100-2026-11-26/2-final/standard-{i}.json"), check=0)
        gpuvet("accept", "--policy", policy, check=0)
    low = load("h100-2026-11-26/2-final/standard-1.json")
    scale(low, {"gemm.bf16.tflops", "gemm.bf16.pct_of_peak"}, 0.85)   # 0.85 of the fleet's median
    del bench(low, "gemm")["config"]["timing"]
    put(gpuvet, tmp_path, low, check=0)
    r = gpuvet("accept", "--policy", policy, "--json")
    assert r.returncode == 1, r.stdout + r.stderr
    assert json.loads(r.stdout)["failed"][0]["kind"] == "fleet"
    # a claim the rows contradict is refused
    burst = load("h100-2026-11-26/2-final/standard-2.json")
    for m in burst["metrics"]:
        if m["name"].startswith("gemm.") and m["name"].endswith(".tflops"):
            m["params"].pop("settled_by", None)
            m["params"]["median_ms"] = 1.6
    bench(burst, "gemm")["config"]["timing"] = "steady"
    r = put(gpuvet, tmp_path, burst, check=2)
    assert "config.timing is 'steady' in the file; gpuvet derives 'burst'" in r.stderr


def test_p2_a_series_under_another_bench_is_refused(gpuvet, tmp_path):
    fp = load("h100-2026-11-22/standard-profile.json")
    mask = next(s for s in fp["samples"] if s["series"] == "soak.clock_events.mask")
    clean = copy.deepcopy(mask)
    for p in mask["points"]:
        p[1] = float(int(p[1]) | 0x8)   # hardware slowdown every second
    for host in ("gemm", "harness", "memcpy"):
        moved = copy.deepcopy(fp)
        moved["run"]["uuid"] = str(uuid.uuid4())
        moved["samples"].append(dict(clean, bench=host))
        r = put(gpuvet, tmp_path, moved, check=2)
        assert f"'soak.clock_events.mask' is under bench '{host}'; bench 'soak' declares it" in r.stderr
    put(gpuvet, tmp_path, fp, check=0)
    r = gpuvet("accept")
    assert r.returncode == 1 and "THROTTLE_HW" in r.stdout, r.stdout


def test_p3_coverage_counts_the_soak_the_bench_ran(gpuvet, tmp_path):
    fp = load("h100-2026-11-22/quick-profile.json")
    for s in fp["samples"]:
        if s["bench"] == "soak":
            s["points"] = s["points"][:10]   # 10 readings of a 30 s soak
    del bench(fp, "soak")["config"]["duration_s"]
    put(gpuvet, tmp_path, fp, check=0)
    r = gpuvet("accept", "--json")
    assert r.returncode == 3, r.stdout + r.stderr
    assert any("90% of its seconds" in (u.get("reason") or "") for u in json.loads(r.stdout)["unmeasurable"])


def degraded_h100(frac):
    fp = load("h100-2026-11-25/fidelity-2/quick-all.json")
    scale(fp, {"gemm.bf16.tflops", "gemm.fp16.tflops", "gemm.bf16.pct_of_peak", "gemm.fp16.pct_of_peak"}, frac)
    return fp


def test_p4_a_device_gpuvet_cannot_resolve_is_not_measured(gpuvet, tmp_path):
    put(gpuvet, tmp_path, degraded_h100(0.2), check=0)
    assert gpuvet("accept", "--policy", INFERENCE).returncode == 1
    for how in ("missing", "null"):
        fp = degraded_h100(0.2)
        gpu = fp["inventory"]["gpus"][0]
        gpu.pop("reference_model")
        if how == "missing":
            gpu.pop("name")
        else:
            gpu["name"] = None
        put(gpuvet, tmp_path, fp, check=0)
        r = gpuvet("accept", "--policy", INFERENCE, "--json")
        assert r.returncode == 3, r.stdout + r.stderr
        why = json.loads(r.stdout)["unmeasurable"][0]["reason"]
        assert "resolves to no model gpuvet knows" in why


def test_p4_a_name_its_memory_contradicts_is_refused(gpuvet, tmp_path):
    fp = load("h100-2026-11-25/fidelity-2/quick-all.json")
    gpu = fp["inventory"]["gpus"][0]
    gpu["name"], gpu["reference_model"], fp["run"]["gpu_model"] = "NVIDIA L4", "L4", "L4"
    for m in fp["metrics"]:
        if m["name"].endswith(".pct_of_peak"):
            m["value"] = None
    r = put(gpuvet, tmp_path, fp, check=2)
    assert "'NVIDIA L4' reads as model L4 (24 GB), but the device has 79.6 GiB" in r.stderr
    # and a pci device id of another model
    fp = load("h100-2026-11-25/fidelity-2/quick-all.json")
    fp["inventory"]["gpus"][0]["pci_device_id"] = "0x233510DE"   # an H200's
    r = put(gpuvet, tmp_path, fp, check=2)
    assert "pci device id 0x2335 is H200" in r.stderr


def test_p5_a_derived_percentage_is_never_the_files(gpuvet, tmp_path):
    fp = load("h100-2026-11-25/fidelity-2/quick-all.json")
    scale(fp, {"memcpy.h2d.pinned.gbps"}, 0.3)   # pct_of_link left at 73 %
    r = put(gpuvet, tmp_path, fp, check=2)
    assert "memcpy.h2d.pct_of_link of gpu 0 is 73.1546 in the file; gpuvet derives 21.9464" in r.stderr
    fp = load("h100-2026-11-25/fidelity-2/quick-all.json")
    scale(fp, {"gemm.bf16.tflops"}, 0.33)   # pct_of_peak left at 70.7
    r = put(gpuvet, tmp_path, fp, check=2)
    assert "gemm.bf16.pct_of_peak of the instance is 70.73" in r.stderr, r.stderr
    # the percentages left out: gpuvet derives them, and judges on them
    for m in fp["metrics"]:
        if ".pct_of_" in m["name"]:
            m["value"] = None
    scale(fp, {"memcpy.h2d.pinned.gbps"}, 0.3)
    put(gpuvet, tmp_path, fp, check=0)
    site = tmp_path / "site.yaml"
    site.write_text("name: site\nrules:\n  - metric: gemm.bf16.pct_of_peak\n    min: 60\n")
    r = gpuvet("accept", "--policy", site, "--json")
    assert r.returncode == 1, r.stdout
    failed = json.loads(r.stdout)["failed"][0]
    assert failed["metric"] == "gemm.bf16.pct_of_peak" and abs(failed["value"] - 23.3) < 0.1
    r = gpuvet("accept", "--json")
    assert r.returncode == 1
    assert any(f.get("metric") == "memcpy.h2d.pct_of_link" for f in json.loads(r.stdout)["failed"])
    shown = gpuvet.json("results", "show")
    pct = [m for m in shown["metrics"] if m["name"] == "memcpy.h2d.pct_of_link" and m["gpu"] == 0]
    assert len(pct) == 1 and pct[0]["params"]["of"] == "memcpy.h2d.pinned.gbps"


PRICES = "provider,instance_type,region,gpu_model,gpu_count,market,price,unit,currency,captured_at\n"


def test_p8_a_price_cannot_redeclare_a_catalogued_types_gpus(gpuvet, tmp_path):
    f = tmp_path / "prices.csv"
    f.write_text(PRICES + "aws,p5.4xlarge,us-east-1,H200,8,on_demand,6.88,hour,USD,2026-11-20\n")
    r = gpuvet("prices", "import", f, check=2)
    assert "aws p5.4xlarge is 1 x H100-SXM in the shipped catalog; the file says 8 x H200" in r.stderr
    # its own name of the same model and count, or none, is taken
    f.write_text(PRICES + "aws,p5.4xlarge,us-east-1,H100-SXM,1,on_demand,6.88,hour,USD,2026-11-20\n"
                 "aws,p5.48xlarge,us-east-1,,,on_demand,55.04,hour,USD,2026-11-20\n")
    gpuvet("prices", "import", f, check=0)
    # a type the catalog does not know is said by name, with the letters that differ
    f.write_text(PRICES + "aws,p5.4xIarge,us-east-1,H100-SXM,1,on_demand,6.88,hour,USD,2026-11-20\n")
    r = gpuvet("prices", "import", f, check=0)
    assert "aws p5.4xIarge is no instance type of the shipped aws catalog (did you mean p5.4xlarge; 'I' for 'l'?)" \
        in r.stderr


def test_p11_rates_beyond_physics_are_refused_and_a_zero_gemm_is_not_priced(gpuvet, tmp_path):
    fp = load("h100-2026-11-25/fidelity-2/quick-all.json")
    for m in fp["metrics"]:
        if m["name"] in ("memcpy.d2d.gbps", "ingest.gbps", "allreduce.algbw.gbps"):
            m["value"] = 1e200
    r = put(gpuvet, tmp_path, fp, check=2)
    assert "is outside its physical bounds" in r.stderr
    for v in (0.0, 1e-300):
        fp = load("h100-2026-11-25/fidelity-2/quick-all.json")
        fp["run"].update(provider="aws", instance_type="p5.4xlarge", region="us-east-1")
        for m in fp["metrics"]:
            if m["name"].startswith("gemm.") and m["name"].endswith(".tflops"):
                m["value"] = v
        fp["metrics"] = [m for m in fp["metrics"] if ".pct_of_" not in m["name"]]
        put(gpuvet, tmp_path, fp, check=0)
        out = gpuvet("cost", "--model", "llama-3.1-8b", "--task", "infer", "--json", check=0).stdout
        row = next(x for x in json.loads(out)["rows"] if x["instance_type"] == "p5.4xlarge")
        assert "not measured: its GEMM rate is" in json.dumps(row), row
        gpuvet("results", "list", check=0)


# ---- the small ones of the same probe ----

def test_a_price_over_the_limit_is_said_in_full(gpuvet, tmp_path):
    f = tmp_path / "prices.csv"
    f.write_text(PRICES + "aws,p5.4xlarge,us-east-1,,,on_demand,1000001,hour,USD,2026-11-20\n")
    r = gpuvet("prices", "import", f, check=2)
    assert "price 1000001 per hour is not believable (over 1000000 per hour)" in r.stderr


def test_custom_equals_name_is_custom_name(gpuvet, tmp_path):
    fp = load("h100-2026-11-25/fidelity-2/quick-all.json")
    p = tmp_path / "run.json"
    p.write_text(json.dumps(fp))
    gpuvet("results", "import", p, "--custom=myh100", check=0)
    runs = json.loads(gpuvet("results", "list", "--json", check=0).stdout)
    assert [r["provider"] for r in runs] == ["custom:myh100"]


def test_import_of_a_directory_names_every_entry_it_skips(gpuvet, tmp_path):
    import os
    d = tmp_path / "captures"
    d.mkdir()
    fp = load("h100-2026-11-25/fidelity-2/quick-all.json")
    (d / "run.json").write_text(json.dumps(fp))
    os.mkfifo(d / "pipe")
    os.symlink("/dev/null", d / "null-link")
    os.symlink(d / "gone", d / "dangling")
    (d / ".hidden.json").write_text("{}")
    r = gpuvet("results", "import", d, check=0)
    for name, why in (("pipe", "a FIFO, not a file"), ("null-link", "a link to a device, not a file"),
                      ("dangling", "a link to nothing"), (".hidden.json", "a hidden entry")):
        assert f"{d / name}: skipped: {why}" in r.stdout, r.stdout
    assert "1 run(s) imported" in r.stdout


def test_the_report_shows_a_percentage_beside_the_rate_it_is_of(gpuvet, tmp_path):
    """The metrics table's "% of peak" matched by the percentage's companion (params.of), never by
    name prefix: the pageable copy (7.5 GB/s) is not shown at the pinned copy's 87.62 %."""
    import re
    put(gpuvet, tmp_path, load("h100-2026-11-22/standard-profile.json"), check=0)
    page = tmp_path / "r.html"
    gpuvet("report", "-o", page, check=0)
    html = page.read_text()
    rows = {m.group(1) + "@" + m.group(2): m.group(0)
            for m in re.finditer(r"<tr><td><code>(memcpy\.h2d\.p[a-z]+\.gbps)</code></td><td class=n>(\d+)</td>.*?</tr>",
                                 html)}
    assert "87.62" in rows["memcpy.h2d.pinned.gbps@0"], rows
    assert "87.6" not in rows["memcpy.h2d.pageable.gbps@0"], rows
