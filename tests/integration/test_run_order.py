"""Runs order as instants, not as text (issue 28 item 12): a run started at 10:00+05:00 (05:00 UTC)
is older than one started at 06:00Z, so `accept` with no run (the latest) takes the second, and the
stored times are UTC whatever offset the writer used."""
import json
import uuid

from conftest import FIXTURES
from helpers import fixture_fp, write_fp


def fp(tmp_path, started, finished, name):
    return write_fp(tmp_path, fixture_fp(started_at=started, finished_at=finished, hostname=name), f"{name}.json")


def test_latest_run_is_the_latest_instant(gpuvet, tmp_path):
    a = fp(tmp_path, "2026-11-22T10:00:00+05:00", "2026-11-22T10:10:00+05:00", "east")   # 05:00Z
    b = fp(tmp_path, "2026-11-22T06:00:00Z", "2026-11-22T06:10:00Z", "utc")              # 06:00Z
    gpuvet("results", "import", b, a, check=0)       # the older one imported last
    shown = gpuvet.json("results", "show", "2")
    assert shown["run"]["started_at"] == "2026-11-22T05:00:00Z"
    assert shown["run"]["finished_at"] == "2026-11-22T05:10:00Z"
    out = gpuvet("accept").stdout                        # no memcpy in the fixture: exit 3, the run named
    assert out.startswith("run 1 "), out                # 06:00Z is the latest, not "10:00+05:00" as text
