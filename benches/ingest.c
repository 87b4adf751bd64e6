/* ingest.c - placeholder until issue 5 lands: always skipped, never a measurement. */
#include "benches/bench.h"

static int ingest_deadline(const struct bench_config *cfg)
{
	(void)cfg;
	return 10;
}

static int ingest_run(struct bench_ctx *ctx, const struct bench_config *cfg)
{
	(void)cfg;
	bench_reason(ctx, "the ingest bench is not built yet in this version");
	return BENCH_SKIP;
}

const struct bench bench_ingest = {
	.name = "ingest",
	.summary = "placeholder (not built yet)",
	.flags = BENCH_NEEDS_GPU,
	.deadline_s = ingest_deadline,
	.run = ingest_run,
};
