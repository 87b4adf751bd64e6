"""`make dist` (issue #59): the relocatable tarball, its SHA256SUMS and the .deb, run on a bare
system.  The bare system is a minimal Debian root (mmdebstrap --variant=minbase of this machine's
release, from the mirror its apt uses; cached, packaging/bare_root.sh) with no -dev package and
no fio, unpacked afresh for each test and entered with chroot inside a mount namespace of its own
(/proc, /dev, /dev/shm and a read-only /sys mounted there, unmounted at the end, and gone with the
namespace whatever happens).  There, from a folder with a space in its name, the tarball's gpuvet
runs the quick profile (every bench that needs no GPU: nvme through the fio it carries, host, and
objstore against nginx on loopback), and accept, report, prices, rank and cost answer; the .deb
installs with dpkg -i and does the same; ldd in the root resolves every library of bin/gpuvet
and libexec/fio inside the tree or the C runtime.  The check `make dist` itself runs
(packaging/closure.py) is shown to fail on a tree that lacks a library, and the fetch of fio's
source to refuse, with a clear error, a mirror that cannot be reached or hands over anything but
the pinned source (a Debian mirror on loopback).

The tarball is the plain build's: under the sanitizer suite (build-san) these tests are skipped.
Root only (chroot, mounts, mmdebstrap): skipped with that reason otherwise.
"""
import http.server
import importlib.util
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from conftest import ROOT
from helpers import dist_files, plain_suite_only, unpack_dist

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from servers import loopback  # noqa: E402

VERSION = re.search(r'#define GPUVET_VERSION "([^"]+)"', (ROOT / "common" / "util.h").read_text()).group(1)
NAME = f"gpuvet-{VERSION}-linux-x86_64"
ODD = "opt/gpu vet tools"      # where the tarball is unpacked in the root: a space in the path

_spec = importlib.util.spec_from_file_location("closure", ROOT / "packaging" / "closure.py")
closure = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(closure)     # one list of what the C runtime is: closure.C_RUNTIME

pytestmark = plain_suite_only()
needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="chroot, mounts and mmdebstrap need root")


@pytest.fixture(scope="module")
def dist():
    """The tarball and the .deb make dist made, checked against SHA256SUMS."""
    return dist_files()[:2]


unpack = unpack_dist


PACKAGING_SCRIPTS = sorted((ROOT / "packaging").glob("*.sh"))


@pytest.mark.skipif(shutil.which("shellcheck") is None, reason="shellcheck not installed")
@pytest.mark.parametrize("script", PACKAGING_SCRIPTS, ids=[s.name for s in PACKAGING_SCRIPTS])
def test_packaging_scripts_pass_shellcheck(script):
    p = subprocess.run(["shellcheck", "-x", "-s", "sh", str(script)], capture_output=True, text=True,
                       cwd=ROOT)
    assert p.returncode == 0, p.stdout


def test_the_tarball_is_small_and_says_it_is_a_release(dist, tmp_path):
    tarball, _ = dist
    size = tarball.stat().st_size
    assert size < 30 * 1024 * 1024, f"{size / 2**20:.1f} MiB: the target is under 30 MB"
    tree = unpack(tarball, tmp_path / "u")
    p = subprocess.run([str(tree / "bin" / "gpuvet"), "--version"], capture_output=True, text=True, env={})
    assert re.fullmatch(rf"gpuvet {re.escape(VERSION)} \(commit \S+, built \S+Z, release tarball\)\n", p.stdout), p.stdout
    for f in ("libexec/fio", "share/man/man1/gpuvet.1", "share/doc/gpuvet/README.md", "share/doc/gpuvet/BUILD",
              "share/doc/gpuvet/docs/fingerprint.md", "share/gpuvet/policies/default.yaml",
              "share/gpuvet/deploy/cloud-init/user-data.yaml", "share/doc/gpuvet/licenses/fio.COPYING",
              "share/doc/gpuvet/licenses/fio.SOURCE", "share/doc/gpuvet/licenses/LIBRARIES"):
        assert (tree / f).is_file(), f
    # fio: GPL-2.0, its licence and where its source is
    assert "GNU GENERAL PUBLIC LICENSE" in (tree / "share/doc/gpuvet/licenses/fio.COPYING").read_text()
    assert "snapshot.debian.org/package/fio/" in (tree / "share/doc/gpuvet/licenses/fio.SOURCE").read_text()
    # every carried library has its package's licence
    libs = (tree / "share/doc/gpuvet/licenses/LIBRARIES").read_text()
    for lib in os.listdir(tree / "lib"):
        row = next(line for line in libs.splitlines() if line.startswith(lib + " "))
        assert (tree / "share/doc/gpuvet/licenses" / f"{row.split()[1]}.copyright").is_file(), row


def test_the_closure_check_fails_on_a_tree_that_lacks_a_library(dist, tmp_path):
    tree = unpack(dist[0], tmp_path / "u")
    elfs = [str(tree / "bin" / "gpuvet"), str(tree / "libexec" / "fio")]
    ok = subprocess.run([sys.executable, str(ROOT / "packaging" / "closure.py"), "check", str(tree), *elfs],
                        capture_output=True, text=True)
    assert ok.returncode == 0, ok.stderr
    # cuBLASLt, NCCL, NVML and libfabric stay opened at run time, never linked
    needed = closure.dynamic(tree / "bin" / "gpuvet")[0]
    assert not [n for n in needed if re.match(r"lib(cublas|nccl|nvidia-ml|fabric|cuda)", n)], needed
    (tree / "lib" / "libz.so.1").unlink()       # zlib: needed by fio and, through libcurl, gpuvet
    bad = subprocess.run([sys.executable, str(ROOT / "packaging" / "closure.py"), "check", str(tree), *elfs],
                         capture_output=True, text=True)
    assert bad.returncode == 1
    assert "libexec/fio: needs libz.so.1, neither the C runtime nor carried in lib/" in bad.stderr, bad.stderr


# ---- fio's source: fetched from the Debian mirror, checked, or refused with a clear error ----

@pytest.fixture
def mirror(tmp_path):
    """A Debian mirror on loopback serving what is put under its pool/main/f/fio/."""
    root = tmp_path / "mirror"
    pool = root / "debian" / "pool" / "main" / "f" / "fio"
    pool.mkdir(parents=True)
    handler = lambda *a, **k: http.server.SimpleHTTPRequestHandler(*a, directory=str(root), **k)  # noqa: E731
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    srv.RequestHandlerClass.log_message = lambda *a: None
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    yield pool, f"http://127.0.0.1:{srv.server_address[1]}/debian"
    srv.shutdown()
    srv.server_close()


def fio_sh(tmp_path, mirror_url):
    env = dict(os.environ, GPUVET_CACHE=str(tmp_path / "cache"), GPUVET_DEBIAN_MIRROR=mirror_url)
    return subprocess.run(["sh", str(ROOT / "packaging" / "fio.sh")], capture_output=True, text=True, env=env,
                          timeout=120)


def test_fio_source_offline_is_a_clear_error(tmp_path):
    with loopback_closed_port() as port:
        p = fio_sh(tmp_path, f"http://127.0.0.1:{port}/debian")
    assert p.returncode == 1 and p.stdout == ""
    assert p.stderr.startswith(f"fio.sh: cannot fetch http://127.0.0.1:{port}/debian/pool/main/f/fio/fio_3.33-3.dsc: ")
    assert "(offline? set GPUVET_DEBIAN_MIRROR" in p.stderr
    assert not list((tmp_path / "cache" / "src").glob("*.dsc*"))       # nothing half-fetched kept


def test_fio_source_that_is_not_the_pinned_one_is_refused(tmp_path, mirror):
    pool, url = mirror
    real = (ROOT / "tests" / "fixtures" / "fio" / "fio_3.33-3.dsc").read_bytes()
    (pool / "fio_3.33-3.dsc").write_bytes(real.replace(b"Version: 3.33-3", b"Version: 3.33-4"))
    p = fio_sh(tmp_path, url)
    assert p.returncode == 1
    assert "fio_3.33-3.dsc: SHA-256 " in p.stderr and ", expected c2f0b96e94e74843" in p.stderr, p.stderr
    assert not (tmp_path / "cache" / "src" / "fio_3.33-3.dsc").exists()   # refused, removed, fetched again next time
    # the pinned .dsc, but a tarball it does not list
    (pool / "fio_3.33-3.dsc").write_bytes(real)
    (pool / "fio_3.33.orig.tar.gz").write_bytes(b"not fio's source")
    p = fio_sh(tmp_path, url)
    assert p.returncode == 1
    assert "fio_3.33.orig.tar.gz: SHA-256 " in p.stderr
    assert "expected d2410e13e0f379d061d077cc5ae325835bb7c6186aa7bafc1df954cbc9b014fc: refused" in p.stderr


class loopback_closed_port:
    """A port on 127.0.0.1 that nothing listens on (bound, never listening, while in use)."""

    def __enter__(self):
        self.s = socket.socket()
        self.s.bind(("127.0.0.1", 0))
        return self.s.getsockname()[1]

    def __exit__(self, *exc):
        self.s.close()


# ---- the bare system ----

MOUNT_AND_CHROOT = r"""
set -eu
R=$1; shift
mount -t proc proc "$R/proc"
mount --bind /dev "$R/dev"
mount -t tmpfs -o size=512m tmpfs "$R/dev/shm"
mount --bind /sys "$R/sys"
mount -o remount,bind,ro "$R/sys"
set +e
chroot "$R" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 "$@"
rc=$?
umount "$R/sys" "$R/dev/shm" "$R/dev" "$R/proc"
exit $rc
"""


def mounts_under(root):
    return [line.split()[4] for line in open("/proc/self/mountinfo") if line.split()[4].startswith(str(root))]


def in_root(root, *argv, timeout=900):
    """argv run in the root: a mount namespace of its own (its mounts never reach this one)."""
    p = subprocess.run(["unshare", "--mount", "--propagation", "private", "sh", "-c", MOUNT_AND_CHROOT, "sh",
                        str(root), *argv], capture_output=True, text=True, timeout=timeout)
    assert mounts_under(root) == [], "a mount was left behind"
    return p


@pytest.fixture
def bare(tmp_path):
    """A fresh copy of the cached minimal Debian root."""
    t0 = time.monotonic()
    p = subprocess.run(["sh", str(ROOT / "packaging" / "bare_root.sh")], capture_output=True, text=True,
                       timeout=1800)
    assert p.returncode == 0, p.stderr
    root = tmp_path / "root"
    root.mkdir()
    subprocess.run(["tar", "-xf", p.stdout.strip(), "-C", str(root)], check=True)
    (root / "work").mkdir()
    print(f"bare root ready in {time.monotonic() - t0:.1f} s")
    yield root
    assert mounts_under(root) == []
    shutil.rmtree(root)


@pytest.fixture
def web(tmp_path):
    www = tmp_path / "www"
    www.mkdir()
    (www / "big.bin").write_bytes(os.urandom(64 << 20))
    with loopback.nginx(www, tmp_path / "nginx") as url:
        yield url


# what each install must answer in the root: name, argv after the gpuvet path, expected exit
ANSWERS = [
    ("version", ["--version"], 0),
    ("accept", ["--db", "/work/g.db", "accept"], 3),          # no GPU here: cannot measure
    ("report", ["--db", "/work/g.db", "report", "-o", "/work/report.html"], 0),
    ("prices", ["--db", "/work/g.db", "prices", "list", "--provider", "aws", "--region", "us-east-1"], 0),
    ("rank", ["--db", "/work/g.db", "rank", "--estimates"], 0),
    ("cost", ["--db", "/work/g.db", "cost", "--model", "llama-3.1-8b", "--task", "train", "--seq", "8192",
              "--tokens", "1e9", "--estimates"], 0),
]


def check_script(gpuvet, fio, url, real=None):
    """The commands run in the root, each one's output and exit code left in /work; ldd reads the
    real file (real: the .deb's /usr/bin/gpuvet is a link, whose $ORIGIN the loader takes from
    /proc/self/exe when it runs, from the name as given under ldd)."""
    q = lambda s: "'" + s.replace("'", "'\\''") + "'"   # noqa: E731
    lines = ["#!/bin/sh", "cd /work", "export GPUVET_NO_METADATA=1", "mkdir -p /work/nvme",
             "dpkg-query -W -f '${Package}\\n' > packages.txt",
             "command -v fio > fio-on-path.txt; echo $? > fio-on-path.rc",
             f"ldd {q(real or gpuvet)} > ldd-gpuvet.txt 2>&1", f"ldd {q(fio)} > ldd-fio.txt 2>&1",
             f"{q(gpuvet)} --db /work/g.db run --profile quick --json --nvme-dir /work/nvme "
             f"--objstore-url {q(url)} > run.json 2> run.err; echo $? > run.rc"]
    for name, argv, _ in ANSWERS:
        lines.append(f"{q(gpuvet)} {' '.join(q(a) for a in argv)} > {name}.out 2> {name}.err; echo $? > {name}.rc")
    return "\n".join(lines) + "\n"


def resolved(ldd_text):
    """{name: path} of an ldd listing; 'not found' as the path when the loader found none."""
    out = {}
    for line in ldd_text.splitlines():
        m = re.match(r"\s*(\S+) => (.+?)(?: \(0x[0-9a-f]+\))?$", line)
        if m:
            out[m.group(1)] = m.group(2)
    return out


def assert_answers(root, tree_in_root, gpuvet, fio):
    w = root / "work"
    assert not [p for p in (w / "packages.txt").read_text().split() if p.endswith("-dev")]
    assert (w / "fio-on-path.rc").read_text().strip() != "0", "the bare root has a fio"
    # every library resolved inside the tree, or the C runtime
    for f in ("ldd-gpuvet.txt", "ldd-fio.txt"):
        libs = resolved((w / f).read_text())
        assert libs, (w / f).read_text()
        for name, path in libs.items():
            inside = os.path.normpath(path).startswith(tree_in_root + "/lib/")
            assert inside or closure.C_RUNTIME.match(name), f"{f}: {name} => {path}"
    rc = (w / "run.rc").read_text().strip()
    assert rc == "0", (rc, (w / "run.err").read_text()[-3000:])
    fp = json.loads((w / "run.json").read_text())
    benches = {b["name"]: b for b in fp["benches"]}
    # every bench that needs no GPU measured (harness: the run's own CPU steal sampling), the others
    # skipped for want of one
    for name, b in benches.items():
        if name in ("nvme", "host", "objstore", "harness"):
            assert b["status"] == "ok", b
        else:
            assert b["status"] == "skipped" and "no gpu visible" in b["reason"], b
    assert {"nvme", "host", "objstore", "gemm", "soak"} <= set(benches)
    c = benches["nvme"]["config"]
    assert (c["fio"], c["fio_source"]) == (fio, "carried") and c["fio_version"].startswith("fio-3")
    names = {m["name"] for m in fp["metrics"]}
    assert {"nvme.seqread.gbps", "nvme.randread.kiops", "host.membw.copy.gbps", "objstore.get.gbps"} <= names
    assert fp["run"]["gpuvet_build"]["release"] is True
    for name, _, want in ANSWERS:
        got = (w / f"{name}.rc").read_text().strip()
        assert got == str(want), (name, got, (w / f"{name}.err").read_text()[-2000:])
        assert (w / f"{name}.out").read_text().strip() or name == "report", name
    assert "release tarball" in (w / "version.out").read_text()
    assert "UNMEASURABLE" in (w / "accept.out").read_text()
    assert (w / "report.html").read_text().startswith("<!DOCTYPE html>")


@needs_root
def test_the_tarball_runs_on_a_bare_debian(dist, bare, web):
    tree = unpack(dist[0], bare / ODD)
    tree_in_root = "/" + ODD + "/" + NAME
    gpuvet, fio = tree_in_root + "/bin/gpuvet", tree_in_root + "/libexec/fio"
    (bare / "work" / "check.sh").write_text(check_script(gpuvet, fio, web + "/big.bin"))
    t0 = time.monotonic()
    p = in_root(bare, "/bin/sh", "/work/check.sh")
    print(f"the tarball's checks in the root: {time.monotonic() - t0:.1f} s")
    assert p.returncode == 0, p.stderr
    assert tree.is_dir()
    assert_answers(bare, tree_in_root, gpuvet, fio)


@needs_root
def test_the_deb_installs_and_runs_on_a_bare_debian(dist, bare, web):
    shutil.copy(dist[1], bare / "work" / "gpuvet.deb")
    p = in_root(bare, "dpkg", "-i", "/work/gpuvet.deb")
    assert p.returncode == 0, p.stdout + p.stderr
    assert os.readlink(bare / "usr" / "bin" / "gpuvet") == "/opt/gpuvet/bin/gpuvet"
    status = in_root(bare, "dpkg-query", "-W", "-f", "${Depends}", "gpuvet")
    deps = [d.split()[0] for d in status.stdout.split(", ")]
    assert sorted(deps) == ["libc6", "libgcc-s1", "libstdc++6"], status.stdout
    (bare / "work" / "check.sh").write_text(check_script("/usr/bin/gpuvet", "/opt/gpuvet/libexec/fio",
                                                         web + "/big.bin", real="/opt/gpuvet/bin/gpuvet"))
    p = in_root(bare, "/bin/sh", "/work/check.sh")
    assert p.returncode == 0, p.stderr
    assert_answers(bare, "/opt/gpuvet", "/usr/bin/gpuvet", "/opt/gpuvet/libexec/fio")


def dockerfile_steps():
    """The Dockerfile's ARG defaults applied to its COPY and RUN steps, continuation lines joined."""
    text = (ROOT / "contrib" / "deploy" / "kubernetes" / "Dockerfile").read_text().replace("\\\n", " ")
    args, steps = {}, []
    for line in text.splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        instr, _, rest = line.partition(" ")
        if instr == "ARG":
            k, _, v = rest.partition("=")
            args[k] = v
        elif instr in ("COPY", "RUN"):
            steps.append((instr, re.sub(r"\$\{(\w+)\}", lambda m: args.get(m.group(1), m.group(0)), rest)))
    return steps


@needs_root
def test_the_dockerfiles_install_step_works_on_a_bare_debian(dist, bare):
    # the image's own steps that need no network: COPY the tarball and SHA256SUMS, then the RUN that
    # checks and unpacks them (the CUDA runtime image is Ubuntu; what the step uses, sh, sha256sum,
    # tar and ln, is as essential on Debian's minbase)
    steps = dockerfile_steps()
    copy = next(rest for instr, rest in steps if instr == "COPY").split()
    install = next(rest for instr, rest in steps if instr == "RUN" and "sha256sum" in rest)
    dest = bare / copy[-1].lstrip("/")
    dest.mkdir(parents=True)
    for src in copy[:-1]:
        shutil.copy(ROOT / src, dest)
    p = in_root(bare, "/bin/sh", "-c", install)
    assert p.returncode == 0, p.stdout + p.stderr
    assert re.search(r"release tarball\)$", p.stdout.strip()), p.stdout
    assert (bare / "opt" / "gpuvet" / "libexec" / "fio").is_file() and not dest.exists()
    # a tarball that is not the one SHA256SUMS names is never unpacked
    shutil.rmtree(bare / "opt" / "gpuvet")
    (bare / "usr" / "local" / "bin" / "gpuvet").unlink()
    dest.mkdir(parents=True)
    for src in copy[:-1]:
        shutil.copy(ROOT / src, dest)
    with open(dest / Path(copy[0]).name, "ab") as f:
        f.write(b"\0")
    p = in_root(bare, "/bin/sh", "-c", install)
    assert p.returncode != 0 and "FAILED" in p.stdout + p.stderr
    assert not (bare / "opt" / "gpuvet" / "bin").exists()
