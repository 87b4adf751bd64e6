"""What the `gpuvet cluster run` tests share (#49): a test policy for CPU nodes, and launching one
rank per namespace (or on loopback) the way an engine would, each with its own store."""
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from conftest import ROOT, gpuvet_bin

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from servers import netns  # noqa: E402
from servers.loopback import free_port  # noqa: E402,F401

# The nodes here have no GPU, so their own gate could never accept them (a GPU instance is judged with
# its GPUs): this policy reports the nodes' own verdicts without letting them decide, and judges the
# fabric; its straggler margin is wide because four fingerprints share two cores here.  A pair is slow
# under 0.4 of what healthy pairs reach: a node slowed to a fifth is at 0.2, while healthy pairs of
# ranks starved of CPU beside two busy loops a core fell to 0.64 of the best (3 runs of four nodes,
# load average 20 to 26, 2026-11-28): 0.4 leaves each side room.  CPU steal is the test's own doing
# (a node's gate would reject its own run on it under load): tolerated, with the reason.
POLICY = """name: cluster-test
rules:
  - metric: host.membw.copy.gbps
    min: 0.001
tolerate_flags:
  - {code: CPU_STEAL, reason: the test's nodes share two cores with each other and with busy loops}
cluster:
  - metric: cluster.node.verdict
    unmeasured: reported
  - metric: cluster.pair.gbps
    min_fraction_of_healthy: 0.4
  - metric: cluster.node.*
    max_fraction_below_median: 0.9
    max_fraction_above_median: 1
"""

# The fault tests' pairs run unshaped (loopback) beside other tests on two cores, where a pair's rate
# varies twofold from one moment to the next: only a pair at a tenth of the others is slow there.
FAULT_POLICY = POLICY.replace("min_fraction_of_healthy: 0.4", "min_fraction_of_healthy: 0.1")

# Each node's fingerprint: the test-only null bench (GPUVET_TEST_BENCHES=1, which every rank here gets).
# What these tests judge is the fabric and the runtime; a real bench's fingerprint on every rank of
# two 4-node tests at once (the host bench holds 2.4 GB a rank on this 24 GB machine) had the kernel
# kill benches for memory while other work ran beside them.
BENCH = ["--bench", "null"]
TEST_ENV = {"GPUVET_TEST_BENCHES": "1"}

# The job's secret every rank of a test holds (#56); a test of the unauthenticated run passes token=None.
TOKEN = "gpuvet-test-token-" + "5a" * 16


def policy(tmp_path, text=POLICY):
    p = tmp_path / "cluster-policy.yaml"
    p.write_text(text)
    return p


def slurm_env(rank, size):
    return {"SLURM_PROCID": str(rank), "SLURM_NTASKS": str(size), "SLURM_JOB_NODELIST": "gvnode[1-%d]" % size}


def own_host(i, argv, host=None):
    """argv with a host name of its own, gvnode<i+1> or host (a UTS namespace: `unshare --uts`), as ranks
    on loopback would otherwise all be one host, whose pairs are left out (#56).  Root only; else as is."""
    if os.geteuid() != 0 or not shutil.which("unshare"):
        return argv
    return ["unshare", "--uts", "sh", "-c", 'hostname "$0" && exec "$@"', host or f"gvnode{i + 1}", *argv]


class Ranks:
    """One `gpuvet cluster run` per node, started at once, each with its own store node<i>.db and its
    output in out.<i> / err.<i> (a test may watch err.0 while they run).  Ranks in `skip` are not
    started (start(i) starts one later); on loopback each rank has a host name of its own (gvnode<i+1>,
    or hosts[i]), unless one_host."""

    def __init__(self, gpuvet, tmp_path, n, args, cluster=None, env=None, skip=(), pre=(), rank_env=None,
                 token=TOKEN, one_host=False, hosts=None):
        self.procs, self.dbs, self.tmp, self.started = {}, {}, tmp_path, time.monotonic()
        self.gpuvet, self.n, self.args, self.cluster, self.env, self.pre = gpuvet, n, args, cluster, env, pre
        self.rank_env, self.token, self.one_host, self.hosts = rank_env or {}, token, one_host, hosts or {}
        self.t, self.elapsed = {}, {}
        for i in range(n):
            if i not in skip:
                self.start(i)

    def start(self, i):
        self.dbs[i] = self.tmp / f"node{i}.db"
        argv = [gpuvet_bin(), *self.pre, "--db", str(self.dbs[i]), "cluster", "run", *[str(a) for a in self.args]]
        if self.cluster:
            argv = self.cluster.cmd(i, argv)
        elif not self.one_host:
            argv = own_host(i, argv, self.hosts.get(i))
        e = {**self.gpuvet.env, **TEST_ENV, **slurm_env(i, self.n),
             **({"GPUVET_CLUSTER_TOKEN": self.token} if self.token else {}),
             **(self.env or {}), **self.rank_env.get(i, {})}
        e = {k: v for k, v in e.items() if v is not None}   # None in rank_env unsets a variable
        with open(self.tmp / f"out.{i}", "w") as so, open(self.tmp / f"err.{i}", "w") as se:
            self.t[i] = time.monotonic()
            self.procs[i] = subprocess.Popen(argv, env=e, stdout=so, stderr=se, text=True)

    def out(self, i):
        return (self.tmp / f"out.{i}").read_text(errors="replace")

    def err(self, i):
        return (self.tmp / f"err.{i}").read_text(errors="replace")

    def wait(self, timeout=300):
        out = {}
        for i, p in self.procs.items():
            try:
                p.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                for q in self.procs.values():
                    q.kill()
                raise AssertionError(f"rank {i} hung: {self.err(i)[-2000:]}")
            self.elapsed.setdefault(i, time.monotonic() - self.t[i])
            out[i] = (p.returncode, self.out(i), self.err(i))
        return out


def rank0_json(results):
    rc, so, se = results[0]
    assert so.strip(), (rc, se[-3000:])
    return rc, json.loads(so)


def runs_in(db):
    import sqlite3
    with sqlite3.connect(db) as c:
        return {r[0] for r in c.execute("SELECT uuid FROM runs")}


def drained(doc):
    return sorted(d["rank"] for d in doc["drain"])


def measured(doc):
    return [p for p in doc["pairs"] if p["state"] == "measured"]


def available():
    return netns.available()


# The outsider (#56): a plain Python client of the rendezvous, written from the docs (tests/servers/rdzv_client.py).
CLIENT = str(ROOT / "tests" / "servers" / "rdzv_client.py")


def outsider(c, node, where, *args, token=None):
    """rdzv_client.py run in node's namespace against rank 0 at where (HOST:PORT), holding token or none."""
    env = {"PATH": "/usr/bin:/bin", **({"GPUVET_CLUSTER_TOKEN": token} if token else {})}
    return subprocess.Popen(c.cmd(node, [sys.executable, CLIENT, where, *map(str, args)]), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)


def answer(p, timeout=120):
    """What the outsider's client saw: its one JSON line."""
    out, err = p.communicate(timeout=timeout)
    assert out.strip(), err[-2000:]
    return json.loads(out)


def listening(c, i, port):
    """Whether node i has a socket listening on port (rank 0 ready for the outsider), seen from inside."""
    return f":{port} " in c.ip(i, "ss", "-ltnH", check=False).stdout


def env_dump():
    return {k: v for k, v in os.environ.items() if k.startswith(("SLURM", "OMPI"))}
