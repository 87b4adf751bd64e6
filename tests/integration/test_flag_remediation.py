"""Every flag says what to do (issue 13, item 6), end to end with the real binary on the real
H100 capture beside a second process (tests/fixtures/gpu/h100-2026-11-22/contention/loaded-1.json):
`results import` derives the flags with their remediation (never the file's), `results show` prints it (JSON and --text), the HTML
report lists it, `accept` puts it in its reasons, and GPUVET_TEST_HIDE_FOREIGN judges the run as
if the other tenant were invisible (a time-sliced vGPU)."""
import json
import uuid

from conftest import FIXTURES

LOADED = FIXTURES / "gpu" / "h100-2026-11-22" / "contention" / "loaded-1.json"
CLAIM = "drain the node and ask the provider to replace gpu 3: it computed a wrong result"
REMEDY = "return the instance or ask the provider for a dedicated gpu: another tenant shares the gpus"


def imported(gpuvet, tmp_path, flags=None):
    fp = json.loads(LOADED.read_text())
    fp["run"]["uuid"] = str(uuid.uuid4())
    fp["verdicts"] = []
    if flags is not None:
        fp["flags"] = flags
    path = tmp_path / "fp.json"
    path.write_text(json.dumps(fp))
    gpuvet("results", "import", path, check=0)
    return fp["run"]["uuid"]


def test_remediation_stored_by_import_and_shown(gpuvet, tmp_path):
    # a file's flag of a code its evidence judges is not trusted: the flags the evidence earns are
    # stored, each with gpuvet's remediation (issue 48: an imported run is judged as a measured one);
    # a flag its evidence cannot judge (no SDC check in this capture) stays, with its own remediation
    planted = {"code": "XID", "severity": "critical", "message": "planted", "evidence": {"gpu": 0},
               "remediation": "planted"}
    claim = {"code": "DATA_CORRUPTION", "severity": "critical", "message": "gpu 3: 1 of 9 soak results differed",
             "evidence": {"gpu": 3}, "remediation": CLAIM}
    u = imported(gpuvet, tmp_path, [planted, claim])
    shown = gpuvet.json("results", "show", u)
    assert [f["code"] for f in shown["flags"]] == ["THROTTLE_POWER", "CONTENTION", "DATA_CORRUPTION"]
    assert shown["flags"][1]["remediation"] == REMEDY and shown["flags"][2]["remediation"] == CLAIM
    text = gpuvet("results", "show", u, "--text", check=0).stdout
    assert "-> " + REMEDY in text and "-> " + CLAIM in text and "planted" not in text
    gpuvet("report", "-o", tmp_path / "r.html", check=0)
    html = (tmp_path / "r.html").read_text()
    assert "<th>what to do</th>" in html
    assert REMEDY in html and CLAIM in html


def test_flags_of_a_file_without_remediations_get_one(gpuvet, tmp_path):
    # the capture's own flags were written by a gpuvet without remediations; import derives them again
    u = imported(gpuvet, tmp_path)
    shown = gpuvet.json("results", "show", u)
    assert [f["code"] for f in shown["flags"]] == ["THROTTLE_POWER", "CONTENTION"]
    assert shown["flags"][1]["remediation"] == REMEDY
    text = gpuvet("results", "show", u, "--text", check=0).stdout
    assert "-> " + REMEDY in text


def test_accept_reasons_say_what_to_do(gpuvet, tmp_path):
    imported(gpuvet, tmp_path)
    p = gpuvet("accept", "--json", check=None)
    assert p.returncode == 1, p.stdout + p.stderr
    res = json.loads(p.stdout)
    failed = [f for f in res["failed"] if f.get("flag") == "CONTENTION"]
    assert failed and failed[0]["remediation"].startswith("return the instance")
    text = gpuvet("accept", check=None).stdout
    assert "what to do: return the instance" in text


def test_contention_from_performance_when_foreign_is_hidden(gpuvet, tmp_path):
    imported(gpuvet, tmp_path)
    p = gpuvet("accept", "--json", check=None, env={"GPUVET_TEST_HIDE_FOREIGN": "1"})
    assert p.returncode == 1, p.stdout + p.stderr
    failed = [f for f in json.loads(p.stdout)["failed"] if f.get("flag") == "CONTENTION"]
    assert failed
    signals = {s["signal"] for s in failed[0]["evidence"]["signals"]}
    assert "foreign" not in signals and "efficiency" in signals
