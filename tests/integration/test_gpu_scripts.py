"""The scripts a GPU session runs (tests/gpu/): what can be checked without a GPU.

bundle.sh must make a gpuvet that starts with only its bundled libraries beside
the C runtime; session.sh must refuse clearly where there is no GPU; and
contention_summary.py must judge runs as issue 4 asks (no CONTENTION clean,
CONTENTION in every loaded run) and refuse runs whose GPU benches did not run.
"""
import json
import os
import shutil
import subprocess
import sys

from conftest import ROOT, gpuvet_bin

GPU = ROOT / "tests" / "gpu"


def test_bundle_starts_from_its_own_libraries(tmp_path):
    out = tmp_path / "bundle"
    env = dict(os.environ, GPUVET_BIN=gpuvet_bin(), GPUVET_BUNDLE_DIR=str(out))
    p = subprocess.run([str(GPU / "bundle.sh")], capture_output=True, text=True, env=env, timeout=120)
    assert p.returncode == 0, p.stderr
    libs = sorted(x.name for x in (out / "lib").iterdir())
    assert "libsqlite3.so.0" in libs and "libcsv.so.3" in libs and "libcurl.so.4" in libs
    assert not any(x.startswith(("libc.so", "libstdc++")) for x in libs)
    assert not (out / ".cudalibs").exists()     # the build machine's paths never travel
    # every non-runtime library resolves inside the bundle
    ldd = subprocess.run(["ldd", str(out / "gpuvet")], capture_output=True, text=True,
                         env=dict(os.environ, LD_LIBRARY_PATH=str(out / "lib"))).stdout
    for line in ldd.splitlines():
        if "=>" in line and line.split()[0] in libs:
            assert str(out / "lib") in line, line
    v = subprocess.run([str(out / "gv"), "--version"], capture_output=True, text=True,
                       env=dict(os.environ, ASAN_OPTIONS="protect_shadow_gap=0:detect_leaks=0"))
    assert v.returncode == 0 and v.stdout.startswith("gpuvet "), v.stderr


def test_session_refuses_without_gpu_or_bundle(tmp_path):
    if shutil.which("nvidia-smi"):
        import pytest
        pytest.skip("this machine has nvidia-smi")
    env = dict(os.environ, OUT=str(tmp_path))
    p = subprocess.run([str(GPU / "session.sh"), "info"], capture_output=True, text=True, env=env)
    assert p.returncode == 2
    assert p.stderr.strip() in ("session.sh: no NVIDIA GPU here (nvidia-smi -L failed)",
                                "session.sh: no .gpubundle/gv: run tests/gpu/bundle.sh on the build "
                                "machine and carry .gpubundle")


def _summary(d):
    return subprocess.run([sys.executable, str(GPU / "contention_summary.py"), str(d)],
                          capture_output=True, text=True)


def test_contention_summary_judges_runs(gpuvet, tmp_path):
    # a real fingerprint from this machine: gemm and soak are skipped (no GPU)
    p = gpuvet("run", "--profile", "quick", "--bench", "gemm,soak", "--json", timeout=300)
    assert p.returncode in (0, 1), p.stderr
    fp = json.loads(p.stdout)
    assert {b["name"]: b["status"] for b in fp["benches"]}.get("gemm") == "skipped"
    d = tmp_path / "c"
    d.mkdir()
    for kind in ("clean", "loaded"):
        for i in (1, 2, 3):
            (d / f"{kind}-{i}.json").write_text(json.dumps(fp))
    r = _summary(d)
    assert r.returncode == 2 and "bench gemm skipped" in r.stderr

    # the same runs as if measured: loaded ones carry CONTENTION, clean ones do not
    ok = dict(fp, benches=[dict(b, status="ok") for b in fp["benches"]])
    flag = {"code": "CONTENTION", "severity": "critical", "message": "m",
            "evidence": {"foreign": [{"pid": 4242}]}}
    for i in (1, 2, 3):
        (d / f"clean-{i}.json").write_text(json.dumps(dict(ok, flags=[])))
        (d / f"loaded-{i}.json").write_text(json.dumps(dict(ok, flags=[flag])))
    r = _summary(d)
    assert r.returncode == 0, r.stdout + r.stderr
    assert json.loads((d / "summary.json").read_text())["as_expected"] is True

    # one loaded run without the flag, or one clean run with it: not as expected
    (d / "loaded-2.json").write_text(json.dumps(dict(ok, flags=[])))
    r = _summary(d)
    assert r.returncode == 1 and "loaded-2.json" in r.stdout
    (d / "loaded-2.json").write_text(json.dumps(dict(ok, flags=[flag])))
    (d / "clean-3.json").write_text(json.dumps(dict(ok, flags=[flag])))
    assert _summary(d).returncode == 1

    (d / "clean-1.json").unlink()
    r = _summary(d)
    assert r.returncode == 2 and "clean-1.json is missing" in r.stderr
