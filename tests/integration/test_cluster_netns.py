"""`gpuvet cluster run` on four nodes that are network namespaces (#49's "done when"): one rank per
namespace with Slurm's variables set, --rendezvous at rank 0, libfabric's tcp provider between
them, every link at 400 Mbit/s.  One node's link at a fifth of that, both ways: rank 0 names that
node, measures all 6 pairs and exits 1.  One route alone at a fifth: that pair is named as a link and
no node is drained.  No link slowed: exit 0."""
import pytest

import cluster_helpers as ch
from cluster_helpers import free_port

pytestmark = pytest.mark.skipif(ch.available() is not None, reason=str(ch.available()))


def vet(gpuvet, tmp_path, cluster, *extra):
    args = ["--rendezvous", f"{cluster.addr(0)}:{free_port()}", "--policy", ch.policy(tmp_path), "--wait", "60",
            *ch.BENCH, "--json", *extra]
    return ch.Ranks(gpuvet, tmp_path, cluster.n, args, cluster=cluster).wait()


def test_one_slow_node_is_named_and_rejected(gpuvet, tmp_path):
    with ch.netns.Cluster(4) as c:
        c.slow_node(2)
        res = vet(gpuvet, tmp_path, c)
    rc, doc = ch.rank0_json(res)
    assert len(ch.measured(doc)) == 6, doc["pairs"]
    assert doc["transport"].startswith("tcp") or "tcp" in doc["transport"], doc["transport"]
    assert ch.drained(doc) == [2], doc["findings"]
    bad = [f for f in doc["findings"] if f["kind"] == "bad_node"]
    assert [f["rank"] for f in bad] == [2] and "median" in bad[0]["evidence"], bad
    assert not [f for f in doc["findings"] if f["kind"] == "bad_link"], doc["findings"]
    assert rc == 1 and doc["verdict"] == "reject"
    # the drained node's own line says so and exits 1; the others' exit 0
    assert res[2][0] == 1 and '"drain": true' in res[2][1].replace('":true', '": true')
    assert [res[i][0] for i in (1, 3)] == [0, 0], res
    # every node's fingerprint is an ordinary run in its own store, and all four in rank 0's
    uuids = [n["run_uuid"] for n in doc["nodes"]]
    assert all(uuids) and ch.runs_in(tmp_path / "node0.db") >= set(uuids)
    for i in range(1, 4):
        assert ch.runs_in(tmp_path / f"node{i}.db") == {uuids[i]}


def test_one_slow_route_is_named_as_a_link(gpuvet, tmp_path):
    with ch.netns.Cluster(4) as c:
        c.slow_route(1, 3)
        res = vet(gpuvet, tmp_path, c)
    rc, doc = ch.rank0_json(res)
    assert len(ch.measured(doc)) == 6, doc["pairs"]
    links = [(f["rank"], f["peer"]) for f in doc["findings"] if f["kind"] == "bad_link"]
    assert [tuple(sorted(x)) for x in links] == [(1, 3)], doc["findings"]
    assert not [f for f in doc["findings"] if f["kind"] == "bad_node"], doc["findings"]
    assert rc == 1 and doc["verdict"] == "reject"


def test_a_healthy_cluster_is_accepted(gpuvet, tmp_path):
    with ch.netns.Cluster(4) as c:
        res = vet(gpuvet, tmp_path, c)
    rc, doc = ch.rank0_json(res)
    assert len(ch.measured(doc)) == 6 and doc["nrounds"] == 3, doc["pairs"]
    assert ch.drained(doc) == [] and rc == 0 and doc["verdict"] == "accept", doc["findings"]
    assert all(p["gbps_ab"] > 0 and p["gbps_ba"] > 0 and p["lat_us"] > 0 for p in doc["pairs"])
    # 400 Mbit/s is 0.05 GB/s: the pairs carry what the links allow, no more
    assert all(p["gbps_ab"] < 0.06 for p in doc["pairs"]), doc["pairs"]
    assert [r[0] for r in res.values()] == [0, 0, 0, 0]
    # stored: `cluster show` on rank 0's store gives the same run back
    shown = gpuvet.json("--db", tmp_path / "node0.db", "cluster", "show", "--json", db=False)
    assert shown["uuid"] == doc["uuid"] and shown["verdict"] == "accept"
