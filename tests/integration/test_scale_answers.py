"""Issue 38: rank and the report hold no list of runs, and that never changes an answer.

A fleet store of 4,200 runs (tests/bench/fleet_bench.py's build: the real H100 and H200 captures
copied in SQL under five instance types of two providers and 25 regions, about a quarter of them
with a critical CONTENTION flag) is ranked and reported; every number is checked against a
brute-force computation over all its runs in Python: the medians, the run counts, the flag codes,
the runs left out and the order.
"""
import html
import re
import shutil
import sqlite3
import statistics
import sys
from collections import defaultdict

import pytest

from conftest import ROOT, gpuvet_bin

sys.path.insert(0, str(ROOT / "tests" / "bench"))
import fleet_bench  # noqa: E402

RUNS = 4200
METRIC = "gemm.bf16.tflops"
PREF = {"standard": 0, "full": 1, "quick": 2}   # judge/rank_profile.c: the most sustained profile values a type


@pytest.fixture(scope="module")
def fleet(tmp_path_factory):
    db = tmp_path_factory.mktemp("fleet") / "fleet.db"
    fleet_bench.BIN = gpuvet_bin()
    fleet_bench.build(str(db), RUNS)
    return db


def brute(db, metric=METRIC):
    """Every run, by SQL only row by row: per (provider, type, profile) the values, the codes, the runs."""
    con = sqlite3.connect(db)
    flags = defaultdict(list)
    for run, sev, code in con.execute("SELECT run_id, severity, code FROM flags ORDER BY run_id, id"):
        flags[run].append((sev, code))
    vals = {run: v for run, v in con.execute("SELECT run_id, value FROM metrics WHERE gpu = -1 AND name = ?",
                                             (metric,))}
    groups = defaultdict(lambda: {"v": [], "codes": set()})
    left = []
    for run, prov, itype, prof in con.execute("SELECT id, provider, instance_type, profile FROM runs ORDER BY id"):
        if run not in vals or not prov or not itype:
            continue
        if any(s == "critical" for s, _ in flags[run]):
            left.append(run)
            continue
        g = groups[(prov, itype, prof or "unknown")]
        g["v"].append(vals[run])
        g["codes"].update(c for sv, c in flags[run] if sv != "info")   # an info flag is no finding (issue 48)
    con.close()
    return groups, left, flags


def type_figure(r, key, values):
    """The instance types' table's BF16 figure (issue 48 item 4): the one rank gives the type (a measured
    row, or a measured type without a price), else the median of every run of it, as the page says."""
    prov, itype, region = key
    for x in r["rows"]:
        if not x["estimate"] and (x["provider"], x["instance_type"]) == (prov, itype) and \
                region in (x.get("run_region") or "\u2014", x.get("region") or "\u2014"):
            return x["value"]
    for x in r["unpriced"]:
        if not x["estimate"] and (x["provider"], x["instance_type"]) == (prov, itype) and "value" in x:
            return x["value"]
    return statistics.median(values)


def test_rank_equals_a_brute_force_count_of_every_run(gpuvet, fleet):
    r = gpuvet.json("--db", fleet, "rank", "--json", db=False)
    groups, left, flags = brute(fleet)
    assert len(left) > 1000, "the fixture leaves out more runs than are listed"
    assert r["runs_left_out"] == len(left)
    # the first 1,000 by run id are listed, each with its codes; the count stays whole
    assert [x["run"] for x in r["left_out"]] == left[:1000]
    assert all(sorted(x["flags"]) == sorted(c for sv, c in flags[x["run"]] if sv != "info") for x in r["left_out"])
    types = {(p, t) for p, t, _ in groups}
    assert {(x["provider"], x["instance_type"]) for x in r["rows"]} == types
    for row in r["rows"]:
        profs = sorted((q for p, t, q in groups if (p, t) == (row["provider"], row["instance_type"])),
                       key=lambda q: PREF.get(q, 3))
        g = groups[(row["provider"], row["instance_type"], profs[0])]
        assert row["profile"] == profs[0]
        assert row["runs"] == len(g["v"])
        assert row["value"] == pytest.approx(statistics.median(g["v"]), rel=1e-12)
        assert set(row["flags"]) == g["codes"] and len(row["flags"]) == len(g["codes"])
        assert row["value_per_dollar"] == pytest.approx(row["value"] / row["price_per_hour"], rel=1e-9)
        others = {o["profile"]: o for o in row["other_profiles"]}
        assert set(others) == set(profs[1:])
        for q, o in others.items():
            og = groups[(row["provider"], row["instance_type"], q)]
            assert o["runs"] == len(og["v"])
            assert o["value"] == pytest.approx(statistics.median(og["v"]), rel=1e-12)
    vpd = [x["value_per_dollar"] for x in r["rows"]]
    assert vpd == sorted(vpd, reverse=True)
    # counted with --include-flagged: every run with the metric, nothing listed
    r = gpuvet.json("--db", fleet, "rank", "--json", "--include-flagged", db=False)
    assert r["runs_left_out"] == 0 and r["left_out"] == []
    assert sum(x["runs"] + sum(o["runs"] for o in x["other_profiles"]) for x in r["rows"]) == \
        sum(len(g["v"]) for g in groups.values()) + len(left)


def cells(tr):
    return [html.unescape(re.sub(r"<[^>]+>", "", c)).strip() for c in re.findall(r"<td[^>]*>(.*?)</td>", tr, re.S)]


def test_report_equals_rank_and_a_brute_force_count_of_every_run(gpuvet, fleet, tmp_path):
    out = tmp_path / "r.html"
    gpuvet("--db", fleet, "report", "-o", out, db=False, check=0, timeout=600)
    page = out.read_text()
    r = gpuvet.json("--db", fleet, "rank", "--json", db=False)
    # the runs left out, as rank counts them
    assert f"{r['runs_left_out']} runs with a critical flag are left out" in page
    # the ranking table: rank's order (estimates ranked among them by value per dollar, marked)
    body = page[page.index('id="rank"'):]
    body = body[:body.index("</table>")]
    shown = [(c[1], c[2]) for c in map(cells, re.findall(r"<tr[^>]*>(.*?)</tr>", body, re.S)[1:])
             if len(c) > 3 and c[0].isdigit() and not c[2].endswith("(estimate)")]
    assert shown[:len(r["rows"])] == [(x["provider"], x["instance_type"]) for x in r["rows"]]
    # the instance types' table: runs, runs with a critical flag and the BF16 figure rank gives the type
    con = sqlite3.connect(fleet)
    want = defaultdict(lambda: {"runs": 0, "crit": 0, "v": []})
    crit = {x for (x,) in con.execute("SELECT DISTINCT run_id FROM flags WHERE severity = 'critical'")}
    vals = dict(con.execute("SELECT run_id, value FROM metrics WHERE gpu = -1 AND name = ?", (METRIC,)).fetchall())
    for run, prov, itype, region in con.execute("SELECT id, provider, instance_type, region FROM runs"):
        w = want[(prov or "\u2014", itype or "\u2014", region or "\u2014")]   # the page's dash for none
        w["runs"] += 1
        w["crit"] += run in crit
        if run in vals:
            w["v"].append(vals[run])
    con.close()
    skus = page[page.index('id="skus"'):]
    skus = skus[:skus.index("</table>")]
    got = {}
    for c in map(cells, re.findall(r"<tr>(.*?)</tr>", skus, re.S)):
        if len(c) == 10:
            got[(c[0], c[1], c[2])] = (int(c[4]), int(c[7]), float(c[8].split()[0]))
    assert set(got) == set(want)
    for k, w in want.items():
        assert got[k][:2] == (w["runs"], w["crit"]), k
        assert got[k][2] == pytest.approx(type_figure(r, k, w["v"]), abs=0.051), k


def newest_first(con):
    """Every run, newest first (started, then id), with what the page's choices read."""
    flags = defaultdict(set)
    for run, sev in con.execute("SELECT run_id, severity FROM flags"):
        flags[run].add(sev)
    runs = con.execute("SELECT id, provider, instance_type, region, gpuvet_version, gpu_model FROM runs"
                       " ORDER BY started_at DESC, id DESC").fetchall()
    return runs, flags


@pytest.fixture(scope="module")
def sparse_fleet(fleet, tmp_path_factory):
    """The fleet with its run ids set by hand far apart (negative to 2^52, in the same order): the
    report's per-run facts cannot be an array from the smallest id to the largest."""
    db = tmp_path_factory.mktemp("sparse") / "sparse.db"
    shutil.copy(fleet, db)
    con = sqlite3.connect(db)
    con.execute("PRAGMA foreign_keys = OFF")
    new = "run_id * 1099511627776 - 4611686018427387904"
    for (t,) in con.execute("SELECT m.name FROM sqlite_master m, pragma_table_info(m.name) c"
                            " WHERE m.type = 'table' AND c.name = 'run_id'").fetchall():
        con.execute(f"UPDATE {t} SET run_id = {new}")
    con.execute(f"UPDATE runs SET id = {new.replace('run_id', 'id')}")
    con.commit()
    con.close()
    return db


@pytest.mark.parametrize("store", ["fleet", "sparse_fleet"])
def test_report_summary_rows_and_detail_equal_a_brute_force_pass(gpuvet, store, request, tmp_path):
    """The summary's cards, flag counts and versions, the runs table's rows and the detailed runs
    (html.h's size rule) come from one bounded pass now: the same as every run held in Python,
    whatever the run ids."""
    fleet = request.getfixturevalue(store)
    out = tmp_path / "r.html"
    gpuvet("--db", fleet, "report", "-o", out, db=False, check=0, timeout=600)
    page = out.read_text()
    con = sqlite3.connect(fleet)
    runs, sevs = newest_first(con)
    n = len(runs)
    assert n == RUNS > 2000
    # cards
    cards = dict((lab, int(v)) for v, lab in re.findall(r'<div class="card"><b>(\d+)</b>([a-z ]+)</div>', page))
    skus = {(p or "?", t or "?", r or "?") for _, p, t, r, _, _ in runs}
    types = {(p or "?", t or "?") for _, p, t, _, _, _ in runs}     # a type, whatever its regions (#58 item 7)
    assert cards["runs"] == n and cards["instance types"] == len(types) < len(skus)
    # flags at a glance: runs per code and the worst severity
    want = defaultdict(lambda: [0, 2])
    order = {"critical": 0, "warning": 1, "info": 2}
    for code, sev, k in con.execute("SELECT code, min(CASE severity WHEN 'critical' THEN 0 WHEN 'warning' THEN 1"
                                    " ELSE 2 END), count(DISTINCT run_id) FROM flags GROUP BY code"):
        want[code] = [k, sev]
    ft = page[page.index('id="flags"'):]
    ft = ft[:ft.index("</table>")]
    got = {c[0]: [int(c[2]), order[c[1]]] for c in map(cells, re.findall(r"<tr>(.*?)</tr>", ft, re.S)) if len(c) == 4}
    assert got == dict(want) and got
    # versions, in the order first seen (oldest run first)
    vers = defaultdict(int)
    for run in reversed(runs):
        vers[run[4] or "unknown"] += 1
    line = "Runs measured by: " + ", ".join(f"gpuvet {v} ({k} run{'' if k == 1 else 's'})" for v, k in vers.items())
    assert line + ".</p>" in page
    # detail: the newest 3 of each instance type, newest first, at most 200
    per = defaultdict(int)
    cand = []
    for r in runs:
        key = (r[1] or "?", r[2] or "?", r[3] or "?")
        if per[key] < 3:
            cand.append(r[0])
        per[key] += 1
    detail = set(cand[:200])
    # rows: the detailed, then the newest flagged (half the room left), then the newest, 2,000 in all
    listed = set(detail)
    room = (2000 - len(listed)) // 2
    for r in runs:
        if room and r[0] not in listed and sevs[r[0]] & {"critical", "warning"}:
            listed.add(r[0])
            room -= 1
    for r in runs:
        if len(listed) >= 2000:
            break
        listed.add(r[0])
    body = page[page.index('id="runlist"'):]
    body = body[:body.index("</table>")]
    rows = re.findall(r'<tr id="r-(?:-?\d+)"><td class=n>(?:<a href="#run-(-?\d+)">)?(-?\d+)', body)   # a row is an anchor (#58)
    assert [int(x) for _, x in rows] == [r[0] for r in reversed(runs) if r[0] in listed]
    assert {int(x) for x, _ in rows if x} == detail
    assert f"{n - 2000} more runs left out of this table" in page
    con.close()


def test_report_of_one_run_named_twice_is_that_run_against_the_whole_fleet(gpuvet, fleet, tmp_path):
    """--run ID twice is one run (it was 'run not found in the store': the runs asked for were counted
    against the ids given); its page covers it alone, and its charts' fleet median counts every other
    stored run of its GPU model that has a soak figure."""
    con = sqlite3.connect(fleet)
    run, model, gpus = con.execute("SELECT r.id, r.gpu_model, r.gpu_count FROM runs r JOIN metrics m ON m.run_id = r.id"
                                   " AND m.gpu = -1 AND m.name = 'soak.tflops.last_min' ORDER BY r.id DESC"
                                   " LIMIT 1").fetchone()
    others = con.execute("SELECT count(*) FROM runs r JOIN metrics m ON m.run_id = r.id AND m.gpu = -1 AND"
                         " m.name = 'soak.tflops.last_min' WHERE r.gpu_model = ? AND r.gpu_count > 0 AND r.id <> ?"
                         " AND m.value IS NOT NULL", (model, run)).fetchone()[0]
    con.close()
    out = tmp_path / "one.html"
    gpuvet("--db", fleet, "report", "--run", str(run), "--run", str(run), "-o", out, db=False, timeout=600)
    page = out.read_text()
    assert f"1 of the store's {RUNS} runs" in page
    assert page.count(f'id="run-{run}"') == 1
    assert f"fleet median ({others} other runs)" in page


def test_report_counts_each_runs_verdict_flags_and_bf16_on_that_run(gpuvet, fleet, tmp_path):
    """The full-store pass reads each run's latest verdict, flags and BF16 headline in run-id order
    beside the runs in started order: every fact must land on its own run.  Verdicts from `gpuvet
    accept` on the runs of one instance type and region (a neighbour by id is another type), a later
    imported verdict that counts for nothing, an older one that the latest replaces, and BF16 values
    taken from half of that group's runs: the cards and the instance types' accepted, rejected, critical
    and median columns equal a brute-force count over every run."""
    db = tmp_path / "facts.db"
    shutil.copyfile(fleet, db)
    con = sqlite3.connect(db)
    ids = [x for (x,) in con.execute("SELECT id FROM runs WHERE id % 25 = 3 ORDER BY id LIMIT 12")]
    con.close()
    for run in ids:   # exit 0 accept, 1 reject (a critical flag), 3 unmeasurable
        gpuvet("--db", db, "accept", "--run", str(run), db=False, check=None)
    con = sqlite3.connect(db, isolation_level=None)
    got = dict(con.execute("SELECT run_id, verdict FROM verdicts"))
    assert set(got) == set(ids) and {"accept", "reject"} <= set(got.values())
    # a later imported verdict (history: not counted) and an older one (replaced by the latest)
    for run in ids[:4]:
        for verdict, at, imported in (("reject" if got[run] == "accept" else "accept", "2999-01-01T00:00:00Z", 1),
                                      ("unmeasurable", "2000-01-01T00:00:00Z", 0)):
            con.execute("INSERT INTO verdicts (run_id, verdict, policy, at, policy_digest, imported)"
                        " VALUES (?, ?, 'older', ?, 'x', ?)", (run, verdict, at, imported))
    con.execute("DELETE FROM metrics WHERE gpu = -1 AND name = ? AND run_id % 25 = 3 AND run_id % 2 = 0", (METRIC,))
    latest = {}
    for run, verdict in con.execute("SELECT run_id, verdict FROM verdicts WHERE imported = 0"
                                    " ORDER BY run_id, at DESC, id DESC"):
        latest.setdefault(run, verdict)
    crit = {x for (x,) in con.execute("SELECT DISTINCT run_id FROM flags WHERE severity = 'critical'")}
    vals = dict(con.execute("SELECT run_id, value FROM metrics WHERE gpu = -1 AND name = ?", (METRIC,)).fetchall())
    want = defaultdict(lambda: {"runs": 0, "acc": 0, "rej": 0, "crit": 0, "v": []})
    for run, prov, itype, region in con.execute("SELECT id, provider, instance_type, region FROM runs"):
        w = want[(prov or "\u2014", itype or "\u2014", region or "\u2014")]
        w["runs"] += 1
        w["acc"] += latest.get(run) == "accept"
        w["rej"] += latest.get(run) == "reject"
        w["crit"] += run in crit
        if run in vals:
            w["v"].append(vals[run])
    con.close()
    out = tmp_path / "r.html"
    gpuvet("--db", db, "report", "-o", out, db=False, check=0, timeout=600)
    page = out.read_text()
    cards = dict((lab, int(v)) for v, lab in re.findall(r'<div class="card"><b>(\d+)</b>([a-z ]+)</div>', page))
    verdicts = list(latest.values())
    assert (cards["accepted"], cards["rejected"], cards["unmeasurable"], cards["not judged"]) == \
        (verdicts.count("accept"), verdicts.count("reject"), verdicts.count("unmeasurable"), RUNS - len(verdicts))
    skus = page[page.index('id="skus"'):]
    skus = skus[:skus.index("</table>")]
    rows = {}
    for c in map(cells, re.findall(r"<tr>(.*?)</tr>", skus, re.S)):
        if len(c) == 10:
            rows[(c[0], c[1], c[2])] = (int(c[4]), int(c[5]), int(c[6]), int(c[7]), float(c[8].split()[0]))
    assert set(rows) == set(want)
    r = gpuvet.json("--db", db, "rank", "--json", db=False)
    for k, w in want.items():
        assert rows[k][:4] == (w["runs"], w["acc"], w["rej"], w["crit"]), k
        assert rows[k][4] == pytest.approx(type_figure(r, k, w["v"]), abs=0.051), k


def test_report_fleet_soak_medians_equal_a_brute_force_count(gpuvet, fleet, tmp_path):
    """Each detailed run's chart shows the median soak figure per GPU of the other runs of its GPU
    model over the whole store; read by the runs' models noted by id, one sorted pass per GPU count.
    With the H100 runs at 8 GPUs and the H200 at 1 (two passes), then with H100 at 1 and 8 (one
    model, two counts: the runs joined as before), every chart's count and median equal Python's."""
    for case, sql in (("split", "UPDATE runs SET gpu_count = 8 WHERE gpu_model LIKE 'H100%'"),
                      ("mixed", "UPDATE runs SET gpu_count = 8 WHERE gpu_model LIKE 'H100%' AND id % 3 = 0")):
        db = tmp_path / f"{case}.db"
        shutil.copyfile(fleet, db)
        con = sqlite3.connect(db, isolation_level=None)
        con.execute(sql)
        per = defaultdict(dict)
        for run, model, gpus, v in con.execute(
                "SELECT r.id, r.gpu_model, r.gpu_count, m.value FROM runs r JOIN metrics m ON m.run_id = r.id"
                " AND m.gpu = -1 AND m.name = 'soak.tflops.last_min' WHERE m.value IS NOT NULL"
                " AND r.gpu_model IS NOT NULL AND r.gpu_count > 0"):
            per[model][run] = v / gpus
        model_of = dict(con.execute("SELECT id, gpu_model FROM runs"))
        con.close()
        assert len(per) == 2, "both GPU models have soak figures"
        out = tmp_path / f"{case}.html"
        gpuvet("--db", db, "report", "-o", out, db=False, check=0, timeout=600)
        page = out.read_text()
        charts = 0
        for run, part in re.findall(r'id="run-(\d+)"(.*?)(?=id="run-\d+"|$)', page, re.S):
            m = re.search(r"fleet median \((\d+) other runs?\) ([0-9.]+)<", part)
            if not m:
                continue
            vals = per[model_of[int(run)]]
            others = [v for r, v in vals.items() if r != int(run)]
            assert int(m[1]) == len(others), (case, run)
            assert float(m[2]) == pytest.approx(statistics.median(others), rel=2e-3), (case, run)
            charts += 1
        assert charts > 10, case
