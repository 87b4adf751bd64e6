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


def test_tag_custom_takes_the_machines_name(gpuvet):
    """`results tag N --custom NAME` (issue 40 item 4): a new user's first guess names the machine;
    where the words cannot be read that way, the error says how to name it."""
    gpuvet("results", "import", *RUNS, check=0)
    u = uuids()
    p = gpuvet("results", "tag", u[0][:8], "--custom", "myh200", check=0)
    assert "provider custom:myh200" in p.stdout
    gpuvet("results", "tag", "--custom", "myh200", u[1][:8], "--sku", "box1", check=0)   # either order
    runs = {r["uuid"]: r for r in gpuvet.json("results", "list", "--json")}
    assert runs[u[0]]["provider"] == "custom:myh200"
    assert (runs[u[1]]["provider"], runs[u[1]]["instance_type"]) == ("custom:myh200", "box1")
    # the same as --provider NAME --custom, which still works
    gpuvet("results", "tag", u[2][:8], "--provider", "myh200", "--custom", check=0)
    assert gpuvet.json("results", "show", u[2])["run"]["provider"] == "custom:myh200"
    # two names, or two runs: refused, one line saying how, nothing changed
    for args in (("--custom", "a", "--provider", "b"), (u[1][:8], "--custom")):
        p = gpuvet("results", "tag", u[0][:8], *args, check=2)
        err = p.stderr.strip()
        assert "\n" not in err and "custom:NAME" in err, err
    assert gpuvet.json("results", "show", u[0])["run"]["provider"] == "custom:myh200"
