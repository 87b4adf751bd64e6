/*
 * fuzz_jcanon.c - jcanon_sorted() (results/jcanon.h) against jansson itself.
 *
 * Invariant: whenever the fast path takes an input, jansson reads the same
 * bytes (JSON_DECODE_ANY, as the store's reader does) and writes them with
 * JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY to exactly the fast
 * path's output; when it does not take it, the buffer is as it was.
 *
 * Seeds (corpus/fuzz_jcanon/): params-NN.json are the distinct metric
 * params of the real H100 capture tests/fixtures/gpu/h100-2026-11-22/
 * quick-profile.json, compact as the store keeps them; hand-N.json are the
 * forms only jansson decides (\u escapes, duplicate keys, -0, exponents).
 */
#include "results/jcanon.h"

#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n);

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
	struct jc_buf b = { 0 };
	jc_put(&b, "x", 1);
	if (jcanon_sorted((const char *)d, n, &b)) {
		if (b.len != 1 || strcmp(b.p, "x"))
			abort();
		free(b.p);
		return 0;
	}
	json_error_t err;
	json_t *j = json_loadb((const char *)d, n, JSON_DECODE_ANY, &err);
	if (!j)
		abort();   /* the fast path took what jansson refuses */
	char *t = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
	if (!t || strcmp(t, b.p + 1))
		abort();
	free(t);
	json_decref(j);
	free(b.p);
	return 0;
}
