"""The README's screenshot stays true to the code (issue 40 item 5).

reports/screenshot.png is drawn by tests/bench/report_screenshot.sh from the real captures, and
reports/screenshot.json records, with the PNG's SHA-256, what the picture rests on: the catalog
names the runs are tagged with, the references the first screen quotes (common/gpus.c), the
measured types ranked with their prices, the types listed as unpriced
(tests/bench/screenshot_inputs.py, the one recipe).  Rebuilt here with the binary under test, the
inputs must be the same; when a reference, a catalog name or price, or the ranking's rows change,
this fails until the screenshot is drawn again (`make docs` draws it).  The 2026-11-23 picture quoted an
H200 reference of 676.6 and tagged the H200 as lambda gpu_1x_h200, which tags now refuse; the 2026-11-27 one
quoted 823.1 (issue 58: the median of the 2026-11-28 captures since) and a stale policy digest."""
import importlib.util
import json
from pathlib import Path

from helpers import gpu_reference

ROOT = Path(__file__).resolve().parent.parent.parent
spec = importlib.util.spec_from_file_location("screenshot_inputs", ROOT / "tests" / "bench" / "screenshot_inputs.py")
shot = importlib.util.module_from_spec(spec)
spec.loader.exec_module(shot)

REDRAW = "run tests/bench/report_screenshot.sh and commit reports/screenshot.png and reports/screenshot.json"


def stale(manifest, got):
    """The inputs whose recorded value differs from what the code gives now."""
    return sorted(k for k in set(manifest) | set(got) if k != "png_sha256" and manifest.get(k) != got.get(k))


def test_the_manifest_describes_the_committed_picture():
    manifest = json.loads(shot.MANIFEST.read_text())
    assert manifest["png_sha256"] == shot.png_sha256(), "screenshot.png changed without its manifest: " + REDRAW


def test_the_screenshots_inputs_match_the_code(gpuvet, tmp_path):
    manifest = json.loads(shot.MANIFEST.read_text())
    got = json.loads(json.dumps(shot.inputs(shot.os.environ.get("GPUVET_BIN", str(ROOT / "build" / "gpuvet")),
                                            tmp_path)))
    diff = stale(manifest, got)
    assert not diff, "the screenshot's inputs changed (%s): %s; now %s" % (
        ", ".join(diff), REDRAW, json.dumps({k: got.get(k) for k in diff}))
    # what the first screen quotes, as the references say now (common/gpus.c: the H200's bf16, measured)
    assert ["H200", "%g, measured" % gpu_reference("H200")] in got["references_quoted"]


def test_a_changed_reference_or_name_is_caught():
    manifest = json.loads(shot.MANIFEST.read_text())
    old = json.loads(json.dumps(manifest))
    old["references_quoted"] = [["H200", "676.6, measured"] if r[0] == "H200" and "measured" in r[1] else r
                                for r in old["references_quoted"]]
    old["runs"][-1]["custom"] = False         # the 2026-11-23 picture: lambda gpu_1x_h200, refused now
    assert stale(old, manifest) == ["references_quoted", "runs"]
