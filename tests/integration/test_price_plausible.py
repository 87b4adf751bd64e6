"""Prices are plausible or refused (issue #35 item 7): a price under a tenth of a cent an hour is
refused, one key priced twice in a file is refused naming both lines, the latest import of a key
replaces earlier imports of it, and a price over 10x off the shipped catalog's is warned about."""
import json

PRICE_HDR = "provider,instance_type,region,market,price,unit,currency,captured_at,gpu_model,gpu_count\n"


def records(gpuvet, itype):
    rows = json.loads(gpuvet("prices", "list", "--records", "--json", check=0).stdout)
    return sorted((r["source"], r["price"]) for r in rows if r["instance_type"] == itype)


def put(tmp_path, name, *rows):
    f = tmp_path / name
    f.write_text(PRICE_HDR + "".join(r + "\n" for r in rows))
    return f


def test_a_price_under_a_tenth_of_a_cent_is_refused(gpuvet, tmp_path):
    f = put(tmp_path, "bogus.csv", "aws,p9.x,us-east-1,on_demand,1e-300,hour,USD,2026-10-01,H100-SXM,8")
    p = gpuvet("prices", "import", f)
    assert p.returncode == 2 and "not believable (under 0.001 per hour)" in p.stderr, p.stderr
    assert records(gpuvet, "p9.x") == []


def test_one_key_twice_in_a_file_is_refused_naming_both_lines(gpuvet, tmp_path):
    f = put(tmp_path, "twice.csv", "aws,p9.x,us-east-1,on_demand,30,hour,USD,2026-10-01,H100-SXM,8",
            "aws,p9.y,us-east-1,on_demand,31,hour,USD,2026-10-01,H100-SXM,8",
            "aws,p9.x,us-east-1,on_demand,20,hour,USD,2026-10-01,H100-SXM,8")
    p = gpuvet("prices", "import", f)
    assert p.returncode == 2 and "priced twice, at lines 2 and 4" in p.stderr, p.stdout + p.stderr
    assert records(gpuvet, "p9.x") == [] and records(gpuvet, "p9.y") == []


def test_the_latest_import_of_a_key_wins(gpuvet, tmp_path):
    gpuvet("prices", "import", put(tmp_path, "a.csv", "aws,p9.x,us-east-1,on_demand,30,hour,USD,2026-10-01,H100-SXM,8"),
           check=0)
    gpuvet("prices", "import", put(tmp_path, "typo.csv", "aws,p9.x,us-east-1,on_demand,0.3,hour,USD,2026-10-01,H100-SXM,8"),
           check=0)
    assert records(gpuvet, "p9.x") == [("import:typo.csv", 0.3)]
    gpuvet("prices", "import", put(tmp_path, "fixed.csv", "aws,p9.x,us-east-1,on_demand,29,hour,USD,2026-10-01,H100-SXM,8"),
           check=0)
    assert records(gpuvet, "p9.x") == [("import:fixed.csv", 29.0)]


def test_a_price_ten_times_off_the_catalog_is_warned_about(gpuvet, tmp_path):
    f = put(tmp_path, "cheap.csv", "aws,g4dn.xlarge,us-east-1,on_demand,0.01,hour,USD,2026-10-01,T4,1",
            "aws,g4dn.2xlarge,us-east-1,on_demand,0.7,hour,USD,2026-10-01,T4,1")
    p = gpuvet("prices", "import", f)
    assert p.returncode == 0, p.stderr
    assert "line 2: aws g4dn.xlarge at 0.01 USD/hour is 53x below the shipped catalog's 0.526" in p.stderr, p.stderr
    assert "g4dn.2xlarge" not in p.stderr
