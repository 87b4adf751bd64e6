/* gemm.c - placeholder until issue 3 lands: always skipped, never a measurement. */
#include "benches/bench.h"

static int gemm_deadline(const struct bench_config *cfg)
{
	(void)cfg;
	return 10;
}

static int gemm_run(struct bench_ctx *ctx, const struct bench_config *cfg)
{
	(void)cfg;
	bench_reason(ctx, "the gemm bench is not built yet in this version");
	return BENCH_SKIP;
}

const struct bench bench_gemm = {
	.name = "gemm",
	.summary = "placeholder (not built yet)",
	.flags = BENCH_NEEDS_GPU,
	.deadline_s = gemm_deadline,
	.run = gemm_run,
};
