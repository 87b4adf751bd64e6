"""Naming what a run was on after the fact (issue 14 item 1): `results tag` and `results import
--provider/--sku/--region`, and rank saying the real reason when runs have no instance type.

The runs are the real H100 captures (tests/fixtures/gpu/), made without cloud metadata, as every
Lambda machine is: provider and instance type unknown.
"""
import json

from conftest import FIXTURES

H100 = FIXTURES / "gpu" / "h100-2026-11-22"
RUNS = [H100 / "contention" / f"clean-{i}.json" for i in (1, 2, 3)]


def uuids():
    return [json.loads(p.read_text())["run"]["uuid"] for p in RUNS]


def test_rank_names_the_real_reason_then_tag_makes_runs_rankable(gpuvet):
    gpuvet("results", "import", *RUNS, check=0)
    p = gpuvet("rank", "--metric", "gemm.bf16.tflops", check=2)
    err = p.stderr.strip()
    assert "\n" not in err
    assert "3 stored run(s) have gemm.bf16.tflops but no provider and instance type" in err
    assert "gpuvet results tag RUN --provider P --sku TYPE" in err
    for u in uuids():
        gpuvet("results", "tag", u[:8], "--provider", "aws", "--sku", "p5.4xlarge", "--region", "us-east-1",
               check=0)
    runs = gpuvet.json("results", "list", "--json")
    assert {(r["provider"], r["instance_type"], r["region"]) for r in runs} == {("aws", "p5.4xlarge", "us-east-1")}
    r = gpuvet.json("rank", "--metric", "gemm.bf16.tflops", "--json")
    row = next(x for x in r["rows"] if x["instance_type"] == "p5.4xlarge")
    assert row["runs"] == 3
    # --region that none of them is in: said so
    p = gpuvet("rank", "--metric", "gemm.bf16.tflops", "--region", "eu-west-1", check=2)
    assert "3 stored run(s) have gemm.bf16.tflops, none in region eu-west-1" in p.stderr
    # a field left out stays as it was
    gpuvet("results", "tag", uuids()[0][:8], "--region", "us-west-2", check=0)
    show = gpuvet.json("results", "show", uuids()[0])
    assert (show["run"]["provider"], show["run"]["instance_type"], show["run"]["region"]) == \
        ("aws", "p5.4xlarge", "us-west-2")


def test_import_names_the_runs_it_imports(gpuvet):
    gpuvet("results", "import", RUNS[0], "--provider", "lambda", "--sku", "gpu_1x_h100_sxm5", "--region",
           "us-east-1", check=0)
    run = gpuvet.json("results", "list", "--json")[0]
    assert (run["provider"], run["instance_type"], run["region"]) == ("lambda", "gpu_1x_h100_sxm5", "us-east-1")


def test_tag_refuses_what_run_and_inventory_refuse(gpuvet):
    gpuvet("results", "import", RUNS[0], check=0)
    u = uuids()[0][:8]
    before = gpuvet.json("results", "list", "--json")[0]
    for bad in ("\x1b[31mred", "a\nb", "x" * 300):
        p = gpuvet("results", "tag", u, "--sku", bad, check=2)
        assert p.stderr.startswith("gpuvet: results: --sku") and p.stderr.count("\n") == 1
    p = gpuvet("results", "tag", u, check=2)
    assert "tag needs --provider, --sku, --region or --custom" in p.stderr
    gpuvet("results", "tag", "zzzz9999", "--sku", "x", check=2)
    gpuvet("results", "tag", "--sku", "x", check=2)
    gpuvet("results", "list", "--provider", "aws", check=2)
    assert gpuvet.json("results", "list", "--json")[0] == before     # nothing changed by the refusals
