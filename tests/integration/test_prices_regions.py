"""Prices a buyer compares (issue 36): AWS in every region of the shipped catalog, spot per zone
(the lowest and the median zone of each region, marked interruptible), a ranking by spot in the
region of each type's lowest zone, a run priced where it ran or saying where it was priced
instead, and the age of the prices used."""
import json
import statistics

import pytest

from conftest import FIXTURES

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
    for col in ("REGION", "LOWEST $/H", "LOWEST ZONE", "MEDIAN $/H", "MEDIAN ZONE", "ZONES"):
        assert col in head, head
    line = next(l for l in p.stdout.splitlines() if "p5.48xlarge" in l and "us-east-1" in l)
    assert "10.1808" in line and "use1-atl2-az1" in line and "19.1970" in line and "use1-az2" in line
    assert "interruptible" in p.stderr
