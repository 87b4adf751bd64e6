"""Runs every C unit-test binary built from tests/unit/test_*.c."""
import os
import subprocess
from pathlib import Path

import pytest

TEST_DIR = Path(os.environ.get("GPUVET_TEST_DIR",
                               Path(__file__).resolve().parent.parent / "build" / "tests"))
BINARIES = sorted(p for p in TEST_DIR.glob("test_*") if os.access(p, os.X_OK)) if TEST_DIR.is_dir() else []


@pytest.mark.parametrize("binary", BINARIES, ids=[b.name for b in BINARIES])
def test_unit_binary(binary, tmp_path):
    env = dict(os.environ, TMPDIR=str(tmp_path), GPUVET_NO_METADATA="1")
    env.setdefault("ASAN_OPTIONS", "protect_shadow_gap=0:detect_leaks=1")
    # a guard against a hang, not a speed test: the metamorphic walk took over 300 s under the sanitizers
    # beside two busy loops per core (#56); the plain build takes 12 s on this 2-core VM when quiet
    p = subprocess.run([str(binary)], capture_output=True, text=True, timeout=1200,
                       cwd=Path(__file__).resolve().parent.parent, env=env)
    assert p.returncode == 0, p.stdout + p.stderr


def test_unit_binaries_were_built():
    # A missing build must fail loudly, not pass with zero cases.
    assert BINARIES, f"no unit-test binaries under {TEST_DIR}"
