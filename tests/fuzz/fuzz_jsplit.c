/*
 * fuzz_jsplit.c - the streaming array splitter of `results import`
 * (common/jsplit.c).  Properties: it never reads or writes out of bounds;
 * every element it yields is NUL-terminated at its length and starts and ends
 * with a non-blank byte; and when the whole input is valid JSON (jansson
 * says so), an array yields exactly its elements, each equal to jansson's
 * element, and anything else yields one element equal to the document.
 */
#include "common/jsplit.h"

#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!size)
		return 0;
	FILE *f = fmemopen((void *)data, size, "r");
	if (!f)
		return 0;
	json_t *whole = json_loadb((const char *)data, size, JSON_DECODE_ANY, NULL);
	struct jsplit j;
	jsplit_init(&j, f);
	const char *e;
	size_t len, n = 0;
	int r;
	while ((r = jsplit_next(&j, &e, &len)) == 1) {
		if (e[len] != 0 || !len || e[0] == ' ' || e[0] == '\n' || e[len - 1] == ' ' || e[len - 1] == '\n')
			abort();
		if (whole) {
			json_t *one = json_loadb(e, len, JSON_DECODE_ANY, NULL);
			json_t *want = json_is_array(whole) ? json_array_get(whole, n) : whole;
			if (!one || !json_equal(one, want))
				abort();
			json_decref(one);
		}
		n++;
	}
	if (whole) {
		/* valid JSON is split whole; embedded NULs are where jansson and a FILE may differ */
		if (r != 0 && !memchr(data, 0, size))
			abort();
		if (r == 0 && json_is_array(whole) && n != json_array_size(whole))
			abort();
	}
	if (r < 0 && !j.err[0])
		abort();
	json_decref(whole);
	jsplit_free(&j);
	fclose(f);
	return 0;
}
