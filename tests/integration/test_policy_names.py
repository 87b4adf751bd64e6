"""Issue 52, names and reasons that mean something: a policy name is compared as a reader sees it
(NFKC's compatibility characters folded, case folded, look-alike letters folded; common/ident_fold.c),
invisible and control characters refused, so the built-in name `default` and its look-alikes are
reserved; a tolerate_flags reason is visible text, at least one word (`reason: ok` is one, three
spaces or a zero-width space are none), and the message says what is wrong; a rule on a metric no
bench can report (a dtype gemm does not run) is a policy error at load (exit 2), not UNMEASURABLE.
Each look-alike name, each empty reason, `reason: ok` and the gemm.bf99 rule behaved otherwise on
f4570a0."""
import json
import uuid
from pathlib import Path

import pytest

from conftest import FIXTURES

Q = FIXTURES / "gpu" / "h100-2026-11-22" / "quick-profile.json"
RULE = "rules:\n  - metric: gemm.bf16.tflops\n    gpu: each\n    min: 100\n"


@pytest.fixture
def run(gpuvet, tmp_path):
    fp = json.loads(Path(Q).read_text())
    fp["run"]["uuid"] = str(uuid.uuid4())
    fp["verdicts"] = []
    path = tmp_path / "fp.json"
    path.write_text(json.dumps(fp))
    gpuvet("results", "import", path, check=0)
    return fp["run"]["uuid"]


def policy(tmp_path, text):
    path = tmp_path / "p.yaml"
    path.write_bytes(text.encode())
    return path


@pytest.mark.parametrize("name", ['Default', 'DEFAULT', '"default "', '" default"', '"de fault"'.replace(" ", ""),
                                  '"ｄｅｆａｕｌｔ"', '"dеfault"', '"𝐝𝐞𝐟𝐚𝐮𝐥𝐭"', '"ＤＥＦＡＵＬＴ\u3000"',
                                  # issue 57: the confusables skeleton, and the word first
                                  '"défault"', '"ᴅᴇꜰᴀᴜʟᴛ"', '"\U0001F133efault"', '"\ua4d3efault"', '"default (built-in)"'],
                         ids=["Default", "DEFAULT", "trailing_space", "leading_space", "plain", "fullwidth",
                              "cyrillic_e", "math_bold", "fullwidth_caps_ideographic_space", "accent", "small_caps",
                              "squared", "lisu", "annotated"])
def test_a_look_alike_of_the_builtin_name_is_refused(gpuvet, tmp_path, run, name):
    p = gpuvet("accept", "--run", run, "--policy", policy(tmp_path, f"name: {name}\n" + RULE), check=2)
    assert "the built-in policy's" in p.stderr and "line 1" in p.stderr, p.stderr


@pytest.mark.parametrize("name", ['"default\\u200b"', '"def\\u00adault"', '"default\\ufeff"', '"lab\\u2060"',
                                  '"def\\u2028ault"', '"default\\u2800"'],
                         ids=["zero_width_space", "soft_hyphen", "bom", "word_joiner", "line_separator", "braille_blank"])
def test_an_invisible_character_in_a_name_is_refused(gpuvet, tmp_path, run, name):
    p = gpuvet("accept", "--run", run, "--policy", policy(tmp_path, f"name: {name}\n" + RULE), check=2)
    assert "invisible character" in p.stderr, p.stderr


@pytest.mark.parametrize("name", ["defaults", "lab", "Ｌａｂ", "日本のチーム"])
def test_other_names_are_taken(gpuvet, tmp_path, run, name):
    gpuvet("accept", "--run", run, "--policy", policy(tmp_path, f"name: {name}\n" + RULE), check=0)


def tolerate(reason):
    return ("name: lab\n" + RULE + "tolerate_flags:\n  - code: DATA_CORRUPTION\n    reason: " + reason + "\n")


@pytest.mark.parametrize("reason", ['"   "', '"\\u200b"', '"\\u200b \\u2060"', '""', '"..."', "''"],
                         ids=["three_spaces", "zero_width_space", "invisible_and_space", "empty", "dots", "quoted_empty"])
def test_a_reason_without_a_word_is_refused_and_says_why(gpuvet, tmp_path, run, reason):
    p = gpuvet("accept", "--run", run, "--policy", policy(tmp_path, tolerate(reason)), check=2)
    assert "DATA_CORRUPTION" in p.stderr and ("no word" in p.stderr or "is empty" in p.stderr), p.stderr


@pytest.mark.parametrize("reason", ["ok", "no", "we test the sdc detector here", "検証用"])
def test_a_short_reason_is_a_reason(gpuvet, tmp_path, run, reason):
    p = gpuvet("accept", "--run", run, "--policy", policy(tmp_path, tolerate(reason)), "--json", check=0)
    assert json.loads(p.stdout)["verdict"] == "accept"


@pytest.mark.parametrize("metric", ["gemm.bf99.tflops", "gemm.int4.pct_of_peak", "gemm.fp9.best_shape.tflops"])
def test_a_rule_on_a_dtype_gemm_does_not_run_is_a_policy_error(gpuvet, tmp_path, run, metric):
    text = f"name: lab\nrules:\n  - metric: {metric}\n    min: 1\n"
    p = gpuvet("accept", "--run", run, "--policy", policy(tmp_path, text), check=2)
    assert f"unknown metric '{metric}'" in p.stderr and "line 3" in p.stderr, p.stderr
