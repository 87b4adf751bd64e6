"""Helpers the integration tests share (one copy each): processes a run leaves, waiting on a store,
a store's integrity, loopback listeners that count or hold connections, the release tarball."""
import hashlib
import json
import os
import re
import sqlite3
import subprocess
import time
import uuid
from pathlib import Path

from conftest import FIXTURES, gpuvet_bin

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


def wait_exited(pids, seconds=5.0):
    """The pids of pids still alive after seconds.  A dying process has no environment (its memory
    goes first) but holds its files and locks until it is a zombie: wait_gone's marker can miss it,
    the pid cannot."""
    def alive(pid):
        try:
            return stat_fields(pid)[0] not in ("Z", "X")
        except (OSError, IndexError):
            return False
    until = time.monotonic() + seconds
    while time.monotonic() < until and any(alive(q) for q in pids):
        time.sleep(0.05)
    return [q for q in pids if alive(q)]


def start_run(gpuvet, args, extra_env):
    marker = str(uuid.uuid4())
    env = dict(gpuvet.env, GPUVET_TEST_MARKER=marker, **extra_env)
    p = subprocess.Popen([gpuvet_bin(), "--db", gpuvet.db, "run", "-q", *args], env=env,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return p, marker


def cmd_seconds():
    """How long the real binary takes to start and exit on this machine, now (the median of three
    `gpuvet --version`): the unit a timing test's bound is drawn in, so a bound holds on a loaded
    2-core machine, under the sanitizers and beside other tests (issue #46), and still fails a
    command that waits for a deadline, a hang or a large read it should not."""
    times = []
    for _ in range(3):
        t0 = time.monotonic()
        subprocess.run([gpuvet_bin(), "--version"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       env=dict(os.environ, GPUVET_NO_METADATA="1"), timeout=120)
        times.append(time.monotonic() - t0)
    return sorted(times)[1]


def within(seconds, starts=20):
    """A wall-time bound: seconds, plus the time of `starts` process starts measured now."""
    return seconds + starts * cmd_seconds()


def wait_for(cond, seconds=30.0):
    until = time.monotonic() + seconds
    while time.monotonic() < until:
        try:
            if cond():
                return True
        except sqlite3.Error:
            pass  # the store exists but its schema is not written yet (a loaded machine is slow there)
        time.sleep(0.05)
    return False


def run_started(db, seconds=60.0):
    """Waits until the store at db holds a run row (a started `gpuvet run` has read its options and
    policy and begun its benches), however slow the machine is now; True if it did."""
    def started():
        if not os.path.exists(db):
            return False
        con = sqlite3.connect(db, timeout=1)
        try:
            return con.execute("SELECT count(*) FROM runs").fetchone()[0] > 0
        finally:
            con.close()
    return wait_for(started, seconds)


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


def sha(path):
    return hashlib.sha256(open(path, "rb").read()).hexdigest()


def make_store(gpuvet, runs=6):
    for _ in range(runs):
        gpuvet("run", "--bench", "null", "-q", check=0, env=NULL)
    con = sqlite3.connect(gpuvet.db)
    con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    con.close()


def fixture_fp(case="clean", **run):
    """A fingerprint of tests/fixtures/flags/CASE.json with a fresh uuid and run fields replaced:
    the one builder of the tests' synthetic fingerprints."""
    fp = json.loads((FIXTURES / "flags" / f"{case}.json").read_text())
    fp["run"]["uuid"] = str(uuid.uuid4())
    fp["run"].update(run)
    return fp


def drop_derived(fp):
    """fp without the percentages gpuvet derives from its rates (issue 57: a file's own that disagrees is
    refused at import): a test that edits a rate edits a measurement, and gpuvet derives the rest."""
    fp["metrics"] = [m for m in fp["metrics"] if ".pct_of_" not in m["name"]]
    return fp


def write_fp(tmp_path, fp, name=None, derived=False):
    """fp as a file to import (name: its uuid); its derived percentages left to gpuvet unless derived."""
    p = tmp_path / (name or f"{fp['run']['uuid']}.json")
    p.write_text(json.dumps(fp if derived else drop_derived(json.loads(json.dumps(fp)))))
    return p


def import_fixture(gpuvet, tmp_path, case="clean", **run):
    fp = fixture_fp(case, **run)
    gpuvet("results", "import", write_fp(tmp_path, fp), check=0)
    return fp


def good_fp():
    return fixture_fp()


# Runs argv[2:] and writes its peak resident memory (KiB) to argv[1].  A small process between: a
# child's ru_maxrss counts the memory of the process that forked it (Linux keeps the old image's
# peak across exec), which for the test process itself may be hundreds of MiB.
_MEASURE = """
import os, subprocess, sys
p = subprocess.Popen(sys.argv[2:])
pid, status, usage = os.wait4(p.pid, 0)
open(sys.argv[1], "w").write(str(usage.ru_maxrss))
sys.exit(os.waitstatus_to_exitcode(status) % 256)
"""


def measured(gpuvet, *args, timeout=300):
    """gpuvet ARGS on its store, with what that one process cost: (returncode, stdout, stderr, peak
    resident memory in bytes, wall seconds)."""
    import sys
    import tempfile
    with tempfile.TemporaryDirectory() as d:
        rss = os.path.join(d, "rss")
        t0 = time.monotonic()
        p = subprocess.run([sys.executable, "-c", _MEASURE, rss, gpuvet_bin(), "--db", gpuvet.db,
                            *map(str, args)], env=gpuvet.env, capture_output=True, text=True, timeout=timeout)
        took = time.monotonic() - t0
        return p.returncode, p.stdout, p.stderr, int(open(rss).read()) * 1024, took


def metric_heavy_fp(extra):
    """The real H100 quick capture (tests/fixtures/gpu/h100-2026-11-22) with EXTRA synthetic metric rows
    (`gemm.synthetic<i>.tflops`, instance level) and a fresh uuid: a run as metric-heavy as a user's
    sweep can make one, for the tests and the benchmark of the per-run passes (issue #47 item 3)."""
    fp = json.loads((FIXTURES / "gpu" / "h100-2026-11-22" / "quick-profile.json").read_text())
    fp["run"]["uuid"] = str(uuid.uuid4())
    fp["metrics"] += [{"bench": "gemm", "name": "gemm.synthetic%d.tflops" % i, "gpu": -1, "value": 50.0 + i % 7,
                       "unit": "TFLOP/s"} for i in range(extra)]
    return fp


CLUSTER_UUIDS = {"reject": "c1a5e7e1-0b5e-4a11-9d3a-5e7e10000001", "accept": "c1a5e7e1-0b5e-4a11-9d3a-5e7e10000002",
                 "big": "c1a5e7e1-0b5e-4a11-9d3a-5e7e10000003"}


def write_cluster(db, kind, cid=None):
    """Stores one made-up cluster run of KIND (reject, accept, big: tests/unit/test_store_cluster.c says what
    each holds; KIND-judged: its findings and verdict made by the analysis, as `gpuvet cluster run` stores
    them) into db through the store's own writer, until `gpuvet cluster run` stores real ones (#49)."""
    test_dir = Path(os.environ.get("GPUVET_TEST_DIR", Path(__file__).resolve().parent.parent / "build" / "tests"))
    cmd = [str(test_dir / "test_store_cluster"), "--write", str(db), kind] + ([cid] if cid else [])
    env = dict(os.environ, GPUVET_NO_METADATA="1")
    env.setdefault("ASAN_OPTIONS", "protect_shadow_gap=0:detect_leaks=1")
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=120, env=env)
    assert p.returncode == 0, (cmd, p.stdout, p.stderr)
    return cid or CLUSTER_UUIDS[kind.replace("-judged", "")]


DTYPES = ("fp32", "tf32", "fp16", "bf16", "fp8")


def gpu_reference(key, metric="gemm.bf16.tflops"):
    """A model's one reference figure as common/gpus.c gives it (gpu_references[]: given_tflops per dtype,
    h2d_gbps, d2h_gbps), read from the source, so a test holds what the reference is, not an old number."""
    import re
    src = (Path(__file__).resolve().parent.parent / "common" / "gpus.c").read_text()
    row = re.search(r'\{ \.key = "%s",(.*?)\.source' % re.escape(key), src[src.index("gpu_references[] = {"):], re.S)
    assert row, key
    if metric.startswith("gemm."):
        given = [float(x) for x in re.search(r"\.given_tflops = \{([^}]*)\}", row.group(1)).group(1).split(",")]
        return given[DTYPES.index(metric.split(".")[1])]
    field = {"memcpy.h2d.pinned.gbps": "h2d_gbps", "memcpy.d2h.pinned.gbps": "d2h_gbps"}[metric]
    return float(re.search(r"\.%s = ([0-9.]+)" % field, row.group(1)).group(1))


def on_terminal(args, env, timeout=60):
    """(exit code, output) of a command run with its stdout, stderr and stdin on a pseudo-terminal, as a
    person at a shell runs it (isatty true): for what a command prints to a terminal and not to a pipe."""
    import pty
    import select
    master, slave = pty.openpty()
    p = subprocess.Popen([str(a) for a in args], stdin=slave, stdout=slave, stderr=slave, env=env, close_fds=True)
    os.close(slave)
    out, until = b"", time.monotonic() + timeout
    while time.monotonic() < until:
        r, _, _ = select.select([master], [], [], 1.0)
        if not r:
            if p.poll() is not None:
                break
            continue
        try:
            chunk = os.read(master, 65536)
        except OSError:      # EIO: the child closed the terminal
            break
        if not chunk:
            break
        out += chunk
    rc = p.wait(timeout=max(1.0, until - time.monotonic()))
    os.close(master)
    return rc, out.decode("utf-8", "replace").replace("\r\n", "\n")


# ---- the release tarball of `make dist` (issue #59: test_dist.py, test_deploy.py) ----

def _dist():
    root = Path(__file__).resolve().parent.parent
    version = re.search(r'#define GPUVET_VERSION "([^"]+)"', (root / "common" / "util.h").read_text()).group(1)
    return root / "build" / "dist", version


def dist_files():
    """(tarball, .deb, {name: sha256}) made by `make dist`, each checked against SHA256SUMS; a test
    fails when they are missing (make test builds them)."""
    import pytest
    dist, version = _dist()
    tarball, deb, sums = dist / f"gpuvet-{version}-linux-x86_64.tar.gz", dist / f"gpuvet_{version}_amd64.deb", \
        dist / "SHA256SUMS"
    for f in (tarball, deb, sums):
        if not f.is_file():
            pytest.fail(f"{f} is missing: run make dist (make test builds it)")
    table = dict(reversed(line.split()) for line in sums.read_text().splitlines())
    for f in (tarball, deb):
        assert table[f.name] == hashlib.sha256(f.read_bytes()).hexdigest(), f"{f.name} does not match SHA256SUMS"
    return tarball, deb, table


def unpack_dist(tarball, into):
    """The tarball unpacked under into (made when absent); returns its one top folder."""
    import tarfile
    into.mkdir(parents=True, exist_ok=True)
    name = tarball.name.removesuffix(".tar.gz")
    with tarfile.open(tarball) as t:
        assert all(m.name == name or m.name.startswith(name + "/") for m in t.getmembers())
        t.extractall(into, filter="tar")
    return into / name


def plain_suite_only():
    """A skip mark for tests of the tarball: it is the plain build's, the sanitizer suite skips them."""
    import pytest
    return pytest.mark.skipif(Path(gpuvet_bin()).parent.name == "build-san",
                              reason="the tarball is the plain build's; the sanitizer suite does not repeat it")
