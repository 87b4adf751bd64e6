"""Runs order as instants, not as text (issue 28 item 12): a run started at 10:00+05:00 (05:00 UTC)
is older than one started at 06:00Z, and the stored times are UTC whatever offset the writer used;
`accept` with no run takes the run stored last, never the latest date (issue 52 item 1)."""
import json
import uuid

from conftest import FIXTURES
from helpers import fixture_fp, write_fp


def fp(tmp_path, started, finished, name):
    return write_fp(tmp_path, fixture_fp(started_at=started, finished_at=finished, hostname=name), f"{name}.json")


def test_times_are_instants_and_accept_judges_the_run_stored_last(gpuvet, tmp_path):
    a = fp(tmp_path, "2026-11-22T10:00:00+05:00", "2026-11-22T10:10:00+05:00", "east")   # 05:00Z
    b = fp(tmp_path, "2026-11-22T06:00:00Z", "2026-11-22T06:10:00Z", "utc")              # 06:00Z
    gpuvet("results", "import", b, a, check=0)       # the older one imported last
    shown = gpuvet.json("results", "show", "2")
    assert shown["run"]["started_at"] == "2026-11-22T05:00:00Z"
    assert shown["run"]["finished_at"] == "2026-11-22T05:10:00Z"
    out = gpuvet("accept").stdout                        # no memcpy in the fixture: exit 3, the run named
    # the run stored last, whatever its date (issue 52): not run 1, the latest instant
    assert out.startswith("judging run 2, the run stored last") and "\nrun 2 " in out, out
