/*
 * fuzz_fingerprint.c - `gpuvet results import` on arbitrary bytes: JSON
 * parsing by jansson, then the store's validation and insert into an
 * in-memory store.  Must never crash, leak or leave a half-imported run.
 */
#include "results/store.h"

#include <stdint.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct store *s;
	if (!s && store_open(":memory:", &s) != STORE_OK)
		abort();
	json_t *fp = json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES, NULL);
	if (!fp)
		return 0;
	int64_t id;
	store_import_fingerprint(s, fp, &id);
	json_decref(fp);
	return 0;
}
