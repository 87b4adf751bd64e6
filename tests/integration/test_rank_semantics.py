"""Ranking semantics a user can trust (issue 14 item 2), on the real H100 captures of
tests/fixtures/gpu/h100-2026-11-22 (README there), named after the fact as an AWS p5.4xlarge
(one H100 SXM 80 GB, as captured) in us-east-1: measured rows first; estimates only on request,
scaled by what the same GPU model achieved in the stored runs or by the achievable reference,
never by the spec peak; runs with critical flags left out unless asked, and counted; on-demand
and spot per dollar side by side; every price in USD or the row marked with why not; quick and standard
runs never in one median, but one row per type: the sustained profile ranks, the others beside it
(issue 40 items 1 and 2)."""
import json
import sqlite3
import statistics

import pytest

from conftest import FIXTURES, Gpuvet

H100 = FIXTURES / "gpu" / "h100-2026-11-22"
QUICK = [H100 / "contention" / f"clean-{i}.json" for i in (1, 2, 3)] + [H100 / "quick-profile.json"]
STANDARD = [H100 / "standard-profile.json"]
CLEAN = QUICK + STANDARD
FLAGGED = [H100 / "contention" / f"loaded-{i}.json" for i in (1, 2, 3)]   # CONTENTION, critical
P5_4X = 6.88     # shipped AWS on-demand list price of p5.4xlarge (pricing/catalog/aws.csv)
H100_PEAK_BF16 = 989.4


def gemm(path):
    return next(m["value"] for m in json.loads(path.read_text())["metrics"]
                if m["name"] == "gemm.bf16.tflops" and m["gpu"] == -1)


@pytest.fixture
def store(gpuvet):
    gpuvet("results", "import", *CLEAN, *FLAGGED, "--provider", "aws", "--sku", "p5.4xlarge",
           "--region", "us-east-1", check=0)
    return gpuvet


def p5(rank):
    return next(r for r in rank["rows"] if r["instance_type"] == "p5.4xlarge")


def p5_quick(rank):
    """The quick profile's figures, beside the ranked (standard) row."""
    return next(o for o in p5(rank)["other_profiles"] if o["profile"] == "quick")


def test_critical_flags_are_left_out_by_default_and_counted(store):
    r = store.json("rank", "--json")
    row = p5_quick(r)
    assert row["runs"] == len(QUICK)
    assert row["value"] == pytest.approx(statistics.median(gemm(p) for p in QUICK))
    assert "CONTENTION" not in row["flags"]
    assert r["runs_left_out"] == len(FLAGGED) and "critical" in r["runs_left_out_reason"]
    # listed apart: which runs, and what they raised
    assert len(r["left_out"]) == len(FLAGGED)
    assert all(x["instance_type"] == "p5.4xlarge" and "CONTENTION" in x["flags"] for x in r["left_out"])
    p = store("rank", check=0)
    assert f"{len(FLAGGED)} run(s) with critical flags left out" in p.stdout
    r = store.json("rank", "--include-flagged", "--json")
    row = p5_quick(r)
    assert row["runs"] == len(QUICK) + len(FLAGGED) and r["runs_left_out"] == 0 and r["left_out"] == []
    assert row["value"] == pytest.approx(statistics.median(gemm(p) for p in QUICK + FLAGGED))
    assert "CONTENTION" in row["flags"]


def test_profiles_are_never_mixed_and_rows_show_runs_and_spread(store, tmp_path):
    rows = [r for r in store.json("rank", "--json")["rows"] if r["instance_type"] == "p5.4xlarge"]
    assert len(rows) == 1, "one row per instance type"
    std, quick = rows[0], p5_quick({"rows": rows})
    assert std["profile"] == "standard" and std["runs"] == 1 and std["value"] == pytest.approx(gemm(STANDARD[0]))
    assert std["spread"]["cv_pct"] == 0
    assert quick["runs"] == len(QUICK) and quick["value"] == pytest.approx(statistics.median(gemm(p) for p in QUICK))
    # the spread of the quick runs, where they are the only profile
    g = Gpuvet(tmp_path / "quick-only.db", store.env)
    g("results", "import", *QUICK, "--provider", "aws", "--sku", "p5.4xlarge", "--region", "us-east-1", check=0)
    only = p5(g.json("rank", "--json"))
    vals = [gemm(p) for p in QUICK]
    assert only["profile"] == "quick" and only["basis"] == "burst" and only["other_profiles"] == []
    assert only["spread"]["min"] == pytest.approx(min(vals)) and only["spread"]["max"] == pytest.approx(max(vals))
    assert only["spread"]["cv_pct"] == pytest.approx(100 * statistics.stdev(vals) / statistics.mean(vals))
    p = store("rank", check=0)
    assert "standard sustained" in p.stdout and "also quick (burst): 4 run(s)" in p.stdout


def test_estimates_are_off_by_default_and_ranked_with_the_measured_rows(store):
    assert all(not r["estimate"] for r in store.json("rank", "--json")["rows"])
    rows = store.json("rank", "--estimates", "--json")["rows"]
    est = [r["estimate"] for r in rows]
    assert False in est and sum(est) >= 5
    # one order, value per dollar (#58 item 10): rank 1 is the best row, whatever its basis
    vpd = [r["value_per_dollar"] for r in rows]
    assert vpd == sorted(vpd, reverse=True) and [r["rank"] for r in rows] == list(range(1, len(rows) + 1))


def test_estimates_scale_by_measured_model_else_reference_never_peak(store):
    rows = store.json("rank", "--estimates", "--json")["rows"]
    per_gpu = gemm(STANDARD[0])     # the most sustained profile, not the one with the most runs (issue 40)
    h8 = next(r for r in rows if r["instance_type"] == "gpu_8x_h100_sxm5")
    assert h8["estimate"] and h8["value"] == pytest.approx(8 * per_gpu)
    assert h8["estimate_basis"].startswith("measured: H100-SXM, median of 1 stored standard run(s) (sustained)")
    assert h8["basis"] == "estimate" and h8["estimate_source"] == "runs" and h8["reference_kind"] is None
    assert h8["basis_label"] == "estimate: sustained runs"
    assert h8["profile"] is None and h8["spread"] is None
    # no stored H200 run: the model's one reference (common/gpus.c), with its kind
    h200 = next(r for r in rows if r["instance_type"] == "p5en.48xlarge")
    assert h200["estimate"] and h200["estimate_basis"].startswith("reference (measured): H200")
    assert h200["estimate_source"] == "reference" and h200["reference_kind"] == "measured"
    assert h200["basis_label"] == "estimate: reference, measured"
    assert h200["value"] < 8 * H100_PEAK_BF16
    for r in rows:
        if r["estimate"]:
            assert r["estimate_basis"], r
            assert r["value"] != pytest.approx(H100_PEAK_BF16 * (r["gpu_count"] or 1)), r
    # every model of the catalog has a reference, its kind named: sustained, burst or estimate
    kinds = {r["gpu_model"]: r["estimate_basis"].split(")")[0] for r in rows if r["estimate"]}
    assert kinds["GH200"] == "reference (sustained" and kinds["B200"] == "reference (burst"
    assert kinds["A10"] == "reference (estimate"


def test_on_demand_and_spot_per_dollar_side_by_side(store, tmp_path):
    # no spot price of p5.4xlarge in us-east-1, where it ran: priced where it has one, and saying so
    row = p5(store.json("rank", "--market", "spot", "--json"))
    assert row["price_note"] == "priced at ap-south-1; no spot price in us-east-1"
    assert row["region"] == "ap-south-1" and row["run_region"] == "us-east-1" and row["interruptible"]
    f = tmp_path / "spot.csv"
    f.write_text("provider,instance_type,region,zone,market,price,unit,currency,captured_at,source\n"
                 "aws,p5.4xlarge,us-east-1,us-east-1a,spot,2.5,hour,USD,2026-11-20,aws-spot:us-east-1\n"
                 "aws,p5.4xlarge,us-east-1,us-east-1b,spot,2.25,hour,USD,2026-11-20,aws-spot:us-east-1\n")
    store("prices", "import", f, check=0)
    row = p5(store.json("rank", "--json"))
    assert row["price_per_hour"] == P5_4X and row["spot_price_per_hour"] == 2.25
    assert row["value_per_dollar"] == pytest.approx(row["value"] / P5_4X)
    assert row["value_per_dollar_spot"] == pytest.approx(row["value"] / 2.25)
    p = store("rank", check=0)
    assert "SPOT $/h" in p.stdout and "2.2500" in p.stdout
    # ranked by spot: the spot price leads, on-demand is still shown
    row = p5(store.json("rank", "--market", "spot", "--json"))
    assert row["price_per_hour"] == 2.25 and row["on_demand_price_per_hour"] == P5_4X


def test_every_price_in_usd_or_marked(store, tmp_path):
    """A negotiated price in CNY: converted through the shipped dated rate, or marked when none is stored."""
    f = tmp_path / "deal.csv"
    f.write_text("provider,instance_type,region,market,price,unit,currency,captured_at\n"
                 "aws,p5.4xlarge,us-east-1,on_demand,40,hour,CNY,2026-11-01\n")
    store("prices", "import", f, check=0)
    row = p5(store.json("rank", "--json"))
    assert row["currency"] == "USD" and row["price_per_hour"] == pytest.approx(40 * 1.0444 / 7.6234)
    assert row["price_fx"] == {"currency": "CNY", "usd_per_unit": pytest.approx(1.0444 / 7.6234),
                               "captured_at": "2024-12-30"}
    # the rate gone (store edited by hand): the type is not dropped silently but listed with why
    db = sqlite3.connect(store.db)
    db.execute("DELETE FROM fx_rates WHERE currency = 'CNY'")
    db.commit()
    db.close()
    r = store.json("rank", "--json")
    assert not [x for x in r["rows"] if x["instance_type"] == "p5.4xlarge"]
    why = [u for u in r["unpriced"] if u["instance_type"] == "p5.4xlarge"]
    assert len(why) == 1 and "no CNY rate" in why[0]["why"]      # one entry per type, its other profile beside
    assert why[0]["profile"] == "standard" and why[0]["basis"] == "sustained"
    assert [(o["profile"], o["basis"], o["runs"]) for o in why[0]["other_profiles"]] == [("quick", "burst", 4)]
    p = store("rank", check=0)
    assert "p5.4xlarge" in p.stdout and "no CNY rate" in p.stdout
