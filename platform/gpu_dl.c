/*
 * gpu_dl.c - cuBLASLt and NCCL loaded with dlopen on first use.
 *
 * gpuvet must start on a machine without a GPU or without the CUDA
 * libraries (every command but the GPU benches needs none of them), and
 * linking libcublasLt/libnccl directly cost ~200 MB of resident memory at
 * every start.  This file defines the cuBLASLt and NCCL entry points the
 * benches use, with the signatures of the real headers; each forwards to
 * the library opened on first call.  When a library cannot be opened the
 * call returns CUBLAS_STATUS_NOT_INITIALIZED / ncclSystemError and
 * gpu_dl_error() says why, so the bench fails with a clear reason.
 *
 * Library names: $GPUVET_CUBLASLT_LIB / $GPUVET_NCCL_LIB, else the sonames
 * the toolkit we were built with ships (found through the rpath to
 * $(CUDA)/lib64 or the system's library path).
 */
#include "platform/gpu_dl.h"

#include <cublasLt.h>
#include <dlfcn.h>
#include <nccl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CUBLASLT_SONAME "libcublasLt.so." GPU_DL_STR(CUBLAS_VER_MAJOR)
#define NCCL_SONAME "libnccl.so." GPU_DL_STR(NCCL_MAJOR)
#define GPU_DL_STR2(x) #x
#define GPU_DL_STR(x) GPU_DL_STR2(x)

struct dl_lib {
	const char *env;
	const char *soname;
	pthread_once_t once;
	void *handle;
	char error[256];
};

static struct dl_lib lib_cublaslt = { "GPUVET_CUBLASLT_LIB", CUBLASLT_SONAME, PTHREAD_ONCE_INIT, NULL, "" };
static struct dl_lib lib_nccl = { "GPUVET_NCCL_LIB", NCCL_SONAME, PTHREAD_ONCE_INIT, NULL, "" };

static void open_lib(struct dl_lib *l)
{
	const char *name = getenv(l->env);
	if (!name || !*name)
		name = l->soname;
	l->handle = dlopen(name, RTLD_NOW | RTLD_LOCAL);
	if (!l->handle) {
		const char *e = dlerror();
		snprintf(l->error, sizeof l->error, "cannot load %s: %s", name, e ? e : "unknown error");
	}
}

static void open_cublaslt(void) { open_lib(&lib_cublaslt); }
static void open_nccl(void) { open_lib(&lib_nccl); }

static void *lib_sym(struct dl_lib *l, void (*opener)(void), const char *sym)
{
	pthread_once(&l->once, opener);
	if (!l->handle)
		return NULL;
	void *p = dlsym(l->handle, sym);
	if (!p)
		snprintf(l->error, sizeof l->error, "%s has no symbol %s", l->soname, sym);
	return p;
}

int gpu_dl_cublaslt_available(void)
{
	return lib_sym(&lib_cublaslt, open_cublaslt, "cublasLtCreate") != NULL;
}

int gpu_dl_nccl_available(void)
{
	return lib_sym(&lib_nccl, open_nccl, "ncclCommInitAll") != NULL;
}

const char *gpu_dl_cublaslt_error(void)
{
	return lib_cublaslt.error[0] ? lib_cublaslt.error : NULL;
}

const char *gpu_dl_nccl_error(void)
{
	return lib_nccl.error[0] ? lib_nccl.error : NULL;
}

/*
 * One forwarding definition per entry point.  The pointer is looked up on
 * every first call of each function; a race between threads stores the
 * same value twice, which is harmless, but keep it atomic for TSan's sake.
 */
#define FWD(lib, opener, ret, name, params, args, fail)                               \
	ret name params                                                               \
	{                                                                             \
		static ret (*fn) params;                                              \
		ret (*f) params = __atomic_load_n(&fn, __ATOMIC_ACQUIRE);             \
		if (!f) {                                                             \
			f = (ret (*) params)lib_sym(&lib, opener, #name);             \
			if (!f)                                                       \
				return fail;                                          \
			__atomic_store_n(&fn, f, __ATOMIC_RELEASE);                   \
		}                                                                     \
		return f args;                                                        \
	}

#define LT(ret, name, params, args) FWD(lib_cublaslt, open_cublaslt, ret, name, params, args, CUBLAS_STATUS_NOT_INITIALIZED)
#define NC(ret, name, params, args) FWD(lib_nccl, open_nccl, ret, name, params, args, ncclSystemError)

LT(cublasStatus_t, cublasLtCreate, (cublasLtHandle_t *h), (h))
LT(cublasStatus_t, cublasLtDestroy, (cublasLtHandle_t h), (h))
LT(cublasStatus_t, cublasLtMatrixLayoutCreate,
   (cublasLtMatrixLayout_t *l, cudaDataType type, uint64_t rows, uint64_t cols, int64_t ld),
   (l, type, rows, cols, ld))
LT(cublasStatus_t, cublasLtMatrixLayoutDestroy, (cublasLtMatrixLayout_t l), (l))
LT(cublasStatus_t, cublasLtMatmulDescCreate,
   (cublasLtMatmulDesc_t *d, cublasComputeType_t ct, cudaDataType_t st), (d, ct, st))
LT(cublasStatus_t, cublasLtMatmulDescDestroy, (cublasLtMatmulDesc_t d), (d))
LT(cublasStatus_t, cublasLtMatmulDescSetAttribute,
   (cublasLtMatmulDesc_t d, cublasLtMatmulDescAttributes_t a, const void *buf, size_t n), (d, a, buf, n))
LT(cublasStatus_t, cublasLtMatmulPreferenceCreate, (cublasLtMatmulPreference_t *p), (p))
LT(cublasStatus_t, cublasLtMatmulPreferenceDestroy, (cublasLtMatmulPreference_t p), (p))
LT(cublasStatus_t, cublasLtMatmulPreferenceSetAttribute,
   (cublasLtMatmulPreference_t p, cublasLtMatmulPreferenceAttributes_t a, const void *buf, size_t n),
   (p, a, buf, n))
LT(cublasStatus_t, cublasLtMatmulAlgoGetHeuristic,
   (cublasLtHandle_t h, cublasLtMatmulDesc_t op, cublasLtMatrixLayout_t a, cublasLtMatrixLayout_t b,
    cublasLtMatrixLayout_t c, cublasLtMatrixLayout_t d, cublasLtMatmulPreference_t pref, int requested,
    cublasLtMatmulHeuristicResult_t results[], int *returned),
   (h, op, a, b, c, d, pref, requested, results, returned))
LT(cublasStatus_t, cublasLtMatmulAlgoConfigGetAttribute,
   (const cublasLtMatmulAlgo_t *algo, cublasLtMatmulAlgoConfigAttributes_t attr, void *buf, size_t n,
    size_t *written),
   (algo, attr, buf, n, written))
LT(cublasStatus_t, cublasLtMatmul,
   (cublasLtHandle_t h, cublasLtMatmulDesc_t desc, const void *alpha, const void *A, cublasLtMatrixLayout_t ad,
    const void *B, cublasLtMatrixLayout_t bd, const void *beta, const void *C, cublasLtMatrixLayout_t cd, void *D,
    cublasLtMatrixLayout_t dd, const cublasLtMatmulAlgo_t *algo, void *ws, size_t wsn, cudaStream_t stream),
   (h, desc, alpha, A, ad, B, bd, beta, C, cd, D, dd, algo, ws, wsn, stream))

static const char *lt_unloaded(void)
{
	return lib_cublaslt.error[0] ? lib_cublaslt.error : "cublasLt not loaded";
}

const char *cublasLtGetStatusString(cublasStatus_t status)
{
	static const char *(*fn)(cublasStatus_t);
	if (!fn)
		fn = (const char *(*)(cublasStatus_t))lib_sym(&lib_cublaslt, open_cublaslt, "cublasLtGetStatusString");
	return fn ? fn(status) : lt_unloaded();
}

const char *cublasLtGetStatusName(cublasStatus_t status)
{
	static const char *(*fn)(cublasStatus_t);
	if (!fn)
		fn = (const char *(*)(cublasStatus_t))lib_sym(&lib_cublaslt, open_cublaslt, "cublasLtGetStatusName");
	return fn ? fn(status) : (status == CUBLAS_STATUS_NOT_INITIALIZED ? "CUBLAS_STATUS_NOT_INITIALIZED" : "CUBLAS_STATUS_?");
}

/* nccl.h declares these two as `f()`, not `f(void)`: no prototype to match */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-prototypes"
NC(ncclResult_t, ncclGroupStart, (void), ())
NC(ncclResult_t, ncclGroupEnd, (void), ())
#pragma GCC diagnostic pop
NC(ncclResult_t, ncclGetUniqueId, (ncclUniqueId *id), (id))
NC(ncclResult_t, ncclCommInitRank, (ncclComm_t *c, int n, ncclUniqueId id, int rank), (c, n, id, rank))
NC(ncclResult_t, ncclCommInitAll, (ncclComm_t *c, int n, const int *devs), (c, n, devs))
NC(ncclResult_t, ncclCommDestroy, (ncclComm_t c), (c))
/* the cluster paths (benches/nccl_pair.cu): non-blocking communicators, point to point, abort */
NC(ncclResult_t, ncclGetVersion, (int *version), (version))
NC(ncclResult_t, ncclCommInitRankConfig, (ncclComm_t *c, int n, ncclUniqueId id, int rank, ncclConfig_t *cfg),
   (c, n, id, rank, cfg))
NC(ncclResult_t, ncclCommGetAsyncError, (ncclComm_t c, ncclResult_t *e), (c, e))
NC(ncclResult_t, ncclCommFinalize, (ncclComm_t c), (c))
NC(ncclResult_t, ncclCommAbort, (ncclComm_t c), (c))
NC(ncclResult_t, ncclSend, (const void *s, size_t count, ncclDataType_t dt, int peer, ncclComm_t c, cudaStream_t st),
   (s, count, dt, peer, c, st))
NC(ncclResult_t, ncclRecv, (void *r, size_t count, ncclDataType_t dt, int peer, ncclComm_t c, cudaStream_t st),
   (r, count, dt, peer, c, st))
NC(ncclResult_t, ncclAllReduce,
   (const void *s, void *r, size_t count, ncclDataType_t dt, ncclRedOp_t op, ncclComm_t c, cudaStream_t st),
   (s, r, count, dt, op, c, st))

const char *ncclGetErrorString(ncclResult_t result)
{
	static const char *(*fn)(ncclResult_t);
	if (!fn)
		fn = (const char *(*)(ncclResult_t))lib_sym(&lib_nccl, open_nccl, "ncclGetErrorString");
	if (fn)
		return fn(result);
	return lib_nccl.error[0] ? lib_nccl.error : "nccl not loaded";
}
