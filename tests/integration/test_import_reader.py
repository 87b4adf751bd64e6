"""`results import`'s reader at speed (issue 38): the array splitter reads the file 64 KiB at a
time (common/jsplit.c) and the parser reads most decimals without strtod (common/jtree.c,
Clinger's exact fast path).  What it must keep: every byte of an element that straddles a read
chunk, an error's byte offset counted across chunks, and each number the very double strtod
(and Python's float(), both correctly rounded) makes of its text.

Fingerprints are the real captures (tests/fleetgen.py) under fresh uuids, edited in the test."""
import json
import sqlite3
import struct
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import fleetgen  # noqa: E402

CHUNK = 64 << 10


def one():
    return next(fleetgen.fleet(1))


def rows(db, sql, *args):
    con = sqlite3.connect(db)
    try:
        return con.execute(sql, args).fetchall()
    finally:
        con.close()


def test_strings_straddling_read_chunks_are_stored_byte_for_byte(gpuvet, tmp_path):
    """A bench's reason full of what the splitter tracks (quotes, brackets, commas, backslashes, all
    escaped in the text, and raw UTF-8), padded so that they cross 64 KiB boundaries at different bytes.
    (Not a flag's message: import derives the flags from the values, issue 48.)"""
    arr, want = [], {}
    for k in range(12):
        d = one()
        msg = "x" * (k * 5171 % 9000) + 'a "[{,}]" \\ ] , } é ✓ "' * 40 + "[" * k + "\\"
        d["benches"][0]["reason"] = msg
        arr.append(d)
        want[d["run"]["uuid"]] = msg
    f = tmp_path / "a.json"
    f.write_text(json.dumps(arr, ensure_ascii=False), encoding="utf-8")
    assert f.stat().st_size > 4 * CHUNK
    gpuvet("results", "import", f, check=0)
    got = dict(rows(gpuvet.db, "SELECT r.uuid, b.reason FROM benches b JOIN runs r ON r.id = b.run_id WHERE b.name = ?",
                    one()["benches"][0]["name"]))
    assert got == want


def test_an_error_past_the_first_chunk_names_its_byte(gpuvet, tmp_path):
    """A NUL byte three chunks in: refused naming the element and the byte (counted from 1, as
    the splitter takes it), nothing of the file stored."""
    parts = [json.dumps(one()) for _ in range(9)]
    text = "[" + ", ".join(parts) + "]"
    i = text.index('"name"', 3 * CHUNK + 7)
    starts = [1 + sum(len(x) + 2 for x in parts[:k]) for k in range(len(parts))]
    element = max(k for k, s in enumerate(starts) if s <= i)
    f = tmp_path / "nul.json"
    f.write_bytes(text[:i].encode() + b"\0" + text[i:].encode())
    p = gpuvet("results", "import", f)
    assert p.returncode == 2
    assert f"element {element} at byte {i + 1}: a NUL byte" in p.stderr, p.stderr
    assert rows(gpuvet.db, "SELECT count(*) FROM runs") == [(0,)]


# decimals at the edges of the fast path (17 digits, 10^22, 2^53) and past them (strtod's part)
NUMBERS = ["0.1", "0.30000000000000004", "0.0", "1.5e22", "1e22", "1e23", "123456.789e-20",
           "9007199254740993.0", "9007199254740992.5", "1234567890123456789.25", "0.000001234567",
           "5e-324", "2.2250738585072014e-308", "1.7976931348623157e308", "3.14159265358979323846",
           "100.0", "273.15", "4.35", "1E-7", "7.0e+0", "0.1e1", "1.0000000000000002", "0.5"]


def test_decimals_are_stored_as_strtod_reads_them(gpuvet, tmp_path):
    """Each number the very double Python's float() (correctly rounded, as strtod) makes of its text:
    metric values and a series' points (stored as binary64, the sign of zero too)."""
    d = one()
    m = d["metrics"][0]
    d["metrics"] = [dict(m, name=f"edge.n{k}", value=f"@V{k}@") for k in range(len(NUMBERS))]
    d["samples"] = [dict(d["samples"][0], series="edge.points",
                         points=[[f"@X{k}@", f"@Y{k}@"] for k in range(len(NUMBERS))])]
    text = json.dumps(d)
    for k, num in enumerate(NUMBERS):
        text = text.replace(f'"@V{k}@"', num).replace(f'"@X{k}@"', num).replace(f'"@Y{k}@"', "-" + num)
    assert "@" not in text
    f = tmp_path / "edge.json"
    f.write_text(text)
    gpuvet("results", "import", f, check=0)
    got = dict(rows(gpuvet.db, "SELECT name, value FROM metrics WHERE name LIKE 'edge.n%'"))
    for k, num in enumerate(NUMBERS):
        assert got[f"edge.n{k}"] == float(num) and repr(got[f"edge.n{k}"]) == repr(float(num)), num
    blob = rows(gpuvet.db, "SELECT points FROM series WHERE series = 'edge.points'")[0][0]
    xy = struct.unpack(f"<{2 * len(NUMBERS)}d", blob)
    for k, num in enumerate(NUMBERS):
        assert struct.pack("<2d", *xy[2 * k:2 * k + 2]) == struct.pack("<2d", float(num), -float(num)), num
