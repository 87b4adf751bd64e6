"""`gpuvet cluster run` when a part fails (#49): a rank that never arrives, a rank killed mid-pair,
the rendezvous port taken, a node whose link drops every packet (during the pairs, and during a
long fingerprint).  Each ends in a named node and
exit 3 or 1, never a hang (every wait has a deadline), and never a lost node run."""
import re
import signal
import socket
import subprocess
import time

import pytest

import cluster_helpers as ch
from cluster_helpers import free_port
from helpers import wait_for, within

NETNS = ch.available()


def loopback_args(tmp_path, port, *extra):
    return ["--rendezvous", f"127.0.0.1:{port}", "--policy", ch.policy(tmp_path, ch.FAULT_POLICY), *ch.BENCH, "--json",
            "--pair-timeout", "5", *extra]


def test_a_rank_that_never_arrives_is_named(gpuvet, tmp_path):
    ranks = ch.Ranks(gpuvet, tmp_path, 4, loopback_args(tmp_path, free_port(), "--wait", "8"), skip=(3,), pre=["-v"])
    res = ranks.wait()
    rc, doc = ch.rank0_json(res)
    assert rc == 3 and doc["verdict"] == "unmeasurable", doc["findings"]
    assert doc["nodes"][3]["state"] == "missing" and 3 in ch.drained(doc)
    # its host is the 4th of SLURM_JOB_NODELIST (gvnode[1-4]), not '-'; the why says how long it was waited for
    assert doc["nodes"][3]["host"] == "gvnode4", doc["nodes"][3]
    assert doc["nodes"][3]["why"] == "rank 0 waited 8 s for it, --wait 8", doc["nodes"][3]
    missing = next(f for f in doc["findings"] if f["kind"] == "missing")
    assert missing["evidence"].count("never arrived") <= 1, missing
    # the three that came measured their three pairs; the missing one's were not tried
    assert sorted((p["a"], p["b"]) for p in ch.measured(doc)) == [(0, 1), (0, 2), (1, 2)]
    assert all(p["state"] == "skipped" for p in doc["pairs"] if 3 in (p["a"], p["b"]))
    assert [res[i][0] for i in (1, 2)] == [0, 0]
    for i in (0, 1, 2):
        assert doc["nodes"][i]["run_uuid"] in ch.runs_in(tmp_path / f"node{i}.db")
    # the missing rank cost rank 0 its --wait and no more, however long the fingerprints took here
    arrived = re.search(r"3 of 4 ranks arrived after ([0-9.]+) s", res[0][2])
    assert arrived and 8 <= float(arrived.group(1)) < 8 + 5, res[0][2][-2000:]


def test_a_rank_killed_mid_pair_is_named_and_the_rest_go_on(gpuvet, tmp_path):
    ranks = ch.Ranks(gpuvet, tmp_path, 4, loopback_args(tmp_path, free_port(), "--wait", "60"), pre=["-v"])
    assert wait_for(lambda: "round 1 of" in ranks.err(0), 120), ranks.err(0)
    ranks.procs[2].send_signal(signal.SIGKILL)
    res = ranks.wait(timeout=within(120))
    rc, doc = ch.rank0_json(res)
    assert rc in (1, 3) and doc["nodes"][2]["state"] == "lost", doc["nodes"][2]
    assert 2 in ch.drained(doc), doc["findings"]
    assert all(p["state"] != "measured" for p in doc["pairs"] if 2 in (p["a"], p["b"]) and p["round"] > 0)
    others = [p for p in doc["pairs"] if 2 not in (p["a"], p["b"])]
    assert others and all(p["state"] == "measured" for p in others), others
    # rank 2's fingerprint was taken before the pairs: kept in its own store and in rank 0's
    uuid2 = doc["nodes"][2]["run_uuid"]
    assert uuid2 in ch.runs_in(tmp_path / "node2.db") and uuid2 in ch.runs_in(tmp_path / "node0.db")


def test_the_rendezvous_port_taken(gpuvet, tmp_path):
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen(16)
        port = held.getsockname()[1]
        t0 = time.monotonic()
        res = ch.Ranks(gpuvet, tmp_path, 3, loopback_args(tmp_path, port, "--wait", "2")).wait(timeout=within(120))
    rc, _, err = res[0]
    assert rc == 3 and "Address already in use" in err and f"127.0.0.1:{port}" in err, err
    # the others reached the port's holder, which never drives them: each gives up by its deadline
    assert [res[i][0] for i in (1, 2)] == [3, 3], res
    assert "rank 0" in res[1][2]
    assert time.monotonic() - t0 < within(60)


@pytest.mark.skipif(NETNS is not None, reason=str(NETNS))
def test_a_node_whose_link_drops_everything(gpuvet, tmp_path):
    with ch.netns.Cluster(4) as c:
        args = ["--rendezvous", f"{c.addr(0)}:{free_port()}", "--policy", ch.policy(tmp_path, ch.FAULT_POLICY),
                *ch.BENCH, "--json",
                "--pair-timeout", "5", "--wait", "60"]
        ranks = ch.Ranks(gpuvet, tmp_path, 4, args, cluster=c, pre=["-v"])
        assert wait_for(lambda: "round 1 of" in ranks.err(0), 120), ranks.err(0)
        c.drop_all(3)
        res = ranks.wait(timeout=within(200))
    rc, doc = ch.rank0_json(res)
    assert rc in (1, 3) and 3 in ch.drained(doc), doc["findings"]
    assert ch.drained(doc) == [3], doc["findings"]
    assert doc["nodes"][3]["run_uuid"] in ch.runs_in(tmp_path / "node3.db")
    assert res[3][0] != 0


@pytest.mark.skipif(NETNS is not None, reason=str(NETNS))
def test_a_node_cut_off_during_its_fingerprint_is_lost_when_its_link_goes_silent(gpuvet, tmp_path):
    """Rank 0 waits for a fingerprint as long as its benches may take (here over three minutes);
    a node whose link goes silent meanwhile is named lost within the rendezvous' silence limit
    (25 s of unanswered keepalive probes), not at the end of that wait."""
    test = {"GPUVET_TEST_BENCHES": "1", "GPUVET_NULL_DEADLINE": "200"}   # rank 0 waits 200 s + 60 s for one
    with ch.netns.Cluster(3) as c:
        args = ["--rendezvous", f"{c.addr(0)}:{free_port()}", "--policy", ch.policy(tmp_path, ch.FAULT_POLICY),
                "--bench", "null", "--json", "--wait", "60"]
        ranks = ch.Ranks(gpuvet, tmp_path, 3, args, cluster=c, pre=["-v"],
                         env=dict(test, GPUVET_NULL_MODE="ok"),
                         rank_env={2: {"GPUVET_NULL_MODE": "slow", "GPUVET_NULL_SECONDS": "150"}})
        assert wait_for(lambda: "takes its fingerprint (up to 200 s)" in ranks.err(0), 120), ranks.err(0)
        c.drop_all(2)
        t0 = time.monotonic()
        try:
            ranks.procs[0].wait(timeout=within(120))
        except subprocess.TimeoutExpired:
            for p in ranks.procs.values():
                p.kill()
            raise AssertionError("rank 0 still waits for the silent node: " + ranks.err(0)[-2000:])
        lost_after = time.monotonic() - t0
        ranks.procs[2].kill()
        res = ranks.wait(timeout=within(60))
    rc, doc = ch.rank0_json(res)
    assert doc["nodes"][2]["state"] == "lost" and 2 in ch.drained(doc), doc["nodes"][2]
    assert "went silent (no answer for 25 s)" in doc["nodes"][2]["why"], doc["nodes"][2]
    assert rc in (1, 3) and res[1][0] in (0, 1, 3)
    assert lost_after < within(60), lost_after
