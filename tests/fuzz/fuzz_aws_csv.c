/* fuzz_aws_csv.c - the AWS bulk price-list row parser (preamble, header by name, prefilter), chunked */
#include "pricing/fetch.h"

#include <stddef.h>
#include <stdint.h>

static int emit(void *ud, const struct price_rec *r, char *err, size_t errlen)
{
	(void)ud;
	(void)err;
	(void)errlen;
	if (r->price < 0 || !r->instance_type[0])
		__builtin_trap();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct aws_parser *p = aws_parser_new("us-east-1", emit, NULL);
	if (!p)
		return 0;
	size_t chunk = size ? (size_t)data[0] % 97 + 1 : 1;
	int rc = 0;
	for (size_t i = 0; i < size && rc == 0; i += chunk)
		rc = aws_parser_feed(p, data + i, size - i < chunk ? size - i : chunk);
	if (rc == 0)
		aws_parser_finish(p);
	aws_parser_free(p);
	return 0;
}
