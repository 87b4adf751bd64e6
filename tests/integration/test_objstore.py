"""objstore bench against real servers on 127.0.0.1 only: nginx (plain
HTTP GETs), moto's S3 server with IAM authentication on (SigV4 GET,
multipart PUT, wrong keys) and a fault-injecting server (503s, resets,
slow answers).  Nothing here talks to any other address."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from servers import loopback  # noqa: E402
from servers.benchrun import run_bench  # noqa: E402
from helpers import within  # noqa: E402

QUICK_DEADLINE = 61  # objstore_deadline() for the quick profile
NO_AWS = {"AWS_ACCESS_KEY_ID": "", "AWS_SECRET_ACCESS_KEY": "", "AWS_SESSION_TOKEN": "",
          "AWS_PROFILE": "", "AWS_SHARED_CREDENTIALS_FILE": "/nonexistent",
          "AWS_CONFIG_FILE": "/nonexistent", "AWS_REGION": "us-east-1"}


def aws_env(s3, **kw):
    e = dict(NO_AWS)
    e.update({"AWS_ACCESS_KEY_ID": s3.access_key, "AWS_SECRET_ACCESS_KEY": s3.secret_key})
    e.update(kw)
    return e


@pytest.fixture(scope="module")
def moto(tmp_path_factory):
    pytest.importorskip("moto")
    pytest.importorskip("boto3")
    with loopback.moto_s3() as s3:
        s3.setup("gpuvet-bucket", {"data/big.bin": os.urandom(24 << 20),
                                   "data/small.bin": b"0123456789"})
        yield s3


@pytest.fixture(scope="module")
def web(tmp_path_factory):
    root = tmp_path_factory.mktemp("www")
    (root / "big.bin").write_bytes(os.urandom(64 << 20))
    with loopback.nginx(root, tmp_path_factory.mktemp("nginx")) as url:
        yield url


def test_http_get_from_nginx(gpuvet, web):
    r = run_bench(gpuvet, "objstore", objstore_url=web + "/big.bin", objstore_concurrency=8)
    assert r.status == "ok", r
    assert r.metrics["objstore.get.gbps"] > 0
    assert 0 < r.metrics["objstore.ttfb.p50_ms"] <= r.metrics["objstore.ttfb.p99_ms"]
    assert r.metrics["objstore.errors"] == 0
    assert r.metrics["objstore.retries"] == 0
    assert "objstore.put.gbps" not in r.metrics  # http(s): GET only
    p = r.params["objstore.get.gbps"]
    assert p["concurrency"] == 8 and p["object_bytes"] == 64 << 20
    assert p["range_bytes"] == 8 << 20 and p["completed"] == p["requests"]


def test_range_size_is_configurable(gpuvet, web):
    r = run_bench(gpuvet, "objstore", objstore_url=web + "/big.bin",
                  env={"GPUVET_OBJSTORE_RANGE_MB": "2"})
    assert r.status == "ok", r
    assert r.params["objstore.get.gbps"]["range_bytes"] == 2 << 20
    bad = run_bench(gpuvet, "objstore", objstore_url=web + "/big.bin",
                    env={"GPUVET_OBJSTORE_RANGE_MB": "0"})
    assert bad.status == "failed"
    assert "GPUVET_OBJSTORE_RANGE_MB" in bad.reason


def test_missing_object_is_404(gpuvet, web):
    r = run_bench(gpuvet, "objstore", objstore_url=web + "/nope.bin")
    assert r.status == "failed"
    assert "http 404" in r.reason
    assert r.seconds < within(20)


def test_s3_sigv4_get_and_multipart_put(gpuvet, moto):
    r = run_bench(gpuvet, "objstore", objstore_url="s3://gpuvet-bucket/data/big.bin",
                  objstore_endpoint=moto.endpoint, env=aws_env(moto))
    assert r.status == "ok", r
    for m in ("objstore.get.gbps", "objstore.put.gbps", "objstore.ttfb.p50_ms",
              "objstore.ttfb.p99_ms"):
        assert r.metrics[m] > 0, m
    assert r.metrics["objstore.errors"] == 0
    put = r.params["objstore.put.gbps"]
    assert put["parts"] >= 2 and put["part_bytes"] >= 5 << 20
    assert moto.secret_key not in r.output
    # the upload test object is deleted and no multipart upload is left open
    s3 = moto.client("s3")
    keys = [o["Key"] for o in s3.list_objects_v2(Bucket="gpuvet-bucket").get("Contents", [])]
    assert sorted(keys) == ["data/big.bin", "data/small.bin"]
    assert not s3.list_multipart_uploads(Bucket="gpuvet-bucket").get("Uploads")


def test_s3_wrong_secret_is_refused(gpuvet, moto):
    wrong = "wrongSECRETnotTheRealOne0123456789abcdef"
    r = run_bench(gpuvet, "objstore", objstore_url="s3://gpuvet-bucket/data/big.bin",
                  objstore_endpoint=moto.endpoint,
                  env=aws_env(moto, AWS_SECRET_ACCESS_KEY=wrong))
    assert r.status == "failed"
    assert "403" in r.reason and "SignatureDoesNotMatch" in r.reason
    assert r.metrics.get("objstore.errors", 1) >= 1
    assert wrong not in r.output and moto.secret_key not in r.output
    if Path(gpuvet.db).exists():
        assert wrong.encode() not in Path(gpuvet.db).read_bytes()


def test_s3_unknown_access_key_is_refused(gpuvet, moto):
    r = run_bench(gpuvet, "objstore", objstore_url="s3://gpuvet-bucket/data/big.bin",
                  objstore_endpoint=moto.endpoint,
                  env=aws_env(moto, AWS_ACCESS_KEY_ID="AKIAUNKNOWNKEY000000"))
    assert r.status == "failed"
    assert "403" in r.reason


def test_s3_profile_from_shared_credentials_file(gpuvet, moto, tmp_path):
    creds = tmp_path / "credentials"
    creds.write_text(f"[default]\naws_access_key_id = AKIAWRONGDEFAULT0000\n"
                     f"aws_secret_access_key = nope\n\n# the one to use\n[gpuvet]\n"
                     f"aws_access_key_id = {moto.access_key}\n"
                     f"aws_secret_access_key = {moto.secret_key}\n")
    e = dict(NO_AWS, AWS_SHARED_CREDENTIALS_FILE=str(creds), AWS_PROFILE="gpuvet")
    r = run_bench(gpuvet, "objstore", objstore_url="s3://gpuvet-bucket/data/big.bin",
                  objstore_endpoint=moto.endpoint, env=e)
    assert r.status == "ok", r
    assert r.metrics["objstore.put.gbps"] > 0
    assert moto.secret_key not in r.output


def test_s3_session_token_is_sent_and_signed(gpuvet, moto):
    # temporary credentials from moto's STS: the token must be sent (and signed)
    sts = moto.client("sts")
    c = sts.get_session_token(DurationSeconds=900)["Credentials"]
    iam = moto.client("iam")
    role = iam.create_role(RoleName="gpuvet-reader", AssumeRolePolicyDocument=(
        '{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":'
        '{"AWS":"*"},"Action":"sts:AssumeRole"}]}'))["Role"]
    iam.put_role_policy(RoleName="gpuvet-reader", PolicyName="all", PolicyDocument=(
        '{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"*","Resource":"*"}]}'))
    c = sts.assume_role(RoleArn=role["Arn"], RoleSessionName="gpuvet")["Credentials"]
    e = dict(NO_AWS, AWS_ACCESS_KEY_ID=c["AccessKeyId"], AWS_SECRET_ACCESS_KEY=c["SecretAccessKey"],
             AWS_SESSION_TOKEN=c["SessionToken"])
    r = run_bench(gpuvet, "objstore", objstore_url="s3://gpuvet-bucket/data/small.bin",
                  objstore_endpoint=moto.endpoint, env=e)
    assert r.status == "ok", r
    assert c["SessionToken"] not in r.output and c["SecretAccessKey"] not in r.output
    # without the token the same key is not accepted
    e.pop("AWS_SESSION_TOKEN")
    e["AWS_SESSION_TOKEN"] = ""
    r = run_bench(gpuvet, "objstore", objstore_url="s3://gpuvet-bucket/data/small.bin",
                  objstore_endpoint=moto.endpoint, env=e)
    assert r.status == "failed"
    assert "403" in r.reason


def test_s3_read_only_credentials_measure_get(gpuvet, moto):
    key, secret = moto.user("gpuvet-reader", ["s3:GetObject", "s3:ListBucket"])
    r = run_bench(gpuvet, "objstore", objstore_url="s3://gpuvet-bucket/data/big.bin",
                  objstore_endpoint=moto.endpoint,
                  env=aws_env(moto, AWS_ACCESS_KEY_ID=key, AWS_SECRET_ACCESS_KEY=secret))
    assert r.status == "ok", r
    assert r.metrics["objstore.get.gbps"] > 0
    assert "objstore.put.gbps" not in r.metrics  # not allowed to write: not measured
    assert r.metrics["objstore.errors"] == 0
    assert secret not in r.output


def test_s3_without_credentials_fails_clearly(gpuvet, moto):
    r = run_bench(gpuvet, "objstore", objstore_url="s3://gpuvet-bucket/data/big.bin",
                  objstore_endpoint=moto.endpoint, env=dict(NO_AWS, HOME="/nonexistent"))
    assert r.status == "failed"
    assert r.reason.startswith("no aws credentials")


def test_no_url_skips(gpuvet):
    r = run_bench(gpuvet, "objstore")
    assert r.status == "skipped"
    assert r.reason == "no object store configured (--objstore-url)"


@pytest.mark.parametrize("url,words", [
    ("ftp://127.0.0.1/x", "unsupported object store url"),
    ("s3://", "s3 url must be s3://BUCKET/KEY"),
    ("s3://Bad_Bucket!/k", "invalid s3 bucket name"),
    ("http://", "invalid object store url"),
])
def test_bad_url_fails(gpuvet, url, words):
    r = run_bench(gpuvet, "objstore", objstore_url=url)
    assert r.status == "failed"
    assert words in r.reason


def test_unreachable_endpoint_fails_fast(gpuvet):
    port = loopback.free_port()  # nothing listens there
    r = run_bench(gpuvet, "objstore", objstore_url=f"http://127.0.0.1:{port}/x.bin")
    assert r.status == "failed"
    assert "couldn't connect" in r.reason.lower() or "failed to connect" in r.reason.lower()
    assert r.seconds < within(15)
    r = run_bench(gpuvet, "objstore", objstore_url="s3://gpuvet-bucket/k",
                  objstore_endpoint=f"http://127.0.0.1:{port}",
                  env=dict(NO_AWS, AWS_ACCESS_KEY_ID="AKIAX", AWS_SECRET_ACCESS_KEY="s"))
    assert r.status == "failed"
    assert "connect" in r.reason


def test_url_secrets_are_masked(gpuvet):
    port = loopback.free_port()
    url = f"http://gpuvetuser:HUNTER2pw@127.0.0.1:{port}/o.bin?X-Amz-Signature=SIGSECRET42"
    r = run_bench(gpuvet, "objstore", objstore_url=url)
    assert r.status == "failed"
    assert "HUNTER2pw" not in r.output and "SIGSECRET42" not in r.output
    assert "***@127.0.0.1" in r.reason


def test_503_then_ok_is_retried(gpuvet):
    with loopback.fault_server("--fail-first", 3) as url:
        r = run_bench(gpuvet, "objstore", objstore_url=url + "/obj")
    assert r.status == "ok", r
    assert r.metrics["objstore.retries"] >= 3
    assert r.metrics["objstore.errors"] == 0
    assert r.metrics["objstore.get.gbps"] > 0


def test_always_503_fails_within_deadline(gpuvet):
    with loopback.fault_server("--always-status", 503) as url:
        r = run_bench(gpuvet, "objstore", objstore_url=url + "/obj")
    assert r.status == "failed"
    assert "http 503 SlowDown" in r.reason and "retries exhausted" in r.reason
    assert r.metrics["objstore.retries"] == 5  # the probe: 1 try + 5 retries
    assert r.metrics["objstore.errors"] >= 1
    assert r.seconds < QUICK_DEADLINE


def test_connection_resets_are_retried(gpuvet):
    with loopback.fault_server("--reset-every", 4) as url:
        r = run_bench(gpuvet, "objstore", objstore_url=url + "/obj", objstore_concurrency=4)
    assert r.status == "ok", r
    assert r.metrics["objstore.retries"] >= 1
    assert r.metrics["objstore.get.gbps"] > 0


def test_slow_first_byte_is_measured(gpuvet):
    with loopback.fault_server("--size", 4 << 20, "--delay-headers", 0.3) as url:
        r = run_bench(gpuvet, "objstore", objstore_url=url + "/obj", objstore_concurrency=4,
                      env={"GPUVET_OBJSTORE_RANGE_MB": "1"})
    assert r.status == "ok", r
    assert r.metrics["objstore.ttfb.p50_ms"] >= 300
    assert r.seconds < QUICK_DEADLINE


def test_stalled_transfers_end_before_deadline(gpuvet):
    with loopback.fault_server("--stall", lifetime=QUICK_DEADLINE + 30) as url:
        r = run_bench(gpuvet, "objstore", objstore_url=url + "/obj", objstore_concurrency=4)
    assert r.status == "failed"
    assert r.seconds < QUICK_DEADLINE
    assert r.metrics["objstore.errors"] >= 1 or "deadline" in r.reason


def test_redirect_names_the_region(gpuvet):
    # S3 answers 301 PermanentRedirect when the request went to the wrong region
    with loopback.fault_server("--always-status", 301) as url:
        r = run_bench(gpuvet, "objstore", objstore_url=url + "/obj")
    assert r.status == "failed"
    assert "http 301" in r.reason and "AWS_REGION" in r.reason
    assert r.metrics["objstore.retries"] == 0  # not retried


def test_a_completion_the_server_takes_long_to_answer_is_waited_for_not_sent_twice(gpuvet, moto):
    """CompleteMultipartUpload answered only after 25 s of silence (longer than the quick profile's 10 s
    low-speed limit; a server assembling a large object under load, as moto did in make test beside busy
    loops): the bench waits for it within its deadline.  Before, the silence was cut as a stall and the
    completion sent again while the first was still assembling: moto failed both (http 500, retries
    exhausted) and the bench failed."""
    here = Path(__file__).resolve().parent.parent / "servers" / "fault_proxy.py"
    pr = subprocess.Popen([sys.executable, str(here), "--target", moto.endpoint, "--fault", "slow-complete",
                           "--delay", "25", "--lifetime", "300"], stdout=subprocess.PIPE, text=True)
    try:
        port = int(pr.stdout.readline())
        loopback.wait_port(port, pr)
        r = run_bench(gpuvet, "objstore", objstore_url="s3://gpuvet-bucket/data/big.bin",
                      objstore_endpoint=f"http://127.0.0.1:{port}", env=aws_env(moto))
    finally:
        pr.kill()
        pr.wait()
    assert r.status == "ok", r
    assert r.metrics["objstore.put.gbps"] > 0 and r.metrics["objstore.errors"] == 0, r.metrics
    assert r.params["objstore.put.gbps"]["seconds"] >= 25, r.params["objstore.put.gbps"]
