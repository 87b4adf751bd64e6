"""`gpuvet results export --format prometheus`: node-exporter textfile
metrics of the latest run of each host, checked by the real parser
(`promtool check metrics`, Debian's prometheus package) and by reading the
series back."""
import json
import re
import shutil
import subprocess
import uuid

import pytest

from conftest import FIXTURES

PROMTOOL = shutil.which("promtool")
needs_promtool = pytest.mark.skipif(PROMTOOL is None, reason="promtool not installed (apt-get install prometheus)")


def fp_from(case, host, started="2026-11-21T04:00:00Z"):
    fp = json.loads((FIXTURES / "flags" / f"{case}.json").read_text())
    fp["run"].update(uuid=str(uuid.uuid4()), hostname=host, started_at=started, finished_at=None)  # no finish before the start
    return fp


def imp(gpuvet, tmp_path, fp):
    """fp imported, its percentages left to gpuvet to derive from the rates (issue 57)."""
    fp = dict(fp, metrics=[m for m in fp["metrics"] if ".pct_of_" not in m["name"]])
    p = tmp_path / f"{fp['run']['uuid']}.json"
    p.write_text(json.dumps(fp))
    gpuvet("results", "import", p, check=0)
    return fp["run"]["uuid"]


def export(gpuvet, *extra):
    return gpuvet("results", "export", "--format", "prometheus", *extra, check=0).stdout


def promtool_check(text):
    p = subprocess.run([PROMTOOL, "check", "metrics"], input=text, capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stdout + p.stderr
    return p


def parse(text):
    """{(name, frozenset(labels)): value} from the exposition text."""
    out = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        m = re.fullmatch(r'([a-zA-Z_:][a-zA-Z0-9_:]*)\{(.*)\} (\S+)', line)
        assert m, line
        labels = frozenset(re.findall(r'([a-z_]+)="((?:[^"\\]|\\.)*)"', m.group(2)))
        key = (m.group(1), labels)
        assert key not in out, f"duplicate series {line}"
        out[key] = float(m.group(3))
    return out


def get(series, name, **labels):
    hits = [v for (n, ls), v in series.items() if n == name and set(labels.items()) <= ls]
    assert len(hits) == 1, (name, labels, hits)
    return hits[0]


@needs_promtool
def test_fleet_export_is_valid_and_complete(gpuvet, tmp_path):
    bad = fp_from("thermal_sw_3s", "node-a")
    # the flags it is exported with are earned by its values (import derives them, issue 48): its SW
    # thermal seconds, gpu 0's BF16 and FP16 GEMM at half the reference (two BELOW_REFERENCE), 40 % steal
    for m in list(bad["metrics"]):
        if m["name"] == "gemm.bf16.tflops" and m["gpu"] == 0:
            m["value"] *= 0.5
            bad["metrics"].append(dict(m, name="gemm.fp16.tflops"))
        if m["name"] == "host.cpu_steal.pct":
            m["value"] = 40
    ua = imp(gpuvet, tmp_path, bad)
    ub = imp(gpuvet, tmp_path, fp_from("clean_8gpu", "node-b"))
    gpuvet("accept", "--run", ua, check=1)    # thermal throttling: rejected, the verdict is stored
    text = export(gpuvet)
    promtool_check(text)
    s = parse(text)
    assert get(s, "gpuvet_run_info", host="node-a", uuid=ua, gpu_model="H100-SXM", instance_type="p5.4xlarge") == 1
    assert get(s, "gpuvet_run_info", host="node-b", uuid=ub, gpu_count="8") == 1
    assert get(s, "gpuvet_gemm_bf16_tflops", host="node-b", gpu="all") == 5760
    assert get(s, "gpuvet_gemm_bf16_tflops", host="node-b", gpu="7") == 720
    assert get(s, "gpuvet_host_cpu_steal_pct", host="node-a", gpu="all") == pytest.approx(40)
    assert get(s, "gpuvet_flag", host="node-a", code="THROTTLE_THERMAL", severity="warning", gpu="0") == 1
    assert get(s, "gpuvet_flag", host="node-a", code="BELOW_REFERENCE", gpu="0") == 2
    assert get(s, "gpuvet_flag", host="node-a", code="CPU_STEAL", gpu="all") == 1
    assert get(s, "gpuvet_flags", host="node-a", severity="warning") == 3
    assert get(s, "gpuvet_flags", host="node-b", severity="critical") == 0
    assert get(s, "gpuvet_verdict", host="node-a", policy="default", verdict="reject") == 1
    assert get(s, "gpuvet_accepted", host="node-a", policy="default") == 0
    assert get(s, "gpuvet_bench_status", host="node-b", bench="soak", status="ok") == 1
    assert get(s, "gpuvet_run_start_time_seconds", host="node-a") == 1795233600   # 2026-11-21T04:00:00Z (calendar.timegm)
    # one HELP and TYPE per family, families contiguous
    names = [l.split()[2] for l in text.splitlines() if l.startswith("# TYPE")]
    assert len(names) == len(set(names)) and names == sorted(names)


@needs_promtool
def test_latest_run_per_host_only(gpuvet, tmp_path):
    old = imp(gpuvet, tmp_path, fp_from("clean", "node-a", "2026-11-20T10:00:00Z"))
    new = imp(gpuvet, tmp_path, fp_from("clean", "node-a", "2026-11-21T10:00:00Z"))
    older = imp(gpuvet, tmp_path, fp_from("clean", "node-a", "2026-11-19T10:00:00Z"))  # imported last
    s = parse(promtool_check(export(gpuvet)) and export(gpuvet))
    infos = [ls for (n, ls) in s if n == "gpuvet_run_info"]
    assert len(infos) == 1 and ("uuid", new) in infos[0]
    assert old != new != older
    # --run narrows the export to that run
    s = parse(export(gpuvet, "--run", old))
    assert get(s, "gpuvet_run_info", host="node-a", uuid=old) == 1


@needs_promtool
def test_units_and_reserved_suffixes_are_prometheus_clean(gpuvet, tmp_path):
    fp = fp_from("clean", 'we"ird\\host')
    fp["metrics"] += [
        {"bench": "nvme", "name": "nvme.randread.p99_us", "gpu": -1, "value": 250.0, "unit": "us", "params": {}},
        {"bench": "objstore", "name": "objstore.ttfb.p50_ms", "gpu": -1, "value": 12.5, "unit": "ms", "params": {}},
        {"bench": "soak", "name": "soak.throttle_s", "gpu": -1, "value": 3.0, "unit": "s", "params": {}},
        {"bench": "objstore", "name": "objstore.errors.total", "gpu": -1, "value": 0, "unit": "count", "params": {}},
        {"bench": "host", "name": "host.decode.images_per_s", "gpu": -1, "value": 1200.0, "unit": "images/s",
         "params": {}},
        {"bench": "host", "name": "host.decode.images_per_s_per_gpu", "gpu": -1, "value": 150.0,
         "unit": "images/s", "params": {}},
    ]
    listed = [b["name"] for b in fp["benches"]]   # a row is imported only under a bench the run lists
    fp["benches"] += [{"name": b, "status": "ok", "reason": None, "duration_s": 1.0, "config": None}
                      for b in ("nvme", "objstore", "host") if b not in listed]
    imp(gpuvet, tmp_path, fp)
    text = export(gpuvet)
    promtool_check(text)
    s = parse(text)
    host = 'we\\"ird\\\\host'     # escaped as the text format wants
    assert get(s, "gpuvet_nvme_randread_p99_seconds", host=host) == pytest.approx(250e-6)
    assert get(s, "gpuvet_objstore_ttfb_p50_seconds", host=host) == pytest.approx(0.0125)
    assert get(s, "gpuvet_soak_throttle_seconds", host=host) == 3.0
    assert get(s, "gpuvet_soak_xid", host=host, gpu="0") == 0           # soak.xid.count
    assert get(s, "gpuvet_objstore_errors_all", host=host) == 0
    # a rate's "per s" is a denominator, not a duration to convert
    assert get(s, "gpuvet_host_decode_images_per_second", host=host) == 1200.0
    assert get(s, "gpuvet_host_decode_images_per_second_per_gpu", host=host) == 150.0
    assert "_count{" not in text and "_total{" not in text


@needs_promtool
def test_textfile_written_atomically_and_empty_store(gpuvet, tmp_path):
    gpuvet("results", "list", check=0)
    assert export(gpuvet) == ""
    imp(gpuvet, tmp_path, fp_from("clean", "node-a"))
    out = tmp_path / "textfile" / "gpuvet.prom"
    out.parent.mkdir()
    gpuvet("results", "export", "--format", "prometheus", "-o", out, check=0)
    assert [p.name for p in out.parent.iterdir()] == ["gpuvet.prom"]
    promtool_check(out.read_text())
