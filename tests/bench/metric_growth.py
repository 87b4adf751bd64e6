#!/usr/bin/env python3
"""How report, accept, results show and cost grow with a run's metrics (issue #47 item 3).

For runs of 5,000, 25,000 and 100,000 extra metrics (the real H100 quick capture plus synthetic
rows: tests/helpers.py metric_heavy_fp), each in a fresh store, it times each command and its
peak memory, and prints the growth against the 5,000-metric run as ratios: linear passes grow
about as the metrics do (x5, x20); a pass per metric over the run grows as their square (x25, x400).

    GPUVET_BIN=build/gpuvet tests/bench/metric_growth.py [--sizes 5000,25000,100000]
"""
import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from conftest import Gpuvet  # noqa: E402
from helpers import measured, metric_heavy_fp  # noqa: E402

COMMANDS = {
    "report": lambda d: ("report", "-o", d / "r.html"),
    "accept": lambda d: ("accept",),
    "show": lambda d: ("results", "show", "1"),
    "cost": lambda d: ("cost", "--model", "llama-3.1-8b", "--tokens", "1e9"),
}


def one(n):
    with tempfile.TemporaryDirectory() as t:
        d = Path(t)
        env = dict(os.environ, GPUVET_NO_METADATA="1", XDG_DATA_HOME=str(d / "xdg"))
        env.pop("GPUVET_DB", None)
        g = Gpuvet(d / "s.db", env)
        (d / "fp.json").write_text(json.dumps(metric_heavy_fp(n)))
        g("results", "import", d / "fp.json", check=0, timeout=3600)
        g("results", "tag", "1", "--provider", "aws", "--sku", "p5.4xlarge", "--region", "us-east-1", check=0)
        out = {}
        for name, args in COMMANDS.items():
            rc, _, err, rss, took = measured(g, *args(d), timeout=3600)
            assert rc in (0, 1), (name, rc, err)
            out[name] = (took, rss)
        return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="5000,25000,100000")
    sizes = [int(s) for s in ap.parse_args().sizes.split(",")]
    res = {n: one(n) for n in sizes}
    base = sizes[0]
    print("%-8s %9s %8s" % ("command", "metrics", "x rows") + "%10s %8s %9s %8s" % ("seconds", "x time", "MiB", "x mem"))
    for name in COMMANDS:
        for n in sizes:
            t, m = res[n][name]
            t0, m0 = res[base][name]
            print("%-8s %9d %8.1f %10.2f %8.1f %9.1f %8.1f" % (name, n, n / base, t, t / t0, m / 2**20, m / m0))


if __name__ == "__main__":
    main()
