/*
 * allreduce.cu - NCCL all-reduce bandwidth, as nccl-tests' all_reduce_perf.
 *
 * Single process (default): ncclCommInitAll over every local GPU, one
 * stream per GPU, each operation issued for all GPUs inside one
 * ncclGroupStart/ncclGroupEnd.  Built with `make MPI=1` (GPUVET_MPI) and
 * started under mpirun with more than one rank: one rank per GPU across
 * nodes, ncclCommInitRank with the unique id broadcast by MPI_Bcast; rank 0
 * reports, the other ranks record the bench as skipped.
 *
 * Sweep: float sum, out of place, sizes from 8 B doubling up to
 * allreduce_max_bytes(profile) (1/4/8 GiB), bounded so that the two
 * buffers take at most 40% of the GPU's free memory.  Each size: warm-up
 * iterations, then `iters` operations timed on the host clock until every
 * stream is done (time = elapsed / iters, as nccl-tests; under MPI the
 * slowest rank's time).
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
#include "benches/gpu_common.cuh"
#include "benches/nccl_log.h"

#include <limits.h>
#include <math.h>
#include <nccl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define AR_ONE_RANK "one gpu: an all-reduce over one rank moves no data between gpus (busbw factor 2(n-1)/n = 0)"

#ifdef GPUVET_MPI
#include <mpi.h>
#endif


#define AR_MAX_GPUS 64

static const char *nccl_name(ncclResult_t r)
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

#define GV_NCCL(err, call) do { ncclResult_t r_ = (call); if (r_ != ncclSuccess) { \
	gv_gerr_set(err, "%s: %s at %s:%d", nccl_name(r_), ncclGetErrorString(r_), __FILE__, __LINE__); \
	goto fail; } } while (0)

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

struct ar {
	int nlocal;            /* GPUs driven by this process */
	int nranks, rank;      /* ranks in the communicator; this process's first rank */
	int devs[AR_MAX_GPUS];
	ncclComm_t comms[AR_MAX_GPUS];
	cudaStream_t streams[AR_MAX_GPUS];
	float *send[AR_MAX_GPUS], *recv[AR_MAX_GPUS];
	size_t max;
	int mpi;
	char debug_path[PATH_MAX];     /* NCCL's debug file, "" when the user routes it */
	char transport[512];           /* nccl_transport_json() of it, after the sweep */
	char transport_sum[128];
};

/*
 * Sends NCCL's INFO output into a file of a new work directory (removed by
 * the harness with the bench process); before the first NCCL call, since NCCL
 * reads these once.  The user's own NCCL_DEBUG_FILE is left alone.
 */
static void ar_debug_to_file(struct bench_ctx *ctx, struct ar *a)
{
	char dir[PATH_MAX];
	const char *base = getenv("TMPDIR"), *lvl = getenv("NCCL_DEBUG");
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
	setenv("NCCL_DEBUG_FILE", a->debug_path, 1);
	if (!lvl || (strcasecmp(lvl, "INFO") && strcasecmp(lvl, "TRACE")))
		setenv("NCCL_DEBUG", "INFO", 1);
	if (!getenv("NCCL_DEBUG_SUBSYS"))
		setenv("NCCL_DEBUG_SUBSYS", "INIT,GRAPH,NET,ENV", 1);
}

/* What NCCL chose, from its debug file (after the operations: connections are made lazily). */
static void ar_read_transport(struct bench_ctx *ctx, struct ar *a)
{
	struct nccl_transport t;
	size_t n = 0;
	char *text = a->debug_path[0] ? gv_read_file_max(a->debug_path, 64u << 20, &n) : NULL;
	nccl_log_parse(text ? text : "", text ? n : 0, &t);
	free(text);
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

/* One timed all-reduce batch; seconds per operation into *sec. */
static int ar_time(struct ar *a, size_t count, int iters, double *sec, struct gv_gerr *err)
{
	double t0;
	for (int d = 0; d < a->nlocal; d++) {
		GV_CUDA(err, cudaSetDevice(a->devs[d]));
		GV_CUDA(err, cudaStreamSynchronize(a->streams[d]));
	}
#ifdef GPUVET_MPI
	if (a->mpi)
		MPI_Barrier(MPI_COMM_WORLD);
#endif
	t0 = bench_now();
	for (int it = 0; it < iters; it++) {
		GV_NCCL(err, ncclGroupStart());
		for (int d = 0; d < a->nlocal; d++)
			GV_NCCL(err, ncclAllReduce(a->send[d], a->recv[d], count, ncclFloat, ncclSum, a->comms[d],
						   a->streams[d]));
		GV_NCCL(err, ncclGroupEnd());
	}
	for (int d = 0; d < a->nlocal; d++) {
		GV_CUDA(err, cudaSetDevice(a->devs[d]));
		GV_CUDA(err, cudaStreamSynchronize(a->streams[d]));
	}
	*sec = (bench_now() - t0) / iters;
#ifdef GPUVET_MPI
	if (a->mpi) {
		double mx = *sec;
		MPI_Allreduce(sec, &mx, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
		*sec = mx;
	}
#endif
	return 0;
fail:
	return -1;
}

static int ar_setup_buffers(struct ar *a, enum bench_profile p, struct gv_gerr *err)
{
	a->max = allreduce_max_bytes(p);
	for (int d = 0; d < a->nlocal; d++) {
		size_t fr = 0, tot = 0;
		GV_CUDA(err, cudaSetDevice(a->devs[d]));
		GV_CUDA(err, cudaMemGetInfo(&fr, &tot));
		while (a->max > 1024 && (double)a->max * 2 > 0.4 * (double)fr)
			a->max /= 2;
	}
#ifdef GPUVET_MPI
	if (a->mpi) {
		unsigned long long mine = a->max, mn = a->max;
		MPI_Allreduce(&mine, &mn, 1, MPI_UNSIGNED_LONG_LONG, MPI_MIN, MPI_COMM_WORLD);
		a->max = (size_t)mn;
	}
#endif
	for (int d = 0; d < a->nlocal; d++) {
		GV_CUDA(err, cudaSetDevice(a->devs[d]));
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

static void ar_free(struct ar *a)
{
	for (int d = 0; d < a->nlocal; d++) {
		if (cudaSetDevice(a->devs[d]) != cudaSuccess)
			continue;
		if (a->comms[d])
			ncclCommDestroy(a->comms[d]);
		cudaFree(a->send[d]);
		cudaFree(a->recv[d]);
		if (a->streams[d])
			cudaStreamDestroy(a->streams[d]);
	}
}

/* Mismatching elements of the last (largest) result over every local GPU. */
static int ar_check(struct ar *a, size_t count, unsigned long long *bad_out, struct gv_gerr *err)
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
#ifdef GPUVET_MPI
	if (a->mpi) {
		unsigned long long sum = total;
		MPI_Allreduce(&total, &sum, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
		total = sum;
	}
#endif
	*bad_out = total;
	return 0;
fail:
	return -1;
}

static int ar_sweep(struct bench_ctx *ctx, const struct bench_config *cfg, struct ar *a, int report,
		    struct gv_gerr *err)
{
	size_t sizes[48];
	int ns = size_sweep(8, a->max, sizes, 48);
	struct bench_reps rp = bench_reps_for(cfg->profile);
	double last_sec = 0;
	int last_iters = 0;
	unsigned long long bad = 0;
	char params[1024];

	for (int i = 0; i < ns; i++) {
		size_t count = sizes[i] / sizeof(float);
		/* nccl-tests' defaults: 5 warm-up, 20 timed; fewer for the slow, large sizes */
		int iters = sizes[i] >= (256u << 20) ? 10 : 20, warm = sizes[i] >= (256u << 20) ? 2 : 5;
		double sec = 0;
		if (rp.reps > 20)
			iters *= 2;
		if (ar_time(a, count, warm, &sec, err) || ar_time(a, count, iters, &sec, err))
			return -1;
		double alg = allreduce_algbw_gbps((double)sizes[i], sec);
		double bus = allreduce_busbw_gbps((double)sizes[i], sec, a->nranks);
		if (report) {
			if (a->nranks > 1)   /* one rank moves nothing between GPUs: no busbw (below) */
				bench_sample(ctx, "allreduce.busbw.gbps", -1, (double)sizes[i], bus);
			bench_sample(ctx, "allreduce.algbw.gbps", -1, (double)sizes[i], alg);
			bench_sample(ctx, "allreduce.time.us", -1, (double)sizes[i], sec * 1e6);
			bench_progress(ctx, (double)(i + 1) / ns);
		}
		last_sec = sec;
		last_iters = iters;
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
	if (report) {
		size_t b = sizes[ns - 1];
		ar_read_transport(ctx, a);
		snprintf(params, sizeof params,
			 "{\"bytes\":%zu,\"count\":%zu,\"dtype\":\"float\",\"op\":\"sum\",\"inplace\":0,\"ranks\":%d,"
			 "\"iters\":%d,\"time_us\":%.6g,\"busbw_factor\":%.6g,\"checked\":1,\"mpi\":%d,"
			 "\"transport\":\"%s\"}",
			 b, b / sizeof(float), a->nranks, last_iters, last_sec * 1e6, allreduce_busbw_factor(a->nranks),
			 a->mpi, a->transport_sum);
		if (a->nranks > 1)
			bench_metric(ctx, "allreduce.busbw.gbps", -1,
				     allreduce_busbw_gbps((double)b, last_sec, a->nranks), "GB/s", params);
		else
			bench_log(ctx, "allreduce.busbw.gbps not reported: %s", AR_ONE_RANK);
		bench_metric(ctx, "allreduce.algbw.gbps", -1, allreduce_algbw_gbps((double)b, last_sec), "GB/s",
			     params);
		snprintf(params, sizeof params,
			 "{\"profile\":\"%s\",\"ranks\":%d,\"max_bytes\":%zu,\"sizes\":%d,\"mpi\":%d,\"transport\":%s%s%s%s}",
			 bench_profile_name(cfg->profile), a->nranks, b, ns, a->mpi, a->transport,
			 a->nranks > 1 ? "" : ",\"busbw\":\"", a->nranks > 1 ? "" : AR_ONE_RANK, a->nranks > 1 ? "" : "\"");
		bench_config_echo(ctx, params);
	}
	return 0;
}

#ifdef GPUVET_MPI
/* Under mpirun with more than one rank? */
static int ar_mpi_world(void)
{
	const char *s = getenv("OMPI_COMM_WORLD_SIZE");
	if (!s)
		s = getenv("PMI_SIZE");
	if (!s)
		s = getenv("PMIX_SIZE");
	long v = 0;
	return s && gv_parse_long(s, 1, 1 << 20, &v) == 0 && v > 1;
}

static int ar_run_mpi(struct bench_ctx *ctx, const struct bench_config *cfg, int ndev)
{
	struct ar a;
	struct gv_gerr err;
	int inited = 0, rc = BENCH_FAIL, local_rank = 0, failed = 0, any_failed = 0;
	MPI_Comm local;
	ncclUniqueId id;

	memset(&a, 0, sizeof a);
	memset(&err, 0, sizeof err);
	MPI_Initialized(&inited);
	if (!inited)
		MPI_Init(NULL, NULL);
	MPI_Comm_rank(MPI_COMM_WORLD, &a.rank);
	MPI_Comm_size(MPI_COMM_WORLD, &a.nranks);
	MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, a.rank, MPI_INFO_NULL, &local);
	MPI_Comm_rank(local, &local_rank);
	MPI_Comm_free(&local);
	a.mpi = 1;
	a.nlocal = 1;
	ar_debug_to_file(ctx, &a);
	a.devs[0] = local_rank % ndev;
	if (a.rank == 0)
		GV_NCCL(&err, ncclGetUniqueId(&id));
	MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
	GV_CUDA(&err, cudaSetDevice(a.devs[0]));
	GV_NCCL(&err, ncclCommInitRank(&a.comms[0], a.nranks, id, a.rank));
	if (ar_setup_buffers(&a, cfg->profile, &err) || ar_sweep(ctx, cfg, &a, a.rank == 0, &err))
		goto fail;
	rc = a.rank == 0 ? BENCH_OK : BENCH_SKIP;
	if (a.rank != 0)
		bench_reason(ctx, "mpi rank %d of %d: results reported by rank 0", a.rank, a.nranks);
	goto done;
fail:
	failed = 1;
	bench_reason(ctx, "mpi rank %d of %d: %s", a.rank, a.nranks, err.text);
done:
	MPI_Allreduce(&failed, &any_failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
	ar_free(&a);
	if (!inited)
		MPI_Finalize();
	return rc;
}
#endif

static int allreduce_run(struct bench_ctx *ctx, const struct bench_config *cfg)
{
	struct ar a;
	struct gv_gerr err;
	int n = 0;

	memset(&a, 0, sizeof a);
	memset(&err, 0, sizeof err);
	if (gv_probe_gpus(ctx, &n) != BENCH_OK)
		return BENCH_SKIP;
#ifdef GPUVET_MPI
	if (ar_mpi_world())
		return ar_run_mpi(ctx, cfg, n);
#endif
	if (n < 2) {
		/* one rank reduces nothing over any link: no figure is better than a local copy's (busbw 0) */
		bench_reason(ctx, "all-reduce needs 2 GPUs or more; %d visible (multi-node: run under mpirun)", n);
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
	if (ar_setup_buffers(&a, cfg->profile, &err) || ar_sweep(ctx, cfg, &a, 1, &err))
		goto fail;
	ar_free(&a);
	return BENCH_OK;
fail:
	ar_free(&a);
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

extern "C" const struct bench bench_allreduce = {
	.name = "allreduce",
	.summary = "NCCL all-reduce algbw/busbw over all local GPUs (multi-node with MPI=1)",
	.flags = BENCH_NEEDS_GPU,
	.deadline_s = allreduce_deadline,
	.probe = allreduce_probe,
	.run = allreduce_run,
	.metrics = allreduce_metrics,
};
