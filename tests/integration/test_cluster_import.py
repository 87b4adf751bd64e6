"""`gpuvet cluster import FILE...`: a cluster run from the JSON `cluster show --json` (or `cluster run
--json`) printed reaches another store whole, the same document back; input like any other (not JSON,
not a cluster run, truncated, missing, a directory) is one line and exit 2 with nothing stored from it
and nothing stored before touched; one uuid, one cluster run (the same document again is already
present, a different one under its uuid is refused).  #56 item 7: the verdict is derived again from
the document's own pairs and nodes, never believed; a figure outside physical bounds, a start in the
future, or a verdict, findings, drain list or exit code its pairs and nodes do not give is refused,
exit 2, naming the field."""
import json
import sqlite3

import pytest

from helpers import CLUSTER_UUIDS, integrity_ok, write_cluster


def printed(gpuvet, tmp_path, kind="reject", name=None):
    """A cluster run of KIND as `cluster show --json` prints it after gpuvet's analysis judged it, in a
    file; (path, its text)."""
    src = tmp_path / f"src-{kind}.db"
    write_cluster(src, kind + "-judged")
    text = gpuvet("--db", src, "cluster", "show", "--json", db=False).stdout
    path = tmp_path / (name or f"{kind}.json")
    path.write_text(text)
    return path, text


def clusters(db):
    with sqlite3.connect(db) as c:
        return [r[0] for r in c.execute("SELECT uuid FROM clusters ORDER BY id")]


def test_a_printed_cluster_run_comes_back_the_same(gpuvet, tmp_path):
    path, text = printed(gpuvet, tmp_path)
    p = gpuvet("cluster", "import", path)
    assert p.returncode == 0 and p.stderr.startswith(f"{path}: cluster run {CLUSTER_UUIDS['reject']} (4 nodes, "), \
        p.stderr
    assert gpuvet("cluster", "show", "--json").stdout == text
    again = gpuvet("cluster", "import", path)
    assert again.returncode == 0 and again.stderr == f"{path}: cluster run {CLUSTER_UUIDS['reject']} already present\n"
    assert clusters(gpuvet.db) == [CLUSTER_UUIDS["reject"]]


def test_standard_input_and_several_files(gpuvet, tmp_path):
    rej, _ = printed(gpuvet, tmp_path, "reject")
    acc, acc_text = printed(gpuvet, tmp_path, "accept")
    p = gpuvet("cluster", "import", "-", rej, input=acc_text)
    assert p.returncode == 0, p.stderr
    assert p.stderr.splitlines()[0].startswith(f"standard input: cluster run {CLUSTER_UUIDS['accept']} ")
    assert sorted(clusters(gpuvet.db)) == sorted([CLUSTER_UUIDS["accept"], CLUSTER_UUIDS["reject"]])


def test_bad_input_is_one_line_and_exit_2_and_nothing_stored_is_touched(gpuvet, tmp_path):
    good, text = printed(gpuvet, tmp_path, "accept")
    assert gpuvet("cluster", "import", good).returncode == 0
    before = gpuvet("cluster", "show", "--json").stdout
    doc = json.loads(printed(gpuvet, tmp_path, "reject")[1])
    out_of_range = dict(doc, pairs=[dict(doc["pairs"][0], b=9)])
    cases = {
        "truncated.json": (text[: len(text) // 2], "not JSON"),
        "empty.json": ("", "not JSON"),
        "array.json": ("[]", "cluster run"),
        "no-nodes.json": (json.dumps({k: v for k, v in doc.items() if k != "nnodes"}), "'nnodes'"),
        "pair-out-of-range.json": (json.dumps(out_of_range), "cluster run"),
        "duplicate-key.json": ('{"uuid": "a", "uuid": "b"}', "not JSON"),
    }
    for name, (body, said) in cases.items():
        (tmp_path / name).write_text(body)
        p = gpuvet("cluster", "import", tmp_path / name)
        err = p.stderr.splitlines()
        assert p.returncode == 2 and len(err) == 1 and f"{tmp_path / name}: " in err[0] and said in err[0], \
            (name, p.stderr)
    for missing in (tmp_path / "absent.json", tmp_path):
        p = gpuvet("cluster", "import", missing)
        assert p.returncode == 2 and len(p.stderr.splitlines()) == 1 and "cannot be read" in p.stderr, p.stderr
    # a bad file among good ones: the good ones stored, the bad one said, exit 2
    rej = tmp_path / "reject.json"
    p = gpuvet("cluster", "import", tmp_path / "truncated.json", rej)
    assert p.returncode == 2 and CLUSTER_UUIDS["reject"] in clusters(gpuvet.db), p.stderr
    assert integrity_ok(gpuvet.db)
    assert gpuvet("cluster", "show", "1", "--json").stdout == before
    assert gpuvet("cluster", "import").returncode == 2


def test_another_cluster_run_under_a_stored_uuid_is_refused(gpuvet, tmp_path):
    path, text = printed(gpuvet, tmp_path)
    assert gpuvet("cluster", "import", path).returncode == 0
    doc = json.loads(printed(gpuvet, tmp_path, "accept")[1])
    doc["uuid"] = CLUSTER_UUIDS["reject"]
    other = tmp_path / "other.json"
    other.write_text(json.dumps(doc))
    p = gpuvet("cluster", "import", other)
    assert p.returncode == 2 and "another cluster run under the uuid " + CLUSTER_UUIDS["reject"] in p.stderr, p.stderr
    assert gpuvet("cluster", "show", "--json").stdout == text


def edited(doc, change):
    d = json.loads(json.dumps(doc))
    change(d)
    return d


def set_pair(k, key, v):
    return lambda d: d["pairs"][k].__setitem__(key, v)


# each: what the edit does to a judged document (4 nodes, rank 2 at a fifth), and the field the refusal names
FORGED = {
    "the issue's forgery: accept over a bad node": (
        lambda d: d.update(verdict="accept", exit_code=0, findings=[], drain=[], links=[]), "'verdict' is accept"),
    "an exit code against its verdict": (lambda d: d.update(exit_code=0), "'exit_code'"),
    "a finding dropped": (lambda d: d.update(findings=d["findings"][1:]), "'findings' disagree"),
    "a node to drain dropped": (lambda d: d.update(drain=d["drain"][:1]), "'drain' lists 1 nodes to drain"),
    "a healthy node to drain added": (lambda d: d["drain"].append(dict(d["drain"][0], rank=1)), "'drain' lists 3"),
    "a negative rate": (set_pair(0, "gbps_ab", -1.0), "'pairs[0].gbps_ab' is -1"),
    "a rate of 1e308": (set_pair(1, "gbps_ba", 1e308), "'pairs[1].gbps_ba' is 1e+308"),
    "a latency of a day": (set_pair(2, "lat_us", 86400e6), "'pairs[2].lat_us'"),
    "a stated rate of -400": (lambda d: d["stated"].__setitem__("gbps", -400.0), "'stated.gbps' is -400"),
    "a stated rate of its own": (lambda d: d["stated"].__setitem__("gbps", 4000.0), "network.csv"),
    "a start in 2099": (lambda d: d.update(started_at="2099-01-01T00:00:00Z"), "'started_at'"),
    "a start that is no date": (lambda d: d.update(started_at="yesterday"), "not an ISO 8601 time"),
    "a clock 1e12 s off": (lambda d: d["nodes"][1].__setitem__("clock_skew_s", 1e12), "'nodes[1].clock_skew_s'"),
    "a median of its own": (lambda d: d.update(pair_median_gbps=11.6), "'pair_median_gbps'"),
    "another policy": (lambda d: d.update(policy="lenient sha256:0123456789ab"), "give the policy it names with --policy"),
}


@pytest.mark.parametrize("case", sorted(FORGED))
def test_a_document_its_own_pairs_and_nodes_contradict_is_refused(gpuvet, tmp_path, case):
    change, said = FORGED[case]
    doc = json.loads(printed(gpuvet, tmp_path)[1])
    assert doc["verdict"] == "reject" and [d["rank"] for d in doc["drain"]] == [2, 3], doc["findings"]
    forged = tmp_path / "forged.json"
    forged.write_text(json.dumps(edited(doc, change)))
    p = gpuvet("cluster", "import", forged)
    err = p.stderr.splitlines()
    assert p.returncode == 2 and len(err) == 1 and said in err[0], (case, p.stderr)
    assert clusters(gpuvet.db) == []


def test_the_policy_it_names_is_the_one_it_is_judged_under(gpuvet, tmp_path):
    """A document judged under a policy of the site's own is derived again under that policy, given."""
    pol = tmp_path / "site.yaml"
    pol.write_text("name: site\nrules:\n  - {metric: host.membw.copy.gbps, min: 0.001}\ncluster:\n"
                   "  - metric: cluster.pair.gbps\n    min_fraction_of_healthy: 0.1\n")
    path, _ = printed(gpuvet, tmp_path)
    p = gpuvet("cluster", "import", "--policy", pol, path)
    assert p.returncode == 2 and "'policy' is 'default sha256:" in p.stderr and "under 'site sha256:" in p.stderr, p.stderr
    assert gpuvet("cluster", "import", path).returncode == 0   # the built-in, which it names


def test_a_start_before_its_gpus_were_announced_is_refused(gpuvet, tmp_path):
    """The start is checked as a run's is (results/fp_rows.c): an H100 cluster vetted in 2021 is a wrong
    clock or a forged date."""
    doc = json.loads(printed(gpuvet, tmp_path, "accept")[1])
    assert doc["verdict"] == "accept" and doc["nodes"][0]["gpu_model"] == "H100-SXM"
    forged = tmp_path / "forged.json"
    forged.write_text(json.dumps(dict(doc, started_at="2021-06-01T00:00:00Z")))
    p = gpuvet("cluster", "import", forged)
    assert p.returncode == 2 and "'started_at' 2021-06-01T00:00:00Z is before the H100-SXM was announced" in p.stderr, \
        p.stderr
