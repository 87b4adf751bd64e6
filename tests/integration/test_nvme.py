"""nvme bench with the real fio in temporary directories (quick profile), and
the refusals: unwritable or missing directory, block device without the
allow flag, a mounted device, no fio, a fio that fails or prints garbage; which fio
runs (the one a release tarball carries before the one on PATH) and its record.
Nothing is ever written to a block device here."""
import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from servers.benchrun import run_bench  # noqa: E402
from conftest import gpuvet_bin  # noqa: E402
from helpers import within  # noqa: E402

QUICK_DEADLINE = 104  # nvme_deadline() for the quick profile


def has_fio():
    return any(os.access(os.path.join(d, "fio"), os.X_OK)
               for d in os.environ.get("PATH", "").split(":") if d)


@pytest.mark.skipif(not has_fio(), reason="fio not installed (Debian package fio)")
def test_real_fio_in_temp_dir(gpuvet, tmp_path):
    d = tmp_path / "nvme"
    d.mkdir()
    r = run_bench(gpuvet, "nvme", nvme_dir=d)
    assert r.status == "ok", r
    for m in ("nvme.seqread.gbps", "nvme.seqwrite.gbps", "nvme.randread.kiops",
              "nvme.randread.p50_us", "nvme.randread.p99_us"):
        assert r.metrics[m] > 0, m
    assert r.metrics["nvme.randread.p50_us"] <= r.metrics["nvme.randread.p99_us"]
    p = r.params["nvme.randread.kiops"]
    assert p["fio"].startswith("fio-3")
    assert p["engine"] in ("io_uring", "libaio")
    assert p["bs"] == "4k" and p["direct"] == 1 and p["jobs"] >= 2
    assert r.params["nvme.seqread.gbps"]["bs"] == "1M"
    assert p["dir"] == str(d)
    assert list(d.iterdir()) == []  # fio's work directory is gone
    assert r.seconds < QUICK_DEADLINE


def test_unwritable_dir_fails(gpuvet, tmp_path):
    if os.geteuid() == 0:
        d = Path("/sys")  # root may write anywhere but sysfs refuses new entries
    else:
        d = tmp_path / "ro"
        d.mkdir()
        d.chmod(stat.S_IRUSR | stat.S_IXUSR)
    r = run_bench(gpuvet, "nvme", nvme_dir=d)
    assert r.status == "failed"
    assert r.reason.startswith(f"cannot write to nvme directory '{d}'"), r.reason


def test_missing_and_non_dir_fail(gpuvet, tmp_path):
    r = run_bench(gpuvet, "nvme", nvme_dir=tmp_path / "missing")
    assert r.status == "failed"
    assert "no such file or directory" in r.reason
    f = tmp_path / "file"
    f.write_text("x")
    r = run_bench(gpuvet, "nvme", nvme_dir=f)
    assert r.status == "failed"
    assert "not a directory" in r.reason


def test_device_without_allow_flag_is_refused(gpuvet):
    # refused before any bench runs, exit 2 (#16 item 15); /dev/nvme0n1 may not exist here
    dev = root_block_device()
    if not dev:
        pytest.skip("the root filesystem has no block device node here")
    p = gpuvet("run", "--bench", "nvme", "--nvme-device", dev, check=2)
    assert p.stderr == (f"gpuvet: run: refusing to write to block device {dev} without "
                        "--nvme-allow-destructive (see 'gpuvet run --help')\n")


def test_plain_file_is_not_called_a_block_device(gpuvet, tmp_path):
    f = tmp_path / "disk.img"
    f.write_bytes(b"\0" * 4096)
    for extra in ([], ["--nvme-allow-destructive"]):
        p = gpuvet("run", "--bench", "nvme", "--nvme-device", str(f), *extra, check=2)
        assert p.stderr.startswith(f"gpuvet: run: --nvme-device '{f}' is not a block device"), p.stderr
    assert f.read_bytes() == b"\0" * 4096


def root_block_device():
    """The /dev node of the filesystem mounted at / (from /proc/self/mountinfo)."""
    for line in open("/proc/self/mountinfo"):
        f = line.split()
        if f[4] != "/":
            continue
        majmin = f[2]
        try:
            name = os.path.basename(os.path.realpath(f"/sys/dev/block/{majmin}"))
        except OSError:
            return None
        dev = f"/dev/{name}"
        try:
            st = os.stat(dev)
        except OSError:
            return None
        if stat.S_ISBLK(st.st_mode) and f"{os.major(st.st_rdev)}:{os.minor(st.st_rdev)}" == majmin:
            return dev
    return None


def test_mounted_device_is_refused(gpuvet):
    dev = root_block_device()
    if not dev:
        pytest.skip("the root filesystem has no block device node here")
    p = gpuvet("run", "--bench", "nvme", "--nvme-device", dev, "--nvme-allow-destructive", check=2)
    assert p.stderr == f"gpuvet: refusing to write to block device: '{dev}' is mounted at /\n"
    assert p.stdout == ""


def test_without_fio_skips(gpuvet, tmp_path):
    r = run_bench(gpuvet, "nvme", nvme_dir=tmp_path, env={"PATH": str(tmp_path / "empty")})
    assert r.status == "skipped"
    assert r.reason == "fio not found in PATH, nor carried beside gpuvet (libexec/fio)"


def nvme_config(doc):
    return next(b for b in doc["benches"] if b["name"] == "nvme")["config"]


@pytest.mark.skipif(not os.access("/usr/bin/fio", os.X_OK), reason="fio not at /usr/bin/fio")
def test_the_fio_on_path_is_named_in_the_config(gpuvet, tmp_path):
    d = tmp_path / "d"
    d.mkdir()
    doc = gpuvet.json("run", "--bench", "nvme", "--profile", "quick", "--nvme-dir", d, "--json",
                      env={"PATH": "/usr/bin:/bin"})
    c = nvme_config(doc)
    assert (c["fio"], c["fio_source"]) == ("/usr/bin/fio", "PATH")
    assert c["fio_version"].startswith("fio-3")


@pytest.mark.skipif(not os.access("/usr/bin/fio", os.X_OK), reason="fio not at /usr/bin/fio")
def test_the_carried_fio_comes_before_the_one_on_path(gpuvet, tmp_path):
    # a tree as a release tarball lays it out, in a folder with a space: bin/gpuvet, libexec/fio
    # (a copy of the real fio); on PATH a fio that must not run, and gpuvet started through a link
    tree = tmp_path / "odd place" / "gpuvet-x"
    (tree / "bin").mkdir(parents=True)
    (tree / "libexec").mkdir()
    shutil.copy2(gpuvet_bin(), tree / "bin" / "gpuvet")
    shutil.copy2("/usr/bin/fio", tree / "libexec" / "fio")
    decoy = tmp_path / "decoy"
    decoy.mkdir()
    (decoy / "fio").write_text("#!/bin/sh\necho the fio on PATH ran >&2\nexit 1\n")
    (decoy / "fio").chmod(0o755)
    link = tmp_path / "links" / "gpuvet"
    link.parent.mkdir()
    link.symlink_to(tree / "bin" / "gpuvet")
    d = tmp_path / "d"
    d.mkdir()
    env = dict(gpuvet.env, PATH=f"{decoy}:/usr/bin:/bin")
    p = subprocess.run([str(link), "--db", gpuvet.db, "run", "--bench", "nvme", "--profile", "quick",
                        "--nvme-dir", str(d), "--json"], capture_output=True, text=True, env=env, timeout=300)
    doc = json.loads(p.stdout)
    b = next(b for b in doc["benches"] if b["name"] == "nvme")
    assert b["status"] == "ok", (b, p.stderr[-2000:])
    c = b["config"]
    assert (c["fio"], c["fio_source"]) == (str(tree / "libexec" / "fio"), "carried")
    assert c["fio_version"].startswith("fio-3")
    assert "the fio on PATH ran" not in p.stderr


def fake_fio(tmp_path, script):
    """A stand-in fio that misbehaves on purpose (the real one cannot be made to)."""
    bindir = tmp_path / "bin"
    bindir.mkdir(exist_ok=True)
    f = bindir / "fio"
    f.write_text("#!/bin/sh\n" + script)
    f.chmod(0o755)
    return {"PATH": f"{bindir}:/usr/bin:/bin"}


def test_fio_malformed_json_fails(gpuvet, tmp_path):
    env = fake_fio(tmp_path, 'echo \'{\n  "fio version" : "fio-3.33",\n  "jobs" : [ {\'\n')
    d = tmp_path / "d"
    d.mkdir()
    r = run_bench(gpuvet, "nvme", nvme_dir=d, env=env)
    assert r.status == "failed"
    assert r.reason.startswith("fio seqwrite job failed: malformed fio json output")
    assert list(d.iterdir()) == []


def test_fio_error_message_is_the_reason(gpuvet, tmp_path):
    # what fio 3.33 prints for a job whose file is a directory
    fixture = Path(__file__).resolve().parent.parent / "fixtures" / "fio"
    env = fake_fio(tmp_path, f"cat {fixture}/error_eisdir.json\n"
                             f"cat {fixture}/error_eisdir.stderr >&2\nexit 1\n")
    d = tmp_path / "d"
    d.mkdir()
    r = run_bench(gpuvet, "nvme", nvme_dir=d, env=env)
    assert r.status == "failed"
    assert r.reason == ("fio seqwrite job failed: fio: pid=0, err=21/file:filesetup.c:150, "
                        "func=unlink, error=Is a directory")
    assert list(d.iterdir()) == []


def test_io_uring_refusal_falls_back_to_libaio(gpuvet, tmp_path):
    # a fio whose io_uring is refused (as under a seccomp profile); with libaio
    # it is the real fio
    env = fake_fio(tmp_path, 'case "$*" in *ioengine=io_uring*) '
                             'echo "fio: io_uring_setup: Operation not permitted" >&2; '
                             'echo "fio: failed to load engine" >&2; exit 1;; esac\n'
                             'exec /usr/bin/fio "$@"\n')
    if not os.access("/usr/bin/fio", os.X_OK):
        pytest.skip("fio not at /usr/bin/fio")
    d = tmp_path / "d"
    d.mkdir()
    r = run_bench(gpuvet, "nvme", nvme_dir=d, env=env)
    assert r.status == "ok", r
    assert all(p["engine"] == "libaio" for p in r.params.values())


def test_fio_hang_is_killed(gpuvet, tmp_path):
    pidfile = tmp_path / "fio.pid"
    env = fake_fio(tmp_path, f"echo $$ > {pidfile}\nexec sleep 1000\n")
    d = tmp_path / "d"
    d.mkdir()
    r = run_bench(gpuvet, "nvme", nvme_dir=d, env=env, timeout=QUICK_DEADLINE + 30)
    # the job's own allowance (runtime + 15 s) ends it, long before the bench deadline
    assert r.status in ("failed", "timed_out", "killed")
    assert "did not finish before the deadline" in r.reason
    assert r.seconds < within(30)
    pid = int(pidfile.read_text())
    assert not Path(f"/proc/{pid}").exists()  # killed and reaped, not left running


def has_local_nvme_mount():
    for line in open("/proc/self/mountinfo"):
        majmin = line.split()[2]
        if os.path.realpath(f"/sys/dev/block/{majmin}").find("/nvme") >= 0:
            return True
    return False


@pytest.mark.skipif(not has_fio(), reason="fio not installed (Debian package fio)")
def test_default_dir_falls_back_to_tmpdir(gpuvet, tmp_path):
    if has_local_nvme_mount():
        pytest.skip("this machine has an NVMe mount; the fallback is not taken")
    tmp = tmp_path / "tmpdir"
    tmp.mkdir()
    r = run_bench(gpuvet, "nvme", env={"TMPDIR": str(tmp)})
    assert r.status == "ok", r
    assert r.params["nvme.seqread.gbps"]["dir"] == str(tmp)
    assert list(tmp.iterdir()) == []
