"""The shipped price catalogs as files (issue 36): the AWS catalog is the output of
contrib/prices/skypilot_aws.py over the SkyPilot copy shipped beside it, covers every region
of that file with on-demand per region and spot per zone, and no shipped file has a duplicate
key or a GPU model common/gpus.c does not know."""
import csv
import hashlib
import os
import re
import subprocess
import sys
from collections import Counter, defaultdict
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent.parent
CATALOG = ROOT / "pricing" / "catalog"
CONTRIB = ROOT / "contrib" / "prices"
INPUT = CONTRIB / "skypilot-catalog-v9" / "aws-vms-nvidia.csv"
INPUT_SHA256 = "cc42e49b154337387582e7a8d0aebfdbb1422bdbb7f2399e1d9245b0f609ea0e"
KEY = ("provider", "instance_type", "region", "zone", "market", "term", "source")


def rows_of(name):
    lines = [l for l in (CATALOG / name).read_text().splitlines() if l and not l.startswith("#")]
    return list(csv.DictReader(lines))


def gpu_keys():
    """The keys of common/gpus.c's datasheet rows and of its references."""
    text = (ROOT / "common" / "gpus.c").read_text()
    refs = text[text.index("gpu_refs[] = {"):text.index("gpu_refs_count")]
    one = text[text.index("gpu_references[] = {"):text.index("gpu_references_count")]
    return set(re.findall(r'\.key = "([^"]+)"', refs)), set(re.findall(r'\.key = "([^"]+)"', one))


def test_script_reproduces_the_shipped_aws_catalog():
    """pricing/catalog/aws.csv is exactly what the data-prep script makes of the shipped copy."""
    p = subprocess.run([sys.executable, str(CONTRIB / "skypilot_aws.py"), str(INPUT)], capture_output=True,
                       text=True, check=True)
    assert p.stdout == (CATALOG / "aws.csv").read_text()
    assert "left out: 7 types without a gpus.c row, 5 fractional types" in p.stderr


def test_shipped_input_is_the_pinned_skypilot_file():
    """The copy under contrib/ is the file SOURCE.md describes (and the shared one, when present)."""
    data = INPUT.read_bytes()
    assert hashlib.sha256(data).hexdigest() == INPUT_SHA256
    assert data.count(b"\n") == 1734
    for shared in (ROOT.parent / "shared", ROOT.parent.parent / "shared"):
        f = shared / "data" / "skypilot-catalog-v9" / "aws-vms-nvidia.csv"
        if f.is_file():
            assert f.read_bytes() == data
            return
    pytest.skip("no shared copy of the SkyPilot file on this machine (the shipped copy was checked)")


def test_aws_catalog_regions_markets_and_zones():
    rows = rows_of("aws.csv")
    assert {r["source_version"] for r in rows} == {"skypilot-catalog@3e9a1751"}
    regions = defaultdict(Counter)
    for r in rows:
        regions[r["region"]][r["market"]] += 1
    assert len(regions) == 23
    assert all(c["on_demand"] > 0 for c in regions.values())
    assert sum(1 for c in regions.values() if c["spot"] > 0) == 23
    assert regions["us-east-1"] == Counter(on_demand=49, spot=203)
    assert regions["eu-west-1"] == Counter(on_demand=20, spot=54)
    # on-demand: one per type and region, no zone; spot: one per zone, its zone kept, in its region
    assert all(r["zone"] == "" for r in rows if r["market"] == "on_demand")
    assert all(r["zone"] for r in rows if r["market"] == "spot")
    p5 = {r["zone"]: float(r["price"]) for r in rows
          if r["instance_type"] == "p5.48xlarge" and r["region"] == "us-east-1" and r["market"] == "spot"}
    assert p5 == {"use1-atl2-az1": 10.1808, "use1-az1": 55.04, "use1-az2": 19.197, "use1-az3": 18.766,
                  "use1-az4": 55.04, "use1-az5": 22.9825, "use1-az6": 17.2517}
    # the 36 us-east-1 on-demand prices of the Karpenter snapshot it replaces are unchanged
    od = {r["instance_type"]: float(r["price"]) for r in rows if r["region"] == "us-east-1"
          and r["market"] == "on_demand"}
    assert (od["p5.48xlarge"], od["p5.4xlarge"], od["p4d.24xlarge"], od["g5.xlarge"]) == (55.04, 6.88, 21.957642,
                                                                                       1.006)
    # p5e (Capacity Blocks) has no on-demand price: its spot prices ship alone; fractions and unknown GPUs are out
    p5e = [r for r in rows if r["instance_type"] == "p5e.48xlarge"]
    assert len(p5e) == 4 and {r["market"] for r in p5e} == {"spot"}
    types = {r["instance_type"] for r in rows}
    assert not {t for t in types if t.startswith(("g6f.", "gr6f.", "g7e.", "p6-b300."))}
    assert {"g5g.xlarge", "gr6.4xlarge", "p3dn.24xlarge", "p6-b200.48xlarge"} <= types


@pytest.mark.parametrize("name", ["aws.csv", "lambda.csv", "alibaba.csv"])
def test_shipped_catalog_keys_and_models(name):
    rows = rows_of(name)
    source = "catalog:" + name[:-4]
    keys = Counter(tuple(r.get(k) or (source if k == "source" else "") for k in KEY) for r in rows)
    dup = [k for k, n in keys.items() if n > 1]
    assert not dup, dup[:5]
    per_region = Counter((r["provider"], r["region"]) for r in rows)
    assert per_region and all(n > 0 for n in per_region.values())
    datasheet, reference = gpu_keys()
    models = {r["gpu_model"] for r in rows}
    assert models <= datasheet, models - datasheet
    assert models <= reference, models - reference
