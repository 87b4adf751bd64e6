"""Small inputs that must get a clear error (exit 2, one line) or a documented meaning (issue 28,
"smaller inputs"), in one table.  The fingerprint's own fields (impossible dates, a finish before
the start, nil or dashless uuids) are in test_hardening.py's import-schema table."""
import os
import subprocess

import pytest

from conftest import FIXTURES, gpuvet_bin

H100 = FIXTURES / "gpu" / "h100-2026-11-22" / "standard-profile.json"


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
