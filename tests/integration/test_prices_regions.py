"""Prices a buyer compares (issue 36): AWS in every region of the shipped catalog, spot per zone
(the lowest and the median zone of each region, marked interruptible), a ranking by spot in the
region of each type's lowest zone, a run priced where it ran or saying where it was priced
instead, and the age of the prices used."""
import json
import statistics

import pytest

from conftest import FIXTURES
from helpers import gpu_reference

H100 = FIXTURES / "gpu" / "h100-2026-11-22"


def offers(gpuvet, *args):
    return gpuvet.json("prices", "list", "--json", *args)


def test_list_eu_west_1_lists_its_gpu_types(gpuvet):
    rows = offers(gpuvet, "--provider", "aws", "--region", "eu-west-1")
    types = {r["instance_type"] for r in rows}
    assert len(types) == 20 and {"g5.xlarge", "p4d.24xlarge", "g4dn.xlarge", "p3.2xlarge"} <= types
    assert all(r["region"] == "eu-west-1" for r in rows)
    g5 = next(r for r in rows if r["instance_type"] == "g5.xlarge")
    assert g5["on_demand"]["usd_per_hour"] == 1.123 and g5["on_demand"]["interruptible"] is False
    # SOURCE.md's spot check: euw1-az1 0.5635, az2 0.5636, az3 0.5626
    assert g5["spot"]["usd_per_hour"] == 0.5626 and g5["spot"]["zone"] == "euw1-az3"
    assert g5["spot"]["zones"] == 3 and g5["spot"]["median_usd_per_hour"] == 0.5635
    assert g5["spot"]["median_zone"] == "euw1-az1" and g5["spot"]["interruptible"] is True
    p = gpuvet("prices", "list", "--provider", "aws", "--region", "eu-west-1", check=0)
    assert "g5.xlarge" in p.stdout and "1.1230" in p.stdout and "0.5626" in p.stdout
    assert "interruptible" in p.stderr
    # the catalog covers at least 15 regions
    regions = {r["region"] for r in offers(gpuvet, "--provider", "aws")}
    assert len(regions) == 23


def test_spot_listing_names_region_lowest_and_median_zone(gpuvet):
    rows = offers(gpuvet, "--provider", "aws", "--gpu", "H100", "--market", "spot")
    assert rows and all(r["region"] and r["spot"]["zone"] and r["spot"]["interruptible"] for r in rows)
    p5 = next(r for r in rows if r["instance_type"] == "p5.48xlarge" and r["region"] == "us-east-1")
    zones = [10.1808, 55.04, 19.197, 18.766, 55.04, 22.9825, 17.2517]
    assert p5["spot"]["usd_per_hour"] == min(zones) and p5["spot"]["zone"] == "use1-atl2-az1"
    assert p5["spot"]["zones"] == 7 and p5["spot"]["median_usd_per_hour"] == statistics.median(zones)
    assert p5["spot"]["median_zone"] == "use1-az2"
    p = gpuvet("prices", "list", "--provider", "aws", "--gpu", "H100", "--market", "spot", check=0)
    head = p.stdout.splitlines()[0]
    for col in ("REGION", "LOWEST $/h", "LOWEST ZONE", "MEDIAN $/h", "MEDIAN ZONE", "ZONES"):
        assert col in head, head
    line = next(l for l in p.stdout.splitlines() if "p5.48xlarge" in l and "us-east-1" in l)
    assert "10.1808" in line and "use1-atl2-az1" in line and "19.1970" in line and "use1-az2" in line
    assert "interruptible" in p.stderr
    # the stored rows one by one: each spot row says so too
    recs = gpuvet.json("prices", "list", "--records", "--json", "--provider", "aws", "--gpu", "H100:8")
    assert {(r["market"], r["interruptible"]) for r in recs} == {("on_demand", False), ("spot", True)}
    p = gpuvet("prices", "list", "--records", "--provider", "aws", "--gpu", "H100:8", "--market", "spot", check=0)
    assert "interruptible" in p.stderr


def shipped_spot():
    """The shipped AWS spot rows: {(type, region): {zone: price}}."""
    import csv
    lines = [l for l in (FIXTURES.parent.parent / "pricing" / "catalog" / "aws.csv").read_text().splitlines()
             if not l.startswith("#")]
    out = {}
    for r in csv.DictReader(lines):
        if r["market"] == "spot":
            out.setdefault((r["instance_type"], r["region"]), {})[r["zone"]] = float(r["price"])
    return out


def test_rank_spot_estimates_on_an_empty_store_name_region_and_zone(gpuvet):
    r = gpuvet.json("rank", "--estimates", "--market", "spot", "--json")
    aws = [x for x in r["rows"] if x["provider"] == "aws"]
    assert len(aws) >= 20 and r["market"] == "spot"
    spot = shipped_spot()
    for x in aws:
        assert x["region"] and x["zone"] and x["interruptible"] is True and x["estimate"], x
        # the region's lowest zone, in the type's cheapest region
        zones = spot[(x["instance_type"], x["region"])]
        assert x["price_per_hour"] == min(zones.values()) and zones[x["zone"]] == x["price_per_hour"]
        assert x["price_per_hour"] == min(min(z.values()) for (t, _), z in spot.items() if t == x["instance_type"])
    p5 = next(x for x in aws if x["instance_type"] == "p5en.48xlarge")
    assert (p5["region"], p5["zone"], p5["price_per_hour"]) == ("eu-south-2", "eus2-az2", 6.836)
    p = gpuvet("rank", "--estimates", "--market", "spot", check=0)
    assert "each region's lowest zone, interruptible" in p.stdout


def test_a_run_is_priced_where_it_ran_or_says_where(gpuvet, tmp_path):
    gpuvet("results", "import", H100 / "quick-profile.json", "--provider", "aws", "--sku", "p5.4xlarge",
           "--region", "eu-west-1", check=0)
    # p5.4xlarge has no price in eu-west-1: priced at the cheapest region, and saying so everywhere
    row = next(x for x in gpuvet.json("rank", "--json")["rows"] if x["instance_type"] == "p5.4xlarge")
    assert (row["region"], row["run_region"], row["price_per_hour"]) == ("us-east-1", "eu-west-1", 6.88)
    assert row["price_note"] == "priced at us-east-1; no price in eu-west-1"
    p = gpuvet("rank", check=0)
    assert "priced at us-east-1; no price in eu-west-1" in p.stdout
    gpuvet("report", "-o", tmp_path / "r.html", check=0)
    html = (tmp_path / "r.html").read_text()
    assert "priced at us-east-1; no price in eu-west-1" in html
    assert "spot prices (interruptible, each region&#39;s lowest zone)" in html      # the spot chart's title
    # --region restricts to the run's region: not ranked, and why
    r = gpuvet.json("rank", "--region", "eu-west-1", "--json")
    assert not [x for x in r["rows"] if x["instance_type"] == "p5.4xlarge"]
    assert r["unpriced"][0]["why"].startswith("no on_demand price in eu-west-1")
    # a run in a region with a price is priced there, with nothing to say; spot beside it is that region's
    gpuvet("results", "import", H100 / "standard-profile.json", "--provider", "aws", "--sku", "p5.4xlarge",
           "--region", "eu-west-2", check=0)
    std = [x for x in gpuvet.json("rank", "--json")["rows"] if x["profile"] == "standard"]
    assert [(x["region"], x["price_per_hour"], x["price_note"], x["spot_price_per_hour"]) for x in std] == \
        [("eu-west-2", 8.944, None, 8.944)]
    std = [x for x in gpuvet.json("rank", "--market", "spot", "--json")["rows"] if x["profile"] == "standard"]
    assert [(x["region"], x["zone"], x["price_note"]) for x in std] == [("eu-west-2", "euw2-az3", None)]


def test_old_prices_are_warned_about_once_naming_provider_and_date(gpuvet, tmp_path):
    f = tmp_path / "old.csv"
    f.write_text("provider,instance_type,region,gpu_model,gpu_count,market,price,unit,currency,captured_at\n"
                 "acme,h100x8,r1,H100-SXM,8,on_demand,30,hour,USD,2025-01-01\n"
                 "acme,h100x8,r2,H100-SXM,8,on_demand,31,hour,USD,2025-01-01\n"
                 "acme,h100x1,r1,H100-SXM,1,on_demand,4,hour,USD,2025-01-01\n")
    gpuvet("prices", "import", f, check=0)
    p = gpuvet("rank", "--estimates", check=0)
    warn = [l for l in p.stderr.splitlines() if "warning" in l]
    assert len([l for l in warn if "acme prices" in l]) == 1, warn      # once, however many rows use it
    acme = next(l for l in warn if "acme prices" in l)
    assert "captured on 2025-01-01" in acme and "older than 90 days" in acme and "--max-age" in acme
    assert len([l for l in warn if "alibaba prices" in l and "2024-12-30" in l]) == 1
    r = gpuvet.json("rank", "--estimates", "--json")
    assert {(s["provider"], s["captured_at"]) for s in r["stale_prices"]} == {("acme", "2025-01-01"),
                                                                              ("alibaba", "2024-12-30")}
    gpuvet("report", "-o", tmp_path / "r.html", check=0)
    html = (tmp_path / "r.html").read_text()
    assert html.count("Old prices:") == 2 and "acme prices used here were captured on 2025-01-01" in html
    # --max-age leaves them out: no row, no warning
    r = gpuvet.json("rank", "--estimates", "--max-age", "90", "--json")
    assert not [x for x in r["rows"] if x["provider"] in ("acme", "alibaba")] and r["stale_prices"] == []
    p = gpuvet("rank", "--estimates", "--max-age", "90", check=0)
    assert "warning" not in p.stderr
    p = gpuvet("rank", "--max-age", "soon")
    assert p.returncode == 2 and "max-age" in p.stderr


def test_prices_cheapest_answers_where_a_gpu_rents_for_least(gpuvet):
    rows = gpuvet.json("prices", "cheapest", "--gpu", "H100", "--count", "8", "--limit", "100", "--json")
    assert rows and all(r["gpu_count"] == 8 and r["gpu_model"].startswith("H100") for r in rows)
    per_gpu = [r["usd_per_gpu_hour"] for r in rows]
    assert per_gpu == sorted(per_gpu)
    # one row per provider, type and region
    assert len({(r["provider"], r["instance_type"], r["region"]) for r in rows}) == len(rows)
    assert (rows[0]["provider"], rows[0]["instance_type"], rows[0]["usd_per_gpu_hour"]) == \
        ("lambda", "gpu_8x_h100_sxm5", 3.99)
    p5 = next(r for r in rows if r["instance_type"] == "p5.48xlarge" and r["region"] == "us-east-1")
    assert p5["usd_per_gpu_hour"] == pytest.approx(6.88) and p5["interruptible"] is False
    # throughput beside it: the model's reference with no run stored, per dollar of that row
    assert p5["tflops_per_gpu"] == gpu_reference("H100-SXM") and p5["throughput_basis"].startswith("reference (measured)")
    assert p5["tflops_per_usd_gpu_hour"] == pytest.approx(gpu_reference("H100-SXM") / 6.88)
    # spot: each region's lowest zone, interruptible, cheapest first
    spot = gpuvet.json("prices", "cheapest", "--gpu", "H100", "--count", "8", "--market", "spot", "--json")
    assert spot and all(r["interruptible"] and r["zone"] and r["market"] == "spot" for r in spot)
    assert (spot[0]["instance_type"], spot[0]["region"], spot[0]["zone"]) == ("p5.48xlarge", "us-east-1",
                                                                             "use1-atl2-az1")
    assert spot[0]["usd_per_gpu_hour"] == pytest.approx(10.1808 / 8)
    # a measured run of the type: its own median beside the price
    gpuvet("results", "import", H100 / "quick-profile.json", "--provider", "aws", "--sku", "p5.4xlarge",
           "--region", "us-east-1", check=0)
    one = gpuvet.json("prices", "cheapest", "--gpu", "H100", "--count", "1", "--provider", "aws", "--json")
    assert one and all(r["throughput_basis"] == "measured" for r in one)
    p = gpuvet("prices", "cheapest", "--gpu", "H100", "--count", "1", "--provider", "aws", check=0)
    assert "runs of this type" in p.stdout and "$/GPU-h" in p.stdout
    for bad in (["--gpu", "H999"], [], ["--gpu", "H100", "--market", "reserved"], ["--gpu", "H100", "--count", "0"]):
        p = gpuvet("prices", "cheapest", *bad)
        assert p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1, (bad, p.stderr)
