"""The report's estimates are bounded whatever the priced catalog holds (issue 35: "the report of a
1.1 M-row price table stays under 64 MB of memory", with every price row a distinct type).  With
estimates on and a cap (the report's REPORT_ESTIMATES_MAX, 200), the ranking reads the runs first,
then streams the prices of the types no run measured ordered by type, values each once its rows
have passed and keeps only the best 200 in a bounded heap (judge/rank_estimates.c); the rest are
counted.  The rules are rank's: the rows kept are the first 200 estimates of `rank --estimates`'s
full list, in its order (ties in value per dollar included), and the page counts the rest as the
full list's length minus 200.  Synthetic prices (provider "est" and a custom machine, GPU models of
the reference table), one real capture (tests/fixtures/gpu/h100-2026-11-22/quick-profile.json)
named as one of the types.  The 1.1 M-type measurement is tests/bench/price_scale_bench.sh."""
import re
import subprocess
from html import unescape

import pytest

from conftest import FIXTURES, gpuvet_bin

QUICK = FIXTURES / "gpu" / "h100-2026-11-22" / "quick-profile.json"
CAP = 200   # REPORT_ESTIMATES_MAX (reports/report_int.h)
MODELS = [("H100-SXM", 80), ("A100-80-SXM", 80), ("L40S", 48), ("L4", 24), ("A10G", 24)]
HEAD = "provider,instance_type,region,zone,gpu_model,gpu_count,gpu_memory_gib,market,price,unit,currency,captured_at"


def catalog(path, types, ties=True):
    """types distinct instance types; type t0.1x is a 1 x H100-SXM (the capture's).  With ties, few
    distinct prices (many types share a value per dollar, ordered by name) and some types priced in two
    regions and on spot; without, one on-demand row per type (the worst case: a type per row)."""
    lines = [HEAD]
    for t in range(types):
        model, mem = MODELS[t % len(MODELS)]
        gpus = (1, 2, 4, 8)[(t // len(MODELS)) % 4]
        prov = "custom:lab" if ties and t % 97 == 5 else "est"
        price = (1.0, 2.0, 4.0, 8.0)[t % 4] * gpus if ties else 1 + (t * 7919) % 9000 / 100
        rows = [("r0", "", "on_demand", price)]
        if ties and t % 3 == 1:
            rows += [("r1", "", "on_demand", price * 0.75), ("r1", "r1a", "spot", price / 3)]
        for region, zone, market, usd in rows:
            lines.append(f"{prov},t{t}.{gpus}x,{region},{zone},{model},{gpus},{mem},{market},{usd:.4f},hour,USD,"
                         "2026-11-20")
    path.write_text("\n".join(lines) + "\n")


def ranked(html):
    """The report's first ranking table: (provider, instance type, estimate) per row, in order."""
    body = re.search(r'<table[^>]*id="rank".*?<tbody>(.*?)</tbody>', html, re.S).group(1)
    out = []
    for tr in re.findall(r"<tr[^>]*>(.*?)</tr>", body, re.S):
        td = re.findall(r"<td[^>]*>(.*?)</td>", tr, re.S)
        itype = re.sub(r"<span.*?</span>", "", td[2], flags=re.S).strip()
        out.append((td[1].strip(), itype, 'class="est"' in td[2]))
    return out


def test_report_keeps_rank_estimates_best_in_its_order(gpuvet, tmp_path):
    catalog(tmp_path / "p.csv", 1200)
    gpuvet("prices", "import", tmp_path / "p.csv", check=0)
    gpuvet("results", "import", QUICK, "--provider", "est", "--sku", "t0.1x", "--region", "r0", check=0)
    full = gpuvet.json("rank", "--estimates", "--json")
    assert full["estimates_left_out"] == 0
    est = [r for r in full["rows"] if r["estimate"]]
    assert len(est) > CAP + 500
    assert len({r["value_per_dollar"] for r in est[:CAP]}) < CAP / 4     # ties, ordered by name
    want, n_est = [], 0
    for r in full["rows"]:   # every measured row, and the first CAP estimates, in rank's order
        if r["estimate"]:
            n_est += 1
            if n_est > CAP:
                continue
        want.append((r["provider"], r["instance_type"], r["estimate"]))
    gpuvet("report", "-o", tmp_path / "r.html", check=0)
    html = (tmp_path / "r.html").read_text()
    assert ranked(html) == want
    more = re.search(rf"The best {CAP} estimates per dollar are listed; (\d+) more", html)
    assert int(more.group(1)) == len(est) - CAP


def test_report_memory_does_not_grow_with_priced_types(gpuvet, tmp_path):
    """Ten times the priced types, the same peak but for SQLite's bounded page caches (before: an entry
    of about 1 KB per priced type in each ranking, and an "unranked" entry per type for each metric no
    reference table has, such as NVMe: +190 MiB at 40,000 types)."""
    if "build-san" in str(gpuvet_bin()):
        pytest.skip("a memory measure of the release build: ASan's allocator keeps freed memory (make check runs it)")

    def peak(types):
        db = tmp_path / f"s{types}.db"
        catalog(tmp_path / f"p{types}.csv", types, ties=False)
        gpuvet("--db", db, "-q", "prices", "import", tmp_path / f"p{types}.csv", db=False, check=0)
        gpuvet("--db", db, "-q", "results", "import", QUICK, "--provider", "est", "--sku", "t0.1x", "--region",
               "r0", db=False, check=0)
        # GNU time's %M: the child's own peak (ru_maxrss of a child forked from pytest counts pytest's pages)
        r = subprocess.run(["/usr/bin/time", "-f", "%M", gpuvet_bin(), "-q", "--db", str(db), "report", "-o",
                            str(tmp_path / "r.html")], env=gpuvet.env, capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        return int(r.stderr.strip().splitlines()[-1]) / 1024

    small, big = peak(4000), peak(40000)
    assert big < small + 16, (small, big)


def test_report_unpriced_note_in_rank_estimates_order(gpuvet, tmp_path):
    """The measured types a market cannot price are listed in the order `rank --estimates` lists them
    (where their first price row is stored), though the bounded ranking reads the runs first: two real
    captures named as types priced on spot only, stored b before a, measured a before b."""
    h200 = FIXTURES / "gpu" / "h200-2026-11-22" / "quick-profile.json"
    (tmp_path / "p.csv").write_text(HEAD + "\n"
                                    "est,b.1x,r0,r0a,H200,1,141,spot,5.0,hour,USD,2026-11-20\n"
                                    "est,a.1x,r0,r0a,H100-SXM,1,80,spot,4.0,hour,USD,2026-11-20\n")
    gpuvet("prices", "import", tmp_path / "p.csv", check=0)
    gpuvet("results", "import", QUICK, "--provider", "est", "--sku", "a.1x", "--region", "r0", check=0)
    gpuvet("results", "import", h200, "--provider", "est", "--sku", "b.1x", "--region", "r0", check=0)
    unpriced = gpuvet.json("rank", "--estimates", "--json")["unpriced"]
    want = [u["instance_type"] for u in unpriced if not u["estimate"]]
    assert want == ["b.1x", "a.1x"]
    gpuvet("report", "-o", tmp_path / "r.html", check=0)
    html = (tmp_path / "r.html").read_text()
    note = re.search(r"Measured but not ranked, no on-demand price: (.*?)</p>", html, re.S).group(1)
    assert re.findall(r"est ([ab]\.1x)", re.sub(r"<[^>]+>", "", note)) == want
    # then the catalog's types it could estimate but not price (the shipped aws p5e.48xlarge: spot only), apart
    assert [(u["provider"], u["instance_type"]) for u in unpriced if u["estimate"]] == [("aws", "p5e.48xlarge")]
    est = re.search(r"<p>Could be estimated but not ranked, no on-demand price: (.*?)</p>", html, re.S).group(1)
    assert unescape(est) == "aws p5e.48xlarge (%s)." % unpriced[-1]["why"]


def test_report_unpriced_estimates_bounded_as_rank_lists_them(gpuvet, tmp_path):
    """The types the report's ranking could estimate but not price (spot only here) are the first of
    `rank --estimates`'s list, a provider's with one why together, at most REPORT_ESTIMATES_MAX of them
    (judge/rank_estimates.c, the same pass as the estimates), the rest counted: 210 synthetic H100 types
    priced on spot only, and the shipped aws p5e.48xlarge."""
    lines = [HEAD, "est,m.1x,r0,,H100-SXM,1,80,on_demand,3.0,hour,USD,2026-11-20"]
    lines += [f"est,t{t}.1x,r0,r0a,H100-SXM,1,80,spot,{2 + t % 7}.0,hour,USD,2026-11-20" for t in range(210)]
    (tmp_path / "p.csv").write_text("\n".join(lines) + "\n")
    gpuvet("prices", "import", tmp_path / "p.csv", check=0)
    gpuvet("results", "import", QUICK, "--provider", "est", "--sku", "m.1x", "--region", "r0", check=0)
    full = gpuvet.json("rank", "--estimates", "--json")
    assert "unpriced_left_out" not in full                        # rank lists every one
    est = [u for u in full["unpriced"] if u["estimate"]]
    assert [u["instance_type"] for u in est[:1]] == ["p5e.48xlarge"] and len(est) == 211
    names = [u["instance_type"] for u in est if u["provider"] == "est"]
    gpuvet("report", "-o", tmp_path / "r.html", check=0)
    note = re.search(r"<p>Could be estimated but not ranked, no on-demand price: (.*?)</p>",
                     (tmp_path / "r.html").read_text(), re.S).group(1)
    assert unescape(re.sub(r"<[^>]+>", "", note)) == (
        f"aws p5e.48xlarge ({est[0]['why']}); est {', '.join(names[:4])} and {CAP - 1 - 4} more ({est[1]['why']}); "
        f"{len(est) - CAP} more types (gpuvet rank --estimates lists each).")
