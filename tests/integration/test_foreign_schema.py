"""A store whose schema is not gpuvet's is refused before a row is read (issue 28 item 9): a
recursive view standing in for a table hung `results list`, `report` and `merge` and filled the
temp directory; a trigger would run on gpuvet's writes."""
import sqlite3

import pytest

from conftest import FIXTURES

H100 = FIXTURES / "gpu" / "h100-2026-11-22" / "standard-profile.json"
RECURSIVE = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT x FROM c"


@pytest.mark.parametrize("plant", [
    ["ALTER TABLE runs RENAME TO runs_old", f"CREATE VIEW runs AS SELECT * FROM runs_old, ({RECURSIVE})"],
    ["CREATE TRIGGER t AFTER INSERT ON runs BEGIN DELETE FROM runs; END"],
])
def test_a_view_or_trigger_is_refused(gpuvet, tmp_path, plant):
    gpuvet("results", "import", H100, check=0)
    db = sqlite3.connect(gpuvet.db)
    for sql in plant:
        db.execute(sql)
    db.commit()
    db.close()
    before = open(gpuvet.db, "rb").read()
    for args in (["results", "list"], ["report", "-o", str(tmp_path / "r.html")], ["rank"],
                 ["cost", "--model", "llama-3.1-8b", "--estimates"],
                 ["results", "import", str(H100)]):
        p = gpuvet(*args, timeout=20)
        assert p.returncode == 2, (args, p.stdout, p.stderr)
        assert "gpuvet's schema has none, so it is not gpuvet's" in p.stderr and p.stderr.count("\n") == 1, p.stderr
    other = tmp_path / "other.db"
    p = gpuvet("--db", other, "results", "merge", gpuvet.db, db=False, timeout=20)
    assert p.returncode == 2 and "not gpuvet's" in p.stderr, p.stderr
    assert open(gpuvet.db, "rb").read() == before
