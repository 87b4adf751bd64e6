"""One uuid, one run (issue #35 item 6).

A file or store whose run has a stored uuid but other content (another hostname, half the GEMM rate:
a cloned image, a replayed or edited file) is a conflict named on stderr with a non-zero exit, never
"already present"; the same run again (its own export) is still "already present", exit 0.
"""
import json
import sqlite3

from conftest import FIXTURES
from helpers import integrity_ok

Q = FIXTURES / "gpu" / "h100-2026-11-22" / "quick-profile.json"


def stored_rate(db, uuid):
    c = sqlite3.connect(db)
    try:
        return c.execute("SELECT m.value, r.hostname FROM metrics m JOIN runs r ON r.id = m.run_id WHERE r.uuid = ? "
                         "AND m.name = 'gemm.fp32.tflops' AND m.gpu = -1", (uuid,)).fetchone()
    finally:
        c.close()


def edited(tmp_path, name, **run):
    fp = json.loads(Q.read_text())
    fp["run"].update(run)
    for m in fp["metrics"]:   # the rate halved, and its percentage with it: an edit that passes as evidence (issue 57)
        if m["name"] in ("gemm.fp32.tflops", "gemm.fp32.pct_of_peak"):
            m["value"] /= 2
    p = tmp_path / name
    p.write_text(json.dumps(fp))
    return fp, p


def test_import_of_a_different_run_under_a_stored_uuid_is_a_conflict(gpuvet, tmp_path):
    gpuvet("results", "import", Q, check=0)
    fp, p = edited(tmp_path, "clone.json", hostname="other-host")
    before = stored_rate(gpuvet.db, fp["run"]["uuid"])
    r = gpuvet("results", "import", p)
    assert r.returncode != 0, r.stdout + r.stderr
    assert "conflicts with the stored run" in r.stderr and fp["run"]["uuid"] in r.stderr, r.stderr
    assert "already" not in r.stdout + r.stderr
    assert stored_rate(gpuvet.db, fp["run"]["uuid"]) == before and integrity_ok(gpuvet.db)


def test_the_same_rate_halved_alone_is_a_conflict(gpuvet, tmp_path):
    gpuvet("results", "import", Q, check=0)
    fp, p = edited(tmp_path, "halved.json")
    r = gpuvet("results", "import", p)
    assert r.returncode != 0 and "conflicts with the stored run" in r.stderr, r.stdout + r.stderr


def test_merge_of_a_store_holding_a_different_run_is_a_conflict(gpuvet, tmp_path):
    gpuvet("results", "import", Q, check=0)
    fp, p = edited(tmp_path, "clone.json", hostname="other-host")
    other = tmp_path / "other.db"
    gpuvet("--db", other, "results", "import", p, db=False, check=0)
    r = gpuvet("results", "merge", other)
    assert r.returncode != 0, r.stdout + r.stderr
    assert "conflicts with the stored run" in r.stderr and "already present" not in r.stdout, r.stdout + r.stderr
    assert stored_rate(gpuvet.db, fp["run"]["uuid"])[1] == "vm"


def test_the_same_run_again_is_already_present(gpuvet, tmp_path):
    gpuvet("results", "import", Q, check=0)
    r = gpuvet("results", "import", Q)
    assert r.returncode == 0 and "already" in r.stdout + r.stderr, r.stdout + r.stderr
    out = tmp_path / "export.json"
    gpuvet("results", "export", "--format", "json", "-o", out, check=0)
    r = gpuvet("results", "import", out)
    assert r.returncode == 0, r.stdout + r.stderr
    other = tmp_path / "copy.db"
    gpuvet("--db", other, "results", "import", Q, db=False, check=0)
    r = gpuvet("results", "merge", other)
    assert r.returncode == 0 and "0 run(s) added, 1 already present" in r.stdout, r.stdout + r.stderr
