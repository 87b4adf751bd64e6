"""The run harness, the store and the results commands, end to end with the
real binary: crash, hang, kill -9, signals, corrupt or foreign databases."""
import hashlib
import json
import os
import signal
import sqlite3
import subprocess
import time
import uuid

import pytest

from conftest import gpuvet_bin
from helpers import run_started, wait_exited, within

NULL = {"GPUVET_TEST_BENCHES": "1"}


def null_env(mode, **extra):
    env = dict(NULL, GPUVET_NULL_MODE=mode)
    env.update({k: str(v) for k, v in extra.items()})
    return env


def bench(fp, name):
    return next(b for b in fp["benches"] if b["name"] == name)


def metric_names(fp):
    return {m["name"] for m in fp["metrics"]}


def integrity_ok(db):
    con = sqlite3.connect(db)
    try:
        return con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    finally:
        con.close()


def sha(path):
    return hashlib.sha256(open(path, "rb").read()).hexdigest()


def test_quick_run_on_cpu_skips_gpu_benches_with_reason(gpuvet):
    fp = gpuvet.json("run", "--profile", "quick", "--json")
    assert fp["schema"] == "gpuvet.fingerprint/1"
    assert fp["run"]["status"] == "complete"
    uuid.UUID(fp["run"]["uuid"])
    for name in ("gemm", "memcpy", "allreduce", "soak"):
        b = bench(fp, name)
        assert b["status"] == "skipped", b
        assert b["reason"] and "gpu" in b["reason"], b
    assert "null" not in {b["name"] for b in fp["benches"]}, "test-only bench in a real run"
    listed = gpuvet.json("results", "list", "--json")
    assert [r["uuid"] for r in listed] == [fp["run"]["uuid"]]
    assert integrity_ok(gpuvet.db)


def test_null_bench_is_not_selectable_in_a_real_run(gpuvet):
    p = gpuvet("run", "--bench", "null", check=2)
    assert p.stderr.strip() == "gpuvet: run: unknown bench 'null' (see 'gpuvet run --help')"
    assert not os.path.exists(gpuvet.db) or gpuvet.json("results", "list", "--json") == []


def test_bench_metrics_samples_and_steal_are_stored(gpuvet):
    fp = gpuvet.json("run", "--bench", "null", "--json", env=null_env("ok"))
    assert bench(fp, "null")["status"] == "ok"
    m = next(m for m in fp["metrics"] if m["name"] == "null.value.count")
    assert m["value"] == 42 and m["gpu"] == -1 and m["params"] == {"mode": "null"}
    s = next(s for s in fp["samples"] if s["series"] == "null.series.count")
    assert s["points"] == [[0, 0], [1, 2], [2, 4]]
    assert "host.cpu_steal.pct" in metric_names(fp)


@pytest.mark.parametrize("mode,status,reason", [
    ("crash", "failed", "signal 11"),
    ("abort", "failed", "signal 6"),
    ("fail", "failed", "null bench asked to fail"),
    ("skip", "skipped", "null bench asked to skip"),
])
def test_bench_outcomes_are_recorded_and_the_run_goes_on(gpuvet, mode, status, reason):
    env = null_env(mode)
    # under ASan the sanitizer would turn SIGSEGV into exit(1): let the signal through
    env["ASAN_OPTIONS"] = gpuvet.env.get("ASAN_OPTIONS", "") + ":handle_segv=0"
    fp = gpuvet.json("run", "--bench", "null,objstore", "--json", env=env)
    b = bench(fp, "null")
    assert b["status"] == status and reason in b["reason"], b
    # the run went on to the next bench and completed
    assert bench(fp, "objstore")["status"] == "skipped"
    assert fp["run"]["status"] == "complete"
    if mode in ("crash", "abort"):
        # what the bench reported before it died is kept
        assert "null.value.count" in metric_names(fp)
    assert integrity_ok(gpuvet.db)


def test_hanging_bench_is_killed_at_its_deadline(gpuvet):
    t0 = time.monotonic()
    fp = gpuvet.json("run", "--bench", "null", "--json", env=null_env("hang", GPUVET_NULL_DEADLINE=2),
                     timeout=30)
    elapsed = time.monotonic() - t0
    b = bench(fp, "null")
    assert b["status"] == "timed_out" and "deadline" in b["reason"], b
    assert elapsed < within(10), elapsed
    assert "null.value.count" in metric_names(fp)


def test_malformed_report_lines_are_ignored(gpuvet):
    fp = gpuvet.json("run", "--bench", "null", "--json", env=null_env("garbage"))
    assert bench(fp, "null")["status"] == "ok"
    assert {"null.value.count", "null.after_garbage.count"} <= metric_names(fp)


def _children_with_marker(marker):
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/environ", "rb") as f:
                if marker.encode() in f.read():
                    found.append(int(pid))
        except OSError:
            pass
    return found


def test_kill_9_mid_run_keeps_finished_benches(gpuvet, tmp_path):
    marker = f"GPUVET_TEST_MARKER={uuid.uuid4()}"
    env = dict(gpuvet.env, **null_env("slow", GPUVET_NULL_SECONDS=60))
    env[marker.split("=")[0]] = marker.split("=")[1]
    p = subprocess.Popen([gpuvet_bin(), "--db", gpuvet.db, "run", "--bench", "objstore,null"],
                         env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    # wait until the first bench is committed and the slow one is running
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        time.sleep(0.2)
        if os.path.exists(gpuvet.db):
            con = sqlite3.connect(gpuvet.db)
            try:
                n = con.execute("SELECT count(*) FROM benches WHERE name='objstore'").fetchone()[0]
            except sqlite3.Error:
                n = 0
            con.close()
            if n:
                break
    time.sleep(0.5)
    tree = _children_with_marker(marker)
    assert p.pid in tree and len(tree) >= 2, tree  # the run and its bench child
    p.send_signal(signal.SIGKILL)
    p.wait()
    # the bench child dies with its parent; until it has exited it holds the run's live lock
    # (a dying process loses its environment before its files, so wait on its pid, not the marker)
    assert wait_exited(tree) == [], "bench process outlived its killed parent"
    assert integrity_ok(gpuvet.db)
    fp = gpuvet.json("results", "show")
    assert fp["run"]["status"] == "incomplete"
    assert [b["name"] for b in fp["benches"]] == ["objstore"]
    listed = gpuvet("results", "list", check=0).stdout
    assert "incomplete" in listed
    # the store still takes new runs
    gpuvet("run", "--bench", "null", check=0, env=null_env("ok"))


def test_sigterm_stops_the_run_and_stores_it_incomplete(gpuvet):
    env = dict(gpuvet.env, **null_env("slow", GPUVET_NULL_SECONDS=60))
    p = subprocess.Popen([gpuvet_bin(), "--db", gpuvet.db, "run", "--bench", "null"], env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert run_started(gpuvet.db)
    time.sleep(0.5)
    p.send_signal(signal.SIGTERM)
    out, err = p.communicate(timeout=15)
    assert p.returncode == 2, (out, err)
    assert "interrupted" in err
    fp = gpuvet.json("results", "show")
    assert fp["run"]["status"] == "incomplete"
    assert bench(fp, "null")["status"] == "failed"
    assert integrity_ok(gpuvet.db)


def test_quiet_in_a_pipe_progress_on_a_terminal(gpuvet):
    p = gpuvet("run", "--bench", "null", check=0, env=null_env("slow", GPUVET_NULL_SECONDS=1))
    assert p.stderr == "", p.stderr
    # a pseudo-terminal through script(1)
    cmd = f"{gpuvet_bin()} --db {gpuvet.db} run --bench null"
    env = dict(gpuvet.env, **null_env("slow", GPUVET_NULL_SECONDS=2))
    t = subprocess.run(["script", "-qec", cmd, "/dev/null"], capture_output=True, text=True, env=env,
                       timeout=60)
    assert t.returncode == 0, t.stdout + t.stderr
    assert "[1/1] null" in t.stdout


def test_not_a_database_is_refused_untouched(gpuvet, tmp_path):
    bad = tmp_path / "notes.db"
    bad.write_bytes(b"these are my notes, not a database\n" * 100)
    before = sha(bad)
    for args in (["run", "--bench", "objstore"], ["results", "list"], ["results", "show"]):
        p = gpuvet("--db", str(bad), *args, db=False, check=2)
        assert p.stderr.count("\n") == 1 and "not a gpuvet database" in p.stderr, p.stderr
    assert sha(bad) == before


def test_foreign_sqlite_database_is_refused_untouched(gpuvet, tmp_path):
    other = tmp_path / "other.db"
    con = sqlite3.connect(other)
    con.execute("CREATE TABLE t(x)")
    con.execute("INSERT INTO t VALUES (1)")
    con.commit()
    con.close()
    before = sha(other)
    p = gpuvet("--db", str(other), "run", "--bench", "objstore", db=False, check=2)
    assert "not a gpuvet database" in p.stderr
    assert sha(other) == before


def test_newer_schema_is_refused(gpuvet):
    gpuvet("run", "--bench", "objstore", check=0)
    con = sqlite3.connect(gpuvet.db)
    con.execute("PRAGMA user_version = 99")
    con.commit()
    con.close()
    p = gpuvet("results", "list", check=2)
    assert "newer than this gpuvet" in p.stderr


def test_truncated_database_is_an_error_not_a_reset(gpuvet):
    for _ in range(3):
        gpuvet("run", "--bench", "null", check=0, env=null_env("ok"))
    con = sqlite3.connect(gpuvet.db)
    con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    con.execute("PRAGMA journal_mode=DELETE")
    con.close()
    size = os.path.getsize(gpuvet.db)
    with open(gpuvet.db, "r+b") as f:
        f.truncate(size // 2)
    before = sha(gpuvet.db)
    p = gpuvet("results", "list")
    assert p.returncode == 2, (p.stdout, p.stderr)
    assert p.stderr.startswith("gpuvet: ") and p.stderr.count("\n") == 1, p.stderr
    assert sha(gpuvet.db) == before


def test_unwritable_database_location(gpuvet, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    p = gpuvet("--db", str(blocker / "sub" / "gpuvet.db"), "run", "--bench", "objstore", db=False, check=2)
    assert p.stderr.startswith("gpuvet: cannot open database") and "not a directory" in p.stderr.lower(), p.stderr
    ro = tmp_path / "ro"
    ro.mkdir()
    p = gpuvet("--db", str(ro / "a" / "b" / "gpuvet.db"), "run", "--bench", "objstore", db=False,
               env={"GPUVET_DB": ""}, check=0)
    assert p.returncode == 0  # intermediate directories are created


def test_default_database_path_follows_xdg(gpuvet):
    p = gpuvet("run", "--bench", "objstore", db=False, check=0)
    assert os.path.exists(os.path.join(gpuvet.env["XDG_DATA_HOME"], "gpuvet", "gpuvet.db")), p.stderr


@pytest.mark.parametrize("args,needle", [
    (["run", "--bogus"], "unknown option"),
    (["run", "--profile", "fast"], "unknown profile 'fast'"),
    (["run", "--soak-seconds", "abc"], "takes a number"),
    (["run", "--soak-seconds", "0"], "takes a number"),
    (["run", "--bench", "gemm,nope"], "unknown bench 'nope'"),
    (["run", "--nvme-allow-destructive"], "needs '--nvme-device DEV'"),
    (["run", "extra"], "unexpected argument"),
    (["frobnicate"], "unknown command 'frobnicate'"),
    (["results", "export", "--format", "xml"], "unknown export format"),
    (["results", "show", "zz"], "no run"),
    (["results"], "usage"),
])
def test_bad_usage_is_one_line_and_exit_2(gpuvet, args, needle):
    p = gpuvet(*args)
    assert p.returncode == 2, (p.stdout, p.stderr)
    if needle != "usage":
        assert p.stderr.count("\n") == 1 and needle in p.stderr, p.stderr


@pytest.mark.parametrize("cmd", ["run", "inventory", "accept", "rank", "cost", "report", "prices", "results"])
def test_every_command_has_help(gpuvet, cmd):
    p = gpuvet(cmd, "--help", check=0)
    assert "usage: gpuvet " + cmd in p.stdout


def test_show_import_roundtrip_and_merge_without_duplicates(gpuvet, tmp_path):
    fp = gpuvet.json("run", "--bench", "null", "--json", env=null_env("ok"))
    path = tmp_path / "fp.json"
    path.write_text(json.dumps(fp))
    other = tmp_path / "other.db"
    p = gpuvet("--db", str(other), "results", "import", str(path), db=False, check=0)
    assert "imported as run 1" in p.stdout
    back = json.loads(gpuvet("--db", str(other), "results", "show", fp["run"]["uuid"][:8],
                             db=False, check=0).stdout)
    for k in ("schema", "inventory", "benches", "metrics", "samples", "flags", "verdicts"):
        assert back[k] == fp[k], k
    # importing again is not a duplicate
    p = gpuvet("--db", str(other), "results", "import", str(path), db=False, check=0)
    assert "already in the store" in p.stdout
    # a second run only in the main store; merge brings exactly that one
    gpuvet("run", "--bench", "null", check=0, env=null_env("ok"))
    p = gpuvet("--db", str(other), "results", "merge", gpuvet.db, db=False, check=0)
    assert "1 run(s) added, 1 already present" in p.stdout
    p = gpuvet("--db", str(other), "results", "merge", gpuvet.db, db=False, check=0)
    assert "0 run(s) added, 2 already present" in p.stdout
    assert len(gpuvet.json("--db", str(other), "results", "list", "--json", db=False)) == 2


@pytest.mark.parametrize("doc,needle", [
    ("{not json", "line 1"),
    ('{"schema": "other/1"}', "not a gpuvet fingerprint"),
    ('{"schema": "gpuvet.fingerprint/1", "run": {"uuid": "x"}}', "run.uuid"),
    ('{"schema": "gpuvet.fingerprint/1", "run": {"uuid": "%s", "started_at": "2026-01-01T00:00:00Z"},'
     ' "metrics": [{"name": "a", "value": "fast"}]}' % uuid.uuid4(), "metrics[0]"),
])
def test_bad_fingerprint_import_changes_nothing(gpuvet, tmp_path, doc, needle):
    gpuvet("run", "--bench", "null", check=0, env=null_env("ok"))
    path = tmp_path / "bad.json"
    path.write_text(doc)
    p = gpuvet("results", "import", str(path), check=2)
    assert needle in p.stderr and p.stderr.count("\n") == 1, p.stderr
    assert len(gpuvet.json("results", "list", "--json")) == 1
    assert integrity_ok(gpuvet.db)


def test_export_csv_is_parseable_and_complete(gpuvet):
    import csv
    import io
    gpuvet("run", "--bench", "null", check=0, env=null_env("ok"))
    out = gpuvet("results", "export", "--format", "csv", check=0).stdout
    rows = list(csv.DictReader(io.StringIO(out)))
    row = next(r for r in rows if r["metric"] == "null.value.count")
    assert float(row["value"]) == 42 and row["gpu"] == "-1" and json.loads(row["params"]) == {"mode": "null"}
    js = json.loads(gpuvet("results", "export", "--format", "json", check=0).stdout)
    assert len(js) == 1 and js[0]["schema"] == "gpuvet.fingerprint/1"


def test_run_writes_the_html_report_of_that_run(gpuvet, tmp_path):
    out = tmp_path / "r.html"
    fp = gpuvet.json("run", "--bench", "null", "--json", "--report", str(out), env=null_env("ok"))
    html = out.read_text()
    assert html.startswith("<!DOCTYPE html>") or html.lower().startswith("<!doctype html>")
    assert "Content-Security-Policy" in html
    assert fp["run"]["uuid"][:8] in html
    # a report that cannot be written is said before anything is measured (issue 28): nothing stored
    p = gpuvet("run", "--bench", "null", "--report", str(tmp_path / "missing" / "r.html"), env=null_env("ok"))
    assert p.returncode == 2 and p.stderr.startswith("gpuvet: run: --report: cannot write"), p.stderr
    assert len(gpuvet.json("results", "list", "--json")) == 1
