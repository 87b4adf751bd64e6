/*
 * gpu_math.c - formulas of the GPU benches (see gpu_math.h), plain C so
 * they are unit-tested without a GPU.
 */
#include "benches/gpu_math.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- GEMM ---- */

double gemm_flops(long m, long n, long k)
{
	return 2.0 * (double)m * (double)n * (double)k;
}

double gemm_tflops(long m, long n, long k, double seconds)
{
	if (!(seconds > 0))
		return 0;
	return gemm_flops(m, n, k) / seconds / 1e12;
}

/* each dtype's name, in enum gemm_dtype's order, NULL-terminated: the bench's .words (what gemm.*.tflops may name) */
const char *const gemm_dtype_words[GEMM_DTYPE_COUNT + 1] = { "fp32", "tf32", "fp16", "bf16", "fp8", NULL };

const char *gemm_dtype_name(enum gemm_dtype d)
{
	return (unsigned)d < GEMM_DTYPE_COUNT ? gemm_dtype_words[d] : "?";
}

int gemm_dtype_min_cc(enum gemm_dtype d)
{
	switch (d) {
	case GEMM_FP32: return 0;
	case GEMM_TF32: return 80;   /* Ampere; earlier GPUs run it as plain FP32 */
	case GEMM_FP16: return 70;   /* Volta tensor cores */
	case GEMM_BF16: return 80;   /* Ampere */
	case GEMM_FP8: return 89;    /* Ada and Hopper */
	default: return 1000;
	}
}

double gemm_tolerance(enum gemm_dtype d)
{
	switch (d) {
	case GEMM_FP32: return 2e-5;   /* FP32 accumulation; ~1e-7 seen in practice */
	case GEMM_TF32: return 2e-3;   /* inputs rounded to TF32: 2 * 2^-11 per product */
	case GEMM_FP16: return 1e-3;   /* FP16 output: 2^-11 of |D| <= sum |A B| */
	case GEMM_BF16: return 4e-3;   /* BF16 output: 2^-8 */
	case GEMM_FP8: return 8e-3;    /* E4M3 inputs exact in FP64; BF16 output 2^-8, plus Hopper's
					* fast accumulation (~14-bit accumulator, DeepSeek-V3 sec. 3.3.2) */
	default: return 0;
	}
}

int gemm_square_sizes(enum bench_profile p, int *out, int max)
{
	static const int quick[] = { 1024, 2048, 4096, 8192 };
	static const int standard[] = { 1024, 2048, 4096, 8192, 16384 };
	static const int full[] = { 256, 512, 1024, 2048, 4096, 6144, 8192, 12288, 16384 };
	const int *v = quick;
	int n = (int)(sizeof quick / sizeof quick[0]);
	if (p == PROFILE_STANDARD) {
		v = standard;
		n = (int)(sizeof standard / sizeof standard[0]);
	} else if (p == PROFILE_FULL) {
		v = full;
		n = (int)(sizeof full / sizeof full[0]);
	}
	int w = 0;
	for (int i = 0; i < n && w < max; i++)
		out[w++] = v[i];
	return w;
}

static int shape_cmp_desc(const void *a, const void *b)
{
	const struct gemm_shape *x = a, *y = b;
	double px = (double)x->m * x->n * x->k, py = (double)y->m * y->n * y->k;
	if (px != py)
		return px < py ? 1 : -1;
	/* equal products: squarer first, then by m, n */
	if (x->m != y->m)
		return x->m < y->m ? 1 : -1;
	return (x->n < y->n) - (x->n > y->n);
}

int gemm_search_shapes(enum bench_profile p, struct gemm_shape *out, int max)
{
	static const int std_mn[] = { 4096, 6144, 8192, 12288, 16384 };
	static const int std_k[] = { 4096, 8192, 12288, 16384 };
	int w = 0;
	if (p == PROFILE_STANDARD) {
		for (size_t i = 0; i < sizeof std_mn / sizeof std_mn[0]; i++)
			for (size_t j = 0; j < sizeof std_mn / sizeof std_mn[0]; j++)
				for (size_t l = 0; l < sizeof std_k / sizeof std_k[0]; l++)
					if (w < max)
						out[w++] = (struct gemm_shape){ std_mn[i], std_mn[j], std_k[l] };
	} else if (p == PROFILE_FULL) {
		for (int m = 2048; m <= 20480; m += 2048)
			for (int n = 2048; n <= 20480; n += 2048)
				for (int k = 2048; k <= 20480; k += 2048)
					if (w < max)
						out[w++] = (struct gemm_shape){ m, n, k };
	}
	qsort(out, (size_t)w, sizeof *out, shape_cmp_desc);
	return w;
}

double gemm_bytes(const struct gemm_shape *s, int ab_elem, int d_elem)
{
	return (double)s->m * s->k * ab_elem + (double)s->k * s->n * ab_elem +
	       (double)s->m * s->n * d_elem;
}

double gemm_search_budget_s(enum bench_profile p)
{
	switch (p) {
	case PROFILE_STANDARD: return 10;
	case PROFILE_FULL: return 60;
	case PROFILE_QUICK:
	default: return 0;
	}
}

/* ---- bandwidth ---- */

double bw_gbps(double bytes, double seconds)
{
	if (!(seconds > 0))
		return 0;
	return bytes / seconds / 1e9;
}

int size_sweep(size_t lo, size_t hi, size_t *out, int max)
{
	int w = 0;
	if (lo == 0 || hi < lo)
		return 0;
	size_t s = lo;
	while (s <= hi && w < max) {
		out[w++] = s;
		if (s > hi / 2)
			break;
		s *= 2;
	}
	if (w > 0 && out[w - 1] != hi && w < max)
		out[w++] = hi;
	return w;
}

int memcpy_batch_copies(size_t bytes)
{
	size_t target = 64ull << 20;
	size_t n = bytes ? target / bytes : 64;
	if (n < 4)
		n = 4;
	if (n > 64)
		n = 64;
	return (int)n;
}

size_t memcpy_max_bytes(enum bench_profile p)
{
	switch (p) {
	case PROFILE_STANDARD:
	case PROFILE_FULL: return 1ull << 30;
	case PROFILE_QUICK:
	default: return 256ull << 20;
	}
}

/* ---- all-reduce ---- */

double allreduce_algbw_gbps(double bytes, double seconds)
{
	return bw_gbps(bytes, seconds);
}

double allreduce_busbw_factor(int nranks)
{
	if (nranks <= 0)
		return 0;
	return 2.0 * (nranks - 1) / nranks;
}

double allreduce_busbw_gbps(double bytes, double seconds, int nranks)
{
	return allreduce_algbw_gbps(bytes, seconds) * allreduce_busbw_factor(nranks);
}

size_t allreduce_max_bytes(enum bench_profile p)
{
	switch (p) {
	case PROFILE_STANDARD: return 4ull << 30;
	case PROFILE_FULL: return 8ull << 30;
	case PROFILE_QUICK:
	default: return 1ull << 30;
	}
}

/* ---- soak ---- */

int soak_duration_s(const struct bench_config *cfg)
{
	if (cfg && cfg->soak_seconds > 0)
		return cfg->soak_seconds;
	switch (cfg ? cfg->profile : PROFILE_QUICK) {
	case PROFILE_STANDARD: return 300;
	case PROFILE_FULL: return 1200;
	case PROFILE_QUICK:
	default: return 30;
	}
}

double soak_window_s(double duration_s)
{
	if (duration_s <= 0)
		return 0;
	return duration_s >= 180 ? 60 : duration_s / 3.0;
}

double series_window_mean(const double *x, const double *y, int n, double lo, double hi)
{
	double sum = 0;
	int c = 0;
	for (int i = 0; i < n; i++) {
		if (x[i] >= lo && x[i] < hi && isfinite(y[i])) {
			sum += y[i];
			c++;
		}
	}
	return c ? sum / c : NAN;
}

double drop_pct(double first, double last)
{
	if (!(first > 0))
		return 0;
	return (first - last) / first * 100.0;
}

int foreign_procs(const unsigned *pids, int n, unsigned self_pid, int we_are_running)
{
	int others = 0, self_seen = 0;
	for (int i = 0; i < n; i++) {
		if (pids[i] == self_pid)
			self_seen = 1;
		else
			others++;
	}
	if (!self_seen && we_are_running && others > 0)
		others--;
	return others;
}

/* ---- ingest ---- */

size_t ingest_file_bytes(enum bench_profile p)
{
	switch (p) {
	case PROFILE_STANDARD: return 4ull << 30;
	case PROFILE_FULL: return 16ull << 30;
	case PROFILE_QUICK:
	default: return 1ull << 30;
	}
}

/* ---- host topology ---- */

static int parse_busid(const char *s, unsigned long v[4])
{
	/* [domain:]bus:device.function, hex */
	unsigned long part[4];
	int np = 0;
	const char *p = s;
	while (np < 4) {
		char *end;
		if (!isxdigit((unsigned char)*p))
			return -1;
		part[np++] = strtoul(p, &end, 16);
		p = end;
		if (*p == ':' || (*p == '.' && np >= 2)) {
			p++;
			continue;
		}
		break;
	}
	if (*p != '\0' || np < 3)
		return -1;
	if (np == 3) {
		v[0] = 0;
		v[1] = part[0];
		v[2] = part[1];
		v[3] = part[2];
	} else {
		memcpy(v, part, sizeof part);
	}
	return 0;
}

int pci_busid_equal(const char *a, const char *b)
{
	unsigned long x[4], y[4];
	if (!a || !b || parse_busid(a, x) || parse_busid(b, y))
		return 0;
	return x[0] == y[0] && x[1] == y[1] && x[2] == y[2] && x[3] == y[3];
}

int cpulist_parse(const char *s, unsigned long long *mask, int nwords)
{
	int count = 0;
	const char *p = s;
	while (*p && *p != '\n') {
		char *end;
		if (!isdigit((unsigned char)*p))
			return -1;
		long lo = strtol(p, &end, 10), hi = lo;
		p = end;
		if (*p == '-') {
			p++;
			if (!isdigit((unsigned char)*p))
				return -1;
			hi = strtol(p, &end, 10);
			p = end;
		}
		if (hi < lo || hi >= (long)nwords * 64)
			return -1;
		for (long c = lo; c <= hi; c++) {
			if (!(mask[c / 64] & (1ull << (c % 64)))) {
				mask[c / 64] |= 1ull << (c % 64);
				count++;
			}
		}
		if (*p == ',')
			p++;
		else if (*p && *p != '\n')
			return -1;
	}
	return count;
}
