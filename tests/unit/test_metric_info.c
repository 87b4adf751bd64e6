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

/* Issue 52: the owner of each metric, and the physical bounds beside the rows (benches/metric_bounds.c). */
static void test_owners_and_bounds(void)
{
	char err[256] = "";
	CHECK_STR(metric_owner("gemm.bf16.tflops"), "gemm");
	CHECK_STR(metric_owner("memcpy.h2d.pct_of_link"), "memcpy");
	CHECK_STR(metric_owner("host.cpu_steal.pct"), "harness");
	CHECK(metric_owner("edge.n0") == NULL);
	CHECK(metric_bound_check("gemm.bf16.tflops", 0, 800, 1, err, sizeof err) == 0);
	CHECK(metric_bound_check("gemm.bf16.tflops", 0, NAN, 1, err, sizeof err) == 0);   /* null: not measured */
	CHECK(metric_bound_check("gemm.bf16.tflops", 0, 1e300, 1, err, sizeof err) == -1);
	CHECK(strstr(err, "gemm.bf16.tflops on gpu 0 = 1e+300") && strstr(err, "[0, 4500]"));
	/* the instance row of 8 GPUs: 8x the bound; B200's fp8 peak (4500) is the fastest of its dtype */
	CHECK(metric_bound_check("gemm.bf16.tflops", -1, 8 * 1000.0, 8, err, sizeof err) == 0);
	CHECK(metric_bound_check("gemm.fp8.tflops", 0, 8999, 1, err, sizeof err) == 0);
	CHECK(metric_bound_check("gemm.fp8.tflops", 0, 9001, 1, err, sizeof err) == -1);
	CHECK(metric_bound_check("memcpy.h2d.pinned.gbps", 0, -1, 1, err, sizeof err) == -1);
	CHECK(strstr(err, "memcpy.h2d.pinned.gbps on gpu 0 = -1"));
	CHECK(metric_bound_check("memcpy.h2d.pct_of_link", -1, 100, 1, err, sizeof err) == 0);
	CHECK(metric_bound_check("memcpy.h2d.pct_of_link", -1, 100.5, 1, err, sizeof err) == -1);
	CHECK(metric_bound_check("soak.sm_clock.drop_pct", -1, -4.5, 1, err, sizeof err) == 0);   /* a clock that rose */
	CHECK(metric_bound_check("soak.pcie.gen", 0, -1, 1, err, sizeof err) == 0);   /* NVML's "no reading" */
	CHECK(metric_bound_check("soak.pcie.gen", 0, 1e300, 1, err, sizeof err) == -1);
	CHECK(metric_bound_check("soak.temp.c", 0, 151, 1, err, sizeof err) == -1);
	CHECK(metric_bound_check("nvme.randread.p99_us", -1, -3, 1, err, sizeof err) == -1);
	CHECK(metric_bound_check("edge.n0", -1, -1e308, 1, err, sizeof err) == 0);   /* no row: only finite */
	CHECK(metric_bound_check("edge.n0", -1, INFINITY, 1, err, sizeof err) == -1);
}

TEST_MAIN(T(test_patterns), T(test_rows), T(test_labels), T(test_gpu_rows_in_their_benches), T(test_owners_and_bounds))
