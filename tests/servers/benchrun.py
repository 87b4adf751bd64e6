"""Runs one storage bench and returns what it reported.

Through `gpuvet run --bench NAME --profile quick ... --json` (the documented
CLI) when the run harness is built; before that, through the unit-test
binary's driver mode (tests/unit/test_storage_benches.c), which runs the
same bench code in a child with a real bench_ctx.
"""
import json
import os
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent


@dataclass
class BenchResult:
    status: str
    reason: str
    metrics: dict = field(default_factory=dict)   # name -> value (gpu -1)
    params: dict = field(default_factory=dict)    # name -> params
    output: str = ""                              # everything printed, for leak checks
    seconds: float = 0.0
    via: str = ""


_HARNESS = None


def harness_ready(gpuvet):
    global _HARNESS
    if _HARNESS is None:
        p = gpuvet("run", "--help", timeout=30)
        _HARNESS = not (p.returncode != 0 and "not built yet" in p.stderr)
    return _HARNESS


FLAGS = {
    "nvme_dir": "--nvme-dir", "nvme_device": "--nvme-device",
    "objstore_url": "--objstore-url", "objstore_endpoint": "--objstore-endpoint",
    "objstore_concurrency": "--objstore-concurrency",
}
DRIVE_ENV = {
    "nvme_dir": "GPUVET_DRIVE_NVME_DIR", "nvme_device": "GPUVET_DRIVE_NVME_DEVICE",
    "objstore_url": "GPUVET_DRIVE_OBJSTORE_URL",
    "objstore_endpoint": "GPUVET_DRIVE_OBJSTORE_ENDPOINT",
    "objstore_concurrency": "GPUVET_DRIVE_OBJSTORE_CONCURRENCY",
}


def run_bench(gpuvet, bench, env=None, timeout=180, allow_destructive=False, **opts):
    env = dict(env or {})
    t0 = time.time()
    if harness_ready(gpuvet):
        args = ["run", "--bench", bench, "--profile", "quick", "--json"]
        for k, v in opts.items():
            args += [FLAGS[k], str(v)]
        if allow_destructive:
            args.append("--nvme-allow-destructive")
        p = gpuvet(*args, env=env, timeout=timeout)
        secs = time.time() - t0
        out = p.stdout + p.stderr
        doc = json.loads(p.stdout)
        b = next(x for x in doc["benches"] if x["name"] == bench)
        metrics = {m["name"]: m["value"] for m in doc["metrics"]
                   if m.get("bench", bench) == bench and m["gpu"] == -1}
        params = {m["name"]: m.get("params") for m in doc["metrics"]
                  if m.get("bench", bench) == bench and m["gpu"] == -1}
        return BenchResult(b["status"], b.get("reason") or "", metrics, params, out, secs,
                           "gpuvet run")
    test_dir = Path(os.environ.get("GPUVET_TEST_DIR", ROOT / "build" / "tests"))
    e = dict(gpuvet.env)
    e.update(env)
    e["GPUVET_DRIVE_BENCH"] = bench
    for k, v in opts.items():
        e[DRIVE_ENV[k]] = str(v)
    if allow_destructive:
        e["GPUVET_DRIVE_NVME_ALLOW"] = "1"
    p = subprocess.run([str(test_dir / "test_storage_benches")], capture_output=True, text=True,
                       timeout=timeout, env=e, cwd=ROOT)
    secs = time.time() - t0
    # a sanitizer report (leak, UB) or a crash fails the test, whatever the bench said
    assert p.returncode == 0 or (p.returncode == -14 and "status" not in p.stdout), \
        (p.returncode, p.stderr[-4000:])
    status, reason, metrics, params = "killed", "", {}, {}
    for line in p.stdout.splitlines():
        m = json.loads(line)
        if m["t"] == "status":
            status = m["status"]
        elif m["t"] == "reason":
            reason = m["text"]
        elif m["t"] == "metric" and m["gpu"] == -1:
            metrics[m["name"]] = m["value"]
            params[m["name"]] = m.get("params")
    return BenchResult(status, reason, metrics, params, p.stdout + p.stderr, secs, "driver")
