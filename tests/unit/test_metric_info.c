/*
 * test_metric_info.c - the metric rows each bench declares (benches/bench.h,
 * struct metric_info) and their lookup: pattern matching, labels, and the
 * flags and peak rules rank, the report and the policy read from them.
 */
#include "tests/unit/t.h"
#include "benches/bench.h"

#include <string.h>

static void test_patterns(void)
{
	CHECK(metric_name_matches("gemm.*.tflops", "gemm.bf16.tflops"));
	CHECK(metric_name_matches("nvme.seqread.gbps", "nvme.seqread.gbps"));
	CHECK(!metric_name_matches("gemm.*.tflops", "gemm.bf16.x.tflops"));
	CHECK(!metric_name_matches("gemm.*.tflops", "gemm..tflops"));
	CHECK(!metric_name_matches("gemm.*.tflops", "gemm.tflops"));
	CHECK(!metric_name_matches("nvme.seqread.gbps", "nvme.seqread.gbpsx"));
}

static void test_rows(void)
{
	const struct metric_info *m = metric_info_find("gemm.bf16.tflops");
	CHECK(m && (m->flags & METRIC_RANKABLE) && !(m->flags & METRIC_PER_GPU) && m->peak == METRIC_PEAK_GEMM);
	CHECK(m && !strcmp(m->unit, "TFLOP/s"));
	m = metric_info_find("memcpy.h2d.pinned.gbps");
	CHECK(m && (m->flags & METRIC_RANKABLE) && (m->flags & METRIC_PER_GPU) && m->peak == METRIC_PEAK_PCIE);
	m = metric_info_find("memcpy.bidir.pageable.gbps");
	CHECK(m && m->peak == METRIC_PEAK_PCIE_BIDIR);
	m = metric_info_find("allreduce.busbw.gbps");
	CHECK(m && (m->flags & METRIC_PER_GPU) && m->peak == METRIC_PEAK_NVLINK);
	m = metric_info_find("nvme.randread.p99_us");
	CHECK(m && !(m->flags & METRIC_RANKABLE) && (m->flags & METRIC_LOWER_IS_BETTER) && !strcmp(m->unit, "us"));
	m = metric_info_find("soak.tflops.last_min");
	CHECK(m && (m->flags & METRIC_RANKABLE));
	m = metric_info_find("gemm.fp8.pct_of_peak");
	CHECK(m && m->peak == METRIC_PEAK_PERCENT && !(m->flags & METRIC_RANKABLE));
	CHECK(metric_info_find("nvme.nothing.gbps") == NULL);
	CHECK(metric_info_find(NULL) == NULL);
	/* every bench of the registry declares its rows, with a unit and a label */
	for (const struct bench *const *b = bench_registry; *b; b++) {
		const struct metric_info *r = bench_metrics(*b);
		CHECK(r && r->name);
		for (; r && r->name; r++)
			CHECK(r->unit && r->label && *r->label);
	}
}

static void test_labels(void)
{
	char buf[64];
	CHECK_STR(metric_label("gemm.bf16.tflops", buf, sizeof buf), "BF16 GEMM");
	CHECK_STR(metric_label("nvme.seqread.gbps", buf, sizeof buf), "NVMe seq read");
	CHECK_STR(metric_label("no.such.metric", buf, sizeof buf), "no.such.metric");
}

/* the GPU benches declare their rows in their own .cu files: gemm's headline and its search result */
static void test_gpu_rows_in_their_benches(void)
{
	const struct metric_info *h = metric_info_find("gemm.fp8.tflops");
	const struct metric_info *b = metric_info_find("gemm.bf16.best_shape.tflops");
	CHECK(h && b && h != b);
	CHECK(b && !strcmp(b->unit, "TFLOP/s") && (b->flags & METRIC_RANKABLE) && b->peak == METRIC_PEAK_NONE);
	CHECK(h && h->peak == METRIC_PEAK_GEMM);
	CHECK(metric_info_find("soak.sdc.mismatches") != NULL);
	CHECK(metric_info_find("gemm.bf16.best_shape.gbps") == NULL);
	CHECK(bench_metrics(bench_find("memcpy"))[0].name != NULL);
}

TEST_MAIN(T(test_patterns), T(test_rows), T(test_labels), T(test_gpu_rows_in_their_benches))
