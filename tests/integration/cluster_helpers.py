"""What the `gpuvet cluster run` tests share (#49): a test policy for CPU nodes, and launching one
rank per namespace (or on loopback) the way an engine would, each with its own store."""
import json
import os
import subprocess
import sys
from pathlib import Path

from conftest import gpuvet_bin

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

BENCH = ["--bench", "host"]


def policy(tmp_path, text=POLICY):
    p = tmp_path / "cluster-policy.yaml"
    p.write_text(text)
    return p


def slurm_env(rank, size):
    return {"SLURM_PROCID": str(rank), "SLURM_NTASKS": str(size), "SLURM_JOB_NODELIST": "gvnode[1-%d]" % size}


class Ranks:
    """One `gpuvet cluster run` per node, started at once, each with its own store node<i>.db and its
    output in out.<i> / err.<i> (a test may watch err.0 while they run)."""

    def __init__(self, gpuvet, tmp_path, n, args, cluster=None, env=None, skip=(), pre=(), rank_env=None):
        self.procs, self.dbs, self.tmp = {}, {}, tmp_path
        for i in range(n):
            if i in skip:
                continue
            self.dbs[i] = tmp_path / f"node{i}.db"
            argv = [gpuvet_bin(), *pre, "--db", str(self.dbs[i]), "cluster", "run", *[str(a) for a in args]]
            if cluster:
                argv = cluster.cmd(i, argv)
            e = {**gpuvet.env, **slurm_env(i, n), **(env or {}), **(rank_env or {}).get(i, {})}
            with open(tmp_path / f"out.{i}", "w") as so, open(tmp_path / f"err.{i}", "w") as se:
                self.procs[i] = subprocess.Popen(argv, env=e, stdout=so, stderr=se, text=True)

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
            out[i] = (p.returncode, (self.tmp / f"out.{i}").read_text(errors="replace"), self.err(i))
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


def env_dump():
    return {k: v for k, v in os.environ.items() if k.startswith(("SLURM", "OMPI"))}
