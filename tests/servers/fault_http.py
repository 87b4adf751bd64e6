"""A fault-injecting HTTP/1.1 object server for the objstore bench's tests.

Serves one object of --size deterministic bytes at any path, honouring
single ranges (206 + Content-Range) like S3 and nginx do, and misbehaves on
request:

  --fail-first N     answer the first N requests with 503 (S3 "SlowDown" XML)
  --always-status S  answer every request with status S
  --reset-every K    every K-th request: send headers and half the body, then
                     reset the connection (RST via SO_LINGER 0)
  --delay-headers S  wait S seconds before answering each range request
                     (the 1-byte size probe is answered at once)
  --stall            send headers and 1 KiB of each range request, then
                     stall without closing (the client's low-speed limit
                     must end it)

It prints its port on stdout once listening and exits by itself after
--lifetime seconds, so a test that dies cannot leave it behind.
"""
import argparse
import socket
import struct
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def object_bytes(off, n):
    pattern = bytes(range(256))
    start = off % 256
    reps = (start + n) // 256 + 1
    return (pattern * reps)[start:start + n]


class State:
    def __init__(self, args):
        self.args = args
        self.lock = threading.Lock()
        self.count = 0

    def next(self):
        with self.lock:
            self.count += 1
            return self.count


def make_handler(state):
    a = state.args

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def _reset(self):
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.connection.close()
            self.close_connection = True

        def do_HEAD(self):
            self.send_response(200)
            self.send_header("Content-Length", str(a.size))
            self.end_headers()

        def do_GET(self):
            n = state.next()
            if n <= a.fail_first or a.always_status:
                status = a.always_status or 503
                body = (b"<?xml version=\"1.0\" encoding=\"UTF-8\"?><Error><Code>SlowDown</Code>"
                        b"<Message>Please reduce your request rate.</Message></Error>") if status == 503 else b"no"
                self.send_response(status)
                self.send_header("Content-Type", "application/xml")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
                return
            rng = self.headers.get("Range", "")
            off, end = 0, a.size - 1
            partial = False
            if rng.startswith("bytes="):
                s, _, e = rng[6:].partition("-")
                off = int(s)
                end = min(int(e), a.size - 1) if e else a.size - 1
                partial = True
            length = end - off + 1
            probe = partial and length == 1
            if a.delay_headers and not probe:
                time.sleep(a.delay_headers)
            self.send_response(206 if partial else 200)
            if partial:
                self.send_header("Content-Range", f"bytes {off}-{end}/{a.size}")
            self.send_header("Content-Length", str(length))
            self.end_headers()
            if a.reset_every and not probe and n % a.reset_every == 0:
                self.wfile.write(object_bytes(off, length // 2))
                self.wfile.flush()
                self._reset()
                return
            if a.stall and not probe:
                self.wfile.write(object_bytes(off, min(1024, length)))
                self.wfile.flush()
                time.sleep(a.lifetime)
                return
            chunk = 1 << 20
            pos = off
            while pos <= end:
                k = min(chunk, end - pos + 1)
                self.wfile.write(object_bytes(pos, k))
                pos += k

    return Handler


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--size", type=int, default=16 << 20)
    p.add_argument("--fail-first", type=int, default=0)
    p.add_argument("--always-status", type=int, default=0)
    p.add_argument("--reset-every", type=int, default=0)
    p.add_argument("--delay-headers", type=float, default=0)
    p.add_argument("--stall", action="store_true")
    p.add_argument("--lifetime", type=float, default=120)
    a = p.parse_args()
    srv = ThreadingHTTPServer(("127.0.0.1", 0), make_handler(State(a)))
    srv.daemon_threads = True
    print(srv.server_address[1], flush=True)
    threading.Timer(a.lifetime, srv.shutdown).start()
    srv.serve_forever()
    return 0


if __name__ == "__main__":
    sys.exit(main())
