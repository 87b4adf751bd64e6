/*
 * gpus.h - the GPU model tables, shared by benches' post-processing
 * (percent of peak), judging (flags, acceptance, ranking) and reports:
 * gpu_refs (the datasheet: peaks, memory, links) and gpu_references (what a
 * healthy GPU achieves).  Every row names its source.
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
	/*
	 * "YYYY-MM": the month NVIDIA (or, for A10G, AWS) first announced the
	 * part, from the same sources' press releases: a run of the model that
	 * started before it is a wrong clock or a forged date (results/fp_rows.c).
	 */
	const char *released;
};

extern const struct gpu_ref gpu_refs[];
extern const size_t gpu_refs_count;

/* "fp32", "tf32", "fp16", "bf16", "fp8"; and back (-1 when unknown). */
const char *gpu_dtype_name(enum gpu_dtype d);
int gpu_dtype_from_name(const char *s);

/* By key; NULL when unknown. */
const struct gpu_ref *gpu_ref_find(const char *key);
/*
 * Whether two GPU model names are one model: the same reference row
 * (gpu_ref_find), or, when neither has one, the same name ignoring case.
 * 0 when either is NULL.  The one rule the identity check and the ranking's
 * estimates use.
 */
int gpu_same_model(const char *a, const char *b);
/* From an NVML name and memory size (GiB); NULL when no row matches. */
const struct gpu_ref *gpu_ref_match(const char *nvml_name, double mem_gib);

/*
 * The one reference: what a healthy GPU of a model achieves on a dense
 * GEMM (not its datasheet peak), one row per model of gpu_refs, each with
 * its kind and source.  The acceptance policy (min_fraction_of_reference),
 * the flags (BELOW_REFERENCE), the ranking's estimates and the report all
 * read it through gpu_reference_gemm / gpu_reference_metric, never the row.
 *
 * Kinds, strongest first:
 *   measured   gpuvet's own clean captures of the model (tests/fixtures/gpu/,
 *              the folders named in captures): per dtype the median of the
 *              clean runs' steady-state figure (the gemm bench's window median
 *              after the GPU settled at its power limit), the same statistic
 *              for every measured model; a run is clean when gpuvet raises no
 *              critical flag on it (tests/unit/test_references.c recomputes it)
 *   sustained  a published figure after the GPU settled at its power limit
 *   burst      a published best-shape short-run figure (mamf-finder style)
 *   estimate   nothing published: the datasheet peak x the achieved/peak
 *              ratio of a model of the nearest architecture (row field near),
 *              or of the same model's headline dtype for its other dtypes
 */
enum gpu_ref_kind { GPU_REF_MEASURED = 0, GPU_REF_SUSTAINED, GPU_REF_BURST, GPU_REF_ESTIMATE };
const char *gpu_ref_kind_name(enum gpu_ref_kind k);

struct gpu_reference {
	const char *key;                        /* the gpu_ref key */
	double given_tflops[GPU_DTYPE_COUNT];   /* figures given (kind below); 0: derived (estimate) */
	enum gpu_ref_kind kind;                 /* of the given figures */
	const char *captures;                   /* measured: the folders of tests/fixtures/gpu/ the figures are the
						   median of (space-separated); NULL for other kinds */
	const char *near;                       /* nothing given: the model whose ratio estimates this one */
	double h2d_gbps, d2h_gbps;              /* pinned host<->device copies, 0 unknown */
	/* the soak bench (sustained GEMM at the power limit), median over its seconds; 0 unknown */
	const char *soak_dtype;                 /* dtype and size the soak figures hold for */
	int soak_m;
	double soak_tflops;
	double soak_tflops_per_w;               /* median TFLOP/s / median board power */
	double soak_tflops_per_mhz;             /* median TFLOP/s / median SM clock */
	/*
	 * Published floors (below them the machine is broken, not slow): pinned
	 * H2D GB/s of one GPU, and all-reduce busbw GB/s of an 8-GPU node of the
	 * model at 16 GB (nccl-tests all_reduce_perf); 0 none published.
	 */
	double h2d_floor_gbps, allreduce8_floor_gbps;
	const char *source;
};

extern const struct gpu_reference gpu_references[];
extern const size_t gpu_references_count;

/* By model key; NULL when the model has no reference row. */
const struct gpu_reference *gpu_reference_find(const char *key);

/*
 * A published floor of one model (struct gpu_reference): metric
 * "memcpy.h2d.pinned.gbps" (per GPU) or "allreduce.busbw.gbps" (an 8-GPU
 * node).  0 with *value and *source (static text) set; -1 when there is none.
 */
int gpu_reference_floor(const char *key, const char *metric, double *value, const char **source);

/* The model's headline dtype: bf16 where it has a bf16 peak, else fp16. */
enum gpu_dtype gpu_headline_dtype(const struct gpu_ref *ref);
/*
 * Whether the model has a tensor path for a dtype (a dense peak in its
 * row): 1 yes, 0 no, -1 unknown (no model).  The one rule behind "FP16 where
 * the model has no BF16" (gpu_headline_dtype, the acceptance policy).
 */
int gpu_has_dtype(const struct gpu_ref *ref, enum gpu_dtype d);

/*
 * The reference GEMM TFLOP/s of one GPU of the model for a dtype, with its
 * kind and source (static text).  0, or -1 when the model has no reference
 * or no peak for the dtype.
 */
int gpu_reference_gemm(const char *key, int dtype, double *value, enum gpu_ref_kind *kind, const char **source);

/*
 * The reference value of a metric for one GPU of the model:
 * gemm.<dtype>.tflops, memcpy.h2d.pinned.gbps, memcpy.d2h.pinned.gbps,
 * soak.tflops (and its .first_min/.last_min).  0 with *value, *kind and
 * *source set (kind and source may be NULL); -1 when there is none.
 */
int gpu_reference_metric(const char *key, const char *metric, double *value, enum gpu_ref_kind *kind,
			 const char **source);

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
