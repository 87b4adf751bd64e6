#!/usr/bin/env python3
"""screenshot_inputs.py - the store behind the README's screenshot, and what the picture rests on.

    tests/bench/screenshot_inputs.py DIR [--write-manifest]

Builds DIR/s.db and DIR/report.html from the real captures of tests/fixtures/gpu/ (the one
recipe: tests/bench/report_screenshot.sh calls it, tests/test_screenshot.py calls it), then prints
the screenshot's inputs as JSON: how each run was named (catalog names the tags must still
accept), the references the first screen quotes (common/gpus.c), and the measured instance types
with the prices the ranking used.  With --write-manifest it also writes them, with the PNG's
SHA-256, to reports/screenshot.json, which tests/test_screenshot.py holds the code to.
"""
import hashlib
import json
import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
GPU = ROOT / "tests" / "fixtures" / "gpu"
PNG = ROOT / "reports" / "screenshot.png"
MANIFEST = ROOT / "reports" / "screenshot.json"

# run ids in import order: the capture, and how it is named (the captures say nothing of it)
RUNS = [
    ("h100-2026-11-22/contention/clean-1.json", "lambda", "gpu_1x_h100_sxm5", False),
    ("h100-2026-11-22/contention/clean-2.json", "lambda", "gpu_1x_h100_sxm5", False),
    ("h100-2026-11-22/contention/loaded-1.json", "lambda", "gpu_1x_h100_sxm5", False),
    ("h100-2026-11-22/standard-profile.json", "lambda", "gpu_1x_h100_sxm5", False),
    # no catalog sells one H200: stored as a custom machine (custom:lambda)
    ("h200-2026-11-22/quick-profile.json", "lambda", "gpu_1x_h200", True),
    ("h200-2026-11-22/standard-profile.json", "lambda", "gpu_1x_h200", True),
]


def gpuvet(bin_, db, *args, check=True):
    env = dict(os.environ, GPUVET_NO_METADATA="1")
    p = subprocess.run([bin_, "-q", "--db", str(db), *map(str, args)], capture_output=True, text=True, env=env,
                       timeout=300)
    if check and p.returncode != 0:
        raise SystemExit("gpuvet %s: exit %d: %s" % (" ".join(map(str, args)), p.returncode, p.stderr.strip()))
    return p


def build(bin_, d):
    """The store and the report; returns the report's path."""
    d = Path(d)
    db = d / "s.db"
    gpuvet(bin_, db, "results", "import", *[GPU / r[0] for r in RUNS])
    for i, (_, prov, sku, custom) in enumerate(RUNS, 1):
        gpuvet(bin_, db, "results", "tag", i, "--provider", prov, "--sku", sku, *(["--custom"] if custom else []))
        gpuvet(bin_, db, "accept", "--run", i, check=False)   # exit 1/3 are verdicts too
    gpuvet(bin_, db, "rank", "--json")                        # loads the shipped price catalogs
    gpuvet(bin_, db, "report", "-o", d / "report.html")
    return d / "report.html", db


def inputs(bin_, d):
    """What the picture shows that the code decides: the heading, the policy's digest, names, references, prices."""
    html, db = build(bin_, d)
    page = html.read_text()
    answer = page[page.index('id="answer"'):page.index("</section>", page.index('id="answer"'))]
    text = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", answer))
    refs = sorted(set(re.findall(r"of the (\S+) reference \(([^)]+)\)", text)) |
                  set(re.findall(r"of a healthy (\S+) \(([^)]+)\)", text)))
    rank = json.loads(gpuvet(bin_, db, "rank", "--json").stdout)
    head = re.search(r'<h1 id="verdict"[^>]*>(.*?)</h1>', page, re.S).group(1)
    digest = re.search(r'id="page-policy">.*?<code>(sha256:[0-9a-f]+)</code>', page, re.S).group(1)
    return {
        # the first screen's words: its heading, and the digest of the policy every verdict is by
        "first_heading": re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", head)).strip(),
        "policy_digest": digest,
        "runs": [{"capture": r[0], "provider": r[1], "instance_type": r[2], "custom": r[3]} for r in RUNS],
        "references_quoted": [list(x) for x in refs],
        "ranked": [[x["provider"], x["instance_type"], x["price_per_hour"], x["price_source"]]
                   for x in rank["rows"] if not x["estimate"]],
        "unpriced": [list(x) for x in sorted({(u["provider"], u["instance_type"]) for u in rank["unpriced"]})],
    }


def png_sha256():
    return hashlib.sha256(PNG.read_bytes()).hexdigest()


def main():
    if len(sys.argv) < 2:
        raise SystemExit(__doc__)
    bin_ = os.environ.get("GPUVET_BIN", str(ROOT / "build" / "gpuvet"))
    got = inputs(bin_, sys.argv[1])
    if "--write-manifest" in sys.argv[2:]:
        MANIFEST.write_text(json.dumps(dict(got, png_sha256=png_sha256()), indent=1) + "\n")
    print(json.dumps(got, indent=1))


if __name__ == "__main__":
    main()
