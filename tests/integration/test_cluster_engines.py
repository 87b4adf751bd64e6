"""`gpuvet cluster run` started by the engines themselves (#49): OpenMPI's mpirun (Debian's
openmpi-bin) and a real one-node Slurm (munged, slurmctld, slurmd from Debian, started by the test).
Each task enters its node's network namespace (`ip netns exec`) and runs the same command a user
would put after srun or mpirun; rank and size come from the engine's own variables."""
import json
import shutil
import subprocess

import pytest

import cluster_helpers as ch
from cluster_helpers import free_port
from conftest import gpuvet_bin
from servers import slurm

NETNS = ch.available()


def task_script(c, tmp_path, rank_var, *extra):
    """The task an engine starts: into the namespace of its rank, its own store, its output kept."""
    args = " ".join(["--rendezvous", f"{c.addr(0)}:{free_port()}", "--policy", str(ch.policy(tmp_path)),
                     "--wait", "60", *ch.BENCH, "--json", *extra])
    return (f'r=${rank_var}; ip netns exec gv{c.tag}n$r {gpuvet_bin()} --db {tmp_path}/node$r.db cluster run {args} '
            f'>{tmp_path}/out.$r 2>{tmp_path}/err.$r; echo $? >{tmp_path}/rc.$r')


def outcome(tmp_path, n):
    rcs = [int((tmp_path / f"rc.{i}").read_text()) for i in range(n)]
    doc = json.loads((tmp_path / "out.0").read_text() or "{}")
    assert doc, (tmp_path / "err.0").read_text()[-3000:]
    return rcs, doc


@pytest.mark.skipif(NETNS is not None or not shutil.which("mpirun"), reason=str(NETNS or "mpirun not installed"))
@pytest.mark.parametrize("slow", [2, None])
def test_through_mpirun(gpuvet, tmp_path, slow):
    with ch.netns.Cluster(4) as c:
        if slow is not None:
            c.slow_node(slow)
        p = subprocess.run(["mpirun", "--allow-run-as-root", "--oversubscribe", "-np", "4", "sh", "-c",
                            task_script(c, tmp_path, "OMPI_COMM_WORLD_RANK")],
                           capture_output=True, text=True, timeout=400,
                           env={**gpuvet.env, **ch.TEST_ENV, "GPUVET_CLUSTER_TOKEN": ch.TOKEN})
    rcs, doc = outcome(tmp_path, 4)
    assert doc["engine"] == "mpi" and len(ch.measured(doc)) == 6, (p.stderr[-2000:], doc["pairs"])
    if slow is None:
        assert rcs == [0, 0, 0, 0] and doc["verdict"] == "accept", doc["findings"]
    else:
        assert ch.drained(doc) == [slow] and rcs[0] == 1 and rcs[slow] == 1, doc["findings"]


@pytest.mark.skipif(NETNS is not None or slurm.available() is not None, reason=str(NETNS or slurm.available()))
@pytest.mark.parametrize("slow", [1, None])
def test_through_slurm(gpuvet, tmp_path, slow):
    with slurm.Slurm(str(tmp_path / "slurm")) as s, ch.netns.Cluster(4) as c:
        if slow is not None:
            c.slow_node(slow)
        p = s.srun(["-n", "4", "sh", "-c", task_script(c, tmp_path, "SLURM_PROCID")], timeout=400,
                   env={**gpuvet.env, **ch.TEST_ENV, "GPUVET_CLUSTER_TOKEN": ch.TOKEN})
    rcs, doc = outcome(tmp_path, 4)
    assert doc["engine"] == "slurm" and len(ch.measured(doc)) == 6, (p.stderr[-2000:], doc["pairs"])
    if slow is None:
        assert rcs == [0, 0, 0, 0] and doc["verdict"] == "accept" and p.returncode == 0, doc["findings"]
    else:
        assert ch.drained(doc) == [slow] and rcs[0] == 1 and rcs[slow] == 1, doc["findings"]
