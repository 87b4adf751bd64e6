/*
 * registry.c - the one table of benches, in the order a run executes them.
 * Adding a bench: one extern line and one row.
 */
#include "benches/bench.h"

#include <stdlib.h>
#include <string.h>

extern const struct bench bench_gemm;
extern const struct bench bench_memcpy;
extern const struct bench bench_allreduce;
extern const struct bench bench_nvme;
extern const struct bench bench_objstore;
extern const struct bench bench_ingest;
extern const struct bench bench_soak;
extern const struct bench bench_host;
extern const struct bench bench_null;

const struct bench *const bench_registry[] = {
	&bench_gemm,
	&bench_memcpy,
	&bench_allreduce,
	&bench_nvme,
	&bench_objstore,
	&bench_ingest,
	&bench_host,
	&bench_soak,
	&bench_null,
	NULL,
};

int bench_test_benches_allowed(void)
{
	const char *e = getenv("GPUVET_TEST_BENCHES");
	return e && !strcmp(e, "1");
}

const struct bench *bench_find(const char *name)
{
	for (const struct bench *const *b = bench_registry; *b; b++) {
		if (strcmp((*b)->name, name))
			continue;
		if (((*b)->flags & BENCH_TEST_ONLY) && !bench_test_benches_allowed())
			return NULL;
		return *b;
	}
	return NULL;
}
