"""Small inputs that must get a clear error (exit 2, one line) or a documented meaning (issue 28,
"smaller inputs"), every one in one table (CASES), the documented meanings after it.  The import
schema's full table is test_import_schema.py's."""
import json
import os
import subprocess

import pytest

from conftest import FIXTURES, gpuvet_bin
from helpers import fixture_fp, write_fp

H100 = FIXTURES / "gpu" / "h100-2026-11-22" / "standard-profile.json"


def fingerprint(tmp_path, change):
    """clean.json changed by change(fp), as a file to import."""
    fp = fixture_fp()
    change(fp)
    return write_fp(tmp_path, fp, "fp.json")


def policy(tmp_path, text):
    f = tmp_path / "p.yaml"
    f.write_text(text)
    return f


CASES = [
    # (id, args builder, stderr words)
    ("run-twice", lambda t: ["accept", "--run", "1", "--run", "1"], "--run given twice"),
    ("memory-db", lambda t: ["--db", ":memory:", "results", "list"], "is not a file path: a store must persist"),
    ("fifo-policy", lambda t: ["accept", "--policy", str(t / "fifo")], "not a regular file"),
    ("second-yaml-doc", lambda t: ["accept", "--policy", str(policy(t, "name: a\nrules:\n  - metric: "
                                                                        "gemm.bf16.tflops\n    min: 1\n---\n"
                                                                        "name: b\n"))],
     "a second yaml document"),
    ("hex-threshold", lambda t: ["accept", "--policy", str(policy(t, "rules:\n  - metric: gemm.bf16.tflops\n"
                                                                      "    min: 0x10\n"))],
     "must be a plain decimal number"),
    ("quoted-threshold", lambda t: ["accept", "--policy", str(policy(t, 'rules:\n  - metric: gemm.bf16.tflops\n'
                                                                         '    min: "5"\n'))],
     "must be a plain decimal number"),
    ("zero-padded-id", lambda t: ["results", "show", "00000001"], "no run '00000001'"),
    ("unknown-gpu-model", lambda t: ["prices", "list", "--gpu", "XYZ"], "unknown GPU model 'XYZ'"),
    # said before any bench runs, not after a whole run
    ("report-bad-path", lambda t: ["run", "--bench", "null", "--report", str(t / "no" / "such" / "r.html")],
     "--report: cannot write"),
    # a store on a device, a pipe or a directory: refused before SQLite says "disk I/O error"
    ("db-on-dev-null", lambda t: ["--db", "/dev/null", "results", "list"], "'/dev/null' is not a regular file"),
    ("db-on-a-directory", lambda t: ["--db", str(t), "results", "list"], "is not a regular file"),
    # a GPU index that does not fit an int is refused, never wrapped to gpu 0
    ("gpu-index-2^40", lambda t: ["results", "import", str(fingerprint(t, lambda fp: fp["metrics"][1].update(
        gpu=2 ** 40)))], "metrics[1].gpu is not a gpu index (-1 to 1023)"),
    # a 100 MB text field would cost every later reader its memory: refused at import
    ("100-mb-field", lambda t: ["results", "import", str(fingerprint(t, lambda fp: fp["flags"].append(
        {"code": "CPU_STEAL", "severity": "warning", "message": "x" * (100 << 20), "evidence": {"gpu": -1}})))],
     "a text of 100.0 MiB at line"),
    # a fingerprint's own fields (the whole schema's table is test_import_schema.py's)
    ("nil-uuid", lambda t: ["results", "import", str(fingerprint(t, lambda fp: fp["run"].update(
        uuid="00000000-0000-0000-0000-000000000000")))], "run.uuid"),
    ("dashless-uuid", lambda t: ["results", "import", str(fingerprint(t, lambda fp: fp["run"].update(
        uuid="cafbf7a51c2d4e5f8a9b0c1d2e3f4a5b0000")))], "run.uuid"),
    ("2025-02-29", lambda t: ["results", "import", str(fingerprint(t, lambda fp: fp["run"].update(
        started_at="2025-02-29T00:00:00Z")))], "run.started_at"),
    ("finished-before-started", lambda t: ["results", "import", str(fingerprint(t, lambda fp: fp["run"].update(
        finished_at="2026-11-21T03:59:59Z")))], "run.finished_at is before run.started_at"),
    # the test-only bench's metrics are not metrics of the product
    ("null-metric", lambda t: ["rank", "--metric", "null.seconds"], "unknown metric 'null.seconds'"),
]


@pytest.mark.parametrize("name,args,words", CASES, ids=[c[0] for c in CASES])
def test_clear_error(gpuvet, tmp_path, name, args, words):
    gpuvet("results", "import", H100, check=0)      # run 1
    os.mkfifo(tmp_path / "fifo")
    p = gpuvet(*args(tmp_path), timeout=20, env={"GPUVET_TEST_BENCHES": "1"})
    assert p.returncode == 2, (name, p.stdout, p.stderr)
    assert len(gpuvet.json("results", "list", "--json")) == 1      # nothing measured or stored
    assert words in p.stderr and p.stderr.startswith("gpuvet: ") and p.stderr.count("\n") == 1, p.stderr


@pytest.mark.skipif(os.geteuid() != 0, reason="needs to run the reader as another account (nobody)")
def test_home_unset_means_the_accounts_home(gpuvet, tmp_path):
    """Documented meaning: with no --db, $GPUVET_DB, $XDG_DATA_HOME or $HOME, the store is under the
    account's home directory (getpwuid, as git finds it), never the working directory.  Run as
    nobody, whose home (/nonexistent) cannot hold it: the error names that path, nothing is made."""
    import pwd
    env = {k: v for k, v in gpuvet.env.items() if k not in ("HOME", "XDG_DATA_HOME", "GPUVET_DB")}
    os.chmod(tmp_path, 0o777)

    def as_nobody():
        os.setgid(65534)
        os.setuid(65534)
    p = subprocess.run([gpuvet_bin(), "results", "list"], env=env, cwd=tmp_path, capture_output=True, text=True,
                       timeout=30, preexec_fn=as_nobody)
    home = pwd.getpwuid(65534).pw_dir
    assert p.returncode == 2 and f"'{home}/.local/share/gpuvet/gpuvet.db'" in p.stderr, p.stderr
    assert not (tmp_path / ".local").exists()


def test_empty_db_sync_means_the_default(gpuvet):
    """Documented meaning (docs/store.md): an empty GPUVET_DB_SYNC is as if unset (normal), as an
    empty variable usually is; a wrong word is refused (test_collect.py)."""
    p = gpuvet("results", "list", env={"GPUVET_DB_SYNC": ""})
    assert p.returncode == 0, p.stderr
    assert p.stderr == ""
