#!/usr/bin/env python3
"""`accept` and `results show` of a run of a million metrics: peak memory and seconds (issue 57 item 4).

The real H100 quick capture with synthetic rows up to ROWS metric rows (tests/helpers.py
metric_heavy_fp), imported once into a fresh store; then each command, its peak resident memory
(the child's ru_maxrss) and wall seconds.  The typed run (results/fprun.h) holds a metric in about
100 bytes with its name, where a jansson tree took about 1.4 KB: the target is under 256 MiB.  With
--peer BIN the same commands of another build (c4fdb45's, say) on the same store, beside them.

    GPUVET_BIN=build/gpuvet tests/bench/million_metrics.py [--rows 1000000] [--peer OLD_BIN]

A measurement, not a test: it prints a table and exits 0.
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

COMMANDS = {"accept": ("accept",), "accept --json": ("accept", "--json"), "results show": ("results", "show", "1")}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=1000000)
    ap.add_argument("--peer", help="another gpuvet binary to measure on the same store")
    a = ap.parse_args()
    bins = [("gpuvet", os.environ.get("GPUVET_BIN", "build/gpuvet"))] + ([("peer", a.peer)] if a.peer else [])
    with tempfile.TemporaryDirectory() as t:
        d = Path(t)
        env = dict(os.environ, GPUVET_NO_METADATA="1", XDG_DATA_HOME=str(d / "xdg"))
        env.pop("GPUVET_DB", None)
        fp = metric_heavy_fp(0)
        fp = metric_heavy_fp(a.rows - len(fp["metrics"]))
        (d / "fp.json").write_text(json.dumps(fp))
        del fp
        g = Gpuvet(d / "s.db", env)
        os.environ["GPUVET_BIN"] = bins[0][1]
        rc, _, err, rss, took = measured(g, "results", "import", d / "fp.json", timeout=3600)
        assert rc == 0, err
        print(f"{'binary':<8} {'command':<16} {'metrics':>9} {'seconds':>9} {'peak MiB':>9}")
        print(f"{'gpuvet':<8} {'results import':<16} {a.rows:>9} {took:9.2f} {rss / 2**20:9.1f}", flush=True)
        for who, path in bins:
            os.environ["GPUVET_BIN"] = path
            for name, args in COMMANDS.items():
                rc, _, err, rss, took = measured(g, *args, timeout=3600)
                assert rc in (0, 1, 3), (who, name, rc, err[-300:])
                print(f"{who:<8} {name:<16} {a.rows:>9} {took:9.2f} {rss / 2**20:9.1f}", flush=True)


if __name__ == "__main__":
    main()
