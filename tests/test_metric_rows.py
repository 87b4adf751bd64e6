"""Every metric a bench reports is described by a row its bench declares (benches/bench.h,
struct metric_info): rank, the report and the acceptance policy read what a metric is from
those rows only, so a metric without one would silently be unrankable and unlabelled.

The emitted names are read from the sources: the literal names of bench_metric() calls,
memcpy's r_metric[] table and gemm's "gemm.%s.tflops" (one name per dtype).  The declared
rows are the { "name", "unit", "label", ... } lines of the metric_info tables.
"""
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BENCHES = ROOT / "benches"

EMIT = re.compile(r'bench_metric\(\s*[a-z_>.-]+,\s*"([^"]+)"')
ROW = re.compile(r'^\s*\{\s*"([a-z0-9_.*]+)",\s*"([^"]*)",\s*"([^"]+)",', re.M)


def sources():
    return {p.name: p.read_text() for p in sorted(BENCHES.glob("*.c")) + sorted(BENCHES.glob("*.cu"))}


def emitted(src):
    names = set()
    for text in src.values():
        names.update(EMIT.findall(text))
    m = re.search(r"r_metric\[R_COUNT\]\s*=\s*\{(.*?)\};", src["memcpy.cu"], re.S)
    assert m, "memcpy.cu's r_metric[] table not found"
    names.update(re.findall(r'"([^"]+)"', m.group(1)))
    assert '"gemm.%s.tflops"' in src["gemm.cu"]
    names.update(f"gemm.{d}.tflops" for d in ("fp32", "tf32", "fp16", "bf16", "fp8"))
    names.update(f"gemm.{d}.pct_of_peak" for d in ("fp32", "tf32", "fp16", "bf16", "fp8"))  # by the harness
    return names


def matches(pattern, name):
    rx = "^" + re.escape(pattern).replace(r"\*", r"[^.]+") + "$"
    return re.match(rx, name) is not None


def test_every_reported_metric_has_a_row():
    src = sources()
    rows = [r for text in src.values() for r in ROW.findall(text)]
    names = emitted(src)
    assert len(names) > 30, sorted(names)
    missing = sorted(n for n in names if not any(matches(r[0], n) for r in rows))
    assert not missing, f"metrics without a row in their bench's metric_info table: {missing}"
    # rows have a unit and a label, and no two rows claim the same name
    for name, unit, label in rows:
        assert unit and label, name
    for n in names:
        claims = [r[0] for r in rows if matches(r[0], n)]
        assert len(claims) == 1, (n, claims)


def test_matcher_is_the_c_one():
    # the same rule as metric_name_matches() in benches/registry.c (unit-tested in test_metric_info.c)
    assert matches("gemm.*.tflops", "gemm.bf16.tflops")
    assert not matches("gemm.*.tflops", "gemm.bf16.x.tflops")
    assert not matches("gemm.*.tflops", "gemm..tflops")
