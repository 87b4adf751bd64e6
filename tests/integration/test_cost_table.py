"""Tables a person reads (issue 58 items 4, 5 and 10), on the README's example store (the real H100
captures of tests/fixtures/gpu/h100-2026-11-22, named an AWS p5.4xlarge in us-east-1) with every
priced type estimated:

- item 4: `cost` fits 160 columns by default (training and serving), ranks the types the job fits and
  collapses the rest to one line per reason, naming a measured type among them; `--wide` lists each
  type and every column;
- item 5: a request the machine lowered (`--concurrency 32` where the KV cache holds fewer) is said in
  the row, in the table and in `--json`;
- item 10: rank 1 is the best row: `cost` ranks by $/Mtok and `rank --estimates` by value per dollar,
  measured and estimated rows together, each marked.

On c4fdb45 each failed: 261 and 277 columns, 68 "does not fit" rows ranked 34-101, a lowered
concurrency said only in --json, the measured type ranked first whatever its price."""
import pytest

from conftest import FIXTURES

H100 = FIXTURES / "gpu" / "h100-2026-11-22"
TRAIN = ("cost", "--model", "llama-3.1-8b", "--task", "train", "--seq", "8192", "--tokens", "1e9", "--estimates")
SERVE = ("cost", "--model", "llama-3.1-8b", "--task", "infer", "--estimates")


@pytest.fixture
def example(gpuvet):
    gpuvet("results", "import", H100, "--provider", "aws", "--sku", "p5.4xlarge", "--region", "us-east-1", check=0)
    return gpuvet


@pytest.mark.parametrize("args", [TRAIN, SERVE, SERVE + ("--concurrency", "32", "--prompt-tokens", "5000")],
                         ids=["train", "serve", "serve-lowered"])
def test_cost_fits_160_columns_and_collapses_what_does_not_fit(example, args):
    p = example(*args, check=0)
    lines = p.stdout.splitlines()
    assert max(len(ln) for ln in lines) <= 160, max(lines, key=len)
    res = example.json(*args, "--json")
    fit = [r for r in res["rows"] if r["fits"]]
    no = [r for r in res["rows"] if not r["fits"]]
    # ranked: the rows that fit, 1..n; the others have no rank
    assert [r["rank"] for r in fit] == list(range(1, len(fit) + 1)) and all(r["rank"] is None for r in no)
    top = next(i for i, ln in enumerate(lines) if ln.startswith("RANK "))
    ranked = lines[top + 1:lines.index("", top)]
    assert len(ranked) == len(fit)
    if no:
        head = next(ln for ln in lines if "do not fit, not ranked" in ln)
        assert head.startswith(f"{len(no)} instance type(s) do not fit")
        reasons = lines[lines.index(head) + 1:]
        reasons = reasons[:next(i for i, ln in enumerate(reasons) if not ln.startswith("  "))]
        assert 1 <= len(reasons) <= 4 and sum(int(ln.split()[0]) for ln in reasons) == len(no)
        measured = [r for r in no if not r["estimate"]]
        for r in measured:   # a type the user measured is named, never counted away
            assert any(f"aws {r['instance_type']}" in ln for ln in reasons), reasons
    wide = example(*args, "--wide", check=0).stdout.splitlines()
    assert len([ln for ln in wide if " does not fit: " in ln]) == len(no)
    head = next(ln for ln in wide if ln.startswith("RANK "))
    assert "(LOW-HIGH)" in head and "JOB HOURS" in head


def test_training_collapses_the_too_small_types_to_one_line(example):
    lines = example(*TRAIN, check=0).stdout.splitlines()
    small = [ln for ln in lines if "type(s) too small: " in ln]
    assert len(small) == 1 and "GPUs of 16-" in small[0] and "measured among them: aws p5.4xlarge" in small[0]


def test_a_lowered_request_is_said_in_the_row(example):
    args = SERVE + ("--concurrency", "32", "--prompt-tokens", "5000")
    res = example.json(*args, "--json")
    low = [r for r in res["rows"] if r["fits"] and r["concurrency"] < 32]
    assert low, "no type lowers 32 requests of 5000 + 1000 tokens"
    for r in low:
        assert r["concurrency_lowered"] is True and r["concurrency_asked"] == 32
        assert f"at most {r['concurrency']:.0f} in flight (--concurrency 32)" in r["basis"]
    assert all(r["concurrency_lowered"] is False for r in res["rows"] if r["fits"] and r["concurrency"] == 32)
    table = example(*args, check=0).stdout.splitlines()
    for r in low:
        ln = next(ln for ln in table if ln.split()[:3] == [str(r["rank"]), r["provider"], r["instance_type"]])
        assert f"at most {r['concurrency']:.0f} in flight (asked 32)" in ln, ln


def test_rank_1_is_the_cheapest_row_in_cost(example):
    res = example.json(*SERVE, "--json")
    fit = [r for r in res["rows"] if r["fits"]]
    usd = [r["usd_per_million_tokens"] for r in fit]
    assert usd == sorted(usd) and fit[0]["usd_per_million_tokens"] == min(usd)
    measured = next(r for r in fit if not r["estimate"])
    assert measured["rank"] > 1 and any(r["estimate"] for r in fit[:measured["rank"] - 1])
    line = next(ln for ln in example(*SERVE, check=0).stdout.splitlines() if ln.startswith(f"{measured['rank']} "))
    assert "measured, 1 standard run(s)" in line


def test_rank_1_is_the_best_row_in_rank(example):
    rows = example.json("rank", "--estimates", "--json")["rows"]
    vpd = [r["value_per_dollar"] for r in rows]
    assert vpd == sorted(vpd, reverse=True) and rows[0]["rank"] == 1
    measured = next(r for r in rows if not r["estimate"])
    assert measured["rank"] > 1 and rows[0]["estimate"] is True
    text = example("rank", "--estimates", check=0).stdout
    assert "ranked with the measured types by value per dollar" in text
