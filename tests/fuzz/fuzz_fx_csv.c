/* fuzz_fx_csv.c - the shipped exchange-rate format (pricing/catalog/fx.csv, fx_parse_csv) */
#include "pricing/fx.h"

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

static int row(void *ud, const char *currency, double usd_per_unit, const char *captured_at, const char *source)
{
	(void)ud;
	/* every rate handed out is a checked one */
	if (strlen(currency) != 3 || !strcmp(currency, "USD") || !isfinite(usd_per_unit) || usd_per_unit <= 0 ||
	    !fx_date_valid(captured_at) || !source[0])
		__builtin_trap();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[512];
	long rows;
	fx_parse_csv("fuzz.csv", data, size, row, NULL, &rows, err, sizeof err);
	return 0;
}
