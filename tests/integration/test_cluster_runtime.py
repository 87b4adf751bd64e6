"""`gpuvet cluster run`'s runtime on loopback (#56): what the ranks tell each other besides the
figures.  Ranks of the test-only null bench (cheap on two cores), each its own host name (a UTS
namespace) unless a test shares one.  The job's token, and a run without one saying it is not
authenticated; a rank with another token, or arriving after --wait, refused and told why by rank 0;
a node's clock against rank 0's, either way, within the hello's round trip; two ranks on one host
left out of the pairs; a suspect node measuring again, the others beside it; the deadline's default from the profile and
the size."""
import json
import re

import cluster_helpers as ch
from cluster_helpers import free_port
from helpers import wait_for, within

NULL = {"GPUVET_TEST_BENCHES": "1"}
DAY = 86400


def args(tmp_path, port, *extra, json_out=True):
    return ["--rendezvous", f"127.0.0.1:{port}", "--policy", ch.policy(tmp_path, ch.FAULT_POLICY), "--bench", "null",
            "--pair-timeout", "5", *(["--json"] if json_out else []), *extra]


def test_clock_shared_host_remeasure_and_the_default_deadline(gpuvet, tmp_path):
    """Rank 2's clock 400 days ahead, rank 3's 10 years behind (GPUVET_TEST_CLOCK_SHIFT_S, a test
    build's hook); ranks 1 and 2 on one host; rank 2 a planted suspect (GPUVET_TEST_SUSPECTS) whose
    null.rate.gbps is 5 the first time and 9 the second."""
    ahead, behind = 400 * DAY, -10 * 365 * DAY
    rank_env = {2: {"GPUVET_TEST_CLOCK_SHIFT_S": str(ahead), "GPUVET_NULL_GBPS": "5,9",
                    "GPUVET_NULL_COUNTER": str(tmp_path / "calls.2")},
                3: {"GPUVET_TEST_CLOCK_SHIFT_S": str(behind)}}
    env = dict(NULL, GPUVET_NULL_GBPS="10", GPUVET_TEST_SUSPECTS="2")
    res = ch.Ranks(gpuvet, tmp_path, 4, args(tmp_path, free_port(), "--wait", "30"), env=env, rank_env=rank_env,
                   hosts={1: "gvshared", 2: "gvshared"}).wait()
    rc, doc = ch.rank0_json(res)
    nodes = doc["nodes"]
    assert doc["authenticated"] is True and all(n["state"] == "ok" for n in nodes), nodes
    # the clocks: within half the hello's round trip of the shift (one machine, one clock)
    assert nodes[0]["clock_skew_s"] == 0
    for i, shift in ((1, 0), (2, ahead), (3, behind)):
        n = nodes[i]
        assert 0 <= n["clock_skew_unc_s"] < 5 and abs(n["clock_skew_s"] - shift) <= n["clock_skew_unc_s"] + 1e-3, n
    # one host, two ranks: their pair is left out and says why; the others are measured
    shared = next(p for p in doc["pairs"] if (p["a"], p["b"]) == (1, 2))
    assert shared["state"] == "skipped" and shared["why"] == "both ranks are on host gvshared (127.0.0.1): no link between them"
    assert all(p["state"] == "measured" for p in doc["pairs"] if (p["a"], p["b"]) != (1, 2)), doc["pairs"]
    # the suspect measured again, and every other node beside it (its figure is judged against theirs, taken at
    # the same time); none of it stored as a run of its own
    rate = {n["rank"]: next(m for m in n["metrics"] if m["name"] == "null.rate.gbps") for n in nodes}
    assert (rate[2]["value"], rate[2]["remeasured"]) == (5, 9), rate
    assert all((rate[i]["value"], rate[i]["remeasured"]) == (10, 10) for i in (0, 1, 3)), rate
    assert (tmp_path / "calls.2").read_text() == "xx"
    own = [ch.runs_in(tmp_path / f"node{i}.db") for i in range(1, 4)]
    assert all(len(r) == 1 for r in own), own   # rank 0's store holds each node's run, each once
    assert ch.runs_in(tmp_path / "node0.db") > set().union(*own) and len(ch.runs_in(tmp_path / "node0.db")) == 4
    # the deadline: --wait 30 + 2 (F 30 + 60) + 10 x 3 rounds + 3 (P 5 + 15) + (4 P + 15) + 60 (docs/cluster.md)
    assert doc["deadline_s"] == 30 + 2 * (30 + 60) + 10 * 3 + 3 * (5 + 15) + (4 * 5 + 15) + 60, doc["deadline_s"]
    assert rc == doc["exit_code"]   # the verdict is the analysis' (judge/cluster.c), whatever it makes of the clocks


def test_a_run_without_a_token_says_it_is_not_authenticated(gpuvet, tmp_path):
    # as text: a line on stdout
    res = ch.Ranks(gpuvet, tmp_path, 2, args(tmp_path, free_port(), "--wait", "30", json_out=False), env=NULL,
                   token=None).wait()
    out = res[0][1]
    assert "not authenticated" in out and "GPUVET_CLUSTER_TOKEN" in out, out
    assert [r[0] for r in res.values()] == [res[0][0], res[1][0]] and res[1][0] != 2
    # as JSON: "authenticated": false; a rank holding a token while rank 0 has none is refused and told so
    (tmp_path / "j").mkdir()
    ranks = ch.Ranks(gpuvet, tmp_path / "j", 3, args(tmp_path, free_port(), "--wait", "8"), env=NULL, token=None,
                     rank_env={2: {"GPUVET_CLUSTER_TOKEN": ch.TOKEN}})
    res = ranks.wait()
    rc, doc = ch.rank0_json(res)
    assert doc["authenticated"] is False, doc
    assert res[2][0] == 3 and "refused by rank 0: that rank has a GPUVET_CLUSTER_TOKEN and rank 0 has none" in res[2][2]
    assert doc["nodes"][2]["state"] == "missing" and "rank 0 has none" in doc["nodes"][2]["why"], doc["nodes"][2]


def test_a_rank_with_another_token_and_a_late_rank_are_told_why(gpuvet, tmp_path):
    """Rank 2 holds another job's token: refused at its hello (bad proof), named missing with that
    reason.  Rank 3 starts after rank 0 stopped waiting: refused as late.  Neither reads 'went away'
    or 'Connection reset' while rank 0 is alive; both exit 3."""
    env = dict(NULL, GPUVET_NULL_MODE="ok")
    rank_env = {2: {"GPUVET_CLUSTER_TOKEN": "another-job-token-" + "33" * 16},
                1: {"GPUVET_NULL_MODE": "slow", "GPUVET_NULL_SECONDS": "20"}}   # rank 0 still runs when rank 3 comes
    ranks = ch.Ranks(gpuvet, tmp_path, 4, args(tmp_path, free_port(), "--wait", "6"), env=env, rank_env=rank_env,
                     skip=(3,), pre=["-v"])
    assert wait_for(lambda: "2 of 4 ranks arrived" in ranks.err(0), within(20)), ranks.err(0)
    ranks.start(3)
    res = ranks.wait(timeout=within(200))
    rc, doc = ch.rank0_json(res)
    assert res[2][0] == 3 and "refused by rank 0: bad proof: not this job's GPUVET_CLUSTER_TOKEN" in res[2][2], res[2][2]
    assert res[3][0] == 3, res[3][2]
    assert "refused by rank 0: it arrived after rank 0 stopped waiting for ranks (--wait 6 s)" in res[3][2], res[3][2]
    for i in (2, 3):
        assert not re.search(r"went away|Connection reset", res[i][2]), res[i][2]
    why = doc["nodes"][2]["why"]
    assert doc["nodes"][2]["state"] == "missing" and "claiming it was refused: bad proof" in why, why
    assert doc["nodes"][3]["state"] == "missing" and rc == 3
    assert json.loads(res[1][1])["rank"] == 1   # the others got their line
