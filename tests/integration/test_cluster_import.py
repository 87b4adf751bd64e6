"""`gpuvet cluster import FILE...`: a cluster run from the JSON `cluster show --json` (or `cluster run
--json`) printed reaches another store whole, the same document back; input like any other (not JSON,
not a cluster run, truncated, missing, a directory) is one line and exit 2 with nothing stored from it
and nothing stored before touched; one uuid, one cluster run (the same document again is already
present, a different one under its uuid is refused)."""
import json
import sqlite3

from helpers import CLUSTER_UUIDS, integrity_ok, write_cluster


def printed(gpuvet, tmp_path, kind="reject", name=None):
    """A cluster run of KIND as `cluster show --json` prints it, in a file; (path, its text)."""
    src = tmp_path / f"src-{kind}.db"
    write_cluster(src, kind)
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
    doc = json.loads(text)
    doc["verdict"], doc["exit_code"], doc["drain"], doc["findings"] = "accept", 0, [], []
    forged = tmp_path / "forged.json"
    forged.write_text(json.dumps(doc))
    p = gpuvet("cluster", "import", forged)
    assert p.returncode == 2 and "another cluster run under the uuid " + CLUSTER_UUIDS["reject"] in p.stderr, p.stderr
    assert gpuvet("cluster", "show", "--json").stdout == text
