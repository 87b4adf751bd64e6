#!/usr/bin/env python3
"""gpuvet against its peers on the same GPU, in one command (issue 3 validation).

Runs `build/gpuvet run --bench gemm,memcpy,allreduce --json` with a scratch
store, then, in this same process, the peers at the very shapes and sizes
gpuvet reports in its metric params:

  gemm.<dtype>.tflops     torch.matmul (fp32 with TF32 off, tf32 with it on,
                          fp16, bf16) and torch._scaled_mm for fp8 (E4M3, BF16
                          out, use_fast_accum=True as gpuvet), CUDA events
                          around each of `reps` products after a warm-up, median
  memcpy.<dir>.<mem>.gbps tensor.copy_ between torch.empty(pin_memory=True or
                          False) host memory and a device tensor, batches of
                          the same number of copies, median of batches
  allreduce.algbw.gbps    torch.distributed all_reduce (NCCL), one process per
                          GPU, float32 sum, same byte size, 20 iterations timed
                          on the host clock as nccl-tests

and prints gpuvet / peer for each.  Target: every ratio >= 0.98 (gpuvet must
not under-report).  Exit status 0 when all ratios meet the target, 1 when
one does not, 2 when gpuvet itself failed.

Usage on a GPU machine (see tests/gpu/README.md):
    make -j8 && python3 tests/gpu/peer_ratio.py --out /tmp/peer
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

def torch_gemm(torch, dtype, m, n, k, warmup, reps):
    dev = torch.device("cuda:0")
    torch.backends.cuda.matmul.allow_tf32 = dtype == "tf32"
    g = torch.Generator(device=dev).manual_seed(1)
    if dtype == "fp8":
        a = (torch.rand(m, k, device=dev, generator=g) * 2 - 1).to(torch.float8_e4m3fn)
        b = (torch.rand(n, k, device=dev, generator=g) * 2 - 1).to(torch.float8_e4m3fn).t()
        one = torch.ones((), device=dev)

        def op():
            return torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=torch.bfloat16,
                                    use_fast_accum=True)
    else:
        t = {"fp32": torch.float32, "tf32": torch.float32, "fp16": torch.float16,
             "bf16": torch.bfloat16}[dtype]
        a = (torch.rand(m, k, device=dev, generator=g) * 2 - 1).to(t)
        b = (torch.rand(k, n, device=dev, generator=g) * 2 - 1).to(t)

        def op():
            return torch.matmul(a, b)
    for _ in range(warmup):
        op()
    torch.cuda.synchronize()
    ev = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(reps)]
    for s, e in ev:
        s.record()
        op()
        e.record()
    torch.cuda.synchronize()
    ms = statistics.median(s.elapsed_time(e) for s, e in ev)
    torch.backends.cuda.matmul.allow_tf32 = False
    return 2.0 * m * n * k / (ms / 1e3) / 1e12


def torch_copy(torch, direction, pinned, nbytes, copies, batches):
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
    one()
    torch.cuda.synchronize()
    res = []
    for _ in range(batches):
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
        res.append(nbytes * copies / sec / 1e9)
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

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--gpuvet", default=str(ROOT / "build" / "gpuvet"))
    ap.add_argument("--profile", default="quick")
    ap.add_argument("--benches", default="gemm,memcpy,allreduce")
    ap.add_argument("--fingerprint", help="compare with this saved fingerprint instead of running gpuvet")
    ap.add_argument("--out", help="directory for fingerprint.json and ratios.json")
    args = ap.parse_args()

    if args.fingerprint:
        fp = json.loads(Path(args.fingerprint).read_text())
    else:
        with tempfile.TemporaryDirectory() as td:
            fp = run_gpuvet(args.gpuvet, args.benches, args.profile, os.path.join(td, "gpuvet.db"))
    for b in fp.get("benches", []):
        print(f"# bench {b['name']}: {b['status']}" + (f" ({b['reason']})" if b.get("reason") else ""))
    if any(b["status"] == "failed" for b in fp.get("benches", [])):
        bad = 2
    else:
        bad = 0

    import torch
    rows = []

    def add(name, gv, peer, detail):
        ratio = gv / peer if peer else float("nan")
        rows.append({"metric": name, "gpuvet": gv, "peer": peer, "ratio": ratio, "detail": detail,
                     "ok": ratio >= TARGET})

    for dt in ("fp32", "tf32", "fp16", "bf16", "fp8"):
        m = metric(fp, f"gemm.{dt}.tflops", 0)
        if not m:
            continue
        p = m["params"]
        peer = torch_gemm(torch, dt, p["m"], p["n"], p["k"], p.get("warmup", 3), p["reps"])
        add(m["name"], m["value"], peer, f"m=n=k={p['m']}" if p["m"] == p["n"] == p["k"]
            else f"{p['m']}x{p['n']}x{p['k']}")
    for direction, mem in (("h2d", "pinned"), ("d2h", "pinned"), ("h2d", "pageable"), ("d2h", "pageable"),
                           ("d2d", None)):
        name = f"memcpy.{direction}.{mem}.gbps" if mem else f"memcpy.{direction}.gbps"
        m = metric(fp, name, 0)
        if not m:
            continue
        nbytes = m["params"]["bytes"]
        copies = max(4, min(64, (64 << 20) // nbytes))
        peer = torch_copy(torch, direction, mem == "pinned", nbytes, copies, 10)
        add(name, m["value"], peer, f"{nbytes} B x {copies}")
    m = metric(fp, "allreduce.algbw.gbps", -1)
    if m and m["params"].get("ranks", 1) < 2:
        # torch's all_reduce is in place, which NCCL skips with one rank; gpuvet's out-of-place
        # one-rank all-reduce is a device copy: no peer to compare with
        print("# allreduce: one gpu, no peer (torch all_reduce is in place; nccl skips it)")
    elif m:
        p = m["params"]
        peer = torch_allreduce(torch, p["bytes"], p["iters"])
        add(m["name"], m["value"], peer, f"{p['bytes']} B, {p['ranks']} rank(s)")

    dev = torch.cuda.get_device_name(0)
    print(f"# device: {dev}, torch {torch.__version__}, target ratio >= {TARGET}")
    print(f"{'metric':<28} {'gpuvet':>10} {'peer':>10} {'ratio':>7}  detail")
    for r in rows:
        print(f"{r['metric']:<28} {r['gpuvet']:>10.2f} {r['peer']:>10.2f} {r['ratio']:>7.3f}  {r['detail']}"
              f"{'' if r['ok'] else '  BELOW TARGET'}")
    if args.out:
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        (out / "fingerprint.json").write_text(json.dumps(fp, indent=1))
        (out / "ratios.json").write_text(json.dumps({"device": dev, "torch": torch.__version__,
                                                     "target": TARGET, "rows": rows}, indent=1))
    if bad:
        return bad
    return 0 if rows and all(r["ok"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
