"""-o PATH writes only what the user asked for (issue 28 items 2-4, 13; common/outfile.h): a pipe or
a character device is written in place, never replaced by a file; a file goes through a unique
temporary created with O_EXCL beside it, so a symlink planted at a predictable name is never
followed and two writers at once leave one whole file; a failed write says what failed once."""
import json
import os
import stat
import subprocess
import threading

import pytest

from conftest import FIXTURES, gpuvet_bin

H100 = FIXTURES / "gpu" / "h100-2026-11-22" / "standard-profile.json"


@pytest.fixture
def store(gpuvet):
    gpuvet("results", "import", H100, check=0)
    return gpuvet


def read_fifo(path, out):
    with open(path, "rb") as f:
        out.append(f.read())


@pytest.mark.parametrize("cmd", [["results", "export", "--format", "json", "-o"], ["report", "-o"]])
def test_a_fifo_is_written_in_place(store, tmp_path, cmd):
    tmp_path = tmp_path / "o"          # the outputs' own directory (the store sits in tmp_path)
    tmp_path.mkdir()
    fifo = tmp_path / "out.fifo"
    os.mkfifo(fifo)
    got = []
    t = threading.Thread(target=read_fifo, args=(fifo, got))
    t.start()
    store(*cmd, fifo, check=0)
    t.join(30)
    assert stat.S_ISFIFO(os.stat(fifo).st_mode), "the pipe was replaced by a file"
    data = got[0].decode()
    if cmd[0] == "results":
        assert json.loads(data)[0]["run"]["uuid"]
    else:
        assert data.startswith("<!DOCTYPE html>") and data.rstrip().endswith("</html>")
    assert [p.name for p in tmp_path.iterdir()] == ["out.fifo"]     # no temporary left


@pytest.mark.parametrize("cmd", [["results", "export", "--format", "csv", "-o"], ["report", "-o"]])
def test_other_non_regular_files_are_refused(store, tmp_path, cmd):
    d = tmp_path / "adir"
    d.mkdir()
    p = store(*cmd, d, check=2)
    assert p.stderr.count("\n") == 1 and "not a regular file, a pipe or a character device" in p.stderr
    assert d.is_dir() and not list(d.iterdir())


def test_a_planted_symlink_is_not_followed(store, tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    out = tmp_path / "runs.json"
    (tmp_path / "runs.json.tmp").symlink_to(victim)          # where the old fixed name was
    store("results", "export", "--format", "json", "-o", out, check=0)
    assert victim.read_text() == "precious\n"
    assert json.loads(out.read_text())[0]["run"]["uuid"]
    assert stat.S_IMODE(os.stat(out).st_mode) & 0o044              # readable as any new file, not 0600


def test_two_exports_at_once_leave_one_whole_file(store, tmp_path):
    tmp_path = tmp_path / "o"
    tmp_path.mkdir()
    out = tmp_path / "same.json"
    env = dict(store.env)
    procs = [subprocess.Popen([gpuvet_bin(), "--db", store.db, "results", "export", "--format", "json", "-o", str(out)],
                              env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE) for _ in range(4)]
    codes = [p.wait(60) for p in procs]
    assert codes == [0, 0, 0, 0]
    assert json.loads(out.read_text())[0]["run"]["uuid"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["same.json"]


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full")
def test_a_failed_csv_export_says_what_failed_once(store):
    p = store("results", "export", "--format", "csv", "-o", "/dev/full", check=2)
    assert p.stderr == "gpuvet: cannot write '/dev/full': No space left on device\n", p.stderr
    assert stat.S_ISCHR(os.stat("/dev/full").st_mode)


def test_a_name_near_the_length_limit_is_written(store, tmp_path):
    out = tmp_path / ("r" * 250 + ".json")          # 255 bytes: no room for ".tmp.XXXXXX" beside it
    store("results", "export", "--format", "json", "-o", out, check=0)
    assert json.loads(out.read_text())[0]["run"]["uuid"]
    assert not [p for p in tmp_path.iterdir() if "tmp" in p.name]
