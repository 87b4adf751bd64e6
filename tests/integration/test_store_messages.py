"""Messages name the cause (issue #35 item 8): an import of something that is not JSON text stops at
the first byte that says so, not after reading 512 MiB; the output's missing directory is named
under the user's path (tests/integration/test_store_outputs.py)."""
import time

from helpers import within


def test_import_of_dev_zero_stops_at_once(gpuvet):
    t0 = time.monotonic()
    p = gpuvet("results", "import", "/dev/zero", timeout=60)
    assert p.returncode == 2
    assert "cannot import '/dev/zero'" in p.stderr and "not JSON text" in p.stderr, p.stderr
    assert time.monotonic() - t0 < within(3)


def test_a_nul_byte_inside_a_fingerprint_is_named(gpuvet, tmp_path):
    f = tmp_path / "nul.json"
    f.write_bytes(b'{"schema": "x"' + b"\0" * (64 << 20))
    p = gpuvet("results", "import", f)
    assert p.returncode == 2 and "a NUL byte" in p.stderr and "at byte 15" in p.stderr, p.stderr
