"""Answers a buyer can trust at first sight (issue 48), on the real captures of tests/fixtures/gpu/
(README there) and a run of this machine, which has no GPU; the report checked by parsing its HTML:

  1. a verdict word only where one was earned: a run without a GPU is headlined "No GPU measured",
     an ungated run with the built-in policy's verdict as a preview marked not recorded, never green
     "Healthy", in the report and in `run`'s summary;
  2. one policy per page: the built-in one, or the one `report --policy FILE` names, said with its
     digest; another policy's verdict, or one without a digest (as a schema-5 store migrates them), is
     history, never the headline;
  3. the first screen is about the newest run that measured a GPU, a newer run without one named with
     its reason.
"""
import json
import sqlite3
import uuid
from html.parser import HTMLParser

from conftest import FIXTURES
from helpers import gpu_reference

H100 = FIXTURES / "gpu" / "h100-2026-11-22"
H200 = FIXTURES / "gpu" / "h200-2026-11-22"
STANDARD = H100 / "standard-profile.json"
SMOKE = "name: smoke\nrules:\n  - metric: gemm.bf16.tflops\n    min: 5\n"


class Page(HTMLParser):
    """The headline (h1#verdict: its text and class) and the text of each element with an id."""

    def __init__(self, text):
        super().__init__()
        self.h1, self.h1_class, self.ids, self._open = "", None, {}, []
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "h1" and a.get("id") == "verdict":
            self.h1_class = a.get("class")
        if tag in ("br",):
            return
        self._open.append((tag, a.get("id")))
        if a.get("id"):
            self.ids.setdefault(a["id"], "")

    def handle_endtag(self, tag):
        while self._open:
            t, _ = self._open.pop()
            if t == tag:
                break

    def handle_data(self, data):
        for t, i in self._open:
            if i:
                self.ids[i] += data
        if any(t == "h1" and i == "verdict" for t, i in self._open):
            self.h1 += data


def report(gpuvet, tmp_path, *args):
    out = tmp_path / f"r-{uuid.uuid4().hex[:8]}.html"
    gpuvet("report", "-o", out, *args, check=0)
    return Page(out.read_text())


def scaled(tmp_path, factor):
    """The H100 standard capture with every GEMM throughput times factor, under a new uuid."""
    fp = json.loads(STANDARD.read_text())
    for m in fp["metrics"]:
        if m["name"].startswith("gemm.") and m["name"].endswith(".tflops"):
            m["value"] *= factor
    fp["run"]["uuid"] = str(uuid.uuid4())
    out = tmp_path / f"scaled-{factor}.json"
    fp["metrics"] = [m for m in fp["metrics"] if ".pct_of_" not in m["name"]]   # gpuvet derives them (issue 57)
    out.write_text(json.dumps(fp))
    return out


def no_gpu_run(gpuvet):
    p = gpuvet("run", "--bench", "gemm")
    assert p.returncode == 0, p.stdout + p.stderr
    return p


# ---- 1. a verdict word only where one was earned ----

def test_1_a_run_without_a_gpu_is_not_healthy(gpuvet, tmp_path):
    p = no_gpu_run(gpuvet)
    assert "No GPU measured on this machine" in p.stdout and "Healthy" not in p.stdout
    page = report(gpuvet, tmp_path)
    assert page.h1.startswith("No GPU measured on this machine: run 1"), page.h1
    assert page.h1_class != "good" and "Healthy" not in page.h1 and "accepted" not in page.h1
    assert "libnvidia-ml" in page.h1 or "no gpu" in page.h1.lower()     # why, in the headline


def test_1_an_ungated_run_at_55_percent_is_a_preview_of_a_rejection(gpuvet, tmp_path):
    gpuvet("results", "import", scaled(tmp_path, 0.55), check=0)
    page = report(gpuvet, tmp_path)
    assert page.h1.startswith("Would be rejected: run 1, 1 \u00d7 H100-SXM"), page.h1
    assert "not judged" in page.h1 and "not a recorded verdict" in page.h1 and "gemm.bf16.tflops" in page.h1
    assert page.h1_class == "bad" and "Healthy" not in page.h1
    # the clean capture, ungated: a preview too, never the green word
    gpuvet("results", "import", STANDARD, check=0)
    page = report(gpuvet, tmp_path, "--run", "2")
    assert page.h1.startswith("Would be accepted: run 2") and page.h1_class != "good", page.h1
    assert "Healthy" not in page.h1
    # once gated here by the built-in policy, the word is earned
    assert gpuvet("accept", "2").returncode == 0
    page = report(gpuvet, tmp_path, "--run", "2")
    assert page.h1.startswith("Healthy: run 2") and "(accepted)" in page.h1 and page.h1_class == "good", page.h1


# ---- 2. one policy per page ----

def test_2_another_policys_acceptance_is_history_not_the_headline(gpuvet, tmp_path):
    gpuvet("results", "import", scaled(tmp_path, 0.55), check=0)
    assert gpuvet("accept", "1").returncode == 1                      # the built-in policy rejects it
    smoke = tmp_path / "smoke.yaml"
    smoke.write_text(SMOKE)
    assert gpuvet("accept", "1", "--policy", smoke).returncode == 0   # a trivial one accepts it, later
    page = report(gpuvet, tmp_path)
    assert page.h1.startswith("Reject: run 1") and "(rejected)" in page.h1, page.h1
    assert "Healthy" not in page.h1 and "accepted" not in page.h1
    assert "the policy default (built-in, sha256:" in page.ids["page-policy"]
    assert "smoke" in page.ids["answer"] and "History, not this page's verdict" in page.ids["answer"]
    # the summary counts by the page's policy too: one rejection, no acceptance
    assert "1rejected" in page.ids["summary"].replace(" ", "") and "0accepted" in page.ids["summary"].replace(" ", "")
    # the page judged by the file: said in its header with the file's digest, the headline its verdict
    digest = json.loads(gpuvet("accept", "1", "--policy", smoke, "--json", check=0).stdout)["policy_digest"]
    page = report(gpuvet, tmp_path, "--policy", smoke)
    assert page.h1.startswith("Healthy, with warnings: run 1") and "(accepted)" in page.h1, page.h1
    assert "the policy smoke (%s, %s)" % (smoke, digest) in " ".join(page.ids["page-policy"].split())
    assert "1accepted" in page.ids["summary"].replace(" ", "") and "0rejected" in page.ids["summary"].replace(" ", "")


def test_2_a_verdict_without_a_digest_is_not_current(gpuvet, tmp_path):
    gpuvet("results", "import", STANDARD, check=0)
    assert gpuvet("accept", "1").returncode == 0
    # what a schema-5 store's verdicts become when migrated: no digest
    with sqlite3.connect(gpuvet.db) as db:
        db.execute("UPDATE verdicts SET policy_digest = ''")
    page = report(gpuvet, tmp_path)
    assert page.h1.startswith("Would be accepted: run 1") and "not judged" in page.h1, page.h1
    assert "(accepted)" not in page.h1 and page.h1_class != "good"
    assert "no digest" in page.ids["answer"]


def test_2_report_policy_that_cannot_be_read_is_a_usage_error(gpuvet, tmp_path):
    gpuvet("results", "import", STANDARD, check=0)
    p = gpuvet("report", "-o", tmp_path / "r.html", "--policy", tmp_path / "none.yaml")
    assert p.returncode == 2 and "none.yaml" in p.stderr and not (tmp_path / "r.html").exists()


# ---- 3. the first screen is about the newest run that measured a GPU ----

def test_3_first_screen_leads_with_the_newest_gpu_run(gpuvet, tmp_path):
    gpuvet("results", "import", STANDARD, H200 / "standard-profile.json", check=0)
    for run in ("1", "2"):
        gpuvet("accept", run, check=0)
    no_gpu_run(gpuvet)                                                # run 3: the newest, without a GPU
    page = report(gpuvet, tmp_path)
    # three runs: the fleet heads the page (issue 58), the newest GPU run first under it
    assert page.h1.startswith("Fleet: 3 machines of "), page.h1   # and as many runs
    assert "Healthy: run 2, 1 \u00d7 H200" in page.ids["answer"], page.ids["answer"][:500]
    note = " ".join(page.ids["no-gpu-run"].split())
    assert note.startswith("The newest run, run 3") and "measured no GPU" in note
    # asked for by name, it is the headline
    page = report(gpuvet, tmp_path, "--run", "3")
    assert page.h1.startswith("No GPU measured on this machine: run 3"), page.h1
    assert "no-gpu-run" not in page.ids


# ---- 6. accept prints every check ----

def checks_table(stdout):
    lines = stdout.splitlines()
    head = next(i for i, ln in enumerate(lines) if ln.startswith("RESULT "))
    return lines[head], [ln for ln in lines[head + 1:] if ln.split()[:1] and
                         ln.split()[0] in ("PASS", "FAIL", "NOT", "TOLERATED")]


def test_6_accept_prints_every_check_with_measured_needed_and_source(gpuvet, tmp_path):
    gpuvet("results", "import", STANDARD, scaled(tmp_path, 0.6), check=0)
    p = gpuvet("accept", "1", check=0)
    assert p.returncode == 0
    res = json.loads(gpuvet("accept", "1", "--json", check=0).stdout)
    head, rows = checks_table(p.stdout)
    assert head.split()[:6] == ["RESULT", "CHECK", "GPU", "MEASURED", "NEEDED", "THRESHOLD"]
    assert len(rows) == len(res["passed"]) and all(r.startswith("PASS ") for r in rows)
    gemm = next(r for r in rows if " gemm.bf16.tflops " in r)
    need = "%.4g" % (0.75 * gpu_reference("H100-SXM"))
    assert gemm.split()[2:7] == ["0", "686", "TFLOP/s", ">=", need] and "H100-SXM reference %g" % gpu_reference("H100-SXM") in gemm
    assert any(r.split()[1:3] == ["flag", "THROTTLE_THERMAL"] and "not raised" in r for r in rows)
    p = gpuvet("accept", "2", check=1)
    head, rows = checks_table(p.stdout)
    res = json.loads(gpuvet("accept", "2", "--json", check=1).stdout)
    assert len(rows) == len(res["passed"]) + len(res["failed"])
    assert rows[0].split()[:7] == ["FAIL", "gemm.bf16.tflops", "0", "411.6", "TFLOP/s", ">=", need]
    assert all(len(ln) <= 160 for ln in p.stdout.splitlines())


def test_6_a_run_without_a_gpu_lists_what_was_not_measured(gpuvet):
    no_gpu_run(gpuvet)
    p = gpuvet("accept", "1", check=3)
    res = json.loads(gpuvet("accept", "1", "--json", check=3).stdout)
    _, rows = checks_table(p.stdout)
    assert len(rows) == len(res["passed"]) + len(res["unmeasurable"])
    assert rows[0].startswith("NOT MEASURED a GPU") and "libnvidia-ml" in rows[0]


# ---- 5. "most per dollar" lists the most per dollar first ----

def test_5_most_per_dollar_is_sorted_by_value_per_dollar(gpuvet, tmp_path):
    import re
    gpuvet("results", "import", STANDARD, "--provider", "aws", "--sku", "p5.4xlarge", "--region", "us-east-1",
           check=0)
    rank = gpuvet.json("rank", "--json", "--estimates")
    ordered = sorted((r for r in rank["rows"] if (r.get("value_per_dollar") or 0) > 0),
                     key=lambda r: -r["value_per_dollar"])
    out = tmp_path / "r.html"
    gpuvet("report", "-o", out, check=0)
    page = out.read_text()
    work = re.search(r"Most per dollar, by workload</h3>(.*?)</ul>", page, re.S).group(1)
    lis = [re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", x)) for x in re.findall(r"<li>(.*?)</li>", work, re.S)]
    label = "BF16 matrix multiply per $/h: "     # GEMM per dollar, named for what it is (issue 58 item 2)
    li = next(x for x in lis if x.startswith(label))
    shown, _, measured = li[len(label):].partition("; best measured: ")
    items = shown.split(" ; ") if " ; " in shown else shown.split("; ")
    got = [(it.split()[0], it.split()[1], float(it.split()[2])) for it in items]
    assert got == [(r["provider"], r["instance_type"], pytest_approx(r["value_per_dollar"])) for r in ordered[:3]]
    assert [v for _, _, v in got] == sorted((v for _, _, v in got), reverse=True)
    assert all("(estimate" in it or ", measured (" in it for it in items)
    # the measured type, three times worse than the best estimate, is named beside the order
    p5 = next(r for r in rank["rows"] if r["instance_type"] == "p5.4xlarge")
    assert ordered[0]["value_per_dollar"] > 3 * p5["value_per_dollar"]
    assert measured.startswith("aws p5.4xlarge ") and ", measured (sustained)" in measured


def pytest_approx(v):
    import pytest
    return pytest.approx(v, rel=2e-3)


# ---- 4. one number per type per figure ----

QUICK = [H100 / "contention" / f"clean-{i}.json" for i in (1, 2, 3)] + [H100 / "quick-profile.json"]


def test_4_the_instance_type_table_shows_the_ranked_figure(gpuvet, tmp_path):
    import re
    gpuvet("results", "import", *QUICK, STANDARD, "--provider", "aws", "--sku", "p5.4xlarge",
           "--region", "us-east-1", check=0)
    gpuvet("results", "import", H200 / "quick-profile.json", H200 / "standard-profile.json", check=0)
    for run in ("6", "7"):
        gpuvet("results", "tag", run, "--custom", "lambda", "--sku", "gpu_1x_h200", check=0)
    rank = gpuvet.json("rank", "--json")
    p5 = next(r for r in rank["rows"] if r["instance_type"] == "p5.4xlarge")
    h200 = next(r for r in rank["unpriced"] if r["instance_type"] == "gpu_1x_h200")
    assert p5["profile"] == "standard" and h200["profile"] == "standard"
    # a measured type without a price keeps its value (item 8), the figure the table shows
    assert h200["value"] > 0 and h200["other_profiles"][0]["value"] > h200["value"]
    out = tmp_path / "r.html"
    gpuvet("report", "-o", out, check=0)
    table = re.search(r'id="skus">(.*?)</table>', out.read_text(), re.S).group(1)
    cells = {}
    for tr in re.findall(r"<tr>(.*?)</tr>", table, re.S):
        td = [re.sub(r"<[^>]+>", "", c).strip() for c in re.findall(r"<td[^>]*>(.*?)</td>", tr, re.S)]
        if td:
            cells[td[1]] = td[8]
    assert cells["p5.4xlarge"] == "%.1f (sustained)" % p5["value"], cells       # 686.0, not 705.3 of all runs
    assert cells["gpu_1x_h200"] == "%.1f (sustained)" % h200["value"], cells    # 706.5, not 764.8
    page = re.sub(r"<[^>]+>", "", out.read_text())
    assert "custom:lambda gpu_1x_h200 (standard, 1 run, %.1f TFLOP/s" % h200["value"] in page
    text = gpuvet("rank", check=0).stdout
    assert "value 0," not in text and "no price" in text


# ---- 7. one vocabulary, one screen wide ----

def test_7_rank_fits_160_columns_in_one_vocabulary(gpuvet):
    gpuvet("results", "import", STANDARD, "--provider", "aws", "--sku", "p5.4xlarge", "--region", "us-east-1",
           check=0)
    out = gpuvet("rank", "--estimates", check=0).stdout
    assert max(len(ln) for ln in out.splitlines()) <= 160
    head = out.splitlines()[0].split()
    assert "$/h" in head and "USD/HOUR" not in head and "USD/H" not in out
    assert "common/gpus.c" not in out and ".c:" not in out          # no source file in what a user reads
    p5 = next(ln for ln in out.splitlines() if " p5.4xlarge " in ln)
    assert "THROTTLE_POWER" not in p5                                # info: normal under full load, no finding
    assert "THROTTLE_POWER" in json.dumps(gpuvet.json("results", "show", "1")["flags"])
    wide = gpuvet("rank", "--estimates", "--wide", check=0).stdout
    assert max(len(ln) for ln in wide.splitlines()) > 160 and "MIN-MAX" in wide.splitlines()[0]
    assert "(reference (sustained): GH200 705 per GPU (" in wide


# ---- 9. the README's examples run ----

README = FIXTURES.parent.parent / "README.md"


def readme_examples():
    """Each `$ command` of README.md's indented blocks, with the output lines shown under it."""
    import re
    out, cur = [], None
    for ln in README.read_text().splitlines():
        m = re.match(r"^ {6}\$ (.*)$", ln)
        if m:
            cur = (m.group(1), [])
            out.append(cur)
        elif cur and ln.startswith(" " * 6) and ln.strip():
            cur[1].append(ln[6:].rstrip())
        else:
            cur = None
    return out


def test_9_the_readmes_examples_run_on_the_store_it_says_how_to_build(gpuvet, tmp_path):
    import shlex
    import subprocess
    from conftest import gpuvet_bin
    env = dict(gpuvet.env, GPUVET_DB=str(tmp_path / "example.db"))
    examples = readme_examples()
    assert [c for c, _ in examples][:2] == ["export GPUVET_DB=example.db", examples[1][0]]
    assert examples[1][0].startswith("build/gpuvet results import tests/fixtures/gpu/")
    for cmd, shown in examples[1:]:
        args = shlex.split(cmd)
        assert args[0] == "build/gpuvet", cmd
        p = subprocess.run([gpuvet_bin(), *args[1:]], cwd=README.parent, env=env, capture_output=True, text=True,
                           timeout=300)
        got = [ln.rstrip() for ln in (p.stdout + p.stderr).splitlines()]
        for want in shown:
            ok = any(g.startswith(want[:-3]) for g in got) if want.endswith("...") else want in got
            assert ok, (cmd, want, got[:20])


def test_9_a_directory_imports_its_fingerprints_and_names_what_it_skipped(gpuvet, tmp_path):
    gpu = FIXTURES / "gpu"
    p = gpuvet("results", "import", gpu, check=0)
    assert p.returncode == 0, p.stderr
    files = sorted(x for x in gpu.rglob("*") if x.is_file())
    fps = [x for x in files if x.suffix == ".json" and '"gpuvet.fingerprint/' in x.read_text()[:65536]]
    imported = [ln for ln in p.stdout.splitlines() if ": imported as run " in ln]
    skipped = [ln for ln in p.stdout.splitlines() if ": skipped: " in ln]
    assert len(imported) == len(fps) and len(skipped) == len(files) - len(fps)
    assert any(ln.endswith("peer-ratios.json: skipped: not a gpuvet fingerprint (no \"schema\": "
                           "\"gpuvet.fingerprint/N\")") for ln in skipped)
    assert any(ln.endswith("README.md: skipped: not JSON") for ln in skipped)
    assert p.stdout.splitlines()[-1] == ("total: %d run(s) imported, 0 already present, %d file(s) skipped "
                                         "(not fingerprints)" % (len(fps), len(skipped)))
    # several files named: the same, a non-fingerprint skipped with why, not a stop
    g = gpuvet("results", "import", H100 / "peer-ratios.json", H200 / "quick-profile.json", "--db",
               tmp_path / "two.db", db=False, check=0)
    assert g.returncode == 0 and "peer-ratios.json: skipped: not a gpuvet fingerprint" in g.stdout
    # nothing to import at all is an error
    none = tmp_path / "none"
    none.mkdir()
    (none / "notes.txt").write_text("hello")
    assert gpuvet("results", "import", none).returncode == 2


def test_9_custom_means_the_same_on_import_and_tag(gpuvet, tmp_path):
    gpuvet("results", "import", H200 / "quick-profile.json", "--custom", "myh200", "--sku", "gpu_1x_h200", check=0)
    gpuvet("results", "import", H200 / "standard-profile.json", check=0)
    gpuvet("results", "tag", "2", "--custom", "myh200", "--sku", "gpu_1x_h200", check=0)
    runs = {r["id"]: (r["provider"], r["instance_type"]) for r in gpuvet.json("results", "list", "--json")}
    assert runs[1] == runs[2] == ("custom:myh200", "gpu_1x_h200"), runs


def test_9_a_reimport_under_new_names_points_at_results_tag(gpuvet):
    gpuvet("results", "import", STANDARD, "--provider", "aws", "--sku", "p5.4xlarge", check=0)
    p = gpuvet("results", "import", STANDARD, "--provider", "lambda", "--sku", "gpu_1x_h100_sxm5")
    assert p.returncode == 2 and "'gpuvet results tag 1' renames the stored run" in p.stderr, p.stderr


def test_7_prices_list_shows_each_type_in_its_cheapest_region(gpuvet):
    every = gpuvet.json("prices", "list", "--json")
    p = gpuvet("prices", "list", check=0)
    rows = [ln.split() for ln in p.stdout.splitlines()[1:] if ln.strip()]
    head = p.stdout.splitlines()[0]
    assert "ON-DEMAND $/h" in head and "SPOT $/h" in head and "$/GPU-h" in head and "$/H" not in head
    assert max(len(ln) for ln in p.stdout.splitlines()) <= 160
    assert len(rows) < len(every) / 3, (len(rows), len(every))
    assert "--all-regions lists every one" in p.stderr
    # each type's cheapest on-demand region is the one listed
    best = {}
    for o in every:
        od = (o["on_demand"] or {}).get("usd_per_hour")
        key = (o["provider"], o["instance_type"])
        if od is not None and (key not in best or od < best[key][0]):
            best[key] = (od, o["region"])
    listed = {(r[0], r[1], r[2]) for r in rows}
    for (prov, it), (_, region) in best.items():
        assert (prov, it, region or "(any)") in listed, (prov, it, region)
    # every region on request, as before
    all_rows = [ln for ln in gpuvet("prices", "list", "--all-regions", check=0).stdout.splitlines()[1:] if ln]
    assert len(all_rows) == len(every)


def test_8_a_spot_price_where_on_demand_is_asked_is_marked(gpuvet):
    out = gpuvet("prices", "list", "--provider", "aws", "--all-regions", check=0).stdout
    p5e = [ln for ln in out.splitlines() if ln.split()[1:2] == ["p5e.48xlarge"]]
    assert p5e and all(ln.split()[10] == "-" for ln in p5e)         # no on-demand price anywhere
    assert all("(spot)" in ln for ln in p5e)                          # its $/GPU-h is a spot one, said
    p5 = [ln for ln in out.splitlines() if ln.split()[1:2] == ["p5.48xlarge"]]
    assert p5 and not any("(spot)" in ln for ln in p5)


def test_6_the_table_is_the_checks_of_the_policy_just_applied(gpuvet, tmp_path):
    gpuvet("results", "import", STANDARD, check=0)
    smoke = tmp_path / "smoke.yaml"
    smoke.write_text(SMOKE)
    assert gpuvet("accept", "1", "--policy", smoke).returncode == 0
    _, rows = checks_table(gpuvet("accept", "1", check=0).stdout)    # the built-in, in the same second
    assert any("THROTTLE_THERMAL" in r for r in rows) and len(rows) > 2
    _, rows = checks_table(gpuvet("accept", "1", "--policy", smoke, check=0).stdout)
    assert len(rows) == 1 and rows[0].split()[:2] == ["PASS", "gemm.bf16.tflops"]
