/* fuzz_aws_spot_xml.c - EC2 DescribeSpotPriceHistory answers */
#include "pricing/fetch.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

static int emit(void *ud, const struct price_rec *r, char *err, size_t errlen)
{
	(void)ud;
	(void)err;
	(void)errlen;
	if (!(r->price >= 0) || !r->instance_type[0] || strcmp(r->market, "spot"))
		__builtin_trap();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char next[256], err[512];
	aws_spot_parse((const char *)data, size, emit, NULL, next, sizeof next, err, sizeof err);
	return 0;
}
