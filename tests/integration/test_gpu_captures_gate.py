"""The real H100 runs of 2026-11-25 (tests/fixtures/gpu/h100-2026-11-25/) through the gate:
a clean whole quick profile is accepted; the run whose soak checksum caught one flipped bit
(DATA_CORRUPTION) and the run beside a hidden 25 %-duty tenant (CONTENTION) are rejected by the
default policy, whatever else they measured or left unmeasured."""
import json

import pytest

from conftest import FIXTURES

RUNS = FIXTURES / "gpu" / "h100-2026-11-25"


def _accept(gpuvet, path):
    gpuvet("results", "import", str(path), check=0)
    return gpuvet("accept", "--json")


def test_the_clean_quick_profile_is_accepted(gpuvet):
    r = _accept(gpuvet, RUNS / "fidelity-2" / "quick-all.json")
    out = json.loads(r.stdout)
    assert r.returncode == 0 and out["verdict"] == "accept", r.stdout + r.stderr


@pytest.mark.parametrize("path,flag", [("sdc/flip.json", "DATA_CORRUPTION"),
                                       ("tenant/duty0.25.json", "CONTENTION")])
def test_a_critical_flag_on_a_real_gpu_is_rejected(gpuvet, path, flag):
    fp = json.loads((RUNS / path).read_text())
    assert flag in [f["code"] for f in fp["flags"]]      # what the GPU raised there
    r = _accept(gpuvet, RUNS / path)
    assert r.returncode == 1, r.stdout + r.stderr        # not 0, and not "cannot measure" (3)
    assert flag in r.stdout
