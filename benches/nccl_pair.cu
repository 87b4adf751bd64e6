/*
 * nccl_pair.cu - NCCL between the nodes of a cluster run: the pair
 * send/recv and the cluster all-reduce (benches/nccl_pair.h, #49).
 *
 * The timing loop, the bounded waits and the teardown are the single-node
 * all-reduce bench's (benches/allreduce_int.cuh), so the cluster's
 * all-reduce is timed exactly as `gpuvet run --bench allreduce` is; what is
 * here is how the communicators are made (from the caller's unique id,
 * non-blocking, several local GPUs in one group) and what is reported.
 *
 * Bounded: ncclCommInitRankConfig with config.blocking = 0 returns at once
 * and the init goes on in NCCL's threads; ar_wait_comms polls
 * ncclCommGetAsyncError until it is no longer ncclInProgress or the
 * deadline (timeout_ms from the call) passes; ar_sync polls the streams the
 * same way (nccl-tests' testStreamSynchronize); after a time-out or any
 * error every communicator is aborted (ncclCommAbort, which NCCL documents
 * as safe in any state, init included).  NCCL 2.14 is the first with
 * non-blocking communicators: older libraries are refused by
 * nccl_pair_available.
 */
#include "benches/nccl_pair.h"
#include "benches/allreduce_int.cuh"
#include "benches/nccl_log.h"
#include "platform/gpu_dl.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static_assert(sizeof(ncclUniqueId) == NCCL_PAIR_UID_BYTES, "ncclUniqueId is 128 bytes (NCCL_UNIQUE_ID_BYTES)");

#define NP_MIN_VERSION 21400      /* NCCL_VERSION(2, 14, 0): ncclCommInitRankConfig, non-blocking communicators */
#define NP_TARGET_S 0.25          /* a pair direction's timed part */
#define NP_MAX_SIZES 48

/* ---- the unique id as hex ---- */

void nccl_pair_uid_encode(const unsigned char id[NCCL_PAIR_UID_BYTES], char hex[2 * NCCL_PAIR_UID_BYTES + 1])
{
	static const char digits[] = "0123456789abcdef";
	for (int i = 0; i < NCCL_PAIR_UID_BYTES; i++) {
		hex[2 * i] = digits[id[i] >> 4];
		hex[2 * i + 1] = digits[id[i] & 15];
	}
	hex[2 * NCCL_PAIR_UID_BYTES] = 0;
}

static int np_nibble(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int nccl_pair_uid_decode(const char *hex, unsigned char id[NCCL_PAIR_UID_BYTES], char *err, size_t errlen)
{
	size_t n = hex ? strnlen(hex, 2 * NCCL_PAIR_UID_BYTES + 1) : 0;
	if (n != 2 * NCCL_PAIR_UID_BYTES) {
		if (n > 2 * NCCL_PAIR_UID_BYTES)
			snprintf(err, errlen, "nccl unique id: more than %d hex digits", 2 * NCCL_PAIR_UID_BYTES);
		else
			snprintf(err, errlen, "nccl unique id: %zu hex digits, expected %d", n, 2 * NCCL_PAIR_UID_BYTES);
		return -1;
	}
	for (int i = 0; i < NCCL_PAIR_UID_BYTES; i++) {
		int hi = np_nibble(hex[2 * i]), lo = np_nibble(hex[2 * i + 1]);
		if (hi < 0 || lo < 0) {
			snprintf(err, errlen, "nccl unique id: not a hex digit at offset %d", 2 * i + (hi < 0 ? 0 : 1));
			return -1;
		}
		id[i] = (unsigned char)(hi << 4 | lo);
	}
	return 0;
}

/* ---- NCCL's log, one file per process ---- */

static pthread_once_t np_log_once = PTHREAD_ONCE_INIT;
static char np_log_dir[PATH_MAX - 16], np_log_path[PATH_MAX];   /* "" when the user routes NCCL's output */

static void np_log_remove(void)
{
	if (np_log_path[0])
		unlink(np_log_path);
	if (np_log_dir[0])
		rmdir(np_log_dir);
}

static void np_log_init(void)
{
	const char *base = getenv("TMPDIR");
	if (getenv("NCCL_DEBUG_FILE"))
		return;
	if (!base || !*base)
		base = "/tmp";
	if (snprintf(np_log_dir, sizeof np_log_dir, "%s/gpuvet-nccl-XXXXXX", base) >= (int)sizeof np_log_dir ||
	    !mkdtemp(np_log_dir)) {
		np_log_dir[0] = 0;
		return;
	}
	snprintf(np_log_path, sizeof np_log_path, "%s/nccl.log", np_log_dir);
	nccl_log_route(np_log_path);
	atexit(np_log_remove);
}

/* Before the process's first NCCL call: NCCL reads its debug settings once. */
static long np_log_mark(void)
{
	pthread_once(&np_log_once, np_log_init);
	return nccl_log_size(np_log_path);
}

/* The network NCCL used since `from`, else what it used instead, into net. */
static void np_log_net(long from, char *net, size_t netlen)
{
	struct nccl_transport t;
	if (!netlen)
		return;
	net[0] = 0;
	if (!np_log_path[0])
		return;
	nccl_log_read(np_log_path, from, &t);
	if ((t.seen & NCCL_TP_NET) && t.net[0])
		snprintf(net, netlen, "%s", t.net);
	else if (t.seen)
		nccl_transport_summary(&t, net, netlen);
}

/* ---- availability, the id ---- */

int nccl_pair_available(int *ngpus, char *why, size_t whylen)
{
	char gpu_why[256] = "", nccl_why[320] = "";
	int n = 0, version = 0;
	int have_gpu = gv_gpu_count(&n, gpu_why, sizeof gpu_why) == 0;
	*ngpus = have_gpu ? n : 0;
	np_log_mark();   /* before ncclGetVersion: NCCL reads its debug settings once, at its first call */
	if (!gpu_dl_nccl_available())
		snprintf(nccl_why, sizeof nccl_why, "NCCL not found: %s", gpu_dl_nccl_error());
	else if (ncclGetVersion(&version) != ncclSuccess || version < NP_MIN_VERSION)
		snprintf(nccl_why, sizeof nccl_why, "NCCL %d.%d.%d too old: non-blocking communicators need 2.14",
			 version / 10000, version / 100 % 100, version % 100);
	if (have_gpu && !nccl_why[0])
		return 0;
	const char *g = strncmp(gpu_why, "no cuda device: ", 16) ? gpu_why : gpu_why + 16;
	snprintf(why, whylen, "%s%s%s%s", have_gpu ? "" : "no NVIDIA GPU (", have_gpu ? "" : g,
		 have_gpu ? "" : nccl_why[0] ? "); " : ")", nccl_why);
	return -1;
}

int nccl_pair_uid(char hex[2 * NCCL_PAIR_UID_BYTES + 1], char *err, size_t errlen)
{
	ncclUniqueId id;
	ncclResult_t r;
	np_log_mark();
	r = ncclGetUniqueId(&id);
	hex[0] = 0;
	if (r != ncclSuccess) {
		snprintf(err, errlen, "ncclGetUniqueId: %s: %s", ar_nccl_name(r), ncclGetErrorString(r));
		return -1;
	}
	nccl_pair_uid_encode((const unsigned char *)id.internal, hex);
	return 0;
}

/* ---- communicators ---- */

/* a->nlocal GPUs a->devs[] take ranks a->rank.. of a->nranks, in one group, non-blocking; bounded. */
static int np_comms_init(struct ar *a, const unsigned char *uid, struct gv_gerr *err)
{
	ncclUniqueId id;
	ncclConfig_t cfg = NCCL_CONFIG_INITIALIZER;
	ncclResult_t r = ncclSuccess, end;
	cfg.blocking = 0;
	memcpy(id.internal, uid, NCCL_PAIR_UID_BYTES);
	a->nonblocking = 1;
	for (int d = 0; d < a->nlocal; d++)   /* every device usable before the group opens */
		GV_CUDA(err, cudaSetDevice(a->devs[d]));
	GV_NCCL(err, ncclGroupStart());
	for (int d = 0; d < a->nlocal && (r == ncclSuccess || r == ncclInProgress); d++) {
		if (cudaSetDevice(a->devs[d]) != cudaSuccess)
			r = ncclUnhandledCudaError;
		else
			r = ncclCommInitRankConfig(&a->comms[d], a->nranks, id, a->rank + d, &cfg);
	}
	end = ncclGroupEnd();   /* always, even after a failed call: never a group left open */
	GV_NCCL_NB(err, r);
	GV_NCCL_NB(err, end);
	return ar_wait_comms(a, err);
fail:
	return -1;
}

static void np_set_deadline(struct ar *a, int timeout_ms)
{
	a->deadline = bench_now() + timeout_ms / 1000.0;
}

/* ---- the pair ---- */

/* One direction of the pair: this rank sends (op AR_OP_SEND) or receives; GB/s into *gbps. */
static int np_direction(struct ar *a, enum ar_op op, double *gbps, struct gv_gerr *err)
{
	size_t count = a->max / sizeof(float);
	int peer = 1 - a->rank, iters;
	double sec = 0;
	if (ar_time(a, op, peer, count, 1, &sec, err) || ar_time(a, op, peer, count, 2, &sec, err) ||
	    ar_reduce_double(a, &sec, ncclMax, err))
		return -1;
	/* both ranks derive the count from the same agreed time: they issue the same operations */
	iters = sec > 0 ? (int)(NP_TARGET_S / sec) : 50;
	iters = iters < 5 ? 5 : iters > 50 ? 50 : iters;
	if (ar_time(a, op, peer, count, iters, &sec, err) || ar_reduce_double(a, &sec, ncclMax, err))
		return -1;
	*gbps = bw_gbps((double)a->max, sec);
	return 0;
}

static int np_pair_measure(struct ar *a, const unsigned char *uid, double *ab, double *ba, struct gv_gerr *err)
{
	GV_CUDA(err, cudaSetDevice(a->devs[0]));
	if (np_comms_init(a, uid, err) || ar_setup_small(a, err) || ar_setup_buffers(a, err))
		return -1;
	if (np_direction(a, a->rank == 0 ? AR_OP_SEND : AR_OP_RECV, ab, err) ||
	    np_direction(a, a->rank == 0 ? AR_OP_RECV : AR_OP_SEND, ba, err))
		return -1;
	return 0;
fail:
	return -1;
}

int nccl_pair_run(const char *uid_hex, int lower, int timeout_ms, double *gbps_ab, double *gbps_ba,
		  char *net, size_t netlen, char *err, size_t errlen)
{
	unsigned char uid[NCCL_PAIR_UID_BYTES];
	struct gv_gerr e;
	struct ar *a;
	long mark;
	int rc = -1;

	*gbps_ab = *gbps_ba = NAN;
	if (netlen)
		net[0] = 0;
	if (timeout_ms < 1) {
		snprintf(err, errlen, "nccl pair: timeout %d ms: must be 1 or more", timeout_ms);
		return -1;
	}
	if (nccl_pair_uid_decode(uid_hex, uid, err, errlen))
		return -1;
	a = (struct ar *)calloc(1, sizeof *a);
	if (!a) {
		snprintf(err, errlen, "nccl pair: out of memory");
		return -1;
	}
	memset(&e, 0, sizeof e);
	a->nlocal = 1;
	a->nranks = 2;
	a->rank = lower ? 0 : 1;
	a->devs[0] = 0;
	a->max = NCCL_PAIR_MSG_BYTES;
	mark = np_log_mark();
	np_set_deadline(a, timeout_ms);
	rc = np_pair_measure(a, uid, gbps_ab, gbps_ba, &e);
	ar_free(a, rc != 0);
	if (rc == 0)
		np_log_net(mark, net, netlen);
	else
		snprintf(err, errlen, "nccl pair (rank %d of 2, gpu 0): %s", a->rank, e.text);
	free(a);
	return rc;
}

/* ---- the cluster all-reduce ---- */

size_t nccl_cluster_npoints(double max_bytes)
{
	size_t sizes[NP_MAX_SIZES];
	if (!(max_bytes >= NCCL_PAIR_MIN_AR_BYTES) || max_bytes > 1e15)
		return 0;
	return (size_t)size_sweep(NCCL_PAIR_MIN_AR_BYTES, (size_t)max_bytes / sizeof(float) * sizeof(float), sizes,
				  NP_MAX_SIZES);
}

static int np_cluster_args(int first_rank, int ngpus, int total, double max_bytes, int timeout_ms,
			   const struct gv_cluster_ar_point *points, const size_t *npoints, char *err, size_t errlen)
{
	size_t need = nccl_cluster_npoints(max_bytes);
	if (total < 1)
		snprintf(err, errlen, "cluster all-reduce: %d ranks in all: must be 1 or more", total);
	else if (ngpus < 1 || ngpus > AR_MAX_GPUS)
		snprintf(err, errlen, "cluster all-reduce: %d gpus on this node: must be 1 to %d", ngpus, AR_MAX_GPUS);
	else if (first_rank < 0 || first_rank > total - ngpus)
		snprintf(err, errlen, "cluster all-reduce: first rank %d with %d gpus is out of range for %d ranks",
			 first_rank, ngpus, total);
	else if (need == 0)
		snprintf(err, errlen, "cluster all-reduce: largest size %.17g bytes: must be 1 MiB to 1e15", max_bytes);
	else if (timeout_ms < 1)
		snprintf(err, errlen, "cluster all-reduce: timeout %d ms: must be 1 or more", timeout_ms);
	else if (!points || !npoints || *npoints < need)
		snprintf(err, errlen, "cluster all-reduce: room for %zu points, %zu sizes from 1 MiB to %.17g bytes",
			 npoints ? *npoints : 0, need, max_bytes);
	else
		return 0;
	return -1;
}

/* The largest size every rank can hold: this node's bound, then the smallest over all ranks. */
static int np_agree_max(struct ar *a, double max_bytes, struct gv_gerr *err)
{
	double v = max_bytes;
	for (int d = 0; d < a->nlocal; d++) {
		size_t fr = 0, tot = 0;
		GV_CUDA(err, cudaSetDevice(a->devs[d]));
		GV_CUDA(err, cudaMemGetInfo(&fr, &tot));
		if (0.2 * (double)fr < v)   /* both buffers within 40% of the free memory, as the bench */
			v = 0.2 * (double)fr;
	}
	if (ar_reduce_double(a, &v, ncclMin, err))
		return -1;
	a->max = (size_t)v / sizeof(float) * sizeof(float);
	if (a->max < NCCL_PAIR_MIN_AR_BYTES) {
		gv_gerr_set(err, "a rank has too little free gpu memory for a 1 MiB all-reduce (%zu bytes fit)", a->max);
		return -1;
	}
	return 0;
fail:
	return -1;
}

static int np_cluster_sweep(struct ar *a, double max_bytes, struct gv_cluster_ar_point *points, size_t *npoints,
			    struct gv_gerr *err)
{
	size_t sizes[NP_MAX_SIZES];
	int ns, iters = 0;
	unsigned long long bad = 0;
	if (np_agree_max(a, max_bytes, err) || ar_setup_buffers(a, err))
		return -1;
	ns = size_sweep(NCCL_PAIR_MIN_AR_BYTES, a->max, sizes, NP_MAX_SIZES);
	for (int i = 0; i < ns; i++) {
		double sec = 0, b = (double)(sizes[i] / sizeof(float) * sizeof(float));
		if (ar_point(a, sizes[i], 0, &sec, &iters, err))
			return -1;
		points[i].bytes = b;
		points[i].time_us = sec * 1e6;
		points[i].algbw_gbps = allreduce_algbw_gbps(b, sec);
		points[i].busbw_gbps = allreduce_busbw_gbps(b, sec, a->nranks);
		*npoints = (size_t)i + 1;
	}
	/* the exact check holds while n (n + 1) / 2 * 7 is an integer a float keeps exactly (< 2^24) */
	if (ns > 0 && (double)a->nranks * (a->nranks + 1) / 2 * 7 < 16777216.0) {
		if (ar_check(a, sizes[ns - 1] / sizeof(float), &bad, err))
			return -1;
		if (bad) {
			gv_gerr_set(err, "all-reduce result wrong on ranks %d..%d: %llu elements differ from the expected sum",
				    a->rank, a->rank + a->nlocal - 1, bad);
			return -1;
		}
	}
	return 0;
}

int nccl_cluster_allreduce(const char *uid_hex, int first_rank, int ngpus, int total, double max_bytes,
			   int timeout_ms, struct gv_cluster_ar_point *points, size_t *npoints,
			   char *net, size_t netlen, char *err, size_t errlen)
{
	unsigned char uid[NCCL_PAIR_UID_BYTES];
	struct gv_gerr e;
	struct ar *a;
	long mark;
	int rc;

	if (netlen)
		net[0] = 0;
	if (np_cluster_args(first_rank, ngpus, total, max_bytes, timeout_ms, points, npoints, err, errlen) ||
	    nccl_pair_uid_decode(uid_hex, uid, err, errlen))
		return -1;
	*npoints = 0;
	a = (struct ar *)calloc(1, sizeof *a);
	if (!a) {
		snprintf(err, errlen, "cluster all-reduce: out of memory");
		return -1;
	}
	memset(&e, 0, sizeof e);
	a->nlocal = ngpus;
	a->nranks = total;
	a->rank = first_rank;
	for (int d = 0; d < ngpus; d++)
		a->devs[d] = d;
	mark = np_log_mark();
	np_set_deadline(a, timeout_ms);
	rc = np_comms_init(a, uid, &e) || ar_setup_small(a, &e) || np_cluster_sweep(a, max_bytes, points, npoints, &e)
		     ? -1 : 0;
	ar_free(a, rc != 0);
	if (rc == 0) {
		np_log_net(mark, net, netlen);
	} else {
		*npoints = 0;
		snprintf(err, errlen, "cluster all-reduce (ranks %d..%d of %d): %s", first_rank, first_rank + ngpus - 1,
			 total, e.text);
	}
	free(a);
	return rc;
}
