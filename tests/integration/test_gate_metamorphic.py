"""Issue 52, "prove the class, not the instances": the metamorphic test of the gate.  Every real
capture under tests/fixtures/gpu/, degraded so that the built-in policy must not accept it (GEMM
halved, a critical flag's evidence, gemm failed, BF16 nulled, H2D at 0.81x under a fleet of three
accepted clean copies), then changed by random combinations of the "harmless" mutations a hostile
file can make (the model or SKU relabelled in any spelling, rows duplicated under any bench and in
any order, rows moved between benches, timestamps shifted or repeated, series thinned or padded
with invalid points, the run dated anywhere, merged through another store, runs accepted by other
policies stored first): the run stored last is never ACCEPTED (tests/unit/gate_meta.h).

The cases run in process in the unit binary test_gate_metamorphic (a subprocess per chunk, not
per case): CHUNKS x CASES of them, each chunk under its own seed, deterministic.  `make fuzz`
drives the same cases from libFuzzer (tests/fuzz/fuzz_gate.c).  The captures are read, never
edited.  Two cases are also walked through the real binary, import then a plain accept."""
import json
import os
import re
import subprocess
import uuid
from pathlib import Path

import pytest

from conftest import FIXTURES

ROOT = Path(__file__).resolve().parent.parent.parent
TEST_DIR = Path(os.environ.get("GPUVET_TEST_DIR", ROOT / "build" / "tests"))
BIN = TEST_DIR / "test_gate_metamorphic"
CHUNKS, CASES = 4, 500   # 2,000 cases: about 20 s of CPU on the 2-core VM


@pytest.mark.parametrize("chunk", range(CHUNKS))
def test_no_mutation_of_a_degraded_capture_is_accepted(chunk, tmp_path):
    assert BIN.exists(), f"{BIN} not built (make {BIN.relative_to(ROOT)})"
    env = dict(os.environ, TMPDIR=str(tmp_path), GPUVET_NO_METADATA="1")
    p = subprocess.run([str(BIN), str(5200 + chunk), str(CASES)], cwd=ROOT, env=env, capture_output=True,
                       text=True, timeout=600)
    assert p.returncode == 0, p.stdout + p.stderr
    line = [x for x in p.stdout.splitlines() if x.startswith("seed ")][0]
    # "seed S: N cases, R refused at import, J judged, 0 accepted": the judge was reached, often
    n, refused, judged, accepted = (int(w) for w in re.findall(r"(\d+) (?:cases|refused|judged|accepted)", line))
    assert n == CASES and accepted == 0 and judged >= CASES // 5, line


def test_the_binary_agrees_with_the_in_process_judge(gpuvet, tmp_path):
    """A degraded capture under a better row of another bench, first, and a relabelled model: the
    CLI refuses both imports, and a plain accept judges the (clean) run stored before them."""
    src = FIXTURES / "gpu" / "h100-2026-11-22" / "quick-profile.json"
    clean = json.loads(src.read_text())
    clean["run"]["uuid"] = str(uuid.uuid4())
    (tmp_path / "clean.json").write_text(json.dumps(clean))
    gpuvet("results", "import", tmp_path / "clean.json", check=0)
    for how in ("aaa", "label"):
        fp = json.loads(src.read_text())
        fp["run"]["uuid"] = str(uuid.uuid4())
        for m in fp["metrics"]:
            if m["name"].startswith("gemm.") and m["name"].endswith(".tflops") and m["value"] is not None:
                m["value"] *= 0.5
        if how == "aaa":
            fp["metrics"].insert(0, {"bench": "aaa", "name": "gemm.bf16.tflops", "gpu": 0, "value": 900.0,
                                     "unit": "TFLOP/s", "params": {}})
            fp["benches"].append({"name": "aaa", "status": "ok", "reason": None, "duration_s": 1, "config": None})
        else:
            fp["run"]["gpu_model"] = "h100-sxm"
        f = tmp_path / f"{how}.json"
        f.write_text(json.dumps(fp))
        gpuvet("results", "import", f, check=2)
    assert "judging run 1" in gpuvet("accept").stdout
