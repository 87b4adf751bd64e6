"""No function a reader cannot hold: at most 100 lines (issues 15 and 27, HACKING.md).

Reads every C and CUDA source of the project's folders.  Our style puts a
function's opening brace and its closing brace in column 0 (kernel style, as
in git and SQLite), so a function is the lines from its signature to the
first '}' in column 0 after a '{' in column 0.
"""
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FOLDERS = ["common", "platform", "benches", "results", "pricing", "judge", "reports", "runners"]
MAX_LINES = 100


def functions(text):
    """(first line, length in lines, signature) of each function in text."""
    lines = text.split("\n")
    start = None
    for i, line in enumerate(lines):
        if line.startswith("{") and start is None and i > 0:
            j = i - 1  # the signature may span lines; it starts after a blank, a ';', a '}' or a comment
            while j > 0 and lines[j - 1].strip() and not lines[j - 1].rstrip().endswith((";", "}", "*/")) \
                    and not lines[j - 1].lstrip().startswith(("#", "/*", "*")):
                j -= 1
            start = j
        elif line.startswith("}") and start is not None:
            yield start + 1, i - start + 1, lines[start].strip()
            start = None


def too_long(files):
    return [f"{rel}:{first}: {sig[:60]} is {n} lines" for rel, text in files
            for first, n, sig in functions(text) if n > MAX_LINES]


def test_the_check_can_fail():
    body = "".join(f"\tx += {i};\n" for i in range(MAX_LINES))
    planted = [("a.c", "static int f(int x)\n{\n" + body + "}\n"),
               ("b.c", "int g(void)\n{\n\treturn 0;\n}\n")]
    assert [v.split(":")[0] for v in too_long(planted)] == ["a.c"]


def test_no_function_over_100_lines():
    files = [(str(p.relative_to(ROOT)), p.read_text(errors="replace"))
             for folder in FOLDERS for p in sorted((ROOT / folder).glob("*"))
             if p.suffix in (".c", ".cu") and p.is_file()]
    v = too_long(files)
    assert not v, "functions longer than a reader can hold:\n" + "\n".join(v)
