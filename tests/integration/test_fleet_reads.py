"""Issue 17: the store at fleet scale.

`results list` and `results export --format csv` read set-based rows
(results/store_read.c) and print exactly what the fingerprint-per-run code
of old main printed (tests/fixtures/fleet/, made by main at 80563f6); an old
store still opens, lists, exports and merges; the report keeps its runs
table and detail bounded on a store of many runs and says how many it left
out; `report -v` prints the time each step took.
"""
import random
import re
import sqlite3
import uuid
from pathlib import Path

import pytest

from conftest import FIXTURES

FLEET = FIXTURES / "fleet"
CHILD = ("gpus", "benches", "metrics", "series", "flags", "verdicts")


def old_store(path):
    """The schema-2 store old main wrote (README beside the dump)."""
    con = sqlite3.connect(path)
    con.executescript((FLEET / "old-main-store.sql").read_text())
    con.close()
    return path


def schema(path):
    con = sqlite3.connect(path)
    try:
        return con.execute("PRAGMA user_version").fetchone()[0]
    finally:
        con.close()


@pytest.mark.parametrize("args,golden", [
    (("results", "list"), "list.txt"),
    (("results", "list", "--json"), "list.json"),
    (("results", "export", "--format", "csv"), "export.csv"),
    (("results", "export", "--format", "csv", "--run", "2"), "export-run2.csv"),
])
def test_old_store_prints_what_old_main_printed(gpuvet, tmp_path, args, golden):
    db = old_store(tmp_path / "old.db")
    assert schema(db) == 2
    p = gpuvet("--db", db, *args, db=False, check=0)
    assert p.stdout == (FLEET / golden).read_text(), golden
    assert p.stderr == ""
    assert schema(db) == 2      # list and export only read: nothing written, the next write migrates
    assert gpuvet("--db", db, "rank", "--json", db=False).returncode in (0, 2)
    assert schema(db) == 10     # rank opens read-write: migrated forward, nothing lost
    con = sqlite3.connect(db)
    assert con.execute("SELECT count(*) FROM runs").fetchone()[0] == 4
    assert con.execute("SELECT count(*) FROM metrics").fetchone()[0] > 100
    # 7 dropped metrics_name (no read used it); what reads by name has metrics_head
    ix = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'metrics'")}
    assert ix == {"metrics_run", "metrics_head"}, ix
    # 8 added the cluster runs' tables (issue 49), empty
    assert con.execute("SELECT count(*) FROM clusters").fetchone()[0] == 0
    con.close()
    p = gpuvet("--db", db, *args, db=False, check=0)   # the migrated store prints the same
    assert p.stdout == (FLEET / golden).read_text(), golden


def test_samples_survive_the_move_to_one_row_per_series(gpuvet, tmp_path):
    """Schema 5 packs each series' points into one blob: the fingerprints read back are the same."""
    db = old_store(tmp_path / "old.db")
    con = sqlite3.connect(db)
    points = con.execute("SELECT count(*) FROM samples").fetchone()[0]
    nseries = con.execute("SELECT count(*) FROM (SELECT DISTINCT run_id, series, gpu FROM samples)").fetchone()[0]
    con.close()
    assert points > 100
    before = gpuvet.json("--db", db, "results", "export", "--format", "json", db=False)  # read-only, a row a point
    assert schema(db) == 2
    gpuvet("--db", db, "rank", "--json", db=False, check=2)                                 # read-write: migrates
    assert schema(db) == 10
    after = gpuvet.json("--db", db, "results", "export", "--format", "json", db=False)
    assert before == after
    assert sum(len(s["points"]) for fp in after for s in fp["samples"]) == points
    con = sqlite3.connect(db)
    assert con.execute("SELECT count(*), sum(length(points)) FROM series").fetchone() == (nseries, 16 * points)
    assert not con.execute("SELECT name FROM sqlite_master WHERE name = 'samples'").fetchall()
    assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    con.close()


def test_export_to_file_matches_stdout(gpuvet, tmp_path):
    db = old_store(tmp_path / "old.db")
    out = tmp_path / "x.csv"
    gpuvet("--db", db, "results", "export", "--format", "csv", "-o", out, db=False, check=0)
    assert out.read_text() == (FLEET / "export.csv").read_text()


def test_old_store_merges_without_migrating(gpuvet, tmp_path):
    """A schema-2 store is a merge source as it is (read-only open of the older schema)."""
    src = old_store(tmp_path / "old.db")
    con = sqlite3.connect(src)    # names merge would refuse (control characters, not UTF-8)
    con.execute("UPDATE runs SET hostname = 'vm', profile = 'quick', region = NULL")
    con.commit()
    con.close()
    p = gpuvet("results", "merge", src, check=0)
    assert "4 run(s) added" in p.stdout
    assert schema(src) == 2
    rows = gpuvet.json("results", "list", "--json")
    assert [r["uuid"][:8] for r in rows] == ["b095eb88", "7bedfd4d", "f3007f33", "0c3f6c6e"]


def test_how_each_reading_command_opens_the_store(gpuvet, tmp_path):
    """runners/prices_ready.c gv_open_reading: report never creates a store; list and export create an
    empty one, and read an old schema as it is; rank opens an old store read-write (migrated, catalogs
    loaded), and from then on rank, report, list and export all open it read-only."""
    missing = tmp_path / "none.db"
    p = gpuvet("--db", missing, "report", "-o", tmp_path / "r.html", db=False, check=2)
    assert len(p.stderr.strip().splitlines()) == 1, p.stderr
    assert not missing.exists() and not (tmp_path / "r.html").exists()
    assert gpuvet("--db", missing, "results", "list", db=False, check=0).stdout == "no runs in the store\n"
    assert missing.exists()

    db = old_store(tmp_path / "old.db")
    for args in (("results", "list"), ("results", "export", "--format", "csv")):    # an old schema, as it is
        assert "opened read-only" in gpuvet("-v", "--db", db, *args, db=False, check=0).stderr
    p = gpuvet("-v", "--db", db, "rank", "--json", db=False, check=None)     # migrates, loads the catalogs
    assert "opened read-write" in p.stderr and schema(db) == 10
    for args in (("rank", "--json"), ("report", "-o", str(tmp_path / "r.html")), ("results", "list"),
                 ("results", "export", "--format", "csv")):
        p = gpuvet("-v", "--db", db, *args, db=False, check=None)
        assert p.returncode in (0, 2) and "opened read-only" in p.stderr, (args, p.stderr)
    assert (tmp_path / "r.html").stat().st_size > 1000


def test_list_empty_store(gpuvet):
    assert gpuvet("results", "list", check=0).stdout == "no runs in the store\n"
    assert gpuvet.json("results", "list", "--json") == []


def fleet_store(gpuvet, tmp_path, n):
    """n runs: the four fixture runs copied in SQL under fresh uuids, as tests/bench/fleet_bench.py does."""
    db = old_store(tmp_path / "fleet.db")
    gpuvet("--db", db, "rank", db=False, check=2)  # opens read-write: migrates (nothing to rank: exit 2)
    con = sqlite3.connect(db)
    cols = {t: [r[1] for r in con.execute(f"PRAGMA table_info({t})")] for t in ("runs",) + CHILD}
    rc = [c for c in cols["runs"] if c not in ("id", "uuid", "started_at", "status")]
    rnd = random.Random(17)
    con.execute("UPDATE runs SET status = 'complete'")
    for i in range(5, n + 1):
        src = 1 + (i % 4)
        con.execute(f"INSERT INTO runs (id, uuid, started_at, status, {', '.join(rc)}) "
                    f"SELECT ?, ?, ?, 'complete', {', '.join(rc)} FROM runs WHERE id = ?",
                    (i, str(uuid.UUID(int=rnd.getrandbits(128))),
                     f"2026-{1 + i // 28 // 28 % 12:02d}-{1 + i // 28 % 28:02d}T00:{i // 60 % 60:02d}:{i % 60:02d}Z",
                     src))
        for t in CHILD:
            cc = [c for c in cols[t] if c not in ("id", "run_id")]
            con.execute(f"INSERT INTO {t} (run_id, {', '.join(cc)}) SELECT ?, {', '.join(cc)} "
                        f"FROM {t} WHERE run_id = ?", (i, src))
    con.commit()
    con.close()
    return db


def test_report_bounds_runs_table_and_says_what_it_left_out(gpuvet, tmp_path):
    n = 2600
    db = fleet_store(gpuvet, tmp_path, n)
    out = tmp_path / "r.html"
    p = gpuvet("--db", db, "-v", "report", "-o", out, db=False, check=0, timeout=300)
    html = out.read_text()
    rows = re.findall(r"<tr id=\"r-\d+\"><td class=n>(?:<a href=\"#run-\d+\">)?(\d+)", html.split('id="runlist"')[1]
                      .split("</table>")[0])
    assert len(rows) == 2000                       # REPORT_ROWS_MAX
    m = re.search(r'id="runs-left-out">(\d+) more runs left out', html)
    assert m and int(m.group(1)) == n - 2000
    assert str(n) in html.split("</header>")[0]     # the header still counts every run
    assert len(html) < 8 << 20
    # the newest runs are listed, and every detailed run
    listed = set(map(int, rows))
    con = sqlite3.connect(db)
    newest = [r[0] for r in con.execute("SELECT id FROM runs ORDER BY started_at DESC, id DESC LIMIT 200")]
    assert set(newest) <= listed
    for rid in re.findall(r'<section id="run-(\d+)"', html):
        assert int(rid) in listed
    # -v: the time each step took
    for step in ("reading the runs' summaries", "ranking", "reading prices", "writing the page"):
        assert re.search(rf"report: {re.escape(step)}.* took \d+\.\d+ s", p.stderr), (step, p.stderr)
    assert re.search(r"report: 2600 runs, \d+ bytes, \d+\.\d+ s in all", p.stderr)


def test_report_small_store_lists_every_run(gpuvet, tmp_path):
    db = old_store(tmp_path / "old.db")
    out = tmp_path / "r.html"
    gpuvet("--db", db, "report", "-o", out, db=False, check=0)
    html = out.read_text()
    assert 'id="runs-left-out"' not in html
    assert html.count("<tr><td class=n>") >= 4
