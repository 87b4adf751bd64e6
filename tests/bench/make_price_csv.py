#!/usr/bin/env python3
"""make_price_csv.py - writes a large AWS-format EC2 price list for price_csv_bench.sh.

  make_price_csv.py OUT MB [--mix region|gpu|kept] [--gpu-share PCT]

The preamble, the 91-column header and the base rows are those of
tests/fixtures/pricing/aws-ec2-us-east-1.csv (see its README for provenance).
Every instance type gets the rows AWS publishes for it, modelled as the
cross-product of the filter columns gpuvet reads:

  OnDemand: 12 operating-system/pre-installed-software pairs (Linux and Windows
            with NA, SQL Web, SQL Std, SQL Ent; RHEL, Red Hat Enterprise Linux
            with HA, SUSE, Ubuntu Pro with NA) x tenancy Shared/Dedicated/Host
            x CapacityStatus Used/UnusedCapacityReservation/
            AllocatedCapacityReservation                           = 108 rows
  Reserved: the same 12 pairs x tenancy Shared/Dedicated x 1yr/3yr x
            standard/convertible x No Upfront (1 row), Partial and All
            Upfront (2 rows each: the hourly rate and the upfront fee) = 480 rows

so 588 rows per type, of which exactly one (OnDemand, Linux, NA, Shared, Used)
is a price gpuvet keeps.  This is a model of the real file, not a copy of it:
the real one varies per type (not every type has every tenancy or term).

--mix region (default): GPU_SHARE percent of the instance types are GPU types
   (default 5.0: 69 of the 1367 types in Karpenter's generated us-east-1 table,
   aws/karpenter-provider-aws pkg/providers/pricing/zz_generated.pricing_aws.go
   at commit 6fc13b52, are g*/p* GPU types); rows of all types interleaved in a
   seeded random order, as the real file orders rows by SKU.
--mix gpu: every instance type is a GPU type (the same 588 rows each).
--mix kept: every row is a kept GPU price (the worst case for the parser:
   libcsv parses every byte; no real price list looks like this).
"""
import argparse
import csv
import io
import os
import random

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURE = os.path.join(HERE, "..", "fixtures", "pricing", "aws-ec2-us-east-1.csv")

OS_SW = [("Linux", sw) for sw in ("NA", "SQL Web", "SQL Std", "SQL Ent")] + \
        [("Windows", sw) for sw in ("NA", "SQL Web", "SQL Std", "SQL Ent")] + \
        [(o, "NA") for o in ("RHEL", "Red Hat Enterprise Linux with HA", "SUSE", "Ubuntu Pro")]
# how AWS names the OS in reserved-instance descriptions
RI_OS = {"Linux": "Linux/UNIX", "RHEL": "Red Hat Enterprise Linux", "SUSE": "SUSE Linux",
         "Windows": "Windows", "Red Hat Enterprise Linux with HA": "Red Hat Enterprise Linux with HA",
         "Ubuntu Pro": "Ubuntu Pro"}
USAGE = {"Shared": "BoxUsage", "Dedicated": "DedicatedUsage", "Host": "HostUsage"}


def read_fixture():
    lines = open(FIXTURE, newline="").read().splitlines(keepends=True)
    head = "".join(lines[:6])
    cols = next(csv.reader([lines[5]]))
    rows = [dict(zip(cols, r)) for r in csv.reader(lines[6:])]
    other = next(r for r in rows if r["Instance Family"] != "GPU instance")
    gpus = [r for r in rows if r["Instance Family"] == "GPU instance" and r["SKU"] <= "GPUVETFIXTURE003"]
    return head, cols, other, gpus


def variants(base, itype):
    """the 588 rows of one instance type, (row, kept)"""
    out = []
    price = base["PricePerUnit"]
    for os_, sw in OS_SW:
        osdesc = os_ if sw == "NA" else "%s with %s" % (os_, sw)
        for ten in ("Shared", "Dedicated", "Host"):
            for cap in ("Used", "UnusedCapacityReservation", "AllocatedCapacityReservation"):
                d = dict(base)
                d.update({"TermType": "OnDemand", "Operating System": os_, "Pre Installed S/W": sw,
                          "Tenancy": ten, "CapacityStatus": cap, "Instance Type": itype,
                          "usageType": "%s:%s" % (USAGE[ten] if cap == "Used" else "UnusedBox", itype),
                          "PriceDescription": "$%s per %s %s %s Instance Hour" % (
                              price, "On Demand" if cap == "Used" else "Unused Reservation", osdesc, itype)})
                out.append((d, os_ == "Linux" and sw == "NA" and ten == "Shared" and cap == "Used"))
        for ten in ("Shared", "Dedicated"):
            for lease in ("1yr", "3yr"):
                for cls in ("standard", "convertible"):
                    for purchase, nrows in (("No Upfront", 1), ("Partial Upfront", 2), ("All Upfront", 2)):
                        for k in range(nrows):
                            d = dict(base)
                            fee = k == 1
                            d.update({"TermType": "Reserved", "Operating System": os_,
                                      "Pre Installed S/W": sw, "Tenancy": ten, "CapacityStatus": "Used",
                                      "Instance Type": itype, "LeaseContractLength": lease,
                                      "OfferingClass": cls, "PurchaseOption": purchase,
                                      "Unit": "Quantity" if fee else "Hrs",
                                      "PriceDescription": "Upfront Fee" if fee else
                                      "%s (Amazon VPC), %s reserved instance applied" % (RI_OS[os_], itype)})
                            out.append((d, False))
    return out


def render(cols, d):
    s = io.StringIO()
    csv.writer(s, quoting=csv.QUOTE_ALL, lineterminator="\n").writerow([d[c] for c in cols])
    return s.getvalue().encode()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("mb", type=int)
    ap.add_argument("--mix", choices=("region", "gpu", "kept"), default="region")
    ap.add_argument("--gpu-share", type=float, default=5.0)
    a = ap.parse_args()
    head, cols, other, gpus = read_fixture()
    rng = random.Random(1)
    rows = []
    if a.mix == "kept":
        for g in gpus:
            rows += [render(cols, d) for d, kept in variants(g, g["Instance Type"]) if kept]
    else:
        ntypes = 100
        ngpu = ntypes if a.mix == "gpu" else max(1, round(ntypes * a.gpu_share / 100))
        for t in range(ntypes):
            base = gpus[t % len(gpus)] if t < ngpu else other
            # GPU types keep their real names (the parser must know the family);
            # the other types are named c6i<t>.large so each is its own type
            itype = base["Instance Type"] if t < ngpu else "%s%d.%s" % (
                base["Instance Type"].split(".")[0], t, base["Instance Type"].split(".")[1])
            rows += [render(cols, d) for d, kept in variants(base, itype)]
        rng.shuffle(rows)
    block = b"".join(rows)
    target = a.mb * 1000 * 1000
    with open(a.out, "wb") as f:
        f.write(head.encode())
        written = 0
        while written < target:
            f.write(block)
            written += len(block)


if __name__ == "__main__":
    main()
