"""The report's price section stays bounded whatever the catalog's size (issue 35, item 7):
the PRICE_CHEAPEST_PER_MODEL (10) cheapest prices of each GPU model and market are listed, in
US dollars per hour, and the rest of each group is counted with its price range
(pricing/catalog_cheapest.c, reports/html_prices.c).  Functional, not timed: 5,000 imported
rows for three GPU models (and a fourth with fewer rows than the limit); the answers are worked
out here from the generated rows.  The 1.1 M-row measurement is tests/bench/price_scale_bench.sh."""
import random
import re

import pytest

N = 10
MODELS = {"ZX-100": 3000, "ZX-200": 1500, "ZX-300": 496, "ZX-400": 4}


def price_rows():
    """(model, market, itype, region, zone, usd_per_hour), prices distinct so the order is one."""
    rnd = random.Random(35)
    cents = rnd.sample(range(100, 10_000_000), sum(MODELS.values()))
    rows, i = [], 0
    for model, count in MODELS.items():
        for j in range(count):
            market = "spot" if j % 3 == 0 else "on_demand"
            zone = f"zz-{j % 7}a" if market == "spot" else ""
            # a month-priced row is 730 h of it: the report compares per hour
            rows.append((model, market, f"{model.lower()}.t{j}", f"region-{j % 11}", zone, cents[i] / 1000))
            i += 1
    return rows


def cells(html, table_id):
    body = re.search(rf'<table[^>]*id="{table_id}".*?<tbody>(.*?)</tbody>', html, re.S)
    if not body:
        return []
    return [[re.sub(r"<[^>]+>", "", c).strip() for c in re.findall(r"<td[^>]*>(.*?)</td>", tr, re.S)]
            for tr in re.findall(r"<tr>(.*?)</tr>", body.group(1), re.S)]


def test_price_section_lists_the_cheapest_per_model_and_counts_the_rest(gpuvet, tmp_path):
    rows = price_rows()
    lines = ["provider,instance_type,region,zone,gpu_model,gpu_count,market,price,unit,currency,captured_at"]
    for k, (model, market, itype, region, zone, usd) in enumerate(rows):
        monthly = k % 5 == 0
        price = f"{usd * 730:.3f}" if monthly else f"{usd:.3f}"
        lines.append(f"test,{itype},{region},{zone},{model},1,{market},{price},"
                     f"{'month' if monthly else 'hour'},USD,2026-11-20")
    (tmp_path / "many.csv").write_text("\n".join(lines) + "\n")
    gpuvet("prices", "import", tmp_path / "many.csv", check=0)
    gpuvet("report", "-o", tmp_path / "r.html", check=0)
    html = (tmp_path / "r.html").read_text()
    listed = cells(html, "prices")
    rest = {(r[0], r[1]): r for r in cells(html, "prices-rest")}
    for model in MODELS:
        for market in ("on_demand", "spot"):
            group = sorted((r for r in rows if r[0] == model and r[1] == market), key=lambda r: r[5])
            shown = [r for r in listed if r[0] == model and r[1] == market]
            assert len(shown) == min(N, len(group)), (model, market)
            # the cheapest, cheapest first: instance type and the USD price per hour
            assert [r[3] for r in shown] == [g[2] for g in group[:N]]
            assert [float(r[8]) for r in shown] == [pytest_approx(g[5]) for g in group[:N]]
            if len(group) <= N:
                assert (model, market) not in rest
                continue
            total, n_listed, n_rest, span = rest[(model, market)][2:]
            assert (int(total), int(n_listed), int(n_rest)) == (len(group), N, len(group) - N)
            lo, hi = (float(x) for x in span.split("\u2013"))
            assert lo == pytest_approx(group[N][5]) and hi == pytest_approx(group[-1][5])
    # bounded: the listed rows are at most N per model and market, whatever the store holds
    mine = [r for r in listed if r[0] in MODELS]
    assert len(mine) == sum(min(N, sum(1 for r in rows if r[0] == m and r[1] == k))
                            for m in MODELS for k in ("on_demand", "spot"))
    m = re.search(r"(\d+) of (\d+) stored prices listed", html)
    assert int(m.group(1)) == len(listed) and int(m.group(2)) >= len(rows)


def pytest_approx(v):
    """The page's rounding (4 significant digits at most): equal to within it."""
    return pytest.approx(v, rel=5e-4)


def test_report_lists_the_best_estimates_and_counts_the_rest(gpuvet, tmp_path):
    """A catalog of many priced types: each ranking of the report keeps the best 200 estimates per
    dollar (REPORT_ESTIMATES_MAX) and says how many more `rank --estimates` has; rank lists all."""
    lines = ["provider,instance_type,region,gpu_model,gpu_count,market,price,unit,currency,captured_at"]
    lines += [f"test,t{i}.8x,us-east-1,H100-SXM,8,on_demand,{20 + i / 10:.2f},hour,USD,2026-11-20"
              for i in range(300)]
    (tmp_path / "types.csv").write_text("\n".join(lines) + "\n")
    gpuvet("prices", "import", tmp_path / "types.csv", check=0)
    est = [x for x in gpuvet.json("rank", "--estimates", "--json")["rows"] if x["estimate"]]
    assert len(est) > 300
    gpuvet("report", "-o", tmp_path / "r.html", check=0)
    html = (tmp_path / "r.html").read_text()
    m = re.search(r"The best (\d+) estimates per dollar are listed; (\d+) more priced types", html)
    assert m and (int(m.group(1)), int(m.group(2))) == (200, len(est) - 200)
    table = re.search(r'<table class="sortable" id="rank">(.*?)</table>', html, re.S).group(1)
    shown = re.findall(r'<tr[^>]*>.*?</tr>', table, re.S)
    listed = [t for t in shown if ">(estimate)</span>" in t]
    assert len(listed) == 200
    # the best per dollar: the cheapest of the imported 8x H100 types are in, the dearest are not
    assert "t0.8x" in table and "t299.8x" not in table


def test_report_max_age_leaves_old_prices_out_of_prices_rankings_and_cost(gpuvet, tmp_path):
    # the page's old-price banner tells the user "--max-age DAYS to leave them out": report takes it.
    # The shipped Alibaba catalog was captured 2024-12-30; a price imported today is never old.
    import datetime
    import json
    today = datetime.datetime.now(datetime.timezone.utc).date().isoformat()
    (tmp_path / "fresh.csv").write_text(
        "provider,instance_type,region,gpu_model,gpu_count,market,price,unit,currency,captured_at\n"
        f"fresh,zx.1,region-1,H100-SXM,1,on_demand,1.234,hour,USD,{today}\n")
    gpuvet("prices", "import", tmp_path / "fresh.csv", check=0)
    gpuvet("report", "-o", tmp_path / "all.html", check=0)
    gpuvet("report", "--max-age", "90", "-o", tmp_path / "new.html", "--job", "llama-3.2-1b:infer:1e9", check=0)
    old, new = (tmp_path / "all.html").read_text(), (tmp_path / "new.html").read_text()
    providers = lambda html: {r[2] for r in cells(html, "prices")}
    assert "alibaba" in providers(old) and "fresh" in providers(old)
    assert "alibaba" not in providers(new) and "fresh" in providers(new)
    assert "Old prices:" in old and "alibaba" in old.split("Old prices:")[1].split("</p>")[0]
    assert "Old prices:" not in new
    assert "prices captured over 90 days ago are left out" in new
    # the rankings and the job's cost price nothing older than 90 days
    ranked = re.findall(r'<table[^>]*id="rank".*?</table>', new, re.S)
    assert ranked and "alibaba" not in ranked[0] and "fresh" in ranked[0]
    cost = json.loads(gpuvet("cost", "--model", "llama-3.2-1b", "--task", "infer", "--estimates", "--max-age", "90",
                             "--json").stdout)
    assert cost["rows"] and not [r for r in cost["rows"] if r["provider"] == "alibaba"]
    every = json.loads(gpuvet("cost", "--model", "llama-3.2-1b", "--task", "infer", "--estimates", "--json").stdout)
    assert [r for r in every["rows"] if r["provider"] == "alibaba"]
    for cmd in (("report",), ("cost", "--model", "llama-3.2-1b")):
        p = gpuvet(*cmd, "--max-age", "0", check=None)
        assert p.returncode == 2 and "--max-age '0' is not a number of days" in p.stderr


@pytest.mark.parametrize("cmd", [("rank",), ("cost", "--model", "llama-3.2-1b"), ("report",), ("prices", "list"),
                                 ("prices", "cheapest")])
@pytest.mark.parametrize("days", ["0", "100001", "7x", ""])
def test_max_age_is_read_and_refused_alike_by_every_command(gpuvet, cmd, days):
    """One parser: the same range and the same one-line message wherever --max-age is taken."""
    p = gpuvet(*cmd, "--max-age", days, check=None)
    assert p.returncode == 2
    assert p.stderr.strip().splitlines() == [
        f"gpuvet: {' '.join(cmd[:2] if cmd[0] == 'prices' else cmd[:1])}: --max-age '{days}' is not a number of "
        f"days from 1 to 100000 (see 'gpuvet {' '.join(cmd[:2] if cmd[0] == 'prices' else cmd[:1])} --help')"]
