#!/usr/bin/env python3
"""Issue 39's remaining GPU targets in one short device call (`session.sh proof`).

One sequence, gpuvet and PyTorch interleaved because the GPU's power state drifts:

    q1 T1 s1 q2 T2 s2 q3 T3 s3 q4 T4 q5 T5

  qN  `gpuvet run --profile quick --bench gemm,memcpy --json`      -> quick-N.json
  sN  `gpuvet run --profile standard --bench gemm --json`          -> standard-N.json
  TN  PyTorch (peer_ratio.py's peers): pinned H2D and D2H copies, and both at
      once on two streams (bidirectional), at q1's sizes (every T), and for T1-T3 the MAMF-finder way for bf16: the best
      of a 216-shape burst sweep, then that shape sustained (1 s warm, the
      standard profile's 2 s window)                                -> torch.json

Then tests/gpu/fidelity.py on the folder (GEMM CV <= 1 %, pinned-copy CV <=
2 %, quick / standard within 2 %) and, in proof.json: gpuvet's bf16 peak
(gemm.bf16.best_shape.tflops, or gemm.bf16.tflops when its search found no
better shape; median of s1-s3) over PyTorch's MAMF figure
(median of T1-T3), target >= 0.98; the pinned copies' CV for gpuvet and for
PyTorch over the same five slots.  Everything goes to DIR and, after every
step, into OUT/proof.tgz (the device tool brings back 8 files at most), so a
call stopped at its limit still returns what was done.

    proof.py --gpuvet .gpubundle/gv --dir /tmp/proof --out $OUT
Exit: 0 every target met, 1 one missed, 2 gpuvet could not run.
"""
import argparse
import json
import statistics
import subprocess
import sys
import tarfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import fidelity  # noqa: E402
import peer_ratio  # noqa: E402

SEQUENCE = "q1 T1 s1 q2 T2 s2 q3 T3 s3 q4 T4 q5 T5".split()
TARGET = 0.98


def pack(d, out):
    if out:
        with tarfile.open(Path(out) / "proof.tgz", "w:gz") as t:
            t.add(d, arcname="proof")


def gpuvet(binary, db, profile, benches, path):
    fp = peer_ratio.run_gpuvet(binary, benches, profile, db)
    path.write_text(json.dumps(fp, indent=1))
    bad = [f"{b['name']}: {b['status']} {b.get('reason')}" for b in fp.get("benches", []) if b["status"] != "ok"]
    if bad:
        raise SystemExit(f"proof.py: {path.name}: " + "; ".join(bad))
    return fp


def torch_bidir(torch, nbytes, copies, window_s):
    """Pinned H2D on one stream and D2H on another, started together (as gpuvet's memcpy.bidir.pinned):
    the bytes of both directions over the slower stream's time, median of the window's batches."""
    dev = torch.device("cuda:0")
    h_in = torch.empty(nbytes, dtype=torch.uint8, pin_memory=True).fill_(0x5A)
    h_out = torch.empty(nbytes, dtype=torch.uint8, pin_memory=True)
    d_in = torch.empty(nbytes, dtype=torch.uint8, device=dev)
    d_out = torch.empty(nbytes, dtype=torch.uint8, device=dev)
    s1, s2 = torch.cuda.Stream(), torch.cuda.Stream()

    def batch():
        start, e1, e2 = (torch.cuda.Event(enable_timing=True) for _ in range(3))
        torch.cuda.synchronize()
        start.record()
        s1.wait_event(start)
        s2.wait_event(start)
        with torch.cuda.stream(s1):
            for _ in range(copies):
                d_in.copy_(h_in, non_blocking=True)
            e1.record(s1)
        with torch.cuda.stream(s2):
            for _ in range(copies):
                h_out.copy_(d_out, non_blocking=True)
            e2.record(s2)
        torch.cuda.synchronize()
        sec = max(start.elapsed_time(e1), start.elapsed_time(e2)) / 1e3
        return 2 * nbytes * copies / sec / 1e9
    batch()
    res, t0 = [], time.perf_counter()
    while len(res) < 5 or time.perf_counter() - t0 < window_s:
        res.append(batch())
    return statistics.median(res)


def torch_slot(torch, q1, mamf):
    out = {}
    m = peer_ratio.metric(q1, "memcpy.bidir.pinned.gbps", 0)
    if m:
        nbytes = m["params"]["bytes"]
        out["memcpy.bidir.pinned.gbps"] = torch_bidir(torch, nbytes, max(4, min(64, (64 << 20) // nbytes)),
                                                      m["params"].get("window_s", 0.25))
    for direction in ("h2d", "d2h"):
        name = f"memcpy.{direction}.pinned.gbps"
        m = peer_ratio.metric(q1, name, 0)
        if m:
            nbytes = m["params"]["bytes"]
            copies = max(4, min(64, (64 << 20) // nbytes))
            out[name] = peer_ratio.torch_copy(torch, direction, True, nbytes, copies,
                                              m["params"].get("window_s", 0.25))
    if mamf:
        # warm 1 s, then the standard profile's 2 s window (benches/steady.c)
        t0 = time.time()
        v, shape = peer_ratio.torch_mamf(torch, "bf16", 1.0, 2.0)
        out["gemm.bf16.best_shape.tflops"] = v
        out["mamf_shape"] = list(shape)
        out["mamf_seconds"] = round(time.time() - t0, 1)
    return out


def cv(v):
    return 100 * statistics.stdev(v) / statistics.fmean(v) if len(v) > 1 else 0.0


def summarize(d):
    quick = [json.loads(p.read_text()) for p in sorted(d.glob("quick-[0-9]*.json"))]
    std = [json.loads(p.read_text()) for p in sorted(d.glob("standard-*.json"))]
    torch_rows = json.loads((d / "torch.json").read_text())
    res = {"mamf": None, "pinned": {}}
    # gpuvet's achievable bf16 peak: its search's best shape, or the headline when the search found
    # none better (then gpuvet stores no best_shape row)
    peaks = [peer_ratio.metric(f, "gemm.bf16.best_shape.tflops", -1) or peer_ratio.metric(f, "gemm.bf16.tflops", -1)
             for f in std]
    g = [m["value"] for m in peaks if m]
    t = [r["gemm.bf16.best_shape.tflops"] for r in torch_rows if "gemm.bf16.best_shape.tflops" in r]
    if g and t:
        r = statistics.median(g) / statistics.median(t)
        res["mamf"] = {"gpuvet": g, "torch": t, "ratio": r, "ok": r >= TARGET,
                       "gpuvet_shapes": [[m["params"][k] for k in "mnk"] for m in peaks if m],
                       "torch_shapes": [r["mamf_shape"] for r in torch_rows if "mamf_shape" in r]}
    for name in ("memcpy.h2d.pinned.gbps", "memcpy.d2h.pinned.gbps", "memcpy.bidir.pinned.gbps"):
        gv = [peer_ratio.metric(f, name, -1)["value"] for f in quick if peer_ratio.metric(f, name, -1)]
        tv = [r[name] for r in torch_rows if name in r]
        res["pinned"][name] = {"gpuvet": gv, "torch": tv, "gpuvet_cv_pct": cv(gv), "torch_cv_pct": cv(tv),
                               "ratio": statistics.median(gv) / statistics.median(tv) if gv and tv else None}
    return res


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--gpuvet", required=True)
    ap.add_argument("--dir", required=True)
    ap.add_argument("--out")
    ap.add_argument("--sequence", default=" ".join(SEQUENCE), help="the steps, in order (default: above)")
    a = ap.parse_args()
    d = Path(a.dir)
    d.mkdir(parents=True, exist_ok=True)
    import torch
    db = str(d / "proof.db")
    q1 = None
    rows = []
    t_start = time.time()
    for step in a.sequence.split():
        kind, n = step[0], int(step[1:])
        t0 = time.time()
        if kind == "q":
            fp = gpuvet(a.gpuvet, db, "quick", "gemm,memcpy", d / f"quick-{n}.json")
            q1 = q1 or fp
        elif kind == "s":
            gpuvet(a.gpuvet, db, "standard", "gemm", d / f"standard-{n}.json")
        else:
            rows.append(torch_slot(torch, q1, n <= 3))
            (d / "torch.json").write_text(json.dumps(rows, indent=1))
        print(f"# {step}: {time.time() - t0:.1f} s (at {time.time() - t_start:.0f} s)", flush=True)
        pack(d, a.out)
    fid = subprocess.run([sys.executable, str(Path(fidelity.__file__)), str(d)], capture_output=True, text=True)
    print(fid.stdout + fid.stderr, end="")
    res = summarize(d)
    res["fidelity_exit"] = fid.returncode
    res["device"] = torch.cuda.get_device_name(0)
    res["torch"] = torch.__version__
    (d / "proof.json").write_text(json.dumps(res, indent=1))
    pack(d, a.out)
    m = res["mamf"]
    if m:
        print(f"gemm.bf16.best_shape.tflops gpuvet {statistics.median(m['gpuvet']):.1f} torch MAMF "
              f"{statistics.median(m['torch']):.1f} ratio {m['ratio']:.3f} (target >= {TARGET})")
    for k, p in res["pinned"].items():
        print(f"{k}: gpuvet CV {p['gpuvet_cv_pct']:.2f} %, torch CV {p['torch_cv_pct']:.2f} %, ratio "
              f"{p['ratio'] if p['ratio'] is None else round(p['ratio'], 3)}")
    return 0 if fid.returncode == 0 and m and m["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
