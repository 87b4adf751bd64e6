/*
 * gpus.h - the one reference table of GPU models, shared by benches'
 * post-processing (percent of peak), flags (BELOW_REFERENCE), acceptance
 * (thresholds relative to the reference), pricing (estimates) and reports.
 * Every row names its source (vendor datasheet).
 *
 * Peak figures are dense (no 2:4 sparsity), at boost clock, in TFLOP/s;
 * 0 means the GPU has no such path (FP8 before Ada/Hopper).
 */
#ifndef GPUVET_GPUS_H
#define GPUVET_GPUS_H

#include <stddef.h>

enum gpu_dtype { GPU_FP32 = 0, GPU_TF32, GPU_FP16, GPU_BF16, GPU_FP8, GPU_DTYPE_COUNT };

struct gpu_ref {
	const char *key;            /* stable key: "H100-SXM", "A100-80-SXM", "A10G" */
	const char *name;           /* "NVIDIA H100 SXM5 80GB" */
	const char *nvml_match[4];  /* substrings of NVML device names that identify it (NULL-terminated) */
	double mem_gib;             /* memory size, to tell 40 GB from 80 GB parts */
	int form_sxm;               /* 1 SXM/OAM, 0 PCIe (NVML names the form for some) */
	double peak_tflops[GPU_DTYPE_COUNT];
	double mem_bw_gbps;         /* GB/s */
	int pcie_gen, pcie_width;
	double nvlink_gbps;         /* total NVLink bandwidth per GPU, GB/s, 0 if none */
	double tdp_w;
	const char *source;         /* where the numbers come from */
};

extern const struct gpu_ref gpu_refs[];
extern const size_t gpu_refs_count;

/* "fp32", "tf32", "fp16", "bf16", "fp8"; and back (-1 when unknown). */
const char *gpu_dtype_name(enum gpu_dtype d);
int gpu_dtype_from_name(const char *s);

/* By key; NULL when unknown. */
const struct gpu_ref *gpu_ref_find(const char *key);
/* From an NVML name and memory size (GiB); NULL when no row matches. */
const struct gpu_ref *gpu_ref_match(const char *nvml_name, double mem_gib);

/*
 * What a healthy GPU of a model sustains (not its datasheet peak): settled
 * at its power limit after the first second of load, each row with its
 * source (a capture in tests/fixtures/gpu/: file, date, device; or a
 * published figure with its address).  0 means no reference for that
 * figure.  Models without a row have no achievable reference (gpuvet then
 * judges only against the peak).
 */
struct gpu_achievable {
	const char *key;                        /* the gpu_ref key */
	double gemm_tflops[GPU_DTYPE_COUNT];    /* sustained dense GEMM */
	double h2d_gbps, d2h_gbps;              /* pinned host<->device copies */
	/* the soak bench (sustained GEMM at the power limit), median over its seconds */
	const char *soak_dtype;                 /* dtype and size the soak figures hold for */
	int soak_m;
	double soak_tflops;
	double soak_tflops_per_w;               /* median TFLOP/s / median board power */
	double soak_tflops_per_mhz;             /* median TFLOP/s / median SM clock */
	const char *source;
};

extern const struct gpu_achievable gpu_achievables[];
extern const size_t gpu_achievables_count;

/* By model key; NULL when the model has no achievable reference. */
const struct gpu_achievable *gpu_achievable_find(const char *key);
/*
 * The achievable value of a metric for one GPU of the model: gemm.<dtype>.tflops,
 * memcpy.h2d.pinned.gbps, memcpy.d2h.pinned.gbps, soak.tflops (and its
 * .first_min/.last_min).  0 with *value and *source set; -1 when there is none.
 * For the ranking's estimates and the flags.
 */
int gpu_achievable_metric(const char *key, const char *metric, double *value, const char **source);

/* Theoretical unidirectional PCIe payload rate in GB/s for a link (after encoding). */
double pcie_link_gbps(int gen, int width);

#endif
