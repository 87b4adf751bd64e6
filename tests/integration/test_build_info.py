"""Which gpuvet measured a run (issue #59): `gpuvet --version` says the version, the commit, the
build date and whether it is a release tarball; every run's fingerprint records the build as
run.gpuvet_build, which survives export, import and merge; a fingerprint written before (without
it) imports as it did, one whose gpuvet_build is malformed is refused whole; the report names the
build that made it and the one that measured each run."""
import json
import re
import shutil
import subprocess
import uuid
from datetime import datetime, timedelta, timezone

import pytest

from conftest import FIXTURES, ROOT, gpuvet_bin
from helpers import NULL

LINE = re.compile(r"^gpuvet (\S+) \(commit (\S+), built (\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ), "
                  r"(release tarball|development build)\)$")


def version_parts():
    p = subprocess.run([gpuvet_bin(), "--version"], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0 and p.stderr == ""
    m = LINE.match(p.stdout.rstrip("\n"))
    assert m, p.stdout
    return m.groups()


def test_version_says_commit_build_date_and_kind():
    version, commit, built, kind = version_parts()
    util_h = (ROOT / "common" / "util.h").read_text()
    assert f'#define GPUVET_VERSION "{version}"' in util_h
    assert kind == "development build"      # build/gpuvet; the tarball's says release (test_dist.py)
    at = datetime.strptime(built, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc)
    assert at <= datetime.now(timezone.utc) + timedelta(minutes=5)
    if shutil.which("git") and (ROOT / ".git").exists():
        head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short=12", "HEAD"],
                              capture_output=True, text=True).stdout.strip()
        # the commit the binary was linked at: HEAD, or an ancestor when commits came since
        base = commit.removesuffix("-dirty")
        assert re.fullmatch(r"[0-9a-f]{12}", base), commit
        ok = subprocess.run(["git", "-C", str(ROOT), "merge-base", "--is-ancestor", base, head])
        assert ok.returncode == 0, (commit, head)


def test_a_run_records_the_build_that_measured_it(gpuvet):
    _, commit, built, _ = version_parts()
    fp = gpuvet.json("run", "--bench", "null", "--json", env=dict(NULL, GPUVET_NULL_MODE="ok"))
    assert fp["run"]["gpuvet_build"] == {"commit": commit, "built_at": built, "release": False}
    shown = gpuvet.json("results", "show", str(fp["run"]["id"]))
    assert shown["run"]["gpuvet_build"] == fp["run"]["gpuvet_build"]


BUILD = {"commit": "1a2b3c4d5e6f", "built_at": "2026-11-28T09:14:03Z", "release": True}


def fixture_fp(**build):
    fp = json.loads((FIXTURES / "flags" / "clean.json").read_text())
    fp["run"]["uuid"] = str(uuid.uuid4())
    if build:
        fp["run"]["gpuvet_build"] = build["value"]
    return fp


def imported(gpuvet, tmp_path, fp, check=0):
    """fp written to a file and given to results import; the import's process."""
    f = tmp_path / f"{fp['run']['uuid']}.json"
    f.write_text(json.dumps(fp))
    return gpuvet("results", "import", f, check=check)


def test_a_fingerprint_without_the_field_imports_as_before(gpuvet, tmp_path):
    fp = fixture_fp()
    assert "gpuvet_build" not in fp["run"]
    imported(gpuvet, tmp_path, fp)
    run = gpuvet.json("results", "show", fp["run"]["uuid"][:8])["run"]
    assert "gpuvet_build" not in run and run["gpuvet_version"] == "0.1.0"


def test_the_build_survives_import_export_and_merge(gpuvet, tmp_path):
    build = BUILD
    fp = fixture_fp(value=build)
    imported(gpuvet, tmp_path, fp)
    assert gpuvet.json("results", "show", fp["run"]["uuid"][:8])["run"]["gpuvet_build"] == build
    other = tmp_path / "other.db"
    gpuvet("--db", other, "results", "merge", gpuvet.db, check=0, db=False)
    merged = gpuvet.json("--db", other, "results", "show", fp["run"]["uuid"][:8], db=False)
    assert merged["run"]["gpuvet_build"] == build
    exported = gpuvet.json("results", "export", "--format", "json")
    runs = exported if isinstance(exported, list) else exported.get("runs", [exported])
    assert any(r["run"].get("gpuvet_build") == build for r in runs)


@pytest.mark.parametrize("value, words", [
    ("1a2b3c", "run.gpuvet_build is not an object"),
    ({"commit": "abc", "built_at": "yesterday"}, "run.gpuvet_build.built_at is not an iso-8601 time"),
    ({"commit": "abc", "release": "yes"}, "run.gpuvet_build.release is not true or false"),
    ({"commit": "a\nb"}, "run.gpuvet_build.commit"),
])
def test_a_malformed_build_is_refused_whole(gpuvet, tmp_path, value, words):
    p = imported(gpuvet, tmp_path, fixture_fp(value=value), check=2)
    assert words in p.stderr and len(p.stderr.strip().splitlines()) == 1, p.stderr
    assert gpuvet.json("results", "list", "--json") == []


def test_the_report_names_its_build_and_each_runs(gpuvet, tmp_path):
    imported(gpuvet, tmp_path, fixture_fp(value=BUILD))
    out = tmp_path / "r.html"
    gpuvet("report", "-o", out, check=0)
    html = out.read_text()
    line = subprocess.run([gpuvet_bin(), "--version"], capture_output=True, text=True).stdout.strip()
    assert "generated" in html and line in html
    assert "gpuvet 0.1.0 (commit 1a2b3c4d5e6f, built 2026-11-28T09:14:03Z, release tarball)" in html
