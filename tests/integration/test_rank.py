"""gpuvet rank on runs stored through `gpuvet results import` (the fingerprint format of
README.md) and prices imported with `gpuvet prices import`: answers worked out by hand."""
import json
import re
import uuid

import pytest

PRICES = (
    "provider,instance_type,region,gpu_model,gpu_count,market,price,unit,currency,captured_at\n"
    "test,big,us-east-1,H100-SXM,8,on_demand,10,hour,USD,2026-11-01\n"
    "test,small,,A10G,1,on_demand,1,hour,USD,2026-11-01\n"
    "test,monthly,,L4,1,on_demand,1460,month,USD,2026-11-01\n"
)


def fingerprint(itype, region, gpus, metrics, flags=()):
    return {
        "schema": "gpuvet.fingerprint/1",
        "run": {"uuid": str(uuid.uuid4()), "status": "complete", "profile": "quick",
                "started_at": "2026-11-20T10:00:00Z", "finished_at": "2026-11-20T10:05:00Z",
                "provider": "test", "instance_type": itype, "region": region,
                "gpu_model": None, "gpu_count": gpus},
        # every bench a metric is stored under, listed (results import refuses a row under an unlisted bench)
        "benches": [{"name": b, "status": "ok", "reason": None, "duration_s": 1.0, "config": None}
                    for b in dict.fromkeys(["gemm"] + [m.split(".")[0] for m, _, _ in metrics])],
        "metrics": [{"bench": m.split(".")[0], "name": m, "gpu": -1, "value": v, "unit": u, "params": None}
                    for m, v, u in metrics],
        "samples": [],
        "flags": [{"code": c, "severity": "warning", "message": "seen", "evidence": {}} for c in flags],
        "verdicts": [],
    }


@pytest.fixture
def store(gpuvet, tmp_path):
    (tmp_path / "p.csv").write_text(PRICES)
    gpuvet("prices", "import", tmp_path / "p.csv", check=0)
    runs = [
        fingerprint("big", "us-east-1", 8, [("gemm.bf16.tflops", 800, "TFLOP/s"),
                                            ("allreduce.busbw.gbps", 100, "GB/s"),
                                            ("nvme.randread.p99_us", 90, "us")]),
        fingerprint("big", "us-east-1", 8, [("gemm.bf16.tflops", 1000, "TFLOP/s")], flags=["THROTTLE_POWER"]),
        fingerprint("big", "us-east-1", 8, [("gemm.bf16.tflops", 900, "TFLOP/s")]),
        fingerprint("small", "us-west-2", 1, [("gemm.bf16.tflops", 100, "TFLOP/s")]),
        fingerprint("small", "us-west-2", 1, [("gemm.bf16.tflops", 120, "TFLOP/s")]),
        fingerprint("monthly", "us-west-2", 1, [("gemm.bf16.tflops", 60, "TFLOP/s")]),
        fingerprint("unpriced", "us-west-2", 1, [("gemm.bf16.tflops", 5, "TFLOP/s")]),
    ]
    for i, fp in enumerate(runs):
        f = tmp_path / f"fp{i}.json"
        f.write_text(json.dumps(fp))
        # a type no price names is not in the catalog: stored as a custom machine (judge/identity.h)
        custom = ["--custom"] if fp["run"]["instance_type"] == "unpriced" else []
        gpuvet("results", "import", f, *custom, check=0)
    return gpuvet


def rows(r):
    return {x["instance_type"]: x for x in r["rows"]}


def test_rank_known_answers(store):
    r = store.json("rank", "--json")
    assert r["metric"] == "gemm.bf16.tflops" and r["unit"] == "TFLOP/s" and r["market"] == "on_demand"
    got = [(x["rank"], x["instance_type"], x["value"], round(x["value_per_dollar"], 9)) for x in r["rows"]]
    # small: median(100,120)=110 at 1 USD/h; big: median(800,1000,900)=900 at 10 USD/h;
    # monthly: 60 at 1460/730 = 2 USD/h
    assert got == [(1, "small", 110, 110), (2, "big", 900, 90), (3, "monthly", 60, 30)]
    big = rows(r)["big"]
    assert big["runs"] == 3 and big["flags"] == ["THROTTLE_POWER"] and big["estimate"] is False
    assert big["price_source"] == "import:p.csv" and big["currency"] == "USD"
    assert [u["instance_type"] for u in r["unpriced"]] == ["unpriced"]


def test_rank_table_has_units(store):
    p = store("rank", check=0)
    lines = p.stdout.splitlines()
    assert lines[0].split()[:3] == ["RANK", "PROVIDER", "INSTANCE"]
    assert lines[1].split()[:3] == ["1", "test", "small"]
    assert "gemm.bf16.tflops (TFLOP/s)" in p.stdout and "US dollar per instance-hour" in p.stdout
    assert "no on_demand price" in p.stdout


def test_rank_per_gpu_and_region(store):
    big = rows(store.json("rank", "--per", "gpu", "--json"))["big"]
    assert (big["value"], big["price_per_hour"], big["value_per_dollar"]) == (112.5, 1.25, 90)
    r = store.json("rank", "--region", "us-east-1", "--json")
    assert [x["instance_type"] for x in r["rows"]] == ["big"]


def test_rank_training_score(store):
    r = store.json("rank", "--metric", "score.training", "--json")
    assert r["weights"] == {"gemm.bf16.tflops": 1.0, "allreduce.busbw.gbps": 1.0}
    assert r["units"] == {"gemm.bf16.tflops": 1000.0, "allreduce.busbw.gbps": 400.0}
    got = rows(r)
    # fixed units (docs/ranking.md): big 900/1000 and 100/400; small one GPU: all-reduce does not apply
    assert got["big"]["value"] == pytest.approx((0.9 + 0.25) / 2)
    assert got["big"]["value_per_dollar"] == pytest.approx(0.0575)
    assert got["small"]["value"] == pytest.approx(0.11) and got["small"]["missing"] == []
    assert got["small"]["not_applicable"] == ["allreduce.busbw.gbps"]
    assert r["rows"][0]["instance_type"] == "small"
    # the same number with the table cut to one row
    alone = store.json("rank", "--metric", "score.training", "--region", "us-east-1", "--json")
    assert rows(alone)["big"]["value"] == got["big"]["value"]


def test_rank_refuses_what_it_cannot_rank(store):
    for args, what in [(["--metric", "nvme.randread.p99_us"], "not a throughput"),
                       (["--metric", "score.fun"], "unknown score"),
                       (["--metric", "objstore.get.gbps"], "no stored run has metric"),
                       (["--market", "cheap"], "--market"),
                       (["--per", "node"], "--per")]:
        p = store("rank", *args)
        assert p.returncode == 2, args
        assert p.stderr.startswith("gpuvet: ") and what in p.stderr and len(p.stderr.splitlines()) == 1


def test_rank_empty_store_suggests_estimates(gpuvet):
    p = gpuvet("rank")
    assert p.returncode == 2 and "--estimates" in p.stderr
    r = gpuvet.json("rank", "--estimates", "--json")
    # estimates come only from the reference GPU table: every row says so
    assert all(x["estimate"] is True and x["runs"] == 0 for x in r["rows"])


def test_rank_converts_currency_with_stored_rate(store, tmp_path):
    (tmp_path / "cny.csv").write_text(
        "provider,instance_type,region,gpu_model,gpu_count,market,price,unit,currency,captured_at\n"
        "test,yuan,,A10,1,on_demand,10,hour,CNY,2026-11-01\n")
    store("prices", "fx", "CNY", "0.125", "--date", "2026-11-01", "--source", "test rate", check=0)
    store("prices", "import", tmp_path / "cny.csv", check=0)
    f = tmp_path / "fpy.json"
    f.write_text(json.dumps(fingerprint("yuan", "cn-hangzhou", 1, [("gemm.bf16.tflops", 50, "TFLOP/s")])))
    store("results", "import", f, check=0)
    y = rows(store.json("rank", "--json"))["yuan"]
    # 10 CNY/h x 0.125 USD/CNY = 1.25 USD/h; 50 / 1.25 = 40
    assert (y["price_per_hour"], y["currency"], y["value_per_dollar"]) == (1.25, "USD", 40)


def test_rank_table_names_each_rows_price_source_and_capture_date(store, tmp_path):
    """Issue 35: `rank` names the price source it used, in the table as in the JSON."""
    # a later import of one key wins: `small` is now priced by deal.csv, captured later
    (tmp_path / "deal.csv").write_text(
        "provider,instance_type,region,gpu_model,gpu_count,market,price,unit,currency,captured_at\n"
        "test,small,,A10G,1,on_demand,0.9,hour,USD,2026-11-20\n")
    store("prices", "import", tmp_path / "deal.csv", check=0)
    r = store.json("rank", "--json")
    src = {x["instance_type"]: (x["price_source"], x["price_captured_at"]) for x in r["rows"]}
    assert src["small"] == ("import:deal.csv", "2026-11-20") and src["big"] == ("import:p.csv", "2026-11-01")
    out = store("rank", check=0).stdout
    lines = out.splitlines()
    assert "(on_demand prices)" in out, "the market named under the table, not a row's last string"
    head = lines[0].split()
    assert "SRC" in head and head.index("SRC") == head.index("$/h") + 1
    legend = {m.group(1): m.group(2) for m in (re.match(r"^  (\[\d+\]) (.*)$", ln) for ln in lines) if m}
    want = {"small": "import:deal.csv, captured 2026-11-20", "big": "import:p.csv, captured 2026-11-01",
            "monthly": "import:p.csv, captured 2026-11-01"}
    for itype, text in want.items():
        row = next(ln for ln in lines if re.match(rf"^\d+\s+test\s+{itype}\s", ln))
        tag = re.search(r" \d+\.\d{4} (\[\d+\]) ", row).group(1)   # right after the price
        assert legend[tag] == text, (itype, row)
    assert len(legend) == 2, "one line per source and capture date, however many rows use it"
    assert lines[lines.index("SRC: where each row's price comes from:") - 1] == ""
