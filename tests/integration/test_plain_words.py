"""What gpuvet prints means what it says (issue 26, point 9): no empty success for a model that
does not exist, no "not a throughput" for a typo, no AWS hint for a Lambda type, no load time
shown as the prices' date, no "gpu -1", no negative drop, no busbw 0 on one GPU, an nvme "ok"
that says what it measured.  Runs are the real captures of tests/fixtures/gpu/."""
import json
import re
import sqlite3

from conftest import FIXTURES

H100 = FIXTURES / "gpu" / "h100-2026-11-22"
NULL = {"GPUVET_TEST_BENCHES": "1"}


def one_line(p):
    assert p.stderr.count("\n") == 1 and p.stderr.startswith("gpuvet: "), p.stderr
    return p.stderr


def test_prices_list_refuses_an_unknown_gpu_model(gpuvet):
    err = one_line(gpuvet("prices", "list", "--gpu", "XYZ", check=2))
    assert "unknown GPU model 'XYZ' (known: " in err and "H100-SXM" in err
    assert gpuvet("prices", "list", "--gpu", "H100", check=0).stdout.count("H100") > 3
    # a known model with nothing in that region is an empty answer, not an error
    gpuvet("prices", "list", "--gpu", "H100", "--region", "ap-south-2", check=0)


def test_rank_names_an_unknown_metric_as_unknown(gpuvet):
    assert "unknown metric 'gemm.bf16.tflop'" in one_line(gpuvet("rank", "--metric", "gemm.bf16.tflop", check=2))
    assert "not a throughput" in one_line(gpuvet("rank", "--metric", "nvme.randread.p99_us", check=2))


def test_accept_takes_the_run_as_its_argument(gpuvet):
    gpuvet("results", "import", H100 / "standard-profile.json", check=0)
    assert "run 1 " in gpuvet("accept", "1", check=0).stdout
    assert "unexpected argument '2'" in one_line(gpuvet("accept", "1", "2", check=2))


def test_spot_hint_names_the_right_provider(gpuvet):
    gpuvet("results", "import", H100 / "standard-profile.json", "--provider", "lambda", "--sku",
           "gpu_1x_h100_sxm5", check=0)
    r = gpuvet.json("rank", "--market", "spot", "--json")
    why = [u["why"] for u in r["unpriced"] if u["instance_type"] == "gpu_1x_h100_sxm5"]
    assert why == ["no spot price (lambda sells no spot instances)"]


def test_price_sources_say_when_the_prices_were_captured(gpuvet):
    gpuvet("prices", "list", check=0)      # loads the shipped catalogs
    rows = gpuvet.json("prices", "sources", "--json")
    aws = next(r for r in rows if r["source"] == "catalog:aws")
    assert aws["captured_at"] == "2026-11-25" and aws["fetched_at"] != aws["captured_at"]
    head = gpuvet("prices", "sources", check=0).stdout.splitlines()[0]
    assert "PRICES' DATE" in head and "LOADED" in head and "FETCHED" not in head   # what the date is, said per row (#58)


def test_an_instance_wide_rule_says_all_gpus(gpuvet, tmp_path):
    # an optional instance-level rule whose bench did not run: the note names the whole instance
    pol = tmp_path / "p.yaml"
    pol.write_text("name: p\nrules:\n  - metric: nvme.seqread.gbps\n    min: 1\n    optional: true\n")
    gpuvet("results", "import", H100 / "standard-profile.json", check=0)
    out = gpuvet("accept", "1", "--policy", pol, check=0).stdout
    assert "nvme.seqread.gbps (all gpus) not measured" in out, out
    assert "gpu -1" not in out


def test_nvme_says_what_it_measured(gpuvet, tmp_path):
    p = gpuvet("run", "--bench", "nvme", "--nvme-dir", "/dev/shm", check=0)
    line = next(ln for ln in p.stdout.splitlines() if ln.startswith("nvme "))
    assert "ok" in line and "fio on /dev/shm (tmpfs: memory, not a drive)" in line


def test_the_report_shows_no_negative_drop_and_no_one_gpu_allreduce(gpuvet, tmp_path):
    fp = json.loads((H100 / "standard-profile.json").read_text())
    assert any(m["name"] == "allreduce.busbw.gbps" and m["value"] == 0 for m in fp["metrics"])  # as captured
    for m in fp["metrics"]:
        if m["name"] == "soak.sm_clock.drop_pct" and m["gpu"] == -1:
            m["value"] = -4.186
    f = tmp_path / "fp.json"
    f.write_text(json.dumps(fp))
    gpuvet("results", "import", f, check=0)
    out = tmp_path / "r.html"
    gpuvet("report", "-o", out, check=0)
    html = out.read_text()
    assert ">-4.186<" not in html and "none (rose 4.2)" in html
    assert "NCCL all-reduce bandwidth against size" not in html
    assert not re.search(r"<code>allreduce\.busbw\.gbps</code></td><td[^>]*>instance</td><td[^>]*>0<", html)
    # and the ranking counts no all-reduce figure of one GPU
    gpuvet("results", "tag", "1", "--provider", "aws", "--sku", "p5.4xlarge", check=0)
    p = gpuvet("rank", "--metric", "allreduce.busbw.gbps", "--json")
    assert p.returncode == 2 or not [r for r in json.loads(p.stdout)["rows"] if not r["estimate"]]
