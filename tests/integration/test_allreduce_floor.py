"""An all-reduce that says why it is slow (issue #30, CPU part), end to end with the real binary:
an 8-GPU H100 node whose all-reduce runs under half its published floor is rejected by the default
policy, with the transport NCCL chose in the reason; the report shows that transport under the
all-reduce chart; a node at its floor is not flagged.  The fingerprints are the synthetic flag
fixtures of tests/fixtures/flags/ (make_fixtures.py); the transport parsing itself is unit-tested
on recorded NCCL output (tests/unit/test_nccl_log.c)."""
import json

from conftest import FIXTURES

FLAGS = FIXTURES / "flags"


def test_node_under_half_its_floor_is_rejected_saying_why(gpuvet, tmp_path):
    gpuvet("results", "import", FLAGS / "allreduce_floor_229_shm.json", check=0)
    p = gpuvet("accept", "--json", check=None)
    assert p.returncode == 1, p.stdout + p.stderr
    res = json.loads(p.stdout)
    failed = [f for f in res["failed"] if f.get("flag") == "BELOW_FLOOR"]
    assert failed, res["failed"]
    assert "229 GB/s" in failed[0]["message"] and "460 GB/s" in failed[0]["message"]
    assert "NCCL chose SHM (host memory)" in failed[0]["message"]
    assert "fabric manager" in failed[0]["remediation"]
    gpuvet("report", "-o", tmp_path / "r.html", check=0)
    html = (tmp_path / "r.html").read_text()
    assert "All-reduce transport NCCL chose: <b>SHM (host memory)</b>" in html


def test_node_at_its_floor_is_not_flagged(gpuvet):
    gpuvet("results", "import", FLAGS / "allreduce_floor_460.json", check=0)
    res = json.loads(gpuvet("accept", "--json", check=None).stdout)
    assert not [f for f in res["failed"] if f.get("flag") == "BELOW_FLOOR"]
    text = gpuvet("accept", check=None).stdout
    # the table of every check lists the flag as checked and not raised; no line fails on it
    assert not [ln for ln in text.splitlines() if "BELOW_FLOOR" in ln and "FAIL" in ln], text
    assert [ln for ln in text.splitlines() if "BELOW_FLOOR" in ln and "not raised" in ln], text


def test_notes_of_a_rule_judged_per_gpu_are_said_once(gpuvet):
    gpuvet("results", "import", FLAGS / "allreduce_floor_460.json", check=0)
    text = gpuvet("accept", check=None).stdout
    notes = [ln for ln in text.splitlines() if ln.strip().startswith("note:")]
    assert notes and len(notes) == len(set(notes)), text
