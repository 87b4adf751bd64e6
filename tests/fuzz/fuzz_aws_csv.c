/*
 * fuzz_aws_csv.c - the AWS bulk price-list row parser (preamble, header by
 * name, prefilters), chunked, and differential: the same input parsed with the
 * prefilters off (libcsv reads every line) must, when that parse succeeds,
 * give exactly the same prices with them on.  The first byte picks the chunk
 * size and the scan code (AVX2 or SSE2) of the prefiltered run.
 */
#include "pricing/csvrows.h"
#include "pricing/fetch.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

struct got {
	char text[8192];
	size_t len;
	int overflow;
};

static int emit(void *ud, const struct price_rec *r, char *err, size_t errlen)
{
	struct got *g = ud;
	(void)err;
	(void)errlen;
	if (r->price < 0 || !r->instance_type[0])
		__builtin_trap();
	int n = snprintf(g->text + g->len, sizeof g->text - g->len, "%s|%s|%.17g|%s|%g;", r->instance_type,
			 r->region, r->price, r->currency, r->gpu_count);
	if (n < 0 || (size_t)n >= sizeof g->text - g->len)
		g->overflow = 1;
	else
		g->len += (size_t)n;
	return 0;
}

static int run(const uint8_t *data, size_t size, size_t chunk, int prefilter, struct got *g)
{
	struct aws_parser *p = aws_parser_new("us-east-1", emit, g);
	if (!p)
		return -1;
	aws_parser_set_prefilter(p, prefilter);
	int rc = 0;
	for (size_t i = 0; i < size && rc == 0; i += chunk)
		rc = aws_parser_feed(p, data + i, size - i < chunk ? size - i : chunk);
	if (rc == 0)
		rc = aws_parser_finish(p);
	aws_parser_free(p);
	return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct got plain, filtered;
	size_t chunk = size ? (size_t)data[0] % 97 + 1 : 1;
	memset(&plain, 0, sizeof plain);
	memset(&filtered, 0, sizeof filtered);
	if (csvrows_force_simd(size && data[0] & 0x80 ? "sse2" : "avx2") < 0)
		csvrows_force_simd("sse2");
	int rc_plain = run(data, size, chunk, 0, &plain);
	int rc_filtered = run(data, size, chunk, 1, &filtered);
	if (rc_plain == 0 && (rc_filtered != 0 || plain.overflow != filtered.overflow ||
			      plain.len != filtered.len || memcmp(plain.text, filtered.text, plain.len)))
		__builtin_trap();
	return 0;
}
