"""An output is never the store (issue #35 item 1, and item 8's message for a missing directory).

`report -o`, `results export -o` and `run --report` refuse, before anything is measured or written,
a path that resolves to the store, its -wal/-shm/-journal or anything in its pending folder (by
name, through a symlink, a hard link or another spelling), and any existing SQLite database; the
store is unchanged and the exit is 2.
"""
import os
import sqlite3

import pytest

from conftest import FIXTURES
from helpers import NULL, integrity_ok, sha

Q = FIXTURES / "gpu" / "h100-2026-11-22" / "quick-profile.json"


def stored(gpuvet):
    gpuvet("results", "import", Q, check=0)
    con = sqlite3.connect(gpuvet.db)
    con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    con.close()
    return sha(gpuvet.db)


def spellings(gpuvet, tmp_path):
    db = gpuvet.db
    link = tmp_path / "link.html"
    link.symlink_to(db)
    hard = tmp_path / "hard.html"
    os.link(db, hard)
    (tmp_path / "sub").mkdir()
    dirlink = tmp_path / "dirlink"
    dirlink.symlink_to(tmp_path)
    return [db, f"{tmp_path}/sub/../gpuvet.db", f"{tmp_path}/./gpuvet.db", str(link), str(hard),
            f"{dirlink}/gpuvet.db", db + "-wal", db + "-shm", db + "-journal", db + ".pending/x.json"]


@pytest.mark.parametrize("how", ["report", "export"])
def test_output_over_the_store_is_refused(gpuvet, tmp_path, how):
    before = stored(gpuvet)
    for out in spellings(gpuvet, tmp_path):
        args = ["report", "-o", out] if how == "report" else ["results", "export", "--format", "json", "-o", out]
        p = gpuvet(*args)
        assert p.returncode == 2, (out, p.stdout, p.stderr)
        assert "refusing to write" in p.stderr and "store" in p.stderr, (out, p.stderr)
        assert "wrote" not in p.stdout
        assert sha(gpuvet.db) == before, out
        assert integrity_ok(gpuvet.db)
    assert gpuvet("results", "list", "--json").returncode == 0


def test_run_report_over_the_store_is_refused_before_measuring(gpuvet, tmp_path):
    stored(gpuvet)
    con = sqlite3.connect(gpuvet.db)
    runs = con.execute("SELECT count(*) FROM runs").fetchone()[0]
    con.close()
    for out in (gpuvet.db, str(tmp_path / "." / "gpuvet.db-wal")):
        p = gpuvet("run", "--bench", "null", "-q", "--report", out, env=NULL)
        assert p.returncode == 2 and "refusing to write" in p.stderr, p.stderr
    con = sqlite3.connect(gpuvet.db)
    assert con.execute("SELECT count(*) FROM runs").fetchone()[0] == runs   # nothing measured
    con.close()
    assert integrity_ok(gpuvet.db)


def test_run_report_over_a_store_not_made_yet_is_refused(gpuvet, tmp_path):
    db = tmp_path / "new" / "s.db"
    p = gpuvet("--db", db, "run", "--bench", "null", "-q", "--report", tmp_path / "new" / "." / "s.db",
               db=False, env=NULL)
    assert p.returncode == 2 and "refusing to write" in p.stderr, p.stderr


def test_no_output_replaces_any_sqlite_database(gpuvet, tmp_path):
    stored(gpuvet)
    other = tmp_path / "other.db"
    con = sqlite3.connect(other)
    con.execute("CREATE TABLE t (x)")
    con.commit()
    con.close()
    before = sha(other)
    for args in (["report", "-o", other], ["results", "export", "--format", "csv", "-o", other]):
        p = gpuvet(*args)
        assert p.returncode == 2 and "SQLite database" in p.stderr, p.stderr
        assert sha(other) == before


def test_ordinary_outputs_still_written(gpuvet, tmp_path):
    stored(gpuvet)
    out = tmp_path / "r.html"
    out.write_text("old report")
    assert gpuvet("report", "-o", out).returncode == 0
    assert out.read_text().startswith("<!")
    assert gpuvet("results", "export", "--format", "json", "-o", tmp_path / "gpuvet.db.json").returncode == 0


def test_missing_directory_is_named_not_the_temporary(gpuvet, tmp_path):
    stored(gpuvet)
    out = tmp_path / "nodir" / "r.json"
    p = gpuvet("results", "export", "--format", "json", "-o", out)
    assert p.returncode == 2
    assert f"'{out}'" in p.stderr and "No such file or directory" in p.stderr and ".tmp." not in p.stderr
