"""`rank --estimates` says which types it could estimate but cannot price in the asked market, as `cost
--estimates` does (issue 48 item 8, "no silent switch, no dead end"; one walk for both,
judge/unpriced.c).  The shipped AWS catalog has p5e.48xlarge (8 x H200) with spot prices only
(pricing/catalog/aws.csv: Capacity Blocks, no on-demand price in the source), in us-east-2,
us-west-2 and ap-southeast-3; the store holds the real H100 capture of tests/fixtures/gpu/h100-2026-11-22/
(README there) named an aws p5.4xlarge, so the estimates of H200 types come from its reference."""
import re

from conftest import FIXTURES

STANDARD = FIXTURES / "gpu" / "h100-2026-11-22" / "standard-profile.json"
P5E = ("aws", "p5e.48xlarge")


def imported(gpuvet):
    gpuvet("results", "import", STANDARD, "--provider", "aws", "--sku", "p5.4xlarge", "--region", "us-east-1")


def key(x):
    return x["provider"], x["instance_type"]


def test_rank_estimates_lists_a_type_without_a_price_in_the_market(gpuvet):
    imported(gpuvet)
    res = gpuvet.json("rank", "--estimates", "--json")
    assert P5E not in {key(r) for r in res["rows"]}
    p5e = [u for u in res["unpriced"] if key(u) == P5E]
    assert len(p5e) == 1
    u = p5e[0]
    assert u["estimate"] is True and u["runs"] == 0 and u["gpu_model"] == "H200" and u["gpu_count"] == 8
    assert u["why"] == ("no on_demand price (gpuvet prices import FILE); the catalog has a spot price only "
                        "(--market spot)")
    # the estimate rank makes of it where it is priced: the same value and basis, without a price
    spot = gpuvet.json("rank", "--estimates", "--market", "spot", "--json")
    row = next(r for r in spot["rows"] if key(r) == P5E)
    assert u["value"] == row["value"] > 0
    for k in ("basis", "basis_label", "estimate_basis", "estimate_source", "reference_kind"):
        assert u[k] == row[k], k
    assert u["basis"] == "estimate" and u["basis_label"].startswith("estimate: ")
    # cost says it in the same words (one rule, judge/unpriced.c)
    cost = gpuvet.json("cost", "--model", "llama-3.1-8b", "--estimates", "--json")
    assert [c["why"] for c in cost["unpriced"] if key(c) == P5E] == [u["why"]]
    keys = [key(x) for x in res["unpriced"]]
    assert len(keys) == len(set(keys))                              # no type twice
    # the table's lines: the estimated types under their own header, as cost lists them
    out = gpuvet("rank", "--estimates").stdout
    assert re.search(r"^1 instance type\(s\) could be estimated but have no on_demand price", out, re.M)
    assert re.search(r"^  aws p5e\.48xlarge \(est\.\): no on_demand price \(gpuvet prices import FILE\); "
                     r"the catalog has a spot price only \(--market spot\)$", out, re.M)
    assert "measured instance type(s) not ranked" not in out
    # without --estimates nothing is estimated, so nothing is listed as one
    assert not [x for x in gpuvet.json("rank", "--json")["unpriced"] if x["estimate"]]


def test_rank_estimates_does_not_list_a_type_priced_in_the_market(gpuvet):
    imported(gpuvet)
    res = gpuvet.json("rank", "--estimates", "--market", "spot", "--json")
    assert P5E in {key(r) for r in res["rows"]}
    assert P5E not in {key(u) for u in res["unpriced"]}
    # the types listed are the ones without a spot price: never a row as well, each once
    listed = [key(u) for u in res["unpriced"]]
    assert listed and len(set(listed)) == len(listed)
    assert not set(listed) & {key(r) for r in res["rows"]}
    # the measured types without a price first, as before, then the estimated ones
    kinds = [u["estimate"] for u in res["unpriced"]]
    assert kinds == sorted(kinds) and kinds[-1] is True
    lambda_why = {u["why"] for u in res["unpriced"] if u["provider"] == "lambda"}
    assert lambda_why == {"no spot price (lambda sells no spot instances); the catalog has an on_demand price only "
                          "(--market on_demand)"}
    # a provider's types with one why on one line, as cost prints them
    out = gpuvet("rank", "--estimates", "--market", "spot").stdout
    n = sum(1 for u in res["unpriced"] if u["provider"] == "lambda")
    assert re.search(rf"^  lambda, {n} types \(est\. gpu_\S+\.\.\.\): no spot price \(lambda sells no spot "
                     r"instances\)", out, re.M)


def test_rank_estimates_with_region_names_the_region(gpuvet):
    imported(gpuvet)
    res = gpuvet.json("rank", "--estimates", "--region", "us-west-2", "--json")
    p5e = [u for u in res["unpriced"] if key(u) == P5E]
    assert len(p5e) == 1
    assert p5e[0]["why"] == ("no on_demand price in us-west-2 (gpuvet prices import FILE); the catalog has a spot "
                             "price only (--market spot)")
    out = gpuvet("rank", "--estimates", "--region", "us-west-2").stdout
    assert re.search(r"^  aws p5e\.48xlarge \(est\.\): no on_demand price in us-west-2 ", out, re.M)
    # a region where the catalog has no price of it at all: not sold there, nothing to say
    eu = gpuvet.json("rank", "--estimates", "--region", "eu-west-1", "--json")
    assert P5E not in {key(u) for u in eu["unpriced"]}


def test_rank_estimates_names_every_market_a_type_is_priced_in(gpuvet, tmp_path):
    """An imported 8 x H100 type priced on spot and reserved only: the why names both, as cost's does."""
    imported(gpuvet)
    (tmp_path / "p.csv").write_text(
        "provider,instance_type,region,zone,gpu_model,gpu_count,gpu_memory_gib,market,term,price,unit,currency,"
        "captured_at\n"
        "est,r.8x,r0,r0a,H100-SXM,8,80,spot,,10,hour,USD,2026-11-20\n"
        "est,r.8x,r0,,H100-SXM,8,80,reserved,1yr,12,hour,USD,2026-11-20\n")
    gpuvet("prices", "import", tmp_path / "p.csv")
    why = ("no on_demand price (gpuvet prices import FILE); the catalog has spot and reserved prices only "
           "(--market spot or reserved)")
    res = gpuvet.json("rank", "--estimates", "--json")
    assert [u["why"] for u in res["unpriced"] if key(u) == ("est", "r.8x")] == [why]
    cost = gpuvet.json("cost", "--model", "llama-3.1-8b", "--estimates", "--json")
    assert [u["why"] for u in cost["unpriced"] if key(u) == ("est", "r.8x")] == [why]
