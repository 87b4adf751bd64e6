/* fuzz_alibaba_json.c - Alibaba's DescribePrice answer */
#include "pricing/fetch.h"

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[512], cur[4];
	double price;
	if (alibaba_parse_price((const char *)data, size, &price, cur, err, sizeof err) == 0 &&
	    (!(price >= 0) || !isfinite(price) || strlen(cur) != 3))
		__builtin_trap();
	return 0;
}
