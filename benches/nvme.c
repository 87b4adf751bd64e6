/* nvme.c - placeholder until issue 5 lands: always skipped, never a measurement. */
#include "benches/bench.h"

static int nvme_deadline(const struct bench_config *cfg)
{
	(void)cfg;
	return 10;
}

static int nvme_run(struct bench_ctx *ctx, const struct bench_config *cfg)
{
	(void)cfg;
	bench_reason(ctx, "the nvme bench is not built yet in this version");
	return BENCH_SKIP;
}

const struct bench bench_nvme = {
	.name = "nvme",
	.summary = "placeholder (not built yet)",
	.flags = 0,
	.deadline_s = nvme_deadline,
	.run = nvme_run,
};
