#!/usr/bin/env python3
"""contention_summary.py DIR - the verdict of tests/gpu/session.sh's contention step.

Reads DIR/clean-N.json and DIR/loaded-N.json (gpuvet fingerprints of `run --bench
gemm,soak`), prints each run's flags with the CONTENTION evidence, writes DIR/summary.json.
Expected (issue 4): no CONTENTION in any clean run, CONTENTION in every loaded run.
Exit 0 as expected, 1 not, 2 a run is missing or its GPU benches did not run."""
import json
import sys
from pathlib import Path


def load(path):
    fp = json.loads(path.read_text())
    benches = {b["name"]: b["status"] for b in fp.get("benches", [])}
    flags = fp.get("flags", [])
    cont = [f for f in flags if f.get("code") == "CONTENTION"]
    return {
        "file": path.name,
        "benches": benches,
        "flags": sorted({f.get("code", "?") for f in flags}),
        "contention": cont[0] if cont else None,
    }


def main(argv):
    if len(argv) != 2:
        print(__doc__.split("\n")[0], file=sys.stderr)
        return 2
    d = Path(argv[1])
    runs = {"clean": [], "loaded": []}
    for kind in runs:
        for i in (1, 2, 3):
            p = d / f"{kind}-{i}.json"
            if not p.exists():
                print(f"contention_summary: {p} is missing", file=sys.stderr)
                return 2
            runs[kind].append(load(p))
    bad_bench = [(r["file"], b, r["benches"].get(b, "missing")) for k in runs for r in runs[k]
                 for b in ("gemm", "soak") if r["benches"].get(b) != "ok"]
    for f, b, s in bad_bench:
        print(f"contention_summary: {f}: bench {b} {s}", file=sys.stderr)
    ok = not bad_bench
    for kind, want in (("clean", False), ("loaded", True)):
        for r in runs[kind]:
            got = r["contention"] is not None
            r["as_expected"] = got == want
            ok = ok and r["as_expected"]
            ev = r["contention"].get("evidence") if got else None
            print(f"{r['file']:<14} flags: {','.join(r['flags']) or '-':<40} "
                  f"CONTENTION: {'yes' if got else 'no'} (expected {'yes' if want else 'no'})"
                  + (f" evidence {json.dumps(ev)}" if ev else ""))
    (d / "summary.json").write_text(json.dumps({"as_expected": ok, "runs": runs}, indent=1))
    if bad_bench:
        return 2
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
