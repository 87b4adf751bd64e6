"""The real GPU captures (tests/fixtures/gpu/) stay readable by every later gpuvet.

Each is a real fingerprint of an H100 or H200 run, made before steady-state
timing (burst-timed GEMM, busbw 0 on one GPU); a store must take them as they
are, show them, rank-check them and gate them, whatever the fingerprint code
learns later.
"""
import json

from conftest import FIXTURES

CAPTURES = FIXTURES / "gpu"


def fingerprints():
    out = []
    for p in sorted(CAPTURES.rglob("*.json")):
        d = json.loads(p.read_text())
        if isinstance(d, dict) and d.get("schema") == "gpuvet.fingerprint/1":
            out.append(p)
    return out


def test_every_capture_imports_and_reads_back(gpuvet):
    files = fingerprints()
    # 2026-11-22: h100 quick, standard, soak, peer, 6 contention, 4 light; h200 3.  2026-11-25 (h100): fidelity
    # 7 + 9, jobcost 2, peer 3, sdc 1, tenant 1, contention 6, nccl 1.  2026-11-26 (h100): proof 8 + 8.
    # 2026-11-28 (h200): quick 1, jobcost 2, peer 3, peer-memcpy 5, memcpy-standard 4, sdc 1, tenant 1
    assert len(files) == 80
    p = gpuvet("results", "import", *files)
    assert p.returncode == 0, p.stderr
    runs = json.loads(gpuvet("results", "list", "--json", check=0).stdout)
    assert len(runs) == len(files)
    models = {r.get("gpu_model") for r in runs}
    assert {"H100-SXM", "H200"} <= models, models
    for f in files:
        src = json.loads(f.read_text())
        back = json.loads(gpuvet("results", "show", src["run"]["uuid"], check=0).stdout)
        assert back["run"]["uuid"] == src["run"]["uuid"]
        # the raw figures as captured; the percentages gpuvet's own, each naming the rate it is of (issue 57)
        want = {(m["name"], m["gpu"]): m["value"] for m in src["metrics"] if ".pct_of_" not in m["name"]}
        got = {(m["name"], m["gpu"]): m["value"] for m in back["metrics"] if ".pct_of_" not in m["name"]}
        assert got == want, f.name
        pct = [m for m in back["metrics"] if ".pct_of_" in m["name"]]
        assert all(m["params"]["of"] in {n for n, _ in got} for m in pct), f.name


def test_a_capture_gates_without_input_error(gpuvet):
    quick = CAPTURES / "h100-2026-11-22" / "quick-profile.json"
    gpuvet("results", "import", quick, check=0)
    uuid = json.loads(quick.read_text())["run"]["uuid"]
    p = gpuvet("accept", "--run", uuid[:8], "--json")
    assert p.returncode in (0, 1, 3), p.stderr     # a verdict, never a usage or input error
    assert json.loads(p.stdout)["verdict"] in ("accept", "reject", "unmeasurable")
