"""Rank 0's own link dies (#56 item 2, the runtime's side): 8 nodes in network namespaces, the
test-only null bench (8 namespaces on two cores), rank 0's port set down in round 3 of 7.  Rank 0
loses every other rank at once and still reaches the analysis, prints the cluster run, stores it
and exits as the analysis says (3: it could not measure); each lost node's why says its connection
dropped.  The other ranks, having lost rank 0, exit 3 and say rank 0 (its host) went away."""
import json

import pytest

import cluster_helpers as ch
from cluster_helpers import free_port
from helpers import wait_for, within

pytestmark = pytest.mark.skipif(ch.available() is not None, reason=str(ch.available()))


def test_rank_0_losing_its_own_link_reaches_the_verdict(gpuvet, tmp_path):
    n = 8
    with ch.netns.Cluster(n) as c:
        args = ["--rendezvous", f"{c.addr(0)}:{free_port()}", "--policy", ch.policy(tmp_path, ch.FAULT_POLICY),
                "--bench", "null", "--json", "--wait", "60", "--pair-timeout", "5"]
        ranks = ch.Ranks(gpuvet, tmp_path, n, args, cluster=c, env={"GPUVET_TEST_BENCHES": "1"}, pre=["-v"])
        assert wait_for(lambda: "round 3 of 7" in ranks.err(0), within(120)), ranks.err(0)
        c.drop_all(0)
        res = ranks.wait(timeout=within(200))
    rc, doc = ch.rank0_json(res)
    assert rc == 3 and doc["exit_code"] == 3, (rc, doc["findings"])
    # every other node lost, each because its connection dropped (silent: no reset crosses a port set down)
    for node in doc["nodes"][1:]:
        assert node["state"] == "lost" and node["why"].startswith("its connection to rank 0 dropped: "), node
    assert doc["nodes"][0]["state"] == "ok"
    # the run is stored in rank 0's store as printed
    shown = gpuvet.json("--db", tmp_path / "node0.db", "cluster", "show", "--json", db=False)
    assert shown["uuid"] == doc["uuid"]
    # the others exit 3, naming rank 0 and its host; none is told it is to be drained
    for i in range(1, n):
        rci, out, err = res[i]
        assert rci == 3 and "rank 0 (host " in err and "went away" in err, (i, rci, err[-1500:])
        assert "went away: rank 0" not in err, err[-1500:]   # no doubled words
        assert not out.strip() or not json.loads(out).get("drain"), out
    # the analysis names rank 0 as the cause where it knows how (a coordinator finding): then nobody else is drained
    if any(f["kind"] == "coordinator" for f in doc["findings"]):
        assert ch.drained(doc) in ([], [0]), doc["findings"]
