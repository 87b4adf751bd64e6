"""Option errors name the option and its accepted range; one number parser (issue #47 item 8).

`cost --seq 0` said "--option must be...", `--tokens 1e20` "must be a positive number" without the
bound, `--tokens 0x10` was taken as 16 where prices and policies refuse hex, `results tag 1 --custom
'-2+3'` named '1' and `prices fx CNY -1` "unknown option '-1'".  Every command now parses numbers
through common/util.h's one parser (decimal only) and getopt's refusals through gv_opt_refused
(runners/opts.h), which names what the user wrote.
"""
import pytest


@pytest.mark.parametrize("opt, bound", [
    ("--seq", "from 1 to 10000000"), ("--batch", "from 1 to 1000000"), ("--gpus", "from 1 to 100000"),
    ("--context", "from 1 to 10000000"), ("--layers", "from 1 to 100000"),
])
def test_cost_names_the_option_and_its_range(gpuvet, opt, bound):
    p = gpuvet("cost", "--model", "llama-3.1-8b", opt, "0")
    assert p.returncode == 2
    assert f"{opt} must be a whole number {bound}, not '0'" in p.stderr, p.stderr
    assert "--option" not in p.stderr


@pytest.mark.parametrize("value", ["1e20", "0x10", "0X1p4", "inf", "nan", " 5", "-3"])
def test_tokens_outside_the_range_or_not_decimal_are_refused(gpuvet, value):
    p = gpuvet("cost", "--model", "llama-3.1-8b", "--tokens", value)
    assert p.returncode == 2, (value, p.stdout)
    assert f"--tokens must be a number from 1 to 1e18, not '{value}'" in p.stderr, p.stderr


def test_hex_is_refused_wherever_a_number_is_read(gpuvet):
    assert "not a number" in gpuvet("prices", "fx", "CNY", "0x10", "--date", "2026-11-01", "--source", "x").stderr
    p = gpuvet("prices", "cheapest", "--gpu", "H100", "--count", "0x8")
    assert p.returncode == 2
    p = gpuvet("cost", "--model", "llama-3.1-8b", "--seq", "0x800")
    assert p.returncode == 2 and "--seq must be a whole number" in p.stderr


def test_refused_arguments_are_named_as_written(gpuvet):
    p = gpuvet("results", "tag", "1", "--custom", "-2+3")
    assert p.returncode == 2 and "'-2+3'" in p.stderr and "'1'" not in p.stderr, p.stderr
    p = gpuvet("prices", "fx", "CNY", "-1")
    assert p.returncode == 2 and "unknown option '-1'" not in p.stderr and "'-1'" in p.stderr, p.stderr
    assert "negative" in p.stderr
    p = gpuvet("rank", "--metric")
    assert p.returncode == 2 and "option '--metric' needs a value" in p.stderr, p.stderr
    p = gpuvet("rank", "--json=yes")
    assert p.returncode == 2 and "option '--json' takes no value" in p.stderr, p.stderr
    p = gpuvet("results", "list", "--format")
    assert p.returncode == 2 and "option '--format' needs a value" in p.stderr, p.stderr
