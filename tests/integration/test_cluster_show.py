"""`gpuvet cluster show [ID] [--json]` and the stored cluster run (issue #49, "Stored and reported"):
the verdict and why first, the nodes to drain with host, rank, address and why, the bad link, the
pairs not measured, the all-reduce or why none; the newest by default, a number or uuid prefix;
one-line errors with exit 2 for no cluster run, an unknown or ambiguous ID, a truncated store;
`results merge` copies cluster runs without duplicates; an older store is read as having none.
The cluster runs are written by the store's own writer (tests/unit/test_store_cluster.c --write)
until `gpuvet cluster run` stores real ones."""
import json
import os
import sqlite3

import pytest

from helpers import CLUSTER_UUIDS, sha, write_cluster


def lines(p):
    return p.stdout.splitlines()


def test_text_says_the_verdict_first_then_what_to_drain(gpuvet):
    write_cluster(gpuvet.db, "reject")
    p = gpuvet("cluster", "show", check=0)
    out = lines(p)
    assert out[0] == "REJECT: 1 node to drain, 1 bad link, 1 of 6 pairs not measured (4 nodes, 6 pairs)", out
    assert out[1].startswith("Drain: node-2<&> (rank 2, 198.18.0.3): bad_node: every pair of rank 2 is slow: "), out
    assert [x for x in out if x.startswith("Drain:")] == [out[1]]          # the bad link drains nobody
    assert out[2].startswith("Bad link: node-0 (rank 0) - node-3 (rank 3): pair 0-3 alone is slow"), out
    assert "  not measured: 1-3 failed (timed out after 20 s)" in out
    pairs = next(x for x in out if x.startswith("Pairs:"))
    assert "5 of 6 measured host to host over libfabric tcp in 3 rounds (schedule all)" in pairs
    assert "median 11.6 GB/s" in pairs and "stated 400 GB/s per node" in pairs
    slowest = next(x for x in out if x.startswith("  slowest"))
    assert slowest.split(": ", 1)[1].startswith("0-2 2.36 / 2.34 GB/s (20 %)"), slowest
    assert "All-reduce: none: no GPUs on the nodes" in out
    assert out[-1].startswith("Cluster run " + CLUSTER_UUIDS["reject"] + ": 4 nodes by slurm")
    assert p.stderr == ""


def test_the_nodes_clocks_nics_and_the_runs_trust_are_said(gpuvet):
    """#56: what the runtime measured of each node (its clock against rank 0's, its NIC's own rate)
    and whether the run was authenticated, where a person reads the run."""
    write_cluster(gpuvet.db, "accept")
    out = lines(gpuvet("cluster", "show", check=0))
    assert "Nodes: clocks within 0.5 s of rank 0's (the farthest: rank 2, +0.5 s); NIC rate 12.5 GB/s stated on 3 of 3 " \
           "nodes (libfabric efa rdmap16s0 100 Gbps)" in out, out
    assert out[-1].endswith(", deadline 900 s, authenticated (every rank proved the job's token)"), out
    write_cluster(gpuvet.db, "reject")
    out = lines(gpuvet("cluster", "show", check=0))
    assert out[-1].endswith("not authenticated (no GPUVET_CLUSTER_TOKEN: anyone who reached rank 0 could take part)"), out
    assert not [x for x in out if x.startswith("Nodes:")]                 # nothing measured of them: nothing said
    doc = json.loads(gpuvet("cluster", "show", "1", "--json", check=0).stdout)
    assert doc["authenticated"] is True and doc["nodes"][1]["clock_skew_s"] == 0.25
    assert doc["nodes"][1]["metrics"][0]["remeasured"] == 183.5


def test_newest_by_default_number_or_prefix_otherwise(gpuvet):
    rej = write_cluster(gpuvet.db, "reject", "5eed0123-4567-4890-8abc-def012345678")
    write_cluster(gpuvet.db, "accept")
    out = lines(gpuvet("cluster", "show", check=0))
    assert out[0].startswith("ACCEPT: all 3 nodes accepted and 3 of 3 pairs measured, median 11.7 GB/s"), out
    assert not any(x.startswith(("Drain:", "Bad link:")) for x in out)
    assert "All-reduce: peak bus bandwidth 299 GB/s at 16 GiB (algbw 156 GB/s), 24 GPUs over NCCL AWS Libfabric;" \
        " 8 sizes from 1 MiB to 16 GiB" in out
    for ident in ("1", "5eed", rej.upper()):
        assert lines(gpuvet("cluster", "show", ident, check=0))[0].startswith("REJECT:"), ident


def test_json_is_the_stored_run_whole(gpuvet):
    write_cluster(gpuvet.db, "reject")
    doc = gpuvet.json("cluster", "show", "--json")
    assert doc["uuid"] == CLUSTER_UUIDS["reject"] and doc["verdict"] == "reject" and doc["nnodes"] == 4
    assert [n["host"] for n in doc["nodes"]] == ["node-0", "node-1", "node-2<&>", "node-3"]
    assert [(f["rank"], f["drain"]) for f in doc["findings"]] == [(2, True), (0, False)]
    failed = [q for q in doc["pairs"] if q["state"] == "failed"]
    assert len(doc["pairs"]) == 6 and len(failed) == 1
    assert (failed[0]["a"], failed[0]["b"], failed[0]["why"]) == (1, 3, "timed out after 20 s")
    assert failed[0]["gbps_ab"] is None          # not measured: NaN in the store's NULL, null here
    assert doc["nodes"][1]["metrics"][1]["value"] is None


@pytest.mark.parametrize("args,said", [
    ((), "has no cluster runs (gpuvet cluster run stores them)"),
    (("7",), "no cluster run '7' in the store"),
    (("ffff0000",), "no cluster run 'ffff0000' in the store"),
    (("c1a",), "no cluster run 'c1a' (give its number or a uuid prefix of at least 4 characters)"),
    (("c1a5e7e1",), "cluster run 'c1a5e7e1' is ambiguous: give more of its uuid"),
    (("1", "2"), "takes one cluster run"),
    (("--jsn",), "--jsn"),
])
def test_what_cannot_be_shown_is_one_line_and_exit_2(gpuvet, args, said):
    if args:
        write_cluster(gpuvet.db, "reject")
        write_cluster(gpuvet.db, "accept")
    else:
        gpuvet("results", "list", check=0)      # a store, with no cluster run
    p = gpuvet("cluster", "show", *args, check=2)
    assert p.stdout == ""
    assert p.stderr.startswith("gpuvet: ") and p.stderr.count("\n") == 1 and said in p.stderr, p.stderr


def test_a_truncated_store_is_an_error_untouched(gpuvet):
    write_cluster(gpuvet.db, "big")
    con = sqlite3.connect(gpuvet.db)
    con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    con.execute("PRAGMA journal_mode=DELETE")
    con.close()
    size = os.path.getsize(gpuvet.db)
    with open(gpuvet.db, "r+b") as f:
        f.truncate(size // 2)
    before = sha(gpuvet.db)
    for args in ((), ("--json",)):
        p = gpuvet("cluster", "show", *args)
        assert p.returncode == 2, (p.stdout, p.stderr)
        assert p.stderr.startswith("gpuvet: ") and p.stderr.count("\n") == 1, p.stderr
    assert sha(gpuvet.db) == before


def test_merge_copies_cluster_runs_once(gpuvet, tmp_path):
    other = tmp_path / "other.db"
    write_cluster(other, "reject")
    write_cluster(other, "big")
    write_cluster(gpuvet.db, "accept")
    write_cluster(gpuvet.db, "reject")
    p = gpuvet("results", "merge", other, check=0)
    assert "1 cluster run(s) added, 1 already present" in p.stdout, p.stdout
    p = gpuvet("results", "merge", other, check=0)
    assert "0 cluster run(s) added, 2 already present" in p.stdout, p.stdout
    con = sqlite3.connect(gpuvet.db)
    assert con.execute("SELECT count(*) FROM clusters").fetchone()[0] == 3
    assert con.execute("SELECT count(*) FROM cluster_pairs").fetchone()[0] == 3 + 6 + 4950
    con.close()
    big = gpuvet.json("cluster", "show", CLUSTER_UUIDS["big"], "--json")
    assert big["nnodes"] == 100 and sum(f["drain"] for f in big["findings"]) == 2
    assert big == json.loads(gpuvet("--db", other, "cluster", "show", "--json", db=False, check=0).stdout)


def test_merge_refuses_another_cluster_run_under_a_stored_uuid(gpuvet, tmp_path):
    """One uuid, one cluster run, as for runs: nothing of that store is merged, exit 2."""
    other = tmp_path / "other.db"
    write_cluster(other, "accept", CLUSTER_UUIDS["reject"])
    write_cluster(other, "big")
    write_cluster(gpuvet.db, "reject")
    before = gpuvet("cluster", "show", "--json", check=0).stdout
    p = gpuvet("results", "merge", other)
    assert p.returncode == 2 and "another cluster run under the uuid " + CLUSTER_UUIDS["reject"] in p.stderr, p.stderr
    con = sqlite3.connect(gpuvet.db)
    assert [r[0] for r in con.execute("SELECT uuid FROM clusters")] == [CLUSTER_UUIDS["reject"]]
    con.close()
    assert gpuvet("cluster", "show", "--json", check=0).stdout == before


def test_an_older_store_has_none_and_is_not_written(gpuvet):
    write_cluster(gpuvet.db, "reject")
    con = sqlite3.connect(gpuvet.db)
    con.executescript("DROP TABLE cluster_findings; DROP TABLE cluster_allreduce; DROP TABLE cluster_pairs;"
                      " DROP TABLE cluster_metrics; DROP TABLE cluster_nodes; DROP TABLE clusters;"
                      " PRAGMA user_version = 7; PRAGMA wal_checkpoint(TRUNCATE);")
    con.close()
    before = sha(gpuvet.db)
    p = gpuvet("cluster", "show", check=2)
    assert "has no cluster runs" in p.stderr and p.stderr.count("\n") == 1, p.stderr
    assert sha(gpuvet.db) == before                # read read-only, as it is
    gpuvet("results", "list", check=0)
    write_cluster(gpuvet.db, "accept")             # a writer migrates it
    assert lines(gpuvet("cluster", "show", check=0))[0].startswith("ACCEPT:")
