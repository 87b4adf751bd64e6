"""Imported text reaches a terminal with its control characters escaped, in every command that
prints it (issue 28 item 13): ESC and BEL planted in every free-text field of a real fingerprint
(flag messages and remediations, bench reasons, metric units and parameters, the inventory's
names) never come out raw from results list/show, accept, rank or inventory-like summaries."""
import json
import re

import pytest

from conftest import FIXTURES

H100 = FIXTURES / "gpu" / "h100-2026-11-22" / "standard-profile.json"
EVIL = "\x1b]0;pwned\x07\x1b[2J"


def plant(obj):
    """Every string value (not key) of a JSON tree, with EVIL appended."""
    if isinstance(obj, dict):
        return {k: plant(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [plant(v) for v in obj]
    if isinstance(obj, str):
        return obj + EVIL
    return obj


@pytest.fixture
def store(gpuvet, tmp_path):
    fp = json.loads(H100.read_text())
    for b in fp["benches"]:
        b["reason"] = (b.get("reason") or "r") + EVIL
    for m in fp["metrics"]:
        m["unit"] = (m.get("unit") or "") + EVIL
        m["params"] = plant(m.get("params") or {})
    fp["flags"] = [{"code": "CPU_STEAL", "severity": "warning", "message": "steal" + EVIL,
                    "remediation": "do" + EVIL, "evidence": {"note": "e" + EVIL}}]
    models = [g.get("reference_model") for g in fp["inventory"]["gpus"]]
    fp["inventory"] = plant(fp["inventory"])
    for g, m in zip(fp["inventory"]["gpus"], models):   # the model its device resolves to, or refused (issue 52)
        g["reference_model"] = m
    f = tmp_path / "evil.json"
    f.write_text(json.dumps(fp))
    p = gpuvet("results", "import", f)
    assert p.returncode == 0, p.stderr          # free text is stored as it came
    gpuvet("results", "tag", "1", "--provider", "aws", "--sku", "p5.4xlarge", check=0)
    return gpuvet


@pytest.mark.parametrize("args", [["results", "list"], ["results", "show", "1", "--text"], ["accept", "1"],
                                  ["rank"], ["rank", "--estimates"], ["results", "export", "--format", "csv"],
                                  ["results", "show", "1"], ["prices", "sources"]])
def test_no_raw_control_character_reaches_the_terminal(store, args):
    p = store(*args)
    out = p.stdout + p.stderr
    raw = re.findall(r"[\x00-\x08\x0b-\x1f\x7f]", out)
    assert not raw, (args, sorted(set(raw)), out[:2000])
