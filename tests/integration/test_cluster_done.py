"""#56's "Done when", end to end: the faults and the outsider of the issue at once, through a real
srun, and real host fingerprints under the built-in straggler rule beside busy loops.

1. Eight nodes (network namespaces) started by a real one-node Slurm's `srun -n 8` (each task enters
   its rank's namespace, as in test_cluster_engines.py): node 3 at a fifth of the link rate both
   ways, node 6's port going down for longer than a pair may take and up again at the start of
   rounds 2, 4 and 6 of 7 (tied to rank 0's log by a real-time flapper, netns.Cluster.flap_on), and
   an outsider in a ninth namespace (tests/servers/rdzv_client.py) holding 20 idle sockets while
   the ranks arrive and saying hello for rank 5 first, without the token.  Rank 0 exits 1 and drains
   exactly nodes 3 (bad node) and 6 (intermittent); the outsider takes no rank and every real rank
   arrives.
2. Four namespaces whose fingerprint is the real `host` bench (STREAM copy and triad, JPEG decode,
   /dev/shm staging), with a busy loop per core beside them, judged by the built-in policy's
   straggler rule (`cluster.node.*` of judge/policies/default.yaml, not the test policy's wide
   margin): no node is drained as a straggler.  c4fdb45's rule (any figure 15 % under the median,
   measured once) drained healthy nodes here (docs/cluster.md "How it is tested here")."""
import contextlib
import json
import os
import sqlite3
import subprocess

import pytest
import yaml

import cluster_helpers as ch
from cluster_helpers import free_port
from conftest import ROOT, gpuvet_bin
from helpers import wait_for, within
from servers import slurm

NETNS = ch.available()
pytestmark = pytest.mark.skipif(NETNS is not None, reason=str(NETNS))

N, BAD, FLAPPER, SQUATTED, OUTSIDER = 8, 3, 6, 5, 8
FLAPS = (2, 4, 6)   # of the 7 rounds of `all` on 8 nodes: node 6 is bad, fine, bad... in its rounds


def kinds(doc, kind):
    return [f for f in doc["findings"] if f["kind"] == kind]


def held(c, node, where):
    """How many connections node holds open to where (HOST:PORT), seen from inside its namespace."""
    return sum(line.split()[3:4] == [where] for line in c.ip(node, "ss", "-tnH", "state", "established",
                                                            check=False).stdout.splitlines())


def task_script(c, tmp_path, where, go):
    """The task srun starts: rank 0 at once, the others once `go` exists (after the outsider has spoken
    first), each into its namespace with its own store; output and exit status kept per rank, and the
    status is the task's, so srun's own is non-zero exactly when a rank's is."""
    args = " ".join(["--rendezvous", where, "--policy", str(ch.policy(tmp_path)), "--wait", "60",
                     "--pair-timeout", "5", *ch.BENCH, "--json"])
    return (f'r=$SLURM_PROCID; [ "$r" = 0 ] || until [ -e {go} ]; do sleep 0.1; done; '
            f'ip netns exec gv{c.tag}n$r {gpuvet_bin()} -v --db {tmp_path}/node$r.db cluster run {args} '
            f'>{tmp_path}/out.$r 2>{tmp_path}/err.$r; rc=$?; echo $rc >{tmp_path}/rc.$r; exit $rc')


@pytest.mark.skipif(slurm.available() is not None, reason=str(slurm.available()))
def test_eight_nodes_through_srun_with_a_bad_node_a_flapping_node_and_an_outsider(gpuvet, tmp_path):
    port, go, flapper = free_port(), tmp_path / "go", None
    with slurm.Slurm(str(tmp_path / "slurm"), cpus=N) as s, ch.netns.Cluster(N + 1) as c:
        where = f"{c.addr(0)}:{port}"
        c.slow_node(BAD)
        srun = s.srun_start(["-n", str(N), "sh", "-c", task_script(c, tmp_path, where, go)],
                            env={**gpuvet.env, **ch.TEST_ENV, "GPUVET_CLUSTER_TOKEN": ch.TOKEN})
        try:
            assert wait_for(lambda: ch.listening(c, 0, port) or srun.poll() is not None, within(60)), srun.poll()
            idle = ch.outsider(c, OUTSIDER, where, "idle", 20, 20)       # held while the ranks arrive
            assert wait_for(lambda: held(c, OUTSIDER, where) >= 20 or idle.poll() is not None, within(30)), idle.poll()
            squat = ch.answer(ch.outsider(c, OUTSIDER, where, "squat", SQUATTED, N))   # first, no token
            flapper = c.flap_on(FLAPPER, tmp_path / "err.0", [f"round {r} of" for r in FLAPS], down_s=6)
            go.touch()
            idled = ch.answer(idle)
            srun_out, srun_err = srun.communicate(timeout=within(600))
        finally:
            for p in (srun, flapper):
                if p and p.poll() is None:
                    p.kill()
            flaps = flapper.communicate()[0] if flapper else ""
    print("cluster_done flaps (mark, seen, port down):", flaps.split("\n"))
    rcs = [int((tmp_path / f"rc.{i}").read_text()) for i in range(N)]
    doc = json.loads((tmp_path / "out.0").read_text() or "{}")
    assert doc, ((tmp_path / "err.0").read_text()[-3000:], srun_err[-2000:])
    pairs = [(p["round"], p["a"], p["b"], p["state"]) for p in doc["pairs"] if p["state"] != "measured"]
    ctx = (doc["findings"], pairs, flaps)
    # every real rank arrived, from its own namespace; the outsider took none
    assert [n["state"] for n in doc["nodes"]] == ["ok"] * N, doc["nodes"]
    assert [n["addr"] for n in doc["nodes"]] == [c.addr(i) for i in range(N)], doc["nodes"]
    assert doc["engine"] == "slurm" and doc["authenticated"] is True
    assert squat["challenge"]["auth"] is True and "bad proof" in squat["answer"]["refused"], squat
    # the idle sockets, open while the ranks arrived, were each told why and dropped: when every rank had
    # arrived, or 5 s after their challenge, whichever came first
    assert len(idled["closed"]) == 20 and all(
        "every rank of this job has already arrived" in why or "no hello within 5 s" in why for _, why in idled["closed"]
    ), idled
    assert all(t < within(5) for t, _ in idled["closed"]), idled
    # exactly the two nodes: the bad one and the intermittent one, nothing else named
    assert rcs[0] == 1 and doc["verdict"] == "reject", (rcs, ctx)
    assert ch.drained(doc) == [BAD, FLAPPER], ctx
    assert [f["rank"] for f in kinds(doc, "bad_node")] == [BAD], ctx
    assert [f["rank"] for f in kinds(doc, "intermittent")] == [FLAPPER], ctx
    assert "fine in rounds" in kinds(doc, "intermittent")[0]["evidence"], ctx
    assert not kinds(doc, "bad_link") and not kinds(doc, "straggler"), ctx
    assert rcs == [1 if i in (0, BAD, FLAPPER) else 0 for i in range(N)], (rcs, ctx)
    assert srun.returncode != 0, srun_err[-2000:]


@contextlib.contextmanager
def busy_loops(n):
    """n processes spinning on the CPU (the hog of #56: a busy loop a core), ended on leaving."""
    procs = [subprocess.Popen(["sh", "-c", "while :; do :; done"]) for _ in range(n)]
    try:
        yield procs
    finally:
        for p in procs:
            p.kill()
            p.wait()


def builtin_straggler_policy(tmp_path):
    """The test policy (CPU nodes, their own verdicts reported) with the built-in `cluster.node.*` rule
    in place of its wide margin, read from the shipped default policy so that the two never drift."""
    pol = yaml.safe_load(ch.POLICY)
    shipped = yaml.safe_load((ROOT / "judge" / "policies" / "default.yaml").read_text())
    rule = next(r for r in shipped["cluster"] if r["metric"] == "cluster.node.*")
    pol["cluster"] = [r for r in pol["cluster"] if r["metric"] != "cluster.node.*"] + [rule]
    return ch.policy(tmp_path, yaml.safe_dump(pol, sort_keys=False))


# What the straggler rule reads of the host bench: the figures measured more than once (docs/cluster.md),
# less the memory bandwidths when their arrays fit in the last-level cache (here: 1 GiB stands in for the
# available memory, so 43 MB arrays, under this VM's 300 MB L3): those read 34 GB/s on three ranks and 2.5
# on the fourth in one run beside busy loops, the cache shared or not, and drained the fourth.
QUIET = {"host.staging.shm.gbps"}
MEMBW = {"host.membw.copy.gbps", "host.membw.triad.gbps"}


def test_real_host_fingerprints_under_load_drain_no_straggler(gpuvet, tmp_path):
    """Each rank's host bench sizes its arrays and staging file by GPUVET_TEST_HOST_MEM_MB (1 GiB: three
    43 MiB arrays and a 128 MiB file, about 300 MB a rank instead of 3 GB on this 24 GB machine).  Rank 1
    is a planted suspect (GPUVET_TEST_SUSPECTS), so that every run has every node measure its benches
    again side by side, whatever the first pass read; the rule still names only a node off both times.
    A suspect measured alone against the first median was drained here in CI (2026-11-28: /dev/shm
    staging 0.48 then 0.38 GB/s against the others' 0.63 to 0.67 the first time)."""
    env = {"GPUVET_TEST_HOST_MEM_MB": "1024", "GPUVET_TEST_SUSPECTS": "1"}
    with ch.netns.Cluster(4) as c, busy_loops(os.cpu_count() or 2):
        args = ["--rendezvous", f"{c.addr(0)}:{free_port()}", "--policy", builtin_straggler_policy(tmp_path),
                "--wait", "60", "--bench", "host", "--json"]
        res = ch.Ranks(gpuvet, tmp_path, 4, args, cluster=c, env=env).wait(timeout=within(600))
    rc, doc = ch.rank0_json(res)
    figures = {n["rank"]: {m["name"]: (m["value"], m["remeasured"]) for m in n["metrics"]} for n in doc["nodes"]}
    print("cluster_done figures (first, measured again):", json.dumps(figures))
    assert [n["state"] for n in doc["nodes"]] == ["ok"] * 4, doc["nodes"]
    assert all(QUIET <= set(f) for f in figures.values()), figures   # the rule had real figures to judge
    assert all(f[q][1] is not None for f in figures.values() for q in QUIET), figures   # each measured twice
    llc = []   # each node's copy arrays and last-level cache, from its own store
    for i in range(4):
        with sqlite3.connect(tmp_path / f"node{i}.db") as db:
            params = [json.loads(p) for (p,) in db.execute("SELECT params FROM metrics WHERE name = 'host.membw.copy.gbps'")]
        llc += [(p["array_bytes"], p["llc_bytes"]) for p in params]
    assert len(llc) >= 4, llc
    assert all(MEMBW.isdisjoint(f) for f in figures.values()) == all(a < l for a, l in llc), (figures, llc)
    assert not kinds(doc, "straggler"), (doc["findings"], figures)
    assert ch.drained(doc) == [], (doc["findings"], figures)
