/*
 * allreduce.cu - NCCL all-reduce bandwidth, as nccl-tests' all_reduce_perf.
 *
 * One process: ncclCommInitAll over every local GPU, one stream per GPU,
 * each operation issued for all GPUs inside one ncclGroupStart/ncclGroupEnd.
 * Across nodes, the cluster all-reduce of `gpuvet cluster run`
 * (benches/nccl_pair.cu, docs/cluster.md) runs the same timing loop, which
 * lives here (benches/allreduce_int.cuh) with the wait, the teardown and the
 * result check both share.
 *
 * Sweep: float sum, out of place, sizes from 8 B doubling up to
 * allreduce_max_bytes(profile) (1/4/8 GiB), bounded so that the two
 * buffers take at most 40% of the GPU's free memory.  Each size: warm-up
 * iterations, then `iters` operations timed on the host clock until every
 * stream is done (time = elapsed / iters, as nccl-tests; with ranks in
 * other processes the slowest rank's time).
 *
 * Formulas (nccl-tests doc/PERFORMANCE.md, benches/gpu_math.c):
 *   algbw = bytes / time                       (bytes: one rank's buffer)
 *   busbw = algbw * 2 (n - 1) / n              (n ranks)
 * busbw is what each rank's links carry in a ring all-reduce, comparable
 * with NVLink/PCIe/network bandwidth whatever n.  With one GPU the factor
 * is 0: nccl-tests prints busbw 0, which users read as broken, so gpuvet
 * reports no busbw at all (metric and curve absent, the reason in the
 * bench's config echo and log); algbw is still reported.
 *
 * Transport: unless the user routes NCCL's debug output (NCCL_DEBUG_FILE),
 * it goes at INFO level to a file in the bench's work directory, read after
 * the sweep (NCCL connects lazily, at the first operation of each
 * algorithm): what NCCL chose (NVLS, P2P over NVLink or PCIe, SHM, NET,
 * benches/nccl_log.h) goes into the metrics' params and the config echo as
 * "transport", so a slow all-reduce says why.
 *
 * Correctness: every rank's send buffer holds (rank + 1) * (i % 7 + 1); after
 * the sweep the receive buffers hold the largest operation's result, which
 * must equal (i % 7 + 1) * n (n + 1) / 2 exactly (small integers in float).
 */
#include "benches/allreduce_int.cuh"
#include "benches/nccl_log.h"

#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define AR_ONE_RANK "one gpu: an all-reduce over one rank moves no data between gpus (busbw factor 2(n-1)/n = 0)"

const char *ar_nccl_name(ncclResult_t r)
{
	switch (r) {
	case ncclSuccess: return "ncclSuccess";
	case ncclUnhandledCudaError: return "ncclUnhandledCudaError";
	case ncclSystemError: return "ncclSystemError";
	case ncclInternalError: return "ncclInternalError";
	case ncclInvalidArgument: return "ncclInvalidArgument";
	case ncclInvalidUsage: return "ncclInvalidUsage";
	case ncclRemoteError: return "ncclRemoteError";
	case ncclInProgress: return "ncclInProgress";
	default: return "ncclError";
	}
}

__global__ static void ar_init_kernel(float *p, size_t n, int rank)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
		p[i] = (float)((rank + 1) * (int)(i % 7 + 1));
}

__global__ static void ar_check_kernel(const float *p, size_t n, int nranks, unsigned long long *bad)
{
	float tri = (float)(nranks * (nranks + 1) / 2);
	unsigned long long local = 0;
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
		if (p[i] != tri * (float)(i % 7 + 1))
			local++;
	if (local)
		atomicAdd(bad, local);
}

/*
 * Sends NCCL's INFO output into a file of a new work directory (removed by
 * the harness with the bench process); before the first NCCL call, since NCCL
 * reads these once.  The user's own NCCL_DEBUG_FILE is left alone.
 */
static void ar_debug_to_file(struct bench_ctx *ctx, struct ar *a)
{
	char dir[PATH_MAX];
	const char *base = getenv("TMPDIR");
	a->debug_path[0] = 0;
	if (getenv("NCCL_DEBUG_FILE")) {
		bench_log(ctx, "NCCL_DEBUG_FILE is set: its output is the user's, the transport is not read");
		return;
	}
	if (!base || !*base)
		base = "/tmp";
	if (bench_mkworkdir(ctx, base, "nccl", dir, sizeof dir) ||
	    snprintf(a->debug_path, sizeof a->debug_path, "%s/nccl.log", dir) >= (int)sizeof a->debug_path) {
		a->debug_path[0] = 0;
		return;
	}
	nccl_log_route(a->debug_path);
}

/* What NCCL chose, from its debug file (after the operations: connections are made lazily). */
static void ar_read_transport(struct bench_ctx *ctx, struct ar *a)
{
	struct nccl_transport t;
	nccl_log_read(a->debug_path, 0, &t);
	nccl_transport_summary(&t, a->transport_sum, sizeof a->transport_sum);
	nccl_transport_json(&t, a->transport, sizeof a->transport);
	bench_log(ctx, "nccl transport: %s (%d connections, intra-node path %s)", a->transport_sum, t.connections,
		  t.intra[0] ? t.intra : "unknown");
}

static int allreduce_deadline(const struct bench_config *cfg)
{
	switch (cfg->profile) {
	case PROFILE_STANDARD: return 600;
	case PROFILE_FULL: return 1200;
	case PROFILE_QUICK:
	default: return 180;
	}
}

static int allreduce_probe(struct bench_ctx *ctx, const struct bench_config *cfg)
{
	(void)cfg;
	return gv_probe_gpus_libs(ctx, GV_NEED_NCCL);
}

/* A deadline passed?  Records the time-out once. */
static int ar_expired(struct ar *a, const char *what, struct gv_gerr *err)
{
	if (a->deadline <= 0 || bench_now() < a->deadline)
		return 0;
	a->timed_out = 1;
	gv_gerr_set(err, "timed out waiting for %s (ranks %d..%d of %d)", what, a->rank, a->rank + a->nlocal - 1,
		    a->nranks);
	return 1;
}

/* -1 when a communicator reports an error; *busy counts those still in progress. */
static int ar_comm_errors(struct ar *a, int *busy, struct gv_gerr *err)
{
	*busy = 0;
	for (int d = 0; d < a->nlocal; d++) {
		ncclResult_t st = ncclSuccess;
		if (!a->comms[d])
			continue;
		GV_NCCL(err, ncclCommGetAsyncError(a->comms[d], &st));
		if (st == ncclInProgress)
			(*busy)++;
		else
			GV_NCCL(err, st);
	}
	return 0;
fail:
	return -1;
}

int ar_wait_comms(struct ar *a, struct gv_gerr *err)
{
	for (;;) {
		int busy = 0;
		if (ar_comm_errors(a, &busy, err))
			return -1;
		if (!busy)
			return 0;
		if (ar_expired(a, "nccl communicators", err))
			return -1;
		sched_yield();
	}
}

int ar_sync(struct ar *a, struct gv_gerr *err)
{
	for (int d = 0; d < a->nlocal; d++) {
		for (;;) {
			cudaError_t q = cudaStreamQuery(a->streams[d]);
			int busy = 0;
			if (q == cudaSuccess)
				break;
			if (q != cudaErrorNotReady)
				GV_CUDA(err, q);
			if (ar_comm_errors(a, &busy, err) || ar_expired(a, "nccl operations", err))
				return -1;
			sched_yield();
		}
	}
	return 0;
fail:
	return -1;
}

static ncclResult_t ar_issue(struct ar *a, int d, enum ar_op op, int peer, size_t count)
{
	switch (op) {
	case AR_OP_SEND: return ncclSend(a->send[d], count, ncclFloat, peer, a->comms[d], a->streams[d]);
	case AR_OP_RECV: return ncclRecv(a->recv[d], count, ncclFloat, peer, a->comms[d], a->streams[d]);
	case AR_OP_ALLREDUCE:
	default: return ncclAllReduce(a->send[d], a->recv[d], count, ncclFloat, ncclSum, a->comms[d], a->streams[d]);
	}
}

int ar_time(struct ar *a, enum ar_op op, int peer, size_t count, int iters, double *sec, struct gv_gerr *err)
{
	double t0;
	if (ar_sync(a, err))
		return -1;
	t0 = bench_now();
	for (int it = 0; it < iters; it++) {
		ncclResult_t r = ncclSuccess, end;
		GV_NCCL(err, ncclGroupStart());
		for (int d = 0; d < a->nlocal && (r == ncclSuccess || r == ncclInProgress); d++)
			r = ar_issue(a, d, op, peer, count);
		end = ncclGroupEnd();   /* always: a group left open would swallow the caller's next calls */
		GV_NCCL_NB(err, r);
		GV_NCCL_NB(err, end);
		if (end == ncclInProgress && ar_wait_comms(a, err))
			return -1;
	}
	if (ar_sync(a, err))
		return -1;
	*sec = (bench_now() - t0) / iters;
	return 0;
fail:
	return -1;
}

int ar_reduce_double(struct ar *a, double *v, ncclRedOp_t op, struct gv_gerr *err)
{
	ncclResult_t r = ncclSuccess, end;
	if (ar_sync(a, err))
		return -1;
	for (int d = 0; d < a->nlocal; d++) {
		a->hval[d] = *v;
		GV_CUDA(err, cudaSetDevice(a->devs[d]));
		GV_CUDA(err, cudaMemcpyAsync(a->dval[d], &a->hval[d], sizeof(double), cudaMemcpyHostToDevice,
					     a->streams[d]));
	}
	GV_NCCL(err, ncclGroupStart());
	for (int d = 0; d < a->nlocal && (r == ncclSuccess || r == ncclInProgress); d++)
		r = ncclAllReduce(a->dval[d], a->dval[d], 1, ncclDouble, op, a->comms[d], a->streams[d]);
	end = ncclGroupEnd();
	GV_NCCL_NB(err, r);
	GV_NCCL_NB(err, end);
	if (end == ncclInProgress && ar_wait_comms(a, err))
		return -1;
	for (int d = 0; d < a->nlocal; d++) {
		GV_CUDA(err, cudaSetDevice(a->devs[d]));
		GV_CUDA(err, cudaMemcpyAsync(&a->hval[d], a->dval[d], sizeof(double), cudaMemcpyDeviceToHost,
					     a->streams[d]));
	}
	if (ar_sync(a, err))
		return -1;
	*v = a->hval[0];
	return 0;
fail:
	return -1;
}

int ar_point(struct ar *a, size_t bytes, int more, double *sec, int *iters, struct gv_gerr *err)
{
	size_t count = bytes / sizeof(float);
	/* nccl-tests' defaults: 5 warm-up, 20 timed; fewer for the slow, large sizes */
	int warm = bytes >= (256u << 20) ? 2 : 5;
	*iters = (bytes >= (256u << 20) ? 10 : 20) * (more ? 2 : 1);
	if (ar_time(a, AR_OP_ALLREDUCE, -1, count, warm, sec, err) ||
	    ar_time(a, AR_OP_ALLREDUCE, -1, count, *iters, sec, err))
		return -1;
	if (a->nranks > a->nlocal)   /* other processes: the slowest rank's time, as nccl-tests under MPI */
		return ar_reduce_double(a, sec, ncclMax, err);
	return 0;
}

int ar_setup_small(struct ar *a, struct gv_gerr *err)
{
	GV_CUDA(err, cudaMallocHost((void **)&a->hval, sizeof(double) * (size_t)a->nlocal));
	for (int d = 0; d < a->nlocal; d++) {
		GV_CUDA(err, cudaSetDevice(a->devs[d]));
		if (!a->streams[d])
			GV_CUDA(err, cudaStreamCreateWithFlags(&a->streams[d], cudaStreamNonBlocking));
		GV_CUDA(err, cudaMalloc((void **)&a->dval[d], sizeof(double)));
	}
	return 0;
fail:
	return -1;
}

int ar_setup_buffers(struct ar *a, struct gv_gerr *err)
{
	for (int d = 0; d < a->nlocal; d++) {
		GV_CUDA(err, cudaSetDevice(a->devs[d]));
		if (!a->streams[d])
			GV_CUDA(err, cudaStreamCreateWithFlags(&a->streams[d], cudaStreamNonBlocking));
		GV_CUDA(err, cudaMalloc(&a->send[d], a->max));
		GV_CUDA(err, cudaMalloc(&a->recv[d], a->max));
		ar_init_kernel<<<1024, 256, 0, a->streams[d]>>>(a->send[d], a->max / sizeof(float), a->rank + d);
		GV_CUDA(err, cudaGetLastError());
		GV_CUDA(err, cudaMemsetAsync(a->recv[d], 0, a->max, a->streams[d]));
	}
	return 0;
fail:
	return -1;
}

/* Non-blocking communicators: finalize (flushes, bounded by the deadline), then destroy. */
static int ar_finalize(struct ar *a)
{
	struct gv_gerr e;
	memset(&e, 0, sizeof e);
	for (int d = 0; d < a->nlocal; d++) {
		ncclResult_t r = a->comms[d] ? ncclCommFinalize(a->comms[d]) : ncclSuccess;
		if (r != ncclSuccess && r != ncclInProgress)
			return -1;
	}
	return ar_wait_comms(a, &e);
}

void ar_free(struct ar *a, int abort)
{
	abort = abort || a->timed_out;
	if (!abort && a->nonblocking && ar_finalize(a))
		abort = 1;
	for (int d = 0; d < a->nlocal; d++) {
		if (a->comms[d])
			(void)(abort ? ncclCommAbort(a->comms[d]) : ncclCommDestroy(a->comms[d]));
		a->comms[d] = NULL;
		if (cudaSetDevice(a->devs[d]) != cudaSuccess)
			continue;
		cudaFree(a->send[d]);
		cudaFree(a->recv[d]);
		cudaFree(a->dval[d]);
		if (a->streams[d])
			cudaStreamDestroy(a->streams[d]);
		a->send[d] = a->recv[d] = NULL;
		a->dval[d] = NULL;
		a->streams[d] = NULL;
	}
	cudaFreeHost(a->hval);
	a->hval = NULL;
}

/* Mismatching elements of the last (largest) result over every local GPU. */
int ar_check(struct ar *a, size_t count, unsigned long long *bad_out, struct gv_gerr *err)
{
	unsigned long long total = 0;
	for (int d = 0; d < a->nlocal; d++) {
		unsigned long long *dbad = NULL, hbad = 0;
		GV_CUDA(err, cudaSetDevice(a->devs[d]));
		GV_CUDA(err, cudaMalloc(&dbad, sizeof *dbad));
		GV_CUDA(err, cudaMemsetAsync(dbad, 0, sizeof *dbad, a->streams[d]));
		ar_check_kernel<<<1024, 256, 0, a->streams[d]>>>(a->recv[d], count, a->nranks, dbad);
		GV_CUDA(err, cudaGetLastError());
		GV_CUDA(err, cudaMemcpyAsync(&hbad, dbad, sizeof hbad, cudaMemcpyDeviceToHost, a->streams[d]));
		GV_CUDA(err, cudaStreamSynchronize(a->streams[d]));
		cudaFree(dbad);
		total += hbad;
	}
	*bad_out = total;
	return 0;
fail:
	return -1;
}

/* The bench's buffer size: the profile's, halved until both buffers fit in 40% of every GPU's free memory. */
static int ar_bench_max(struct ar *a, enum bench_profile p, struct gv_gerr *err)
{
	a->max = allreduce_max_bytes(p);
	for (int d = 0; d < a->nlocal; d++) {
		size_t fr = 0, tot = 0;
		GV_CUDA(err, cudaSetDevice(a->devs[d]));
		GV_CUDA(err, cudaMemGetInfo(&fr, &tot));
		while (a->max > 1024 && (double)a->max * 2 > 0.4 * (double)fr)
			a->max /= 2;
	}
	return 0;
fail:
	return -1;
}

static int ar_sweep(struct bench_ctx *ctx, const struct bench_config *cfg, struct ar *a, struct gv_gerr *err)
{
	size_t sizes[48];
	int ns = size_sweep(8, a->max, sizes, 48);
	struct bench_reps rp = bench_reps_for(cfg->profile);
	double last_sec = 0;
	int last_iters = 0;
	unsigned long long bad = 0;
	char params[1024];

	for (int i = 0; i < ns; i++) {
		double sec = 0;
		if (ar_point(a, sizes[i], rp.reps > 20, &sec, &last_iters, err))
			return -1;
		if (a->nranks > 1)   /* one rank moves nothing between GPUs: no busbw (below) */
			bench_sample(ctx, "allreduce.busbw.gbps", -1, (double)sizes[i],
				     allreduce_busbw_gbps((double)sizes[i], sec, a->nranks));
		bench_sample(ctx, "allreduce.algbw.gbps", -1, (double)sizes[i], allreduce_algbw_gbps((double)sizes[i], sec));
		bench_sample(ctx, "allreduce.time.us", -1, (double)sizes[i], sec * 1e6);
		bench_progress(ctx, (double)(i + 1) / ns);
		last_sec = sec;
	}
	if (ns == 0) {
		gv_gerr_set(err, "no all-reduce size fits in free gpu memory");
		return -1;
	}
	if (ar_check(a, sizes[ns - 1] / sizeof(float), &bad, err))
		return -1;
	if (bad) {
		gv_gerr_set(err, "all-reduce result wrong: %llu of %zu elements differ from the expected sum (%d ranks)",
			    bad, sizes[ns - 1] / sizeof(float) * (size_t)a->nranks, a->nranks);
		return -1;
	}
	size_t b = sizes[ns - 1];
	ar_read_transport(ctx, a);
	snprintf(params, sizeof params,
		 "{\"bytes\":%zu,\"count\":%zu,\"dtype\":\"float\",\"op\":\"sum\",\"inplace\":0,\"ranks\":%d,"
		 "\"iters\":%d,\"time_us\":%.6g,\"busbw_factor\":%.6g,\"checked\":1,\"transport\":\"%s\"}",
		 b, b / sizeof(float), a->nranks, last_iters, last_sec * 1e6, allreduce_busbw_factor(a->nranks),
		 a->transport_sum);
	if (a->nranks > 1)
		bench_metric(ctx, "allreduce.busbw.gbps", -1, allreduce_busbw_gbps((double)b, last_sec, a->nranks), "GB/s",
			     params);
	else
		bench_log(ctx, "allreduce.busbw.gbps not reported: %s", AR_ONE_RANK);
	bench_metric(ctx, "allreduce.algbw.gbps", -1, allreduce_algbw_gbps((double)b, last_sec), "GB/s", params);
	snprintf(params, sizeof params,
		 "{\"profile\":\"%s\",\"ranks\":%d,\"max_bytes\":%zu,\"sizes\":%d,\"transport\":%s%s%s%s}",
		 bench_profile_name(cfg->profile), a->nranks, b, ns, a->transport,
		 a->nranks > 1 ? "" : ",\"busbw\":\"", a->nranks > 1 ? "" : AR_ONE_RANK, a->nranks > 1 ? "" : "\"");
	bench_config_echo(ctx, params);
	return 0;
}

static int allreduce_run(struct bench_ctx *ctx, const struct bench_config *cfg)
{
	struct ar a;
	struct gv_gerr err;
	int n = 0;

	memset(&a, 0, sizeof a);
	memset(&err, 0, sizeof err);
	if (gv_probe_gpus(ctx, &n) != BENCH_OK)
		return BENCH_SKIP;
	if (n < 2) {
		/* one rank reduces nothing over any link: no figure is better than a local copy's (busbw 0) */
		bench_reason(ctx, "all-reduce needs 2 GPUs or more; %d visible (across nodes: gpuvet cluster run)", n);
		return BENCH_SKIP;
	}
	if (n > AR_MAX_GPUS)
		n = AR_MAX_GPUS;
	a.nlocal = a.nranks = n;
	a.rank = 0;
	for (int d = 0; d < n; d++)
		a.devs[d] = d;
	ar_debug_to_file(ctx, &a);
	GV_NCCL(&err, ncclCommInitAll(a.comms, n, a.devs));
	if (ar_bench_max(&a, cfg->profile, &err) || ar_setup_buffers(&a, &err) ||
	    ar_sweep(ctx, cfg, &a, &err))
		goto fail;
	ar_free(&a, 0);
	return BENCH_OK;
fail:
	ar_free(&a, 0);
	bench_reason(ctx, "%s", err.text);
	return BENCH_FAIL;
}

#define R METRIC_RANKABLE
#define G METRIC_PER_GPU
#define L METRIC_LOWER_IS_BETTER

/* The metrics this bench reports (struct metric_info, benches/bench.h). */
static const struct metric_info allreduce_metrics[] = {
	{ "allreduce.busbw.gbps", "GB/s", "all-reduce busbw", R | G, METRIC_PEAK_NVLINK },
	{ "allreduce.algbw.gbps", "GB/s", "all-reduce algbw", R | G, METRIC_PEAK_NONE },
	{ NULL, NULL, NULL, 0, METRIC_PEAK_NONE },
};

#undef R
#undef G
#undef L

/* The series it samples (struct bench .series): judged under this bench only. */
static const char *const allreduce_series[] = { "allreduce.busbw.gbps", "allreduce.algbw.gbps", "allreduce.time.us", NULL };

extern "C" const struct bench bench_allreduce = {
	.name = "allreduce",
	.summary = "NCCL all-reduce algbw/busbw over all local GPUs (across nodes: gpuvet cluster run)",
	.flags = BENCH_NEEDS_GPU,
	.deadline_s = allreduce_deadline,
	.probe = allreduce_probe,
	.run = allreduce_run,
	.metrics = allreduce_metrics,
	.series = allreduce_series,
};
