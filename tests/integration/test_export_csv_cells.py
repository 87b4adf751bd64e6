"""Issue 38: `results export --format csv` prints its own numbers (common/real17.c: %.17g without
glibc's multi-precision) and quotes cells a word at a time (results/export.c); every cell must stay
what jansson and %.17g print.  A store from the real capture, its values and params replaced by the
hard cases (ties to even, the edges of %g's fixed and exponent forms, the edges of the exact range
and beyond it, integral reals, unsorted and nested params) and its text cells by quotes, UTF-8,
invalid bytes and formula starts, is exported and compared, cell by cell, with Python's %.17g and a
Python copy of jansson's compact key-sorted writer."""
import csv
import io
import json
import sqlite3

from helpers import import_fixture

VALUES = [53.198838525541881, 0.1, -0.1, 1e-4, 9.9999999999999995e-5, 1e-5, 1e-7, 1e16, 1e17,
          99999999999999999.0, 123456789012345678.0, 1234567890123456.25, 1234567890123456.75,
          4503599627370497.5, 2.5, 0.0, -0.0, 5e-324, 2.2250738585072014e-308, 1.7976931348623157e308,
          1e22, 1e23, 1e38, 1e39, 100.0, 3.0, 1 / 3, -2 / 3 * 1e-3, 8.81e-08, 0.00877491, None]

PARAMS = [
    '{"m":16384,"k":16384,"spread":0.00877491,"max_err":8.81e-08,"tolerance":2e-05,"median_ms":124.008}',
    '{"z":1.0,"a":-0.0,"b":1E+2,"c":2e-5,"d":1234567890123456.25,"e":1e-7,"f":0.1,"g":1e300}',
    '{"b":{"z":1,"a":[1.5,{"y":2,"x":0.1}],"m":null},"a":"q\\"uote\\\\","c":[true,false,[]],"d":{}}',
    '{"peak_tflops":67,"reference":"H200"}',
    '{ "spaced" : [ 1 , 2.50 , 3e0 ] , "also" : "x" }',
    '{"unicode":"\\u00e9t\\u00e9","plain":"\u00e9"}',
    '{"dup":1,"dup":2}',
    '[1,2]',
    'not json',
    None,
]


def jansson_real(v):
    """jansson's jsonp_dtostr: %.17g, ".0" when neither '.' nor 'e', the exponent bare."""
    t = "%.17g" % v
    if "." not in t and "e" not in t:
        t += ".0"
    if "e" in t:
        mant, exp = t.split("e")
        sign = "-" if exp[0] == "-" else ""
        t = mant + "e" + sign + exp.lstrip("+-").lstrip("0")
    return t


def jansson_dump(x):
    """json_dumps(JSON_COMPACT | JSON_SORT_KEYS) of what json_loads read (no control characters here)."""
    if isinstance(x, dict):
        return "{" + ",".join(jansson_dump(k) + ":" + jansson_dump(x[k]) for k in sorted(x)) + "}"
    if isinstance(x, list):
        return "[" + ",".join(jansson_dump(v) for v in x) + "]"
    if x is None:
        return "null"
    if x is True or x is False:
        return "true" if x else "false"
    if isinstance(x, int):
        return str(x)
    if isinstance(x, float):
        return jansson_real(x)
    return json.dumps(x, ensure_ascii=False)


def params_cell(text):
    if text is None:
        return "{}"
    try:
        x = json.loads(text, object_pairs_hook=dict)   # the last of a duplicate key, as jansson keeps
    except ValueError:
        return "{}"
    return jansson_dump(x) if isinstance(x, dict) else "{}"


def text_cell(b):
    if b is None:
        return ""
    try:
        t = b.decode("utf-8")
    except UnicodeDecodeError:
        return ""
    return "'" + t if t[:1] in ("=", "+", "-", "@") else t


def test_export_csv_cells_are_percent_17g_and_janssons_params(gpuvet, tmp_path):
    import_fixture(gpuvet, tmp_path)
    con = sqlite3.connect(gpuvet.db)
    run, n = con.execute("SELECT run_id, count(*) FROM metrics").fetchone()
    for i in range(4 * len(VALUES) - n):   # the capture's metric rows, and more like them
        con.execute("INSERT INTO metrics (run_id, bench, name, gpu) SELECT run_id, bench, name, ? FROM metrics "
                    "WHERE run_id = ? ORDER BY id LIMIT 1 OFFSET ?", (i % 8, run, i % n))
    ids = [r[0] for r in con.execute("SELECT id FROM metrics ORDER BY id")]
    assert len(ids) >= 4 * len(VALUES)
    texts = ['in"ch', 'a""b"', "\u00e9t\u00e9 \u2192 \U0001f680", b"\xff\xfe", "=1+1", "-x", "@y", "plain",
             'x' * 40 + '"' + 'y' * 17]
    for i, mid in enumerate(ids):
        t = texts[i % len(texts)]
        con.execute("UPDATE metrics SET value = ?, params = ?, unit = CAST(? AS TEXT) WHERE id = ?",
                    (VALUES[i % len(VALUES)], PARAMS[i % len(PARAMS)], t, mid))
    con.execute("UPDATE runs SET region = 'r\"1', gpu_model = CAST(X'48313030c3a9' AS TEXT)")
    con.commit()
    want = [[str(r[0]), text_cell(r[1]), text_cell(r[2]), r[3], text_cell(r[4]), text_cell(r[5]), text_cell(r[6]),
             text_cell(r[7]), str(r[8]), text_cell(r[9]), text_cell(r[10]), str(r[11]),
             "" if r[12] is None else "%.17g" % r[12], text_cell(r[13]), params_cell(r[14])]
            for r in con.execute(
                "SELECT r.id, CAST(r.uuid AS BLOB), CAST(r.started_at AS BLOB), r.status, CAST(r.provider AS BLOB), "
                "CAST(r.instance_type AS BLOB), CAST(r.region AS BLOB), CAST(r.gpu_model AS BLOB), r.gpu_count, "
                "CAST(m.bench AS BLOB), CAST(m.name AS BLOB), m.gpu, m.value, CAST(m.unit AS BLOB), m.params "
                "FROM metrics m JOIN runs r ON r.id = m.run_id ORDER BY r.started_at, r.id, m.id")]
    con.close()
    out = gpuvet("results", "export", "--format", "csv", check=0).stdout
    rows = list(csv.reader(io.StringIO(out)))
    assert rows[0][:3] == ["run_id", "run_uuid", "started_at"]
    assert len(rows) - 1 == len(want)
    for got, exp in zip(rows[1:], want):
        assert got == exp
    assert all(line.startswith('"') and line.endswith('"') for line in out.splitlines())   # every cell quoted
