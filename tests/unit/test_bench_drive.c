/*
 * test_bench_drive.c - HACKING.md's bench recipe walked (issue 52): the
 * test-only null bench driven through the shared helper (tests/unit/drive.h)
 * as the harness drives it, every metric it reports declared by one of its
 * rows (metric_info_find), and a name its rows do not declare refused, as a
 * policy rule on it is at load.
 */
#include "benches/bench.h"
#include "tests/unit/t.h"
#include "tests/unit/drive.h"

#include <stdlib.h>
#include <string.h>

extern const struct bench bench_null;

static void test_null_bench_through_the_helper(void)
{
	struct bench_config cfg = { .profile = PROFILE_QUICK };
	int st = -2;
	unsetenv("GPUVET_NULL_MODE");
	char *out = bench_drive(&bench_null, &cfg, &st);
	CHECK(out != NULL);
	CHECK(st == BENCH_OK);
	CHECK(out && strstr(out, "\"name\":\"null.value.count\""));
	/* every metric line names a declared metric */
	for (const char *p = out; p && (p = strstr(p, "\"t\":\"metric\"")); p++) {
		const char *n = strstr(p, "\"name\":\"");
		char name[128] = "";
		if (n)
			sscanf(n + 8, "%127[^\"]", name);
		CHECK(metric_info_find(name) != NULL);
	}
	free(out);
}

static void test_declared_words_only(void)
{
	CHECK(metric_info_find("gemm.bf16.tflops") && metric_info_find("gemm.fp8.pct_of_peak"));
	CHECK(metric_info_find("gemm.bf99.tflops") == NULL);     /* not a dtype gemm runs */
	CHECK(metric_info_find("gemm.int4.best_shape.tflops") == NULL);
	CHECK(metric_info_find("memcpy.h2d.pinned.gpbs") == NULL);
}

TEST_MAIN(T(test_null_bench_through_the_helper), T(test_declared_words_only))
