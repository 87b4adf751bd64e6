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


CRASHED_WRITER = r"""
import os, sqlite3, sys
db, mode = sys.argv[1], sys.argv[2]
con = sqlite3.connect(db, isolation_level=None)
con.execute(f"PRAGMA journal_mode={mode}")
con.execute("CREATE TABLE IF NOT EXISTS t (x)")
con.execute("BEGIN")
con.executemany("INSERT INTO t VALUES (?)", [(i,) for i in range(2000)])
if mode == "WAL":
    con.execute("COMMIT")        # committed, then the writer dies before any checkpoint
else:
    con.execute("PRAGMA cache_size=1")
    con.execute("UPDATE t SET x = x + 1")   # spills to the database: the journal is hot
os._exit(0)
"""


def crashed_writer(tmp_path, name, mode):
    import subprocess
    import sys
    db = tmp_path / name
    if mode != "WAL":
        subprocess.run([sys.executable, "-c", CRASHED_WRITER, str(db), "WAL"], check=True)
        con = sqlite3.connect(db)
        con.execute("PRAGMA journal_mode=DELETE")
        con.close()
    subprocess.run([sys.executable, "-c", CRASHED_WRITER, str(db), mode], check=True)
    return db


def test_no_output_replaces_another_databases_wal_or_journal(gpuvet, tmp_path):
    """#47 item 1: another database's -wal after a crash holds its committed rows; a hot journal its repair."""
    stored(gpuvet)
    other = crashed_writer(tmp_path, "other.db", "WAL")
    wal = tmp_path / "other.db-wal"
    assert wal.stat().st_size > 0
    hot = crashed_writer(tmp_path, "hot.db", "DELETE")
    journal = tmp_path / "hot.db-journal"
    assert journal.read_bytes()[:8] == bytes.fromhex("d9d505f920a163d7")
    moved = tmp_path / "journal-copy.bin"          # a journal under any name, known by its magic
    moved.write_bytes(journal.read_bytes())
    walcopy = tmp_path / "wal-copy.bin"
    walcopy.write_bytes(wal.read_bytes())
    second = tmp_path / "second.db"                # a second gpuvet store whose writer crashed
    gpuvet("--db", second, "results", "import", Q, db=False, check=0)
    targets = {wal: "write-ahead log", walcopy: "write-ahead log", journal: "rollback journal",
               moved: "rollback journal", tmp_path / "other.db-shm": "-shm name",
               tmp_path / "other.db-journal": "-journal name", tmp_path / "second.db-journal": "-journal name"}
    for out, what in targets.items():
        before = sha(out) if out.exists() else None
        for args in (["report", "-o", out], ["results", "export", "--format", "json", "-o", out]):
            p = gpuvet(*args)
            assert p.returncode == 2 and what in p.stderr and "refusing to write" in p.stderr, (out, p.stderr)
            assert (sha(out) if out.exists() else None) == before, out
    con = sqlite3.connect(other)
    assert con.execute("SELECT count(*) FROM t").fetchone()[0] == 2000   # the committed rows are there
    con.close()
    out = tmp_path / "other.db-wal.html"          # a name that only begins like one is written
    assert gpuvet("report", "-o", out).returncode == 0


@pytest.mark.skipif(os.geteuid() != 0, reason="drops to nobody to be another user than the file's owner")
def test_another_users_unreadable_wal_is_not_replaced(gpuvet, tmp_path):
    """#47 item 1, whoever owns it: a file that may not be read cannot be told from a WAL, so it is kept."""
    import shutil
    import subprocess
    import tempfile
    from conftest import gpuvet_bin
    top = tempfile.mkdtemp(prefix="gpuvet-other-", dir="/tmp")
    try:
        os.chmod(top, 0o777)                          # a shared folder: anyone may rename over its files
        wal = os.path.join(top, "theirs.bin")
        with open(wal, "wb") as f:
            f.write(bytes.fromhex("377f0682") + bytes(60))
        os.chmod(wal, 0o600)                          # root's, unreadable to the writer below
        before = sha(wal)

        def nobody():
            os.setgid(65534)
            os.setuid(65534)
        env = dict(gpuvet.env, HOME="/tmp")
        p = subprocess.run([gpuvet_bin(), "--db", os.path.join(top, "s.db"), "results", "export", "--format", "json",
                            "-o", wal], env=env, capture_output=True, text=True, preexec_fn=nobody, cwd="/tmp",
                           timeout=60)
        assert p.returncode == 2 and "may not read" in p.stderr, p.stderr
        assert sha(wal) == before
    finally:
        shutil.rmtree(top)
