#!/usr/bin/env python3
"""A second tenant on one GPU: bf16 GEMMs from another process, for the contention checks.

    hammer.py READY_FILE [--duty D] [--device N] [--size N] [--batch N] [--seconds S]

Keeps GPU N busy with batches of `--batch` bf16 N^3 products (torch.matmul),
then idles for busy_time x (1 - D) / D, so D is the share of time the GPU is
busy with this tenant (1.0: always; 0.25 and 0.5 made the light-tenant
captures in tests/fixtures/gpu/h100-2026-11-22/light-tenant/).  Writes
READY_FILE once the first batch has run, so a caller starts measuring only
when the tenant is really there; runs until killed (SIGTERM) or for
--seconds.  Exit 2 without torch or without the device.
"""
import argparse
import signal
import sys
import time
from pathlib import Path


def parse(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("ready", help="file written once the first batch has run")
    ap.add_argument("--duty", type=float, default=1.0, help="share of time busy, 0 < D <= 1 (default 1)")
    ap.add_argument("--device", type=int, default=0)
    ap.add_argument("--size", type=int, default=8192, help="m = n = k of each product (default 8192)")
    ap.add_argument("--batch", type=int, default=20, help="products per busy batch (default 20)")
    ap.add_argument("--seconds", type=float, default=0, help="stop after this long (default: until killed)")
    a = ap.parse_args(argv)
    if not 0 < a.duty <= 1:
        ap.error(f"--duty must be in (0, 1], not {a.duty}")
    if a.size < 64 or a.batch < 1:
        ap.error("--size must be >= 64 and --batch >= 1")
    return a


def idle_after(busy_s, duty):
    """Seconds to stay idle after a busy batch of busy_s so that the busy share is duty."""
    return busy_s * (1.0 - duty) / duty


def main(argv=None):
    a = parse(sys.argv[1:] if argv is None else argv)
    try:
        import torch
    except ImportError:
        print("hammer.py: torch is not installed", file=sys.stderr)
        return 2
    if not torch.cuda.is_available() or a.device >= torch.cuda.device_count():
        print(f"hammer.py: no cuda device {a.device}", file=sys.stderr)
        return 2
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    dev = torch.device(f"cuda:{a.device}")
    x = torch.randn(a.size, a.size, device=dev, dtype=torch.bfloat16)
    y = torch.randn(a.size, a.size, device=dev, dtype=torch.bfloat16)
    t_end = time.monotonic() + a.seconds if a.seconds > 0 else float("inf")
    first = True
    while not stop and time.monotonic() < t_end:
        t0 = time.monotonic()
        for _ in range(a.batch):
            torch.matmul(x, y)
        torch.cuda.synchronize(dev)
        busy = time.monotonic() - t0
        if first:
            Path(a.ready).write_text(f"{busy:.6f}\n")
            first = False
        if a.duty < 1:
            time.sleep(idle_after(busy, a.duty))
    return 0


if __name__ == "__main__":
    sys.exit(main())
