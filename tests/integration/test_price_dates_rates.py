"""Exchange rates and dates are checked like prices; spot prices are read one way (issue #47 items 4-6).

- item 4: a rate outside what gpuvet states for its currency (CNY 0.000001 ranked Alibaba first at
  0.0000 USD/h) is refused naming the range; one 10x off the stored rate is warned about; a rate
  dated 2099 or before 2000 is refused; `prices fx CNY -1` says what is wrong with '-1'.
- item 5: a price's captured_at is a real date and time (not 2026-13-45T99:99:99Z), from 2000 on and
  not over a day ahead; `prices sources` shows the date its file gave (the shipped rates' too).
- item 6: a spot row without gpu_model/gpu_count takes them from the shipped catalog's rows of its
  type, so `prices list --market spot` and `prices cheapest --market spot` show it as `rank` uses it;
  a spot price far below the catalog's is warned about as an on-demand one is.
"""
import json

import pytest

HDR = "provider,instance_type,region,market,price,unit,currency,captured_at"


def fx(gpuvet, cur, rate, date="2026-11-01"):
    return gpuvet("prices", "fx", cur, rate, "--date", date, "--source", "test")


def test_an_implausible_rate_is_refused_naming_the_range(gpuvet):
    p = fx(gpuvet, "CNY", "0.000001")
    assert p.returncode == 2 and "outside 0.035 to 0.55" in p.stderr and "CNY" in p.stderr, p.stderr
    p = fx(gpuvet, "CNY", "7.1")                     # units per dollar, the wrong way round
    assert p.returncode == 2 and "not units per dollar" in p.stderr, p.stderr
    p = fx(gpuvet, "XYZ", "1e-9")                    # a currency gpuvet has no range for: no currency's
    assert p.returncode == 2 and "outside 1e-06 to 10" in p.stderr, p.stderr
    rates = gpuvet.json("prices", "fx", "--json")
    assert [r["usd_per_unit"] for r in rates if r["currency"] == "CNY"] == [pytest.approx(0.1369992)]


def test_a_tenfold_change_of_a_stored_rate_is_warned(gpuvet):
    assert fx(gpuvet, "HUF", "0.0027").returncode == 0
    p = fx(gpuvet, "HUF", "0.00027")
    assert p.returncode == 0 and "warning: the HUF rate 0.00027 is 10x below the stored 0.0027" in p.stderr, p.stderr
    p = fx(gpuvet, "HUF", "0.0003")
    assert p.returncode == 0 and "warning" not in p.stderr


@pytest.mark.parametrize("date, why", [
    ("2099-01-01", "is in the future"), ("1999-12-31", "is before 2000"), ("2026-02-30", "is not a date"),
    ("2026-13-01", "is not a date"),
])
def test_a_rate_date_is_a_real_date_in_range(gpuvet, date, why):
    p = fx(gpuvet, "CNY", "0.14", date)
    assert p.returncode == 2 and why in p.stderr, p.stderr


def test_a_negative_rate_is_named(gpuvet):
    p = gpuvet("prices", "fx", "CNY", "-1")
    assert p.returncode == 2 and "'-1'" in p.stderr and "unknown option" not in p.stderr, p.stderr


@pytest.mark.parametrize("captured, why", [
    ("2026-13-45T99:99:99Z", "is not a date"), ("2026-10-01T24:00:00Z", "is not a date"),
    ("2099-01-01", "is in the future"), ("1970-01-01", "is before 2000"), ("2026-10-01x", "is not a date"),
])
def test_a_price_date_is_a_real_date_in_range(gpuvet, tmp_path, captured, why):
    f = tmp_path / "p.csv"
    f.write_text(HDR + "\naws,p5.4xlarge,us-east-1,on_demand,5.5,hour,USD,%s\n" % captured)
    p = gpuvet("prices", "import", f)
    assert p.returncode == 2 and f"captured_at '{captured}' {why}" in p.stderr, p.stderr


def test_good_dates_are_taken_and_shown_by_prices_sources(gpuvet, tmp_path):
    f = tmp_path / "deal.csv"
    f.write_text(HDR + "\naws,p5.4xlarge,us-east-1,on_demand,5.5,hour,USD,2026-10-01T10:00:00+02:00\n"
                 "aws,p5.48xlarge,us-east-1,on_demand,50,hour,USD,2024-02-29\n")
    gpuvet("prices", "import", f, check=0)
    src = {s["source"]: s["captured_at"] for s in gpuvet.json("prices", "sources", "--json")}
    assert src["import:deal.csv"] == "2026-10-01T10:00:00+02:00"
    assert src["catalog:fx"] == "2024-12-30"        # the date the shipped rates file gives


def test_a_spot_row_without_gpu_columns_is_read_one_way(gpuvet, tmp_path):
    f = tmp_path / "spot.csv"
    f.write_text(HDR + "\naws,p5.4xlarge,us-east-1,spot,2.5,hour,USD,2026-10-01\n")
    gpuvet("prices", "import", f, check=0)
    rows = gpuvet.json("prices", "list", "--market", "spot", "--provider", "aws", "--region", "us-east-1", "--json")
    mine = [r for r in rows if r["instance_type"] == "p5.4xlarge"]
    assert mine and mine[0]["gpu_model"] == "H100-SXM" and mine[0]["gpu_count"] == 1, mine
    p = gpuvet("prices", "cheapest", "--gpu", "H100", "--market", "spot", "--json", check=0)
    assert any(r["instance_type"] == "p5.4xlarge" and r["region"] == "us-east-1" for r in json.loads(p.stdout))


def test_a_spot_price_far_below_the_catalog_is_warned(gpuvet, tmp_path):
    f = tmp_path / "cheap.csv"
    f.write_text(HDR + "\naws,p5.4xlarge,us-east-1,spot,0.05,hour,USD,2026-10-01\n")
    p = gpuvet("prices", "import", f)
    assert p.returncode == 0 and "p5.4xlarge spot at 0.05 USD/hour is 138x below the shipped catalog's on-demand" \
        in p.stderr, p.stderr
