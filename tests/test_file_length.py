"""No source file a reader cannot hold: at most 1,000 lines (issue #27, HACKING.md "Layers").

Reads every C, CUDA and header file of the product's folders.  A file that grows past the limit is
split by concern (a table of sections, the store by verb, flags by family), not trimmed."""
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FOLDERS = ["common", "platform", "benches", "results", "pricing", "judge", "reports", "runners"]
MAX_LINES = 1000


def too_long(files):
    return [f"{rel} is {text.count(chr(10))} lines" for rel, text in files if text.count("\n") > MAX_LINES]


def test_the_check_can_fail():
    assert too_long([("a.c", "x;\n" * (MAX_LINES + 1)), ("b.c", "x;\n" * MAX_LINES)]) == [
        f"a.c is {MAX_LINES + 1} lines"]


def test_no_source_file_over_1000_lines():
    files = [(str(p.relative_to(ROOT)), p.read_text(errors="replace"))
             for folder in FOLDERS for p in sorted((ROOT / folder).glob("*"))
             if p.suffix in (".c", ".cu", ".h", ".cuh") and p.is_file()]
    assert len(files) > 50
    v = too_long(files)
    assert not v, "files to split by concern:\n" + "\n".join(v)
