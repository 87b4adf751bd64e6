"""A fault-injecting HTTP/1.1 proxy in front of an S3-compatible server (moto).

Forwards each request unchanged (Host header included, so SigV4 signatures
still verify upstream) and misbehaves on GETs of object keys whose path
contains --match (never on listings, HEADs or PUTs):

  --fault 503       answer 503 with S3's SlowDown XML
  --fault reset     send nothing, reset the connection (RST via SO_LINGER 0)
  --fault truncate  send the headers (the real Content-Length) and half the body, then close
  --fault slow-complete  (POSTs of an upload, i.e. CompleteMultipartUpload, not GETs) forward it, then
                    stay silent for --delay seconds before answering, as a server assembling a
                    large object does
  --times N         misbehave on the first N matching requests only (default: always)

It prints its port on stdout once listening and exits by itself after
--lifetime seconds, so a test that dies cannot leave it behind.
"""
import argparse
import http.client
import socket
import struct
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit


def make_handler(a, state):
    up = urlsplit(a.target)

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def _faulty(self):
            if a.fault == "slow-complete":
                return self.command == "POST" and "uploadId=" in self.path
            if self.command != "GET" or "list-type" in self.path or a.match not in self.path:
                return False
            with state["lock"]:
                state["seen"] += 1
                return a.times < 0 or state["seen"] <= a.times

        def _forward(self):
            n = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(n) if n else None
            c = http.client.HTTPConnection(up.hostname, up.port, timeout=60)
            c.putrequest(self.command, self.path, skip_host=True, skip_accept_encoding=True)
            for k, v in self.headers.items():
                c.putheader(k, v)
            c.endheaders(body)
            r = c.getresponse()
            data = r.read()
            c.close()
            return r.status, [(k, v) for k, v in r.getheaders() if k.lower() not in ("transfer-encoding", "connection")], data

        def _dispatch(self):
            faulty = self._faulty()
            if faulty and a.fault == "reset":
                self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                self.connection.close()
                self.close_connection = True
                return
            if faulty and a.fault == "503":
                n = int(self.headers.get("Content-Length") or 0)
                if n:
                    self.rfile.read(n)
                body = b"<?xml version='1.0'?><Error><Code>SlowDown</Code><Message>slow</Message></Error>"
                self.send_response(503)
                self.send_header("Content-Type", "application/xml")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
                return
            self.truncate_now = faulty and a.fault == "truncate"
            status, headers, data = self._forward()
            if faulty and a.fault == "slow-complete":
                time.sleep(a.delay)
            self.send_response(status)
            for k, v in headers:
                if k.lower() != "content-length":
                    self.send_header(k, v)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            if self.command == "HEAD":
                return
            if self.truncate_now:
                self.wfile.write(data[:len(data) // 2])
                self.wfile.flush()
                self.connection.shutdown(socket.SHUT_RDWR)
                self.close_connection = True
                return
            self.wfile.write(data)

        do_GET = do_PUT = do_HEAD = do_POST = do_DELETE = _dispatch

    return Handler


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--target", required=True)
    ap.add_argument("--fault", choices=["503", "reset", "truncate", "slow-complete"], required=True)
    ap.add_argument("--delay", type=float, default=0)
    ap.add_argument("--match", default="")
    ap.add_argument("--times", type=int, default=-1)
    ap.add_argument("--lifetime", type=float, default=300)
    a = ap.parse_args()
    state = {"lock": threading.Lock(), "seen": 0}
    srv = ThreadingHTTPServer(("127.0.0.1", 0), make_handler(a, state))
    srv.daemon_threads = True
    print(srv.server_address[1], flush=True)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    time.sleep(a.lifetime)
    sys.exit(0)


if __name__ == "__main__":
    main()
