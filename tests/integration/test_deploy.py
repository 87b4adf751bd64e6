"""runners/deploy/: the Slurm health check and prolog, the Kubernetes Job's
entry point and manifests, cloud-init.  The scripts run for real against the
real gpuvet binary and real stores; only the cluster's own commands
(scontrol, kubectl), absent here, are replaced by a recorder passed through
the scripts' documented GPUVET_DRAIN_CMD / KUBECTL variables."""
import json
import os
import shutil
import string
import subprocess
import uuid
from pathlib import Path

import pytest
import yaml

from conftest import FIXTURES, ROOT, gpuvet_bin

DEPLOY = ROOT / "runners" / "deploy"
SCRIPTS = sorted(DEPLOY.glob("*/*.sh"))


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


def test_healthcheck_measures_when_stale_and_drains_a_node_without_gpu(gpuvet, tmp_path):
    rec, log = recorder(tmp_path)
    db = tmp_path / "fresh" / "gpuvet.db"
    p = run_script(HEALTH, gpuvet, tmp_path, GPUVET_DB=db, GPUVET_DRAIN_CMD=f"{rec} ",
                   GPUVET_STAMP=tmp_path / "stamp", GPUVET_OUT=tmp_path / "out.txt")
    assert p.returncode == 0, p.stderr
    assert (tmp_path / "stamp").exists()
    (c,) = calls(log)
    assert c[0].startswith("gpuvet cannot measure: "), c
    assert len(gpuvet.json("--db", db, "results", "list", "--json", db=False)) == 1


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


def test_k8s_manifests_are_consistent():
    text = string.Template((K8S / "gpuvet-job.yaml").read_text()).substitute(
        NODE="gpu-node-1", IMAGE="registry.example.com/gpuvet:0.1.0", GPUS="8")
    docs = {d["kind"]: d for d in yaml.safe_load_all(text)}
    assert set(docs) == {"Namespace", "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Job"}
    job = docs["Job"]["spec"]["template"]["spec"]
    assert job["nodeName"] == "gpu-node-1" and job["restartPolicy"] == "Never"
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
    assert "--from-file=runners/deploy/kubernetes/gpuvet-node-verdict.sh" in readme
    assert "--from-file=policy.yaml=" in readme and env["GPUVET_POLICY"]["value"] == "/opt/gpuvet-deploy/policy.yaml"
    assert any(t["key"] == "gpuvet.dev/rejected" for t in job["tolerations"])


def test_cloud_init_user_data():
    raw = (DEPLOY / "cloud-init" / "user-data.yaml").read_text()
    assert raw.startswith("#cloud-config\n")
    d = yaml.safe_load(raw)
    files = {f["path"]: f for f in d["write_files"]}
    script = files["/usr/local/sbin/gpuvet-firstboot"]
    assert script["permissions"] == "0755"
    assert d["runcmd"] == [["/usr/local/sbin/gpuvet-firstboot"]]
    assert "--accept" in script["content"] and "--format prometheus" in script["content"]
    if shutil.which("shellcheck"):
        p = subprocess.run(["shellcheck", "-s", "sh", "-"], input=script["content"], capture_output=True, text=True)
        assert p.returncode == 0, p.stdout
