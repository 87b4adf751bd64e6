"""contrib/deploy/: the Slurm health check and prolog, the Kubernetes Job's
entry point and manifests, cloud-init.  The scripts run for real against the
real gpuvet binary and real stores; only the cluster's own commands
(scontrol, kubectl), absent here, are replaced by a recorder passed through
the scripts' documented GPUVET_DRAIN_CMD / KUBECTL variables.

Issue #59: they use the release tarball (`make dist`).  cloud-init downloads
it (from nginx on loopback here) or takes a copy, checks its SHA-256 and
unpacks it, refusing one that differs; the prolog and the health check gate
with an unpacked tarball's gpuvet, which is their default path; the
Dockerfile copies the tarball into a runtime image with no compiler (its
install step runs on a bare Debian root in test_dist.py)."""
import json
import os
import shutil
import re
import string
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
import yaml

from conftest import FIXTURES, ROOT, gpuvet_bin
from helpers import dist_files, plain_suite_only, unpack_dist, within
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from servers import loopback  # noqa: E402

DEPLOY = ROOT / "contrib" / "deploy"
SCRIPTS = sorted(DEPLOY.glob("*/*.sh")) + sorted(DEPLOY.glob("*/*.sbatch"))   # batch scripts are sh too


def recorder(tmp_path):
    log = tmp_path / "calls.log"
    rec = tmp_path / "record"
    rec.write_text(f'#!/bin/sh\nfor a in "$@"; do printf "%s\\n" "$a"; done >> "{log}"\necho --- >> "{log}"\n')
    rec.chmod(0o755)
    return rec, log


def calls(log):
    if not log.exists():
        return []
    return [c.strip("\n").split("\n") for c in log.read_text().split("---\n") if c.strip()]


def stored(gpuvet, tmp_path, case, memcpy=True):
    fp = json.loads((FIXTURES / "flags" / f"{case}.json").read_text())
    fp["run"]["uuid"] = str(uuid.uuid4())
    if memcpy:
        fp["benches"].append({"name": "memcpy", "status": "ok", "reason": None, "duration_s": 1.0, "config": {}})
        fp["metrics"] += [{"bench": "memcpy", "name": n, "gpu": -1, "value": v, "unit": u, "params": {}}
                          for n, v, u in (("memcpy.h2d.pinned.gbps", 55.0, "GB/s"), ("memcpy.h2d.pct_of_link", 87.0, "%"))]
    p = tmp_path / f"{case}.json"
    p.write_text(json.dumps(fp))
    gpuvet("results", "import", p, check=0)


def run_script(script, gpuvet, tmp_path, **env):
    e = dict(gpuvet.env, GPUVET=gpuvet_bin(), GPUVET_DB=gpuvet.db, GPUVET_POLICY=str(tmp_path / "no-policy.yaml"),
             PATH=os.environ["PATH"])
    e.update({k: str(v) for k, v in env.items()})
    return subprocess.run(["sh", str(script)], capture_output=True, text=True, env=e, timeout=300)


@pytest.mark.skipif(shutil.which("shellcheck") is None, reason="shellcheck not installed")
@pytest.mark.parametrize("script", SCRIPTS, ids=[s.name for s in SCRIPTS])
def test_scripts_pass_shellcheck(script):
    p = subprocess.run(["shellcheck", "-s", "sh", str(script)], capture_output=True, text=True)
    assert p.returncode == 0, p.stdout


HEALTH = DEPLOY / "slurm" / "gpuvet-healthcheck.sh"
PROLOG = DEPLOY / "slurm" / "gpuvet-prolog.sh"


def test_healthcheck_drains_a_rejected_node_with_the_reason(gpuvet, tmp_path):
    stored(gpuvet, tmp_path, "thermal_hw_1s")
    rec, log = recorder(tmp_path)
    stamp = tmp_path / "stamp"
    stamp.touch()   # measured recently: gate the stored run, do not measure again
    p = run_script(HEALTH, gpuvet, tmp_path, GPUVET_DRAIN_CMD=f"{rec} ", GPUVET_STAMP=stamp,
                   GPUVET_OUT=tmp_path / "out.txt", SLURMD_NODENAME="gpu7")
    assert p.returncode == 0, p.stderr
    (c,) = calls(log)
    assert c[0].startswith("gpuvet reject: flag THROTTLE_THERMAL (critical): gpu 0: thermal slowdown"), c


def test_healthcheck_leaves_an_accepted_node_alone(gpuvet, tmp_path):
    stored(gpuvet, tmp_path, "clean")
    rec, log = recorder(tmp_path)
    stamp = tmp_path / "stamp"
    stamp.touch()
    p = run_script(HEALTH, gpuvet, tmp_path, GPUVET_DRAIN_CMD=f"{rec} ", GPUVET_STAMP=stamp,
                   GPUVET_OUT=tmp_path / "out.txt")
    assert p.returncode == 0 and calls(log) == []


def test_healthcheck_never_benchmarks_and_hands_a_stale_node_to_the_bench_step(gpuvet, tmp_path):
    rec, log = recorder(tmp_path)
    bench = tmp_path / "bench"
    bench.write_text(f"#!/bin/sh\necho started > {tmp_path}/bench-started\n")
    bench.chmod(0o755)
    db = tmp_path / "fresh" / "gpuvet.db"
    t0 = time.monotonic()
    p = run_script(HEALTH, gpuvet, tmp_path, GPUVET_DB=db, GPUVET_DRAIN_CMD=f"{rec} ", GPUVET_BENCH_CMD=bench,
                   GPUVET_STAMP=tmp_path / "stamp", GPUVET_OUT=tmp_path / "out.txt")
    assert p.returncode == 0, p.stderr
    assert time.monotonic() - t0 < within(10)
    for _ in range(50):
        if (tmp_path / "bench-started").exists():
            break
        time.sleep(0.1)
    assert (tmp_path / "bench-started").exists()
    assert calls(log) == [] and not db.exists()       # no drain, no measurement from the check itself


def test_healthcheck_stays_within_slurms_60_s(gpuvet, tmp_path):
    # a gpuvet that hangs (a wedged driver): the check gives up, drains nothing, ends in time
    slow = tmp_path / "slow-gpuvet"
    slow.write_text("#!/bin/sh\nsleep 100\n")
    slow.chmod(0o755)
    rec, log = recorder(tmp_path)
    stored(gpuvet, tmp_path, "clean")
    stamp = tmp_path / "stamp"
    stamp.touch()
    t0 = time.monotonic()
    p = run_script(HEALTH, gpuvet, tmp_path, GPUVET=slow, GPUVET_CHECK_TIMEOUT=2, GPUVET_DRAIN_CMD=f"{rec} ",
                   GPUVET_STAMP=stamp, GPUVET_OUT=tmp_path / "out.txt")
    assert p.returncode == 0 and calls(log) == []
    assert time.monotonic() - t0 < within(10)


BENCH = DEPLOY / "slurm" / "gpuvet-bench.sh"


def bench_env(tmp_path, reason="gpuvet: benchmarking", jobs_for=0):
    """Recorders for scontrol, a reason for sinfo, and an squeue that lists a job for the first jobs_for calls."""
    rec, log = recorder(tmp_path)
    (tmp_path / "reason").write_text(reason + "\n")
    sq = tmp_path / "bin" / "squeue"
    sq.parent.mkdir(exist_ok=True)
    sq.write_text(f"#!/bin/sh\nn=$(cat {tmp_path}/sq 2>/dev/null || echo 0)\necho $((n + 1)) > {tmp_path}/sq\n"
                  f"[ $n -lt {jobs_for} ] && echo 4242\nexit 0\n")
    sq.chmod(0o755)
    return log, dict(GPUVET_DRAIN_CMD=f"{rec} drain ", GPUVET_RESUME_CMD=f"{rec} resume",
                     GPUVET_REASON_CMD=f"cat {tmp_path}/reason", GPUVET_POLL_S=1,
                     GPUVET_STAMP=tmp_path / "stamp", GPUVET_OUT=tmp_path / "out.txt",
                     PATH=f"{sq.parent}:{os.environ['PATH']}")


def test_bench_step_drains_measures_and_keeps_an_unmeasurable_node_drained(gpuvet, tmp_path):
    log, env = bench_env(tmp_path, jobs_for=2)
    p = run_script(BENCH, gpuvet, tmp_path, GPUVET_BENCHES="gemm", **env)
    assert p.returncode == 0, p.stderr
    c = calls(log)
    assert c[0] == ["drain", "gpuvet: benchmarking"]
    assert c[-1][0] == "drain" and c[-1][1].startswith("gpuvet cannot measure: ")    # no GPU on this machine
    assert not any(x[0] == "resume" for x in c)
    assert int((tmp_path / "sq").read_text()) == 3                  # waited for the job to end first
    assert len(gpuvet.json("results", "list", "--json")) == 1 and (tmp_path / "stamp").exists()


def test_bench_step_resumes_on_accept_only_when_the_drain_is_still_ours(gpuvet, tmp_path):
    # an accepting gpuvet needs a healthy GPU, which this machine lacks: a stand-in that answers as
    # `gpuvet run --accept` does there (exit 0) lets the script's own decision be checked
    ok = tmp_path / "gpuvet-accepts"
    ok.write_text(f'#!/bin/sh\necho "$@" > {tmp_path}/argv\necho "ACCEPT (policy default)"\nexit 0\n')
    ok.chmod(0o755)
    log, env = bench_env(tmp_path)
    p = run_script(BENCH, gpuvet, tmp_path, GPUVET=ok, GPUVET_BENCHES="gemm,soak", **env)
    assert p.returncode == 0, p.stderr
    assert calls(log) == [["drain", "gpuvet: benchmarking"], ["resume"]]
    argv = (tmp_path / "argv").read_text().split()
    assert argv[argv.index("run"):] == ["run", "--profile", "quick", "--bench", "gemm,soak", "--accept"]
    # an admin drained it meanwhile: that drain stands
    (tmp_path / "b").mkdir()
    log2, env2 = bench_env(tmp_path / "b", reason="admin: bad fan")
    p = run_script(BENCH, gpuvet, tmp_path, GPUVET=ok, **env2)
    assert p.returncode == 0
    assert calls(log2) == [["drain", "gpuvet: benchmarking"]]
    # a run that hangs past GPUVET_RUN_TIMEOUT keeps the node drained
    hang = tmp_path / "gpuvet-hangs"
    hang.write_text("#!/bin/sh\nsleep 100\n")
    hang.chmod(0o755)
    (tmp_path / "d").mkdir()
    log4, env4 = bench_env(tmp_path / "d")
    p = run_script(BENCH, gpuvet, tmp_path, GPUVET=hang, GPUVET_RUN_TIMEOUT=1, **env4)
    assert calls(log4) == [["drain", "gpuvet: benchmarking"], ["drain", "gpuvet timed out after 1 s"]]


def test_bench_step_gives_up_on_a_long_job_and_runs_one_at_a_time(gpuvet, tmp_path):
    log, env = bench_env(tmp_path, jobs_for=1000)
    p = run_script(BENCH, gpuvet, tmp_path, GPUVET_WAIT_S=2, **env)
    assert p.returncode == 0
    assert calls(log) == [["drain", "gpuvet: benchmarking"], ["resume"]]
    assert not Path(gpuvet.db).exists()                               # nothing measured
    lock = Path(gpuvet.db).parent / "bench.lock"
    lock.mkdir()
    (tmp_path / "c").mkdir()
    log3, env3 = bench_env(tmp_path / "c")
    assert run_script(BENCH, gpuvet, tmp_path, **env3).returncode == 0
    assert calls(log3) == []                                          # another run holds the lock


def test_healthcheck_does_not_drain_on_a_gpuvet_error(gpuvet, tmp_path):
    rec, log = recorder(tmp_path)
    stamp = tmp_path / "stamp"
    stamp.touch()
    (tmp_path / "junk.db").write_text("not a database")
    p = run_script(HEALTH, gpuvet, tmp_path, GPUVET_DB=tmp_path / "junk.db", GPUVET_DRAIN_CMD=f"{rec} ",
                   GPUVET_STAMP=stamp, GPUVET_OUT=tmp_path / "out.txt")
    assert p.returncode == 0 and calls(log) == []


def test_prolog_refuses_jobs_on_a_rejected_node_only(gpuvet, tmp_path):
    p = run_script(PROLOG, gpuvet, tmp_path)             # no store yet: fail open
    assert p.returncode == 0, p.stderr
    p = run_script(PROLOG, gpuvet, tmp_path, GPUVET_FAIL_CLOSED=1)
    assert p.returncode == 1
    stored(gpuvet, tmp_path, "clean")
    assert run_script(PROLOG, gpuvet, tmp_path).returncode == 0
    stored(gpuvet, tmp_path, "remap_pending")
    p = run_script(PROLOG, gpuvet, tmp_path, SLURM_JOB_ID=42)
    assert p.returncode == 1
    assert "job 42 refused" in p.stderr and "REJECT" in p.stderr


def test_prolog_uses_the_site_policy_file(gpuvet, tmp_path):
    stored(gpuvet, tmp_path, "power_cap_5s")
    pol = tmp_path / "site.yaml"
    pol.write_text("name: site\nreject_flags:\n  - {code: THROTTLE_POWER, severity: info}\n")
    assert run_script(PROLOG, gpuvet, tmp_path).returncode == 0
    assert run_script(PROLOG, gpuvet, tmp_path, GPUVET_POLICY=pol).returncode == 1


K8S = DEPLOY / "kubernetes"


@pytest.mark.skipif(shutil.which("promtool") is None, reason="promtool not installed")
def test_k8s_entrypoint_labels_and_taints_from_the_verdict(gpuvet, tmp_path):
    rec, log = recorder(tmp_path)
    textfile = tmp_path / "textfile" / "gpuvet.prom"
    textfile.parent.mkdir()
    p = run_script(K8S / "gpuvet-node-verdict.sh", gpuvet, tmp_path, KUBECTL=rec, NODE_NAME="gpu-node-1",
                   GPUVET_PROFILE="quick", GPUVET_TEXTFILE=textfile)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "gpuvet: node gpu-node-1: unmeasurable (exit 3)" in p.stdout   # no GPU on this machine
    label, taint = calls(log)
    assert label[:4] == ["label", "node", "gpu-node-1", "--overwrite"]
    assert "gpuvet.dev/verdict=unmeasurable" in label
    assert any(a.startswith("gpuvet.dev/checked-at=") and len(a) == len("gpuvet.dev/checked-at=20261121T043700Z")
               for a in label)
    assert taint == ["taint", "node", "gpu-node-1", "--overwrite", "gpuvet.dev/rejected=unmeasurable:NoSchedule"]
    chk = subprocess.run(["promtool", "check", "metrics"], input=textfile.read_text(), capture_output=True, text=True)
    assert chk.returncode == 0, chk.stdout + chk.stderr
    assert 'gpuvet_verdict{' in textfile.read_text() and 'verdict="unmeasurable"' in textfile.read_text()


def test_k8s_entrypoint_needs_node_name(gpuvet, tmp_path):
    p = run_script(K8S / "gpuvet-node-verdict.sh", gpuvet, tmp_path, KUBECTL="true")
    assert p.returncode != 0 and "NODE_NAME" in p.stderr


def k8s_docs():
    text = string.Template((K8S / "gpuvet-job.yaml").read_text()).substitute(
        NODE="gpu-node-1", IMAGE="registry.example.com/gpuvet:0.1.0", GPUS="8")
    docs = list(yaml.safe_load_all((K8S / "gpuvet-rbac.yaml").read_text())) + list(yaml.safe_load_all(text))
    return {d["kind"]: d for d in docs}


def test_k8s_manifests_pass_the_kubernetes_schema():
    kv = pytest.importorskip("kubernetes_validate")
    docs = k8s_docs()
    assert set(docs) == {"Namespace", "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Job"}
    for d in docs.values():
        kv.validate(d, "1.37.0", strict=True)       # raises on an unknown or mistyped field
    bad = json.loads(json.dumps(docs["Job"]))
    bad["spec"]["template"]["spec"]["nodeSelectr"] = {}
    with pytest.raises(kv.ValidationError):
        kv.validate(bad, "1.37.0", strict=True)


def test_k8s_manifests_are_consistent():
    docs = k8s_docs()
    meta = docs["Job"]["metadata"]
    # a unique name per Job, so checking a node twice never collides
    assert "name" not in meta and meta["generateName"] == "gpuvet-gpu-node-1-"
    job = docs["Job"]["spec"]["template"]["spec"]
    # through the scheduler: no nodeName, the node by label, all its GPUs as a resource
    assert "nodeName" not in job and job["nodeSelector"] == {"kubernetes.io/hostname": "gpu-node-1"}
    assert job["restartPolicy"] == "Never"
    assert job["serviceAccountName"] == docs["ServiceAccount"]["metadata"]["name"]
    rule = docs["ClusterRole"]["rules"][0]
    assert rule["resources"] == ["nodes"] and "patch" in rule["verbs"]
    sub = docs["ClusterRoleBinding"]["subjects"][0]
    assert (sub["name"], sub["namespace"]) == ("gpuvet", docs["ServiceAccount"]["metadata"]["namespace"])
    c = job["containers"][0]
    assert c["resources"]["limits"]["nvidia.com/gpu"] == 8
    assert c["command"][-1] == "/opt/gpuvet-deploy/gpuvet-node-verdict.sh"
    env = {e["name"]: e for e in c["env"]}
    assert env["NODE_NAME"]["valueFrom"]["fieldRef"]["fieldPath"] == "spec.nodeName"
    # the ConfigMap the README creates holds exactly the files the Job reads
    readme = (DEPLOY / "README.md").read_text()
    cm = next(v for v in job["volumes"] if v["name"] == "deploy")["configMap"]["name"]
    assert f"create configmap {cm}" in readme
    assert "--from-file=contrib/deploy/kubernetes/gpuvet-node-verdict.sh" in readme
    assert "--from-file=policy.yaml=" in readme and env["GPUVET_POLICY"]["value"] == "/opt/gpuvet-deploy/policy.yaml"
    assert any(t["key"] == "gpuvet.dev/rejected" for t in job["tolerations"])
    # the README creates Jobs (generateName needs create, not apply) and applies the RBAC once
    assert "envsubst < contrib/deploy/kubernetes/gpuvet-job.yaml | kubectl create -f -" in readme
    assert "kubectl apply -f contrib/deploy/kubernetes/gpuvet-rbac.yaml" in readme
    assert "kubectl apply -f -" not in readme


def test_k8s_job_creation_dry_run_with_a_stub_kubectl(tmp_path):
    # the README's per-node loop, with kubectl recording what it was given
    rec = tmp_path / "kubectl"
    rec.write_text(f'#!/bin/sh\necho "$@" >> {tmp_path}/args\ncat >> {tmp_path}/stdin\necho --- >> {tmp_path}/stdin\n')
    rec.chmod(0o755)
    env = dict(os.environ, PATH=f"{tmp_path}:{os.environ['PATH']}", IMAGE="r/gpuvet:1", GPUS="8")
    for node in ("gpu-a", "gpu-a", "gpu-b"):
        p = subprocess.run(["sh", "-c", f"NODE={node} envsubst < {K8S / 'gpuvet-job.yaml'} | kubectl create -f -"],
                           env=env, capture_output=True, text=True)
        assert p.returncode == 0, p.stderr
    assert (tmp_path / "args").read_text().splitlines() == ["create -f -"] * 3
    jobs = [d for d in yaml.safe_load_all((tmp_path / "stdin").read_text().replace("---\n", "\n---\n")) if d]
    assert [j["metadata"]["generateName"] for j in jobs] == ["gpuvet-gpu-a-", "gpuvet-gpu-a-", "gpuvet-gpu-b-"]
    assert all("${" not in json.dumps(j) for j in jobs)     # every variable substituted


def user_data():
    raw = (DEPLOY / "cloud-init" / "user-data.yaml").read_text()
    assert raw.startswith("#cloud-config\n")
    return yaml.safe_load(raw)


def test_cloud_init_user_data():
    d = user_data()
    files = {f["path"]: f for f in d["write_files"]}
    script = files["/usr/local/sbin/gpuvet-firstboot"]
    assert script["permissions"] == "0755"
    assert d["runcmd"] == [["/usr/local/sbin/gpuvet-firstboot"]]
    assert "--accept" in script["content"] and "--format prometheus" in script["content"]
    # nothing is built on the instance: no compiler, no clone
    assert "packages" not in d and not re.search(r"\b(git clone|make|gcc)\b", script["content"])
    env = dict(line.split("=", 1) for line in files["/etc/gpuvet/env"]["content"].splitlines())
    assert env["GPUVET_TARBALL_URL"].endswith("/gpuvet-0.1.0-linux-x86_64.tar.gz") and len(env["GPUVET_SHA256"]) == 64
    if shutil.which("shellcheck"):
        p = subprocess.run(["shellcheck", "-s", "sh", "-"], input=script["content"], capture_output=True, text=True)
        assert p.returncode == 0, p.stdout


def firstboot(tmp_path, **env):
    """The user data's first-boot script run here: its env file under tmp_path, gpuvet installed in a
    folder with a space, the instance's power-off recorded, not done."""
    files = {f["path"]: f for f in user_data()["write_files"]}
    script = tmp_path / "gpuvet-firstboot"
    script.write_text(files["/usr/local/sbin/gpuvet-firstboot"]["content"])
    rec, log = recorder(tmp_path)
    conf = dict(line.split("=", 1) for line in files["/etc/gpuvet/env"]["content"].splitlines())
    conf.update(GPUVET_HOME=str(tmp_path / "opt gpuvet"), GPUVET_DB=str(tmp_path / "state" / "gpuvet.db"),
                GPUVET_TEXTFILE_DIR=str(tmp_path / "textfile"), GPUVET_BENCHES="nvme")
    conf.update({k: str(v) for k, v in env.items()})
    (tmp_path / "env").write_text("".join(f"{k}='{v}'\n" for k, v in conf.items()))
    (tmp_path / "nvmetmp").mkdir(exist_ok=True)
    e = dict(os.environ, GPUVET_ENV=str(tmp_path / "env"), GPUVET_POWEROFF_CMD=f"{rec} poweroff",
             GPUVET_NO_METADATA="1", TMPDIR=str(tmp_path / "nvmetmp"))
    p = subprocess.run(["sh", str(script)], capture_output=True, text=True, env=e, timeout=600)
    return p, calls(log)


@plain_suite_only()
def test_cloud_init_downloads_checks_and_runs_the_tarball(tmp_path):
    tarball, _, sums = dist_files()
    www = tmp_path / "www"
    www.mkdir()
    shutil.copy(tarball, www / tarball.name)
    with loopback.nginx(www, tmp_path / "nginx") as url:
        p, powered = firstboot(tmp_path, GPUVET_TARBALL_URL=f"{url}/{tarball.name}", GPUVET_SHA256=sums[tarball.name])
    assert p.returncode == 3, p.stdout + p.stderr           # no GPU here: cannot measure, as on a broken GPU
    assert "release tarball" in p.stdout
    assert powered == [["poweroff", "gpuvet rejected this instance"]]
    home, state = tmp_path / "opt gpuvet", tmp_path / "state"
    assert (home / "bin" / "gpuvet").is_file() and (home / "libexec" / "fio").is_file()
    assert (state / "verdict.rc").read_text().strip() == "3" and not (state / "gpuvet.tar.gz").exists()
    assert "gpuvet_verdict{" in (tmp_path / "textfile" / "gpuvet.prom").read_text()
    fp = json.loads(subprocess.run([str(home / "bin" / "gpuvet"), "--db", str(state / "gpuvet.db"), "results", "show",
                                    "1"], capture_output=True, text=True, env=dict(os.environ, GPUVET_NO_METADATA="1")
                                   ).stdout)
    nvme = next(b for b in fp["benches"] if b["name"] == "nvme")
    assert nvme["status"] == "ok" and nvme["config"]["fio"] == str(home / "libexec" / "fio")
    assert fp["run"]["gpuvet_build"]["release"] is True
    # installed: a second boot runs it again without fetching (the URL now leads nowhere)
    p, _ = firstboot(tmp_path, GPUVET_TARBALL_URL="http://127.0.0.1:9/nowhere.tar.gz", GPUVET_SHA256=sums[tarball.name])
    assert p.returncode == 3, p.stderr


@plain_suite_only()
def test_cloud_init_refuses_a_tarball_whose_sha256_differs(tmp_path):
    tarball, _, sums = dist_files()
    copy = tmp_path / "from-the-image.tar.gz"
    shutil.copy(tarball, copy)
    wrong = "0" * 64
    p, powered = firstboot(tmp_path, GPUVET_TARBALL=copy, GPUVET_SHA256=wrong)
    assert p.returncode == 2 and powered == []
    assert p.stderr.strip() == (f"gpuvet: {copy} has SHA-256 {sums[tarball.name]}, not GPUVET_SHA256 {wrong}: "
                                "not installed")
    assert not (tmp_path / "opt gpuvet" / "bin").exists() and copy.exists()   # the user's copy is left alone
    # the same copy with its right sum is installed from where it lies, and kept
    p, _ = firstboot(tmp_path, GPUVET_TARBALL=copy, GPUVET_SHA256=sums[tarball.name])
    assert p.returncode == 3 and copy.exists(), p.stderr
    assert (tmp_path / "opt gpuvet" / "bin" / "gpuvet").is_file()


@plain_suite_only()
def test_prolog_and_health_check_gate_with_an_unpacked_tarball(gpuvet, tmp_path):
    tree = unpack_dist(dist_files()[0], tmp_path / "opt")
    g = tree / "bin" / "gpuvet"
    stored(gpuvet, tmp_path, "remap_pending")                 # a rejected run in the store
    p = run_script(PROLOG, gpuvet, tmp_path, GPUVET=g, SLURM_JOB_ID=7)
    assert p.returncode == 1 and "job 7 refused" in p.stderr and "REJECT" in p.stderr, p.stderr
    rec, log = recorder(tmp_path)
    stamp = tmp_path / "stamp"
    stamp.touch()
    p = run_script(HEALTH, gpuvet, tmp_path, GPUVET=g, GPUVET_DRAIN_CMD=f"{rec} ", GPUVET_STAMP=stamp,
                   GPUVET_OUT=tmp_path / "out.txt")
    assert p.returncode == 0, p.stderr
    (c,) = calls(log)
    assert c[0].startswith("gpuvet reject: "), c


def test_the_scripts_default_to_where_the_readme_installs_the_tarball():
    readme = (ROOT / "README.md").read_text()
    assert "-C /opt/gpuvet --strip-components=1" in readme
    for script in (PROLOG, HEALTH, BENCH):
        assert "GPUVET=${GPUVET:-/opt/gpuvet/bin/gpuvet}" in script.read_text(), script.name


def test_the_dockerfile_installs_the_tarball_without_a_compiler():
    text = (K8S / "Dockerfile").read_text()
    froms = re.findall(r"^FROM\s+(\S+)", text, re.M)
    assert froms == ["nvidia/cuda:13.0.0-runtime-ubuntu24.04"], froms          # one stage, a runtime image
    assert not re.search(r"\b(gcc|g\+\+|clang|make|nvcc|[a-z0-9.+-]+-dev)\b", text.split("\nFROM", 1)[1])
    version = re.search(r'#define GPUVET_VERSION "([^"]+)"', (ROOT / "common" / "util.h").read_text()).group(1)
    assert f"ARG GPUVET_VERSION={version}\n" in text
    assert "COPY build/dist/gpuvet-${GPUVET_VERSION}-linux-x86_64.tar.gz build/dist/SHA256SUMS /tmp/gpuvet/" in text
    run = text[text.index("RUN cd /tmp/gpuvet"):]
    assert run.index("sha256sum -c") < run.index("tar -xzf")                    # checked before unpacked
