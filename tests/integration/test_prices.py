"""gpuvet prices: shipped catalogs, import, fx and the three fetchers against
a local HTTP server (127.0.0.1 only) serving the providers' real formats
(tests/fixtures/pricing/README.md says where each file comes from)."""
import base64
import hashlib
import hmac
import http.server
import json
import statistics
import threading
import urllib.parse
from pathlib import Path

import pytest

FIX = Path(__file__).resolve().parent.parent / "fixtures" / "pricing"
AWS_CSV = (FIX / "aws-ec2-us-east-1.csv").read_bytes()
LAMBDA_JSON = (FIX / "lambda-instance-types.json").read_bytes()
ALI_PRICE = (FIX / "alibaba-describeprice.json").read_bytes()
ALI_ERROR = (FIX / "alibaba-error-invalid-type.json").read_bytes()
ALI_SPOT = (FIX / "alibaba-describespotpricehistory.json").read_bytes()
ALI_SECRET = "testsecret"


def ali_signature(query_pairs, secret):
    """Alibaba RPC signature v1, computed independently of gpuvet's C code."""
    enc = lambda s: urllib.parse.quote(s, safe="-_.~")
    canon = "&".join(f"{enc(k)}={enc(v)}" for k, v in sorted(query_pairs))
    sts = "GET&%2F&" + enc(canon)
    return base64.b64encode(hmac.new((secret + "&").encode(), sts.encode(), hashlib.sha1).digest()).decode()


class Handler(http.server.BaseHTTPRequestHandler):
    seen = []
    lambda_feed = LAMBDA_JSON   # /lambdafeed/: what a test made of the real fixture

    def log_message(self, *a):
        pass

    def send(self, code, body, ctype="application/json", length=None):
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body) if length is None else length))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        u = urllib.parse.urlparse(self.path)
        Handler.seen.append((u.path, dict(self.headers)))
        if u.path == "/aws/us-east-1/index.csv":
            return self.send(200, AWS_CSV, "text/csv")
        if u.path == "/aws500/us-east-1/index.csv":
            return self.send(500, b"internal error", "text/plain")
        if u.path == "/awscut/us-east-1/index.csv":
            # announces the whole file, sends half, closes: a truncated download
            return self.send(200, AWS_CSV[: len(AWS_CSV) // 2], "text/csv", length=len(AWS_CSV))
        if u.path == "/awsmidrow/us-east-1/index.csv":
            # no Content-Length, connection closed in the middle of a row
            body = AWS_CSV[: AWS_CSV.rindex(b"GPUVETFIXTURE002") + 40]
            self.send_response(200)
            self.send_header("Content-Type", "text/csv")
            self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(body)
            self.close_connection = True
            return
        if u.path == "/lambda/instance-types":
            if self.headers.get("Authorization") != "Bearer secret-key-1":
                return self.send(401, b'{"error": {"code": "global/invalid-api-key", "message": "API key was invalid"}}')
            return self.send(200, LAMBDA_JSON)
        if u.path == "/lambdafeed/instance-types":
            return self.send(200, Handler.lambda_feed)
        if u.path == "/lambda500/instance-types":
            return self.send(500, b'{"error": {"message": "internal"}}')
        if u.path == "/ecs503/":
            return self.send(503, b"busy", "text/plain")
        if u.path == "/ecs/":
            q = urllib.parse.parse_qsl(u.query, keep_blank_values=True)
            sig = dict(q).get("Signature")
            rest = [(k, v) for k, v in q if k != "Signature"]
            if sig != ali_signature(rest, ALI_SECRET):
                return self.send(400, b'{"Code": "SignatureDoesNotMatch", "Message": "signature mismatch"}')
            if dict(q).get("InstanceType") == "ecs.bogus":
                return self.send(404, ALI_ERROR)
            if dict(q).get("Action") == "DescribeSpotPriceHistory":
                Handler.seen.append(("spot", dict(q)))
                return self.send(200, ALI_SPOT)
            return self.send(200, ALI_PRICE)
        self.send(404, b"{}")


@pytest.fixture
def server():
    Handler.seen = []
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    t = threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    t.start()
    yield f"http://127.0.0.1:{srv.server_address[1]}"
    srv.shutdown()
    srv.server_close()


@pytest.fixture(autouse=True)
def no_way_out(gpuvet):
    """Whatever the calling shell holds, no test reaches a provider: credentials are cleared
    and every endpoint points at a closed local port unless a test overrides it."""
    for k in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "LAMBDA_API_KEY",
              "ALIBABA_CLOUD_ACCESS_KEY_ID", "ALIBABA_CLOUD_ACCESS_KEY_SECRET"):
        gpuvet.env.pop(k, None)
    for k in ("GPUVET_AWS_PRICING_URL", "GPUVET_AWS_EC2_URL", "GPUVET_LAMBDA_API_URL", "GPUVET_ALIBABA_API_URL"):
        gpuvet.env[k] = "http://127.0.0.1:9/"


def prices(gpuvet, *args):
    """The stored price rows one by one (`--records`)."""
    return gpuvet.json("prices", "list", "--records", "--json", *args)


def offers(gpuvet, *args):
    """What `prices list` shows: one row per type and region, on-demand and spot side by side."""
    return gpuvet.json("prices", "list", "--json", *args)


def one_line_error(p):
    err = p.stderr.strip()
    assert err.startswith("gpuvet: "), p.stderr
    assert len(err.splitlines()) == 1, p.stderr
    return err


# ---- shipped catalogs ----

def test_shipped_catalogs_load_on_first_use(gpuvet):
    rows = prices(gpuvet)
    sources = {r["source"] for r in rows}
    assert {"catalog:aws", "catalog:lambda", "catalog:alibaba"} <= sources
    h100 = [r for r in rows if r["instance_type"] == "gpu_8x_h100_sxm5"]
    assert len(h100) == 1 and h100[0]["price"] == 31.92 and h100[0]["gpu_count"] == 8
    assert all(r["captured_at"] for r in rows)
    # a second use does not load again (same version), and filters work
    assert prices(gpuvet, "--provider", "lambda", "--gpu", "h100")
    assert all(r["provider"] == "lambda" for r in prices(gpuvet, "--provider", "lambda"))
    assert all("A10" in r["gpu_model"] for r in prices(gpuvet, "--gpu", "a10"))


def test_shipped_catalog_files_match_embedded(gpuvet):
    """The binary embeds pricing/catalog/*.csv: a stale build would ship old numbers."""
    root = FIX.parent.parent.parent / "pricing" / "catalog"
    for provider in ("aws", "lambda", "alibaba"):
        lines = [l for l in (root / f"{provider}.csv").read_text().splitlines()
                 if l and not l.startswith("#") and not l.startswith("provider,")]
        assert lines, provider
        assert len(prices(gpuvet, "--provider", provider)) == len(lines), provider


def test_shipped_catalogs_cover_the_issue_types(gpuvet):
    """Issue 6 names the types the shipped list prices must cover."""
    have = {(r["provider"], r["instance_type"]) for r in prices(gpuvet)}
    for it in ("p5.48xlarge", "p5.4xlarge", "p5en.48xlarge", "p4d.24xlarge", "p4de.24xlarge",
               "g4dn.xlarge", "g5.xlarge", "g6.xlarge", "g6e.xlarge"):
        assert ("aws", it) in have, it
    for it in ("gpu_1x_a10", "gpu_8x_a100", "gpu_1x_h100_pcie", "gpu_8x_h100_sxm5", "gpu_1x_gh200",
               "gpu_1x_b200_sxm6", "gpu_2x_b200_sxm6", "gpu_8x_b200_sxm6"):
        assert ("lambda", it) in have, it
    families = {it.split("-")[0] for p, it in have if p == "alibaba"}
    assert {"ecs.gn6v", "ecs.gn6i", "ecs.gn7", "ecs.gn7e", "ecs.gn7i"} <= families


def test_shipped_cny_prices_convert_through_the_shipped_dated_rate(gpuvet, tmp_path):
    """Alibaba's list prices ship in CNY with a dated ECB rate: listed and ranked in USD; a user's rate wins."""
    ali = prices(gpuvet, "--provider", "alibaba")
    assert ali and all(r["currency"] == "CNY" and r["source"] == "catalog:alibaba" for r in ali)
    rates = gpuvet.json("prices", "fx", "--json")
    assert len(rates) == 1 and rates[0]["currency"] == "CNY" and rates[0]["captured_at"] == "2024-12-30"
    assert rates[0]["usd_per_unit"] == pytest.approx(1.0444 / 7.6234, rel=1e-6)
    assert rates[0]["source"].startswith("shipped: ECB")
    cheapest = min(r["price"] for r in ali if r["instance_type"] == "ecs.gn7i-c8g1.2xlarge")
    assert all(r["usd_per_hour"] == pytest.approx(r["price_per_hour"] * 1.0444 / 7.6234, rel=1e-6) for r in ali)
    # one measured run of that type (a hand-made fingerprint: only its GEMM figure matters here)
    run = tmp_path / "run.json"
    run.write_text(json.dumps({
        "schema": "gpuvet.fingerprint/1",
        "run": {"uuid": "6f1c2d3e-0000-4000-8000-000000000001", "status": "complete", "profile": "quick",
                "started_at": "2026-11-20T10:00:00Z", "finished_at": "2026-11-20T10:05:00Z",
                "provider": "alibaba", "instance_type": "ecs.gn7i-c8g1.2xlarge", "region": None,
                "gpu_model": "A10", "gpu_count": 1},
        "benches": [{"name": "gemm", "status": "ok", "reason": None, "duration_s": 1.0, "config": None}],
        "metrics": [{"bench": "gemm", "name": "gemm.bf16.tflops", "gpu": -1, "value": 100.0, "unit": "TFLOP/s",
                     "params": None}],
        "samples": [], "flags": [], "verdicts": []}))
    gpuvet("results", "import", run, check=0)
    rank = gpuvet.json("rank", "--json")
    a10 = [r for r in rank["rows"] if r["instance_type"] == "ecs.gn7i-c8g1.2xlarge"]
    assert len(a10) == 1 and a10[0]["currency"] == "USD"
    assert a10[0]["price_per_hour"] == pytest.approx(cheapest * 1.0444 / 7.6234, rel=1e-6)
    assert a10[0]["price_fx"]["captured_at"] == "2024-12-30"
    # the user's own rate replaces the shipped one, and a reload of the shipped files keeps it
    gpuvet("prices", "fx", "CNY", "0.125", "--date", "2026-11-01", "--source", "test rate", check=0)
    gpuvet("prices", "update", "--offline", check=0)
    assert gpuvet.json("prices", "fx", "--json")[0]["source"] == "test rate"
    rank = gpuvet.json("rank", "--json")
    a10 = [r for r in rank["rows"] if r["instance_type"] == "ecs.gn7i-c8g1.2xlarge"]
    assert a10[0]["price_per_hour"] == pytest.approx(cheapest * 0.125)
    p = gpuvet("prices", "fx", "CNY", "0.2", "--date", "2026-11-01", "--source", "shipped: mine")
    assert p.returncode == 2 and "shipped:" in one_line_error(p)


def test_list_shows_usd_gpu_hour_shape_and_capture_date(gpuvet):
    rows = offers(gpuvet, "--gpu", "H100:8")
    assert rows and all(r["gpu_count"] == 8 and r["gpu_model"].startswith("H100") for r in rows)
    p5 = next(r for r in rows if r["instance_type"] == "p5.48xlarge" and r["region"] == "us-east-1")
    assert (p5["vcpus"], p5["memory_gib"], p5["gpu_memory_gib"]) == (192, 2048, 80)
    assert p5["on_demand"]["usd_per_hour"] == 55.04 and p5["usd_per_gpu_hour"] == pytest.approx(6.88)
    assert p5["on_demand"]["captured_at"] == "2026-11-25"
    assert p5["spot"]["usd_per_hour"] == 10.1808 and p5["spot"]["zone"] == "use1-atl2-az1"
    assert {r["instance_type"] for r in rows} == {"p5.48xlarge", "gpu_8x_h100_sxm5"}
    # a model alone: every count; A10 is not A100
    assert {r["gpu_count"] for r in offers(gpuvet, "--gpu", "h100")} == {1, 2, 4, 8}
    assert {r["gpu_model"] for r in offers(gpuvet, "--gpu", "A10")} == {"A10"}
    # CNY rows carry their own price, the rate used and the USD figure
    ali = offers(gpuvet, "--provider", "alibaba", "--gpu", "A10:1")
    assert ali and all(r["on_demand"]["currency"] == "CNY" and r["on_demand"]["fx"]["captured_at"] == "2024-12-30"
                       for r in ali)
    assert all(r["on_demand"]["stale"] and r["on_demand"]["age_days"] > 180 for r in ali)
    # text: the columns users of `sky show-gpus` look for
    p = gpuvet("prices", "list", "--gpu", "H100:8", check=0)
    head = p.stdout.splitlines()[0]
    for col in ("GPUS", "GPU MEM", "VCPU", "RAM", "ON-DEMAND $/h", "SPOT $/h", "$/GPU-h", "CAPTURED"):
        assert col in head, head
    assert "6.8800" in p.stdout and "3.9900" in p.stdout


@pytest.mark.parametrize("bad", ["H100:", "H100:0", ":8", "H100:eight"])
def test_list_gpu_filter_refuses_bad_counts(gpuvet, bad):
    p = gpuvet("prices", "list", "--gpu", bad)
    assert p.returncode == 2 and "gpu" in one_line_error(p)


def test_list_sorts_names_and_prices_numerically(gpuvet):
    names = [r["instance_type"] for r in offers(gpuvet, "--provider", "aws", "--sort", "name")]
    assert names.index("p4d.24xlarge") < names.index("p5.48xlarge")
    assert names.index("g5.2xlarge") < names.index("g5.12xlarge") < names.index("g5.48xlarge")
    usd = [(r["on_demand"] or r["spot"])["usd_per_hour"] for r in offers(gpuvet, "--sort", "price")]
    assert usd == sorted(usd) and len(usd) > 100
    per_gpu = [r["usd_per_gpu_hour"] for r in offers(gpuvet, "--provider", "lambda", "--sort", "gpu-price")]
    assert per_gpu == sorted(per_gpu)
    # the default: by GPU model, then GPU count as a number (1, 2, 4, 8 - not 1, 2, 4, 8 as text by chance)
    lam = [(r["gpu_model"], r["gpu_count"]) for r in offers(gpuvet, "--provider", "lambda")]
    assert lam == sorted(lam)


def test_list_unknown_provider_is_refused_naming_the_known(gpuvet, tmp_path):
    p = gpuvet("prices", "list", "--provider", "gcp")
    assert p.returncode == 2 and p.stdout == ""
    assert "unknown provider 'gcp' (known: alibaba, aws, lambda)" in one_line_error(p)
    f = tmp_path / "deal.csv"
    f.write_text("provider,instance_type,market,price,unit,currency,captured_at\n"
                 "coreweave,gd-8xh100ib-i128,on_demand,49.24,hour,USD,2026-11-01\n")
    gpuvet("prices", "import", f, check=0)
    assert [r["instance_type"] for r in offers(gpuvet, "--provider", "coreweave")] == ["gd-8xh100ib-i128"]
    assert "coreweave" in gpuvet("prices", "list", "--provider", "gcp").stderr


def test_list_warns_about_old_prices_by_capture_date(gpuvet, tmp_path):
    import datetime
    p = gpuvet("prices", "list", "--provider", "alibaba", check=0)
    warn = [l for l in p.stderr.splitlines() if "warning" in l]
    assert len(warn) == 1 and "alibaba prices (catalog:alibaba)" in warn[0] and "captured on 2024-12-30" in warn[0]
    assert "older than 90 days" in warn[0]
    assert "CNY prices converted to USD at 0.136999" in p.stderr and "of 2024-12-30" in p.stderr
    # a price captured today is not old; --max-age changes the limit
    today = datetime.datetime.now(datetime.timezone.utc).date().isoformat()
    f = tmp_path / "fresh.csv"
    f.write_text("provider,instance_type,market,price,unit,currency,captured_at,gpu_model,gpu_count\n"
                 f"aws,p5.48xlarge,on_demand,40,hour,USD,{today},H100-SXM,8\n")
    gpuvet("prices", "import", f, check=0)
    p = gpuvet("prices", "list", "--gpu", "H100:8", "--provider", "aws", check=0)
    assert "warning" not in p.stderr, p.stderr
    p5 = [r for r in offers(gpuvet, "--provider", "aws", "--gpu", "H100:8") if r["region"] == ""]
    assert p5[0]["on_demand"]["age_days"] == 0 and p5[0]["on_demand"]["source"] == "import:fresh.csv"
    # --max-age leaves older prices out
    assert offers(gpuvet, "--provider", "alibaba", "--max-age", "90") == []
    assert offers(gpuvet, "--provider", "alibaba", "--max-age", "100000")
    p = gpuvet("prices", "list", "--max-age", "0")
    assert p.returncode == 2 and "max-age" in one_line_error(p)


def test_list_no_rate_is_marked_not_dropped(gpuvet, tmp_path):
    gpuvet("prices", "fx", "EUR", "1.1172", "--date", "2026-10-30", "--source", "ECB", check=0)
    f = tmp_path / "eur.csv"
    f.write_text("provider,instance_type,market,price,unit,currency,captured_at,gpu_model,gpu_count\n"
                 "hetzner,gex44,on_demand,184,month,EUR,2026-11-01,RTX-4000-SFF-ADA,1\n")
    gpuvet("prices", "import", f, check=0)
    row = offers(gpuvet, "--provider", "hetzner")[0]
    assert row["on_demand"]["usd_per_hour"] == pytest.approx(184 / 730 * 1.1172)
    # a rate that disappears (store edited by hand): the row stays, marked, in its currency
    import sqlite3
    db = sqlite3.connect(gpuvet.db)
    db.execute("DELETE FROM fx_rates WHERE currency = 'EUR'")
    db.commit()
    db.close()
    row = offers(gpuvet, "--provider", "hetzner")[0]
    assert row["on_demand"]["usd_per_hour"] is None and "no EUR rate" in row["on_demand"]["no_usd"]
    p = gpuvet("prices", "list", "--provider", "hetzner", check=0)
    assert "EUR*" in p.stdout and "no USD rate stored for EUR" in p.stderr


def test_list_pairs_fetched_spot_with_on_demand(gpuvet, tmp_path):
    """Spot prices a fetch (or an import) stored sit beside on-demand, and win over the shipped ones."""
    p = gpuvet("prices", "list", "--provider", "lambda", check=0)
    assert "no spot price among these" in p.stderr and "lambda sells none" in p.stderr
    f = tmp_path / "spot.csv"
    f.write_text("provider,instance_type,region,zone,market,price,unit,currency,captured_at,source\n"
                 "aws,p5.48xlarge,us-east-1,us-east-1a,spot,30.5,hour,USD,2026-11-20,aws-spot:us-east-1\n"
                 "aws,p5.48xlarge,us-east-1,us-east-1b,spot,28.25,hour,USD,2026-11-20,aws-spot:us-east-1\n")
    gpuvet("prices", "import", f, check=0)
    p5 = next(r for r in offers(gpuvet, "--gpu", "H100:8", "--provider", "aws") if r["region"] == "us-east-1")
    assert p5["on_demand"]["usd_per_hour"] == 55.04
    assert p5["spot"]["usd_per_hour"] == 28.25 and p5["spot"]["zone"] == "us-east-1b"
    assert p5["spot"]["usd_per_gpu_hour"] == pytest.approx(28.25 / 8)
    assert {r["provider"] for r in offers(gpuvet, "--market", "spot")} == {"aws"}


def test_list_rejects_bad_market(gpuvet):
    p = gpuvet("prices", "list", "--market", "cheap")
    assert p.returncode == 2 and "market" in p.stderr


# ---- import ----

GOOD = "provider,instance_type,region,market,price,unit,currency,captured_at,gpu_model,gpu_count\n" \
       "aws,p5.48xlarge,us-east-1,on_demand,40.00,hour,USD,2026-10-01,H100-SXM,8\n"


def test_import_negotiated_prices(gpuvet, tmp_path):
    f = tmp_path / "deal.csv"
    # columns in another order, an unknown column, a comment: read by header name
    f.write_text("# negotiated with our account team\n"
                 "note,currency,price,unit,market,instance_type,provider,captured_at\n"
                 "x,USD,40.5,hour,on_demand,p5.48xlarge,aws,2026-10-01\n")
    p = gpuvet("prices", "import", f, check=0)
    assert "imported 1" in p.stdout
    rows = [r for r in prices(gpuvet) if r["source"] == "import:deal.csv"]
    assert len(rows) == 1 and rows[0]["price"] == 40.5 and rows[0]["region"] == ""
    # importing the file again replaces, never duplicates
    gpuvet("prices", "import", f, check=0)
    assert len([r for r in prices(gpuvet) if r["source"] == "import:deal.csv"]) == 1


@pytest.mark.parametrize("body,line,what", [
    (GOOD + 'aws,"p4d.24xlarge,us-east-1,on_demand,1,hour,USD,2026-10-01,A100,8\n', 3, "quot"),
    ("provider,instance_type,market,unit,currency\naws,x,on_demand,hour,USD\n", 1, "missing column 'price'"),
    (GOOD + "aws,p4d.24xlarge,us-east-1,on_demand,cheap,hour,USD,2026-10-01,A100,8\n", 3, "price 'cheap' is not a decimal number"),
    (GOOD + "aws,p4d.24xlarge,us-east-1,on_demand,-3,hour,USD,2026-10-01,A100,8\n", 3, "negative"),
    (GOOD + "aws,p4d.24xlarge,us-east-1,on_demand,3,hour,XYZ,2026-10-01,A100,8\n", 3, "unknown currency 'XYZ'"),
    (GOOD + "aws,p4d.24xlarge,us-east-1,on_demand,3,hour,usd,2026-10-01,A100,8\n", 3, "ISO 4217"),
    (GOOD + "aws,p4d.24xlarge,us-east-1,on_demand,3,hour\n", 3, "expected 10 fields"),
    (GOOD + "aws,p4d.24xlarge,us-east-1,ondemand,3,hour,USD,2026-10-01,A100,8\n", 3, "unknown market"),
    (GOOD + "aws,p4d.24xlarge,us-east-1,on_demand,3,day,USD,2026-10-01,A100,8\n", 3, "unknown unit"),
    (GOOD + "aws,p4d.24xlarge,us-east-1,on_demand,3,hour,USD,yesterday,A100,8\n", 3, "captured_at"),
    (GOOD + "\n\naws,p4d.24xlarge,us-east-1,on_demand,-1,hour,USD,2026-10-01,A100,8\n", 5, "negative"),
])
def test_import_bad_csv_names_line_and_keeps_store(gpuvet, tmp_path, body, line, what):
    before = prices(gpuvet)
    f = tmp_path / "x.csv"
    f.write_text(body)
    p = gpuvet("prices", "import", f)
    assert p.returncode == 2
    err = one_line_error(p)
    assert err.startswith(f"gpuvet: catalog '{f}' line {line}: "), err
    assert what in err, err
    assert prices(gpuvet) == before


def test_import_missing_and_empty_files(gpuvet, tmp_path):
    p = gpuvet("prices", "import", tmp_path / "nope.csv")
    assert p.returncode == 2
    assert one_line_error(p) == f"gpuvet: cannot open catalog '{tmp_path / 'nope.csv'}': no such file"
    (tmp_path / "empty.csv").write_text("")
    p = gpuvet("prices", "import", tmp_path / "empty.csv")
    assert p.returncode == 2 and "no header" in p.stderr


def test_import_huge_line_is_bounded(gpuvet, tmp_path):
    """A 64 MB file without a newline: refused after 1 MiB, not read into memory."""
    f = tmp_path / "big.csv"
    with open(f, "wb") as fh:
        fh.write(b"provider,instance_type,market,price,unit,currency\n")
        chunk = b"a" * (1 << 20)
        for _ in range(64):
            fh.write(chunk)
    before = prices(gpuvet)
    p = gpuvet("prices", "import", f)
    assert p.returncode == 2 and "line 2: line longer than" in p.stderr
    assert prices(gpuvet) == before


def test_fx_rate_enables_other_currency(gpuvet, tmp_path):
    f = tmp_path / "cny.csv"
    f.write_text("provider,instance_type,region,market,price,unit,currency,captured_at\n"
                 "hetzner,gex44,fsn1,on_demand,10,hour,EUR,2026-10-01\n")
    p = gpuvet("prices", "import", f)
    assert p.returncode == 2 and "unknown currency 'EUR'" in p.stderr
    p = gpuvet("prices", "fx", "EUR", "1.14")
    assert p.returncode == 2 and "--date" in p.stderr
    gpuvet("prices", "fx", "EUR", "1.14", "--date", "2026-10-01", "--source", "test rate", check=0)
    rates = [r for r in gpuvet.json("prices", "fx", "--json") if r["currency"] == "EUR"]
    assert rates == [{"currency": "EUR", "usd_per_unit": 1.14, "captured_at": "2026-10-01", "source": "test rate"}]
    gpuvet("prices", "import", f, check=0)
    assert any(r["currency"] == "EUR" for r in prices(gpuvet))


# ---- AWS bulk price list ----

def test_aws_update_streams_price_list(gpuvet, server):
    env = {"GPUVET_AWS_PRICING_URL": server + "/aws/{region}/index.csv"}
    p = gpuvet("prices", "update", "--provider", "aws", env=env, check=0)
    assert "aws: 3 prices" in p.stdout
    rows = {r["instance_type"]: r for r in prices(gpuvet, "--provider", "aws") if r["source"] == "aws-bulk:us-east-1"}
    assert set(rows) == {"g4dn.xlarge", "g5.12xlarge", "g6.48xlarge"}  # Windows/dedicated/reserved/SQL/unused dropped
    g5 = rows["g5.12xlarge"]
    assert (g5["price"], g5["gpu_model"], g5["gpu_count"], g5["vcpus"], g5["memory_gib"]) == (5.672, "A10G", 4, 48, 192)
    assert g5["captured_at"] == "2025-09-12T22:53:08Z" and g5["source_version"] == "20250912225308"
    src = {s["source"]: s for s in gpuvet.json("prices", "sources", "--json")}
    assert src["aws-bulk:us-east-1"]["status"] == "ok" and src["aws-bulk:us-east-1"]["rows"] == 3


@pytest.mark.parametrize("path,what", [("/aws500", "HTTP 500"), ("/awscut", "cut short"),
                                       ("/awsmidrow", "line ")])
def test_aws_failed_fetch_keeps_previous_prices(gpuvet, server, path, what):
    gpuvet("prices", "update", "--provider", "aws",
           env={"GPUVET_AWS_PRICING_URL": server + "/aws/{region}/index.csv"}, check=0)
    before = prices(gpuvet)
    p = gpuvet("prices", "update", "--provider", "aws",
               env={"GPUVET_AWS_PRICING_URL": server + path + "/{region}/index.csv"})
    assert p.returncode == 2
    err = one_line_error(p)
    assert err.startswith("gpuvet: aws: ") and what in err, err
    assert prices(gpuvet) == before
    src = {s["source"]: s for s in gpuvet.json("prices", "sources", "--json")}
    assert src["aws-bulk:us-east-1"]["status"] == "failed" and src["aws-bulk:us-east-1"]["rows"] == 3


def test_aws_bad_region_is_usage_error(gpuvet):
    p = gpuvet("prices", "update", "--provider", "aws", "--region", "../etc")
    assert p.returncode == 2 and "not an AWS region" in p.stderr


def test_aws_spot_through_moto(gpuvet, tmp_path):
    """DescribeSpotPriceHistory against moto's EC2 emulator on 127.0.0.1 (SigV4-signed by libcurl)."""
    import socket
    from moto.server import ThreadedMotoServer
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    srv = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    srv.start()
    try:
        env = {"GPUVET_AWS_EC2_URL": f"http://127.0.0.1:{port}/", "AWS_ACCESS_KEY_ID": "testing",
               "AWS_SECRET_ACCESS_KEY": "testing", "AWS_SESSION_TOKEN": "tok",
               "GPUVET_AWS_PRICING_URL": (FIX / "aws-ec2-us-east-1.csv").as_uri()}
        p = gpuvet("prices", "update", "--provider", "aws", env=env, check=0)
        assert "aws spot:" in p.stdout
        spot = [r for r in prices(gpuvet, "--market", "spot") if r["source"] == "aws-spot:us-east-1"]
        assert spot and all(r["zone"].startswith("us-east-1") and r["region"] == "us-east-1" for r in spot)
        assert {r["instance_type"] for r in spot} <= {r["instance_type"] for r in prices(gpuvet, "--provider", "aws")}
        # one price per type and zone
        assert len({(r["instance_type"], r["zone"]) for r in spot}) == len(spot)
        r = gpuvet.json("rank", "--market", "spot", "--estimates", "--json")
        assert r["market"] == "spot"
    finally:
        srv.stop()


def test_aws_spot_skipped_without_credentials(gpuvet, server):
    env = {"GPUVET_AWS_PRICING_URL": server + "/aws/{region}/index.csv", "AWS_ACCESS_KEY_ID": "",
           "AWS_SECRET_ACCESS_KEY": ""}
    p = gpuvet("prices", "update", "--provider", "aws", env=env, check=0)
    assert "aws spot: skipped" in p.stdout


# ---- Lambda ----

def test_lambda_update(gpuvet, server):
    env = {"GPUVET_LAMBDA_API_URL": server + "/lambda/instance-types", "LAMBDA_API_KEY": "secret-key-1"}
    p = gpuvet("prices", "update", "--provider", "lambda", env=env, check=0)
    assert "lambda: 3 prices" in p.stdout
    rows = {r["instance_type"]: r for r in prices(gpuvet) if r["source"] == "lambda-api"}
    assert rows["gpu_8x_h100_sxm5"]["price"] == 23.92 and rows["gpu_8x_h100_sxm5"]["gpu_model"] == "H100-SXM"
    assert rows["gpu_1x_gh200"]["gpu_model"] == "GH200" and rows["gpu_1x_a10"]["vcpus"] == 30
    # the key travels only in the Authorization header
    assert any(path == "/lambda/instance-types" for path, _ in Handler.seen)


def test_lambda_errors(gpuvet, server):
    p = gpuvet("prices", "update", "--provider", "lambda", env={"LAMBDA_API_KEY": ""})
    assert p.returncode == 2 and "LAMBDA_API_KEY" in one_line_error(p)
    before = prices(gpuvet)
    for url, key, what in [(server + "/lambda500/instance-types", "k", "HTTP 500"),
                           (server + "/lambda/instance-types", "wrong", "HTTP 401")]:
        p = gpuvet("prices", "update", "--provider", "lambda",
                   env={"GPUVET_LAMBDA_API_URL": url, "LAMBDA_API_KEY": key})
        assert p.returncode == 2 and what in one_line_error(p)
    assert prices(gpuvet) == before


# ---- Alibaba ----

def test_list_and_cheapest_flag_a_price_outside_its_models_band(gpuvet, server):
    """Lambda's feed (the real fixture, served on 127.0.0.1) with its 8 x H100 SXM at 10x the stored H100-SXM
    on-demand median per GPU-hour, its A10 and GH200 at their real prices: `prices list` and `prices cheapest`
    mark that row and no other H100 row, in the text ('!', the band once under the table) and in the JSON
    ("outside_band", its band as the median of the stored prices, a third to 3x).  On 5d0a43a neither said it."""
    def per_gpu():
        return [r["usd_per_hour"] / r["gpu_count"] for r in prices(gpuvet, "--market", "on_demand")
                if r["gpu_model"] == "H100-SXM" and r["usd_per_hour"] and r["gpu_count"]]
    feed = json.loads(LAMBDA_JSON)
    bad = feed["data"]["gpu_8x_h100_sxm5"]["instance_type"]
    bad["price_cents_per_hour"] = round(10 * statistics.median(per_gpu()) * 8 * 100)
    Handler.lambda_feed = json.dumps(feed).encode()
    gpuvet("prices", "update", "--provider", "lambda", check=0,
           env={"GPUVET_LAMBDA_API_URL": server + "/lambdafeed/instance-types", "LAMBDA_API_KEY": "k"})
    median = statistics.median(per_gpu())          # with the outlier stored: gpuvet's band is over every price
    band = {"low_usd_per_gpu_hour": median / 3, "high_usd_per_gpu_hour": median * 3}
    said = "! marks a price per GPU-hour outside the plausible band of H100-SXM on-demand prices"
    for cmd in (["list", "--gpu", "H100"], ["cheapest", "--gpu", "H100", "--limit", "1000"]):
        rows = gpuvet.json("prices", *cmd, "--json")
        sides = [(r, r["on_demand"]) for r in rows if r["on_demand"]] + [(r, r["spot"]) for r in rows if r["spot"]] \
            if cmd[0] == "list" else [(r, r) for r in rows]
        assert len(sides) > 10 and all("outside_band" in s for _, s in sides)
        flagged = [(r["provider"], r["instance_type"], s["outside_band"]) for r, s in sides if s["outside_band"]]
        assert [f[:2] for f in flagged] == [("lambda", "gpu_8x_h100_sxm5")], flagged
        out = flagged[0][2]
        for k, v in band.items():
            assert out[k] == pytest.approx(v, rel=1e-9), (k, out)
        assert out["prices"] == len(per_gpu()) and out["note"].startswith(f"${bad['price_cents_per_hour'] / 800:.3g} "
                                                                           "per GPU-hour is over the plausible band")
        p = gpuvet("prices", *cmd, check=0)
        marked = [ln for ln in p.stdout.splitlines() if "!" in ln]
        assert len(marked) == 1 and " gpu_8x_h100_sxm5 " in marked[0], p.stdout
        assert p.stderr.count(said) == 1 and p.stderr.count("plausible band") == 1, p.stderr


def test_alibaba_without_credentials_says_import(gpuvet):
    p = gpuvet("prices", "update", "--provider", "alibaba",
               env={"ALIBABA_CLOUD_ACCESS_KEY_ID": "", "ALIBABA_CLOUD_ACCESS_KEY_SECRET": ""})
    assert p.returncode == 2
    assert "no alibaba credentials" in one_line_error(p) and "import" in p.stderr


def test_alibaba_signed_describeprice(gpuvet, server):
    env = {"GPUVET_ALIBABA_API_URL": server + "/ecs/", "ALIBABA_CLOUD_ACCESS_KEY_ID": "testid",
           "ALIBABA_CLOUD_ACCESS_KEY_SECRET": ALI_SECRET}
    p = gpuvet("prices", "update", "--provider", "alibaba", "--region", "us-east-1",
               "--types", "ecs.gn7i-c8g1.2xlarge,ecs.gn8v-8x.48xlarge,ecs.bogus", env=env, check=0)
    # asked for: every type the shipped catalog names, plus the new ones --types adds (bogus: skipped)
    shipped = {r["instance_type"] for r in prices(gpuvet, "--provider", "alibaba") if r["source"] == "catalog:alibaba"}
    assert "ecs.gn7i-c8g1.2xlarge" in shipped and "ecs.gn8v-8x.48xlarge" not in shipped
    assert f"alibaba: {len(shipped) + 1} prices" in p.stdout
    rows = [r for r in prices(gpuvet) if r["source"] == "alibaba-api:us-east-1"]
    assert {r["instance_type"] for r in rows} == shipped | {"ecs.gn8v-8x.48xlarge"}
    assert {(r["price"], r["currency"]) for r in rows} == {(1.5, "USD")}
    a10 = next(r for r in rows if r["instance_type"] == "ecs.gn7i-c8g1.2xlarge")
    assert a10["gpu_model"] == "A10" and a10["gpu_count"] == 1  # the catalog's description is kept
    # preemptible prices: each zone's latest (VPC) price, its zone and timestamp kept, in the answer's currency
    spot = [r for r in prices(gpuvet) if r["source"] == "alibaba-spot:us-east-1"]
    assert "alibaba spot: 2 prices" in p.stdout
    assert sorted((r["instance_type"], r["zone"], r["price"], r["currency"], r["captured_at"], r["market"])
                  for r in spot) == [("ecs.gn7i-c8g1.2xlarge", "us-east-1a", 2.4, "CNY", "2026-11-25T10:00:00Z", "spot"),
                                     ("ecs.gn7i-c8g1.2xlarge", "us-east-1b", 3.1, "CNY", "2026-11-25T10:00:00Z", "spot")]
    asked = [q for path, q in Handler.seen if path == "spot"]
    assert asked and all(q["NetworkType"] == "vpc" and q["OSType"] == "linux" and q["RegionId"] == "us-east-1"
                         for q in asked)
    off = next(r for r in offers(gpuvet, "--provider", "alibaba", "--region", "us-east-1")
               if r["instance_type"] == "ecs.gn7i-c8g1.2xlarge")
    assert off["spot"]["zone"] == "us-east-1a" and off["spot"]["interruptible"] and off["spot"]["zones"] == 2
    # a wrong secret fails the signature check on the server: error, prices kept
    before = prices(gpuvet)
    env["ALIBABA_CLOUD_ACCESS_KEY_SECRET"] = "other"
    p = gpuvet("prices", "update", "--provider", "alibaba", "--region", "us-east-1", env=env)
    assert p.returncode == 2 and "SignatureDoesNotMatch" in one_line_error(p)
    assert prices(gpuvet) == before


def test_no_credential_reaches_a_message(gpuvet, server):
    """A source URL's userinfo and a signed request's AccessKeyId/Signature never reach stderr, the
    store's price_sources, `prices sources` or the report (common/util.h gv_redact)."""
    secrets = ["alice", "s3cr3t", "testid", "Signature=", "AccessKeyId="]
    port = server.rsplit(":", 1)[1]
    p = gpuvet("prices", "update", "--provider", "lambda",
               env={"GPUVET_LAMBDA_API_URL": f"http://alice:s3cr3t@127.0.0.1:{port}/lambda500/instance-types",
                    "LAMBDA_API_KEY": "k"})
    assert p.returncode == 2 and "HTTP 500 from http://***@127.0.0.1" in p.stderr, p.stderr
    p2 = gpuvet("prices", "update", "--provider", "alibaba", "--region", "us-east-1",
                env={"GPUVET_ALIBABA_API_URL": server + "/ecs503/", "ALIBABA_CLOUD_ACCESS_KEY_ID": "testid",
                     "ALIBABA_CLOUD_ACCESS_KEY_SECRET": ALI_SECRET})
    assert p2.returncode == 2 and "HTTP 503" in p2.stderr and "AccessKeyId=***" in p2.stderr, p2.stderr
    import sqlite3
    stored = " ".join(str(r) for r in sqlite3.connect(gpuvet.db).execute("SELECT * FROM price_sources"))
    shown = gpuvet("prices", "sources", check=0).stdout + gpuvet("prices", "sources", "--json", check=0).stdout
    report = gpuvet("report", "-o", "-", check=0).stdout
    for where, text in [("stderr", p.stderr + p2.stderr), ("store", stored), ("sources", shown), ("report", report)]:
        for s in secrets:
            assert s not in text or (s.endswith("=") and s + "***" in text and text.count(s) == text.count(s + "***")), \
                (where, s)


def test_update_all_skips_providers_without_credentials(gpuvet, server):
    env = {"GPUVET_AWS_PRICING_URL": server + "/aws/{region}/index.csv", "LAMBDA_API_KEY": "",
           "ALIBABA_CLOUD_ACCESS_KEY_ID": "", "ALIBABA_CLOUD_ACCESS_KEY_SECRET": ""}
    p = gpuvet("prices", "update", env=env, check=0)
    assert "aws: 3 prices" in p.stdout
    assert "lambda: skipped" in p.stdout and "alibaba: skipped" in p.stdout


def test_update_offline_reloads_catalogs(gpuvet):
    p = gpuvet("prices", "update", "--offline", check=0)
    assert "loaded" in p.stdout
    assert any(r["source"] == "catalog:lambda" for r in prices(gpuvet))


def test_unknown_subcommand_and_provider(gpuvet):
    assert gpuvet("prices", "frobnicate").returncode == 2
    p = gpuvet("prices", "update", "--provider", "gcp")
    assert p.returncode == 2 and "aws, lambda or alibaba" in p.stderr
