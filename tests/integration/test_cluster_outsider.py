"""An outsider beside `gpuvet cluster run` (#56): four ranks in network namespaces holding the job's
token, and a plain Python client (tests/servers/rdzv_client.py, written from the docs, not from
gpuvet's code) in a fifth.  The outsider, before the ranks arrive: floods rank 0 with bytes that are
no hello (cut off after 4 KiB: rank 0's memory does not grow by what it sent), holds 20 idle sockets
(they expire after 5 s and count against nothing: every real rank is accepted), says hello for rank
2 first without the token (refused with the reason, takes no rank), and, holding the token, says
hello for rank 1 from its own address (refused: SLURM_JOB_NODELIST names another host for rank 1).
Then a rank that holds the token and answers each instruction late, just inside each step's wait:
the run still ends within --deadline and names it.  Every node's NIC rate is its interface's sysfs
speed."""
import json
import time

import pytest

import cluster_helpers as ch
from cluster_helpers import answer, free_port, listening
from helpers import wait_for, within

pytestmark = pytest.mark.skipif(ch.available() is not None, reason=str(ch.available()))

NULL = {"GPUVET_TEST_BENCHES": "1", "SLURM_JOB_NODELIST": "198.18.0.[1-4]"}


def outsider(c, where, *args, token=None):
    return ch.outsider(c, 4, where, *args, token=token)


def vm_kib(pid, field):
    with open(f"/proc/{pid}/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith(field + ":"))


def test_an_outsider_takes_no_rank_and_holds_nothing(gpuvet, tmp_path):
    with ch.netns.Cluster(5) as c:
        port = free_port()
        where = f"{c.addr(0)}:{port}"
        args = ["--rendezvous", where, "--policy", ch.policy(tmp_path, ch.FAULT_POLICY), "--bench", "null", "--json",
                "--wait", "60", "--pair-timeout", "5"]
        ranks = ch.Ranks(gpuvet, tmp_path, 4, args, cluster=c, env=NULL, skip=(1, 2, 3), pre=["-v"])
        assert wait_for(lambda: listening(c, 0, port), within(20)), ranks.err(0)
        pid = ranks.procs[0].pid
        # (c) four sockets of 32 MiB each without a hello, at once
        before = vm_kib(pid, "VmHWM")
        floods = [answer(p) for p in [outsider(c, where, "flood", 32 << 20) for _ in range(4)]]
        grown = vm_kib(pid, "VmHWM") - before
        # (b) 20 idle sockets; (a) a hello for rank 2 without the token; rank 1 claimed from the wrong address
        idle = outsider(c, where, "idle", 20, 15)
        squat = answer(outsider(c, where, "squat", 2, 4))
        wrong = answer(outsider(c, where, "squat", 1, 4, ch.TOKEN, token=ch.TOKEN))
        time.sleep(6)   # the idle sockets outlive their 5 s before the real ranks come
        for i in (1, 2, 3):
            ranks.start(i)
        idled = answer(idle)
        res = ranks.wait(timeout=within(200))
        speeds = [c.ip(i, "cat", "/sys/class/net/eth0/speed", check=False).stdout.strip() for i in range(4)]
    rc, doc = ch.rank0_json(res)
    err0 = res[0][2]
    # (c) cut off after 4 KiB each: rank 0 grew by far less than the 128 MiB sent
    assert grown < 8 << 10, (grown, floods)
    assert err0.count("refused: it sent 4 KiB without a hello") == 4, err0[-3000:]
    # (b) every idle socket dropped 5 s after its challenge, told why; every real rank arrived
    assert len(idled["closed"]) == 20 and all("no hello within 5 s" in why for _, why in idled["closed"]), idled
    assert all(4.5 <= t < within(5) for t, _ in idled["closed"]), idled
    assert [n["state"] for n in doc["nodes"]] == ["ok"] * 4, doc["nodes"]
    # (a) the squatter was refused with the reason and took no rank: rank 2 is the real one, from its address
    assert squat["challenge"]["auth"] is True and "bad proof" in squat["answer"]["refused"], squat
    assert "came from 198.18.0.5, but its host in SLURM_JOB_NODELIST, 198.18.0.2, is 198.18.0.2" in \
        wrong["answer"]["refused"], wrong
    assert [n["addr"] for n in doc["nodes"]] == [c.addr(i) for i in range(4)], doc["nodes"]
    assert doc["authenticated"] is True and len(ch.measured(doc)) == 6, doc["pairs"]
    # each node's NIC rate: its veth's sysfs speed (Mb/s), as GB/s
    for n, mbps in zip(doc["nodes"], speeds):
        if mbps.lstrip("-").isdigit() and int(mbps) > 0:
            assert n["link_gbps"] == pytest.approx(int(mbps) / 8000) and n["link_source"] == f"sysfs eth0 speed {mbps} Mb/s"
        else:
            assert n["link_gbps"] is None, n
    assert [r[0] for r in res.values()] == [rc] + [res[i][0] for i in (1, 2, 3)]


def test_a_rank_that_answers_late_does_not_stretch_the_run(gpuvet, tmp_path):
    """(d) Rank 3 holds the token and answers every instruction 18 s after it came: inside each step's
    wait (a round waits --pair-timeout + 15 s = 20 s), so without a deadline every round would last
    18 s.  With --deadline 45 the run ends within it, the rounds it has no time for are said so, and
    rank 3 is named too slow."""
    deadline = 45
    with ch.netns.Cluster(4) as c:
        where = f"{c.addr(0)}:{free_port()}"
        args = ["--rendezvous", where, "--policy", ch.policy(tmp_path, ch.FAULT_POLICY), "--bench", "null", "--json",
                "--wait", "30", "--pair-timeout", "5", "--deadline", deadline]
        ranks = ch.Ranks(gpuvet, tmp_path, 4, args, cluster=c, env=NULL, skip=(3,), pre=["-v"])
        slow = ch.outsider(c, 3, where, "slow", "3", "4", "18", token=ch.TOKEN)
        res = ranks.wait(timeout=within(deadline + 60))
        slow_out, slow_err = slow.communicate(timeout=within(120))
    rc, doc = ch.rank0_json(res)
    assert ranks.elapsed[0] < deadline + within(3), (ranks.elapsed[0], res[0][2][-3000:])
    assert doc["deadline_s"] == deadline
    three = doc["nodes"][3]
    assert three["state"] == "lost" and three["why"].startswith("too slow: "), three
    assert "--deadline 45 s" in three["why"], three
    skipped = [p for p in doc["pairs"] if p["state"] == "skipped" and "deadline" in p["why"]]
    assert skipped, doc["pairs"]
    assert rc in (1, 3) and 3 in ch.drained(doc), doc["findings"]
    assert all(p["state"] != "failed" for p in doc["pairs"] if 3 in (p["a"], p["b"])), doc["pairs"]
    assert json.loads(slow_out)["steps"][0] == ["fingerprint", True], slow_out + slow_err   # it spoke the protocol
