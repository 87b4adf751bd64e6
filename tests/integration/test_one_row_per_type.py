"""One row per instance type, sustained before burst, every per-dollar figure labelled (issue 40
items 1 and 2), on the real H100 captures of tests/fixtures/gpu/h100-2026-11-22 (README there):
four quick runs (timed before the bench waited for the GPU to settle: the burst) and one standard
run (settled at the power limit), named after the fact as an AWS p5.4xlarge in us-east-1.

A buyer compares instance types, not profiles: `rank`, `rank --json` and the report's first screen
name p5.4xlarge once per market, valued by the standard (sustained) runs, with the quick figures
beside it, labelled burst, and every per-dollar figure says sustained, burst or estimate (and an
estimate from which reference kind, or from which runs)."""
import json
import re

import pytest

from conftest import FIXTURES

H100 = FIXTURES / "gpu" / "h100-2026-11-22"
QUICK = [H100 / "contention" / f"clean-{i}.json" for i in (1, 2, 3)] + [H100 / "quick-profile.json"]
STANDARD = H100 / "standard-profile.json"
P5_4X = 6.88     # shipped AWS on-demand list price of p5.4xlarge (pricing/catalog/aws.csv)
BASES = {"sustained", "burst", "estimate"}


def gemm(path, dtype="bf16"):
    return next(m["value"] for m in json.loads(path.read_text())["metrics"]
                if m["name"] == f"gemm.{dtype}.tflops" and m["gpu"] == -1)


@pytest.fixture
def store(gpuvet):
    gpuvet("results", "import", *QUICK, STANDARD, "--provider", "aws", "--sku", "p5.4xlarge",
           "--region", "us-east-1", check=0)
    return gpuvet


def p5_rows(r):
    return [x for x in r["rows"] if x["instance_type"] == "p5.4xlarge"]


@pytest.mark.parametrize("args", [(), ("--per", "gpu"), ("--metric", "gemm.fp16.tflops"),
                                  ("--metric", "score.training"), ("--estimates",)])
def test_rank_names_the_type_once_and_the_sustained_profile_ranks(store, args):
    r = store.json("rank", "--json", *args)
    rows = p5_rows(r)
    assert len(rows) == 1, rows
    row = rows[0]
    assert row["profile"] == "standard" and row["basis"] == "sustained" and row["runs"] == 1
    assert not row["estimate"] and row["estimate_source"] is None
    quick = row["other_profiles"]
    assert [(o["profile"], o["basis"], o["runs"]) for o in quick] == [("quick", "burst", len(QUICK))]
    if not args or args[0] == "--estimates":
        assert row["value"] == pytest.approx(gemm(STANDARD))
        assert row["value_per_dollar"] == pytest.approx(gemm(STANDARD) / P5_4X)
        # the burst figure is higher, and still does not rank
        assert quick[0]["value_per_dollar"] > row["value_per_dollar"]


def test_the_cli_table_says_the_basis_and_shows_the_other_profile_beside(store):
    out = store("rank", check=0).stdout
    lines = out.splitlines()
    assert "BASIS" in lines[0]
    ranked = [ln for ln in lines if re.match(r"^\d+\s+aws\s+p5\.4xlarge\s", ln)]
    assert len(ranked) == 1 and " standard sustained " in ranked[0]
    i = lines.index(ranked[0])
    assert lines[i + 1].strip().startswith("also quick (burst): 4 run(s)") and "not ranked" in lines[i + 1]
    assert "burst = quick" in out


def test_every_per_dollar_figure_says_its_basis(store):
    r = store.json("rank", "--estimates", "--json")
    assert len({(x["provider"], x["instance_type"]) for x in r["rows"]}) == len(r["rows"])
    for x in r["rows"]:
        assert x["basis"] in BASES and x["basis_label"], x
        if x["estimate"]:
            assert x["basis"] == "estimate"
            assert x["estimate_source"] in ("reference", "runs")
            if x["estimate_source"] == "reference":
                assert x["reference_kind"] in ("measured", "sustained", "burst", "estimate")
                assert x["basis_label"] == "estimate: reference, " + x["reference_kind"]
        for o in x["other_profiles"]:
            assert o["basis"] in ("sustained", "burst") and o["value_per_dollar"] > 0
    # an H100 type never measured scales the sustained runs, not the burst ones that are more numerous
    h8 = next(x for x in r["rows"] if x["instance_type"] == "gpu_8x_h100_sxm5")
    assert h8["basis_label"] == "estimate: sustained runs" and h8["value"] == pytest.approx(8 * gemm(STANDARD))
    out = store("rank", "--estimates", check=0).stdout
    assert re.search(r"gpu_8x_h100_sxm5 .* estimate ", out)


def test_spot_market_names_the_type_once(store, tmp_path):
    f = tmp_path / "spot.csv"
    f.write_text("provider,instance_type,region,zone,market,price,unit,currency,captured_at,source\n"
                 "aws,p5.4xlarge,us-east-1,us-east-1a,spot,2.5,hour,USD,2026-11-20,aws-spot:us-east-1\n")
    store("prices", "import", f, check=0)
    r = store.json("rank", "--market", "spot", "--json")
    rows = p5_rows(r)
    assert len(rows) == 1 and rows[0]["basis"] == "sustained" and rows[0]["price_per_hour"] == 2.5
    assert rows[0]["other_profiles"][0]["value_per_dollar"] == pytest.approx(
        rows[0]["other_profiles"][0]["value"] / 2.5)


def text(html):
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", html)).replace("&amp;", "&")


def test_report_first_screen_and_table_name_the_type_once_labelled(store, tmp_path):
    out = tmp_path / "r.html"
    store("report", "-o", out, check=0)
    page = out.read_text()
    work = re.search(r"Most per dollar, by workload</h3>(.*?)</ul>", page, re.S).group(1)
    for li in re.findall(r"<li>(.*?)</li>", work, re.S):
        t = text(li)
        if "p5.4xlarge" not in t or "/Mtok" in t:   # the jobs' lines are in $/Mtok, by `gpuvet cost` (#58)
            continue
        assert t.count("p5.4xlarge") == 1, t
        assert "(sustained) also quick (burst)" in t and "not ranked" in t, t
        # every per-dollar figure of the line says what it is (after its label, "BF16 matrix multiply per $/h: ")
        t = t.split(": ", 1)[1]
        assert t.count("per $/h") == t.count("(sustained)") + t.count("(burst)") + t.count("(estimate"), t
    table = re.search(r'<table class="sortable" id="rank">(.*?)</table>', page, re.S).group(1)
    rows = [tr for tr in re.findall(r"<tr[^>]*>(.*?)</tr>", table, re.S) if "p5.4xlarge" in tr]
    assert len(rows) == 1
    assert ">sustained<br><small>1 standard run</small>" in rows[0] and "also quick (burst):4 runs, 722.1" in text(rows[0])
    best = text(re.search(r'<p class="best">(.*?)</p>', page, re.S).group(1))
    assert "p5.4xlarge" in best and "(sustained)" in best


def test_standard_then_full_then_quick(gpuvet, tmp_path):
    """The order of the rule (judge/rank_profile.c): a copy of the real standard capture relabelled
    "full" (fresh uuid, its GEMM edited so the rows are told apart) is sustained too; beside a
    standard run it does not rank, without one it does, ahead of the quick runs."""
    fp = json.loads(STANDARD.read_text())
    fp["run"]["uuid"] = "f0000000-0000-4000-8000-000000000001"
    fp["run"]["profile"] = "full"
    for m in fp["metrics"]:
        if m["name"] == "gemm.bf16.tflops" and m["gpu"] == -1:
            m["value"] = 690.0
    full = tmp_path / "full.json"
    full.write_text(json.dumps(fp))
    name = ("--provider", "aws", "--sku", "p5.4xlarge", "--region", "us-east-1")
    gpuvet("results", "import", QUICK[0], full, *name, check=0)
    row = p5_rows(gpuvet.json("rank", "--json"))
    assert len(row) == 1 and (row[0]["profile"], row[0]["basis"], row[0]["value"]) == ("full", "sustained", 690.0)
    assert [(o["profile"], o["basis"]) for o in row[0]["other_profiles"]] == [("quick", "burst")]
    gpuvet("results", "import", STANDARD, *name, check=0)
    row = p5_rows(gpuvet.json("rank", "--json"))
    assert len(row) == 1 and row[0]["profile"] == "standard" and row[0]["value"] == pytest.approx(gemm(STANDARD))
    assert sorted((o["profile"], o["basis"]) for o in row[0]["other_profiles"]) == [("full", "sustained"),
                                                                                    ("quick", "burst")]
