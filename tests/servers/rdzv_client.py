"""A plain Python client of `gpuvet cluster run`'s rendezvous (#56), written from docs/cluster.md
and platform/rendezvous_wire.h, not from gpuvet's code: the tests' outsider (a squatter without the
token, idle sockets, a flood of bytes without a hello) and, holding the token, a rank that takes its
time.  Only the standard library (socket, hmac, hashlib, json).

    python3 -m servers.rdzv_client HOST:PORT squat RANK SIZE [TOKEN]  # hello without the token (or with one)
    python3 -m servers.rdzv_client HOST:PORT idle N SECONDS           # N sockets that say nothing
    python3 -m servers.rdzv_client HOST:PORT flood BYTES              # bytes without a line's end
    python3 -m servers.rdzv_client HOST:PORT slow RANK SIZE LATE_S    # a rank answering each step late

Each prints one JSON line of what it saw and exits 0 (the tests judge it).
"""
import hashlib
import hmac
import json
import os
import secrets
import socket
import sys
import time

KEY_LABEL = b"gpuvet rendezvous key"


def mac(key, label, ctx, text):
    return hmac.new(key, label + ctx + text, hashlib.sha256).hexdigest()


def frame(key, label, ctx, obj):
    text = json.dumps(obj, separators=(",", ":")).encode()
    return mac(key, label, ctx, text).encode() + b" " + text + b"\n"


def seq8(n):
    return n.to_bytes(8, "big")


class Conn:
    """One connection to rank 0: lines in, lines out."""

    def __init__(self, hostport, timeout=10.0, patience=60.0):
        """Connects, again every 0.1 s for up to `patience` seconds: rank 0 may not listen yet."""
        host, port = hostport.rsplit(":", 1)
        until = time.monotonic() + patience
        while True:
            try:
                self.s = socket.create_connection((host.strip("[]"), int(port)), timeout=timeout)
                break
            except ConnectionRefusedError:
                if time.monotonic() > until:
                    raise
                time.sleep(0.1)
        self.buf = b""

    def line(self, timeout=10.0):
        self.s.settimeout(timeout)
        while b"\n" not in self.buf:
            chunk = self.s.recv(65536)
            if not chunk:
                raise EOFError("closed")
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return line

    def send(self, data):
        self.s.sendall(data)


def hello(conn, rank, size, token=None, host="outsider", framed=True, first=None):
    """Reads the challenge (or takes it as read), answers it; returns (challenge, rank 0's answer, key)."""
    ch = json.loads(first if first is not None else conn.line())
    if "refused" in ch:
        return ch, ch, None
    n0 = bytes.fromhex(ch["nonce"])
    nr = secrets.token_bytes(32)
    tok = (token or "").encode()
    h = {"rank": rank, "size": size, "host": host, "nonce": nr.hex(), "clock": time.time(), "token": bool(token)}
    if framed:
        conn.send(frame(tok, b"H", n0, h))
    else:   # the old protocol's hello: a bare JSON line
        conn.send(json.dumps(h).encode() + b"\n")
    key = hmac.new(tok, KEY_LABEL + n0 + nr, hashlib.sha256).digest()
    try:
        ans = conn.line()
    except (EOFError, OSError) as e:
        return ch, {"closed": str(e)}, key
    if ans.startswith(b"{"):
        return ch, json.loads(ans), key
    want = mac(key, b"A", seq8(0), ans[65:])
    return ch, {"welcome": json.loads(ans[65:]), "mac_ok": hmac.compare_digest(want, ans[:64].decode())}, key


def squat(hostport, rank, size, token=None):
    """Says hello for RANK first.  A rendezvous that sends no challenge (gpuvet before #56) is sent the
    bare hello it took then, {"rank":R,"size":N}: the squat that worked on it."""
    conn = Conn(hostport)
    try:
        first = conn.line(timeout=3)
    except (EOFError, ConnectionError) as e:   # closed at once: no room for it (gpuvet before #56, its table full)
        return {"challenge": None, "answer": {"closed": str(e) or "closed"}}
    except socket.timeout:
        conn.send(json.dumps({"rank": int(rank), "size": int(size), "host": "outsider"}).encode() + b"\n")
        time.sleep(5)
        return {"challenge": None, "answer": "no challenge: the bare hello was sent and kept"}
    ch, ans, _ = hello(conn, int(rank), int(size), token=token, framed=True, first=first)
    return {"challenge": ch, "answer": ans}


def idle(hostport, n, seconds):
    socks, t0 = [], time.monotonic()
    host, port = hostport.rsplit(":", 1)
    for _ in range(int(n)):
        socks.append(socket.create_connection((host, int(port)), timeout=5))
    closed = {}
    while time.monotonic() - t0 < float(seconds) and len(closed) < len(socks):
        for i, s in enumerate(socks):
            if i in closed:
                continue
            s.settimeout(0.05)
            try:
                data = s.recv(4096)
            except socket.timeout:
                continue
            except OSError as e:
                closed[i] = [round(time.monotonic() - t0, 2), str(e)]
                continue
            if not data:
                closed[i] = [round(time.monotonic() - t0, 2), "eof"]
            elif b"refused" in data:
                closed[i] = [round(time.monotonic() - t0, 2), data.decode(errors="replace").strip()]
    return {"opened": len(socks), "closed": sorted(closed.values())}


def flood(hostport, nbytes):
    """Bytes without a line's end, without waiting for the challenge."""
    conn = Conn(hostport)
    sent, t0, err = 0, time.monotonic(), ""
    block = b"x" * 65536
    conn.s.settimeout(10)
    try:
        while sent < int(nbytes):
            conn.s.sendall(block)
            sent += len(block)
    except OSError as e:
        err = str(e)
    rest = b""
    try:
        conn.s.settimeout(2)
        rest = conn.s.recv(4096)
    except OSError as e:
        err = err or str(e)
    return {"sent": sent, "error": err, "seconds": round(time.monotonic() - t0, 2),
            "answer": rest.decode(errors="replace").strip()}


def slow(hostport, rank, size, late_s):
    """A rank holding the token that answers each instruction late_s seconds after it came."""
    token = os.environ["GPUVET_CLUSTER_TOKEN"]
    conn = Conn(hostport, timeout=120)
    _, ans, key = hello(conn, int(rank), int(size), token=token, host="slowpoke")
    if "welcome" not in ans:
        return {"refused": ans}
    out_seq, in_seq, steps = 0, 1, []
    conn.send(frame(key, b"B", seq8(out_seq), {"op": "ready", "host": "slowpoke", "fabric": "00",
                                                "provider": "tcp", "fabric_why": "", "ngpus": 0, "nccl_why": "none"}))
    out_seq += 1
    while True:
        try:
            line = conn.line(timeout=600)
        except (EOFError, OSError) as e:
            steps.append(["closed", str(e)])
            break
        want = mac(key, b"A", seq8(in_seq), line[65:])
        in_seq += 1
        msg = json.loads(line[65:])
        ok = hmac.compare_digest(want, line[:64].decode())
        if msg.get("op") == "done":
            steps.append(["done", ok])
            break
        time.sleep(float(late_s))
        steps.append([msg.get("op"), ok])
        rep = {"op": "reply", "of": msg.get("op"), "ok": False, "why": "slow on purpose", "seq": msg.get("seq")}
        try:
            conn.send(frame(key, b"B", seq8(out_seq), rep))
        except OSError as e:
            steps.append(["send", str(e)])
            break
        out_seq += 1
    return {"steps": steps}


def main(argv):
    hostport, what, *args = argv
    out = {"squat": squat, "idle": idle, "flood": flood, "slow": slow}[what](hostport, *args)
    print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
