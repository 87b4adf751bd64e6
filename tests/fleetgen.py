"""A fleet's fingerprints made from the real captures (tests/fixtures/gpu/), for the
fleet-scale tests and benchmarks (issue 17): one builder, so every figure and test
imports the same fingerprints.

    captures()            the real fingerprints of 2026-11-22 with 30-60 s soaks (a fleet's quick
                          runs; later captures stay out, so the fleet-scale figures stay comparable)
    fleet(n)              n copies of them in turn, each under a fresh uuid (a generator)
    write_array(path, n)  those n as one JSON array, written element by element

From a shell (`python3 tests/fleetgen.py --help`):

    python3 tests/fleetgen.py --runs 3000 -o fleet.json
    build/gpuvet results import fleet.json
"""
import argparse
import json
import sys
import uuid
from pathlib import Path

CAPTURES = Path(__file__).resolve().parent / "fixtures" / "gpu"


def captures():
    out = []
    for p in sorted(CAPTURES.glob("*-2026-11-22/**/*.json")):
        d = json.loads(p.read_text())
        if isinstance(d, dict) and d.get("schema") == "gpuvet.fingerprint/1" and "soak-300s" not in p.name:
            out.append(d)
    assert out, f"no fingerprints under {CAPTURES}"
    return out


def fleet(n, samples=True, seed=None):
    seed = seed or captures()
    for i in range(n):
        d = json.loads(json.dumps(seed[i % len(seed)]))
        d["run"]["uuid"] = str(uuid.uuid4())
        d["run"].pop("id", None)
        if not samples:
            d["samples"] = []
        yield d


def write_array(path, n, seed=None, samples=True):
    with (open(path, "w") if path != "-" else sys.stdout) as f:
        f.write("[")
        for i, d in enumerate(fleet(n, samples=samples, seed=seed)):
            f.write(",\n" if i else "\n")
            json.dump(d, f)
        f.write("\n]\n")


def main(argv=None):
    ap = argparse.ArgumentParser(
        prog="tests/fleetgen.py",
        description="Write a fleet of gpuvet fingerprints made from the real captures of tests/fixtures/gpu/ "
                    "(2026-11-22, each under a fresh uuid, in turn) as one JSON array, for `gpuvet results import`.",
        epilog="example: python3 tests/fleetgen.py --runs 3000 -o fleet.json && build/gpuvet results import fleet.json")
    ap.add_argument("--runs", "-n", type=int, required=True, metavar="N", help="fingerprints to write (1 or more)")
    ap.add_argument("--output", "-o", default="-", metavar="FILE", help="where to write the array (default: stdout)")
    ap.add_argument("--no-samples", action="store_true", help="leave out the time series (a smaller file)")
    a = ap.parse_args(argv)
    if a.runs < 1:
        ap.error("--runs must be 1 or more")
    write_array(a.output, a.runs, samples=not a.no_samples)
    return 0


if __name__ == "__main__":
    sys.exit(main())
