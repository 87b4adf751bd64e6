/* fuzz_catalog_csv.c - gpuvet's price CSV format (csvrows + catalog parser), fed in two chunks */
#include "pricing/catalog.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

static int row(void *ud, const struct price_rec *r, long line)
{
	char buf[256];
	(void)ud;
	(void)line;
	/* every row handed out must pass the record check */
	if (price_rec_check(r, buf, sizeof buf))
		__builtin_trap();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct catalog_parser *p = catalog_parser_new("fuzz.csv", "import:fuzz", "2026-01-01", row, NULL);
	if (!p)
		return 0;
	size_t half = size ? data[0] % (size + 1) : 0;
	if (catalog_parser_feed(p, data, half) == 0 && catalog_parser_feed(p, data + half, size - half) == 0)
		catalog_parser_finish(p);
	catalog_parser_free(p);
	return 0;
}
