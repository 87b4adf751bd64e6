/*
 * test_jcanon.c - results/jcanon.c: stored JSON rewritten as jansson writes
 * it (JSON_COMPACT | JSON_SORT_KEYS), checked against jansson itself on the
 * forms gpuvet stores and on reals printed every way %g can print them.
 */
#include "tests/unit/t.h"
#include "results/jcanon.h"

#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>

/* jansson's own output for doc, or NULL when it refuses it */
static char *jansson(const char *doc)
{
	json_t *j = json_loads(doc, JSON_DECODE_ANY, NULL);
	char *t = j ? json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY) : NULL;
	json_decref(j);
	return t;
}

/* 1 taken and equal to jansson's, 0 handed back, -1 taken but different (a defect) */
static int same(const char *doc)
{
	struct jc_buf b = { 0 };
	int rc = jcanon_sorted(doc, strlen(doc), &b);
	if (rc) {
		CHECK(b.len == 0);
		free(b.p);
		return 0;
	}
	char *want = jansson(doc);
	int ok = want && !strcmp(want, b.p);
	if (!ok)
		fprintf(stderr, "jcanon '%s' -> '%s', jansson '%s'\n", doc, b.p, want ? want : "(refused)");
	free(want);
	free(b.p);
	return ok ? 1 : -1;
}

static void test_stored_forms(void)
{
	/* a real capture's gemm params as the store holds them (json_dumps JSON_COMPACT, insertion order) */
	CHECK(same("{\"m\":8192,\"n\":8192,\"k\":8192,\"reps\":10,\"warmup\":3,\"spread\":0.0018722999999999999,"
		   "\"median_ms\":21.2271,\"min_ms\":21.213200000000001,\"max_err\":6.6899999999999997e-8,"
		   "\"compute\":\"32F\",\"concurrent\":0}") == 1);
	CHECK(same("{\"b\":{\"z\":[1,2,{\"y\":null,\"x\":true}],\"a\":false},\"a\":\"q\\\"\\\\\\n\\t\"}") == 1);
	CHECK(same("{}") == 1);
	CHECK(same(" { \"x\" : 0.1 , \"a\" : [ ] } ") == 1);   /* whitespace, a real that reprints */
	CHECK(same("{\"a\":64.0,\"b\":-0.0,\"c\":0.0,\"d\":1e+20,\"e\":1E-7,\"f\":100000.0}") == 1);
}

static void test_handed_back(void)
{
	/* what only jansson decides: \u escapes, non-ASCII, duplicate keys, -0, huge integers, bad JSON */
	CHECK(same("{\"k\":\"\\u00e9\"}") == 0);
	CHECK(same("{\"k\":\"\xc3\xa9\"}") == 0);
	CHECK(same("{\"a\":1,\"a\":2}") == 0);
	CHECK(same("{\"a\":-0}") == 0);
	CHECK(same("{\"a\":12345678901234567890}") == 0);
	CHECK(same("{\"a\":1,}") == 0);
	CHECK(same("{\"a\":1} x") == 0);
	CHECK(same("not json") == 0);
	CHECK(same("{\"a\":\"\\/\"}") == 0);
	CHECK(same("") == 0);
}

static uint64_t rs = 88172645463325252ULL;
static uint64_t rnd(void)
{
	rs ^= rs << 13;
	rs ^= rs >> 7;
	rs ^= rs << 17;
	return rs;
}

/* Reals printed with 12..17 significant digits (and "%.17g" of random bit patterns) in an object. */
static void test_reals_against_jansson(void)
{
	int bad = 0, taken = 0;
	for (int i = 0; i < 200000; i++) {
		double v;
		switch (rnd() % 4) {
		case 0: { uint64_t u = rnd(); memcpy(&v, &u, sizeof v); if (!isfinite(v)) continue; break; }
		case 1: v = (double)(rnd() % 100000000) / pow(10, (double)(rnd() % 12)); break;
		case 2: v = ldexp((double)(rnd() % (1ULL << 53)), -(int)(rnd() % 70)); break;
		default: v = (double)(rnd() % 1000) / 8.0; break;
		}
		if (rnd() & 1)
			v = -v;
		char tok[64], doc[160];
		snprintf(tok, sizeof tok, "%.*g", 12 + (int)(rnd() % 6), v);
		if (!strchr(tok, '.') && !strchr(tok, 'e') && (rnd() & 1))
			strcat(tok, ".0");
		snprintf(doc, sizeof doc, "{\"z\":%s,\"a\":[%s]}", tok, tok);
		int r = same(doc);
		bad += r < 0;
		taken += r > 0;
	}
	CHECK(bad == 0);
	CHECK(taken > 150000);
}

TEST_MAIN(T(test_stored_forms), T(test_handed_back), T(test_reals_against_jansson))
