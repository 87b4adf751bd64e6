#!/usr/bin/env python3
"""Turns SkyPilot's AWS VM catalog into gpuvet's price CSV (pricing/catalog/aws.csv).

    python3 contrib/prices/skypilot_aws.py [INPUT] > pricing/catalog/aws.csv

INPUT defaults to the copy shipped beside this script
(contrib/prices/skypilot-catalog-v9/aws-vms-nvidia.csv: the NVIDIA rows of
skypilot-org/skypilot-catalog catalogs/v9/aws/vms.csv at commit 3e9a1751, byte
for byte; its SOURCE.md says how they were taken).  The output is
deterministic: tests/integration/test_price_catalog_aws.py runs this script and
compares its output with the shipped file byte for byte.

What it writes, per NVIDIA GPU instance type the file has:
  * one on_demand row per region (the file repeats the region's price on each
    of its zones; a region whose zones disagree is an error);
  * one spot row per availability zone that has a spot price, zone kept
    (Local Zones such as use1-atl2-az1 stay under their parent region, as in
    the source);
  * GPU model as common/gpus.c names it (MODELS below), GPU count, the GPU's
    marketed memory in GiB (as the other shipped catalogs and gpus.c give it),
    vCPUs and memory.

What it leaves out, and says so on stderr and in the file's header:
  * types whose GPU has no row in common/gpus.c (SKIP_MODELS): nothing could
    be estimated or checked against them;
  * fractional GPUs (g6f, gr6f: 1/8 to 1/2 of an L4): gpuvet prices whole GPUs
    (pricing/catalog.h, price_rec.gpu_count 1..64);
  * on-demand prices the file does not have (p5e.48xlarge is sold through
    Capacity Blocks: its spot prices ship alone) and zones without a spot price.
"""
import argparse
import ast
import csv
import io
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEFAULT_INPUT = HERE / "skypilot-catalog-v9" / "aws-vms-nvidia.csv"
COMMIT = "3e9a1751b1edfb3592877f242c2f8dc10fc1fc6e"
SOURCE_VERSION = "skypilot-catalog@" + COMMIT[:8]
# The commit's own date is not known here (the copy was read through a file index
# that gives no dates); this is the day the rows were copied into gpuvet.
CAPTURED_AT = "2026-11-25"

# SkyPilot's AcceleratorName -> (common/gpus.c key, marketed GiB per GPU)
MODELS = {
    "T4": ("T4", 16),
    "T4g": ("T4", 16),          # NVIDIA T4G: the T4 (TU104, 16 GB) on Graviton hosts (g5g)
    "A10G": ("A10G", 24),
    "L4": ("L4", 24),
    "L40S": ("L40S", 48),
    "V100": ("V100-SXM2-16", 16),
    "V100-32GB": ("V100-SXM2-32", 32),
    "A100": ("A100-40-SXM", 40),
    "A100-80GB": ("A100-80-SXM", 80),
    "H100": ("H100-SXM", 80),
    "H200": ("H200", 141),
    "B200": ("B200", 180),
}
# GPUs with no row in common/gpus.c yet: their types are left out, named.
SKIP_MODELS = {"RTX PRO Server 6000", "B300"}

HEADER = ("provider,instance_type,region,zone,gpu_model,gpu_count,gpu_memory_gib,vcpus,memory_gib,"
          "market,price,unit,currency,source_version,captured_at")


def natural(s):
    return [int(t) if t.isdigit() else t.lower() for t in re.split(r"(\d+)", s)]


def whole(text, what, itype):
    v = float(text)
    if v != int(v):
        raise SystemExit(f"{itype}: {what} {text} is not a whole number")
    return str(int(v))


def read_rows(path):
    with open(path, newline="", encoding="ascii") as f:
        return list(csv.DictReader(f))


def shape(r):
    """The instance type's constant columns, as gpuvet's CSV writes them."""
    info = ast.literal_eval(r["GpuInfo"])
    if any(g.get("Manufacturer") != "NVIDIA" for g in info.get("Gpus", [])):
        raise SystemExit(f"{r['InstanceType']}: not an NVIDIA GPU")
    model, mem = MODELS[r["AcceleratorName"]]
    it = r["InstanceType"]
    return (model, whole(r["AcceleratorCount"], "AcceleratorCount", it), str(mem),
            whole(r["vCPUs"], "vCPUs", it), "%g" % float(r["MemoryGiB"]))


def convert(rows):
    """(csv rows, notes): notes name what was left out and why."""
    od = {}       # (type, region) -> price text
    spot = {}     # (type, region, zone) -> price text
    shapes = {}
    left = {"model": set(), "fraction": set(), "no_od": set(), "no_spot": 0}
    for r in rows:
        it, name = r["InstanceType"], r["AcceleratorName"]
        if name in SKIP_MODELS:
            left["model"].add(f"{it} ({name})")
            continue
        if name not in MODELS:
            raise SystemExit(f"{it}: GPU '{name}' is neither in MODELS nor in SKIP_MODELS")
        if float(r["AcceleratorCount"]) < 1:
            left["fraction"].add(f"{it} ({r['AcceleratorCount']} {name})")
            continue
        s = shape(r)
        if shapes.setdefault(it, s) != s:
            raise SystemExit(f"{it}: its shape differs between rows")
        key = (it, r["Region"])
        if r["Price"]:
            if od.setdefault(key, r["Price"]) != r["Price"]:
                raise SystemExit(f"{it} {r['Region']}: two on-demand prices")
        else:
            left["no_od"].add(f"{it} {r['AvailabilityZone']}")
        if r["SpotPrice"]:
            zkey = key + (r["AvailabilityZone"],)
            if zkey in spot:
                raise SystemExit(f"{it} {r['AvailabilityZone']}: two spot prices")
            spot[zkey] = r["SpotPrice"]
        else:
            left["no_spot"] += 1
    out = []
    for (it, region), price in od.items():
        out.append((it, region, "", "on_demand", price))
    for (it, region, zone), price in spot.items():
        out.append((it, region, zone, "spot", price))
    out.sort(key=lambda t: (natural(t[0]), t[1], t[3] != "on_demand", t[2]))
    lines = []
    for it, region, zone, market, price in out:
        model, count, mem, vcpus, ram = shapes[it]
        lines.append(",".join(("aws", it, region, zone, model, count, mem, vcpus, ram, market, price, "hour",
                               "USD", SOURCE_VERSION, CAPTURED_AT)))
    return lines, left


def render(rows):
    lines, left = convert(rows)
    regions = sorted({l.split(",")[2] for l in lines})
    n_od = sum(1 for l in lines if ",on_demand," in l)
    head = [
        "# AWS EC2 GPU instances (NVIDIA), Linux, USD per instance-hour: on_demand per region, spot per availability zone.",
        f"# Source: skypilot-org/skypilot-catalog catalogs/v9/aws/vms.csv at commit {COMMIT};",
        "# generated by contrib/prices/skypilot_aws.py from the copy in contrib/prices/skypilot-catalog-v9/"
        " (do not edit by hand); see pricing/catalog/README.md.",
        f"# {n_od} on_demand rows, {len(lines) - n_od} spot rows, {len(regions)} regions.",
        "# Left out (no row in common/gpus.c): " + ", ".join(sorted(left["model"], key=natural)) + ".",
        "# Left out (a fraction of a GPU): " + ", ".join(sorted(left["fraction"], key=natural)) + ".",
        "# No on_demand price in the source (Capacity Blocks), spot only: "
        + ", ".join(sorted(left["no_od"], key=natural)) + ".",
        HEADER,
    ]
    return "\n".join(head + lines) + "\n", left


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("input", nargs="?", default=str(DEFAULT_INPUT))
    ap.add_argument("-o", "--output", help="write here instead of stdout")
    a = ap.parse_args()
    text, left = render(read_rows(a.input))
    if a.output:
        Path(a.output).write_text(text)
    else:
        sys.stdout.write(text)
    print(f"left out: {len(left['model'])} types without a gpus.c row, {len(left['fraction'])} fractional types;"
          f" {len(left['no_od'])} zones without an on-demand price (spot kept), {left['no_spot']} zones without"
          " a spot price", file=sys.stderr)


if __name__ == "__main__":
    main()
