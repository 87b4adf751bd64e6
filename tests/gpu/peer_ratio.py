#!/usr/bin/env python3
"""gpuvet against its peers on the same GPU, interleaved in one command (issue 12).

Alternates gpuvet and the peers for --rounds rounds (at least 3), the order
flipping every round (gpuvet first, then peer first, ...), because the GPU's
power state drifts and whoever goes second in every round gets a warmer GPU:

  gpuvet   `gpuvet run --bench gemm,memcpy,allreduce --json` with a scratch store
  peers    in this same process, at the shapes and sizes gpuvet's first run
           reports in its metric params, timed the way gpuvet's headline is:

  gemm.<dtype>.tflops     torch.matmul (fp32 with TF32 off, tf32 with it on,
                          fp16, bf16) and torch._scaled_mm for fp8 (E4M3, BF16
                          out, use_fast_accum=True as gpuvet); products back to
                          back for max(1 s, gpuvet's settle_s) of warm-up, then
                          for gpuvet's window_s between two CUDA events: work
                          done / time
  gemm.bf16.best_shape.tflops   (standard/full, when gpuvet reports it) the
                          MAMF-finder way: the best of a torch shape sweep,
                          then that shape as above
  memcpy.<dir>.<mem>.gbps tensor.copy_ between torch.empty(pin_memory=True or
                          False) host memory and a device tensor, 0.1 s of
                          batches not counted, then batches for gpuvet's
                          window_s: median of the batches
  allreduce.algbw.gbps    torch.distributed all_reduce (NCCL), one process per
                          GPU, float32 sum, same byte size, timed on the host
                          clock as nccl-tests (more than one GPU only)

and prints, per metric, the median over the rounds of gpuvet and of the peer
and their ratio.  Target: every ratio >= 0.98 (gpuvet must not under-report).
Exit status 0 when all ratios meet the target, 1 when one does not, 2 when
gpuvet itself failed.

Usage on a GPU machine (see tests/gpu/README.md):
    python3 tests/gpu/peer_ratio.py --gpuvet .gpubundle/gv --out /tmp/peer
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
TARGET = 0.98


def run_gpuvet(binary, benches, profile, db):
    env = dict(os.environ, GPUVET_NO_METADATA="1")
    cmd = [binary, "--db", db, "run", "--profile", profile, "--bench", benches, "--json"]
    t0 = time.time()
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    sys.stderr.write(p.stderr)
    if p.returncode not in (0, 1):
        raise SystemExit(f"peer_ratio: gpuvet exited {p.returncode}")
    fp = json.loads(p.stdout)
    print(f"# gpuvet {' '.join(cmd[3:])}: {time.time() - t0:.1f} s", flush=True)
    return fp


def metric(fp, name, gpu):
    for m in fp.get("metrics", []):
        if m["name"] == name and m["gpu"] == gpu:
            return m
    return None


# ---- peers -----------------------------------------------------------------

def gemm_op(torch, dtype, m, n, k):
    dev = torch.device("cuda:0")
    torch.backends.cuda.matmul.allow_tf32 = dtype == "tf32"
    g = torch.Generator(device=dev).manual_seed(1)
    if dtype == "fp8":
        a = (torch.rand(m, k, device=dev, generator=g) * 2 - 1).to(torch.float8_e4m3fn)
        b = (torch.rand(n, k, device=dev, generator=g) * 2 - 1).to(torch.float8_e4m3fn).t()
        one = torch.ones((), device=dev)
        return lambda: torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=torch.bfloat16,
                                        use_fast_accum=True)
    t = {"fp32": torch.float32, "tf32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}[dtype]
    a = (torch.rand(m, k, device=dev, generator=g) * 2 - 1).to(t)
    b = (torch.rand(k, n, device=dev, generator=g) * 2 - 1).to(t)
    return lambda: torch.matmul(a, b)


def torch_gemm_steady(torch, dtype, m, n, k, warm_s, window_s):
    """Sustained TFLOP/s: products back to back for warm_s, then work / time over window_s."""
    op = gemm_op(torch, dtype, m, n, k)
    op()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < warm_s:
        for _ in range(4):
            op()
        torch.cuda.synchronize()
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    count = 0
    s.record()
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < window_s:
        for _ in range(4):       # keeps the queue short so the host clock tracks the GPU
            op()
        count += 4
        e.record()
        e.synchronize()
    sec = s.elapsed_time(e) / 1e3
    torch.backends.cuda.matmul.allow_tf32 = False
    return 2.0 * m * n * k * count / sec / 1e12


def torch_gemm_burst(torch, dtype, m, n, k, reps=5):
    op = gemm_op(torch, dtype, m, n, k)
    op()
    torch.cuda.synchronize()
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    s.record()
    for _ in range(reps):
        op()
    e.record()
    e.synchronize()
    return 2.0 * m * n * k * reps / (s.elapsed_time(e) / 1e3) / 1e12


MAMF_SIZES = (4096, 6144, 8192, 10240, 12288, 16384)


def torch_mamf(torch, dtype, warm_s, window_s):
    """mamf-finder's way: the best shape of a sweep (short bursts), then that shape sustained."""
    best, shape = 0.0, None
    for m in MAMF_SIZES:
        for n in MAMF_SIZES:
            for k in MAMF_SIZES:
                tf = torch_gemm_burst(torch, dtype, m, n, k)
                if tf > best:
                    best, shape = tf, (m, n, k)
    return torch_gemm_steady(torch, dtype, *shape, warm_s, window_s), shape


def torch_copy(torch, direction, pinned, nbytes, copies, window_s):
    dev = torch.device("cuda:0")
    host = torch.empty(nbytes, dtype=torch.uint8, pin_memory=pinned)
    host.fill_(0x5A)
    d = torch.empty(nbytes, dtype=torch.uint8, device=dev)
    d2 = torch.empty(nbytes, dtype=torch.uint8, device=dev)

    def one():
        if direction == "h2d":
            d.copy_(host, non_blocking=pinned)
        elif direction == "d2h":
            host.copy_(d, non_blocking=pinned)
        else:
            d2.copy_(d)
    def batch():
        if pinned or direction == "d2d":
            s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            s.record()
            for _ in range(copies):
                one()
            e.record()
            torch.cuda.synchronize()
            sec = s.elapsed_time(e) / 1e3
        else:
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            for _ in range(copies):
                one()
            torch.cuda.synchronize()
            sec = time.perf_counter() - t0
        return nbytes * copies / sec / 1e9
    one()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < 0.1:
        batch()
    res = []
    t0 = time.perf_counter()
    while len(res) < 5 or time.perf_counter() - t0 < window_s:
        res.append(batch())
    return statistics.median(res)


def _allreduce_worker(rank, world, nbytes, iters, port, out):
    import torch
    import torch.distributed as dist
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world)
    t = torch.ones(nbytes // 4, dtype=torch.float32, device=f"cuda:{rank}")
    for _ in range(5):
        dist.all_reduce(t)
    torch.cuda.synchronize()
    dist.barrier()
    t0 = time.perf_counter()
    for _ in range(iters):
        dist.all_reduce(t)
    torch.cuda.synchronize()
    sec = (time.perf_counter() - t0) / iters
    if rank == 0:
        Path(out).write_text(json.dumps({"sec": sec}))
    dist.destroy_process_group()


def torch_allreduce(torch, nbytes, iters):
    import torch.multiprocessing as mp
    world = torch.cuda.device_count()
    with tempfile.TemporaryDirectory() as td:
        out = os.path.join(td, "ar.json")
        mp.spawn(_allreduce_worker, args=(world, nbytes, iters, 29500 + os.getpid() % 1000, out), nprocs=world)
        sec = json.loads(Path(out).read_text())["sec"]
    return nbytes / sec / 1e9


# ---- comparison --------------------------------------------------------------

def peer_values(torch, fp):
    """One round of every peer at the shapes and sizes of gpuvet's fingerprint fp: {metric: (value, detail)}."""
    out = {}
    for dt in ("fp32", "tf32", "fp16", "bf16", "fp8"):
        m = metric(fp, f"gemm.{dt}.tflops", 0)
        if not m:
            continue
        p = m["params"]
        warm, win = max(1.0, p.get("settle_s", 1.0)), p.get("window_s", 1.0)
        out[m["name"]] = (torch_gemm_steady(torch, dt, p["m"], p["n"], p["k"], warm, win),
                          f"{p['m']}x{p['n']}x{p['k']}, warm {warm:.2f} s, window {win:g} s")
    m = metric(fp, "gemm.bf16.best_shape.tflops", -1)
    if m:
        p = m["params"]
        v, shape = torch_mamf(torch, "bf16", max(1.0, p.get("settle_s", 1.0)), p.get("window_s", 2.0))
        out[m["name"]] = (v, f"torch best of {len(MAMF_SIZES) ** 3} shapes: {shape}; gpuvet {p['m']}x{p['n']}x{p['k']}")
    for direction, mem in (("h2d", "pinned"), ("d2h", "pinned"), ("h2d", "pageable"), ("d2h", "pageable"),
                           ("d2d", None)):
        name = f"memcpy.{direction}.{mem}.gbps" if mem else f"memcpy.{direction}.gbps"
        m = metric(fp, name, 0)
        if not m:
            continue
        nbytes = m["params"]["bytes"]
        copies = max(4, min(64, (64 << 20) // nbytes))
        out[name] = (torch_copy(torch, direction, mem == "pinned", nbytes, copies, m["params"].get("window_s", 0.25)),
                     f"{nbytes} B x {copies}")
    m = metric(fp, "allreduce.algbw.gbps", -1)
    if m and m["params"].get("ranks", 1) >= 2:
        p = m["params"]
        out[m["name"]] = (torch_allreduce(torch, p["bytes"], p["iters"]), f"{p['bytes']} B, {p['ranks']} ranks")
    return out


def gpuvet_values(fp):
    names = [f"gemm.{d}.tflops" for d in ("fp32", "tf32", "fp16", "bf16", "fp8")] + [
        "memcpy.h2d.pinned.gbps", "memcpy.d2h.pinned.gbps", "memcpy.h2d.pageable.gbps",
        "memcpy.d2h.pageable.gbps", "memcpy.d2d.gbps"]
    out = {n: metric(fp, n, 0)["value"] for n in names if metric(fp, n, 0)}
    for n in ("gemm.bf16.best_shape.tflops", "allreduce.algbw.gbps"):
        if metric(fp, n, -1):
            out[n] = metric(fp, n, -1)["value"]
    return out


def compare(gv_rounds, peer_rounds, details):
    rows = []
    for name in sorted(set().union(*peer_rounds)):
        g = [r[name] for r in gv_rounds if name in r]
        p = [r[name] for r in peer_rounds if name in r]
        if not g or not p:
            continue
        gm, pm = statistics.median(g), statistics.median(p)
        ratio = gm / pm if pm else float("nan")
        rows.append({"metric": name, "gpuvet": gm, "peer": pm, "ratio": ratio, "gpuvet_rounds": g,
                     "peer_rounds": p, "detail": details.get(name, ""), "ok": ratio >= TARGET})
    return rows


def round_order(i):
    """Who goes first in round i (0-based): gpuvet in even rounds, the peer in odd ones."""
    return ("gpuvet", "peer") if i % 2 == 0 else ("peer", "gpuvet")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--gpuvet", default=str(ROOT / "build" / "gpuvet"))
    ap.add_argument("--profile", default="quick")
    ap.add_argument("--benches", default="gemm,memcpy,allreduce")
    ap.add_argument("--rounds", type=int, default=3, help="rounds of each, order alternating (>= 3)")
    ap.add_argument("--out", help="directory for the fingerprints and ratios.json")
    args = ap.parse_args()
    if args.rounds < 3:
        ap.error("--rounds must be at least 3")

    import torch
    fps, gv_rounds, peer_rounds, details = [], [], [], {}
    with tempfile.TemporaryDirectory() as td:
        for i in range(args.rounds):
            order = round_order(i)
            for who in order:
                if who == "gpuvet":
                    fp = run_gpuvet(args.gpuvet, args.benches, args.profile, os.path.join(td, "gpuvet.db"))
                    if any(b["status"] == "failed" for b in fp.get("benches", [])):
                        print("# a gpuvet bench failed: " + "; ".join(
                            f"{b['name']}: {b['reason']}" for b in fp["benches"] if b["status"] == "failed"))
                        return 2
                    fps.append(fp)
                    gv_rounds.append(gpuvet_values(fp))
                else:
                    # the shapes come from gpuvet's first run, which round 1 makes before its peer
                    pv = peer_values(torch, fps[0])
                    peer_rounds.append({k: v for k, (v, _) in pv.items()})
                    details.update({k: d for k, (_, d) in pv.items()})
            print(f"# round {i + 1}: {' then '.join(order)}", flush=True)
    rows = compare(gv_rounds, peer_rounds, details)

    dev = torch.cuda.get_device_name(0)
    print(f"# device: {dev}, torch {torch.__version__}, {args.rounds} interleaved rounds, target ratio >= {TARGET}")
    print(f"{'metric':<30} {'gpuvet':>10} {'peer':>10} {'ratio':>7}  detail")
    for r in rows:
        print(f"{r['metric']:<30} {r['gpuvet']:>10.2f} {r['peer']:>10.2f} {r['ratio']:>7.3f}  {r['detail']}"
              f"{'' if r['ok'] else '  BELOW TARGET'}")
    if args.out:
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        for i, fp in enumerate(fps, 1):
            (out / f"fingerprint-{i}.json").write_text(json.dumps(fp, indent=1))
        (out / "ratios.json").write_text(json.dumps({"device": dev, "torch": torch.__version__, "target": TARGET,
                                                     "rounds": args.rounds, "rows": rows}, indent=1))
    return 0 if rows and all(r["ok"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
