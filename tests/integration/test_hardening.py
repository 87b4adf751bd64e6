"""Issue #16: nothing left behind, nothing forged, nothing sent where it
should not go.  Each test names the numbered item it covers; each failed on
the main branch of 2026-11-22 (cfb137a)."""
import os
import signal
import sqlite3
import subprocess
import time
import uuid
from pathlib import Path

import pytest

from conftest import gpuvet_bin

NULL = {"GPUVET_TEST_BENCHES": "1"}


def marked_pids(marker):
    """Processes whose environment holds marker (every descendant inherits it)."""
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            with open(f"/proc/{pid}/environ", "rb") as f:
                if marker.encode() in f.read():
                    if stat_fields(pid)[0] != "Z":
                        found.append(int(pid))
        except OSError:
            pass
    return found


def stat_fields(pid):
    """state, ppid, pgrp, session, ... of /proc/PID/stat."""
    return open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()


def wait_gone(marker, seconds=5.0):
    until = time.monotonic() + seconds
    while time.monotonic() < until:
        left = marked_pids(marker)
        if not left:
            return []
        time.sleep(0.05)
    return marked_pids(marker)


def start_run(gpuvet, args, extra_env):
    marker = str(uuid.uuid4())
    env = dict(gpuvet.env, GPUVET_TEST_MARKER=marker, **extra_env)
    p = subprocess.Popen([gpuvet_bin(), "--db", gpuvet.db, "run", "-q", *args], env=env,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return p, marker


def wait_for(cond, seconds=20.0):
    until = time.monotonic() + seconds
    while time.monotonic() < until:
        try:
            if cond():
                return True
        except sqlite3.OperationalError:
            pass  # the store exists but its schema is not written yet (a loaded machine is slow there)
        time.sleep(0.05)
    return False


def tree_env(workdir, **extra):
    env = dict(NULL, GPUVET_NULL_MODE="tree", GPUVET_NULL_WORKDIR=str(workdir))
    env.update({k: str(v) for k, v in extra.items()})
    return env


def has_fio():
    return any(os.access(os.path.join(d, "fio"), os.X_OK)
               for d in os.environ.get("PATH", "").split(":") if d)


def integrity_ok(db):
    con = sqlite3.connect(db)
    try:
        return con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    finally:
        con.close()


# ---- 1. nothing a bench starts outlives a stop or a deadline ----

@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_1_detached_bench_processes_die_with_a_stop(gpuvet, tmp_path, sig):
    p, marker = start_run(gpuvet, ["--bench", "null"], tree_env(tmp_path))
    # gpuvet, the keeper, the bench, its child and the detached grandchild
    assert wait_for(lambda: len(marked_pids(marker)) >= 5), marked_pids(marker)
    p.send_signal(sig)
    assert p.wait(timeout=20) == 2
    assert wait_gone(marker) == []
    assert [x.name for x in tmp_path.iterdir() if x.name.startswith("gpuvet-")] == []


def test_1_detached_bench_processes_die_at_the_deadline(gpuvet, tmp_path):
    p, marker = start_run(gpuvet, ["--bench", "null"], tree_env(tmp_path, GPUVET_NULL_DEADLINE=2))
    assert p.wait(timeout=30) == 0
    assert wait_gone(marker, 1.0) == []  # gone before gpuvet exits, not eventually
    assert [x.name for x in tmp_path.iterdir() if x.name.startswith("gpuvet-")] == []


@pytest.mark.skipif(not has_fio(), reason="fio not installed (Debian package fio)")
def test_1_fio_job_processes_die_with_a_stop(gpuvet, tmp_path):
    d = tmp_path / "nvme"
    d.mkdir()
    p, marker = start_run(gpuvet, ["--bench", "nvme", "--nvme-dir", str(d)], {})

    def fio_jobs():
        n = 0
        for pid in marked_pids(marker):
            try:
                n += open(f"/proc/{pid}/comm").read().strip() == "fio"
            except OSError:
                pass
        return n >= 3  # fio and its job processes (own sessions)
    assert wait_for(fio_jobs, 30)
    p.send_signal(signal.SIGTERM)
    assert p.wait(timeout=20) == 2
    assert wait_gone(marker) == []
    assert list(d.iterdir()) == []


# ---- 2. work files are removed however the bench ends ----

def test_2_kill_9_of_gpuvet_removes_the_work_directory(gpuvet, tmp_path):
    p, marker = start_run(gpuvet, ["--bench", "null"], tree_env(tmp_path))
    assert wait_for(lambda: any(tmp_path.glob("gpuvet-null-*/work.dat")))
    p.kill()
    p.wait(timeout=10)
    assert wait_gone(marker) == []
    assert list(tmp_path.glob("gpuvet-*")) == []


@pytest.mark.skipif(not has_fio(), reason="fio not installed (Debian package fio)")
def test_2_kill_9_during_fio_removes_its_files(gpuvet, tmp_path):
    d = tmp_path / "nvme"
    d.mkdir()
    p, marker = start_run(gpuvet, ["--bench", "nvme", "--nvme-dir", str(d)], {})
    assert wait_for(lambda: any(d.glob("gpuvet-fio-*/*.dat")), 30)
    p.kill()
    p.wait(timeout=10)
    assert wait_gone(marker) == []
    assert list(d.iterdir()) == []


def test_2_kill_9_of_the_bench_process_removes_the_work_directory(gpuvet, tmp_path):
    p, marker = start_run(gpuvet, ["--bench", "null"], tree_env(tmp_path))
    assert wait_for(lambda: any(tmp_path.glob("gpuvet-null-*/work.dat")))
    # the bench is the marked process with a child in a session of its own: kill it alone
    time.sleep(0.2)
    st = {q: stat_fields(q) for q in marked_pids(marker)}
    bench = [q for q, f in st.items() if any(g[1] == str(q) and g[3] != f[3] for g in st.values())]
    assert len(bench) == 1, st
    bench = bench[0]
    os.kill(bench, signal.SIGKILL)
    assert p.wait(timeout=20) == 0
    assert wait_gone(marker) == []
    assert list(tmp_path.glob("gpuvet-*")) == []


def sha(path):
    import hashlib
    return hashlib.sha256(open(path, "rb").read()).hexdigest()


# ---- 5. concurrent first opens of a new store both succeed ----

def test_5_two_runs_on_a_new_store_both_succeed(gpuvet, tmp_path):
    env = dict(gpuvet.env, **NULL)
    fails = []
    for i in range(100):  # main failed about 7 pairs in 100 within 30 ms
        db = str(tmp_path / f"s{i}.db")
        ps = [subprocess.Popen([gpuvet_bin(), "--db", db, "run", "--bench", "null", "-q"], env=env,
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
              for _ in range(2)]
        for p in ps:
            _, err = p.communicate(timeout=60)
            if p.returncode:
                fails.append(err.strip())
        con = sqlite3.connect(db)
        assert con.execute("SELECT count(*) FROM runs WHERE status='complete'").fetchone()[0] == 2 \
            or fails
        con.close()
    assert fails == []


# ---- 10. a corrupt page is detected on open and the store refused ----

def make_store(gpuvet, runs=6):
    for _ in range(runs):
        gpuvet("run", "--bench", "null", "-q", check=0, env=NULL)
    con = sqlite3.connect(gpuvet.db)
    con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    con.close()


@pytest.mark.parametrize("args", [["run", "--bench", "null", "-q"], ["results", "list"],
                                  ["results", "export", "--format", "csv"], ["report", "-o", "r.html"]])
def test_10_a_corrupt_page_is_refused_untouched(gpuvet, tmp_path, args):
    make_store(gpuvet)
    assert os.path.getsize(gpuvet.db) > 20480 + 1024
    with open(gpuvet.db, "r+b") as f:  # what the issue did: 1 KiB over offset 20480
        f.seek(20480)
        f.write(b"\xab" * 1024)
    before = sha(gpuvet.db)
    p = gpuvet(*[str(tmp_path / a) if a == "r.html" else a for a in args], env=NULL)
    assert p.returncode == 2, (p.stdout, p.stderr)
    assert p.stderr.startswith(f"gpuvet: database '{gpuvet.db}' is corrupt ("), p.stderr
    assert p.stderr.count("\n") == 1, p.stderr
    assert sha(gpuvet.db) == before


# ---- 15. a store marked as gpuvet's with user_version 0 ----

def test_15_marked_store_without_version_is_refused_clearly(gpuvet):
    make_store(gpuvet, runs=1)
    con = sqlite3.connect(gpuvet.db)
    con.execute("PRAGMA user_version=0")
    con.commit()
    con.close()
    before = sha(gpuvet.db)
    p = gpuvet("run", "--bench", "null", "-q", env=NULL)
    assert p.returncode == 2
    assert "marked as gpuvet's but has no schema version" in p.stderr, p.stderr
    assert "already exists" not in p.stderr
    assert sha(gpuvet.db) == before


# ---- 3. Prometheus lines cannot be forged through stored names ----

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


def import_fixture(gpuvet, tmp_path, case="clean", **run):
    import json
    fp = json.loads((FIXTURES / "flags" / f"{case}.json").read_text())
    fp["run"].update(uuid=str(uuid.uuid4()), **run)
    p = tmp_path / f"{fp['run']['uuid']}.json"
    p.write_text(json.dumps(fp))
    gpuvet("results", "import", p, check=0)
    return fp


def test_3_prometheus_names_and_help_cannot_forge_series(gpuvet, tmp_path):
    import_fixture(gpuvet, tmp_path, hostname="h1")
    con = sqlite3.connect(gpuvet.db)
    # as a merged store or one written by an older gpuvet may hold them
    evil = 'x.y\ngpuvet_accepted{host="h1",policy="forged"} 1\n# '
    con.execute("UPDATE metrics SET name=? WHERE id=(SELECT min(id) FROM metrics WHERE gpu=-1)", (evil,))
    con.execute("UPDATE metrics SET unit=? WHERE id=(SELECT max(id) FROM metrics WHERE gpu=-1)",
                ('GB/s\ngpuvet_accepted{host="h1",policy="unit"} 1',))
    con.execute("INSERT INTO metrics (run_id, bench, name, gpu, value, unit) VALUES (1, 'x', 'accepted', -1, 1, '')")
    con.execute("INSERT INTO metrics (run_id, bench, name, gpu, value, unit) "
                "VALUES (1, 'x', CAST(X'6e2e6ff02e' AS TEXT), -1, 1, CAST(X'ff0a41' AS TEXT))")
    con.execute("UPDATE runs SET region=CAST(X'75732d0a2dff' AS TEXT)")
    con.commit()
    con.close()
    out = gpuvet("results", "export", "--format", "prometheus", check=0).stdout
    import re
    series = "\n".join(l for l in out.splitlines() if not l.startswith("#"))
    assert 'policy="forged"' not in series and 'policy="unit"' not in series
    for line in out.splitlines():
        assert not line.startswith("gpuvet_accepted"), line
        if not line.startswith("#"):
            assert re.fullmatch(r'gpuvet_[a-z0-9_]*\{(?:[a-z_]+="(?:[^"\\\n]|\\.)*",?)*\} \S+', line), line
        else:
            assert line.startswith(("# HELP gpuvet_", "# TYPE gpuvet_")), line
    out.encode("utf-8")  # valid UTF-8 throughout (an invalid byte became U+FFFD)
    import shutil
    if shutil.which("promtool"):
        p = subprocess.run(["promtool", "check", "metrics"], input=out, capture_output=True, text=True,
                           timeout=60)
        assert p.returncode == 0, p.stdout + p.stderr


# ---- 4. CSV cells are never formulas ----

def test_4_csv_formula_cells_are_neutralised(gpuvet, tmp_path):
    import csv
    import io
    import json
    # names the catalog does not know are stored as custom machines (judge/identity.h) ...
    gpuvet("run", "--bench", "null", "-q", "--custom", "--provider", "x", "--sku", "=cmd|' /C calc'!A0",
           "--region", "+SUM(1)", env=NULL, check=0)
    fp = json.loads((FIXTURES / "flags" / "clean.json").read_text())
    fp["run"].update(uuid=str(uuid.uuid4()), instance_type='=HYPERLINK("http://x","y")', region="-1+1")
    (tmp_path / "fx.json").write_text(json.dumps(fp))
    gpuvet("results", "import", tmp_path / "fx.json", "--custom", check=0)
    # ... and a provider as a merged store from an older gpuvet may hold it
    con = sqlite3.connect(gpuvet.db)
    con.execute("UPDATE runs SET provider = '@SUM(1)' WHERE region = '+SUM(1)'")
    con.execute("UPDATE runs SET provider = '-x' WHERE region = '-1+1'")
    con.commit()
    con.close()
    out = gpuvet("results", "export", "--format", "csv", check=0).stdout
    rows = list(csv.DictReader(io.StringIO(out)))
    assert rows
    seen = set()
    for r in rows:
        for k in ("provider", "instance_type", "region", "metric", "unit", "params", "bench"):
            v = r[k]
            assert not v or v[0] not in "=+-@\t\r", (k, v)
        seen |= {r["instance_type"], r["region"], r["provider"]}
    assert {"'=cmd|' /C calc'!A0", "'+SUM(1)", "'@SUM(1)", "'=HYPERLINK(\"http://x\",\"y\")", "'-1+1"} <= seen
    assert any(r["gpu"] == "-1" for r in rows)  # numbers stay numbers


# ---- 6. run, inventory and import accept the same identities ----

@pytest.mark.parametrize("bad,why", [("red\x1b[31m", "holds a control character"),
                                     (b"p5\xff".decode("latin-1"), None),
                                     ("x" * 257, "is longer than 256 bytes"),
                                     ("a\u202eb", "holds a bidirectional override")])
def test_6_run_and_inventory_refuse_the_same_identities(gpuvet, tmp_path, bad, why):
    if why is None:  # invalid UTF-8 on the command line
        arg = b"p5\xff"
        why = "is not valid utf-8"
    else:
        arg = bad.encode()
    for cmd in (["run", "--bench", "null"], ["inventory"]):
        p = subprocess.run([gpuvet_bin().encode(), b"--db", gpuvet.db.encode(),
                            *[c.encode() for c in cmd], b"--sku", arg], env=dict(gpuvet.env, **NULL),
                           capture_output=True, timeout=60)
        err = p.stderr.decode("utf-8")  # the message itself is valid UTF-8 ...
        assert p.returncode == 2, (cmd, err)
        assert why in err, err
        assert "\x1b" not in err and err.count("\n") == 1, err  # ... and escaped
    assert not os.path.exists(gpuvet.db) or sqlite3.connect(gpuvet.db).execute(
        "SELECT count(*) FROM runs").fetchone()[0] == 0


def test_6_stored_escapes_are_printed_escaped(gpuvet):
    gpuvet("run", "--bench", "null", "-q", "--custom", "--sku", "p5.48xlarge", env=NULL, check=0)
    con = sqlite3.connect(gpuvet.db)
    con.execute("UPDATE runs SET instance_type=?, provider=?", ("\x1b]0;pwned\x07x", "a\x1b[2Jb"))
    con.commit()
    con.close()
    for args in (["results", "list"], ["results", "show", "--text"]):
        out = gpuvet(*args, check=0).stdout
        assert "\x1b" not in out and "\x07" not in out, out
        assert "\\e]0;pwned\\x07x" in out, out


# ---- 12. imports follow the fingerprint schema ----

def good_fp():
    import json
    fp = json.loads((FIXTURES / "flags" / "clean.json").read_text())
    fp["run"]["uuid"] = str(uuid.uuid4())
    return fp


@pytest.mark.parametrize("change,needle", [
    (lambda fp: fp["run"].update(status="pwned"), "run.status"),
    (lambda fp: fp.update(benches="notalist"), "benches is not a list"),
    (lambda fp: fp.update(metrics={"a": 1}), "metrics is not a list"),
    (lambda fp: fp["run"].update(started_at="yesterday"), "run.started_at"),
    (lambda fp: fp["run"].update(started_at="2026-02-30T00:00:00Z"), "run.started_at"),
    (lambda fp: fp["run"].update(started_at="2025-02-29T00:00:00Z"), "run.started_at"),     # not a leap year
    (lambda fp: fp["run"].update(finished_at="2026-11-21T03:59:59Z"), "run.finished_at is before run.started_at"),
    (lambda fp: fp["run"].update(uuid="00000000-0000-0000-0000-000000000000"), "run.uuid"),
    (lambda fp: fp["run"].update(uuid="cafbf7a51c2d4e5f8a9b0c1d2e3f4a5b0000"), "run.uuid"),
    (lambda fp: fp["run"].update(finished_at="tomorrow"), "run.finished_at"),
    (lambda fp: fp["run"].update(gpu_count=-5), "run.gpu_count"),
    (lambda fp: fp["run"].update(gpu_count=1.5), "run.gpu_count"),
    (lambda fp: fp["inventory"]["gpus"][0].update(index=10 ** 12), "inventory.gpus[0].index"),
    (lambda fp: fp["metrics"][0].update(gpu=10 ** 12), "metrics[0].gpu"),
    (lambda fp: fp["run"].update(instance_type="p5\x1b[2J"), "run.instance_type"),
    (lambda fp: fp["run"].update(provider="x" * 300), "run.provider"),
    (lambda fp: fp["metrics"][0].update(name="a\nb"), "metrics[0].name"),
    (lambda fp: fp["flags"].append({"code": "X\x07", "severity": "info"}), "flags[0].code"),
])
def test_12_imports_are_checked_against_the_schema(gpuvet, tmp_path, change, needle):
    import json
    gpuvet("run", "--bench", "null", "-q", env=NULL, check=0)
    before = sha(gpuvet.db)
    fp = good_fp()
    assert fp["inventory"]["gpus"] and fp["metrics"] and not fp["flags"]
    change(fp)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(fp))
    p = gpuvet("results", "import", str(path))
    assert p.returncode == 2, (p.stdout, p.stderr)
    assert needle in p.stderr and p.stderr.count("\n") == 1, p.stderr
    assert "\x1b" not in p.stderr and "\x07" not in p.stderr
    assert len(gpuvet.json("results", "list", "--json")) == 1
    del before  # the store may be checkpointed; what counts is that nothing was added


def test_12_a_good_import_still_passes(gpuvet, tmp_path):
    import json
    fp = good_fp()
    fp["run"]["status"] = "running"  # a snapshot of a live run: stored as incomplete
    path = tmp_path / "ok.json"
    path.write_text(json.dumps(fp))
    gpuvet("results", "import", str(path), check=0)
    assert gpuvet.json("results", "list", "--json")[0]["status"] == "incomplete"


# ---- 11. a live run is not merged half-made, and lists apart from a killed one ----

def test_11_live_run_is_left_for_a_later_merge(gpuvet, tmp_path):
    src = tmp_path / "src.db"
    env = dict(gpuvet.env, GPUVET_TEST_BENCHES="1", GPUVET_NULL_MODE="slow", GPUVET_NULL_SECONDS="3")
    p = subprocess.Popen([gpuvet_bin(), "--db", str(src), "run", "--bench", "null", "-q"], env=env,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    assert wait_for(lambda: src.exists() and sqlite3.connect(src).execute(
        "SELECT count(*) FROM runs").fetchone()[0] == 1)
    live = gpuvet.json("--db", str(src), "results", "list", "--json", db=False)
    assert [r["status"] for r in live] == ["running"]
    out = gpuvet("results", "merge", str(src), check=0).stdout
    assert "0 run(s) added, 0 already present, 1 still running" in out, out
    assert gpuvet.json("results", "list", "--json") == []
    assert p.wait(timeout=60) == 0
    out = gpuvet("results", "merge", str(src), check=0).stdout
    runs = gpuvet.json("results", "list", "--json")
    assert len(runs) == 1, out
    assert runs[0]["status"] == "complete" and runs[0]["benches"] == 1, runs
    assert runs[0]["uuid"] == live[0]["uuid"]


def test_11_killed_run_lists_as_incomplete_not_running(gpuvet, tmp_path):
    env = dict(gpuvet.env, GPUVET_TEST_BENCHES="1", GPUVET_NULL_MODE="hang")
    p = subprocess.Popen([gpuvet_bin(), "--db", gpuvet.db, "run", "--bench", "null", "-q"], env=env,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    assert wait_for(lambda: os.path.exists(gpuvet.db) and sqlite3.connect(gpuvet.db).execute(
        "SELECT count(*) FROM runs").fetchone()[0] == 1)
    assert [r["status"] for r in gpuvet.json("results", "list", "--json")] == ["running"]
    p.kill()
    p.wait(timeout=10)
    # the bench's keeper shares the lock's file description until it has cleaned up (milliseconds)
    assert wait_for(lambda: [r["status"] for r in gpuvet.json("results", "list", "--json")] == ["incomplete"], 5)


def test_11_an_incomplete_copy_is_replaced_by_the_complete_run(gpuvet, tmp_path):
    import json
    fp = good_fp()
    fp["run"]["status"] = "incomplete"
    full = json.loads(json.dumps(fp))
    fp["benches"], fp["metrics"] = [], []
    full["run"]["status"] = "complete"
    (tmp_path / "a.json").write_text(json.dumps(fp))
    (tmp_path / "b.json").write_text(json.dumps(full))
    gpuvet("results", "import", str(tmp_path / "a.json"), check=0)
    gpuvet("results", "import", str(tmp_path / "b.json"), check=0)
    runs = gpuvet.json("results", "list", "--json")
    assert len(runs) == 1 and runs[0]["status"] == "complete" and runs[0]["benches"] > 0, runs


# ---- 8. price import and the Lambda fetcher refuse nonsense ----

PRICE_HDR = "provider,instance_type,region,market,price,unit,currency,captured_at,gpu_model,gpu_count\n"


def price_rows(gpuvet):
    import json
    return json.loads(gpuvet("prices", "list", "--records", "--json", check=0).stdout)


@pytest.mark.parametrize("row,what", [
    (b"aws,p9.x,us-east-1,on_demand,0,hour,USD,2026-10-01,H100-SXM,8\n", "price 0 is not a positive number"),
    (b"aws,p9.x,us-east-1,on_demand,-2,hour,USD,2026-10-01,H100-SXM,8\n", "negative"),
    (b"aws,p9.x,us-east-1,on_demand,1e308,hour,USD,2026-10-01,H100-SXM,8\n", "not believable"),
    (b"aws,p9.x,us-east-1,on_demand,1e9,month,USD,2026-10-01,H100-SXM,8\n", "not believable"),
    (b"aws,p9.x,us-east-1,on_demand,inf,hour,USD,2026-10-01,H100-SXM,8\n", "price 'inf'"),
    (b"aws,p9.x,us-east-1,on_demand,nan,hour,USD,2026-10-01,H100-SXM,8\n", "price 'nan'"),
    (b"aws,p9.x,us-east-1,on_demand,0x10,hour,USD,2026-10-01,H100-SXM,8\n", "price '0x10' is not a decimal"),
    (b"aws,p9.x,us-east-1,on_demand,3,hour,USD,2026-10-01,H100-SXM,0\n", "gpu_count 0 is not from 1 to 64"),
    (b"aws,p9.x,us-east-1,on_demand,3,hour,USD,2026-10-01,H100-SXM,1e300\n", "gpu_count 1e+300 is not"),
    (b"aws,p9.x,us-east-1,on_demand,3,hour,USD,2026-10-01,H100-SXM,65\n", "gpu_count 65 is not"),
    (b"aws,p9.x,us-east-1,on_demand,3,hour,USD,2026-10-01,H100-SXM,0x8\n", "gpu_count '0x8' is not a decimal"),
    (b"aws,p9\xff.x,us-east-1,on_demand,3,hour,USD,2026-10-01,H100-SXM,8\n", "not valid utf-8"),
    (b"aws,p9.x,us-\xc0\xafeast,on_demand,3,hour,USD,2026-10-01,H100-SXM,8\n", "not valid utf-8"),
])
def test_8_price_import_refuses_nonsense(gpuvet, tmp_path, row, what):
    before = price_rows(gpuvet)
    f = tmp_path / "deal.csv"
    f.write_bytes(PRICE_HDR.encode() + row)
    p = gpuvet("prices", "import", f)
    assert p.returncode == 2, (p.stdout, p.stderr)
    assert what in p.stderr and p.stderr.count("\n") == 1, p.stderr
    assert price_rows(gpuvet) == before


def test_8_price_import_strips_a_byte_order_mark(gpuvet, tmp_path):
    f = tmp_path / "deal.csv"
    f.write_bytes(b"\xef\xbb\xbf" + PRICE_HDR.encode() +
                  b"aws,p9.bom,us-east-1,on_demand,3.5,hour,USD,2026-10-01,H100-SXM,8\n")
    gpuvet("prices", "import", f, check=0)
    rows = [r for r in price_rows(gpuvet) if r["instance_type"] == "p9.bom"]
    assert len(rows) == 1 and rows[0]["price"] == 3.5 and rows[0]["gpu_count"] == 8


@pytest.mark.parametrize("cents,gpus,what", [(0, 1, "price 0 is not a positive number"),
                                             (1e300, 1, "not believable"),
                                             (75, 1e300, "gpu_count 1e+300 is not")])
def test_8_lambda_fetcher_refuses_nonsense(gpuvet, cents, gpus, what):
    import http.server
    import json
    import threading
    doc = json.loads((FIXTURES / "pricing" / "lambda-instance-types.json").read_text())
    first = next(iter(doc["data"].values()))["instance_type"]
    first["price_cents_per_hour"] = cents
    first["specs"]["gpus"] = gpus
    body = json.dumps(doc).encode()

    class H(http.server.BaseHTTPRequestHandler):
        def log_message(self, *a):
            pass

        def do_GET(self):
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        before = price_rows(gpuvet)
        p = gpuvet("prices", "update", "--provider", "lambda",
                   env={"GPUVET_LAMBDA_API_URL": f"http://127.0.0.1:{srv.server_address[1]}/x",
                        "LAMBDA_API_KEY": "k"})
        assert p.returncode != 0, (p.stdout, p.stderr)
        assert what in p.stdout + p.stderr, (p.stdout, p.stderr)
        assert [r for r in price_rows(gpuvet) if r["source"] == "lambda-api"] == \
            [r for r in before if r["source"] == "lambda-api"]
    finally:
        srv.shutdown()


# ---- 9. policy files: bounded, checked early, strict ----

def test_9_policy_read_is_bounded(gpuvet):
    gpuvet("run", "--bench", "null", "-q", env=NULL, check=0)
    p = gpuvet("accept", "--policy", "/dev/zero", timeout=20)  # main read 5.5 GB in 8 s
    assert p.returncode == 2     # a device is no policy file
    assert "not a regular file" in p.stderr and p.stderr.count("\n") == 1, p.stderr


def test_9_a_huge_policy_file_is_bounded(gpuvet, tmp_path):
    gpuvet("run", "--bench", "null", "-q", env=NULL, check=0)
    big = tmp_path / "big.yaml"
    with open(big, "wb") as f:
        f.write(b"# " + b"x" * (2 << 20) + b"\n")
    p = gpuvet("accept", "--policy", big, timeout=20)
    assert p.returncode == 2
    assert "policy larger than 1048576 bytes" in p.stderr and p.stderr.count("\n") == 1, p.stderr


def test_9_missing_policy_is_said_before_any_bench_runs(gpuvet, tmp_path):
    p = gpuvet("run", "--bench", "null", "--accept", str(tmp_path / "missing.yaml"),
               env=dict(NULL, GPUVET_NULL_MODE="slow", GPUVET_NULL_SECONDS="5"), timeout=60)
    assert p.returncode == 2
    assert p.stderr == f"gpuvet: cannot read policy '{tmp_path / 'missing.yaml'}': no such file or directory\n"
    assert not os.path.exists(gpuvet.db) or sqlite3.connect(gpuvet.db).execute(
        "SELECT count(*) FROM benches").fetchone()[0] == 0


@pytest.mark.parametrize("text,what", [
    ("rules:\n  - metric: null.value.count\n    min: 1\n    min: 50\n", "line 4: 'min' given twice"),
    ("name: a\nname: b\nrules:\n  - metric: null.value.count\n    min: 1\n", "line 2: 'name' given twice"),
    ("reject_flags: [XID]\nreject_flags: [VGPU]\n", "'reject_flags' given twice"),
    ('name: "a\\e[2Jb"\nrules:\n  - metric: null.value.count\n    min: 1\n', "'name' holds a control character"),
    ('rules:\n  - metric: null.value.count\n    "\\e[31mx": 1\n', "unknown rule key '\\e[31mx'"),
    ("rules: " + "[" * 100000 + "]" * 100000 + "\n", "line 1: nested deeper than 32 levels"),
])
def test_9_policy_is_strict(gpuvet, tmp_path, text, what):
    gpuvet("run", "--bench", "null", "-q", env=NULL, check=0)
    f = tmp_path / "p.yaml"
    f.write_text(text)
    p = gpuvet("accept", "--policy", str(f), timeout=10)  # main took 53 s on the deep list
    assert p.returncode == 2, (p.stdout, p.stderr)
    assert what in p.stderr and p.stderr.count("\n") == 1, p.stderr
    assert "\x1b" not in p.stderr


# ---- 13. DMI first: only the cloud DMI names is asked ----

class Listener:
    """A loopback socket that counts the connections made to it (and answers none)."""

    def __init__(self):
        import socket
        import threading
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.sock.settimeout(0.1)
        self.conns = 0
        self.stop = False
        self.url = "http://127.0.0.1:%d" % self.sock.getsockname()[1]
        self.t = threading.Thread(target=self.run, daemon=True)
        self.t.start()

    def run(self):
        while not self.stop:
            try:
                c, _ = self.sock.accept()
                self.conns += 1
                c.close()
            except OSError:
                pass

    def close(self):
        self.stop = True
        self.t.join()
        self.sock.close()


def dmi_root(tmp_path, vendor, product, bios="", board=None):
    d = tmp_path / "root" / "sys" / "class" / "dmi" / "id"
    d.mkdir(parents=True)
    (d / "sys_vendor").write_text(vendor + "\n")
    (d / "product_name").write_text(product + "\n")
    (d / "bios_vendor").write_text(bios + "\n")
    (d / "board_vendor").write_text((vendor if board is None else board) + "\n")
    return tmp_path / "root"


@pytest.mark.parametrize("vendor,product,bios,aws_asked,ali_asked,provider", [
    ("Dell Inc.", "XPS 13 9310", "Dell Inc.", False, False, "unknown"),
    ("QEMU", "Standard PC (Q35 + ICH9, 2009)", "SeaBIOS", False, False, "unknown"),
    ("Google", "Google Compute Engine", "Google", False, False, "unknown"),
    ("Amazon EC2", "p5.48xlarge", "Amazon EC2", True, False, "aws"),
    ("Alibaba Cloud", "Alibaba Cloud ECS", "SeaBIOS", False, True, "alibaba"),
])
def test_13_only_the_cloud_dmi_names_is_asked(gpuvet, tmp_path, vendor, product, bios, aws_asked,
                                              ali_asked, provider):
    aws, ali = Listener(), Listener()
    try:
        root = dmi_root(tmp_path, vendor, product, bios)
        env = {"GPUVET_NO_METADATA": "", "GPUVET_IMDS_AWS": aws.url, "GPUVET_IMDS_ALIBABA": ali.url,
               "GPUVET_SYSROOT": str(root)}
        for cmd in (["inventory", "--json"], ["run", "--bench", "null", "--json"]):
            import json
            out = json.loads(gpuvet(*cmd, env=dict(env, **NULL), check=0).stdout)
            cloud = out["cloud"] if "cloud" in out else out["inventory"]["cloud"]
            assert cloud["provider"] == provider, cloud
            assert cloud["source"] == ("none" if provider == "unknown" else "heuristic"), cloud
        time.sleep(0.3)
        assert (aws.conns > 0) == aws_asked, (aws.conns, ali.conns)
        assert (ali.conns > 0) == ali_asked, (aws.conns, ali.conns)
    finally:
        aws.close()
        ali.close()


def test_13_unreadable_dmi_asks_both(gpuvet, tmp_path):
    aws, ali = Listener(), Listener()
    try:
        root = tmp_path / "root"
        root.mkdir()
        env = {"GPUVET_NO_METADATA": "", "GPUVET_IMDS_AWS": aws.url, "GPUVET_IMDS_ALIBABA": ali.url,
               "GPUVET_SYSROOT": str(root)}
        gpuvet("inventory", "--json", env=env, check=0)
        time.sleep(0.3)
        assert aws.conns > 0 and ali.conns > 0
    finally:
        aws.close()
        ali.close()


# ---- 7. a stalled object store: a clear reason, errors counted ----

class Holder(Listener):
    """Accepts connections and never answers (keeps them open)."""

    def run(self):
        self.held = []
        while not self.stop:
            try:
                c, _ = self.sock.accept()
                self.conns += 1
                self.held.append(c)
            except OSError:
                pass
        for c in self.held:
            c.close()


def objstore_run(gpuvet, *args, env=None):
    import json
    p = gpuvet("run", "--bench", "objstore", "--profile", "quick", "--json", *args, env=env,
               timeout=180)
    fp = json.loads(p.stdout)
    b = next(x for x in fp["benches"] if x["name"] == "objstore")
    m = {x["name"]: x for x in fp["metrics"] if x.get("bench", "objstore") == "objstore"}
    return b, m


@pytest.mark.parametrize("scheme", ["http", "s3"])
def test_7_stalled_object_store_has_a_reason_and_errors(gpuvet, scheme):
    h = Holder()
    try:
        if scheme == "http":
            args = ["--objstore-url", h.url + "/obj"]
            env = None
        else:
            args = ["--objstore-url", "s3://bucket/obj", "--objstore-endpoint", h.url]
            env = {"AWS_ACCESS_KEY_ID": "AKIAEXAMPLE", "AWS_SECRET_ACCESS_KEY": "s", "AWS_REGION": "us-east-1",
                   "AWS_SHARED_CREDENTIALS_FILE": "/nonexistent", "AWS_CONFIG_FILE": "/nonexistent"}
        t0 = time.monotonic()
        b, m = objstore_run(gpuvet, *args, env=env)
        assert time.monotonic() - t0 < 61 + 10
        assert h.conns >= 1
        assert b["status"] == "failed"
        assert b["reason"] and ("no answer" in b["reason"] or "too slow" in b["reason"]), b["reason"]
        assert m["objstore.errors"]["value"] >= 1, m["objstore.errors"]
    finally:
        h.close()


# ---- 14. a server that ignores Range is measured with whole-object GETs ----

def test_14_server_ignoring_range_is_measured_whole(gpuvet, tmp_path):
    import functools
    import http.server
    import threading
    (tmp_path / "obj.bin").write_bytes(os.urandom(4 << 20))
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(tmp_path))
    handler.log_message = lambda *a: None
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{srv.server_address[1]}/obj.bin"
        b, m = objstore_run(gpuvet, "--objstore-url", url, "--objstore-concurrency", "4")
        assert b["status"] == "ok", b
        g = m["objstore.get.gbps"]
        assert g["value"] > 0
        assert g["params"]["get_mode"] == "whole-object"
        assert g["params"]["range_bytes"] == 4 << 20
        assert "whole-object" in b["config"]["get_mode"], b["config"]
        assert m["objstore.errors"]["value"] == 0
    finally:
        srv.shutdown()


# ---- 15. the smaller ones ----

def test_15_report_stopped_by_sigterm_leaves_no_tmp(gpuvet, tmp_path):
    import sys
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
    import json
    import synth_fingerprints
    fps = synth_fingerprints.make_runs(20, soak_seconds=1200)
    f = tmp_path / "runs.json"
    f.write_text(json.dumps(fps))
    gpuvet("results", "import", str(f), check=0, timeout=300)
    out = tmp_path / "out"
    out.mkdir()
    stopped = 0
    for _ in range(5):
        p = subprocess.Popen([gpuvet_bin(), "--db", gpuvet.db, "report", "-o", str(out / "r.html")],
                             env=gpuvet.env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if wait_for(lambda: any(out.glob("r.html.tmp.*")) or p.poll() is not None, 30) and \
                p.poll() is None:
            p.send_signal(signal.SIGTERM)
            stopped += p.wait(timeout=30) == -signal.SIGTERM
        else:
            p.wait(timeout=60)
        assert list(out.glob("*.tmp*")) == []
        if stopped:
            break
    assert stopped, "the report always finished before the signal: the test did not test"


def test_15_missing_exchange_rate_is_said_once(gpuvet):
    """A price whose currency has no stored rate: its type is listed once with why, not per price row."""
    import sqlite3
    h100 = FIXTURES / "gpu" / "h100-2026-11-22" / "quick-profile.json"
    # a machine the catalog does not know, with its negotiated price in CNY (provider custom:NAME)
    gpuvet("results", "import", h100, "--custom", "--provider", "deal", "--sku", "ecs.gn7i-c8g1.2xlarge", check=0)
    (Path(gpuvet.db).parent / "deal.csv").write_text(
        "provider,instance_type,region,gpu_model,gpu_count,market,price,unit,currency,captured_at\n"
        "custom:deal,ecs.gn7i-c8g1.2xlarge,,H100-SXM,1,on_demand,40,hour,CNY,2026-11-01\n")
    gpuvet("prices", "import", Path(gpuvet.db).parent / "deal.csv", check=0)
    gpuvet("prices", "fx", check=0)  # the shipped catalogs and rate, loaded
    db = sqlite3.connect(gpuvet.db)
    db.execute("DELETE FROM fx_rates WHERE currency = 'CNY'")  # the shipped rate, gone
    db.commit()
    db.close()
    p = gpuvet("-v", "rank", check=0)
    assert p.stdout.count("no CNY rate stored") == 1, p.stdout
    assert "ecs.gn7i-c8g1.2xlarge" in p.stdout


# ---- the hunt as a habit: kill -9 at random points, 100 times ----

def test_crash_loop_kill_9_at_random_points(gpuvet, tmp_path):
    import random
    rng = random.Random(16)
    work = tmp_path / "work"
    work.mkdir()
    complete_before = 0
    modes = ["ok", "tree", "slow", "ok"]
    t_start = time.monotonic()
    for i in range(100):
        mode = modes[i % len(modes)]
        marker = str(uuid.uuid4())
        env = dict(gpuvet.env, GPUVET_TEST_BENCHES="1", GPUVET_NULL_MODE=mode, GPUVET_NULL_SECONDS="1",
                   GPUVET_NULL_WORKDIR=str(work), GPUVET_TEST_MARKER=marker)
        p = subprocess.Popen([gpuvet_bin(), "--db", gpuvet.db, "run", "-q", "--bench", "null,objstore"], env=env,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(rng.uniform(0.0, 0.35))
        p.kill()
        p.wait(timeout=10)
        left = wait_gone(marker, 3.0)
        assert left == [], (i, mode, left)
        assert list(work.iterdir()) == [], (i, mode)
        if os.path.exists(gpuvet.db):
            con = sqlite3.connect(gpuvet.db)
            try:
                assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok", i
                n = con.execute("SELECT count(*) FROM runs WHERE status='complete'").fetchone()[0]
            finally:
                con.close()
            assert n >= complete_before, (i, n, complete_before)  # no committed run is lost
            complete_before = n
    assert complete_before > 0  # some runs finished between the kills: the kills hit all phases
    assert time.monotonic() - t_start < 180
