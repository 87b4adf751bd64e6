"""Policy files: bounded, checked before any bench runs, strict (issue #16 item 9)."""
import json
import os
import signal
import sqlite3
import subprocess
import time
import uuid
from pathlib import Path

import pytest

from conftest import FIXTURES, gpuvet_bin
from helpers import (NULL, Holder, Listener, good_fp, has_fio, import_fixture, integrity_ok, make_store, marked_pids,
                     sha, start_run, stat_fields, tree_env, wait_for, wait_gone)


# ---- 9. policy files: bounded, checked early, strict ----

def test_policy_read_is_bounded(gpuvet):
    gpuvet("run", "--bench", "null", "-q", env=NULL, check=0)
    p = gpuvet("accept", "--policy", "/dev/zero", timeout=20)  # main read 5.5 GB in 8 s
    assert p.returncode == 2     # a device is no policy file
    assert "not a regular file" in p.stderr and p.stderr.count("\n") == 1, p.stderr


def test_a_huge_policy_file_is_bounded(gpuvet, tmp_path):
    gpuvet("run", "--bench", "null", "-q", env=NULL, check=0)
    big = tmp_path / "big.yaml"
    with open(big, "wb") as f:
        f.write(b"# " + b"x" * (2 << 20) + b"\n")
    p = gpuvet("accept", "--policy", big, timeout=20)
    assert p.returncode == 2
    assert "policy larger than 1048576 bytes" in p.stderr and p.stderr.count("\n") == 1, p.stderr


def test_missing_policy_is_said_before_any_bench_runs(gpuvet, tmp_path):
    p = gpuvet("run", "--bench", "null", "--accept", str(tmp_path / "missing.yaml"),
               env=dict(NULL, GPUVET_NULL_MODE="slow", GPUVET_NULL_SECONDS="5"), timeout=60)
    assert p.returncode == 2
    assert p.stderr == f"gpuvet: cannot read policy '{tmp_path / 'missing.yaml'}': no such file or directory\n"
    assert not os.path.exists(gpuvet.db) or sqlite3.connect(gpuvet.db).execute(
        "SELECT count(*) FROM benches").fetchone()[0] == 0


@pytest.mark.parametrize("text,what", [
    ("rules:\n  - metric: null.value.count\n    min: 1\n    min: 50\n", "line 4: 'min' given twice"),
    ("name: a\nname: b\nrules:\n  - metric: null.value.count\n    min: 1\n", "line 2: 'name' given twice"),
    ("reject_flags: [XID]\nreject_flags: [VGPU]\n", "'reject_flags' given twice"),
    ('name: "a\\e[2Jb"\nrules:\n  - metric: null.value.count\n    min: 1\n', "'name' holds a control character"),
    ('rules:\n  - metric: null.value.count\n    "\\e[31mx": 1\n', "unknown rule key '\\e[31mx'"),
    ("rules: " + "[" * 100000 + "]" * 100000 + "\n", "line 1: nested deeper than 32 levels"),
])
def test_policy_is_strict(gpuvet, tmp_path, text, what):
    gpuvet("run", "--bench", "null", "-q", env=NULL, check=0)
    f = tmp_path / "p.yaml"
    f.write_text(text)
    p = gpuvet("accept", "--policy", str(f), timeout=10)  # main took 53 s on the deep list
    assert p.returncode == 2, (p.stdout, p.stderr)
    assert what in p.stderr and p.stderr.count("\n") == 1, p.stderr
    assert "\x1b" not in p.stderr
