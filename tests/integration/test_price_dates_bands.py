"""Prices that say what they know (issue 58 items 6 and 8), on the shipped catalogs
(pricing/catalog/README.md: aws.csv and lambda.csv are SkyPilot snapshots of unknown date, copied on
2026-11-25 and 2026-11-21; alibaba.csv is dated 2024-12-30 by its generator) and the README's
example store (the real H100 captures named an AWS p5.4xlarge in us-east-1):

- item 6: `prices sources`, `rank`'s price footnote and the report say "copied YYYY-MM-DD, source
  date unknown" where that is the truth, never "captured"; spot rows of unknown age are marked and
  said once; staleness is counted from the source's own date (Alibaba's 2024-12-30 warns, a copy
  date claims no age);
- item 8: a spot price dearer than on-demand for the same type is named (ap-south-1 spot $8.256/h
  against us-east-1 on-demand $6.88/h, where the runs ran), and a price outside its GPU model's
  plausible band is flagged (8 x A100 40 GB spot at $2.51/h in us-east-1).

On c4fdb45 each failed: "captured 2026-11-25", no mark, no note, no flag."""
import pytest

from conftest import FIXTURES

H100 = FIXTURES / "gpu" / "h100-2026-11-22"


@pytest.fixture
def example(gpuvet):
    gpuvet("results", "import", H100, "--provider", "aws", "--sku", "p5.4xlarge", "--region", "us-east-1", check=0)
    return gpuvet


def test_sources_say_copied_where_the_source_date_is_unknown(gpuvet):
    text = gpuvet("prices", "sources", check=0).stdout
    line = {ln.split()[0]: ln for ln in text.splitlines()[1:]}
    assert "copied 2026-11-25, source date unknown" in line["catalog:aws"]
    assert "copied 2026-11-21, source date unknown" in line["catalog:lambda"]
    assert "captured 2024-12-30" in line["catalog:alibaba"] and "copied" not in line["catalog:alibaba"]
    js = {s["source"]: s for s in gpuvet.json("prices", "sources", "--json")}
    assert js["catalog:aws"]["source_date_known"] is False and js["catalog:alibaba"]["source_date_known"] is True


def test_rank_marks_spot_prices_of_unknown_age(example):
    p = example("rank", "--market", "spot", check=0)
    assert "[1] catalog:aws, copied 2026-11-25, source date unknown" in p.stdout
    assert "captured 2026-11-25" not in p.stdout
    row = next(ln for ln in p.stdout.splitlines() if " p5.4xlarge " in ln)
    assert " [1]? " in row
    assert p.stderr.count("of unknown age (marked ?)") == 1 and "catalog:aws" in p.stderr
    r = example.json("rank", "--market", "spot", "--json")
    assert r["rows"][0]["price_date_known"] is False and r["stale_prices"] == []
    assert [u["source"] for u in r["undated_prices"]] == ["catalog:aws"]
    # on-demand: the footnote says the same; no note about spot ages
    od = example("rank", check=0)
    assert "copied 2026-11-25, source date unknown" in od.stdout and "unknown age" not in od.stderr


def test_staleness_counts_from_the_source_date_where_known(example):
    r = example.json("rank", "--estimates", "--json")
    stale = {s["source"]: s for s in r["stale_prices"]}
    assert "catalog:alibaba" in stale and stale["catalog:alibaba"]["captured_at"] == "2024-12-30"
    assert "catalog:aws" not in stale and "catalog:lambda" not in stale   # a copy date claims no age
    assert {u["source"] for u in r["undated_prices"]} == {"catalog:aws", "catalog:lambda"}   # of unknown age, said


def test_report_says_copied(example, tmp_path):
    out = tmp_path / "r.html"
    example("report", "-o", out, check=0)
    html = out.read_text()
    assert "copied 2026-11-25, source date unknown" in html and "prices' date" in html


def test_spot_dearer_than_on_demand_is_named(example):
    r = example.json("rank", "--market", "spot", "--json")
    row = r["rows"][0]
    assert row["instance_type"] == "p5.4xlarge" and row["region"] == "ap-south-1"
    assert row["spot_dearer_note"] == ("spot $8.256/h in ap-south-1 is dearer than on-demand $6.88/h in us-east-1, "
                                       "where its runs ran")
    assert "^ spot $8.256/h in ap-south-1 is dearer than on-demand" in example("rank", "--market", "spot").stdout
    # on-demand ranking: no such note
    assert example.json("rank", "--json")["rows"][0]["spot_dearer_note"] is None


def test_an_outlier_catalog_price_is_flagged(example):
    r = example.json("rank", "--market", "spot", "--estimates", "--json")
    p4d = next(x for x in r["rows"] if x["instance_type"] == "p4d.24xlarge")
    assert p4d["price_per_hour"] == pytest.approx(2.5084) and p4d["region"] == "us-east-1"
    assert "under the plausible band of A100-40-SXM spot prices" in p4d["price_band_note"]
    flagged = [x for x in r["rows"] if x["price_band_note"]]
    assert 0 < len(flagged) < len(r["rows"]) / 4           # a few outliers, not the market
    h100 = next(x for x in r["rows"] if x["instance_type"] == "p5.4xlarge")
    assert h100["price_band_note"] is None
    text = example("rank", "--market", "spot", "--estimates", check=0).stdout
    assert "under the plausible band of A100-40-SXM spot prices" in text
