/* soak.c - placeholder until issue 4 lands: always skipped, never a measurement. */
#include "benches/bench.h"

static int soak_deadline(const struct bench_config *cfg)
{
	(void)cfg;
	return 10;
}

static int soak_run(struct bench_ctx *ctx, const struct bench_config *cfg)
{
	(void)cfg;
	bench_reason(ctx, "the soak bench is not built yet in this version");
	return BENCH_SKIP;
}

const struct bench bench_soak = {
	.name = "soak",
	.summary = "placeholder (not built yet)",
	.flags = BENCH_NEEDS_GPU,
	.deadline_s = soak_deadline,
	.run = soak_run,
};
