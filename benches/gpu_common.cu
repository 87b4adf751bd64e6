/*
 * gpu_common.cu - shared CUDA helpers of the GPU benches (see gpu_common.cuh).
 */
#include "benches/gpu_common.cuh"
#include "platform/gpu_dl.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <ctype.h>
#include <dlfcn.h>
#include <math.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>


void gv_gerr_set(struct gv_gerr *e, const char *fmt, ...)
{
	if (e->set)
		return;   /* the first error is the cause; keep it */
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(e->text, sizeof e->text, fmt, ap);
	va_end(ap);
	e->set = 1;
}

int gv_gpu_count(int *count, char *why, size_t whylen)
{
	int n = 0;
	cudaError_t e = cudaGetDeviceCount(&n);
	*count = 0;
	if (e != cudaSuccess) {
		/* "driver version is insufficient" also means no driver at all: say which */
		void *dl = e == cudaErrorInsufficientDriver ? dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL) : NULL;
		if (e == cudaErrorInsufficientDriver && !dl)
			snprintf(why, whylen, "no cuda device: no nvidia driver (libcuda.so.1 not found): %s",
				 cudaGetErrorName(e));
		else
			snprintf(why, whylen, "no cuda device: %s: %s", cudaGetErrorName(e), cudaGetErrorString(e));
		if (dl)
			dlclose(dl);
		return -1;
	}
	if (n <= 0) {
		snprintf(why, whylen, "no cuda device: cudaGetDeviceCount found 0 devices");
		return -1;
	}
	*count = n;
	return 0;
}

int gv_probe_gpus(struct bench_ctx *ctx, int *count)
{
	char why[256];
	if (gv_gpu_count(count, why, sizeof why)) {
		bench_reason(ctx, "%s", why);
		return BENCH_SKIP;
	}
	return BENCH_OK;
}

int gv_probe_gpus_libs(struct bench_ctx *ctx, unsigned need)
{
	int n, rc = gv_probe_gpus(ctx, &n);
	if (rc != BENCH_OK)
		return rc;
	if ((need & GV_NEED_CUBLASLT) && !gpu_dl_cublaslt_available()) {
		bench_reason(ctx, "cuBLASLt not available: %s", gpu_dl_cublaslt_error());
		return BENCH_SKIP;
	}
	if ((need & GV_NEED_NCCL) && !gpu_dl_nccl_available()) {
		bench_reason(ctx, "NCCL not available: %s", gpu_dl_nccl_error());
		return BENCH_SKIP;
	}
	return BENCH_OK;
}

/* ---- random data ---- */

__device__ static inline float gv_uniform(size_t i, uint64_t seed)
{
	/* splitmix64 of the index: independent of launch shape, reproducible */
	uint64_t z = (uint64_t)i + seed * 0x9E3779B97F4A7C15ull;
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	z ^= z >> 31;
	return (float)((double)(z >> 11) * (1.0 / 9007199254740992.0) * 2.0 - 1.0);
}

__device__ static inline void gv_store(float *p, float v) { *p = v; }
__device__ static inline void gv_store(__half *p, float v) { *p = __float2half(v); }
__device__ static inline void gv_store(__nv_bfloat16 *p, float v) { *p = __float2bfloat16(v); }
__device__ static inline void gv_store(__nv_fp8_e4m3 *p, float v) { *p = __nv_fp8_e4m3(v); }

__device__ static inline double gv_load(const float *p) { return (double)*p; }
__device__ static inline double gv_load(const __half *p) { return (double)__half2float(*p); }
__device__ static inline double gv_load(const __nv_bfloat16 *p) { return (double)__bfloat162float(*p); }
__device__ static inline double gv_load(const __nv_fp8_e4m3 *p) { return (double)(float)(*p); }

template <typename T>
__global__ void gv_fill_kernel(T *p, size_t n, uint64_t seed)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
		gv_store(p + i, gv_uniform(i, seed));
}

int gv_ab_size(enum gemm_dtype dt)
{
	switch (dt) {
	case GEMM_FP32: case GEMM_TF32: return 4;
	case GEMM_FP16: case GEMM_BF16: return 2;
	case GEMM_FP8: return 1;
	default: return 4;
	}
}

int gv_d_size(enum gemm_dtype dt)
{
	return dt == GEMM_FP32 || dt == GEMM_TF32 ? 4 : 2;
}

int gv_fill_random(enum gemm_dtype dt, void *p, size_t n, uint64_t seed, cudaStream_t s, struct gv_gerr *err)
{
	const int threads = 256, blocks = 1024;
	switch (dt) {
	case GEMM_FP32: case GEMM_TF32:
		gv_fill_kernel<<<blocks, threads, 0, s>>>((float *)p, n, seed); break;
	case GEMM_FP16:
		gv_fill_kernel<<<blocks, threads, 0, s>>>((__half *)p, n, seed); break;
	case GEMM_BF16:
		gv_fill_kernel<<<blocks, threads, 0, s>>>((__nv_bfloat16 *)p, n, seed); break;
	case GEMM_FP8:
		gv_fill_kernel<<<blocks, threads, 0, s>>>((__nv_fp8_e4m3 *)p, n, seed); break;
	default: break;
	}
	GV_CUDA(err, cudaGetLastError());
	return 0;
fail:
	return -1;
}

/* ---- the spin gate ---- */

__global__ void gv_spin_kernel(volatile int *flag, unsigned long long timeout_ns)
{
	unsigned long long t0, t;
	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
	while (!*flag) {
		asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
		if (t - t0 > timeout_ns)
			break;
	}
}

int gv_gate_init(struct gv_gate *g, struct gv_gerr *err)
{
	void *p = NULL;
	g->flag = NULL;
	GV_CUDA(err, cudaHostAlloc(&p, sizeof(int), cudaHostAllocMapped | cudaHostAllocPortable));
	g->flag = (volatile int *)p;
	*g->flag = 1;
	return 0;
fail:
	return -1;
}

void gv_gate_free(struct gv_gate *g)
{
	if (g->flag)
		cudaFreeHost((void *)g->flag);
	g->flag = NULL;
}

void gv_gate_close(struct gv_gate *g)
{
	*g->flag = 0;
	__sync_synchronize();
}

void gv_gate_open(struct gv_gate *g)
{
	__sync_synchronize();
	*g->flag = 1;
	__sync_synchronize();
}

int gv_gate_block(struct gv_gate *g, cudaStream_t s, double timeout_s, struct gv_gerr *err)
{
	void *dflag = NULL;
	GV_CUDA(err, cudaHostGetDevicePointer(&dflag, (void *)g->flag, 0));
	gv_spin_kernel<<<1, 1, 0, s>>>((volatile int *)dflag, (unsigned long long)(timeout_s * 1e9));
	GV_CUDA(err, cudaGetLastError());
	return 0;
fail:
	return -1;
}

/* ---- cuBLASLt GEMM ---- */

static cudaDataType_t ab_type(enum gemm_dtype dt)
{
	switch (dt) {
	case GEMM_FP16: return CUDA_R_16F;
	case GEMM_BF16: return CUDA_R_16BF;
	case GEMM_FP8: return CUDA_R_8F_E4M3;
	default: return CUDA_R_32F;
	}
}

static cudaDataType_t d_type(enum gemm_dtype dt)
{
	switch (dt) {
	case GEMM_FP16: return CUDA_R_16F;
	case GEMM_BF16: case GEMM_FP8: return CUDA_R_16BF;
	default: return CUDA_R_32F;
	}
}

int gv_gemm_open(struct gv_gemm *g, int dev, enum gemm_dtype dt, struct gv_gerr *err)
{
	memset(g, 0, sizeof *g);
	g->dev = dev;
	g->dt = dt;
	g->alpha = 1.0f;
	g->beta = 0.0f;
	GV_CUDA(err, cudaSetDevice(dev));
	GV_LT(err, cublasLtCreate(&g->lt));
	GV_CUDA(err, cudaStreamCreateWithFlags(&g->stream, cudaStreamNonBlocking));
	GV_CUDA(err, cudaMalloc(&g->ws, GV_GEMM_WORKSPACE));
	for (int i = 0; i < 2 * GV_GEMM_MAX_REPS; i++) {
		GV_CUDA(err, cudaEventCreate(&g->ev[i]));
		g->events_made = i + 1;
	}
	return 0;
fail:
	return -1;
}

static void gemm_free_desc(struct gv_gemm *g)
{
	if (g->la) cublasLtMatrixLayoutDestroy(g->la);
	if (g->lb) cublasLtMatrixLayoutDestroy(g->lb);
	if (g->ld) cublasLtMatrixLayoutDestroy(g->ld);
	if (g->op) cublasLtMatmulDescDestroy(g->op);
	g->la = g->lb = g->ld = NULL;
	g->op = NULL;
	g->have_algo = 0;
}

void gv_gemm_close(struct gv_gemm *g)
{
	if (cudaSetDevice(g->dev) != cudaSuccess)
		return;
	gemm_free_desc(g);
	for (int i = 0; i < g->events_made; i++)
		cudaEventDestroy(g->ev[i]);
	cudaFree(g->A);
	cudaFree(g->B);
	cudaFree(g->D);
	cudaFree(g->ws);
	if (g->stream)
		cudaStreamDestroy(g->stream);
	if (g->lt)
		cublasLtDestroy(g->lt);
	memset(g, 0, sizeof *g);
}

/* Grows one buffer to at least n elements of size es; new space gets random data. */
static int grow(struct gv_gemm *g, void **p, size_t *cap, size_t n, int es, enum gemm_dtype fill_dt,
		uint64_t seed, struct gv_gerr *err)
{
	if (*cap >= n)
		return 0;
	cudaFree(*p);
	*p = NULL;
	*cap = 0;
	GV_CUDA(err, cudaMalloc(p, n * (size_t)es));
	*cap = n;
	if (fill_dt != GEMM_DTYPE_COUNT) {
		if (gv_fill_random(fill_dt, *p, n, seed, g->stream, err))
			return -1;
	} else {
		GV_CUDA(err, cudaMemsetAsync(*p, 0, n * (size_t)es, g->stream));
	}
	return 0;
fail:
	return -1;
}

static int gemm_time_one(struct gv_gemm *g, int iters, double *ms, struct gv_gerr *err)
{
	float t = 0;
	GV_CUDA(err, cudaEventRecord(g->ev[0], g->stream));
	for (int i = 0; i < iters; i++)
		if (gv_gemm_enqueue(g, err))
			return -1;
	GV_CUDA(err, cudaEventRecord(g->ev[1], g->stream));
	GV_CUDA(err, cudaEventSynchronize(g->ev[1]));
	GV_CUDA(err, cudaEventElapsedTime(&t, g->ev[0], g->ev[1]));
	*ms = t / iters;
	return 0;
fail:
	return -1;
}

/* The operation and the three layouts of the shape (FP8: TN with fast accumulation). */
static int gemm_make_desc(struct gv_gemm *g, struct gemm_shape sh, struct gv_gerr *err)
{
	cublasComputeType_t ct = g->dt == GEMM_TF32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
	cublasOperation_t ta = g->dt == GEMM_FP8 ? CUBLAS_OP_T : CUBLAS_OP_N, tb = CUBLAS_OP_N;
	cudaDataType_t scale = CUDA_R_32F;
	/*
	 * Column-major as cuBLAS: D (m x n) = op(A) (m x k) * B (k x n).  NN as
	 * torch.matmul issues for row-major tensors; FP8 needs TN (A stored k x m).
	 */
	GV_LT(err, cublasLtMatmulDescCreate(&g->op, ct, scale));
	GV_LT(err, cublasLtMatmulDescSetAttribute(g->op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
	GV_LT(err, cublasLtMatmulDescSetAttribute(g->op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb));
	if (g->dt == GEMM_FP8) {
		int8_t fast = 1;   /* as Transformer Engine's forward GEMMs and torch._scaled_mm(use_fast_accum=True) */
		GV_LT(err, cublasLtMatmulDescSetAttribute(g->op, CUBLASLT_MATMUL_DESC_FAST_ACCUM, &fast, sizeof fast));
		GV_LT(err, cublasLtMatrixLayoutCreate(&g->la, ab_type(g->dt), sh.k, sh.m, sh.k));
	} else {
		GV_LT(err, cublasLtMatrixLayoutCreate(&g->la, ab_type(g->dt), sh.m, sh.k, sh.m));
	}
	GV_LT(err, cublasLtMatrixLayoutCreate(&g->lb, ab_type(g->dt), sh.k, sh.n, sh.k));
	GV_LT(err, cublasLtMatrixLayoutCreate(&g->ld, d_type(g->dt), sh.m, sh.n, sh.m));
	return 0;
fail:
	return -1;
}

int gv_gemm_set_shape(struct gv_gemm *g, struct gemm_shape sh, int top, struct gv_gerr *err)
{
	cublasLtMatmulPreference_t pref = NULL;
	cublasLtMatmulHeuristicResult_t res[16];
	int nres = 0, best_i = -1, unsupported = 0;
	size_t wsz = GV_GEMM_WORKSPACE;
	double best = 1e30;

	if (top > 16)
		top = 16;
	GV_CUDA(err, cudaSetDevice(g->dev));
	gemm_free_desc(g);
	g->sh = sh;
	if (grow(g, &g->A, &g->a_cap, (size_t)sh.m * sh.k, gv_ab_size(g->dt), g->dt, 0x1234 + g->dev, err) ||
	    grow(g, &g->B, &g->b_cap, (size_t)sh.k * sh.n, gv_ab_size(g->dt), g->dt, 0x5678 + g->dev, err) ||
	    grow(g, &g->D, &g->d_cap, (size_t)sh.m * sh.n, gv_d_size(g->dt), GEMM_DTYPE_COUNT, 0, err))
		goto fail;

	if (gemm_make_desc(g, sh, err))
		goto fail;

	GV_LT(err, cublasLtMatmulPreferenceCreate(&pref));
	GV_LT(err, cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &wsz, sizeof wsz));
	{
		cublasStatus_t hs = cublasLtMatmulAlgoGetHeuristic(g->lt, g->op, g->la, g->lb, g->ld, g->ld, pref, top,
								   res, &nres);
		if (hs == CUBLAS_STATUS_NOT_SUPPORTED || (hs == CUBLAS_STATUS_SUCCESS && nres == 0)) {
			gv_gerr_set(err, "cublasLt has no %s algorithm for %dx%dx%d on this gpu",
				    gemm_dtype_name(g->dt), sh.m, sh.n, sh.k);
			unsupported = 1;
			goto fail;
		}
		GV_LT(err, hs);
	}
	/* Try the heuristic's candidates (as the cuBLASLt auto-tuning sample) and keep the fastest. */
	g->algos_tried = 0;
	for (int i = 0; i < nres; i++) {
		if (res[i].state != CUBLAS_STATUS_SUCCESS)
			continue;
		g->algo = res[i].algo;
		g->have_algo = 1;
		double ms = 0;
		struct gv_gerr terr;
		memset(&terr, 0, sizeof terr);
		if (gv_gemm_enqueue(g, &terr)) {
			/* a candidate cuBLASLt refuses at launch is skipped; a CUDA error is real */
			if (!strncmp(terr.text, "CUBLAS_STATUS_", 14))
				continue;
			if (!err->set)
				*err = terr;
			goto fail;
		}
		if (gemm_time_one(g, 2, &ms, err))
			goto fail;
		g->algos_tried++;
		if (ms < best) {
			best = ms;
			best_i = i;
		}
		if (ms > 200)   /* a slow GEMM: the heuristic's order is good enough */
			break;
	}
	if (best_i < 0) {
		gv_gerr_set(err, "cublasLt returned no usable %s algorithm for %dx%dx%d", gemm_dtype_name(g->dt),
			    sh.m, sh.n, sh.k);
		unsupported = 1;
		goto fail;
	}
	g->algo = res[best_i].algo;
	g->have_algo = 1;
	{
		size_t wr = 0;
		int id = -1;
		if (cublasLtMatmulAlgoConfigGetAttribute(&g->algo, CUBLASLT_ALGO_CONFIG_ID, &id, sizeof id, &wr) ==
		    CUBLAS_STATUS_SUCCESS)
			g->algo_id = id;
	}
	cublasLtMatmulPreferenceDestroy(pref);
	return 0;
fail:
	if (pref)
		cublasLtMatmulPreferenceDestroy(pref);
	g->have_algo = 0;
	return unsupported ? 1 : -1;
}

int gv_gemm_enqueue(struct gv_gemm *g, struct gv_gerr *err)
{
	GV_LT(err, cublasLtMatmul(g->lt, g->op, &g->alpha, g->A, g->la, g->B, g->lb, &g->beta, g->D, g->ld, g->D,
				  g->ld, g->have_algo ? &g->algo : NULL, g->ws, GV_GEMM_WORKSPACE, g->stream));
	return 0;
fail:
	return -1;
}

int gv_gemm_time(struct gv_gemm **g, int n, int warmup, int reps, struct gv_gate *gate, double *ms,
		 struct gv_gerr *err)
{
	if (reps > GV_GEMM_MAX_REPS)
		reps = GV_GEMM_MAX_REPS;
	for (int d = 0; d < n; d++) {
		GV_CUDA(err, cudaSetDevice(g[d]->dev));
		for (int w = 0; w < warmup; w++)
			if (gv_gemm_enqueue(g[d], err))
				return -1;
	}
	for (int d = 0; d < n; d++) {
		GV_CUDA(err, cudaSetDevice(g[d]->dev));
		GV_CUDA(err, cudaStreamSynchronize(g[d]->stream));
	}
	gv_gate_close(gate);
	{
		double t0 = bench_now();
		for (int d = 0; d < n; d++) {
			GV_CUDA(err, cudaSetDevice(g[d]->dev));
			if (gv_gate_block(gate, g[d]->stream, 30.0, err))
				goto fail_open;
			for (int r = 0; r < reps; r++) {
				GV_CUDA(err, cudaEventRecord(g[d]->ev[2 * r], g[d]->stream));
				if (gv_gemm_enqueue(g[d], err))
					goto fail_open;
				GV_CUDA(err, cudaEventRecord(g[d]->ev[2 * r + 1], g[d]->stream));
			}
		}
		gv_gate_open(gate);
		if (bench_now() - t0 > 20.0) {
			gv_gerr_set(err, "enqueue of %d gemms took %.1f s: the spin gate may have timed out", reps * n,
				    bench_now() - t0);
			return -1;
		}
	}
	for (int d = 0; d < n; d++) {
		GV_CUDA(err, cudaSetDevice(g[d]->dev));
		GV_CUDA(err, cudaStreamSynchronize(g[d]->stream));
		for (int r = 0; r < reps; r++) {
			float t = 0;
			GV_CUDA(err, cudaEventElapsedTime(&t, g[d]->ev[2 * r], g[d]->ev[2 * r + 1]));
			ms[d * reps + r] = t;
		}
	}
	return 0;
fail:
	return -1;
fail_open:
	gv_gate_open(gate);
	return -1;
}

/* ---- steady state ---- */

struct steady_ring {
	int head, inflight;   /* oldest slot in flight, how many */
	int stopped;          /* no new batch after the window */
};

/* Batch slot k: events ev[2k], ev[2k+1] around s->batch GEMMs; ev[2 GV_STEADY_DEPTH] is the origin. */
static int steady_enqueue(struct gv_steady_gpu *s, int k, struct gv_gerr *err)
{
	struct gv_gemm *g = s->g;
	GV_CUDA(err, cudaEventRecord(g->ev[2 * k], g->stream));
	for (int i = 0; i < s->batch; i++)
		if (gv_gemm_enqueue(g, err))
			return -1;
	GV_CUDA(err, cudaEventRecord(g->ev[2 * k + 1], g->stream));
	return 0;
fail:
	return -1;
}

/* Takes every finished batch of one GPU into its trace and enqueues the next unless stopped. */
static int steady_collect(struct gv_steady_gpu *s, struct steady_ring *r, struct gv_gerr *err)
{
	struct gv_gemm *g = s->g;
	double flop = gemm_flops(g->sh.m, g->sh.n, g->sh.k) * s->batch;
	GV_CUDA(err, cudaSetDevice(g->dev));
	while (r->inflight > 0) {
		int k = r->head;
		cudaError_t q = cudaEventQuery(g->ev[2 * k + 1]);
		if (q == cudaErrorNotReady)
			break;
		GV_CUDA(err, q);
		float ms = 0, end_ms = 0;
		GV_CUDA(err, cudaEventElapsedTime(&ms, g->ev[2 * k], g->ev[2 * k + 1]));
		GV_CUDA(err, cudaEventElapsedTime(&end_ms, g->ev[2 * GV_STEADY_DEPTH], g->ev[2 * k + 1]));
		if (ms > 0)
			steady_trace_add_batch(&s->tr, end_ms / 1e3, flop / (ms / 1e3) / 1e12);
		r->head = (k + 1) % GV_STEADY_DEPTH;
		r->inflight--;
		if (!r->stopped) {
			if (steady_enqueue(s, k, err))
				return -1;
			r->inflight++;
		}
	}
	return 0;
fail:
	return -1;
}

/* GEMMs per batch so that one batch takes about batch_s (timed on two GEMMs). */
static int steady_batch_size(struct gv_gemm *g, double batch_s, struct gv_gerr *err)
{
	double ms = 0;
	if (gemm_time_one(g, 2, &ms, err))
		return -1;
	double b = ms > 0 ? batch_s * 1e3 / ms : 1;
	return b < 1 ? 1 : b > 1000 ? 1000 : (int)(b + 0.5);
}

/* Starts every GPU: origin event, then GV_STEADY_DEPTH batches. */
static int steady_start(struct gv_steady_gpu *s, int n, struct steady_ring *r, const struct steady_cfg *cfg,
			struct gv_gerr *err)
{
	for (int d = 0; d < n; d++) {
		memset(&s[d].tr, 0, sizeof s[d].tr);
		GV_CUDA(err, cudaSetDevice(s[d].g->dev));
		if ((s[d].batch = steady_batch_size(s[d].g, cfg->batch_s, err)) < 0)
			return -1;
		GV_CUDA(err, cudaStreamSynchronize(s[d].g->stream));
	}
	for (int d = 0; d < n; d++) {
		GV_CUDA(err, cudaSetDevice(s[d].g->dev));
		GV_CUDA(err, cudaEventRecord(s[d].g->ev[2 * GV_STEADY_DEPTH], s[d].g->stream));
		for (int k = 0; k < GV_STEADY_DEPTH; k++)
			if (steady_enqueue(&s[d], k, err))
				return -1;
		r[d].head = 0;
		r[d].inflight = GV_STEADY_DEPTH;
		r[d].stopped = 0;
	}
	return 0;
fail:
	return -1;
}

int gv_gemm_steady(struct gv_steady_gpu *s, int n, const struct gv_nvml *nv, const struct steady_cfg *cfg,
		   struct gv_gerr *err)
{
	struct steady_ring *r = (struct steady_ring *)gv_calloc((size_t)n, sizeof *r);
	enum steady_verdict *how = (enum steady_verdict *)gv_calloc((size_t)n, sizeof *how);
	double t0, last_nv = -1, settle = -1, end = -1, limit = cfg->max_warm_s + cfg->window_s + 30;
	int rc = -1, busy = 1;

	if (steady_start(s, n, r, cfg, err))
		goto out;
	t0 = bench_now();
	while (busy) {
		double now = bench_now() - t0;
		busy = 0;
		for (int d = 0; d < n; d++) {
			if (steady_collect(&s[d], &r[d], err))
				goto out;
			busy |= r[d].inflight > 0;
		}
		if (nv && now - last_nv >= STEADY_NV_PERIOD_S) {
			for (int d = 0; d < n; d++)
				if (s[d].have_nv) {
					struct gpu_reading v;
					gv_nvml_steady_read(nv, s[d].nv, now, &v);
					steady_trace_add_nv(&s[d].tr, &v);
				}
			last_nv = now;
		}
		if (settle < 0) {
			int all = 1;
			for (int d = 0; d < n; d++) {
				if (how[d] == STEADY_WARMING)
					how[d] = steady_settled(&s[d].tr, cfg, now);
				all &= how[d] != STEADY_WARMING;
			}
			if (all) {
				settle = now;
				end = now + cfg->window_s;
			}
		} else if (now >= end) {
			for (int d = 0; d < n; d++)
				r[d].stopped = 1;
		}
		if (now > limit) {
			gv_gerr_set(err, "gpu %d: a batch of %d gemms did not finish within %.0f s", s[0].g->dev,
				    s[0].batch, limit);
			goto out;
		}
		if (busy)
			usleep(500);
	}
	for (int d = 0; d < n; d++) {
		s[d].sum.how = how[d];
		steady_summarize(&s[d].tr, settle, end, &s[d].sum);
	}
	rc = 0;
out:
	if (rc)
		for (int d = 0; d < n; d++) {
			cudaSetDevice(s[d].g->dev);
			cudaStreamSynchronize(s[d].g->stream);
		}
	free(r);
	free(how);
	return rc;
}

template <typename TA, typename TD>
__global__ void gv_ref_kernel(const TA *A, const TA *B, const TD *D, int m, int n, int k, int a_trans,
			      const int *idx, int ns, double *out)
{
	int s = blockIdx.x * blockDim.x + threadIdx.x;
	if (s >= ns)
		return;
	int e = idx ? idx[s] : s;
	int i = e % m, j = e / m;
	double acc = 0, mag = 0;
	for (int l = 0; l < k; l++) {
		double a = a_trans ? gv_load(A + (size_t)i * k + l) : gv_load(A + (size_t)l * m + i);
		double b = gv_load(B + (size_t)j * k + l);
		acc += a * b;
		mag += fabs(a * b);
	}
	double d = gv_load(D + (size_t)j * m + i);
	double r = fabs(d - acc) / (mag > 0 ? mag : 1.0);
	out[s] = isfinite(d) ? r : INFINITY;
}

int gv_gemm_check(struct gv_gemm *g, int samples, double *max_err, struct gv_gerr *err)
{
	long total = (long)g->sh.m * g->sh.n;
	int ns = samples <= 0 || samples >= total ? (int)(total < 1 << 24 ? total : 1 << 24) : samples;
	int *hidx = NULL, *didx = NULL;
	double *dout = NULL, *hout = NULL;
	int rc = -1;
	const int th = 128, bl = (ns + th - 1) / th;
	int at = g->dt == GEMM_FP8;

	*max_err = INFINITY;
	GV_CUDA(err, cudaSetDevice(g->dev));
	GV_CUDA(err, cudaStreamSynchronize(g->stream));
	hout = (double *)gv_malloc(sizeof *hout * (size_t)ns);
	if (ns < total) {
		/* spread the samples over the whole matrix, corners included */
		hidx = (int *)gv_malloc(sizeof *hidx * (size_t)ns);
		uint64_t x = 0x2545F4914F6CDD1Dull;
		for (int s = 0; s < ns; s++) {
			x ^= x << 13; x ^= x >> 7; x ^= x << 17;
			hidx[s] = s == 0 ? 0 : s == 1 ? (int)(total - 1) : (int)(x % (uint64_t)total);
		}
		GV_CUDA(err, cudaMalloc(&didx, sizeof *didx * (size_t)ns));
		GV_CUDA(err, cudaMemcpy(didx, hidx, sizeof *didx * (size_t)ns, cudaMemcpyHostToDevice));
	}
	GV_CUDA(err, cudaMalloc(&dout, sizeof *dout * (size_t)ns));
	switch (g->dt) {
	case GEMM_FP32: case GEMM_TF32:
		gv_ref_kernel<<<bl, th, 0, g->stream>>>((const float *)g->A, (const float *)g->B, (const float *)g->D,
							 g->sh.m, g->sh.n, g->sh.k, at, didx, ns, dout);
		break;
	case GEMM_FP16:
		gv_ref_kernel<<<bl, th, 0, g->stream>>>((const __half *)g->A, (const __half *)g->B,
							 (const __half *)g->D, g->sh.m, g->sh.n, g->sh.k, at, didx, ns,
							 dout);
		break;
	case GEMM_BF16:
		gv_ref_kernel<<<bl, th, 0, g->stream>>>((const __nv_bfloat16 *)g->A, (const __nv_bfloat16 *)g->B,
							 (const __nv_bfloat16 *)g->D, g->sh.m, g->sh.n, g->sh.k, at, didx,
							 ns, dout);
		break;
	case GEMM_FP8:
		gv_ref_kernel<<<bl, th, 0, g->stream>>>((const __nv_fp8_e4m3 *)g->A, (const __nv_fp8_e4m3 *)g->B,
							 (const __nv_bfloat16 *)g->D, g->sh.m, g->sh.n, g->sh.k, at, didx,
							 ns, dout);
		break;
	default:
		break;
	}
	GV_CUDA(err, cudaGetLastError());
	GV_CUDA(err, cudaMemcpyAsync(hout, dout, sizeof *dout * (size_t)ns, cudaMemcpyDeviceToHost, g->stream));
	GV_CUDA(err, cudaStreamSynchronize(g->stream));
	{
		double mx = 0;
		for (int s = 0; s < ns; s++)
			if (!(hout[s] <= mx))   /* NaN counts as the worst */
				mx = isnan(hout[s]) ? INFINITY : hout[s];
		*max_err = mx;
	}
	rc = 0;
fail:
	cudaFree(didx);
	cudaFree(dout);
	free(hidx);
	free(hout);
	return rc;
}

/* ---- host side ---- */

int gv_dev_numa_node(int dev)
{
	char bus[32], path[128];
	if (cudaDeviceGetPCIBusId(bus, sizeof bus, dev) != cudaSuccess)
		return -1;
	for (char *p = bus; *p; p++)
		*p = (char)tolower((unsigned char)*p);
	snprintf(path, sizeof path, "/sys/bus/pci/devices/%s/numa_node", bus);
	char *txt = gv_read_file(path, NULL);
	if (!txt)
		return -1;
	long node = -1;
	char *nl = strchr(txt, '\n');
	if (nl)
		*nl = '\0';
	if (gv_parse_long(txt, -1, 4095, &node))
		node = -1;
	free(txt);
	return (int)node;
}

#define GV_MPOL_DEFAULT 0
#define GV_MPOL_PREFERRED 1

int gv_numa_bind(int node, struct gv_numa_saved *saved)
{
	char path[96];
	cpu_set_t old, want;
	saved->bound = 0;
	if (node < 0 || node >= 1024)
		return -1;
	snprintf(path, sizeof path, "/sys/devices/system/node/node%d/cpulist", node);
	char *txt = gv_read_file(path, NULL);
	if (!txt)
		return -1;
	unsigned long long mask[16] = { 0 };
	int ncpu = cpulist_parse(txt, mask, 16);
	free(txt);
	if (ncpu <= 0 || sched_getaffinity(0, sizeof old, &old))
		return -1;
	CPU_ZERO(&want);
	for (int c = 0; c < 1024; c++)
		if ((mask[c / 64] >> (c % 64)) & 1)
			CPU_SET(c, &want);
	CPU_AND(&want, &want, &old);   /* stay inside what we were given (cgroups, taskset) */
	if (CPU_COUNT(&want) == 0 || sched_setaffinity(0, sizeof want, &want))
		return -1;
	memcpy(saved->cpus, &old, sizeof saved->cpus < sizeof old ? sizeof saved->cpus : sizeof old);
	saved->bound = 1;
	/* libnuma is not linked: the system call itself */
	unsigned long nodemask[16] = { 0 };
	nodemask[node / (8 * sizeof(unsigned long))] |= 1ul << (node % (8 * sizeof(unsigned long)));
	if (syscall(SYS_set_mempolicy, GV_MPOL_PREFERRED, nodemask, (unsigned long)(sizeof nodemask * 8)) != 0)
		return 0;   /* CPU binding alone still helps; the caller logs nothing more */
	return 0;
}

void gv_numa_unbind(struct gv_numa_saved *saved)
{
	if (!saved->bound)
		return;
	cpu_set_t old;
	CPU_ZERO(&old);
	memcpy(&old, saved->cpus, sizeof saved->cpus < sizeof old ? sizeof saved->cpus : sizeof old);
	sched_setaffinity(0, sizeof old, &old);
	syscall(SYS_set_mempolicy, GV_MPOL_DEFAULT, NULL, 0ul);
	saved->bound = 0;
}

int gv_nvml_dev_for_cuda(const struct gv_nvml *n, int dev, nvmlDevice_t *out)
{
	char bus[32];
	unsigned count = 0;
	if (!n || !n->DeviceGetCount || !n->DeviceGetHandleByIndex || !n->DeviceGetPciInfo)
		return -1;
	if (cudaDeviceGetPCIBusId(bus, sizeof bus, dev) != cudaSuccess)
		return -1;
	if (n->DeviceGetCount(&count) != NVML_SUCCESS)
		return -1;
	for (unsigned i = 0; i < count; i++) {
		nvmlDevice_t h;
		nvmlPciInfo_t pci;
		if (n->DeviceGetHandleByIndex(i, &h) != NVML_SUCCESS || n->DeviceGetPciInfo(h, &pci) != NVML_SUCCESS)
			continue;
		if (pci_busid_equal(pci.busId, bus) || pci_busid_equal(pci.busIdLegacy, bus)) {
			*out = h;
			return 0;
		}
	}
	return -1;
}
