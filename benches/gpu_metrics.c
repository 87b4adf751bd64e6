/*
 * gpu_metrics.c - the metric rows (bench.h, struct metric_info) of the GPU
 * benches gemm, memcpy, allreduce, ingest and soak, beside gpu_math.c where
 * every number they report is made.  The .cu files are being rewritten on
 * another branch, so their rows wait here and bench_metrics() finds them by
 * the bench's name; once those land, each table moves into its .cu file as
 * `.metrics = NAME_metrics`.
 */
#include "benches/bench.h"

#include <stddef.h>
#include <string.h>

#define R METRIC_RANKABLE
#define G METRIC_PER_GPU
#define L METRIC_LOWER_IS_BETTER

static const struct metric_info gemm_metrics[] = {
	{ "gemm.*.tflops", "TFLOP/s", "GEMM", R, METRIC_PEAK_GEMM },
	/* added by the harness from the reference table (runners/run.c) */
	{ "gemm.*.pct_of_peak", "%", "GEMM % of peak", 0, METRIC_PEAK_PERCENT },
	{ NULL, NULL, NULL, 0, METRIC_PEAK_NONE },
};

static const struct metric_info memcpy_metrics[] = {
	{ "memcpy.h2d.pinned.gbps", "GB/s", "H2D pinned", R | G, METRIC_PEAK_PCIE },
	{ "memcpy.d2h.pinned.gbps", "GB/s", "D2H pinned", R | G, METRIC_PEAK_PCIE },
	{ "memcpy.bidir.pinned.gbps", "GB/s", "bidirectional pinned", R | G, METRIC_PEAK_PCIE_BIDIR },
	{ "memcpy.h2d.pageable.gbps", "GB/s", "H2D pageable", R | G, METRIC_PEAK_PCIE },
	{ "memcpy.d2h.pageable.gbps", "GB/s", "D2H pageable", R | G, METRIC_PEAK_PCIE },
	{ "memcpy.bidir.pageable.gbps", "GB/s", "bidirectional pageable", R | G, METRIC_PEAK_PCIE_BIDIR },
	{ "memcpy.d2d.gbps", "GB/s", "device to device", R | G, METRIC_PEAK_NONE },
	{ "memcpy.h2d.pct_of_link", "%", "H2D % of link", G, METRIC_PEAK_PERCENT },
	{ NULL, NULL, NULL, 0, METRIC_PEAK_NONE },
};

static const struct metric_info allreduce_metrics[] = {
	{ "allreduce.busbw.gbps", "GB/s", "all-reduce busbw", R | G, METRIC_PEAK_NVLINK },
	{ "allreduce.algbw.gbps", "GB/s", "all-reduce algbw", R | G, METRIC_PEAK_NONE },
	{ NULL, NULL, NULL, 0, METRIC_PEAK_NONE },
};

static const struct metric_info ingest_metrics[] = {
	{ "ingest.gbps", "GB/s", "file to GPU", R, METRIC_PEAK_NONE },
	{ NULL, NULL, NULL, 0, METRIC_PEAK_NONE },
};

static const struct metric_info soak_metrics[] = {
	{ "soak.tflops.first_min", "TFLOP/s", "soak first minute", R, METRIC_PEAK_NONE },
	{ "soak.tflops.last_min", "TFLOP/s", "soak last minute", R, METRIC_PEAK_NONE },
	{ "soak.sm_clock.drop_pct", "%", "SM clock drop", L, METRIC_PEAK_NONE },
	{ "soak.throttle_s", "s", "throttled time", L, METRIC_PEAK_NONE },
	{ "soak.xid.count", "count", "Xid errors", L, METRIC_PEAK_NONE },
	{ "soak.foreign_procs.count", "count", "foreign processes", L, METRIC_PEAK_NONE },
	{ "soak.sdc.mismatches", "count", "GEMM results differing from the first", L, METRIC_PEAK_NONE },
	{ NULL, NULL, NULL, 0, METRIC_PEAK_NONE },
};

const struct metric_info *gpu_bench_metrics(const char *bench);
const struct metric_info *gpu_bench_metrics(const char *bench)
{
	static const struct {
		const char *bench;
		const struct metric_info *rows;
	} t[] = {
		{ "gemm", gemm_metrics },     { "memcpy", memcpy_metrics }, { "allreduce", allreduce_metrics },
		{ "ingest", ingest_metrics }, { "soak", soak_metrics },
	};
	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
		if (!strcmp(t[i].bench, bench))
			return t[i].rows;
	return NULL;
}
