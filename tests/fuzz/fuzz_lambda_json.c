/* fuzz_lambda_json.c - Lambda's instance-types answer */
#include "pricing/fetch.h"

#include <stddef.h>
#include <stdint.h>

static int emit(void *ud, const struct price_rec *r, char *err, size_t errlen)
{
	char buf[256];
	(void)ud;
	(void)err;
	(void)errlen;
	if (price_rec_check(r, buf, sizeof buf))
		__builtin_trap();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[512];
	lambda_parse((const char *)data, size, "2026-01-01T00:00:00Z", emit, NULL, err, sizeof err);
	return 0;
}
