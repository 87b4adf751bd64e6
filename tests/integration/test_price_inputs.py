"""Price inputs that are nonsense are refused (issue #16 item 8): the CSV import, the Lambda fetcher."""
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
                     sha, start_run, stat_fields, tree_env, wait_for, wait_gone)


# ---- 8. price import and the Lambda fetcher refuse nonsense ----

PRICE_HDR = "provider,instance_type,region,market,price,unit,currency,captured_at,gpu_model,gpu_count\n"


def price_rows(gpuvet):
    import json
    return json.loads(gpuvet("prices", "list", "--records", "--json", check=0).stdout)


@pytest.mark.parametrize("row,what", [
    (b"aws,p9.x,us-east-1,on_demand,0,hour,USD,2026-10-01,H100-SXM,8\n", "price 0 is not a positive number"),
    (b"aws,p9.x,us-east-1,on_demand,-2,hour,USD,2026-10-01,H100-SXM,8\n", "negative"),
    (b"aws,p9.x,us-east-1,on_demand,1e308,hour,USD,2026-10-01,H100-SXM,8\n", "not believable"),
    (b"aws,p9.x,us-east-1,on_demand,1e9,month,USD,2026-10-01,H100-SXM,8\n", "not believable"),
    (b"aws,p9.x,us-east-1,on_demand,inf,hour,USD,2026-10-01,H100-SXM,8\n", "price 'inf'"),
    (b"aws,p9.x,us-east-1,on_demand,nan,hour,USD,2026-10-01,H100-SXM,8\n", "price 'nan'"),
    (b"aws,p9.x,us-east-1,on_demand,0x10,hour,USD,2026-10-01,H100-SXM,8\n", "price '0x10' is not a decimal"),
    (b"aws,p9.x,us-east-1,on_demand,3,hour,USD,2026-10-01,H100-SXM,0\n", "gpu_count 0 is not from 1 to 64"),
    (b"aws,p9.x,us-east-1,on_demand,3,hour,USD,2026-10-01,H100-SXM,1e300\n", "gpu_count 1e+300 is not"),
    (b"aws,p9.x,us-east-1,on_demand,3,hour,USD,2026-10-01,H100-SXM,65\n", "gpu_count 65 is not"),
    (b"aws,p9.x,us-east-1,on_demand,3,hour,USD,2026-10-01,H100-SXM,0x8\n", "gpu_count '0x8' is not a decimal"),
    (b"aws,p9\xff.x,us-east-1,on_demand,3,hour,USD,2026-10-01,H100-SXM,8\n", "not valid utf-8"),
    (b"aws,p9.x,us-\xc0\xafeast,on_demand,3,hour,USD,2026-10-01,H100-SXM,8\n", "not valid utf-8"),
])
def test_price_import_refuses_nonsense(gpuvet, tmp_path, row, what):
    before = price_rows(gpuvet)
    f = tmp_path / "deal.csv"
    f.write_bytes(PRICE_HDR.encode() + row)
    p = gpuvet("prices", "import", f)
    assert p.returncode == 2, (p.stdout, p.stderr)
    assert what in p.stderr and p.stderr.count("\n") == 1, p.stderr
    assert price_rows(gpuvet) == before


def test_price_import_strips_a_byte_order_mark(gpuvet, tmp_path):
    f = tmp_path / "deal.csv"
    f.write_bytes(b"\xef\xbb\xbf" + PRICE_HDR.encode() +
                  b"aws,p9.bom,us-east-1,on_demand,3.5,hour,USD,2026-10-01,H100-SXM,8\n")
    gpuvet("prices", "import", f, check=0)
    rows = [r for r in price_rows(gpuvet) if r["instance_type"] == "p9.bom"]
    assert len(rows) == 1 and rows[0]["price"] == 3.5 and rows[0]["gpu_count"] == 8


@pytest.mark.parametrize("cents,gpus,what", [(0, 1, "price 0 is not a positive number"),
                                             (1e300, 1, "not believable"),
                                             (75, 1e300, "gpu_count 1e+300 is not")])
def test_lambda_fetcher_refuses_nonsense(gpuvet, cents, gpus, what):
    import http.server
    import json
    import threading
    doc = json.loads((FIXTURES / "pricing" / "lambda-instance-types.json").read_text())
    first = next(iter(doc["data"].values()))["instance_type"]
    first["price_cents_per_hour"] = cents
    first["specs"]["gpus"] = gpus
    body = json.dumps(doc).encode()

    class H(http.server.BaseHTTPRequestHandler):
        def log_message(self, *a):
            pass

        def do_GET(self):
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        before = price_rows(gpuvet)
        p = gpuvet("prices", "update", "--provider", "lambda",
                   env={"GPUVET_LAMBDA_API_URL": f"http://127.0.0.1:{srv.server_address[1]}/x",
                        "LAMBDA_API_KEY": "k"})
        assert p.returncode != 0, (p.stdout, p.stderr)
        assert what in p.stdout + p.stderr, (p.stdout, p.stderr)
        assert [r for r in price_rows(gpuvet) if r["source"] == "lambda-api"] == \
            [r for r in before if r["source"] == "lambda-api"]
    finally:
        srv.shutdown()


# ---- a missing exchange rate ----

def test_missing_exchange_rate_is_said_once(gpuvet):
    """A price whose currency has no stored rate: its type is listed once with why, not per price row."""
    import sqlite3
    h100 = FIXTURES / "gpu" / "h100-2026-11-22" / "quick-profile.json"
    # a machine the catalog does not know, with its negotiated price in CNY (provider custom:NAME)
    gpuvet("results", "import", h100, "--custom", "--provider", "deal", "--sku", "ecs.gn7i-c8g1.2xlarge", check=0)
    (Path(gpuvet.db).parent / "deal.csv").write_text(
        "provider,instance_type,region,gpu_model,gpu_count,market,price,unit,currency,captured_at\n"
        "custom:deal,ecs.gn7i-c8g1.2xlarge,,H100-SXM,1,on_demand,40,hour,CNY,2026-11-01\n")
    gpuvet("prices", "import", Path(gpuvet.db).parent / "deal.csv", check=0)
    gpuvet("prices", "fx", check=0)  # the shipped catalogs and rate, loaded
    db = sqlite3.connect(gpuvet.db)
    db.execute("DELETE FROM fx_rates WHERE currency = 'CNY'")  # the shipped rate, gone
    db.commit()
    db.close()
    p = gpuvet("-v", "rank", check=0)
    assert p.stdout.count("no CNY rate stored") == 1, p.stdout
    assert "ecs.gn7i-c8g1.2xlarge" in p.stdout
