"""The folders' layer order and the one owner of stored data (HACKING.md "Layers").

Layers, bottom up (../shared/DESIGN.md): common (0), platform (1: NVML and
library loading, block devices, the object-store transport, inventory
parsing), benches and results (2, peers: neither uses the other), pricing (3),
judge (4: flags, policy, references, score and ranking), reports (5: render
only), runners (6: the CLI).  A file may include, and its object may call,
only its own folder and the layers below it; benches and results, peers of
one rank, may not use each other.

Two checks read the code:
  - every #include "folder/file.h" of every source and header;
  - every undefined symbol of every object file in build/obj/<folder>/ (nm),
    against the folder whose objects define it.  The include check sees what
    a file asks for, the symbol check what it really calls (a prototype
    written by hand instead of an include would pass the first, not the
    second).
A third reads for SQL: only the store (results/store*.c) and the price
catalog (pricing/catalog*.c) talk to SQLite.
"""
import functools
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
RANK = {"common": 0, "platform": 1, "benches": 2, "results": 2, "pricing": 3, "judge": 4, "reports": 5,
        "runners": 6}
SOURCE_EXT = {".c", ".h", ".cu", ".cuh"}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([a-z_]+)/[^"]+"', re.M)

# SQL may live only here (the store, the price catalog).
SQL_OWNERS = [re.compile(r"results/store[a-z_]*\.c$"), re.compile(r"results/store_int\.h$"),
              re.compile(r"pricing/catalog[a-z_]*\.c$")]
SQL_MARKERS = [
    re.compile(r"\bsqlite3_[a-z_0-9]+\s*\("),
    re.compile(r"#\s*include\s*<sqlite3\.h>"),
    re.compile(r'"[^"\n]*\b(SELECT\b[^"\n]*|INSERT\s+(OR\s+\w+\s+)?INTO|UPDATE\s+\w+\s+SET|DELETE\s+FROM|'
               r'CREATE\s+(TABLE|INDEX|TEMP)|PRAGMA\s+\w+|BEGIN\s+IMMEDIATE|COMMIT\b)'),
]


def sources():
    for folder in RANK:
        for p in sorted((ROOT / folder).glob("*")):
            if p.suffix in SOURCE_EXT and p.is_file():
                yield p


def allowed(frm, to):
    """May folder frm use folder to?  Peers of one rank (benches, results) may not."""
    return frm == to or RANK[to] < RANK[frm]


def include_violations(files):
    """files: iterable of (relative path, text). Returns 'path: includes x' lines."""
    out = []
    for rel, text in files:
        frm = rel.split("/")[0]
        for m in INCLUDE.finditer(text):
            to = m.group(1)
            if to in RANK and not allowed(frm, to):
                out.append(f"{rel}: includes {m.group(0).strip()} ({frm} may not use {to})")
    return out


def sql_violations(files):
    out = []
    for rel, text in files:
        if any(o.search(rel) for o in SQL_OWNERS):
            continue
        for mk in SQL_MARKERS:
            m = mk.search(text)
            if m:
                line = text.count("\n", 0, m.start()) + 1
                out.append(f"{rel}:{line}: {m.group(0)[:60]}")
                break
    return out


def read_all():
    return [(str(p.relative_to(ROOT)), p.read_text(errors="replace")) for p in sources()]


def test_checks_can_fail():
    # the checkers themselves: a planted upward include and a planted query are caught
    planted = [("results/x.c", '#include "reports/html.h"\n'), ("benches/y.c", '#include "results/store.h"\n'),
               ("reports/z.c", '#include "results/store.h"\n#include "common/util.h"\n'),
               ("platform/p.c", '#include "benches/steady.h"\n'), ("judge/j.c", '#include "reports/svg.h"\n'),
               ("reports/r.c", '#include "judge/flags.h"\n'), ("pricing/c.c", '#include "judge/rank.h"\n')]
    assert [v.split(":")[0] for v in include_violations(planted)] == [
        "results/x.c", "benches/y.c", "platform/p.c", "judge/j.c", "pricing/c.c"]
    q = [("reports/q.c", 'static const char *q = "SELECT id FROM runs";\n'),
         ("runners/r.c", "x = sqlite3_step(st);\n"), ("results/store_read.c", "sqlite3_step(st);\n"),
         ("benches/objstore.c", 'method = "DELETE"; /* HTTP */\n')]
    assert [v.split(":")[0] for v in sql_violations(q)] == ["reports/q.c", "runners/r.c"]


def test_no_include_reaches_up():
    v = include_violations(read_all())
    assert not v, "includes from a lower layer to a higher one:\n" + "\n".join(v)


def test_no_sql_outside_store_and_catalog():
    v = sql_violations(read_all())
    assert not v, "SQL outside results/store*.c and pricing/catalog*.c:\n" + "\n".join(v)


def obj_dir():
    tests = os.environ.get("GPUVET_TEST_DIR")
    return (Path(tests).parent if tests else ROOT / "build") / "obj"


@functools.lru_cache(maxsize=None)
def folder_symbols(folder):
    """{object path: (global symbols it defines, symbols it needs)} of build/obj/<folder>/*.o, from
    one `nm` for the whole folder (an nm per object took half a minute a check under load)."""
    objs = sorted((obj_dir() / folder).glob("*.o"))
    out = {o: (set(), set()) for o in objs}
    if objs:
        p = subprocess.run(["nm", "-P", "-A", *map(str, objs)], capture_output=True, text=True, check=True)
        for line in p.stdout.splitlines():
            path, _, rest = line.rpartition(": ")
            fields = rest.split()
            if len(fields) < 2 or Path(path) not in out:
                continue
            sym, kind = fields[0], fields[1]
            if kind in ("U", "w", "v"):
                out[Path(path)][1].add(sym)
            elif kind.isupper():
                out[Path(path)][0].add(sym)
    return out


def nm(path, defined):
    return folder_symbols(path.parent.name)[path][0 if defined else 1]


def test_no_call_reaches_up():
    if not shutil.which("nm"):
        pytest.fail("nm (binutils) is needed to read the objects' symbols")
    objs = {f: sorted((obj_dir() / f).glob("*.o")) for f in RANK}
    assert objs["common"] and objs["runners"], f"no objects under {obj_dir()}: build first (make all)"
    owner = {}
    for folder, files in objs.items():
        for o in files:
            for sym in nm(o, True):
                owner.setdefault(sym, folder)
    bad = []
    for folder, files in objs.items():
        for o in files:
            for sym in nm(o, False):
                to = owner.get(sym)
                if to and not allowed(folder, to):
                    bad.append(f"{folder}/{o.name}: calls {sym} from {to}")
    assert not bad, "calls from a lower layer to a higher one:\n" + "\n".join(bad)


# Judging lives in judge/ only: the report renders its results and keeps no rule of its own.
JUDGING_COPIES = [
    (re.compile(r"#\s*define\s+\w*(FRAC|PCT|_MIN_S|THRESH)\w*\s"), "a threshold constant"),
    (re.compile(r"\b0x[0-9a-fA-F]+ULL\b"), "an NVML clock-event reason bit"),
    (re.compile(r"\bas FLAG_\w+"), "a copy of a flag threshold"),
    (re.compile(r'strcmp\(\s*[\w>.-]+\s*,\s*"(critical|warning)"\s*\)'), "a severity order"),
]


def judging_copies(files):
    out = []
    for rel, text in files:
        if not rel.startswith("reports/"):
            continue
        for rx, what in JUDGING_COPIES:
            m = rx.search(text)
            if m:
                out.append(f"{rel}:{text.count(chr(10), 0, m.start()) + 1}: {what}: {m.group(0)[:50]}")
    return out


def test_judging_copy_check_can_fail():
    planted = [("reports/a.c", "#define BAND_LIMIT_MIN_FRAC 0.90\n"), ("reports/b.c", "#define CER_HW 0x8ULL\n"),
               ("reports/c.c", 'if (s && !strcmp(s, "critical"))\n'), ("judge/d.c", "#define X_FRAC 0.9\n")]
    assert [v.split(":")[0] for v in judging_copies(planted)] == ["reports/a.c", "reports/b.c", "reports/c.c"]


def test_reports_keep_no_copy_of_a_judging_rule():
    v = judging_copies(read_all())
    assert not v, "judging rules outside judge/ (use judge/flags.h):\n" + "\n".join(v)


# A flag's severities are named and ordered in common/severity.c alone.
SEVERITY_LIST = re.compile(r'"(info|warning|critical)"\s*,\s*"(info|warning|critical)"')


def severity_lists(files):
    return [f"{rel}:{text.count(chr(10), 0, m.start()) + 1}" for rel, text in files
            if rel != "common/severity.c" for m in [SEVERITY_LIST.search(text)] if m]


def test_the_severity_names_have_one_owner():
    planted = [("results/a.c", 'static const char *sev[] = { "critical", "warning", "info" };'),
               ("common/severity.c", '{ "info", "warning", "critical" }'), ("judge/b.c", 'x = "critical";')]
    assert [v.split(":")[0] for v in severity_lists(planted)] == ["results/a.c"]
    v = severity_lists(read_all())
    assert not v, "a list of severity names outside common/severity.c (use common/severity.h):\n" + "\n".join(v)


def embeds_elsewhere(files):
    """Files that compile a file in without common/embed.h's GV_EMBED."""
    return [rel for rel, text in files if rel != "common/embed.h" and ".incbin" in text]


def test_every_compiled_in_file_goes_through_one_macro():
    assert embeds_elsewhere([("a/b.c", '__asm__(".incbin \\"x\\"");'), ("common/embed.h", ".incbin")]) == ["a/b.c"]
    files = read_all()
    assert not embeds_elsewhere(files), "embed with GV_EMBED (common/embed.h): " + ", ".join(embeds_elsewhere(files))
    users = [rel for rel, text in files if "GV_EMBED(" in text and rel != "common/embed.h"]
    assert sorted(users) == ["benches/host_decode.c", "judge/cluster_rate.c", "judge/cost_published.c",
                             "judge/policy.c", "pricing/catalog_data.c", "reports/html.c"], users


# Files of one folder that call each other in a circle (a split file whose parts call back into the
# file that calls them; shared helpers belong in a lower *_int.h / *_util.c).  None is left; one
# kept knowingly would be listed here, and a listed one that grew, or was untangled, fails.
KNOWN_CIRCLES = set()   # the last ten were untangled at stop 17


def circles(graph):
    """The strongly connected parts of more than one node of graph {node: set of nodes it calls}."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            part = set()
            while True:
                w = stack.pop()
                on.discard(w)
                part.add(w)
                if w == v:
                    break
            if len(part) > 1:
                out.append(frozenset(part))
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_the_circle_finder_can_fail():
    g = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": {"f"}, "f": set()}
    assert circles(g) == [frozenset("abc")]
    assert circles({"x": {"y"}, "y": set()}) == []


def folder_calls(folder):
    objs = sorted((obj_dir() / folder).glob("*.o"))
    owner = {sym: o.stem for o in objs for sym in nm(o, True)}
    return {o.stem: {owner[s] for s in nm(o, False) if owner.get(s, o.stem) != o.stem} for o in objs}


def test_no_new_circle_of_files_calling_each_other():
    if not shutil.which("nm"):
        pytest.fail("nm (binutils) is needed to read the objects' symbols")
    calls = {f: folder_calls(f) for f in RANK}
    assert calls["common"] and calls["runners"], f"no objects under {obj_dir()}: build first (make all)"
    found = {(f, c) for f in RANK for c in circles(calls[f])}
    new = [f"{f}: {' <-> '.join(sorted(c))}" for f, c in sorted(found - KNOWN_CIRCLES, key=str)]
    gone = [f"{f}: {' <-> '.join(sorted(c))}" for f, c in sorted(KNOWN_CIRCLES - found, key=str)]
    assert not new, "files that call each other in a circle (move what they share into a lower *_util.c):\n" + \
        "\n".join(new)
    assert not gone, "untangled (or changed): take them out of KNOWN_CIRCLES:\n" + "\n".join(gone)
