/*
 * fuzz_s3_list.c - the ListObjectsV2 answer parser of `results merge
 * s3://` (objstore_list_parse, platform/objstore_util.c).  Properties: no
 * out-of-bounds access; every key it reports is non-empty and at most 1024
 * bytes; the continuation token is NUL-terminated within its buffer.
 */
#include "platform/objstore_util.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int on_key(void *ud, const char *key)
{
	size_t n = strlen(key);
	if (!n || n > 1024)
		abort();
	++*(size_t *)ud;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = malloc(size ? size : 1);
	if (!s)
		return 0;
	memcpy(s, data, size);
	char next[64];
	int truncated = -1;
	size_t keys = 0;
	int r = objstore_list_parse(s, size, on_key, &keys, &truncated, next, sizeof next);
	if (r == 0 && (truncated != 0 && truncated != 1))
		abort();
	if (memchr(next, 0, sizeof next) == NULL)
		abort();
	free(s);
	return 0;
}
