/*
 * fuzz_jtree.c - the import's JSON reader (common/jtree.c) against jansson
 * on the same bytes.  Properties: it accepts exactly what
 * json_loadb(JSON_REJECT_DUPLICATES) accepts (but for jansson's NUL byte
 * after a number or literal, which jtree rejects: common/jtree.h); what it reads equals jansson's
 * value (json_equal: the same integers, the same doubles, the same strings,
 * keys in the same order); the compact text of a value (jt_text, what the
 * store keeps of params and inventories) parses back to that value; every
 * key of an object is found by jt_get; a rejection says why and where.
 */
#include "common/jtree.h"
#include "jt_json.h"

#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* jt_text of v parses (jansson) to the value jtree read. */
static void check_text(const struct jtree *t, uint32_t v)
{
	char *text = jt_text(t, v);
	if (!text) {
		if (jt_type(t, v) != JT_NULL)
			abort();
		return;
	}
	json_t *back = json_loads(text, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES, NULL);
	json_t *want = jt_to_json(t, v);
	if (!back || !json_equal(back, want) || strlen(text) > t->nodes[v].len)
		abort();
	json_decref(back);
	json_decref(want);
	free(text);
}

/* Every key of object o is found, and finds its own value. */
static void check_keys(const struct jtree *t, uint32_t o)
{
	uint32_t k = o + 1;
	for (uint32_t m = 0; m < t->nodes[o].n; m++, k = t->nodes[k + 1].end)
		if (jt_get(t, o, jt_str(t, k)) != k + 1 && !memchr(jt_str(t, k), 0, t->nodes[k].n))
			abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	json_t *want = json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES, NULL);
	struct jtree t;
	int r = jt_parse(&t, (const char *)data, size);
	if ((r == 0) != (want != NULL) && !(r && memchr(data, 0, size)))
		abort();
	if (r) {
		if (!t.err[0] || t.line < 1)
			abort();
	} else if (r == 0) {
		json_t *got = jt_to_json(&t, 1);
		if (!json_equal(got, want))
			abort();
		json_decref(got);
		for (uint32_t v = 1; v < t.nnodes && v < 64; v++) {
			check_text(&t, v);
			if (jt_type(&t, v) == JT_OBJ)
				check_keys(&t, v);
		}
		check_text(&t, 1);
	}
	json_decref(want);
	jt_free(&t);
	return 0;
}
