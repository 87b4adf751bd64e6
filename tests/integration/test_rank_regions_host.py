"""Regions not pooled under one label, host figures not estimated from other machines (issue 58 items
7 and 9), on the real steady-state H100 captures (tests/fixtures/gpu/h100-2026-11-25/fidelity-1):

- item 7: a type whose runs came from two regions names both, with their run counts, in `rank` and
  `rank --json` (`run_regions`), and is priced where most of them ran;
- item 9: a host figure (host memory bandwidth) is never estimated for another instance type from
  runs of the same GPU model, nor scaled by the GPU count: `rank --estimates` lists every other type
  as without an estimate, with why, while a GPU figure is still estimated.

On c4fdb45 both failed: one region named (the first run's), and p5.48xlarge got 8 x the one-GPU
machine's host bandwidth."""
import json

from conftest import FIXTURES

FID = FIXTURES / "gpu" / "h100-2026-11-25" / "fidelity-1"


def tagged(gpuvet, tmp_path, name, region, edit=None):
    fp = json.loads((FID / name).read_text())
    if edit:
        edit(fp)
    f = tmp_path / f"{region}-{name}"
    f.write_text(json.dumps(fp))
    gpuvet("results", "import", f, "--provider", "aws", "--sku", "p5.4xlarge", "--region", region, check=0)


def test_a_type_measured_in_two_regions_names_both(gpuvet, tmp_path):
    tagged(gpuvet, tmp_path, "quick-1.json", "us-east-1")           # the first run: one region
    for i in (2, 3, 4, 5):                                           # most runs: another
        tagged(gpuvet, tmp_path, f"quick-{i}.json", "us-west-2")
    row = gpuvet.json("rank", "--json")["rows"][0]
    assert row["run_regions"] == [{"region": "us-west-2", "runs": 4}, {"region": "us-east-1", "runs": 1}]
    assert row["region"] == "us-west-2" and row["run_region"] == "us-west-2" and row["runs"] == 5
    text = gpuvet("rank", check=0).stdout
    assert "     runs in us-west-2 (4), us-east-1 (1); priced in us-west-2" in text.splitlines()


def test_host_memory_bandwidth_is_never_estimated_from_another_type(gpuvet, tmp_path):
    def host(fp):   # the capture has no host bench: its metric added as the host bench would report it
        fp["metrics"].append({"bench": "host", "name": "host.membw.triad.gbps", "gpu": -1, "value": 99.03,
                              "unit": "GB/s", "params": None})
        fp["benches"].append({"name": "host", "status": "ok", "reason": None, "duration_s": 5, "config": None})
    tagged(gpuvet, tmp_path, "quick-1.json", "us-east-1", host)
    r = gpuvet.json("rank", "--metric", "host.membw.triad.gbps", "--estimates", "--json")
    assert [(x["instance_type"], x["estimate"]) for x in r["rows"]] == [("p5.4xlarge", False)]
    assert r["rows"][0]["value"] == 99.03
    why = {(u["provider"], u["instance_type"]): u["why"] for u in r["unranked"]}
    assert "host.membw.triad.gbps is the host's" in why[("aws", "p5.48xlarge")]
    text = gpuvet("rank", "--metric", "host.membw.triad.gbps", "--estimates", check=0).stdout
    assert "792" not in text and "host.membw.triad.gbps is the host's" in text
    assert max(len(ln) for ln in text.splitlines()) <= 160 or "--wide" in text
    # a GPU figure is still estimated from the same runs
    g = gpuvet.json("rank", "--estimates", "--json")
    assert any(x["instance_type"] == "p5.48xlarge" and x["estimate"] for x in g["rows"])
