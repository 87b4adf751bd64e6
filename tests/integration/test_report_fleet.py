"""The page answers the store it is made from (issue 58 items 1, 7, 11 and 12), checked in Debian's
headless Chromium (the probe page tests/integration/report_probe.html, as test_report_answer.py uses it)
on the real captures of tests/fixtures/gpu/ (README there):

- item 1: a store of more than one run opens on the fleet: "Fleet: M machines of K instance types, N
  runs: A accepted, R rejected, U unmeasurable, J not judged" (a machine vetted twice is one machine
  and two runs: its first GPU's UUID, else its provider and hostname), each count a link to its runs (followed, the
  runs table shows those runs alone), then the reasons runs were rejected and every critical and
  warning flag, the lone critical run first and linked to its row; then the newest run under a
  heading of its own.  A page about runs asked for (--run) and a one-run store still open on the run;
- item 7: the summary counts instance types, not type-region pairs;
- item 11: a run with a DATA_CORRUPTION flag among many is linked; the verdicts table's reasons cell
  of an unmeasurable verdict says what was not measured, not only "N checks passed";
- item 12: at 390 px (a phone) nothing of the first screen is wider than the page: the policy's
  digest wraps.

On c4fdb45 the first heading was the newest run ("Unmeasurable"/"Not judged: run 13 ..."), the
DATA_CORRUPTION run had no link, the card counted 2 instance types for 1, the cell said "7 checks
passed", and the digest ran 300 px past a 390 px page.  On d2b48ea the fleet's heading counted runs as
if each were a machine ("Fleet: 6 runs of 2 instance types" for 4 machines)."""
import json
import re
import shutil
import subprocess
import uuid
from pathlib import Path

import pytest

from conftest import FIXTURES

PROBE = Path(__file__).resolve().parent / "report_probe.html"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
needs_chromium = pytest.mark.skipif(CHROMIUM is None, reason="chromium not installed (make deps-test)")
GPU = FIXTURES / "gpu"
H100 = GPU / "h100-2026-11-22"
SDC = GPU / "h100-2026-11-25" / "sdc" / "flip.json"


def probe(report_path, tmp_path, width=1400):
    """What the probe page measured of the report laid out `width` px wide (JSON)."""
    page = report_path.parent / f"probe-{width}.html"
    page.write_text(PROBE.read_text().replace("REPORT_FILE", report_path.name).replace("width:1400px",
                                                                                          f"width:{width}px"))
    p = subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                        "--disable-background-networking", "--disable-component-update", "--disable-sync",
                        "--allow-file-access-from-files", "--window-size=1440,1000",
                        "--virtual-time-budget=5000", "--user-data-dir=%s" % (report_path.parent / f"chromium-{width}"),
                        "--dump-dom", page.resolve().as_uri()],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr[-2000:]
    m = re.search(r'<pre id="out">(.*?)</pre>', p.stdout, re.S)
    assert m, p.stdout[-2000:]
    r = json.loads(m.group(1).replace("&lt;", "<").replace("&gt;", ">").replace("&quot;", '"').replace("&amp;", "&"))
    assert "error" not in r, r
    return r


def example(gpuvet, tmp_path, sdc=False):
    """The README's example store (14 runs as an AWS p5.4xlarge in us-east-1), every run judged; with sdc,
    the forced corruption of 2026-11-25 too, stored last (its own critical flag, alone)."""
    gpuvet("results", "import", H100, "--provider", "aws", "--sku", "p5.4xlarge", "--region", "us-east-1", check=0)
    if sdc:
        gpuvet("results", "import", SDC, "--provider", "aws", "--sku", "p5.4xlarge", "--region", "us-west-2", check=0)
    for run in range(1, 16 if sdc else 15):          # one by one, as c4fdb45 could (accept --all: test_accept_many)
        gpuvet("accept", str(run), check=None)
    out = tmp_path / "fleet.html"
    gpuvet("report", "-o", out, check=0)
    return out


def section(html, ident):
    start = html.index('id="%s"' % ident)
    return html[start:html.find("</section>", start)]


@needs_chromium
def test_a_fleet_opens_on_the_fleet_and_each_count_links_to_its_runs(gpuvet, tmp_path):
    out = example(gpuvet, tmp_path)
    got = probe(out, tmp_path)
    # 14 runs of 3 Lambda VMs (their GPUs' UUIDs: tests/fixtures/gpu/README.md)
    assert got["firstHeading"] == ("Fleet: 3 machines of 1 instance type, 14 runs: 2 accepted, 7 rejected, "
                                   "5 unmeasurable, 0 not judged"), got["firstHeading"]
    links = dict(got["headingLinks"])
    assert links["2 accepted"] == "#filter=runlist:accepted" and links["7 rejected"] == "#filter=runlist:rejected"
    assert "0 not judged" not in links              # nothing to link to
    # followed: the runs table shows the 2 accepted runs alone
    assert got["followed"] == "#filter=runlist:accepted"
    assert got["rowsShown"] == 2 and all("accepted" in t for t in got["rowsShownText"]), got
    assert got["rowsAll"] == 14
    html = out.read_text()
    answer = section(html, "answer")
    assert "Rejected for: <code>CONTENTION</code>" in answer
    # then the newest run, under a heading of its own
    assert re.search(r'<h2 class="warn">Unmeasurable: run 13, 1 \u00d7 H100-SXM on aws p5.4xlarge', answer)
    assert answer.index('id="fleet"') < answer.index("<h2")


@needs_chromium
def test_the_lone_critical_run_comes_first_with_its_link(gpuvet, tmp_path):
    out = example(gpuvet, tmp_path, sdc=True)
    html = out.read_text()
    flags = re.search(r"<p>Flags: (.*?)</p>", section(html, "answer")).group(1)
    first, second = flags.split("; ")[:2]
    assert "<code>DATA_CORRUPTION</code> on <a href=\"#r-15\">1 run</a> (run 15)" in first
    assert "<code>CONTENTION</code> on <a href=\"#filter=runlist:CONTENTION\">7 runs</a>" in second
    assert 'id="r-15"' in section(html, "runs")      # the link lands on its row
    got = probe(out, tmp_path)
    assert got["firstHeading"].startswith("Fleet: 4 machines of 1 instance type, 15 runs: 2 accepted, 8 rejected")


def no_gpu_run(gpuvet):
    """A real run on this machine, which has no GPU (gemm skipped): its fingerprint, stored."""
    return gpuvet.json("run", "--bench", "gemm", "--json")


def import_as(gpuvet, tmp_path, fp, name, *tag):
    f = tmp_path / name
    f.write_text(json.dumps(fp))
    gpuvet("results", "import", f, *tag, check=0)


@needs_chromium
def test_the_fleet_counts_machines_and_says_the_runs(gpuvet, tmp_path):
    """A machine vetted twice is one machine of two runs: the same first GPU (its UUID) under a fresh run uuid;
    a run without a GPU is its machine by provider and hostname together."""
    h100 = json.loads((H100 / "standard-profile.json").read_text())
    aws = ("--provider", "aws", "--sku", "p5.4xlarge", "--region", "us-east-1")
    gpuvet("results", "import", H100 / "standard-profile.json", *aws, check=0)
    h100["run"]["uuid"] = str(uuid.uuid4())                          # vetted again: the same GPU
    import_as(gpuvet, tmp_path, h100, "again.json", *aws)
    gpuvet("results", "import", GPU / "h100-2026-11-25" / "fidelity-1" / "standard.json", "--provider", "lambda",
           "--sku", "gpu_1x_h100_sxm5", "--region", "us-east-1", check=0)   # another machine
    assert gpuvet.json("results", "show", "2")["inventory"]["gpus"][0]["uuid"] == \
        h100["inventory"]["gpus"][0]["uuid"]
    out = tmp_path / "three.html"
    gpuvet("report", "-o", out, check=0)
    head = probe(out, tmp_path)["firstHeading"]
    assert head.startswith("Fleet: 2 machines of 2 instance types, 3 runs: 0 accepted, 0 rejected, "), head

    bare = no_gpu_run(gpuvet)                                        # run 4: this machine, no GPU
    assert not bare["inventory"].get("gpus") and bare["run"]["hostname"], bare["inventory"]
    no_gpu_run(gpuvet)                                               # run 5: the same machine, by its hostname
    other = json.loads(json.dumps(bare))
    other["run"]["uuid"] = str(uuid.uuid4())
    other["run"]["hostname"] = bare["run"]["hostname"] + "-other"    # run 6: another GPU-less machine
    other["run"].pop("id", None)
    import_as(gpuvet, tmp_path, other, "other.json")
    out = tmp_path / "six.html"
    gpuvet("report", "-o", out, check=0)
    head = probe(out, tmp_path)["firstHeading"]
    assert re.match(r"Fleet: 4 machines of \d+ instance types?, 6 runs: ", head), head


@needs_chromium
def test_as_many_machines_as_runs_says_the_machines_alone(gpuvet, tmp_path):
    gpuvet("results", "import", H100 / "standard-profile.json", GPU / "h100-2026-11-25" / "fidelity-1" / "standard.json",
           "--provider", "aws", "--sku", "p5.4xlarge", "--region", "us-east-1", check=0)
    out = tmp_path / "two.html"
    gpuvet("report", "-o", out, check=0)
    head = probe(out, tmp_path)["firstHeading"]
    assert head == "Fleet: 2 machines of 1 instance type: 0 accepted, 0 rejected, 0 unmeasurable, 2 not judged", head


def test_the_summary_counts_instance_types_not_regions(gpuvet, tmp_path):
    out = example(gpuvet, tmp_path, sdc=True)      # one type, in us-east-1 and us-west-2
    html = out.read_text()
    cards = dict((b, int(a)) for a, b in re.findall(r'<div class="card"><b>(\d+)</b>([^<]+)</div>', html))
    assert cards["instance types"] == 1 and cards["runs"] == 15
    assert "Instance types, by region" in html


def test_a_run_asked_for_and_a_lone_run_still_head_the_page(gpuvet, tmp_path):
    example(gpuvet, tmp_path)
    out = tmp_path / "r4.html"
    gpuvet("report", "-o", out, "--run", "4", check=0)
    assert re.search(r'<h1 id="verdict" class="bad">Reject: run 4, ', out.read_text())
    one = tmp_path / "one.db"
    gpuvet("--db", one, "results", "import", H100 / "standard-profile.json", db=False, check=0)
    gpuvet("--db", one, "accept", db=False, check=0)
    out1 = tmp_path / "one.html"
    gpuvet("--db", one, "report", "-o", out1, db=False, check=0)
    assert '<h1 id="verdict" class="good">Healthy: run 1, ' in out1.read_text()


def test_an_unmeasurable_verdict_says_what_was_not_measured(gpuvet, tmp_path):
    out = example(gpuvet, tmp_path)
    html = out.read_text()
    run13 = section(html, "run-13")
    cell = re.search(r'<b class="badge unmeasurable">unmeasurable</b></td>.*?</tr>', run13, re.S).group(0)
    assert "gemm.bf16.tflops not measured: bench gemm did not run" in cell
    assert "<li>NOT MEASURED gemm.bf16.tflops: " in cell and "check" in cell


@needs_chromium
def test_the_first_screen_fits_a_phone(gpuvet, tmp_path):
    out = example(gpuvet, tmp_path, sdc=True)
    got = probe(out, tmp_path, width=390)
    assert got["viewport"] == 390
    assert got["scrollWidth"] <= 390, got
    assert got["digestRight"] <= 390, got            # the policy's digest wraps
    assert got["wideElements"] == [], got["wideElements"]


def test_serving_is_ranked_by_the_serving_model_as_cost_prints_it(gpuvet, tmp_path):
    """Item 2: "most per dollar" per workload from `gpuvet cost` for named reference jobs, in $/Mtok with
    the basis and the command that prints the same figures; GEMM per dollar stays, as what it is."""
    out = example(gpuvet, tmp_path)
    html = out.read_text()
    work = html[html.index("Most per dollar, by workload"):]
    work = work[:work.index("</ul>")]
    assert "Inference (FP16 GEMM)" not in html and "<b>BF16 matrix multiply per $/h</b>" in work
    for label, args in (("Serving Llama 3.1 8B (1000 + 1000 tokens a request)",
                         ("--model", "llama-3.1-8b", "--task", "infer")),
                        ("Serving Llama 3.1 70B (1000 + 1000 tokens a request)",
                         ("--model", "llama-3.1-70b", "--task", "infer")),
                        ("Training Llama 3.1 8B (seq 8192)", ("--model", "llama-3.1-8b", "--task", "train",
                                                              "--seq", "8192"))):
        line = re.search(r"<li><b>%s</b>: (.*?)</li>" % re.escape(label), work).group(1)
        cmd = "gpuvet cost " + " ".join(args) + " --estimates"
        assert f"<code>{cmd}</code>" in line
        rows = [r for r in gpuvet.json("cost", *args, "--estimates", "--json")["rows"] if r["fits"]]
        for r in rows[:3]:        # the same figures, in the same order
            assert f"{r['provider']} {r['instance_type']} ${r['usd_per_million_tokens']:.3g}/Mtok" in line, line
        assert line.index(rows[0]["instance_type"]) < line.index(rows[2]["instance_type"])
    serve = re.search(r"<li><b>Serving Llama 3.1 8B.*?</li>", work).group(0)
    assert "<i>best measured</i>: aws p5.4xlarge $" in serve and "(measured, 1 standard run(s))" in serve
