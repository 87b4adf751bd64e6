"""Imports follow the fingerprint schema (issue #16 item 12), and run, inventory and import accept
the same identities, printed escaped (item 6)."""
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


# ---- 12. imports follow the fingerprint schema ----

@pytest.mark.parametrize("change,needle", [
    (lambda fp: fp["run"].update(status="pwned"), "run.status"),
    (lambda fp: fp.update(benches="notalist"), "benches is not a list"),
    (lambda fp: fp.update(metrics={"a": 1}), "metrics is not a list"),
    (lambda fp: fp["run"].update(started_at="yesterday"), "run.started_at"),
    (lambda fp: fp["run"].update(started_at="2026-02-30T00:00:00Z"), "run.started_at"),
    (lambda fp: fp["run"].update(started_at="2025-02-29T00:00:00Z"), "run.started_at"),     # not a leap year
    (lambda fp: fp["run"].update(finished_at="2026-11-21T03:59:59Z"), "run.finished_at is before run.started_at"),
    (lambda fp: fp["run"].update(uuid="00000000-0000-0000-0000-000000000000"), "run.uuid"),
    (lambda fp: fp["run"].update(uuid="cafbf7a51c2d4e5f8a9b0c1d2e3f4a5b0000"), "run.uuid"),
    (lambda fp: fp["run"].update(finished_at="tomorrow"), "run.finished_at"),
    (lambda fp: fp["run"].update(gpu_count=-5), "run.gpu_count"),
    (lambda fp: fp["run"].update(gpu_count=1.5), "run.gpu_count"),
    (lambda fp: fp["inventory"]["gpus"][0].update(index=10 ** 12), "inventory.gpus[0].index"),
    (lambda fp: fp["metrics"][0].update(gpu=10 ** 12), "metrics[0].gpu"),
    (lambda fp: fp["run"].update(instance_type="p5\x1b[2J"), "run.instance_type"),
    (lambda fp: fp["run"].update(provider="x" * 300), "run.provider"),
    (lambda fp: fp["metrics"][0].update(name="a\nb"), "metrics[0].name"),
    (lambda fp: fp["flags"].append({"code": "X\x07", "severity": "info"}), "flags[0].code"),
])
def test_imports_are_checked_against_the_schema(gpuvet, tmp_path, change, needle):
    import json
    gpuvet("run", "--bench", "null", "-q", env=NULL, check=0)
    before = sha(gpuvet.db)
    fp = good_fp()
    assert fp["inventory"]["gpus"] and fp["metrics"] and not fp["flags"]
    change(fp)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(fp))
    p = gpuvet("results", "import", str(path))
    assert p.returncode == 2, (p.stdout, p.stderr)
    assert needle in p.stderr and p.stderr.count("\n") == 1, p.stderr
    assert "\x1b" not in p.stderr and "\x07" not in p.stderr
    assert len(gpuvet.json("results", "list", "--json")) == 1
    del before  # the store may be checkpointed; what counts is that nothing was added


def test_a_good_import_still_passes(gpuvet, tmp_path):
    import json
    fp = good_fp()
    fp["run"]["status"] = "running"  # a snapshot of a live run: stored as incomplete
    path = tmp_path / "ok.json"
    path.write_text(json.dumps(fp))
    gpuvet("results", "import", str(path), check=0)
    assert gpuvet.json("results", "list", "--json")[0]["status"] == "incomplete"

# ---- 6. run, inventory and import accept the same identities ----

@pytest.mark.parametrize("bad,why", [("red\x1b[31m", "holds a control character"),
                                     (b"p5\xff".decode("latin-1"), None),
                                     ("x" * 257, "is longer than 256 bytes"),
                                     ("a\u202eb", "holds a bidirectional override")])
def test_run_and_inventory_refuse_the_same_identities(gpuvet, tmp_path, bad, why):
    if why is None:  # invalid UTF-8 on the command line
        arg = b"p5\xff"
        why = "is not valid utf-8"
    else:
        arg = bad.encode()
    for cmd in (["run", "--bench", "null"], ["inventory"]):
        p = subprocess.run([gpuvet_bin().encode(), b"--db", gpuvet.db.encode(),
                            *[c.encode() for c in cmd], b"--sku", arg], env=dict(gpuvet.env, **NULL),
                           capture_output=True, timeout=60)
        err = p.stderr.decode("utf-8")  # the message itself is valid UTF-8 ...
        assert p.returncode == 2, (cmd, err)
        assert why in err, err
        assert "\x1b" not in err and err.count("\n") == 1, err  # ... and escaped
    assert not os.path.exists(gpuvet.db) or sqlite3.connect(gpuvet.db).execute(
        "SELECT count(*) FROM runs").fetchone()[0] == 0


def test_stored_escapes_are_printed_escaped(gpuvet):
    gpuvet("run", "--bench", "null", "-q", "--custom", "--sku", "p5.48xlarge", env=NULL, check=0)
    con = sqlite3.connect(gpuvet.db)
    con.execute("UPDATE runs SET instance_type=?, provider=?", ("\x1b]0;pwned\x07x", "a\x1b[2Jb"))
    con.commit()
    con.close()
    for args in (["results", "list"], ["results", "show", "--text"]):
        out = gpuvet(*args, check=0).stdout
        assert "\x1b" not in out and "\x07" not in out, out
        assert "\\e]0;pwned\\x07x" in out, out
