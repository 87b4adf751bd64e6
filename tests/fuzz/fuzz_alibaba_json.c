/* fuzz_alibaba_json.c - Alibaba's DescribePrice and DescribeSpotPriceHistory answers */
#include "pricing/fetch.h"

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[512], cur[4];
	double price;
	if (alibaba_parse_price((const char *)data, size, &price, cur, err, sizeof err) == 0 &&
	    (!(price >= 0) || !isfinite(price) || strlen(cur) != 3))
		__builtin_trap();
	struct alibaba_spot *z = NULL;
	size_t n = 0;
	if (alibaba_parse_spot((const char *)data, size, "ecs.gn7i-c8g1.2xlarge", &z, &n, cur, err, sizeof err) == 0) {
		for (size_t i = 0; i < n; i++)
			if (!(z[i].price > 0) || !isfinite(z[i].price) || !z[i].zone[0] || strlen(cur) != 3)
				__builtin_trap();
	} else if (z || n) {
		__builtin_trap();
	}
	free(z);
	return 0;
}
