/* objstore.c - placeholder until issue 5 lands: always skipped, never a measurement. */
#include "benches/bench.h"

static int objstore_deadline(const struct bench_config *cfg)
{
	(void)cfg;
	return 10;
}

static int objstore_run(struct bench_ctx *ctx, const struct bench_config *cfg)
{
	(void)cfg;
	bench_reason(ctx, "the objstore bench is not built yet in this version");
	return BENCH_SKIP;
}

const struct bench bench_objstore = {
	.name = "objstore",
	.summary = "placeholder (not built yet)",
	.flags = 0,
	.deadline_s = objstore_deadline,
	.run = objstore_run,
};
