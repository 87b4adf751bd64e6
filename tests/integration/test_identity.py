"""A run's name is checked (judge/identity.c): provider, SKU and region against the price catalog,
and the SKU's catalog GPUs against what the run measured, in `results tag`, `results import` and
`run`; --custom stores a machine the catalog does not know, marked as such.

The run is the real H100 standard capture (tests/fixtures/gpu/h100-2026-11-22: one H100 SXM).
"""
import json

import pytest

from conftest import FIXTURES

H100 = FIXTURES / "gpu" / "h100-2026-11-22" / "standard-profile.json"
H200 = FIXTURES / "gpu" / "h200-2026-11-22" / "standard-profile.json"


def one_line(p):
    err = p.stderr.strip()
    assert err and "\n" not in err, p.stderr
    return err


def stored(gpuvet):
    r = gpuvet.json("results", "list", "--json")[0]
    return r["provider"], r["instance_type"], r["region"]


def test_tag_refuses_a_sku_whose_gpus_are_not_the_runs(gpuvet):
    gpuvet("results", "import", H100, check=0)
    # 8 x H200: both sides named
    p = gpuvet("results", "tag", "1", "--provider", "aws", "--sku", "p5en.48xlarge", "--region", "us-east-1", check=2)
    assert one_line(p) == "gpuvet: cannot tag run 1: aws p5en.48xlarge has 8 x H200, the run measured 1 x H100-SXM"
    # the right model, the wrong count
    p = gpuvet("results", "tag", "1", "--provider", "aws", "--sku", "p5.48xlarge", check=2)
    assert "aws p5.48xlarge has 8 x H100-SXM, the run measured 1 x H100-SXM" in one_line(p)
    # another provider's A100 type
    p = gpuvet("results", "tag", "1", "--provider", "alibaba", "--sku", "ecs.gn7e-c16g1.4xlarge", check=2)
    assert "x A100-80-SXM, the run measured 1 x H100-SXM" in one_line(p)
    assert stored(gpuvet) == ("unknown", None, None)       # nothing was written
    gpuvet("results", "tag", "1", "--provider", "aws", "--sku", "p5.4xlarge", "--region", "us-east-1", check=0)
    assert stored(gpuvet) == ("aws", "p5.4xlarge", "us-east-1")


def test_tag_refuses_names_the_catalog_does_not_know_with_a_suggestion(gpuvet):
    gpuvet("results", "import", H100, check=0)
    p = gpuvet("results", "tag", "1", "--provider", "aws", "--sku", "p5.4xlarg", "--region", "us-east-1", check=2)
    assert one_line(p).endswith("unknown instance type p5.4xlarg for aws; did you mean p5.4xlarge?")
    p = gpuvet("results", "tag", "1", "--provider", "aws", "--sku", "z9.metal", check=2)
    assert one_line(p).endswith("unknown instance type z9.metal for aws; to store a machine the catalog does not know, add --custom")
    p = gpuvet("results", "tag", "1", "--provider", "awz", "--sku", "p5.4xlarge", check=2)
    assert "unknown provider awz (alibaba, aws, lambda)" in one_line(p)
    p = gpuvet("results", "tag", "1", "--provider", "aws", "--sku", "p5.4xlarge", "--region", "eu-west-9", check=2)
    assert one_line(p).endswith("unknown region eu-west-9 for aws; did you mean eu-west-1?")
    # a region without a provider
    p = gpuvet("results", "tag", "1", "--region", "us-east-1", check=2)
    assert "region us-east-1 needs its provider" in one_line(p)
    assert stored(gpuvet) == ("unknown", None, None)


def test_regions_aws_knows_beyond_the_shipped_prices_and_lambda_anywhere(gpuvet):
    gpuvet("results", "import", H100, check=0)
    # eu-central-1 has no shipped price, but it is an AWS region
    gpuvet("results", "tag", "1", "--provider", "aws", "--sku", "p5.4xlarge", "--region", "eu-central-1", check=0)
    # Lambda prices every type the same in every region: any region name is taken
    gpuvet("results", "tag", "1", "--provider", "lambda", "--sku", "gpu_1x_h100_sxm5", "--region", "us-south-1",
           check=0)
    assert stored(gpuvet) == ("lambda", "gpu_1x_h100_sxm5", "us-south-1")


def test_import_checks_the_name_it_gives_and_the_files_own(gpuvet, tmp_path):
    p = gpuvet("results", "import", H100, "--provider", "aws", "--sku", "p5.48xlarge", check=2)
    assert "cannot import" in one_line(p) and "8 x H100-SXM, the run measured 1 x H100-SXM" in p.stderr
    assert gpuvet.json("results", "list", "--json") == []
    # a file that names itself wrongly (as instance metadata would have)
    fp = json.loads(H200.read_text())
    fp["run"].update(provider="aws", instance_type="p5.4xlarge", region="us-east-1")
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(fp))
    p = gpuvet("results", "import", H100, bad, check=2)
    assert "bad.json" in one_line(p) and "aws p5.4xlarge has 1 x H100-SXM, the run measured 1 x H200" in p.stderr
    assert len(gpuvet.json("results", "list", "--json")) == 1    # the good file before it stays
    gpuvet("results", "import", H200, "--provider", "aws", "--sku", "p5en.48xlarge", check=2)
    gpuvet("results", "import", bad, "--custom", check=0)
    assert ("custom:aws", "p5.4xlarge", "us-east-1") in [
        (r["provider"], r["instance_type"], r["region"]) for r in gpuvet.json("results", "list", "--json")]


def test_custom_stores_an_uncatalogued_machine_marked_as_such(gpuvet):
    gpuvet("results", "import", H100, check=0)
    gpuvet("results", "tag", "1", "--provider", "coreweave", "--sku", "gd-1xh100", "--custom", check=0)
    assert stored(gpuvet)[:2] == ("custom:coreweave", "gd-1xh100")
    show = gpuvet.json("results", "show", "1")
    assert show["run"]["provider"] == "custom:coreweave"
    # without a provider: "custom"
    gpuvet("results", "import", H200, "--custom", "--sku", "my-box", check=0)
    runs = {r["instance_type"]: r["provider"] for r in gpuvet.json("results", "list", "--json")}
    assert runs["my-box"] == "custom"


@pytest.mark.parametrize("args", [
    ["--provider", "aws", "--sku", "p5.4xlarg"],
    ["--provider", "aws", "--sku", "p5.48xlarge"],
    ["--provider", "nocloud"],
])
def test_run_refuses_a_wrong_name_before_measuring(gpuvet, args):
    # no GPU here: a GPU SKU cannot be what this machine is; nothing is stored, no bench runs
    p = gpuvet("run", "--bench", "host", *args, check=2)
    err = one_line(p)
    assert err.startswith("gpuvet: ") and ("unknown" in err or "the run measured no GPU" in err)
    assert gpuvet.json("results", "list", "--json") == []


def test_run_takes_custom(gpuvet):
    gpuvet("run", "--bench", "null", "--provider", "homelab", "--sku", "box1", "--custom", check=0,
           env={"GPUVET_TEST_BENCHES": "1"})
    assert stored(gpuvet)[:2] == ("custom:homelab", "box1")
