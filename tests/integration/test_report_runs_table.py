"""The report's runs table on a 1-GPU run (issue 40 item 3): older captures stored an all-reduce of
one GPU as busbw 0 (the real H100 standard capture of tests/fixtures/gpu/h100-2026-11-22 did,
params.ranks 1), newer ones skip it; either way the cell says "—" and why, never 0.  An 8-GPU run
(tests/fixtures/flags/clean_8gpu.json, synthetic) keeps its figure."""
import re

from conftest import FIXTURES
from helpers import fixture_fp, write_fp

H100 = FIXTURES / "gpu" / "h100-2026-11-22"


def runs_table(html):
    return re.search(r'<table class="sortable" id="runlist">(.*?)</table>', html, re.S).group(1)


def busbw_cells(html):
    """The all-reduce busbw cell of each run, by run id."""
    table = runs_table(html)
    heads = re.findall(r"<th>(.*?)</th>", table.split("</thead>")[0])
    col = next(i for i, h in enumerate(heads) if h.startswith("all-reduce busbw"))
    out = {}
    for tr in re.findall(r"<tr[^>]*>(.*?)</tr>", table.split("<tbody>")[1], re.S):   # a row is an anchor: <tr id=..>
        cells = re.findall(r"<td[^>]*>.*?</td>", tr, re.S)
        run = int(re.sub(r"<[^>]+>", "", cells[0]))
        out[run] = cells[col]
    return out


def test_one_gpu_allreduce_is_a_dash_with_the_reason(gpuvet, tmp_path):
    gpuvet("results", "import", H100 / "standard-profile.json", H100 / "contention" / "clean-1.json", check=0)
    gpuvet("results", "import", write_fp(tmp_path, fixture_fp("clean_8gpu")), check=0)
    out = tmp_path / "r.html"
    gpuvet("report", "-o", out, check=0)
    cells = busbw_cells(out.read_text())
    for run in (1, 2):      # busbw 0 stored (ranks 1), and none stored
        c = cells[run]
        assert ">0<" not in c and "\u2014 <small>1 GPU</small>" in c, c
        assert 'title="fewer than 2 GPUs: an all-reduce measures no link"' in c, c
    assert ">480.0<" in cells[3] or ">480<" in cells[3], cells[3]
