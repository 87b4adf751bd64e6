"""A run still being written is never replaced (issue 28 item 5): neither `results import` nor
`results merge` of a complete copy carrying its uuid takes its place while its writer holds it;
once it has finished (complete) the copy is a duplicate, and once it was killed (incomplete) a
complete copy replaces it as before.  Also (issue #16 item 11): a live run is left for a later merge,
a killed one lists as incomplete, and an incomplete copy is replaced by the complete run."""
import json
import os
import sqlite3
import subprocess
import time

from conftest import FIXTURES, gpuvet_bin
from helpers import NULL, fixture_fp, good_fp, integrity_ok, start_run, tree_env, wait_for, write_fp


def complete_copy(tmp_path, uuid):
    return write_fp(tmp_path, fixture_fp(uuid=uuid, provider="unknown", instance_type=None, region=None),
                    "copy.json")


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
    # finished: the copy (another host's content under this uuid) is a named conflict, the run itself kept
    r = gpuvet("results", "import", copy, check=2)
    assert uuid in r.stderr and "a uuid names one run" in r.stderr, r.stderr
    assert gpuvet.json("results", "show", uuid)["run"]["hostname"] != "synthetic"


# ---- (issue #16 item 11) a live run is not merged half-made, and lists apart from a killed one ----

def test_live_run_is_left_for_a_later_merge(gpuvet, tmp_path):
    src = tmp_path / "src.db"
    env = dict(gpuvet.env, GPUVET_TEST_BENCHES="1", GPUVET_NULL_MODE="slow", GPUVET_NULL_SECONDS="3")
    p = subprocess.Popen([gpuvet_bin(), "--db", str(src), "run", "--bench", "null", "-q"], env=env,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    assert wait_for(lambda: src.exists() and sqlite3.connect(src).execute(
        "SELECT count(*) FROM runs").fetchone()[0] == 1)
    live = gpuvet.json("--db", str(src), "results", "list", "--json", db=False)
    assert [r["status"] for r in live] == ["running"]
    out = gpuvet("results", "merge", str(src), check=0).stdout
    assert "0 run(s) added, 0 already present, 1 still running" in out, out
    assert gpuvet.json("results", "list", "--json") == []
    assert p.wait(timeout=60) == 0
    out = gpuvet("results", "merge", str(src), check=0).stdout
    runs = gpuvet.json("results", "list", "--json")
    assert len(runs) == 1, out
    assert runs[0]["status"] == "complete" and runs[0]["benches"] == 1, runs
    assert runs[0]["uuid"] == live[0]["uuid"]


def test_killed_run_lists_as_incomplete_not_running(gpuvet, tmp_path):
    env = dict(gpuvet.env, GPUVET_TEST_BENCHES="1", GPUVET_NULL_MODE="hang")
    p = subprocess.Popen([gpuvet_bin(), "--db", gpuvet.db, "run", "--bench", "null", "-q"], env=env,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    assert wait_for(lambda: os.path.exists(gpuvet.db) and sqlite3.connect(gpuvet.db).execute(
        "SELECT count(*) FROM runs").fetchone()[0] == 1)
    assert [r["status"] for r in gpuvet.json("results", "list", "--json")] == ["running"]
    p.kill()
    p.wait(timeout=10)
    # the bench's keeper shares the lock's file description until it has cleaned up (milliseconds)
    assert wait_for(lambda: [r["status"] for r in gpuvet.json("results", "list", "--json")] == ["incomplete"], 5)


def test_an_incomplete_copy_is_replaced_by_the_complete_run(gpuvet, tmp_path):
    import json
    fp = good_fp()
    fp["run"]["status"] = "incomplete"
    full = json.loads(json.dumps(fp))
    fp["benches"], fp["metrics"], fp["samples"] = [], [], []   # what a crash leaves: no bench, none of its rows
    full["run"]["status"] = "complete"
    (tmp_path / "a.json").write_text(json.dumps(fp))
    (tmp_path / "b.json").write_text(json.dumps(full))
    gpuvet("results", "import", str(tmp_path / "a.json"), check=0)
    gpuvet("results", "import", str(tmp_path / "b.json"), check=0)
    runs = gpuvet.json("results", "list", "--json")
    assert len(runs) == 1 and runs[0]["status"] == "complete" and runs[0]["benches"] > 0, runs
