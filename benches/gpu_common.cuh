/*
 * gpu_common.cuh - what the CUDA benches share: error checks in the
 * nccl-tests style (name of the error, file:line, returned upward), the
 * probe that skips without a GPU, random fills, the stream-blocking spin
 * kernel that keeps enqueue overhead out of timed regions (as nvbandwidth
 * does), a cuBLASLt GEMM with heuristic algorithm search and an FP64
 * reference check, NVML handles by PCI address and NUMA placement.
 *
 * Errors never print: the first one is written into a struct gv_gerr and
 * the bench turns it into bench_reason() + BENCH_FAIL.  That works from
 * worker threads too (soak).
 */
#ifndef GPUVET_GPU_COMMON_CUH
#define GPUVET_GPU_COMMON_CUH

#include <cuda_runtime.h>
#include <cublasLt.h>
#include <stddef.h>
#include <stdint.h>

#include "benches/bench.h"
#include "benches/gpu_math.h"
#include "platform/gv_nvml.h"
#include "benches/steady.h"

/* common/util.h (gv_malloc, gv_parse_long, gv_read_file) has no C++ guards of its own */
extern "C" {
#include "common/util.h"
}

struct gv_gerr {
	char text[384];
	int set;
};

void gv_gerr_set(struct gv_gerr *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Each jumps to the label `fail` of the enclosing function after recording the error. */
#define GV_CUDA(err, call) do { cudaError_t e_ = (call); if (e_ != cudaSuccess) { \
	gv_gerr_set(err, "%s: %s at %s:%d", cudaGetErrorName(e_), cudaGetErrorString(e_), __FILE__, __LINE__); \
	goto fail; } } while (0)
#define GV_LT(err, call) do { cublasStatus_t s_ = (call); if (s_ != CUBLAS_STATUS_SUCCESS) { \
	gv_gerr_set(err, "%s: %s at %s:%d", cublasLtGetStatusName(s_), cublasLtGetStatusString(s_), __FILE__, __LINE__); \
	goto fail; } } while (0)

/*
 * BENCH_OK when at least one CUDA device is visible, else BENCH_SKIP with
 * "no cuda device: cudaErrorNoDevice: no CUDA-capable device is detected".
 * *count gets the device count.
 */
int gv_probe_gpus(struct bench_ctx *ctx, int *count);
/* The same without a bench: 0 with *count, or -1 with that reason in why. */
int gv_gpu_count(int *count, char *why, size_t whylen);
/* The libraries a bench needs (opened on first use, platform/gpu_dl.c). */
enum { GV_NEED_CUBLASLT = 1, GV_NEED_NCCL = 2 };
/* gv_probe_gpus, then BENCH_SKIP with the loader's reason when a needed library cannot be opened. */
int gv_probe_gpus_libs(struct bench_ctx *ctx, unsigned need);

/* Uniform random values in [-1, 1) of the dtype's A/B type (seeded). */
int gv_fill_random(enum gemm_dtype dt, void *p, size_t n, uint64_t seed, cudaStream_t s, struct gv_gerr *err);
/* Bytes of one A/B element and of one D element. */
int gv_ab_size(enum gemm_dtype dt);
int gv_d_size(enum gemm_dtype dt);

/*
 * The spin gate: a host-mapped flag and a kernel that waits on it, so a
 * stream can be held while a batch of work is enqueued and then released
 * at once (nvbandwidth's trick).  The kernel gives up after timeout_s
 * whatever happens, so a dead host cannot hang the GPU.
 */
struct gv_gate {
	volatile int *flag;   /* cudaHostAlloc, mapped, portable */
};
int gv_gate_init(struct gv_gate *g, struct gv_gerr *err);
void gv_gate_free(struct gv_gate *g);
/* Closes the gate (host side) before the enqueue. */
void gv_gate_close(struct gv_gate *g);
/* Enqueues the waiting kernel on s (current device). */
int gv_gate_block(struct gv_gate *g, cudaStream_t s, double timeout_s, struct gv_gerr *err);
void gv_gate_open(struct gv_gate *g);

/* ---- cuBLASLt GEMM ---- */

#define GV_GEMM_MAX_REPS 64
#define GV_GEMM_WORKSPACE (64u << 20)

struct gv_gemm {
	int dev;
	enum gemm_dtype dt;
	cublasLtHandle_t lt;
	cudaStream_t stream;
	void *ws;
	/* buffers, grown to the largest shape asked for */
	void *A, *B, *D;
	size_t a_cap, b_cap, d_cap;   /* elements */
	/* the current shape */
	struct gemm_shape sh;
	cublasLtMatmulDesc_t op;
	cublasLtMatrixLayout_t la, lb, ld;
	cublasLtMatmulAlgo_t algo;
	int have_algo, algos_tried, algo_id;
	float alpha, beta;
	cudaEvent_t ev[2 * GV_GEMM_MAX_REPS];
	int events_made;
};

/* Handle, stream, workspace and events on device dev. */
int gv_gemm_open(struct gv_gemm *g, int dev, enum gemm_dtype dt, struct gv_gerr *err);
void gv_gemm_close(struct gv_gemm *g);
/*
 * Sets the shape (buffers grown and filled with random data as needed,
 * descriptors made) and picks the fastest of the heuristic's top `top`
 * algorithms by timing each.  Returns 0, -1 on error, 1 when cuBLASLt has
 * no algorithm for this dtype/shape on this GPU (err says so).
 */
int gv_gemm_set_shape(struct gv_gemm *g, struct gemm_shape sh, int top, struct gv_gerr *err);
/* One D = A B on g->stream (current device must be g->dev). */
int gv_gemm_enqueue(struct gv_gemm *g, struct gv_gerr *err);
/*
 * Times `reps` GEMMs on every g[i] at once: warm-up, then, behind a
 * closed gate on every device, reps GEMMs each between two events; the
 * gate opens when all is enqueued.  ms[i * reps + r] gets the times.
 */
int gv_gemm_time(struct gv_gemm **g, int n, int warmup, int reps, struct gv_gate *gate, double *ms,
		 struct gv_gerr *err);
/*
 * Checks D of the last GEMM against an FP64 reference of the same inputs
 * on `samples` elements (all when samples <= 0 or >= m n): max over them of
 * |D - ref| / sum_l |A_il B_lj| into *max_err.
 */
int gv_gemm_check(struct gv_gemm *g, int samples, double *max_err, struct gv_gerr *err);

/* ---- steady state (benches/steady.h) ---- */

#define GV_STEADY_DEPTH 6   /* batches in flight per GPU: the GPU never waits for the host */

struct gv_steady_gpu {
	struct gv_gemm *g;                 /* shape and algorithm already set */
	nvmlDevice_t nv;
	int have_nv;
	int batch;                         /* GEMMs per timed batch */
	struct steady_trace tr;            /* t: seconds since this GPU's first batch began */
	struct steady_summary sum;         /* the window: median TFLOP/s and what the GPU did */
};

/*
 * Runs timed batches of GEMMs back to back on every s[i].g at once, with
 * GV_STEADY_DEPTH batches in flight per GPU and NVML read every
 * STEADY_NV_PERIOD_S (nv may be NULL), until every GPU has settled
 * (steady_settled) or cfg->max_warm_s passed, then for cfg->window_s more.
 * s[i].sum is GPU i's window; s[i].tr is kept for the caller (free it with
 * steady_trace_free).
 */
int gv_gemm_steady(struct gv_steady_gpu *s, int n, const struct gv_nvml *nv, const struct steady_cfg *cfg,
		   struct gv_gerr *err);

/* ---- host side ---- */

/* NUMA node of the device from sysfs, -1 when unknown. */
int gv_dev_numa_node(int dev);
/* Runs this thread on node's CPUs and prefers node's memory; undone by gv_numa_unbind. */
struct gv_numa_saved {
	int bound;
	unsigned long long cpus[16];
};
int gv_numa_bind(int node, struct gv_numa_saved *saved);
void gv_numa_unbind(struct gv_numa_saved *saved);

/* The NVML handle of CUDA device dev (matched by PCI address); 0 or -1. */
int gv_nvml_dev_for_cuda(const struct gv_nvml *n, int dev, nvmlDevice_t *out);

#endif
