"""contrib/deploy for `gpuvet cluster run` (#49): the Slurm batch script and the
Kubernetes Indexed Job + headless Service.  The batch script runs for real
under sh with Slurm's own commands (srun, scontrol), absent a live cluster
here, replaced by stubs on PATH: srun starts the task command once per rank
with SLURM_PROCID set, as `srun --ntasks-per-node=1` does on N nodes; a
stand-in gpuvet plays each rank (the real `cluster run` is tested by the
lead's namespace, mpirun and Slurm tests).  The manifests pass the
Kubernetes 1.37 schemas strictly and are checked for what makes the ranks
meet: indexes, the Service's DNS name, one pod per node."""
import json
import os
import shutil
import string
import subprocess
from pathlib import Path

import pytest
import yaml

from conftest import ROOT

DEPLOY = ROOT / "contrib" / "deploy"
SBATCH = DEPLOY / "slurm" / "gpuvet-cluster.sbatch"
K8S_JOB = DEPLOY / "kubernetes" / "gpuvet-cluster-job.yaml"
NODES = ["gpu-a1", "gpu-a2", "gpu-b1", "gpu-b2"]

# rank 0's --json, as common/cluster_json.c writes its "drain" list: the nodes to drain, once each
REJECT = {
    "verdict": "reject", "exit_code": 1, "nnodes": 4,
    "drain": [
        {"rank": 2, "host": "ip-198-18-0-3", "addr": "198.18.0.3", "finding": "bad_node",
         "why": "every pair of rank 2 at 2.1 GB/s against the cluster median 9.8 GB/s"},
        {"rank": 1, "host": "ip-198-18-0-2", "addr": "198.18.0.2", "finding": "node_rejected",
         "why": "its own fingerprint: gemm.bf16.tflops 410 < 600"},
    ],
}


def stubs(tmp_path, rank0_rc, other_rc=0, skip_rank=""):
    """srun, scontrol and a stand-in gpuvet on PATH; each logs its calls under tmp_path."""
    b = tmp_path / "bin"
    b.mkdir()
    (tmp_path / "rank0.json").write_text(json.dumps(REJECT if rank0_rc else dict(REJECT, drain=[])))
    scripts = {
        "srun": f"""#!/bin/sh
echo "$@" >> {tmp_path}/srun.log
while [ $# -gt 0 ]; do case $1 in --*) shift ;; *) break ;; esac; done
max=0; i=0
while [ $i -lt {len(NODES)} ]; do
    if [ "$i" != "{skip_rank}" ]; then SLURM_PROCID=$i "$@"; rc=$?; [ $rc -le $max ] || max=$rc; fi
    i=$((i + 1))
done
exit $max
""",
        "scontrol": f"""#!/bin/sh
if [ "$1 $2" = "show hostnames" ]; then printf '%s\\n' {' '.join(NODES)}; exit 0; fi
echo "$@" >> {tmp_path}/scontrol.log
""",
        "gpuvet": f"""#!/bin/sh
echo "$SLURM_PROCID $*" >> {tmp_path}/gpuvet.log
echo "$SLURM_PROCID ${{GPUVET_CLUSTER_TOKEN:-none}}" >> {tmp_path}/tokens.log
if [ "$SLURM_PROCID" = 0 ]; then cat {tmp_path}/rank0.json; exit {rank0_rc}; fi
echo "rank $SLURM_PROCID: its own line"
exit {other_rc}
""",
    }
    for name, text in scripts.items():
        (b / name).write_text(text)
        (b / name).chmod(0o755)
    return b


def run_sbatch(tmp_path, bindir, *args, **env):
    e = dict(os.environ, PATH=f"{bindir}:{os.environ['PATH']}", GPUVET=str(bindir / "gpuvet"),
             GPUVET_STORE_DIR=str(tmp_path / "store"), GPUVET_POLICY=str(tmp_path / "no-policy.yaml"),
             SLURM_JOB_ID="4242", SLURM_JOB_NODELIST="gpu-a[1-2],gpu-b[1-2]", SLURM_SUBMIT_DIR=str(tmp_path),
             TMPDIR=str(tmp_path))
    e.update({k: str(v) for k, v in env.items()})
    return subprocess.run(["sh", str(SBATCH), *args], capture_output=True, text=True, env=e, timeout=60)


def gpuvet_calls(tmp_path):
    return [line.split(" ", 1) for line in (tmp_path / "gpuvet.log").read_text().splitlines()]


def test_sbatch_runs_one_task_per_node_and_rank_0_decides(tmp_path):
    # rank 0 rejects, every other rank exits 0: the job exits 1
    p = run_sbatch(tmp_path, stubs(tmp_path, rank0_rc=1), "--pairs", "ring")
    assert p.returncode == 1, p.stdout + p.stderr
    assert (tmp_path / "srun.log").read_text().split()[:3] == ["--ntasks-per-node=1", "--kill-on-bad-exit=0",
                                                               "--export=ALL,GPUVET_CLUSTER_TOKEN"]
    runs = gpuvet_calls(tmp_path)
    assert [r for r, _ in runs] == ["0", "1", "2", "3"]
    store = tmp_path / "store"
    for rank, argv in runs:
        # each node's store on its local disk; no --rendezvous: gpuvet's default is the first node of the list
        assert argv.startswith(f"--db {store}/gpuvet.db cluster run --profile quick --wait 300 --deadline 3300 --pairs ring")
        assert "--rendezvous" not in argv and "--policy" not in argv
        assert argv.endswith("--json") == (rank == "0")
    # rank 0's --json lands in the submission directory; the other ranks' lines in the job's output
    assert json.loads((tmp_path / "gpuvet-cluster-4242.json").read_text())["verdict"] == "reject"
    assert "rank 3: its own line" in p.stdout
    # nothing drained by default: the commands are printed, rank R named as the job's R-th node
    assert not (tmp_path / "scontrol.log").exists()
    assert ('scontrol update nodename=gpu-b1 state=drain reason="gpuvet cluster: bad_node: every pair of rank 2 '
            'at 2.1 GB/s against the cluster median 9.8 GB/s"') in p.stdout
    assert "nodename=gpu-a2 state=drain" in p.stdout
    assert not [d for d in tmp_path.glob("gpuvet-cluster-4242.*") if d.is_dir()]   # its scratch directory removed


def test_sbatch_drains_the_named_nodes_when_asked(tmp_path):
    p = run_sbatch(tmp_path, stubs(tmp_path, rank0_rc=1), GPUVET_DRAIN="1")
    assert p.returncode == 1, p.stderr
    calls = (tmp_path / "scontrol.log").read_text().splitlines()
    assert calls == [
        "update state=drain nodename=gpu-b1 reason=gpuvet cluster: bad_node: every pair of rank 2 at 2.1 GB/s "
        "against the cluster median 9.8 GB/s",
        "update state=drain nodename=gpu-a2 reason=gpuvet cluster: node_rejected: its own fingerprint: "
        "gemm.bf16.tflops 410 < 600",
    ]


def test_sbatch_accepts_whatever_the_other_ranks_exit_with(tmp_path):
    pol = tmp_path / "site.yaml"
    pol.write_text("name: site\n")
    p = run_sbatch(tmp_path, stubs(tmp_path, rank0_rc=0, other_rc=1), GPUVET_DRAIN="1", GPUVET_POLICY=pol,
                   GPUVET_PROFILE="standard", GPUVET_WAIT_S="60")
    assert p.returncode == 0, p.stdout + p.stderr
    assert not (tmp_path / "scontrol.log").exists()
    for _, argv in gpuvet_calls(tmp_path):
        assert f"cluster run --policy {pol} --profile standard --wait 60 --deadline 3300" in argv


def test_sbatch_without_rank_0_is_an_error_not_an_accept(tmp_path):
    p = run_sbatch(tmp_path, stubs(tmp_path, rank0_rc=0, skip_rank="0"))
    assert p.returncode == 2 and "rank 0 reported no verdict" in p.stderr


def test_sbatch_refuses_to_run_outside_slurm(tmp_path):
    p = run_sbatch(tmp_path, stubs(tmp_path, rank0_rc=0), SLURM_JOB_ID="")
    assert p.returncode != 0 and "run it with sbatch" in p.stderr
    assert not (tmp_path / "gpuvet.log").exists()


def tokens(tmp_path):
    return dict(line.split(" ", 1) for line in (tmp_path / "tokens.log").read_text().splitlines())


def test_sbatch_makes_a_token_per_job_for_every_rank(tmp_path):
    """#56: the batch script makes the job's secret and srun's environment carries it to every rank,
    the same on each, a new one per job, never on a command line; one the environment gives is used."""
    bindir = stubs(tmp_path, rank0_rc=0)
    p = run_sbatch(tmp_path, bindir)
    assert p.returncode == 0, p.stderr
    first = tokens(tmp_path)
    assert sorted(first) == ["0", "1", "2", "3"] and len(set(first.values())) == 1, first
    token = first["0"]
    assert len(token) == 64 and all(c in "0123456789abcdef" for c in token), token
    assert token not in (tmp_path / "srun.log").read_text() + (tmp_path / "gpuvet.log").read_text()
    (tmp_path / "tokens.log").unlink()
    assert run_sbatch(tmp_path, bindir).returncode == 0
    assert set(tokens(tmp_path).values()) != {token}   # a new job, a new secret
    (tmp_path / "tokens.log").unlink()
    (tmp_path / "gpuvet.log").unlink()
    given = "site-given-token-" + "7" * 20
    assert run_sbatch(tmp_path, bindir, GPUVET_CLUSTER_TOKEN=given, GPUVET_DEADLINE_S=900).returncode == 0
    assert set(tokens(tmp_path).values()) == {given}
    assert all("--deadline 900" in argv for _, argv in gpuvet_calls(tmp_path))


def test_sbatch_directives():
    head = [line for line in SBATCH.read_text().splitlines() if line.startswith("#SBATCH")]
    assert "#SBATCH --ntasks-per-node=1" in head and "#SBATCH --exclusive" in head
    assert not any("--nodes" in line or " -N" in line for line in head)   # the size is the user's: sbatch -N


VARS = {"JOB": "gpuvet-cluster", "N": "4", "IMAGE": "registry.example.com/gpuvet:0.1.0", "GPUS": "8",
        "TOKEN": "ab" * 32}


def k8s_cluster_docs(**over):
    text = string.Template(K8S_JOB.read_text()).safe_substitute(dict(VARS, **over))
    return {d["kind"]: d for d in yaml.safe_load_all(text) if d}


def test_k8s_cluster_manifests_pass_the_kubernetes_schema():
    kv = pytest.importorskip("kubernetes_validate")
    docs = k8s_cluster_docs()
    assert set(docs) == {"Secret", "Service", "Job"}
    for d in docs.values():
        kv.validate(d, "1.37.0", strict=True)
    bad = json.loads(json.dumps(docs["Job"]))
    bad["spec"]["completionMod"] = bad["spec"].pop("completionMode")
    with pytest.raises(kv.ValidationError):
        kv.validate(bad, "1.37.0", strict=True)


def test_k8s_cluster_job_meets_at_pod_0_through_the_headless_service():
    docs = k8s_cluster_docs(N="16")
    svc, job = docs["Service"], docs["Job"]
    spec, pod = job["spec"], job["spec"]["template"]["spec"]
    assert spec["completionMode"] == "Indexed" and spec["completions"] == spec["parallelism"] == 16
    assert spec["backoffLimit"] == 0
    assert svc["spec"]["clusterIP"] == "None" and svc["spec"]["publishNotReadyAddresses"] is True
    assert svc["metadata"]["namespace"] == job["metadata"]["namespace"]
    # pod i is JOB-i.SUBDOMAIN: the subdomain is the Service, whose selector picks these pods
    assert pod["subdomain"] == svc["metadata"]["name"]
    labels = job["spec"]["template"]["metadata"]["labels"]
    assert all(labels.get(k) == v for k, v in svc["spec"]["selector"].items())
    assert svc["spec"]["ports"][0]["port"] == 29517
    c = pod["containers"][0]
    script = c["command"][-1]
    assert f"--size 16 --rendezvous {job['metadata']['name']}-0.{svc['metadata']['name']}:29517" in script
    assert '[ "$JOB_COMPLETION_INDEX" = 0 ] && exit "$rc"' in script      # rank 0 decides the Job
    assert c["resources"]["limits"]["nvidia.com/gpu"] == 8
    # one pod per node
    term = pod["affinity"]["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][0]
    assert term["topologyKey"] == "kubernetes.io/hostname"
    assert all(labels.get(k) == v for k, v in term["labelSelector"]["matchLabels"].items())
    # host networking resolves the Service's names only with this DNS policy
    assert pod["hostNetwork"] is True and pod["dnsPolicy"] == "ClusterFirstWithHostNet"
    # the job's secret: a Secret of the Job's name, read by every pod as GPUVET_CLUSTER_TOKEN (#56)
    secret = docs["Secret"]
    assert secret["metadata"]["namespace"] == job["metadata"]["namespace"]
    assert secret["stringData"]["token"] == VARS["TOKEN"]
    env = {e["name"]: e for e in c["env"]}
    ref = env["GPUVET_CLUSTER_TOKEN"]["valueFrom"]["secretKeyRef"]
    assert ref == {"name": secret["metadata"]["name"], "key": "token"}
    assert "--deadline 6600" in script and 6600 < spec["activeDeadlineSeconds"]
    if shutil.which("shellcheck"):
        p = subprocess.run(["shellcheck", "-s", "sh", "-"], input=script, capture_output=True, text=True)
        assert p.returncode == 0, p.stdout


def test_k8s_cluster_readme_command_with_a_stub_kubectl(tmp_path):
    # the README's envsubst line: only the four variables substituted, the container's own left as they are
    readme = (DEPLOY / "README.md").read_text()
    line = next(l.strip() for l in readme.splitlines() if "gpuvet-cluster-job.yaml | kubectl create -f -" in l)
    assert line.startswith("JOB=gpuvet-cluster N=16 ")
    rec = tmp_path / "kubectl"
    rec.write_text(f'#!/bin/sh\necho "$@" >> {tmp_path}/args\ncat >> {tmp_path}/stdin\n')
    rec.chmod(0o755)
    env = dict(os.environ, PATH=f"{tmp_path}:{os.environ['PATH']}", rc="SHELL-SIDE", JOB_COMPLETION_INDEX="x")
    p = subprocess.run(["sh", "-c", line.replace("contrib/", f"{ROOT}/contrib/")], env=env, capture_output=True,
                       text=True)
    assert p.returncode == 0, p.stderr
    assert (tmp_path / "args").read_text().split() == ["create", "-f", "-"]
    docs = {d["kind"]: d for d in yaml.safe_load_all((tmp_path / "stdin").read_text()) if d}
    assert docs["Job"]["spec"]["completions"] == 16 and docs["Service"]["metadata"]["name"] == "gpuvet-cluster"
    token = docs["Secret"]["stringData"]["token"]   # made by the README's line: 32 random bytes as hex
    assert len(token) == 64 and all(ch in "0123456789abcdef" for ch in token), token
    script = docs["Job"]["spec"]["template"]["spec"]["containers"][0]["command"][-1]
    assert "--rendezvous gpuvet-cluster-0.gpuvet-cluster:29517" in script
    assert "$rc" in script and "$JOB_COMPLETION_INDEX" in script and "SHELL-SIDE" not in script
