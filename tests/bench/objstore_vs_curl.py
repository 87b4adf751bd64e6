#!/usr/bin/env python3
"""objstore GET throughput against the curl CLI, same server, same work.

Starts nginx on 127.0.0.1 serving one object, then alternately runs
  - the objstore bench (standard profile: 8 GiB of 8 MiB ranged GETs,
    --objstore-concurrency N), and
  - curl --parallel --parallel-max N over the same 8 MiB ranges of the same
    object, the same number of them (one config file, `next` between URLs),
and prints both in GB/s (1e9 bytes/s) and the ratio objstore / curl
(target >= 1.0).  objstore's figure is its own metric objstore.get.gbps
(bytes of completed ranges / first request to last completion); curl's is
the same bytes over curl's wall time.

Usage (from the repository root, after `make`):
  python3 tests/bench/objstore_vs_curl.py [--concurrency 16] [--object-mb 512] [--reps 3]
Not part of `make check`.
"""
import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
sys.path.insert(0, str(ROOT / "tests"))
from servers import loopback  # noqa: E402

RANGE = 8 << 20
BUDGET = 8 << 30   # the standard profile's GET byte budget (benches/objstore.c)


def run_objstore(url, conc, env):
    """objstore.get.gbps from `gpuvet run` when the harness is built, else the driver."""
    gpuvet = ROOT / "build" / "gpuvet"
    with tempfile.TemporaryDirectory() as d:
        p = subprocess.run([str(gpuvet), "--db", f"{d}/b.db", "run", "--bench", "objstore",
                            "--profile", "standard", "--objstore-url", url,
                            "--objstore-concurrency", str(conc), "--json"],
                           capture_output=True, text=True, env=env)
    if p.returncode == 0 and p.stdout.strip().startswith("{"):
        doc = json.loads(p.stdout)
        for m in doc["metrics"]:
            if m["name"] == "objstore.get.gbps" and m["gpu"] == -1:
                return m["value"], m.get("params") or {}, "gpuvet run"
    e = dict(env, GPUVET_DRIVE_BENCH="objstore", GPUVET_DRIVE_PROFILE="standard",
             GPUVET_DRIVE_OBJSTORE_URL=url, GPUVET_DRIVE_OBJSTORE_CONCURRENCY=str(conc))
    p = subprocess.run([str(ROOT / "build" / "tests" / "test_storage_benches")],
                       capture_output=True, text=True, env=e, check=True)
    for line in p.stdout.splitlines():
        m = json.loads(line)
        if m["t"] == "metric" and m["name"] == "objstore.get.gbps":
            return m["value"], m["params"], "bench driver"
    raise RuntimeError("objstore reported no objstore.get.gbps: " + p.stdout[-2000:])


def run_curl(url, conc, size, nranges, workdir):
    cfg = Path(workdir) / "curl.cfg"
    lines = []
    off = 0
    total = 0
    for i in range(nranges):
        if off >= size:
            off = 0
        n = min(RANGE, size - off)
        if i:
            lines.append("next")
        lines += [f'url = "{url}"', f"range = {off}-{off + n - 1}", 'output = "/dev/null"']
        off += n
        total += n
    cfg.write_text("\n".join(lines) + "\n")
    t0 = time.perf_counter()
    subprocess.run(["curl", "--parallel", "--parallel-max", str(conc), "--parallel-immediate",
                    "--fail", "-K", str(cfg)], check=True, stderr=subprocess.DEVNULL)
    secs = time.perf_counter() - t0
    return total / secs / 1e9


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--concurrency", type=int, default=16)
    ap.add_argument("--object-mb", type=int, default=512)
    ap.add_argument("--reps", type=int, default=3)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        root = Path(d) / "www"
        root.mkdir()
        size = a.object_mb << 20
        with open(root / "obj.bin", "wb") as f:
            for _ in range(a.object_mb):
                f.write(os.urandom(1 << 20))
        with loopback.nginx(root, Path(d) / "nginx", lifetime=3600) as base:
            url = base + "/obj.bin"
            env = dict(os.environ, GPUVET_NO_METADATA="1")
            ours, theirs = [], []
            nranges = BUDGET // RANGE
            for rep in range(a.reps):
                g, params, via = run_objstore(url, a.concurrency, env)
                c = run_curl(url, a.concurrency, size, nranges, d)
                ours.append(g)
                theirs.append(c)
                print(f"rep {rep + 1}: objstore {g:.3f} GB/s ({params.get('requests')} ranges, "
                      f"{params.get('seconds')} s, via {via}), curl --parallel {c:.3f} GB/s, "
                      f"ratio {g / c:.2f}",
                      flush=True)
            mo, mc = statistics.median(ours), statistics.median(theirs)
            curl_v = subprocess.run(["curl", "--version"], capture_output=True,
                                    text=True).stdout.split("\n")[0]
            print(f"machine: {platform.node()} {platform.machine()}, {os.cpu_count()} CPUs, "
                  f"{curl_v}; nginx on 127.0.0.1, object {a.object_mb} MiB, ranges 8 MiB, "
                  f"{nranges} ranges ({BUDGET / 1e9:.2f} GB) per run, concurrency "
                  f"{a.concurrency}, median of {a.reps}")
            print(f"objstore.get.gbps {mo:.3f} GB/s, curl --parallel {mc:.3f} GB/s, "
                  f"ratio {mo / mc:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
