"""An object store that stalls or ignores Range (issue #16 items 7, 14): a clear reason and counted
errors; whole-object GETs measured."""
import json
import os
import signal
import sqlite3
import subprocess
import time
import uuid
from pathlib import Path

import pytest

from conftest import FIXTURES, gpuvet_bin
from helpers import (NULL, Holder, Listener, good_fp, has_fio, import_fixture, integrity_ok, make_store, marked_pids,
                     sha, start_run, stat_fields, tree_env, wait_for, wait_gone, within)


# ---- 7. a stalled object store: a clear reason, errors counted ----




def objstore_run(gpuvet, *args, env=None):
    import json
    p = gpuvet("run", "--bench", "objstore", "--profile", "quick", "--json", *args, env=env,
               timeout=180)
    fp = json.loads(p.stdout)
    b = next(x for x in fp["benches"] if x["name"] == "objstore")
    m = {x["name"]: x for x in fp["metrics"] if x.get("bench", "objstore") == "objstore"}
    return b, m


@pytest.mark.parametrize("scheme", ["http", "s3"])
def test_stalled_object_store_has_a_reason_and_errors(gpuvet, scheme):
    h = Holder()
    try:
        if scheme == "http":
            args = ["--objstore-url", h.url + "/obj"]
            env = None
        else:
            args = ["--objstore-url", "s3://bucket/obj", "--objstore-endpoint", h.url]
            env = {"AWS_ACCESS_KEY_ID": "AKIAEXAMPLE", "AWS_SECRET_ACCESS_KEY": "s", "AWS_REGION": "us-east-1",
                   "AWS_SHARED_CREDENTIALS_FILE": "/nonexistent", "AWS_CONFIG_FILE": "/nonexistent"}
        t0 = time.monotonic()
        b, m = objstore_run(gpuvet, *args, env=env)
        assert time.monotonic() - t0 < within(61 + 10)
        assert h.conns >= 1
        assert b["status"] == "failed"
        assert b["reason"] and ("no answer" in b["reason"] or "too slow" in b["reason"]), b["reason"]
        assert m["objstore.errors"]["value"] >= 1, m["objstore.errors"]
    finally:
        h.close()

# ---- 14. a server that ignores Range is measured with whole-object GETs ----

def test_server_ignoring_range_is_measured_whole(gpuvet, tmp_path):
    import functools
    import http.server
    import threading
    (tmp_path / "obj.bin").write_bytes(os.urandom(4 << 20))
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(tmp_path))
    handler.log_message = lambda *a: None
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{srv.server_address[1]}/obj.bin"
        b, m = objstore_run(gpuvet, "--objstore-url", url, "--objstore-concurrency", "4")
        assert b["status"] == "ok", b
        g = m["objstore.get.gbps"]
        assert g["value"] > 0
        assert g["params"]["get_mode"] == "whole-object"
        assert g["params"]["range_bytes"] == 4 << 20
        assert "whole-object" in b["config"]["get_mode"], b["config"]
        assert m["objstore.errors"]["value"] == 0
    finally:
        srv.shutdown()
