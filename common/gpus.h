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

#ifdef __cplusplus
extern "C" {
#endif

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

/*
 * The one rule for percent of peak of a GEMM metric "gemm.<dtype>.tflops":
 * 100 x value / (the dtype's dense peak x GPUs), where a per-GPU row
 * (gpu >= 0) counts one GPU and the instance row (gpu -1) counts the GPUs
 * the bench loaded (gpus_loaded > 0: CUDA_VISIBLE_DEVICES may hide some of
 * those NVML sees), else the inventory's (gpus_inventory > 0), else one.
 * dtype receives the dtype's name.  0, or -1 when the metric is not a GEMM
 * throughput or the reference has no peak for its dtype.
 */
int gpu_pct_of_peak(const struct gpu_ref *ref, const char *metric, int gpu, double value, int gpus_loaded,
		    int gpus_inventory, char dtype[16], double *pct, double *peak);

/*
 * Theoretical unidirectional payload rate of a PCIe link in GB/s:
 * lanes x transfer rate x encoding efficiency / 8.  Gen1 2.5 GT/s and Gen2
 * 5 GT/s use 8b/10b; Gen3 8, Gen4 16, Gen5 32 GT/s use 128b/130b; Gen6
 * 64 GT/s uses FLIT mode (1b/1b, 242 useful bytes of every 256).  Packet
 * headers are not subtracted.  0 for an unknown generation or width <= 0.
 * A Gen4 x16 link: 16 * 16e9 * 128/130 / 8 = 31.51 GB/s.
 */
double gpu_pcie_link_gbps(int gen, int width);

#ifdef __cplusplus
}
#endif
#endif
