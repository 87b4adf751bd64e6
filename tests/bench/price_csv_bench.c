/*
 * price_csv_bench.c - the AWS price-list parser alone (pricing/fetch_aws.c ->
 * csvrows -> libcsv), in a binary that links only the pricing sources: its
 * peak RSS is the parser's, not that of the CUDA libraries the gpuvet binary
 * maps.  The file is read in 256 KiB blocks (as wc reads it) and handed to
 * the parser in libcurl-sized 16 KiB chunks (CURL_MAX_WRITE_SIZE).  Built and
 * run by price_csv_bench.sh; not part of make check.
 */
#include "pricing/csvrows.h"
#include "pricing/fetch.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

static int emit(void *ud, const struct price_rec *r, char *err, size_t errlen)
{
	(void)r;
	(void)err;
	(void)errlen;
	++*(long *)ud;
	return 0;
}

int main(int argc, char **argv)
{
	enum { BLOCK = 256 * 1024, CHUNK = 16384 };
	static char buf[BLOCK];
	long rows = 0, lines, skipped;
	unsigned long long bytes = 0;
	struct timespec t0, t1;
	struct rusage ru;
	if (argc != 2) {
		fprintf(stderr, "usage: price_csv_bench FILE\n");
		return 2;
	}
	FILE *f = fopen(argv[1], "rb");
	if (f)
		setvbuf(f, NULL, _IONBF, 0); /* fread goes straight to read(2) in BLOCK-sized calls */
	if (!f) {
		perror(argv[1]);
		return 2;
	}
	struct aws_parser *p = aws_parser_new("bench", emit, &rows);
	int rc = 0;
	size_t n;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (rc == 0 && (n = fread(buf, 1, sizeof buf, f)) > 0) {
		bytes += n;
		for (size_t i = 0; i < n && rc == 0; i += CHUNK)
			rc = aws_parser_feed(p, buf + i, n - i < CHUNK ? n - i : CHUNK);
	}
	if (rc == 0)
		rc = aws_parser_finish(p);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (rc) {
		fprintf(stderr, "%s\n", aws_parser_error(p));
		return 2;
	}
	aws_parser_stats(p, NULL, &lines, &skipped);
	getrusage(RUSAGE_SELF, &ru);
	double s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	printf("{\"simd\": \"%s\", \"bytes\": %llu, \"lines\": %ld, \"skipped_unparsed\": %ld, \"gpu_rows\": %ld, \"seconds\": %.3f,"
	       " \"mb_per_s\": %.1f, \"max_rss_kib\": %ld}\n",
	       csvrows_simd(), bytes, lines, skipped, rows, s, (double)bytes / 1e6 / s, ru.ru_maxrss);
	aws_parser_free(p);
	fclose(f);
	return 0;
}
