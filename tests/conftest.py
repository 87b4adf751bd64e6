"""Shared pytest fixtures: the gpuvet binary under test and a scratch store.

GPUVET_BIN (set by `make check`) points at build/gpuvet or, under SAN=1, at
build-san/gpuvet; every integration test runs the real binary.
"""
import json
import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures"


def gpuvet_bin():
    return os.environ.get("GPUVET_BIN", str(ROOT / "build" / "gpuvet"))


class Gpuvet:
    """Runs the gpuvet binary against one scratch database."""

    def __init__(self, db, env):
        self.db = str(db)
        self.env = env

    def __call__(self, *args, input=None, timeout=120, check=None, db=True, env=None):
        cmd = [gpuvet_bin()]
        if db:
            cmd += ["--db", self.db]
        cmd += [str(a) for a in args]
        e = dict(self.env)
        if env:
            e.update(env)
        p = subprocess.run(cmd, input=input, capture_output=True, text=True,
                           timeout=timeout, env=e)
        if check is not None:
            assert p.returncode == check, (cmd, p.returncode, p.stdout, p.stderr)
        return p

    def json(self, *args, **kw):
        p = self(*args, check=0, **kw)
        return json.loads(p.stdout)


@pytest.fixture
def gpuvet(tmp_path):
    env = dict(os.environ)
    env["GPUVET_NO_METADATA"] = "1"       # no cloud metadata probes from tests
    env["XDG_DATA_HOME"] = str(tmp_path / "xdg")
    env.pop("GPUVET_DB", None)
    # ASan: CUDA's runtime maps memory where ASan's shadow gap lies
    env.setdefault("ASAN_OPTIONS", "protect_shadow_gap=0:detect_leaks=1")
    return Gpuvet(tmp_path / "gpuvet.db", env)
