"""The report's Cluster section (issue #49, "Stored and reported"): with a stored cluster run, the
newest one's verdict and why, the nodes to drain (host, rank, address, why), the pair matrix as an
SVG heat map (the drained node's row and column at under a quarter of the median, the failed pair
crossed; above 64 nodes blocks of ranks, said) and the all-reduce curve or why there is none; no
section and no link without a cluster run.  Opened in headless Chromium as the other report tests
do.  The cluster runs are made-up ones the store's own writer stores
(tests/unit/test_store_cluster.c --write) until `gpuvet cluster run` stores real ones."""
import pytest

from helpers import CLUSTER_UUIDS, NULL, write_cluster
from test_report import dump_dom, needs_chromium, parse

UNDER_A_QUARTER = "#b2182b"     # html_cluster.c heat_bins: the colour of a pair under 25 % of the median


def store_with(gpuvet, *kinds):
    gpuvet("run", "--bench", "null", "-q", check=0, env=NULL)       # an ordinary run, as every report has
    for k in kinds:
        write_cluster(gpuvet.db, k)


def cluster_section(html):
    start = html.index('<section id="cluster">')
    return html[start:html.index("</section>", start)]


def cells(p):
    """The heat map's cells: (column, row) -> (fill, failed)."""
    out, cur = {}, None
    for tag, a in p.elements:
        if tag == "g" and a.get("class") == "hc":
            cur = (int(a["data-a"]), int(a["data-b"]), a.get("data-failed") == "1")
        elif tag == "rect" and cur is not None:
            out[cur[:2]] = (a["fill"], cur[2])
            cur = None
    return out


def test_the_section_names_the_node_to_drain_and_draws_the_pairs(gpuvet, tmp_path):
    store_with(gpuvet, "reject")
    out = tmp_path / "r.html"
    gpuvet("report", "-o", out, check=0)
    html = out.read_text()
    sec = cluster_section(html)
    assert '<a href="#cluster">Cluster</a>' in html
    assert '<b class="badge reject">REJECT</b> 1 node to drain, 1 bad link, 1 of 6 pairs not measured' in sec
    p = parse(sec)
    assert p.tables["cluster-drain"] == [["node-2<&>", "2", "198.18.0.3",
                                          "bad_node: every pair of rank 2 is slow: 2.3 GB/s median against the "
                                          "cluster median of 11.6 GB/s (20 %)"]]
    assert "node-2<&>" not in sec and "node-2&lt;&amp;&gt;" in sec       # a stored name is text, never markup
    assert [r[0] for r in p.tables["cluster-findings"]] == ["bad_link"]
    heat = cells(p)
    assert len(heat) == 12                                               # 6 pairs, both halves, no diagonal
    assert {k for k, (fill, _) in heat.items() if fill == UNDER_A_QUARTER} == \
        {(2, r) for r in (0, 1, 3)} | {(r, 2) for r in (0, 1, 3)}          # rank 2's row and column
    assert {k for k, (_, failed) in heat.items() if failed} == {(1, 3), (3, 1)}
    assert "No cluster all-reduce: no GPUs on the nodes." in sec
    assert len(p.tables["cluster-nodes"]) == 4


def test_the_report_opens_on_the_cluster_verdict_when_it_is_the_newest(gpuvet, tmp_path):
    """#56: a store whose newest item is a cluster run heads the page with the cluster's verdict, not one
    node's banner; a run after it heads the page as before."""
    write_cluster(gpuvet.db, "reject")
    out = tmp_path / "r.html"
    gpuvet("report", "-o", out, check=0)
    html = out.read_text()
    head = html[html.index("<header>"):html.index("</header>")]
    assert '<h1 id="verdict" class="bad">Cluster REJECT: 1 node to drain, 1 bad link, 1 of 6 pairs not measured' in head
    assert CLUSTER_UUIDS["reject"] in head and 'href="#cluster"' in head
    gpuvet("run", "--bench", "null", "-q", check=0, env=NULL)           # a run after it: the page opens on that run
    gpuvet("report", "-o", out, check=0)
    html = out.read_text()
    assert "Cluster REJECT" not in html[html.index("<header>"):html.index("</header>")]


def test_the_nodes_clocks_nics_and_the_runs_trust(gpuvet, tmp_path):
    store_with(gpuvet, "accept")
    out = tmp_path / "r.html"
    gpuvet("report", "-o", out, check=0)
    sec = cluster_section(out.read_text())
    assert "; authenticated (every rank proved the job's token); deadline 900 s" in sec, sec[:2000]
    p = parse(sec)
    rows = p.tables["cluster-nodes"]
    assert [r[7] for r in rows] == ["0 s", "0.250 s", "0.500 s"], rows
    assert [r[8] for r in rows] == ["12.50 GB/s"] * 3, [r[8] for r in rows]


def test_no_section_without_a_cluster_run(gpuvet, tmp_path):
    store_with(gpuvet)
    out = tmp_path / "r.html"
    gpuvet("report", "-o", out, check=0)
    html = out.read_text()
    assert 'id="cluster' not in html and 'href="#cluster"' not in html


def test_the_newest_with_its_all_reduce_curve(gpuvet, tmp_path):
    store_with(gpuvet, "reject", "accept")
    out = tmp_path / "r.html"
    gpuvet("report", "-o", out, check=0)
    sec = cluster_section(out.read_text())
    assert CLUSTER_UUIDS["accept"] in sec and CLUSTER_UUIDS["reject"] not in sec
    assert '<b class="badge accept">ACCEPT</b> all 3 nodes accepted' in sec
    assert "the newest of 2 cluster runs stored" in sec
    assert "Cluster all-reduce over every GPU, NCCL AWS Libfabric" in sec and "16 GiB" in sec
    assert 'id="cluster-drain"' not in sec


def test_a_large_cluster_is_drawn_in_blocks_of_ranks(gpuvet, tmp_path):
    store_with(gpuvet, "big")
    out = tmp_path / "r.html"
    gpuvet("report", "-o", out, check=0)
    sec = cluster_section(out.read_text())
    p = parse(sec)
    svg = next(a for t, a in p.elements if t == "svg" and a.get("id") == "cluster-heat")
    assert (svg["data-cells"], svg["data-ranks-per-cell"]) == ("50", "2")
    assert "100 nodes: each cell is a block of 2 ranks and shows its slowest pair" in sec
    heat = cells(p)
    assert all(heat[(20, r)][0] == UNDER_A_QUARTER for r in range(50) if r != 20)   # ranks 40-41 hold rank 41
    assert heat[(0, 1)][0] != UNDER_A_QUARTER
    # ranks 98-99 hold the missing rank 99: its block's cells are marked as partly not measured
    assert sec.count('fill="#d9d9d9"/>') == 2 * 49 + 1                    # its row and column, the legend
    assert [r[1] for r in p.tables["cluster-drain"]] == ["41", "99"]
    assert len(p.tables["cluster-nodes"]) == 64 and "The first 64 of 100 nodes" in sec


@needs_chromium
def test_the_section_renders_in_a_browser(gpuvet, tmp_path):
    store_with(gpuvet, "reject")
    out = tmp_path / "r.html"
    gpuvet("report", "-o", out, check=0)
    dom = dump_dom(out, tmp_path, "#cluster")
    assert 'data-js="ready"' in dom
    p = parse(cluster_section(dom))
    assert len(cells(p)) == 12
    assert p.tables["cluster-drain"][0][:3] == ["node-2<&>", "2", "198.18.0.3"]
    assert [t for t, _ in parse(dom).elements].count("script") == 1
