"""`gpuvet run` as a straight line (issue #27): the policy is parsed once, before the benches, and the
run's fingerprint loaded once after them and passed to the flags, the gate, the summary and the
report.  A policy file removed while the benches run still gates the run (it was parsed already),
and what the summary and the report say is what the store holds afterwards."""
import json
import subprocess

from conftest import gpuvet_bin
from helpers import run_started

POLICY = "name: line\nrules:\n  - metric: host.cpu_steal.pct\n    max: 100\n"


def test_the_policy_is_parsed_once_before_the_benches(gpuvet, tmp_path):
    pol = tmp_path / "p.yaml"
    pol.write_text(POLICY)
    env = dict(gpuvet.env, GPUVET_TEST_BENCHES="1", GPUVET_NULL_MODE="slow", GPUVET_NULL_SECONDS="3")
    p = subprocess.Popen([gpuvet_bin(), "--db", gpuvet.db, "run", "--bench", "null", "-q", "--accept", str(pol),
                          "--json", "--report", str(tmp_path / "r.html")],
                         env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert run_started(gpuvet.db)     # the run has begun: its policy was read (or never will be)
    pol.unlink()                      # gone while the bench runs: the run is gated all the same
    out, err = p.communicate(timeout=120)
    # this machine has no GPU: the gate says it cannot judge a GPU instance without one (exit 3), with the
    # policy read before the benches (reading it again after them would fail: exit 2, no verdict)
    assert p.returncode == 3, err
    assert "a GPU instance is judged with its GPUs" in err and "cannot read policy" not in err, err
    fp = json.loads(out)
    assert [(v["policy"], v["verdict"]) for v in fp["verdicts"]] == [("line", "unmeasurable")]
    stored = gpuvet.json("results", "show")
    assert [(v["policy"], v["verdict"]) for v in stored["verdicts"]] == [("line", "unmeasurable")]
    assert [f["code"] for f in stored["flags"]] == [f["code"] for f in fp["flags"]]
    html = (tmp_path / "r.html").read_text()
    assert "a GPU instance is judged with its GPUs" in html
