"""Issue 52 item 5, coverage means valid distinct readings: one function (judge/flags_evidence.c
flags_series) decides what a reading of each soak series is, and both the coverage rule and the
throttle, decay and pcie checks judge what it returns.  Thirty clock-event masks of -1, three
readings repeated ten times, a PCIe generation of 1e300 and a soak rate of -1 are no evidence:
UNMEASURABLE (exit 3) or REJECT (exit 1), never ACCEPT.  Each passed the checks on f4570a0."""
import json
import uuid
from pathlib import Path

import pytest

from conftest import FIXTURES

Q = FIXTURES / "gpu" / "h100-2026-11-22" / "quick-profile.json"


def fresh():
    fp = json.loads(Path(Q).read_text())
    fp["run"]["uuid"] = str(uuid.uuid4())
    fp["verdicts"] = []
    return fp


def put(gpuvet, tmp_path, fp):
    path = tmp_path / f"{fp['run']['uuid']}.json"
    path.write_text(json.dumps(fp))
    gpuvet("results", "import", path, check=0)
    return fp["run"]["uuid"]


def refused_or_judged(gpuvet, tmp_path, fp, rc):
    """A reading outside its physical bounds is refused at import (exit 2, the bound named:
    tests/integration/test_gate_evidence.py); one inside them that is still no reading reaches the
    gate, which must end in rc.  Returns accept's process, or None when the import refused it."""
    path = tmp_path / f"{fp['run']['uuid']}.json"
    path.write_text(json.dumps(fp))
    imp = gpuvet("results", "import", path)
    if imp.returncode == 2:
        assert "outside its physical bounds" in imp.stderr, imp.stderr
        return None
    assert imp.returncode == 0, imp.stderr
    return gpuvet("accept", "--run", fp["run"]["uuid"], check=rc)


def series(fp, name):
    return next(s for s in fp["samples"] if s["series"] == name and s["gpu"] == 0)


def set_y(fp, name, y):
    s = series(fp, name)
    s["points"] = [[x, y] for x, _ in s["points"]]
    return fp


def repeat_three(fp, name):
    """three readings, each repeated ten times at its own second: thirty points, three seconds"""
    s = series(fp, name)
    s["points"] = [list(s["points"][i // 10]) for i in range(30)]
    return fp


def test_the_clean_capture_is_accepted(gpuvet, tmp_path):
    gpuvet("accept", "--run", put(gpuvet, tmp_path, fresh()), check=0)


def test_thirty_masks_of_minus_one_are_no_evidence(gpuvet, tmp_path):
    p = gpuvet("accept", "--run", put(gpuvet, tmp_path, set_y(fresh(), "soak.clock_events.mask", -1)), check=3)
    assert "NOT MEASURED  flag THROTTLE_THERMAL" in p.stdout


@pytest.mark.parametrize("mask", [2.0 ** 40, 4.5, 1e300])
def test_a_mask_nvml_cannot_give_is_no_evidence(gpuvet, tmp_path, mask):
    refused_or_judged(gpuvet, tmp_path, set_y(fresh(), "soak.clock_events.mask", mask), 3)


def test_three_readings_repeated_ten_times_are_three_readings(gpuvet, tmp_path):
    p = gpuvet("accept", "--run", put(gpuvet, tmp_path, repeat_three(fresh(), "soak.clock_events.mask")), check=3)
    assert "NOT MEASURED  flag THROTTLE_THERMAL" in p.stdout


def test_thirty_points_at_one_second_are_one_reading(gpuvet, tmp_path):
    fp = fresh()
    s = series(fp, "soak.clock_events.mask")
    s["points"] = [[5.0, 4.0] for _ in s["points"]]
    gpuvet("accept", "--run", put(gpuvet, tmp_path, fp), check=3)


def test_a_pcie_generation_of_1e300_is_no_reading(gpuvet, tmp_path):
    p = refused_or_judged(gpuvet, tmp_path, set_y(fresh(), "soak.pcie.gen", 1e300), 3)
    assert p is None or "NOT MEASURED  flag PCIE_DOWNGRADE" in p.stdout


def test_a_soak_rate_of_minus_one_is_no_reading(gpuvet, tmp_path):
    p = refused_or_judged(gpuvet, tmp_path, set_y(fresh(), "soak.tflops", -1), 3)
    assert p is None or "NOT MEASURED  flag PERF_DECAY" in p.stdout


def test_a_thermal_second_beside_a_clean_one_is_judged(gpuvet, tmp_path):
    """two masks in one second count once, with every bit either set: the thermal one is not hidden"""
    fp = fresh()
    s = series(fp, "soak.clock_events.mask")
    s["points"] = [[x, 4.0] for x, _ in s["points"]] + [[x + 0.01, 64.0] for x, _ in s["points"][:5]]
    p = gpuvet("accept", "--run", put(gpuvet, tmp_path, fp), check=1)
    assert "FAIL  flag THROTTLE_THERMAL" in p.stdout
