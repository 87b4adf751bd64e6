"""An S3 listing that repeats a continuation token is a loop: `results merge s3://...` stops with
one line and exit 2 instead of asking for ever (issue 28 item 10).  The server is a loopback
HTTP server answering every ListObjectsV2 page with IsTruncated and the same token."""
import http.server
import threading

import pytest

LOOP = (b'<?xml version="1.0" encoding="UTF-8"?>'
        b'<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Name>gpuvet-loop</Name>'
        b'<Prefix>fleet</Prefix><KeyCount>0</KeyCount><MaxKeys>1000</MaxKeys>'
        b'<IsTruncated>true</IsTruncated><NextContinuationToken>%s</NextContinuationToken></ListBucketResult>')


@pytest.fixture
def looping_s3():
    seen = []

    class H(http.server.BaseHTTPRequestHandler):
        def log_message(self, *a):
            pass

        def do_GET(self):
            seen.append(self.path)
            # A, B, A, B...: a cycle longer than one page is a loop too
            body = LOOP % (b"tokA" if len(seen) % 2 else b"tokB")
            self.send_response(200)
            self.send_header("Content-Type", "application/xml")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
    threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    yield f"http://127.0.0.1:{srv.server_address[1]}", seen
    srv.shutdown()
    srv.server_close()


def test_a_repeated_continuation_token_stops_the_merge(gpuvet, looping_s3):
    url, seen = looping_s3
    env = {"AWS_ACCESS_KEY_ID": "AKIDEXAMPLE", "AWS_SECRET_ACCESS_KEY": "x" * 40, "AWS_SESSION_TOKEN": "",
           "AWS_PROFILE": "", "AWS_SHARED_CREDENTIALS_FILE": "/nonexistent", "AWS_CONFIG_FILE": "/nonexistent",
           "AWS_REGION": "us-east-1", "AWS_ENDPOINT_URL": "", "AWS_ENDPOINT_URL_S3": url}
    p = gpuvet("results", "merge", "s3://gpuvet-loop/fleet/", env=env, timeout=30)
    assert p.returncode == 2, p.stdout + p.stderr
    assert "repeated a continuation token" in p.stderr and p.stderr.count("\n") == 1, p.stderr
    assert 2 <= len(seen) <= 4, seen
    assert gpuvet.json("results", "list", "--json") == []
