"""A store that may only be read can be read (issue 28 item 11): with no write permission on the
file or its directory there is no -shm file for a WAL reader, and every read command refused the
store.  It is now opened immutable when no -wal shows a writer at work.  The reader is another
user (root passes every permission check: CI runs as root, so the test drops to nobody)."""
import os
import shutil
import subprocess
import tempfile

import pytest

from conftest import FIXTURES, gpuvet_bin

H100 = FIXTURES / "gpu" / "h100-2026-11-22" / "standard-profile.json"


def as_reader():
    if os.geteuid() == 0:
        os.setgid(65534)
        os.setuid(65534)


@pytest.fixture
def readonly_store(gpuvet):
    gpuvet("results", "import", H100, check=0)
    top = tempfile.mkdtemp(prefix="gpuvet-ro-", dir="/tmp")
    os.chmod(top, 0o755)
    ro = os.path.join(top, "ro")
    os.mkdir(ro)
    db = os.path.join(ro, "s.db")
    shutil.copy(gpuvet.db, db)
    assert not os.path.exists(db + "-wal")
    os.chmod(db, 0o444)
    os.chmod(ro, 0o555)
    yield top, db
    os.chmod(ro, 0o755)
    shutil.rmtree(top)


def read(db, *args, out_dir=None):
    env = dict(os.environ, GPUVET_NO_METADATA="1", HOME="/tmp")
    return subprocess.run([gpuvet_bin(), "--db", db, *args], env=env, capture_output=True, text=True, timeout=120,
                          preexec_fn=as_reader, cwd="/tmp")


def test_a_store_that_may_only_be_read_is_read(readonly_store):
    top, db = readonly_store
    before = open(db, "rb").read()
    p = read(db, "results", "list")
    assert p.returncode == 0 and "H100-SXM" in p.stdout, p.stderr
    p = read(db, "results", "show", "1", "--text")
    assert p.returncode == 0, p.stderr
    out = os.path.join(top, "r.html")
    os.chmod(top, 0o777)                     # the report's own directory is writable
    p = read(db, "report", "-o", out)
    assert p.returncode == 0 and open(out).read().startswith("<!DOCTYPE html>"), p.stderr
    assert open(db, "rb").read() == before
    assert sorted(os.listdir(os.path.dirname(db))) == ["s.db"]     # no -wal, no -shm left


def test_accept_on_a_store_that_may_only_be_read_prints_its_verdict_then_exits_2(readonly_store):
    """#47 item 8: the verdict first (docs/acceptance.md), then that it could not be recorded."""
    top, db = readonly_store
    p = read(db, "accept")
    assert p.returncode == 2, (p.stdout, p.stderr)
    assert [ln for ln in p.stdout.splitlines() if ln.startswith(("ACCEPT", "REJECT", "UNMEASURABLE"))], p.stdout
    assert "the verdict was not recorded in the store: the store can only be read here" in p.stderr, p.stderr
    assert "attempt to write" not in p.stderr


def old_readonly_store(top):
    """The schema-2 store old main wrote (tests/fixtures/fleet), read-only to its reader."""
    import sqlite3
    ro = os.path.join(top, "old")
    os.mkdir(ro)
    db = os.path.join(ro, "s.db")
    con = sqlite3.connect(db)
    con.executescript((FIXTURES / "fleet" / "old-main-store.sql").read_text())
    con.close()
    os.chmod(db, 0o444)
    os.chmod(ro, 0o555)
    return ro, db


@pytest.mark.parametrize("old", [False, True])
def test_a_store_that_may_only_be_read_answers_every_read_only_question(readonly_store, old):
    """#47 item 8: rank, cost and prices list read it as it is; only what writes is refused."""
    top, db = readonly_store
    if old:
        ro, db = old_readonly_store(top)
    before = open(db, "rb").read()
    for args in (("rank", "--estimates"), ("cost", "--model", "llama-3.1-8b", "--estimates"),
                 ("prices", "list", "--provider", "aws", "--region", "us-east-1"), ("prices", "sources"),
                 ("prices", "cheapest", "--gpu", "H100"), ("results", "list"), ("accept",)):
        p = read(db, *args)
        assert "attempt to write a readonly database" not in p.stderr, (args, p.stderr)
        assert p.returncode in ((0, 2) if args == ("accept",) else (0,)), (args, p.returncode, p.stderr)
    p = read(db, "results", "import", H100)
    assert p.returncode == 2 and "can only be read here" in p.stderr, p.stderr   # a write refused, said so
    assert "attempt to write" not in p.stderr
    assert open(db, "rb").read() == before
    if old:
        os.chmod(ro, 0o755)
