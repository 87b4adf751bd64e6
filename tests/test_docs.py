"""The docs a newcomer reads are true to the tree: README.md is a short guide (at most 300 lines),
and every file it, HACKING.md and docs/*.md link to or name exists."""
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LINK = re.compile(r"\]\(([^)\s#]+)(#[^)]*)?\)")
PATH = re.compile(r"`((?:common|platform|benches|results|pricing|judge|reports|runners|tests|docs|contrib|packaging)"
                  r"/[\w./-]+\.(?:c|h|cu|cuh|md|py|sh|yaml|csv|png|json))`")


def docs():
    return [ROOT / "README.md", ROOT / "HACKING.md", ROOT / "packaging" / "README.md"] + sorted((ROOT / "docs").glob("*.md"))


def missing(md, text):
    out = []
    for m in LINK.finditer(text):
        target = m.group(1)
        if target.startswith(("http://", "https://", "mailto:")):
            continue
        if not (md.parent / target).exists():
            out.append(f"{md.relative_to(ROOT)}: link {target}")
    for m in PATH.finditer(text):
        p = m.group(1)
        placeholder = re.search(r"(^|[/_])[A-Z]+(?=[._/]|$)", p)   # benches/NAME.c, fetch_P.c
        if not (ROOT / p).exists() and not placeholder:
            out.append(f"{md.relative_to(ROOT)}: path {p}")
    return out


def test_checker_can_fail():
    text = "[x](docs/nowhere.md) `judge/nothing.c` [y](https://example.org) [z](HACKING.md) `benches/NAME.c`"
    assert missing(ROOT / "README.md", text) == ["README.md: link docs/nowhere.md", "README.md: path judge/nothing.c"]


def test_readme_is_a_short_guide():
    n = len((ROOT / "README.md").read_text().splitlines())
    assert n <= 300, f"README.md has {n} lines: the reference belongs in docs/"


def test_every_named_file_exists():
    bad = [x for md in docs() for x in missing(md, md.read_text())]
    assert not bad, "\n".join(bad)
