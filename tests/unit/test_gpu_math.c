/* test_gpu_math.c - the GPU benches' formulas (benches/gpu_math.c), on CPU. */
#include "tests/unit/t.h"

#include <math.h>
#include <stdint.h>

#include "benches/gpu_math.h"

static void test_gemm_flops(void)
{
	CHECK_NEAR(gemm_flops(2, 3, 4), 48, 0);
	/* 8192^3 GEMM in 1.1 ms: 2*8192^3/1.1e-3/1e12 = 999.556 TFLOP/s */
	CHECK_NEAR(gemm_tflops(8192, 8192, 8192, 1.1e-3), 999.556025, 1e-5);
	/* no int overflow at large sizes */
	CHECK_NEAR(gemm_flops(65536, 65536, 65536), 2.0 * 281474976710656.0, 1);
	CHECK_NEAR(gemm_tflops(1, 1, 1, 0), 0, 0);
	CHECK_NEAR(gemm_tflops(1, 1, 1, -1), 0, 0);
	CHECK_NEAR(gemm_tflops(1, 1, 1, NAN), 0, 0);
}

static void test_gemm_dtypes(void)
{
	CHECK_STR(gemm_dtype_name(GEMM_FP32), "fp32");
	CHECK_STR(gemm_dtype_name(GEMM_TF32), "tf32");
	CHECK_STR(gemm_dtype_name(GEMM_FP16), "fp16");
	CHECK_STR(gemm_dtype_name(GEMM_BF16), "bf16");
	CHECK_STR(gemm_dtype_name(GEMM_FP8), "fp8");
	CHECK_STR(gemm_dtype_name((enum gemm_dtype)99), "?");
	/* FP8 needs Ada/Hopper (8.9), BF16 Ampere */
	CHECK(gemm_dtype_min_cc(GEMM_FP8) == 89);
	CHECK(gemm_dtype_min_cc(GEMM_BF16) == 80);
	CHECK(gemm_dtype_min_cc(GEMM_FP32) == 0);
	/* tolerance ordered by precision, all positive and below the error of a zero result */
	CHECK(gemm_tolerance(GEMM_FP32) < gemm_tolerance(GEMM_FP16));
	CHECK(gemm_tolerance(GEMM_FP16) < gemm_tolerance(GEMM_BF16));
	for (int d = 0; d < GEMM_DTYPE_COUNT; d++) {
		CHECK(gemm_tolerance((enum gemm_dtype)d) > 0);
		/* an all-zero D on a k=16384 case has normalised error ~ 1/(0.75 sqrt(k)) ~ 0.01 */
		CHECK(gemm_tolerance((enum gemm_dtype)d) < 0.01);
	}
}

static void test_gemm_sizes(void)
{
	int s[16];
	int n = gemm_square_sizes(PROFILE_QUICK, s, 16);
	CHECK(n >= 3);
	CHECK(s[n - 1] == 8192);
	for (int i = 1; i < n; i++)
		CHECK(s[i] > s[i - 1]);
	int ns = gemm_square_sizes(PROFILE_STANDARD, s, 16);
	CHECK(s[ns - 1] == 16384);
	CHECK(gemm_square_sizes(PROFILE_FULL, s, 2) == 2);  /* bounded by max */

	struct gemm_shape sh[1200];
	CHECK(gemm_search_shapes(PROFILE_QUICK, sh, 1200) == 0);
	int m = gemm_search_shapes(PROFILE_STANDARD, sh, 1200);
	CHECK(m == 100);
	for (int i = 0; i < m; i++) {
		CHECK(sh[i].m % 256 == 0 && sh[i].n % 256 == 0 && sh[i].k % 256 == 0);
		if (i)
			CHECK((double)sh[i].m * sh[i].n * sh[i].k <= (double)sh[i - 1].m * sh[i - 1].n * sh[i - 1].k);
	}
	CHECK(sh[0].m == 16384 && sh[0].n == 16384 && sh[0].k == 16384);
	int f = gemm_search_shapes(PROFILE_FULL, sh, 1200);
	CHECK(f == 1000);
	CHECK(sh[0].m == 20480 && sh[f - 1].k == 2048);
	CHECK(gemm_search_shapes(PROFILE_FULL, sh, 10) == 10);
	CHECK(gemm_search_budget_s(PROFILE_QUICK) == 0);
	CHECK(gemm_search_budget_s(PROFILE_FULL) > gemm_search_budget_s(PROFILE_STANDARD));

	struct gemm_shape one = { 8192, 8192, 8192 };
	/* BF16 A and B, BF16 D: 3 * 8192^2 * 2 bytes = 384 MiB */
	CHECK_NEAR(gemm_bytes(&one, 2, 2), 3.0 * 8192 * 8192 * 2, 0);
	struct gemm_shape rect = { 100, 200, 300 };
	CHECK_NEAR(gemm_bytes(&rect, 1, 2), 100 * 300 + 300 * 200 + 100 * 200 * 2, 0);
}

static void test_pcie(void)
{
	/* 8b/10b for gen1-2 */
	CHECK_NEAR(gpu_pcie_link_gbps(1, 16), 4.0, 1e-9);
	CHECK_NEAR(gpu_pcie_link_gbps(2, 16), 8.0, 1e-9);
	CHECK_NEAR(gpu_pcie_link_gbps(2, 1), 0.5, 1e-9);
	/* 128b/130b for gen3+ */
	CHECK_NEAR(gpu_pcie_link_gbps(3, 16), 15.7538, 1e-4);
	CHECK_NEAR(gpu_pcie_link_gbps(4, 16), 31.5077, 1e-4);
	CHECK_NEAR(gpu_pcie_link_gbps(5, 16), 63.0154, 1e-4);
	CHECK_NEAR(gpu_pcie_link_gbps(4, 8), gpu_pcie_link_gbps(4, 16) / 2, 1e-9);
	CHECK_NEAR(gpu_pcie_link_gbps(6, 16), 121.0, 1e-9);
	CHECK_NEAR(gpu_pcie_link_gbps(0, 16), 0, 0);
	CHECK_NEAR(gpu_pcie_link_gbps(7, 16), 0, 0);
	CHECK_NEAR(gpu_pcie_link_gbps(4, 0), 0, 0);
	CHECK_NEAR(bw_gbps(25e9, 1.0), 25.0, 1e-12);
	CHECK_NEAR(bw_gbps(1 << 30, 0), 0, 0);
	/* 1 GiB in 40 ms: 26.84 GB/s (1e9, not 2^30) */
	CHECK_NEAR(bw_gbps(1073741824.0, 0.040), 26.8435, 1e-4);
}

static void test_size_sweep(void)
{
	size_t s[64];
	int n = size_sweep(4096, 256u << 20, s, 64);
	CHECK(n == 17);
	CHECK(s[0] == 4096 && s[n - 1] == (256u << 20));
	for (int i = 1; i < n; i++)
		CHECK(s[i] == 2 * s[i - 1]);
	/* hi not a power of two: included at the end */
	n = size_sweep(8, 100, s, 64);
	CHECK(n == 5);
	CHECK(s[3] == 64 && s[4] == 100);
	CHECK(size_sweep(8, 8, s, 64) == 1);
	CHECK(size_sweep(16, 8, s, 64) == 0);
	CHECK(size_sweep(0, 8, s, 64) == 0);
	CHECK(size_sweep(8, 1u << 30, s, 3) == 3);
	/* no overflow near SIZE_MAX */
	n = size_sweep(1, SIZE_MAX, s, 64);
	CHECK(n == 64 || s[n - 1] == SIZE_MAX);
	CHECK(memcpy_batch_copies(4096) == 64);
	CHECK(memcpy_batch_copies(8u << 20) == 8);
	CHECK(memcpy_batch_copies(1u << 30) == 4);
	CHECK(memcpy_batch_copies(0) == 64);
	CHECK(memcpy_max_bytes(PROFILE_QUICK) < memcpy_max_bytes(PROFILE_FULL));
}

static void test_allreduce(void)
{
	/* nccl-tests: busbw = algbw * 2(n-1)/n */
	CHECK_NEAR(allreduce_busbw_factor(1), 0, 0);
	CHECK_NEAR(allreduce_busbw_factor(2), 1, 1e-12);
	CHECK_NEAR(allreduce_busbw_factor(8), 1.75, 1e-12);
	CHECK_NEAR(allreduce_busbw_factor(0), 0, 0);
	/* an 8-GPU all-reduce of 8 GiB in 36 ms: algbw 238.6, busbw 417.6 GB/s */
	double b = 8.0 * (1ull << 30);
	CHECK_NEAR(allreduce_algbw_gbps(b, 0.036), 238.609, 1e-3);
	CHECK_NEAR(allreduce_busbw_gbps(b, 0.036, 8), 238.609 * 1.75, 2e-3);
	CHECK_NEAR(allreduce_busbw_gbps(b, 0.036, 1), 0, 0);
	/*
	 * nccl-tests' own output: all_reduce_perf -b 8 -e 8G -f 2 -g 1 over 16 H100 ranks on two
	 * nodes (mpirun -np 16 -npernode 8), published in github.com/lessizzmore/create-a3mega-ztan-fork,
	 * file ztan-NCCL-test-result (commit 02dd8f4).  Rows (size B, out-of-place time us, algbw,
	 * busbw GB/s): 1048576 203.2 5.16 9.68; 134217728 1652.2 81.24 152.32;
	 * 1073741824 6759.0 158.86 297.86; 8589934592 47535 180.71 338.82.  nccl-tests prints the
	 * time rounded to 0.1 us (5 digits for the last) and the bandwidths to 0.01: within 0.02.
	 */
	static const double row[][4] = {
		{ 1048576, 203.2, 5.16, 9.68 },
		{ 134217728, 1652.2, 81.24, 152.32 },
		{ 1073741824, 6759.0, 158.86, 297.86 },
		{ 8589934592.0, 47535, 180.71, 338.82 },
	};
	for (size_t i = 0; i < sizeof row / sizeof row[0]; i++) {
		CHECK_NEAR(allreduce_algbw_gbps(row[i][0], row[i][1] * 1e-6), row[i][2], 0.02);
		CHECK_NEAR(allreduce_busbw_gbps(row[i][0], row[i][1] * 1e-6, 16), row[i][3], 0.02);
	}
	CHECK(allreduce_max_bytes(PROFILE_QUICK) >= (1ull << 30));
	CHECK(allreduce_max_bytes(PROFILE_FULL) == (8ull << 30));
}

static void test_soak(void)
{
	struct bench_config c = { .profile = PROFILE_QUICK };
	CHECK(soak_duration_s(&c) == 30);
	c.profile = PROFILE_STANDARD;
	CHECK(soak_duration_s(&c) == 300);
	c.profile = PROFILE_FULL;
	CHECK(soak_duration_s(&c) == 1200);
	c.soak_seconds = 7;
	CHECK(soak_duration_s(&c) == 7);
	CHECK_NEAR(soak_window_s(30), 10, 1e-12);
	CHECK_NEAR(soak_window_s(300), 60, 0);
	CHECK_NEAR(soak_window_s(180), 60, 0);
	CHECK_NEAR(soak_window_s(0), 0, 0);

	double x[6] = { 0, 1, 2, 3, 4, 5 }, y[6] = { 10, 20, 30, NAN, 50, 60 };
	CHECK_NEAR(series_window_mean(x, y, 6, 0, 2), 15, 1e-12);
	CHECK_NEAR(series_window_mean(x, y, 6, 2, 5), 40, 1e-12);   /* NaN skipped */
	CHECK(isnan(series_window_mean(x, y, 6, 10, 20)));
	CHECK_NEAR(drop_pct(1980, 1755), 11.3636, 1e-4);
	CHECK_NEAR(drop_pct(1000, 1100), -10, 1e-12);
	CHECK_NEAR(drop_pct(0, 5), 0, 0);

	unsigned pids[4] = { 100, 200, 300, 0 };
	CHECK(foreign_procs(pids, 3, 200, 1) == 2);      /* we are listed */
	CHECK(foreign_procs(pids, 3, 999, 1) == 2);      /* container: one of them is us */
	CHECK(foreign_procs(pids, 1, 999, 1) == 0);
	CHECK(foreign_procs(pids, 3, 999, 0) == 3);
	CHECK(foreign_procs(pids, 0, 999, 1) == 0);
	CHECK(ingest_file_bytes(PROFILE_QUICK) == (1ull << 30));
}

static void test_busid(void)
{
	CHECK(pci_busid_equal("00000000:3B:00.0", "0000:3b:00.0"));
	CHECK(pci_busid_equal("3b:00.0", "0000:3B:00.0"));
	CHECK(!pci_busid_equal("00000000:3B:00.0", "0000:3c:00.0"));
	CHECK(!pci_busid_equal("00000001:3B:00.0", "0000:3b:00.0"));
	CHECK(!pci_busid_equal("0000:3b:00.1", "0000:3b:00.0"));
	CHECK(!pci_busid_equal("", "0000:3b:00.0"));
	CHECK(!pci_busid_equal("zz", "zz"));
	CHECK(!pci_busid_equal("0000:3b:00.0x", "0000:3b:00.0"));
	CHECK(!pci_busid_equal(NULL, "0000:3b:00.0"));
}

static void test_cpulist(void)
{
	unsigned long long m[2] = { 0, 0 };
	CHECK(cpulist_parse("0-3,8,10-11\n", m, 2) == 7);
	CHECK(m[0] == 0xd0full);
	unsigned long long m2[2] = { 0, 0 };
	CHECK(cpulist_parse("64-65", m2, 2) == 2);
	CHECK(m2[1] == 3 && m2[0] == 0);
	unsigned long long m3[1] = { 0 };
	CHECK(cpulist_parse("64", m3, 1) == -1);   /* beyond the mask */
	CHECK(cpulist_parse("3-1", m3, 1) == -1);
	CHECK(cpulist_parse("a", m3, 1) == -1);
	CHECK(cpulist_parse("1-", m3, 1) == -1);
	CHECK(cpulist_parse("1;2", m3, 1) == -1);
	CHECK(cpulist_parse("", m3, 1) == 0);
}

TEST_MAIN(T(test_gemm_flops), T(test_gemm_dtypes), T(test_gemm_sizes), T(test_pcie),
	  T(test_size_sweep), T(test_allreduce), T(test_soak), T(test_busid), T(test_cpulist))
