"""Flags that follow from values are derived on import (issue 48): an imported run is judged and
listed as a measured one, its flags computed from its fingerprint as `run` computes them, the
file's own never trusted.  On the real H100 standard capture of tests/fixtures/gpu/h100-2026-11-22/
(README there), its GEMM scaled to 55 % of the H100-SXM reference or its flags rewritten."""
import json
import uuid

from conftest import FIXTURES

STANDARD = FIXTURES / "gpu" / "h100-2026-11-22" / "standard-profile.json"
NAMED = ("--provider", "aws", "--sku", "p5.4xlarge", "--region", "us-east-1")


def capture(tmp_path, gemm=1.0, flags=None):
    """The standard capture under a new uuid, every GEMM throughput times gemm, its flags replaced."""
    fp = json.loads(STANDARD.read_text())
    for m in fp["metrics"]:
        if m["name"].startswith("gemm.") and m["name"].endswith(".tflops"):
            m["value"] *= gemm
    fp["metrics"] = [m for m in fp["metrics"] if ".pct_of_" not in m["name"]]   # gpuvet's to derive (issue 57)
    if flags is not None:
        fp["flags"] = flags
    fp["run"]["uuid"] = str(uuid.uuid4())
    out = tmp_path / f"fp-{uuid.uuid4().hex[:8]}.json"
    out.write_text(json.dumps(fp))
    return out


def codes(gpuvet, run):
    return sorted((f["code"], f["severity"]) for f in gpuvet.json("results", "show", str(run), "--json")["flags"])


def test_a_value_below_the_reference_is_flagged_on_import(gpuvet, tmp_path):
    # the file says nothing of it: no flag at all
    gpuvet("results", "import", capture(tmp_path, gemm=0.55, flags=[]), *NAMED, check=0)
    got = codes(gpuvet, 1)
    assert ("BELOW_REFERENCE", "warning") in got, got
    # listed as a measured run's would be: the ranking shows the flag beside the value
    rank = gpuvet.json("rank", "--json")
    row = next(r for r in rank["rows"] if r["instance_type"] == "p5.4xlarge")
    assert "BELOW_REFERENCE" in json.dumps(row["flags"])


def test_a_files_flags_are_not_trusted(gpuvet, tmp_path):
    clean = sorted((f["code"], f["severity"]) for f in json.loads(STANDARD.read_text())["flags"])
    planted = [{"code": "XID", "severity": "critical", "message": "planted", "evidence": {"gpu": 0}}]
    gpuvet("results", "import", capture(tmp_path, flags=planted), *NAMED, check=0)
    assert codes(gpuvet, 1) == clean                    # the planted critical flag is gone, the earned ones there
    assert gpuvet.json("rank", "--json")["rows"]        # and the run ranks, as its values earn
    # a file that drops its earned flags gets them back
    gpuvet("results", "import", capture(tmp_path, flags=[]), *NAMED, check=0)
    assert codes(gpuvet, 2) == clean


def test_a_merged_runs_flags_are_derived_not_copied(gpuvet, tmp_path):
    """#52 ("merge through another store"): the other store's flags are its own say-so; a hostile
    edit of its SQLite file that drops a run's flags must not reach this store's gate."""
    import sqlite3
    from conftest import Gpuvet
    other = Gpuvet(tmp_path / "other.db", gpuvet.env)
    other("results", "import", capture(tmp_path, gemm=0.55, flags=[]), *NAMED, check=0)
    con = sqlite3.connect(other.db)
    con.execute("DELETE FROM flags")
    con.commit()
    con.close()
    assert codes(other, 1) == []                        # the other store now claims a clean run
    gpuvet("results", "merge", other.db, check=0)
    got = codes(gpuvet, 1)
    assert ("BELOW_REFERENCE", "warning") in got, got   # derived here from the merged run's values


def test_a_flags_evidence_is_stored_as_measured(gpuvet, tmp_path):
    """A flag's evidence keeps its figure whole: stored at 10 digits it differed from the same flag
    computed in `run --json` (hypervisor steal of 5.555... % on a loaded CI machine)."""
    fp = json.loads(STANDARD.read_text())
    steal = 100 / 18
    fp["metrics"] = [m for m in fp["metrics"] if m["name"] != "host.cpu_steal.pct"]
    fp["metrics"].append({"bench": "harness", "name": "host.cpu_steal.pct", "gpu": -1, "value": steal, "unit": "%",
                          "params": {}})
    fp["run"]["uuid"] = str(uuid.uuid4())
    path = tmp_path / "steal.json"
    path.write_text(json.dumps(fp))
    gpuvet("results", "import", path, *NAMED, check=0)
    shown = gpuvet.json("results", "show", fp["run"]["uuid"][:8], "--json")
    ev = [f["evidence"] for f in shown["flags"] if f["code"] == "CPU_STEAL"]
    assert ev and ev[0]["steal_pct"] == steal, ev
