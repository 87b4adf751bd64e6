"""Loopback servers for the storage tests: nginx, moto (S3 with SigV4 checks)
and the fault-injecting server.  Each is a context manager that starts the
real server on 127.0.0.1 with a free port and stops it; every one also has
a hard lifetime so nothing outlives a crashed test run."""
import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

HERE = Path(__file__).resolve().parent


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port, proc, timeout=20):
    end = time.time() + timeout
    while time.time() < end:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited with {proc.returncode}")
        with socket.socket() as s:
            s.settimeout(0.2)
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise RuntimeError(f"nothing listening on 127.0.0.1:{port} after {timeout} s")


def stop(proc):
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def nginx_binary():
    for p in ("/usr/sbin/nginx", shutil.which("nginx") or ""):
        if p and os.access(p, os.X_OK):
            return p
    return None


@contextlib.contextmanager
def nginx(root_dir, work_dir, lifetime=300):
    """nginx serving root_dir on 127.0.0.1:PORT; yields the base URL."""
    binary = nginx_binary()
    if not binary:
        raise RuntimeError("nginx not installed (Debian package nginx)")
    work = Path(work_dir)
    (work / "tmp").mkdir(parents=True, exist_ok=True)
    port = free_port()
    conf = work / "nginx.conf"
    # as root, nginx's workers would drop to "nobody" and could not read a
    # private temporary directory; keep them as the test's own user
    user = "user root;" if os.geteuid() == 0 else ""
    conf.write_text(f"""
{user}
worker_processes 1;
daemon off;
pid {work}/nginx.pid;
error_log {work}/error.log;
events {{ worker_connections 1024; }}
http {{
  access_log off;
  client_body_temp_path {work}/tmp;
  proxy_temp_path {work}/tmp;
  fastcgi_temp_path {work}/tmp;
  uwsgi_temp_path {work}/tmp;
  scgi_temp_path {work}/tmp;
  sendfile on;
  keepalive_requests 100000;
  server {{ listen 127.0.0.1:{port}; root {root_dir}; }}
}}
""")
    proc = subprocess.Popen(["timeout", str(lifetime), binary, "-c", str(conf), "-p", str(work)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        wait_port(port, proc)
        yield f"http://127.0.0.1:{port}"
    finally:
        stop(proc)


@contextlib.contextmanager
def fault_server(*args, lifetime=120):
    """tests/servers/fault_http.py with the given options; yields the base URL."""
    proc = subprocess.Popen([sys.executable, str(HERE / "fault_http.py"), "--lifetime",
                             str(lifetime), *map(str, args)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        port = int(proc.stdout.readline())
        wait_port(port, proc)
        yield f"http://127.0.0.1:{port}"
    finally:
        stop(proc)


class MotoS3:
    """moto's server with IAM authentication on: SigV4 signatures are checked
    (botocore recomputes them) against an IAM user's key made for the test."""

    def __init__(self, endpoint):
        self.endpoint = endpoint
        self.region = "us-east-1"
        self.access_key = None
        self.secret_key = None

    def client(self, service, key=None, secret=None, token=None):
        import boto3
        return boto3.client(service, endpoint_url=self.endpoint, region_name=self.region,
                            aws_access_key_id=key or self.access_key or "AKIAIOSFODNN7EXAMPLE",
                            aws_secret_access_key=secret or self.secret_key or "unused",
                            aws_session_token=token)

    def setup(self, bucket, objects):
        """Before auth is on: an IAM user allowed everything, a bucket, objects."""
        iam = self.client("iam")
        iam.create_user(UserName="gpuvet-test")
        k = iam.create_access_key(UserName="gpuvet-test")["AccessKey"]
        iam.put_user_policy(UserName="gpuvet-test", PolicyName="all", PolicyDocument=json.dumps({
            "Version": "2012-10-17",
            "Statement": [{"Effect": "Allow", "Action": "*", "Resource": "*"}]}))
        s3 = self.client("s3")
        s3.create_bucket(Bucket=bucket)
        for key, body in objects.items():
            s3.put_object(Bucket=bucket, Key=key, Body=body)
        self.access_key, self.secret_key = k["AccessKeyId"], k["SecretAccessKey"]
        # from now on every request must carry a valid signature
        req = urllib.request.Request(self.endpoint + "/moto-api/reset-auth", data=b"0",
                                     method="POST", headers={"Content-Type": "text/plain"})
        with urllib.request.urlopen(req, timeout=10) as r:
            assert json.loads(r.read())["status"] == "ok"


@contextlib.contextmanager
def moto_s3(lifetime=300):
    port = free_port()
    env = dict(os.environ)
    for k in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"):
        env.pop(k, None)
    proc = subprocess.Popen(["timeout", str(lifetime), sys.executable, "-m", "moto.server",
                             "-H", "127.0.0.1", "-p", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    try:
        wait_port(port, proc, timeout=60)
        yield MotoS3(f"http://127.0.0.1:{port}")
    finally:
        stop(proc)
