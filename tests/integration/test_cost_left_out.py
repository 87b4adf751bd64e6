"""What `cost` leaves out, said instead of dropped (issue 48 item 8), on the real H100 capture of
tests/fixtures/gpu/h100-2026-11-22/ (README there) named an aws p5.4xlarge and the shipped catalog:

  - when the measured type cannot fit the job, `cost` says how many more types fit as estimates;
  - a type whose GPU could be estimated but that has no price in the asked market (aws p5e.48xlarge:
    a spot price only in the shipped catalog) is listed as not priced, with why;
  - a spot row says its zone and that it is its region's lowest, in rank's words.
"""
import re

from conftest import FIXTURES

STANDARD = FIXTURES / "gpu" / "h100-2026-11-22" / "standard-profile.json"


def imported(gpuvet):
    gpuvet("results", "import", STANDARD, "--provider", "aws", "--sku", "p5.4xlarge", "--region", "us-east-1")


def test_8_cost_says_how_many_more_types_fit_as_estimates(gpuvet):
    imported(gpuvet)
    res = gpuvet.json("cost", "--model", "llama-3.1-70b", "--json")
    assert [r["fits"] for r in res["rows"]] == [False]              # 70B does not fit one H100
    est = gpuvet.json("cost", "--model", "llama-3.1-70b", "--estimates", "--json")
    fit = {(r["provider"], r["instance_type"]) for r in est["rows"] if r["estimate"] and r["fits"]}
    assert len(fit) > 5 and res["estimates_that_fit"] == len(fit)
    out = gpuvet("cost", "--model", "llama-3.1-70b").stdout
    assert f"{len(fit)} more type(s) fit as estimates: add --estimates" in out
    # with the estimates shown, nothing more to add
    assert "add --estimates" not in gpuvet("cost", "--model", "llama-3.1-70b", "--estimates").stdout


def test_8_a_type_without_a_price_in_the_market_is_listed_with_why(gpuvet):
    imported(gpuvet)
    res = gpuvet.json("cost", "--model", "llama-3.1-8b", "--estimates", "--json")
    assert not [r for r in res["rows"] if r["instance_type"] == "p5e.48xlarge"]
    p5e = [u for u in res["unpriced"] if (u["provider"], u["instance_type"]) == ("aws", "p5e.48xlarge")]
    assert len(p5e) == 1 and "no on_demand price" in p5e[0]["why"] and "spot" in p5e[0]["why"]
    out = gpuvet("cost", "--model", "llama-3.1-8b", "--estimates").stdout
    assert re.search(r"^  aws p5e\.48xlarge \(est\.\): no on_demand price .*spot", out, re.M)
    # in the spot market it is priced, and not listed as unpriced
    spot = gpuvet.json("cost", "--model", "llama-3.1-8b", "--estimates", "--market", "spot", "--json")
    assert [r for r in spot["rows"] if r["instance_type"] == "p5e.48xlarge"]
    assert not [u for u in spot["unpriced"] if u["instance_type"] == "p5e.48xlarge"]


def test_8_a_spot_row_says_its_zone_and_that_it_is_the_lowest(gpuvet):
    imported(gpuvet)
    args = ("--model", "llama-3.1-8b", "--estimates", "--market", "spot")
    res = gpuvet.json("cost", *args, "--json")
    rank = gpuvet.json("rank", "--estimates", "--market", "spot", "--per", "gpu", "--json")
    zones = {(r["provider"], r["instance_type"]): r.get("zone") for r in rank["rows"]}
    fitting = [r for r in res["rows"] if r["fits"]]
    assert fitting and all(r["zone"] for r in fitting)
    both = [r for r in fitting if (r["provider"], r["instance_type"]) in zones]
    assert both
    for r in both:                                                  # the zone rank priced it at
        assert zones[(r["provider"], r["instance_type"])] == r["zone"]
    out = gpuvet("cost", *args, "--wide").stdout   # every cell whole
    assert "spot prices (each region's lowest zone, interruptible)" in out.splitlines()[0]
    for r in fitting:
        line = next(ln for ln in out.splitlines() if f" {r['instance_type']} " in ln)
        assert f"spot in {r['zone']}, its region's lowest zone" in line
