"""The page answers the store it is made from (issue 58 items 1, 7, 11 and 12), checked in Debian's
headless Chromium (the probe page tests/integration/report_probe.html, as test_report_answer.py uses it)
on the real captures of tests/fixtures/gpu/ (README there):

- item 1: a store of more than one run opens on the fleet: "Fleet: N runs of K instance types: A
  accepted, R rejected, U unmeasurable, J not judged", each count a link to its runs (followed, the
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
passed", and the digest ran 300 px past a 390 px page."""
import json
import re
import shutil
import subprocess
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
    assert got["firstHeading"] == ("Fleet: 14 runs of 1 instance type: 2 accepted, 7 rejected, 5 unmeasurable, "
                                   "0 not judged"), got["firstHeading"]
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
    assert got["firstHeading"].startswith("Fleet: 15 runs of 1 instance type: 2 accepted, 8 rejected")


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
