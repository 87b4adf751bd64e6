"""Network namespaces as cluster nodes for `gpuvet cluster run` tests (#49).

Each node is a network namespace the test creates, joined to one bridge of its own by a veth
pair; addresses lie only inside the namespaces, in 198.18.0.0/15 (RFC 2544's range for
benchmarking); the bridge has none, so the host's routes never see them and two clusters of two
tests may use the same addresses on their own bridges.  Links are shaped with tc (HTB, both
ways where it matters) so the healthy rate is the test's and not the machine's load.  Everything
is removed on exit, also after a failed test.  Needs root and iproute2 (`make deps-test`).
"""
import contextlib
import os
import secrets
import shutil
import subprocess
import threading
import time


def available():
    """None when namespaces can be made here, else why not (the skip reason)."""
    if os.geteuid() != 0:
        return "network namespaces need root"
    if not shutil.which("ip") or not shutil.which("tc"):
        return "iproute2 (ip, tc) is not installed"
    name = "gvprobe" + secrets.token_hex(3)
    p = subprocess.run(["ip", "netns", "add", name], capture_output=True, text=True)
    if p.returncode:
        return f"ip netns add: {p.stderr.strip()}"
    subprocess.run(["ip", "netns", "del", name], capture_output=True)
    return None


def sh(*args, check=True):
    p = subprocess.run([str(a) for a in args], capture_output=True, text=True)
    if check and p.returncode:
        raise RuntimeError(f"{' '.join(map(str, args))}: {p.stderr.strip()}")
    return p


class Cluster:
    """n namespaces on one bridge; node i has address 198.18.0.(i+1) on its eth0."""

    def __init__(self, n, rate_mbit=400):
        self.n = n
        self.rate = rate_mbit
        self.tag = secrets.token_hex(3)          # names stay under 15 characters
        self.bridge = f"gvb{self.tag}"
        self.ns = [f"gv{self.tag}n{i}" for i in range(n)]
        self.host_if = [f"gv{self.tag}h{i}" for i in range(n)]

    def addr(self, i):
        return f"198.18.0.{i + 1}"

    def ip(self, i, *args, check=True):
        return sh("ip", "netns", "exec", self.ns[i], *args, check=check)

    def __enter__(self):
        try:
            sh("ip", "link", "add", self.bridge, "type", "bridge")
            sh("ip", "link", "set", self.bridge, "up")
            for i in range(self.n):
                sh("ip", "netns", "add", self.ns[i])
                sh("ip", "link", "add", self.host_if[i], "type", "veth", "peer", "name", "eth0",
                   "netns", self.ns[i])
                sh("ip", "link", "set", self.host_if[i], "master", self.bridge)
                sh("ip", "link", "set", self.host_if[i], "up")
                self.ip(i, "ip", "addr", "add", f"{self.addr(i)}/24", "dev", "eth0")
                self.ip(i, "ip", "link", "set", "eth0", "up")
                self.ip(i, "ip", "link", "set", "lo", "up")
                self._egress(i, self.rate, first=True)
        except Exception:
            self.__exit__(None, None, None)
            raise
        return self

    def __exit__(self, *exc):
        for i in range(self.n):
            sh("ip", "netns", "pids", self.ns[i], check=False)
            for pid in sh("ip", "netns", "pids", self.ns[i], check=False).stdout.split():
                with contextlib.suppress(OSError):
                    os.kill(int(pid), 9)
            sh("ip", "link", "del", self.host_if[i], check=False)
            sh("ip", "netns", "del", self.ns[i], check=False)
        sh("ip", "link", "del", self.bridge, check=False)

    def _egress(self, i, mbit, first=False):
        """Node i's sending side: an HTB whose default class carries everything at mbit."""
        if first:
            self.ip(i, "tc", "qdisc", "add", "dev", "eth0", "root", "handle", "1:", "htb", "default", "10")
        self.ip(i, "tc", "class", "replace", "dev", "eth0", "parent", "1:", "classid", "1:10", "htb",
                "rate", f"{mbit}mbit", "ceil", f"{mbit}mbit", "burst", "64k")

    def slow_node(self, i, factor=5):
        """Node i's link at 1/factor of the rate both ways: its sending side and, on the host's end
        of its veth, what it receives."""
        mbit = self.rate // factor
        self._egress(i, mbit)
        sh("tc", "qdisc", "replace", "dev", self.host_if[i], "root", "tbf", "rate", f"{mbit}mbit",
           "burst", "64k", "latency", "400ms")

    def slow_route(self, i, j, factor=5):
        """The route between nodes i and j alone at 1/factor of the rate, both ways: a second HTB
        class on each side for the other's address only."""
        mbit = self.rate // factor
        for a, b in ((i, j), (j, i)):
            self.ip(a, "tc", "class", "replace", "dev", "eth0", "parent", "1:", "classid", "1:20", "htb",
                    "rate", f"{mbit}mbit", "ceil", f"{mbit}mbit", "burst", "64k")
            self.ip(a, "tc", "filter", "replace", "dev", "eth0", "protocol", "ip", "parent", "1:", "prio", "1",
                    "u32", "match", "ip", "dst", f"{self.addr(b)}/32", "flowid", "1:20")

    def drop_all(self, i):
        """Node i's link drops every packet, both ways: its cable pulled (the bridge's end of its veth
        down: no carrier, nothing in or out, no reset sent to anyone).  tc's netem and drop action
        need kernel modules this machine's kernel does not have."""
        sh("ip", "link", "set", self.host_if[i], "down")

    def slow_sending(self, i, factor=5):
        """Node i sends at 1/factor of the rate and receives at the full rate: a one-way fault (its
        transmit side; a NIC or cable fault in one direction)."""
        self._egress(i, self.rate // factor)

    def flap(self, i, when, down_s):
        """Node i's port going down and up, as a flapping port does: each time when() says so (it is
        polled every 50 ms and given how many flaps were made; it returns True to flap now, None to
        stop), the bridge's end of its veth goes down for down_s and comes back up.  In a thread
        started now; join it before leaving the cluster.  A test ties when() to what it watches (the
        rounds rank 0 logs), so the pattern does not depend on how fast a loaded machine runs."""
        def run():
            done = 0
            while True:
                go = when(done)
                if go is None:
                    return
                if go:
                    sh("ip", "link", "set", self.host_if[i], "down", check=False)
                    time.sleep(down_s)
                    sh("ip", "link", "set", self.host_if[i], "up", check=False)
                    done += 1
                time.sleep(0.05)
        t = threading.Thread(target=run, daemon=True)
        t.start()
        return t

    def flap_on(self, i, log, marks, down_s):
        """Node i's port down for down_s and up again each time the next of marks appears in the file log
        (rank 0's `-v` log says `round 2 of` as it sends that round's pairs): a flapping port tied to the
        rounds.  A shell loop at real-time priority (SCHED_FIFO, root), so that neither busy loops nor the
        ranks beside it delay the flap past the pair it is meant for: a pair lasts about a second, and a
        thread of the test polling the log under load could lag that much.  It prints each mark and the
        seconds from its appearing to the port going down; it ends after the last mark.  Returns the
        Popen: kill it (and wait) before leaving the cluster."""
        script = ('for m in "$@"; do until grep -qF -- "$m" "$0"; do sleep 0.02; done; t=$(date +%s.%N); '
                  f'ip link set {self.host_if[i]} down; d=$(date +%s.%N); sleep {down_s}; '
                  f'ip link set {self.host_if[i]} up; echo "$m $t $d"; done')
        argv = ["sh", "-c", script, str(log), *marks]
        if shutil.which("chrt") and subprocess.run(["chrt", "-f", "20", "true"], capture_output=True).returncode == 0:
            argv = ["chrt", "-f", "20", *argv]
        return subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)

    def cmd(self, i, argv):
        """argv run inside node i's namespace."""
        return ["ip", "netns", "exec", self.ns[i], *argv]
