#!/usr/bin/env python3
"""Repeatability of gpuvet's headline GPU figures (issue 12's `session.sh fidelity`).

    fidelity.py DIR [--gemm-cv PCT] [--copy-cv PCT] [--profile-gap PCT] [--quick-wall S]

Reads DIR/quick-N.json (N = 1, 2, ...: repeats of `run --bench gemm,memcpy --json`),
and, when present, DIR/standard*.json (`run --profile standard --bench gemm`, interleaved
with the quick runs; quick / standard compares the medians) and
DIR/quick-wall.json ({"seconds": S} of a whole `run --profile quick`).  Writes
DIR/fidelity.json: per instance-level metric (gpu -1) the values, mean and
coefficient of variation (sample standard deviation / mean, in %); the quick /
standard ratio of every gemm.<dtype>.tflops; the quick profile's wall time.

Exit 1 when a GEMM dtype's CV is over --gemm-cv (1 %), a pinned copy's over
--copy-cv (2 %), quick and standard differ by more than --profile-gap (2 %), or
the quick profile took --quick-wall (60 s) or more; 2 when the runs cannot be
read or a GPU bench did not run; else 0.
"""
import argparse
import json
import statistics
import sys
from pathlib import Path


def die(msg):
    print(f"fidelity.py: {msg}", file=sys.stderr)
    raise SystemExit(2)


def load(path):
    try:
        fp = json.loads(Path(path).read_text())
    except (OSError, ValueError) as e:
        die(f"cannot read {path}: {e}")
    if not isinstance(fp, dict) or not isinstance(fp.get("metrics"), list):
        die(f"{path} is not a gpuvet fingerprint")
    for b in fp.get("benches", []):
        if b.get("name") in ("gemm", "memcpy") and b.get("status") != "ok":
            die(f"{path}: bench {b['name']} {b.get('status')}: {b.get('reason')}")
    return fp


def headline(fp):
    """Instance-level (gpu -1) gemm and memcpy figures of one fingerprint."""
    return {m["name"]: m["value"] for m in fp["metrics"]
            if m.get("gpu") == -1 and isinstance(m.get("value"), (int, float))
            and (m["name"].startswith("gemm.") and m["name"].endswith(".tflops")
                 or m["name"].startswith("memcpy.") and m["name"].endswith(".gbps"))}


def limit_for(name, a):
    if name.startswith("gemm.") and ".best_shape." not in name:
        return a.gemm_cv
    if name.startswith("memcpy.") and ".pinned." in name:
        return a.copy_cv
    return None


def judge(d, a):
    runs = sorted(d.glob("quick-[0-9]*.json"), key=lambda p: int(p.stem.split("-")[1]))
    if len(runs) < 2:
        die(f"{d}: need at least two quick-N.json repeats, found {len(runs)}")
    values = {}
    for p in runs:
        for k, v in headline(load(p)).items():
            values.setdefault(k, []).append(v)
    out = {"runs": [p.name for p in runs], "limits": {"gemm_cv_pct": a.gemm_cv, "copy_cv_pct": a.copy_cv,
           "profile_gap_pct": a.profile_gap, "quick_wall_s": a.quick_wall}, "metrics": {}, "failures": []}
    for k, v in sorted(values.items()):
        mean = statistics.fmean(v)
        cv = 100 * statistics.stdev(v) / mean if len(v) > 1 and mean else 0.0
        lim = limit_for(k, a)
        out["metrics"][k] = {"values": v, "n": len(v), "mean": mean, "cv_pct": cv, "limit_pct": lim}
        if lim is not None and len(v) >= 2 and cv > lim:
            out["failures"].append(f"{k}: cv {cv:.2f} % > {lim} % over {len(v)} runs")
    stds = sorted(d.glob("standard*.json"))
    if stds:
        # the median of the standard runs against the median of the quick ones: the runs were
        # interleaved (session.sh fidelity), so both saw the same drift of the GPU's power state
        svals = {}
        for p in stds:
            for k, v in headline(load(p)).items():
                svals.setdefault(k, []).append(v)
        out["standard_runs"] = [p.name for p in stds]
        out["quick_vs_standard"] = {}
        for k, v in sorted(svals.items()):
            sm = statistics.median(v)
            if k.startswith("gemm.") and k in values and sm:
                r = statistics.median(values[k]) / sm
                out["quick_vs_standard"][k] = r
                if abs(r - 1) * 100 > a.profile_gap:
                    out["failures"].append(f"{k}: quick / standard = {r:.4f}, beyond {a.profile_gap} %")
    wall = d / "quick-wall.json"
    if wall.exists():
        s = json.loads(wall.read_text())["seconds"]
        out["quick_wall_s"] = s
        if s >= a.quick_wall:
            out["failures"].append(f"quick profile took {s:.1f} s, limit {a.quick_wall} s")
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("dir")
    ap.add_argument("--gemm-cv", type=float, default=1.0)
    ap.add_argument("--copy-cv", type=float, default=2.0)
    ap.add_argument("--profile-gap", type=float, default=2.0)
    ap.add_argument("--quick-wall", type=float, default=60.0)
    a = ap.parse_args(argv)
    d = Path(a.dir)
    if not d.is_dir():
        die(f"no directory {d}")
    out = judge(d, a)
    (d / "fidelity.json").write_text(json.dumps(out, indent=1))
    for k, m in out["metrics"].items():
        lim = f" (limit {m['limit_pct']} %)" if m["limit_pct"] is not None else ""
        print(f"{k:<32} n={m['n']} mean {m['mean']:10.2f}  cv {m['cv_pct']:5.2f} %{lim}")
    for k, r in out.get("quick_vs_standard", {}).items():
        print(f"{k:<32} quick / standard {r:.4f}")
    if "quick_wall_s" in out:
        print(f"quick profile wall time {out['quick_wall_s']:.1f} s")
    for f in out["failures"]:
        print(f"FAIL {f}")
    return 1 if out["failures"] else 0


if __name__ == "__main__":
    sys.exit(main())
