/*
 * sdc.h - silent data corruption during the soak, as gpu-burn checks it:
 * every SDC_EVERY-th GEMM result of a GPU is reduced on the device to a
 * 64-bit checksum (benches/sdc_kernel.cu) and compared, on the host, with
 * the checksum of the first result computed with the same algorithm and
 * inputs.  cuBLAS documents bit-wise identical results run to run for the
 * same toolkit, architecture, SM count and algorithm (cuBLAS guide, "Results
 * Reproducibility"), so any difference is a wrong result.
 *
 * This file is the host side (plain C, unit-tested without a GPU:
 * tests/unit/test_sdc.c); the soak reports soak.sdc.mismatches per GPU and
 * one soak.sdc.mismatch point (x = seconds, y = iteration) per mismatch, and
 * judge/flags.c raises DATA_CORRUPTION from them.
 */
#ifndef GPUVET_SDC_H
#define GPUVET_SDC_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SDC_EVERY 8        /* checksum every 8th GEMM: ~0.4 % of a bf16 8192^3 soak's time on an H100 */
#define SDC_RING 8         /* checksums in flight (> the soak's GEMMs in flight / SDC_EVERY + 1) */
#define SDC_KEEP 16        /* mismatching iterations kept for the report */

#ifdef __CUDACC__
#define SDC_HD __host__ __device__
#else
#define SDC_HD
#endif
/*
 * The checksum's term for word w at position i (the checksum is the wrapping sum of the terms):
 * splitmix64's finalizer of w ^ (i * golden ratio).  For each position the term is a bijection of
 * the word, so a result that differs in one word always gives another sum; being non-linear, it
 * also tells apart words that traded places, which a sum of (w + i k) k' would not.
 */
static inline SDC_HD unsigned long long sdc_term(unsigned long long w, unsigned long long i)
{
	unsigned long long x = w ^ (i * 0x9E3779B97F4A7C15ull);
	x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
	x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
	return x ^ (x >> 31);
}

struct sdc_state {
	unsigned long long ref;          /* the first checksum */
	int have_ref;
	unsigned long long checked;      /* checksums compared (the first one included) */
	unsigned long long mismatches;
	unsigned long long iters[SDC_KEEP];
	double at_s[SDC_KEEP];
	int kept;
};

/*
 * The checksum of a buffer as the device computes it (32-bit words, then the
 * trailing bytes one by one): the definition, and the unit tests' reference.
 */
unsigned long long sdc_checksum_host(const void *buf, size_t bytes);

/* Whether iteration i gets a checksum. */
int sdc_due(unsigned long long iter);
/* The ring slot of iteration i's checksum (only for due iterations). */
int sdc_slot(unsigned long long iter);
/*
 * Compares the checksum of iteration iter (computed at t seconds) with the
 * first one; returns 1 on a mismatch (recorded), 0 when equal or the first.
 */
int sdc_record(struct sdc_state *s, unsigned long long iter, unsigned long long sum, double t);

#ifdef __cplusplus
}
#endif

#endif
