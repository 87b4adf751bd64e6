"""`gpuvet inventory` end to end: the real binary against metadata services
started here on 127.0.0.1 (never the real 169.254.169.254 / 100.100.100.200:
every test that lets gpuvet probe points both base URLs at loopback).

The servers implement the parts of the protocols gpuvet uses:
  AWS IMDSv2   PUT /latest/api/token with X-aws-ec2-metadata-token-ttl-seconds
               returns a token; GET /latest/meta-data/* needs it in
               X-aws-ec2-metadata-token, else 401 (as IMDS with v2 required)
  Alibaba      GET /latest/meta-data/* open ("normal" mode, the token PUT is
               404) or, in hardened mode, only with X-aliyun-ecs-metadata-token
               (403 without) from PUT /latest/api/token
Each server runs in a daemon thread and stops itself after 60 s at most.
"""
import json
import os
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from helpers import within

SERVER_LIFETIME_S = 60

AWS_VALUES = {
    "/latest/meta-data/instance-type": "p5.48xlarge",
    "/latest/meta-data/placement/region": "us-east-1",
    "/latest/meta-data/placement/availability-zone": "us-east-1a",
    "/latest/meta-data/instance-id": "i-0123456789abcdef0",
}
ALIBABA_VALUES = {
    "/latest/meta-data/instance/instance-type": "ecs.gn7i-c8g1.2xlarge",
    "/latest/meta-data/region-id": "cn-hangzhou",
    "/latest/meta-data/zone-id": "cn-hangzhou-i",
    "/latest/meta-data/instance-id": "i-bp1dummyinstance0",
}


class _Server:
    """A ThreadingHTTPServer on 127.0.0.1 that records its requests."""

    def __init__(self, handler_cls):
        self.requests = []
        outer = self

        class H(handler_cls):
            def log_message(self, *a):
                pass

            def record(self):
                outer.requests.append((self.command, self.path, dict(self.headers)))

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.httpd.daemon_threads = True
        self.url = "http://127.0.0.1:%d" % self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()
        self.timer = threading.Timer(SERVER_LIFETIME_S, self.httpd.shutdown)
        self.timer.daemon = True
        self.timer.start()

    def stop(self):
        self.timer.cancel()
        self.httpd.shutdown()
        self.httpd.server_close()


class AwsImdsV2(BaseHTTPRequestHandler):
    TOKEN = "AQAEAFakeTokenForTestsOnly=="

    def do_PUT(self):
        self.record()
        if self.path != "/latest/api/token" or \
                not self.headers.get("X-aws-ec2-metadata-token-ttl-seconds"):
            self.send_response(400)
            self.end_headers()
            return
        body = self.TOKEN.encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        self.record()
        if self.headers.get("X-aws-ec2-metadata-token") != self.TOKEN:
            self.send_response(401)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        v = AWS_VALUES.get(self.path)
        if v is None:
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        body = v.encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


class AlibabaNormal(BaseHTTPRequestHandler):
    TOKEN = None   # normal mode: no token service

    def do_PUT(self):
        self.record()
        if self.TOKEN is None or self.path != "/latest/api/token" or \
                not self.headers.get("X-aliyun-ecs-metadata-token-ttl-seconds"):
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        body = self.TOKEN.encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        self.record()
        if self.TOKEN is not None and self.headers.get("X-aliyun-ecs-metadata-token") != self.TOKEN:
            self.send_response(403)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        v = ALIBABA_VALUES.get(self.path)
        body = (v or "").encode()
        self.send_response(200 if v else 404)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


class AlibabaHardened(AlibabaNormal):
    TOKEN = "aliyun-fake-token-for-tests"


class HangingServer:
    """Accepts connections and never answers; stops itself."""

    def __init__(self):
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.sock.settimeout(0.2)
        self.url = "http://127.0.0.1:%d" % self.sock.getsockname()[1]
        self.conns = []
        self.stopped = threading.Event()
        self.deadline = time.monotonic() + SERVER_LIFETIME_S
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        while not self.stopped.is_set() and time.monotonic() < self.deadline:
            try:
                c, _ = self.sock.accept()
                self.conns.append(c)
            except OSError:
                pass

    def stop(self):
        self.stopped.set()
        self.thread.join(2)
        for c in self.conns:
            c.close()
        self.sock.close()


def closed_port_url():
    """A loopback URL nobody listens on: connection refused at once."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return "http://127.0.0.1:%d" % port


@pytest.fixture
def servers():
    made = []

    def make(kind):
        s = HangingServer() if kind == "hang" else _Server(kind)
        made.append(s)
        return s
    yield make
    for s in made:
        s.stop()


@pytest.fixture
def sysroot(tmp_path):
    """An empty stand-in for / (no DMI, no apt sources) so local evidence cannot decide."""
    root = tmp_path / "root"
    root.mkdir()
    return root


def probe_env(aws, alibaba, sysroot):
    return {"GPUVET_NO_METADATA": "", "GPUVET_IMDS_AWS": aws,
            "GPUVET_IMDS_ALIBABA": alibaba, "GPUVET_SYSROOT": str(sysroot)}


def test_aws_imdsv2(gpuvet, servers, sysroot):
    aws = servers(AwsImdsV2)
    inv = gpuvet.json("inventory", "--json", env=probe_env(aws.url, closed_port_url(), sysroot))
    c = inv["cloud"]
    assert c == {"provider": "aws", "instance_type": "p5.48xlarge", "region": "us-east-1",
                 "zone": "us-east-1a", "instance_id": "i-0123456789abcdef0",
                 "source": "imds", "evidence": None}
    # the token came first, and every GET carried it (the server would have said 401)
    assert aws.requests[0][0] == "PUT"
    gets = [r for r in aws.requests if r[0] == "GET"]
    assert len(gets) == 4
    assert all(r[2].get("X-aws-ec2-metadata-token") == AwsImdsV2.TOKEN for r in gets)


def test_aws_server_refuses_get_without_token(servers):
    # the test server really implements the v2 rule gpuvet is tested against
    import urllib.error
    import urllib.request
    aws = servers(AwsImdsV2)
    with pytest.raises(urllib.error.HTTPError) as e:
        urllib.request.urlopen(aws.url + "/latest/meta-data/instance-type", timeout=5)
    assert e.value.code == 401


@pytest.mark.parametrize("handler", [AlibabaNormal, AlibabaHardened], ids=["normal", "hardened"])
def test_alibaba(gpuvet, servers, sysroot, handler):
    ali = servers(handler)
    inv = gpuvet.json("inventory", "--json", env=probe_env(closed_port_url(), ali.url, sysroot))
    c = inv["cloud"]
    assert c["provider"] == "alibaba"
    assert c["instance_type"] == "ecs.gn7i-c8g1.2xlarge"
    assert c["region"] == "cn-hangzhou"
    assert c["zone"] == "cn-hangzhou-i"
    assert c["instance_id"] == "i-bp1dummyinstance0"
    assert c["source"] == "imds"


def test_hanging_metadata_is_bounded(gpuvet, servers, sysroot):
    hang = servers("hang")
    t0 = time.monotonic()
    inv = gpuvet.json("inventory", "--json", env=probe_env(hang.url, hang.url, sysroot), timeout=30)
    elapsed = time.monotonic() - t0
    assert elapsed < within(3.0), elapsed
    assert inv["cloud"]["provider"] == "unknown"
    assert inv["cloud"]["source"] == "none"
    assert hang.conns, "gpuvet never connected: the test did not test the hang"


def test_overrides_win_over_metadata(gpuvet, servers, sysroot):
    aws = servers(AwsImdsV2)
    env = probe_env(aws.url, closed_port_url(), sysroot)
    inv = gpuvet.json("inventory", "--json", "--sku", "p4d.24xlarge", "--region", "us-west-2", env=env)
    c = inv["cloud"]
    assert (c["provider"], c["instance_type"], c["region"]) == ("aws", "p4d.24xlarge", "us-west-2")
    assert c["zone"] == "us-east-1a"        # what was not overridden stays as the service said
    assert c["source"] == "override"
    inv = gpuvet.json("inventory", "--json", "--provider", "lambda", "--sku", "gpu_1x_h100_pcie",
                      env=env)
    c = inv["cloud"]
    assert (c["provider"], c["instance_type"], c["source"]) == ("lambda", "gpu_1x_h100_pcie", "override")
    # AWS's region/zone/id do not describe a Lambda machine
    assert c["region"] is None and c["zone"] is None and c["instance_id"] is None


def test_no_metadata_sends_nothing(gpuvet, servers, sysroot):
    aws, ali = servers(AwsImdsV2), servers(AlibabaNormal)
    env = probe_env(aws.url, ali.url, sysroot)
    env["GPUVET_NO_METADATA"] = "1"
    inv = gpuvet.json("inventory", "--json", env=env)
    assert inv["cloud"]["provider"] == "unknown"
    env["GPUVET_NO_METADATA"] = ""
    inv = gpuvet.json("inventory", "--json", "--no-metadata", env=env)
    assert inv["cloud"]["source"] == "none"
    assert aws.requests == [] and ali.requests == []


def _cpu_is_vm():
    try:
        with open("/proc/cpuinfo") as f:
            return any(l.startswith("flags") and " hypervisor" in l for l in f)
    except OSError:
        return False


def test_lambda_heuristic(gpuvet, sysroot):
    d = sysroot / "etc" / "apt" / "sources.list.d"
    d.mkdir(parents=True)
    # the line Lambda Stack's installer writes
    (d / "lambda-repository.list").write_text(
        "deb http://archive.lambdalabs.com/ubuntu jammy main\n")
    inv = gpuvet.json("inventory", "--json", env={"GPUVET_SYSROOT": str(sysroot)})
    c = inv["cloud"]
    if _cpu_is_vm():
        assert (c["provider"], c["source"]) == ("lambda", "heuristic")
        assert "lambdalabs" in c["evidence"]
        assert c["instance_type"] is None   # Lambda says no SKU anywhere on the machine
    else:
        assert c["provider"] == "unknown"   # Lambda Stack on bare metal: a workstation


def test_dmi_heuristic_aws(gpuvet, servers, sysroot):
    dmi = sysroot / "sys" / "class" / "dmi" / "id"
    dmi.mkdir(parents=True)
    (dmi / "sys_vendor").write_text("Amazon EC2\n")
    hang = servers("hang")
    inv = gpuvet.json("inventory", "--json", env=probe_env(hang.url, closed_port_url(), sysroot))
    c = inv["cloud"]
    assert (c["provider"], c["source"], c["instance_type"]) == ("aws", "heuristic", None)


def test_no_driver_here(gpuvet):
    env = {"GPUVET_NVML_LIB": "/nonexistent/libnvidia-ml.so.1"}
    inv = gpuvet.json("inventory", "--json", env=env)
    assert inv["gpus"] == []
    assert "driver" in inv["gpu_error"]
    assert inv["driver"] is None
    for k in ("host", "cpu", "memory", "numa", "disks", "gpus", "gpu_error", "driver", "cloud"):
        assert k in inv
    assert inv["memory"]["total_bytes"] > 0
    assert inv["cpu"]["threads"] >= 1
    p = gpuvet("inventory", env=env, check=0)
    assert "GPUs      none (nvidia driver not found" in p.stdout
    assert "GiB" in p.stdout


def test_real_nvml_absent_on_this_machine(gpuvet):
    # without the override: this machine has no driver, and says so
    if os.path.exists("/dev/nvidiactl"):
        pytest.skip("an nvidia device is present here")
    inv = gpuvet.json("inventory", "--json")
    assert inv["gpus"] == [] and "driver" in inv["gpu_error"]


def test_json_is_valid_and_complete(gpuvet):
    p = gpuvet("inventory", "--json", check=0)
    inv = json.loads(p.stdout)
    assert isinstance(inv["disks"], list) and isinstance(inv["numa"], list)
    for d in inv["disks"]:
        assert set(d) >= {"name", "model", "size_bytes", "rotational", "transport", "mountpoints"}
    assert p.stderr == ""


@pytest.mark.parametrize("args", [["--bogus"], ["--sku"], ["--sku", "a\x1bb"], ["extra"],
                                  ["--region", ""], ["--provider", "x" * 257]])
def test_bad_flags(gpuvet, args):
    p = gpuvet("inventory", *args, check=2)
    assert p.stdout == ""
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("gpuvet: inventory: "), p.stderr


def test_help(gpuvet):
    p = gpuvet("inventory", "--help", check=0)
    assert p.stdout.startswith("usage: gpuvet inventory")
    assert "--provider" in p.stdout and "--json" in p.stdout


# ---- the GPU path, through a FAKE libnvidia-ml (tests/integration/fake_nvml.c) ----
# There is no GPU on the test machines; this library answers invented values
# so that the mapping NVML -> JSON/text is checked.  Nothing here is a measurement.

@pytest.fixture(scope="module")
def fake_nvml(tmp_path_factory):
    import subprocess
    import sysconfig
    from pathlib import Path
    inc = Path(sysconfig.get_paths()["purelib"]) / "nvidia" / "cu13" / "include"
    src = Path(__file__).with_name("fake_nvml.c")
    out = tmp_path_factory.mktemp("fake_nvml") / "libfake-nvidia-ml.so"
    subprocess.run([os.environ.get("CC", "cc"), "-shared", "-fPIC", "-O1", "-Wall", "-Werror",
                    "-I", str(inc), "-o", str(out), str(src)], check=True, timeout=120)
    return str(out)


def test_fake_gpus_json(gpuvet, fake_nvml):
    inv = gpuvet.json("inventory", "--json", env={"GPUVET_NVML_LIB": fake_nvml})
    assert inv["gpu_error"] is None
    assert inv["driver"] == {"version": "550.54.15", "cuda_version": "12.4"}
    g0, g1 = inv["gpus"]
    assert g0["name"] == "NVIDIA H100 80GB HBM3"
    assert g0["uuid"].startswith("GPU-fake0000")
    assert g0["serial"] == "FAKE000000000" and g0["vbios"] == "96.00.99.00.01"
    assert g0["memory_bytes"] == 85520809984
    assert g0["pci_bus_id"] == "00000000:18:00.0"
    assert g0["pcie"] == {"gen_current": 5, "width_current": 16, "gen_max": 5,
                          "gen_gpu_max": 5, "width_max": 16}
    assert g0["nvlink"] == {"links": 18, "links_active": 18,
                            "errors": {"replay": 18, "recovery": 0, "crc_flit": 0, "crc_data": 0}}
    assert g0["ecc"]["current"] == "enabled" and g0["ecc"]["pending"] == "enabled"
    assert g0["ecc"]["volatile"] == {"corrected": 0, "uncorrected": 0}
    assert g0["retired_pages"] is None            # NOT_SUPPORTED: Hopper remaps rows
    assert g0["remapped_rows"] == {"correctable": 0, "uncorrectable": 0,
                                   "pending": False, "failure": False}
    assert g0["virtualization_mode"] == "passthrough"
    assert g0["mig"] == {"current": "disabled", "pending": "disabled"}
    assert (g0["numa_node"], g0["numa_source"]) == (0, "nvml")
    assert g0["power_limit_w"] == 700.0
    assert g0["max_clocks_mhz"] == {"sm": 1980, "memory": 2619}
    assert "reference_model" in g0               # common/gpus.h decides; may be null
    # the degraded one
    assert (g1["pcie"]["gen_current"], g1["pcie"]["width_current"]) == (3, 8)
    assert g1["nvlink"] == {"links": 18, "links_active": 16,
                            "errors": {"replay": 18, "recovery": 0, "crc_flit": 10, "crc_data": 0}}
    assert g1["ecc"]["volatile"] == {"corrected": 7, "uncorrected": 2}
    assert g1["ecc"]["aggregate"] == {"corrected": 40, "uncorrected": 5}
    assert g1["remapped_rows"]["pending"] is True and g1["remapped_rows"]["uncorrectable"] == 1
    assert g1["virtualization_mode"] == "vgpu"
    assert g1["mig"] == {"current": "disabled", "pending": "enabled"}
    # no NVML answer and no such PCI device in sysfs here: unknown, not invented
    assert g1["numa_node"] is None and g1["numa_source"] is None
    assert g1["power_limit_w"] == 500.0


def test_xid_history_from_the_kernel_log(gpuvet, fake_nvml, tmp_path):
    # a kernel log (as /dev/kmsg gives it) under GPUVET_SYSROOT: a hardware XID on the fake
    # GPU 0 (bus 18), an application XID on GPU 1 (bus 2a), an XID of a bus with no GPU here
    (tmp_path / "dev").mkdir()
    (tmp_path / "proc").mkdir()
    (tmp_path / "dev" / "kmsg").write_text(
        "6,100,5000000,-;NVRM: loading NVIDIA UNIX x86_64 Kernel Module\n"
        "4,101,600000000,-;NVRM: Xid (PCI:0000:18:00): 79, pid=1234, GPU has fallen off the bus.\n"
        "4,102,700000000,-;NVRM: Xid (PCI:0000:2a:00): 13, pid=99, Graphics Exception\n"
        "4,103,800000000,-;NVRM: Xid (PCI:0000:99:00): 94, Contained ECC error\n")
    (tmp_path / "proc" / "uptime").write_text("1000.00 3000.00\n")
    inv = gpuvet.json("inventory", "--json", env={"GPUVET_NVML_LIB": fake_nvml, "GPUVET_SYSROOT": str(tmp_path)})
    h = inv["xid_history"]
    assert h["error"] is None and h["source"] == "/dev/kmsg"
    assert h["events"] == [
        {"xid": 79, "pci": "0000:18:00", "gpu": 0, "age_s": 400.0, "hardware": True},
        {"xid": 13, "pci": "0000:2a:00", "gpu": 1, "age_s": 300.0, "hardware": False},
        {"xid": 94, "pci": "0000:99:00", "gpu": None, "age_s": 200.0, "hardware": True},
    ]
    out = gpuvet("inventory", env={"GPUVET_NVML_LIB": fake_nvml, "GPUVET_SYSROOT": str(tmp_path)}, check=0).stdout
    assert "xid 79 (hardware) on gpu 0, 0.1 h ago" in out and "xid 94 (hardware) on pci 0000:99:00" in out
    # unreadable: the reason, and no list (unknown is not "none")
    os.chmod(tmp_path / "dev" / "kmsg", 0)
    if os.access(tmp_path / "dev" / "kmsg", os.R_OK):
        (tmp_path / "dev" / "kmsg").unlink()   # root reads anything: take the file away instead
    inv = gpuvet.json("inventory", "--json", env={"GPUVET_NVML_LIB": fake_nvml, "GPUVET_SYSROOT": str(tmp_path)})
    assert inv["xid_history"]["events"] is None
    assert inv["xid_history"]["error"].startswith("cannot read /dev/kmsg: ")


def test_fake_gpus_text(gpuvet, fake_nvml):
    out = gpuvet("inventory", env={"GPUVET_NVML_LIB": fake_nvml}, check=0).stdout
    assert "Driver    nvidia 550.54.15, cuda 12.4" in out
    assert "GPU 0     NVIDIA H100 80GB HBM3, 79.6 GiB" in out
    assert "pcie gen5 x16 (32.0 GT/s per lane) of max gen5 x16" in out
    assert "pcie gen3 x8 (8.0 GT/s per lane) of max gen5 x16" in out
    assert "nvlink 16/18 links active" in out
    assert "remapped rows 3 correctable, 1 uncorrectable, pending yes" in out
    assert "virtualization vgpu, mig disabled (pending enabled)" in out
    assert "power limit 700 W" in out and "max clocks sm 1980 MHz, memory 2619 MHz" in out


def test_fake_nvml_init_failure(gpuvet, fake_nvml):
    inv = gpuvet.json("inventory", "--json",
                      env={"GPUVET_NVML_LIB": fake_nvml, "FAKE_NVML_INIT_FAIL": "1"})
    assert inv["gpus"] == []
    assert inv["gpu_error"] == "nvidia driver not usable: nvmlInit: Driver Not Loaded"


def test_nvml_reinit_after_fork(fake_nvml):
    # reruns the C unit binary with the fake library: its test_nvml_fork forks
    # after NVML is initialised and needs the child to re-initialise
    import subprocess
    from pathlib import Path
    root = Path(__file__).resolve().parents[2]
    tdir = Path(os.environ.get("GPUVET_TEST_DIR", root / "build" / "tests"))
    binary = tdir / "test_inventory"
    assert binary.exists(), binary
    env = dict(os.environ, GPUVET_TEST_FAKE_NVML=fake_nvml, GPUVET_NO_METADATA="1")
    env.setdefault("ASAN_OPTIONS", "protect_shadow_gap=0:detect_leaks=1")
    p = subprocess.run([str(binary)], cwd=root, env=env, capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "test_nvml_fork: skipped" not in p.stdout


def test_root_filesystem_is_on_a_listed_disk(gpuvet):
    # the disk (or partition / holder) backing / is listed with "/" among its mountpoints
    st = os.stat("/")
    dev = "/sys/dev/block/%d:%d" % (os.major(st.st_dev), os.minor(st.st_dev))
    if not os.path.exists(dev):
        pytest.skip("/ is not on a block device here (overlay, tmpfs, btrfs subvolume)")
    real = os.path.realpath(dev)
    if "/devices/virtual/" in real and not os.listdir(os.path.join(real, "slaves")):
        pytest.skip("/ is on a virtual block device without a backing disk")
    inv = gpuvet.json("inventory", "--json")
    assert any("/" in d["mountpoints"] for d in inv["disks"]), inv["disks"]
    d = next(d for d in inv["disks"] if "/" in d["mountpoints"])
    assert d["size_bytes"] > 0 and d["transport"] in (
        "nvme", "virtio", "sata", "scsi", "usb", "xen", "mmc", "unknown")
