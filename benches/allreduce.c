/* allreduce.c - placeholder until issue 3 lands: always skipped, never a measurement. */
#include "benches/bench.h"

static int allreduce_deadline(const struct bench_config *cfg)
{
	(void)cfg;
	return 10;
}

static int allreduce_run(struct bench_ctx *ctx, const struct bench_config *cfg)
{
	(void)cfg;
	bench_reason(ctx, "the allreduce bench is not built yet in this version");
	return BENCH_SKIP;
}

const struct bench bench_allreduce = {
	.name = "allreduce",
	.summary = "placeholder (not built yet)",
	.flags = BENCH_NEEDS_GPU,
	.deadline_s = allreduce_deadline,
	.run = allreduce_run,
};
