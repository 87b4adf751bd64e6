"""Issue 52 item 6, an upgrade keeps the gate's memory.  On a store of schema 5 (verdicts keyed by
the policy's name, no digest of its text: what 425c027 wrote) where the built-in policy rejected a
victim on its fleet floor, f4570a0 accepted the victim after the upgrade: migration kept the old
verdicts as history that counts for nothing, so the fleet was empty.  Now the first judging
command judges again, with this version's built-in, every run the earlier built-in judged, in the
order the store took them, and says so once; a run the earlier built-in rejected stays out of the
baseline (judge/accept_legacy.c, judge/policy.c accepted()); a file policy's lost baseline is
named by `accept`, not the routine "fewer than 3" note."""
import json
import sqlite3
import uuid
from pathlib import Path

from conftest import FIXTURES

Q = FIXTURES / "gpu" / "h100-2026-11-22" / "quick-profile.json"
H2D = ("memcpy.h2d.pinned.gbps", "memcpy.h2d.pct_of_link")
V5_VERDICTS = ("CREATE TABLE verdicts (id INTEGER PRIMARY KEY,"
               " run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
               " verdict TEXT NOT NULL CHECK (verdict IN ('accept','reject','unmeasurable')),"
               " policy TEXT NOT NULL, detail TEXT, at TEXT NOT NULL, UNIQUE (run_id, policy))")
FLEET = ("name: lab\nfleet_min_runs: 3\nrules:\n  - metric: memcpy.h2d.pinned.gbps\n"
         "    min_fraction_of_fleet: 0.90\n")


def put(gpuvet, tmp_path, low=False):
    fp = json.loads(Path(Q).read_text())
    fp["run"]["uuid"] = str(uuid.uuid4())
    fp["verdicts"] = []
    if low:
        for m in fp["metrics"]:
            if m["name"] in H2D and m["value"] is not None:
                m["value"] *= 0.81
    path = tmp_path / f"{fp['run']['uuid']}.json"
    path.write_text(json.dumps(fp))
    gpuvet("results", "import", path, check=0)
    return fp["run"]["uuid"]


def as_schema_5(gpuvet, verdicts):
    """the store as 425c027 left it: verdicts by policy name, {uuid: (verdict, policy)}"""
    db = sqlite3.connect(gpuvet.db)
    db.executescript("DROP TABLE verdicts;" + V5_VERDICTS + ";")
    for u, (verdict, policy) in verdicts.items():
        rid = db.execute("SELECT id FROM runs WHERE uuid = ?", (u,)).fetchone()[0]
        db.execute("INSERT INTO verdicts (run_id, verdict, policy, detail, at) VALUES (?,?,?,?,?)",
                   (rid, verdict, policy, "{}", "2026-11-20T00:00:00Z"))
    db.execute("PRAGMA user_version = 5")
    db.commit()
    db.close()


def test_the_victim_the_old_builtin_rejected_is_not_accepted_after_the_upgrade(gpuvet, tmp_path):
    good = [put(gpuvet, tmp_path) for _ in range(3)]
    victim = put(gpuvet, tmp_path, low=True)
    as_schema_5(gpuvet, {**{u: ("accept", "default") for u in good}, victim: ("reject", "default")})
    p = gpuvet("accept", "--run", victim, check=1)
    assert "FAIL  memcpy.h2d.pinned.gbps (instance)" in p.stdout and "fleet: median" in p.stdout
    assert p.stderr.count("fleet baseline is rebuilt") == 1 and "3 accepted, 1 rejected" in p.stderr, p.stderr
    # said once: the next command finds nothing to judge again
    p = gpuvet("accept", "--run", victim, check=1)
    assert "rebuilt" not in p.stderr
    # the old verdicts stay as history beside the new ones
    v = gpuvet.json("results", "show", good[0])["verdicts"]
    assert [(x["policy_digest"] == "", x["verdict"]) for x in v] == [(True, "accept"), (False, "accept")]


def test_runs_the_old_builtin_rejected_never_become_the_baseline(gpuvet, tmp_path):
    """five low runs stored first, all rejected by the earlier built-in, then three good ones: judged
    again in the order stored the low ones meet no baseline, yet a new low run is judged on the good"""
    low = [put(gpuvet, tmp_path, low=True) for _ in range(5)]
    good = [put(gpuvet, tmp_path) for _ in range(3)]
    as_schema_5(gpuvet, {**{u: ("reject", "default") for u in low}, **{u: ("accept", "default") for u in good}})
    new = put(gpuvet, tmp_path, low=True)
    p = gpuvet("accept", "--run", new, "--json", check=1)
    res = json.loads(p.stdout)
    base = {b["uuid"] for f in res["fleet"] for b in f["baseline_runs"]}
    assert base == set(good), base
    assert "fleet baseline is rebuilt" in p.stderr


def test_a_file_policy_names_the_baseline_it_lost(gpuvet, tmp_path):
    good = [put(gpuvet, tmp_path) for _ in range(3)]
    victim = put(gpuvet, tmp_path, low=True)
    as_schema_5(gpuvet, {u: ("accept", "lab") for u in good})
    lab = tmp_path / "lab.yaml"
    lab.write_text(FLEET)
    p = gpuvet("accept", "--run", victim, "--policy", lab, check=0)
    assert "fleet baseline for memcpy.h2d.pinned.gbps lost in an upgrade: 3 run(s)" in p.stdout, p.stdout
    assert "fewer than 3" not in p.stdout
    # judged again with the file, the baseline is back and the victim is rejected
    for u in good:
        gpuvet("accept", "--run", u, "--policy", lab, check=0)
    gpuvet("accept", "--run", victim, "--policy", lab, check=1)


def test_a_store_without_old_verdicts_says_nothing(gpuvet, tmp_path):
    u = put(gpuvet, tmp_path)
    p = gpuvet("accept", "--run", u, check=0)
    assert "rebuilt" not in p.stderr and "fewer than 3" in p.stdout and "lost" not in p.stdout
