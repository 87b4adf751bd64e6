"""One word per state, and what a terminal is shown (issue 58 item 12 and `results list`, item 4):

- a verdict is accepted, rejected or unmeasurable (accept prints ACCEPT, REJECT, UNMEASURABLE; JSON
  accept, reject, unmeasurable), a run without one is "not judged" (never "not gated", "none",
  "CANNOT MEASURE", "Could not be judged"), in `accept`, `results list` and the report;
- `accept` names the capture's host as a host ("on host vm"), and what a provider rents is an
  "instance type" (never "SKU") in the words a person reads;
- `results list` has region, verdict and flags columns (and `--json` the same);
- `results show` prints text to a terminal and the JSON fingerprint into a pipe or with --json;
- `gpuvet help man` formats and pages the manual through man(1) on a terminal, the roff source in
  a pipe;
- tests/fleetgen.py has a command line (--help, --runs, -o).

Each failed on c4fdb45."""
import json
import os
import re
import subprocess
import sys

from conftest import FIXTURES, ROOT, gpuvet_bin
from helpers import on_terminal

H100 = FIXTURES / "gpu" / "h100-2026-11-22"


def store(gpuvet):
    gpuvet("results", "import", H100 / "standard-profile.json", H100 / "contention" / "loaded-1.json",
           H100 / "soak-300s.json", "--provider", "aws", "--sku", "p5.4xlarge", "--region", "us-east-1", check=0)
    gpuvet("accept", "1", check=0)     # accepted
    gpuvet("accept", "2", check=1)     # rejected: CONTENTION
    gpuvet("accept", "3", check=3)     # the soak alone: unmeasurable


def test_one_word_per_verdict_in_accept_list_and_report(gpuvet, tmp_path):
    store(gpuvet)
    p = gpuvet("accept", "3", check=3)
    assert p.stdout.splitlines()[2].startswith("UNMEASURABLE: ") and "CANNOT MEASURE" not in p.stdout
    assert "  NOT MEASURED " in p.stdout                       # a check: its own word
    assert json.loads(gpuvet("accept", "3", "--json", check=3).stdout)["verdict"] == "unmeasurable"
    head = p.stdout.splitlines()[0]
    assert head.startswith("run 3 (") and " on host vm: 1 x H100-SXM, aws p5.4xlarge" in head
    lines = gpuvet("results", "list", check=0).stdout.splitlines()
    head = lines[0].split()
    assert {"region", "verdict", "flags"} <= set(head)
    by_id = {ln.split()[0]: ln for ln in lines[1:]}
    assert " us-east-1 " in by_id["1"] and " accepted " in by_id["1"]
    assert " rejected " in by_id["2"] and by_id["2"].rstrip().endswith("CONTENTION")
    assert " unmeasurable " in by_id["3"]
    rows = {r["id"]: r for r in gpuvet.json("results", "list", "--json")}
    assert (rows[1]["verdict"], rows[2]["verdict"], rows[3]["verdict"]) == ("accept", "reject", "unmeasurable")
    assert rows[2]["raised"] == ["CONTENTION"] and rows[1]["raised"] == []
    gpuvet("results", "import", H100 / "quick-profile.json", check=0)    # run 4: no verdict
    four = next(ln for ln in gpuvet("results", "list", check=0).stdout.splitlines() if ln.startswith("4 "))
    assert " not judged " in four
    out = tmp_path / "r.html"
    gpuvet("report", "-o", out, check=0)
    html = out.read_text()
    for old in ("not gated", "Could not be judged", "could not be judged", "CANNOT MEASURE", "<span class=\"muted\">none</span>"):
        assert old not in html, old
    assert "not judged</div>" in html and "unmeasurable</div>" in html


def test_an_instance_type_is_called_one(gpuvet):
    gpuvet("results", "import", H100 / "quick-profile.json", check=0)
    p = gpuvet("results", "tag", "1", "--provider", "aws", "--sku", "p5.4xlarg", check=2)
    assert "unknown instance type p5.4xlarg for aws; did you mean p5.4xlarge?" in p.stderr and "SKU" not in p.stderr
    assert "this sku" not in gpuvet("accept", "1", check=0).stdout


def test_results_show_is_text_on_a_terminal_and_json_in_a_pipe(gpuvet):
    gpuvet("results", "import", H100 / "standard-profile.json", check=0)
    piped = gpuvet("results", "show", "1", check=0).stdout
    assert json.loads(piped)["run"]["id"] == 1
    args = [gpuvet_bin(), "--db", gpuvet.db, "results", "show", "1"]
    rc, text = on_terminal(args, gpuvet.env)
    assert rc == 0 and not text.lstrip().startswith("{") and "H100-SXM" in text and len(text) < len(piped) / 5
    rc, forced = on_terminal(args + ["--json"], gpuvet.env)
    assert rc == 0 and forced.lstrip().startswith("{")
    assert not gpuvet("results", "show", "1", "--text", check=0).stdout.lstrip().startswith("{")
    assert gpuvet("results", "show", "1", "--text", "--json", check=2).returncode == 2


def test_help_man_pages_on_a_terminal_and_is_roff_in_a_pipe(gpuvet):
    roff = gpuvet("help", "man", db=False, check=0).stdout
    assert roff.startswith(".") and ".TH GPUVET 1" in roff
    env = dict(gpuvet.env, MANPAGER="cat", PAGER="cat", MANWIDTH="100")
    rc, shown = on_terminal([gpuvet_bin(), "help", "man"], env)
    assert rc == 0, shown[-500:]
    lines = shown.splitlines()
    assert not [ln for ln in lines if ln.startswith((".TH", ".SH", ".TP", ".B "))], lines[:5]
    assert lines[0].startswith("GPUVET(1)") and "SYNOPSIS" in re.sub(".\b", "", shown)   # bold by overstrike


def test_fleetgen_has_a_command_line(tmp_path):
    gen = ROOT / "tests" / "fleetgen.py"
    h = subprocess.run([sys.executable, gen, "--help"], capture_output=True, text=True, timeout=60)
    assert h.returncode == 0 and "--runs N" in h.stdout and "--output FILE" in h.stdout
    out = tmp_path / "fleet.json"
    p = subprocess.run([sys.executable, gen, "--runs", "3", "-o", out, "--no-samples"], capture_output=True, timeout=120)
    assert p.returncode == 0
    fps = json.loads(out.read_text())
    assert len(fps) == 3 and len({f["run"]["uuid"] for f in fps}) == 3 and all(f["samples"] == [] for f in fps)
    bad = subprocess.run([sys.executable, gen], capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "--runs" in bad.stderr
