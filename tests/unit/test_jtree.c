/*
 * test_jtree.c - the import's JSON reader (common/jtree.c): what it accepts
 * and rejects, each case also put to jansson (json_loadb with
 * JSON_REJECT_DUPLICATES), which must agree; the values it reads; the
 * compact text the store keeps.  tests/fuzz/fuzz_jtree.c does the same on
 * arbitrary bytes.
 */
#include "common/jtree.h"
#include "tests/fuzz/jt_json.h"
#include "tests/unit/t.h"

#include <stdlib.h>
#include <string.h>

/* jtree's answer for text (len bytes), checked against jansson's; 0 accepted, -1 rejected. */
static int both(const char *text, size_t len)
{
	struct jtree t;
	int r = jt_parse(&t, text, len);
	json_error_t e;
	json_t *want = json_loadb(text, len, JSON_REJECT_DUPLICATES, &e);
	CHECK((r == 0) == (want != NULL));
	if (!r && want) {
		json_t *got = jt_to_json(&t, 1);
		CHECK(json_equal(got, want));
		json_decref(got);
	}
	if ((r == 0) != (want != NULL))
		fprintf(stderr, "  disagree on '%.60s': jtree %s, jansson %s\n", text, r ? t.err : "ok", want ? "ok" : e.text);
	json_decref(want);
	jt_free(&t);
	return r;
}

static int ok(const char *text)
{
	return both(text, strlen(text)) == 0;
}

static void test_accepts_what_jansson_accepts(void)
{
	static const char *const good[] = {
		"{}", "[]", " [1, -0, 0.5, -1.5e3, 1E+2, 2e-2, 9223372036854775807, -9223372036854775808] ",
		"[1e-400]", "{\"a\": {\"b\": [true, false, null]}}", "[\"\\u00e9\\ud83d\\ude00 \\\"q\\\" \\/ \\b\\f\\n\\r\\t\"]",
		"[\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\"]", "{\"a\": 1, \"A\": 2, \"\": 3}", "\t\r\n[ ]\n",
	};
	for (size_t i = 0; i < sizeof good / sizeof good[0]; i++)
		CHECK(ok(good[i]));
}

static void test_rejects_what_jansson_rejects(void)
{
	static const char *const bad[] = {
		"", " ", "1", "\"s\"", "null", "[1,]", "[,1]", "{\"a\":1,}", "{\"a\" 1}", "{1: 2}", "[01]", "[1.]",
		"[.5]", "[+1]", "[1e]", "[-]", "[0x10]", "[1e309]", "[-1e309]", "[9223372036854775808]",
		"[-9223372036854775809]", "[tru]", "[truex]", "[nul]", "[NaN]", "[Infinity]", "[\"a\\u0000b\"]",
		"[\"\\ud800\"]", "[\"\\udc00\"]", "[\"\\ud800\\u0041\"]", "[\"\\ud800x\"]", "[\"\\x\"]", "[\"\\u12\"]",
		"[\"\t\"]", "[\"\xc0\xaf\"]", "[\"\xed\xa0\x80\"]", "[\"\xf4\x90\x80\x80\"]", "[\"\xe2\x82\"]", "[\"\x80\"]",
		"[1] x", "[1] [2]", "{\"a\":1,\"a\":2}", "{\"a\":1,\"\\u0061\":2}", "[\"abc", "[1", "{\"a\":", "\xef\xbb\xbf[]",
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		CHECK(!ok(bad[i]));
	CHECK(both("[1]\0", 4) != 0);         /* a NUL byte after the value */
	CHECK(both("[\"a\0b\"]", 7) != 0);    /* and inside a string */
}

/* The one difference, on purpose (jtree.h): jansson lets a NUL byte pass after a number or a literal. */
static void test_nul_after_a_number(void)
{
	static const char *const texts[] = { "[1\0]", "[true\0]", "{\"a\":2\0}" };
	static const size_t lens[] = { 4, 7, 8 };
	for (size_t i = 0; i < 3; i++) {
		struct jtree t;
		json_t *j = json_loadb(texts[i], lens[i], JSON_REJECT_DUPLICATES, NULL);
		CHECK(j != NULL);   /* if jansson stops taking it, this difference is gone: say so in jtree.h */
		CHECK(jt_parse(&t, texts[i], lens[i]) != 0);
		json_decref(j);
		jt_free(&t);
	}
}

/* A duplicate key among many members (the hash set), and none. */
static void test_duplicates_in_large_objects(void)
{
	char buf[8192] = "{";
	for (int i = 0; i < 300; i++)
		snprintf(buf + strlen(buf), sizeof buf - strlen(buf), "%s\"k%d\":%d", i ? "," : "", i, i);
	strcat(buf, "}");
	CHECK(ok(buf));
	buf[strlen(buf) - 1] = 0;
	strcat(buf, ",\"k123\":0}");
	CHECK(!ok(buf));
}

/* Nesting up to jansson's 2048 levels, not one more. */
static void test_depth(void)
{
	for (int depth = 2047; depth <= 2049; depth++) {
		char *s = malloc(2 * (size_t)depth + 1);
		memset(s, '[', (size_t)depth);
		memset(s + depth, ']', (size_t)depth);
		s[2 * depth] = 0;
		CHECK(ok(s) == (depth <= JT_MAX_DEPTH));
		free(s);
	}
}

static void test_values_and_lookup(void)
{
	const char *text = "{\"run\": {\"uuid\": \"u\", \"n\": 3, \"x\": 2.5, \"nul\": null},\n"
			   " \"list\": [[1, 2.0], [3, 4]], \"s\": \"a\\u00e9\"}";
	struct jtree t;
	CHECK(jt_parse(&t, text, strlen(text)) == 0);
	uint32_t run = jt_get(&t, 1, "run"), list = jt_get(&t, 1, "list"), e;
	CHECK(jt_type(&t, run) == JT_OBJ);
	CHECK_STR(jt_str(&t, jt_get(&t, run, "uuid")), "u");
	CHECK(jt_is_int(&t, jt_get(&t, run, "n")) && jt_int(&t, jt_get(&t, run, "n")) == 3);
	double d = 0;
	CHECK(jt_number(&t, jt_get(&t, run, "x"), &d) && d == 2.5);
	CHECK(!jt_is_int(&t, jt_get(&t, run, "x")));
	CHECK(jt_type(&t, jt_get(&t, run, "nul")) == JT_NULL);
	CHECK(jt_get(&t, run, "absent") == 0 && jt_get(&t, list, "uuid") == 0);
	CHECK(jt_str(&t, jt_get(&t, run, "n")) == NULL);
	CHECK_STR(jt_str(&t, jt_get(&t, 1, "s")), "a\xc3\xa9");
	CHECK(jt_size(&t, list) == 2 && jt_size(&t, run) == 0);
	size_t i, seen = 0;
	jt_foreach(&t, list, i, e) {
		double y = 0;
		CHECK(jt_size(&t, e) == 2);
		CHECK(jt_number(&t, jt_next(&t, e, jt_first(&t, e)), &y) && y == (i ? 4 : 2));
		seen++;
	}
	CHECK(seen == 2);
	jt_free(&t);
}

/* The compact text the store keeps: no white space outside strings, escapes kept as written. */
static void test_compact_text(void)
{
	const char *text = "{ \"p\" : { \"a b\" : [ 1 , 2.50 ] , \"q\" : \"x \\\" y\\u00e9\" } , \"z\" : null }";
	struct jtree t;
	CHECK(jt_parse(&t, text, strlen(text)) == 0);
	char *p = jt_text(&t, jt_get(&t, 1, "p"));
	CHECK_STR(p, "{\"a b\":[1,2.50],\"q\":\"x \\\" y\\u00e9\"}");
	CHECK(jt_text(&t, jt_get(&t, 1, "z")) == NULL && jt_text(&t, jt_get(&t, 1, "none")) == NULL);
	free(p);
	jt_free(&t);
}

/* A rejection names the line, as jansson's did. */
static void test_error_line(void)
{
	struct jtree t;
	const char *text = "{\n\"a\": 1,\n\"b\": tru\n}";
	CHECK(jt_parse(&t, text, strlen(text)) != 0);
	CHECK(t.line == 3);
	CHECK_STR(t.err, "invalid token");
	jt_free(&t);
	CHECK(jt_parse(&t, "{not json", 9) != 0 && t.line == 1);
	jt_free(&t);
}

TEST_MAIN(T(test_accepts_what_jansson_accepts), T(test_rejects_what_jansson_rejects), T(test_nul_after_a_number),
	  T(test_duplicates_in_large_objects), T(test_depth), T(test_values_and_lookup), T(test_compact_text),
	  T(test_error_line))
