/*
 * allreduce_int.cuh - the NCCL timing loop that benches/allreduce.cu (the
 * single-node bench) and benches/nccl_pair.cu (the cluster's pair
 * send/recv and all-reduce, #49) share: one owner for how NCCL operations
 * are issued, waited for, timed and torn down.
 *
 * Every wait is bounded when a->deadline is set (bench_now() seconds): a
 * stream is polled with cudaStreamQuery and every communicator with
 * ncclCommGetAsyncError, as nccl-tests' testStreamSynchronize does, and on
 * expiry the wait fails with a->timed_out set, so the caller's ar_free()
 * calls ncclCommAbort instead of a teardown that could wait for a peer that
 * is gone.  Without a deadline (the single-node bench, blocking
 * communicators from ncclCommInitAll) the harness's bench deadline bounds
 * the process instead.
 */
#ifndef GPUVET_ALLREDUCE_INT_CUH
#define GPUVET_ALLREDUCE_INT_CUH

#include "benches/gpu_common.cuh"

#include <limits.h>
#include <nccl.h>

#define AR_MAX_GPUS 64

const char *ar_nccl_name(ncclResult_t r);

#define GV_NCCL(err, call) do { ncclResult_t r_ = (call); if (r_ != ncclSuccess) { \
	gv_gerr_set(err, "%s: %s at %s:%d", ar_nccl_name(r_), ncclGetErrorString(r_), __FILE__, __LINE__); \
	goto fail; } } while (0)
/* The same for calls on non-blocking communicators, which may answer ncclInProgress. */
#define GV_NCCL_NB(err, call) do { ncclResult_t r_ = (call); if (r_ != ncclSuccess && r_ != ncclInProgress) { \
	gv_gerr_set(err, "%s: %s at %s:%d", ar_nccl_name(r_), ncclGetErrorString(r_), __FILE__, __LINE__); \
	goto fail; } } while (0)

/* What ar_time() issues on every local GPU, once per iteration. */
enum ar_op { AR_OP_ALLREDUCE = 0, AR_OP_SEND, AR_OP_RECV };

struct ar {
	int nlocal;            /* GPUs driven by this process */
	int nranks, rank;      /* ranks in the communicator; this process's first rank */
	int devs[AR_MAX_GPUS];
	ncclComm_t comms[AR_MAX_GPUS];
	cudaStream_t streams[AR_MAX_GPUS];
	float *send[AR_MAX_GPUS], *recv[AR_MAX_GPUS];
	double *dval[AR_MAX_GPUS];     /* one double per GPU for ar_reduce_double */
	double *hval;                  /* pinned host copies of them (nlocal) */
	size_t max;                    /* bytes of each send and receive buffer */
	double deadline;               /* bench_now() past which every wait fails; 0: none */
	int timed_out;                 /* a wait expired: ar_free aborts the communicators */
	int nonblocking;               /* communicators made with config.blocking = 0 */
	char debug_path[PATH_MAX];     /* NCCL's debug file, "" when the user routes it */
	char transport[512];           /* nccl_transport_json() of it, after the sweep */
	char transport_sum[128];
};

/* Until no communicator is in progress (non-blocking init or group end); -1 on an error or the deadline. */
int ar_wait_comms(struct ar *a, struct gv_gerr *err);
/* Until every local stream is idle, watching the communicators' async errors; -1 on one or the deadline. */
int ar_sync(struct ar *a, struct gv_gerr *err);
/* `iters` operations of `count` floats (peer: the other rank for send/recv), timed on the host
 * clock from idle streams to idle streams; seconds per operation into *sec. */
int ar_time(struct ar *a, enum ar_op op, int peer, size_t count, int iters, double *sec, struct gv_gerr *err);
/* One all-reduce size as nccl-tests times it: warm-up, then timed iterations (more: twice as
 * many); with ranks in other processes, *sec is the slowest rank's (every rank gets the same). */
int ar_point(struct ar *a, size_t bytes, int more, double *sec, int *iters, struct gv_gerr *err);
/* *v reduced (ncclMax, ncclMin, ...) over every rank of the communicator, every local GPU giving *v. */
int ar_reduce_double(struct ar *a, double *v, ncclRedOp_t op, struct gv_gerr *err);
/* The small buffers of ar_reduce_double and the streams (before ar_setup_buffers). */
int ar_setup_small(struct ar *a, struct gv_gerr *err);
/* Send and receive buffers of a->max bytes on every local GPU, filled for ar_check. */
int ar_setup_buffers(struct ar *a, struct gv_gerr *err);
/* Mismatching elements of the last all-reduce result (count floats) over every local GPU. */
int ar_check(struct ar *a, size_t count, unsigned long long *bad_out, struct gv_gerr *err);
/* Communicators finalized and destroyed (aborted after a time-out or with abort set), buffers freed. */
void ar_free(struct ar *a, int abort);

#endif
