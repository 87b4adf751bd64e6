"""A run still being written is never replaced (issue 28 item 5): neither `results import` nor
`results merge` of a complete copy carrying its uuid takes its place while its writer holds it;
once it has finished (complete) the copy is a duplicate, and once it was killed (incomplete) a
complete copy replaces it as before."""
import json
import sqlite3
import subprocess
import time

from conftest import FIXTURES, gpuvet_bin


def wait_for(cond, timeout=30):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            if cond():
                return True
        except sqlite3.Error:
            pass
        time.sleep(0.05)
    return False


def complete_copy(tmp_path, uuid):
    fp = json.loads((FIXTURES / "flags" / "clean.json").read_text())
    fp["run"].update(uuid=uuid, provider="unknown", instance_type=None, region=None)
    f = tmp_path / "copy.json"
    f.write_text(json.dumps(fp))
    return f


def test_a_running_run_is_never_replaced(gpuvet, tmp_path):
    env = dict(gpuvet.env, GPUVET_TEST_BENCHES="1", GPUVET_NULL_MODE="slow", GPUVET_NULL_SECONDS="8")
    p = subprocess.Popen([gpuvet_bin(), "--db", gpuvet.db, "run", "--bench", "null", "-q"], env=env,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        assert wait_for(lambda: sqlite3.connect(gpuvet.db).execute("SELECT count(*) FROM runs").fetchone()[0] == 1)
        live = gpuvet.json("results", "list", "--json")
        assert [r["status"] for r in live] == ["running"]
        uuid = live[0]["uuid"]
        copy = complete_copy(tmp_path, uuid)
        r = gpuvet("results", "import", copy, check=2)
        assert "still running" in r.stderr and r.stderr.count("\n") == 1, r.stderr
        # the same through a merge of another store holding the complete copy
        other = tmp_path / "other.db"
        gpuvet("--db", other, "results", "import", copy, db=False, check=0)
        r = gpuvet("results", "merge", other)
        assert r.returncode == 2 and "still running" in r.stderr, r.stdout + r.stderr
        now = gpuvet.json("results", "list", "--json")
        assert [(x["uuid"], x["status"]) for x in now] == [(uuid, "running")]
    finally:
        assert p.wait(timeout=60) == 0
    runs = gpuvet.json("results", "list", "--json")
    assert [(x["uuid"], x["status"]) for x in runs] == [(uuid, "complete")]
    # finished: the copy is a duplicate, the run itself kept
    out = gpuvet("results", "import", copy, check=0).stdout
    assert "already in the store" in out
    assert gpuvet.json("results", "show", uuid)["run"]["hostname"] != "synthetic"
