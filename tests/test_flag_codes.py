"""Issue 34: every flag code a rule of judge/flags*.c can raise is in flags_codes[] (judge/flags.c),
so tests/unit/test_gate.c's table test, which raises each listed code in its critical form and
expects the default policy to reject, covers every flag the judge can raise: a new code raised
without its row there fails here, and with it, fails closed there."""
import re

from conftest import ROOT


def listed_codes():
    src = (ROOT / "judge" / "flags.c").read_text()
    table = re.search(r"flags_codes\[\] = \{(.*?)NULL", src, re.S).group(1)
    return set(re.findall(r'"([A-Z][A-Z0-9_]*)"', table))


def raised_codes():
    """String literals that name a flag: upper case words of the judge's flag files, except the
    threshold names of the evidence (FLAG_*), environment variables (GPUVET_*) and the prefix
    flags_measurable() matches ("THROTTLE_")."""
    codes = set()
    for path in sorted((ROOT / "judge").glob("flags*.c")):
        for lit in re.findall(r'"([A-Z][A-Z0-9_]*)"', path.read_text()):
            if not lit.startswith(("FLAG_", "GPUVET_")) and not lit.endswith("_"):
                codes.add(lit)
    return codes


def test_every_raised_flag_code_is_listed():
    missing = raised_codes() - listed_codes()
    assert not missing, f"flag codes raised in judge/flags*.c but not in flags_codes[]: {sorted(missing)}"


def test_the_table_test_walks_flags_codes():
    unit = (ROOT / "tests" / "unit" / "test_gate.c").read_text()
    assert "for (int i = 0; flags_codes[i]; i++, n++)" in unit
    assert len(listed_codes()) >= 21
