/*
 * gpu_math.h - the formulas of the GPU benches, in plain C so that they are
 * unit-tested on a machine without a GPU (tests/unit/test_gpu_math.c).
 * The CUDA files (gemm.cu, memcpy.cu, allreduce.cu, soak.cu, ingest.cu)
 * only measure times and byte counts; every number they report is made
 * here.  Units: GB/s is 1e9 bytes per second, TFLOP/s is 1e12 floating
 * point operations per second (a multiply-add counts as two).
 */
#ifndef GPUVET_GPU_MATH_H
#define GPUVET_GPU_MATH_H

#include <stddef.h>

#include "benches/bench.h"
#include "common/gpus.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- GEMM ---- */

/* Floating point operations of D = A(m x k) * B(k x n): 2 m n k (one multiply and one add per term). */
double gemm_flops(long m, long n, long k);
/* TFLOP/s of one GEMM that took `seconds`; 0 when seconds <= 0. */
double gemm_tflops(long m, long n, long k, double seconds);

/* The bench's data types, in the order they are run. */
enum gemm_dtype { GEMM_FP32 = 0, GEMM_TF32, GEMM_FP16, GEMM_BF16, GEMM_FP8, GEMM_DTYPE_COUNT };
const char *gemm_dtype_name(enum gemm_dtype d);
/* The dtype names, NULL-terminated: what the '*' of gemm's metric rows stands for. */
extern const char *const gemm_dtype_words[];
/* Lowest compute capability (major*10+minor) on which cuBLASLt runs the dtype on tensor cores (FP32: any). */
int gemm_dtype_min_cc(enum gemm_dtype d);
/*
 * Tolerance of the correctness check: the largest allowed
 * |D - D_ref| / sum_l |A_il B_lj| over the checked elements (D_ref
 * accumulated in FP64 from the same inputs).  Set from each path's
 * rounding: FP32 accumulates in FP32 (k * 2^-24 worst case), TF32 rounds
 * its inputs to 10 mantissa bits, FP16/BF16/FP8 round the output to 10/7/7
 * mantissa bits (BF16 output for FP8, whose fast accumulation adds its own
 * error).  Every tolerance stays below what an all-zero D would score
 * (about 4 / (3 sqrt k) on average with inputs uniform in [-1, 1)).
 */
double gemm_tolerance(enum gemm_dtype d);

struct gemm_shape { int m, n, k; };

/*
 * Square sizes timed per profile (the curve gemm.<dtype>.tflops vs m).
 * Writes at most max entries into out, returns how many.
 */
int gemm_square_sizes(enum bench_profile p, int *out, int max);
/*
 * The achievable-peak shape search (as mamf-finder): a grid of (m, n, k),
 * each a multiple of 256, largest products first; empty for quick.
 * Returns how many shapes were written (at most max).
 */
int gemm_search_shapes(enum bench_profile p, struct gemm_shape *out, int max);
/* Device bytes of one GEMM's A, B and D with element sizes ab and d. */
double gemm_bytes(const struct gemm_shape *s, int ab_elem, int d_elem);
/* Seconds the shape search may spend per dtype in a profile. */
double gemm_search_budget_s(enum bench_profile p);

/* ---- bandwidth ---- */

/* bytes / seconds / 1e9; 0 when seconds <= 0. */
double bw_gbps(double bytes, double seconds);

/* The PCIe link rate gpu_pcie_link_gbps() is in common/gpus.h (shared with flags and policy). */

/*
 * Sizes of a sweep: powers of two from lo up to hi, and hi itself when it
 * is not a power of two.  Returns how many were written (at most max).
 */
int size_sweep(size_t lo, size_t hi, size_t *out, int max);

/* Copies per timed batch for a copy of `bytes`: enough to last ~ 64 MiB, between 4 and 64. */
int memcpy_batch_copies(size_t bytes);

/* Largest copy of the memcpy size sweep per profile. */
size_t memcpy_max_bytes(enum bench_profile p);

/* ---- NCCL all-reduce (nccl-tests doc/PERFORMANCE.md) ---- */

/* algbw = bytes / time, GB/s (bytes: the size of one rank's buffer). */
double allreduce_algbw_gbps(double bytes, double seconds);
/*
 * busbw = algbw * 2 (n - 1) / n: each rank must send and receive
 * 2 (n - 1) / n of the buffer in a ring all-reduce, so busbw is comparable
 * to the hardware's link bandwidth whatever n.  With n = 1 the factor is 0
 * and busbw is 0, as nccl-tests reports.
 */
double allreduce_busbw_factor(int nranks);
double allreduce_busbw_gbps(double bytes, double seconds, int nranks);
/* Largest all-reduce buffer per profile (before the free-memory bound). */
size_t allreduce_max_bytes(enum bench_profile p);

/* ---- soak ---- */

/* Soak duration in seconds: cfg override, else 30 / 300 / 1200 by profile. */
int soak_duration_s(const struct bench_config *cfg);
/*
 * Width of the "first minute" and "last minute" windows: 60 s, or a third
 * of the soak when it is shorter than 3 minutes (so a 30 s quick soak
 * compares its first 10 s with its last 10 s).
 */
double soak_window_s(double duration_s);
/* Mean of y over points with lo <= x < hi; NAN when none. */
double series_window_mean(const double *x, const double *y, int n, double lo, double hi);
/* (first - last) / first * 100; 0 when first <= 0.  Negative when the value rose. */
double drop_pct(double first, double last);
/*
 * Foreign compute processes on a GPU from NVML's list of pids: every pid
 * that is not ours.  Inside a container NVML may report host pids, so our
 * own process is not recognisable: when our pid is absent but we hold a
 * context (we_are_running), one entry is taken to be us.
 */
int foreign_procs(const unsigned *pids, int n, unsigned self_pid, int we_are_running);

/* ---- ingest ---- */

/* File size read by the ingest bench per profile, before the free-space bound. */
size_t ingest_file_bytes(enum bench_profile p);

/* ---- host topology ---- */

/*
 * Same PCI address?  Accepts NVML's "00000000:3B:00.0" and CUDA's
 * "0000:3b:00.0" (domain, bus, device, function in hex, any case).
 */
int pci_busid_equal(const char *a, const char *b);
/*
 * Parses a sysfs cpulist ("0-15,32-47") and sets bits in mask (an array
 * of nwords 64-bit words).  Returns the number of CPUs set, -1 on a malformed list.
 */
int cpulist_parse(const char *s, unsigned long long *mask, int nwords);

#ifdef __cplusplus
}
#endif
#endif
