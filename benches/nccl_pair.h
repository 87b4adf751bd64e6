/*
 * nccl_pair.h - NCCL between the nodes of a cluster run (#49, `gpuvet
 * cluster run`, docs/cluster.md): GPU 0 to GPU 0 send/recv between a pair
 * of nodes, and one all-reduce over every GPU of every node.  The ranks
 * meet through the caller's rendezvous (platform/rendezvous.h), which
 * carries NCCL's unique id as hex text; nothing here talks to another node
 * except through NCCL.
 *
 * NCCL is opened with dlopen (platform/gpu_dl.c): compiled into every build,
 * usable wherever the library and a GPU are.  Every call is bounded by its
 * timeout_ms: communicators are non-blocking (ncclConfig_t.blocking = 0,
 * NCCL 2.14 or newer), every wait polls ncclCommGetAsyncError and the
 * streams against the deadline, and on expiry the communicators are
 * aborted (ncclCommAbort), never destroyed with a wait on a lost peer.
 *
 * NCCL's debug output goes at INFO level to a file of this process (under
 * $TMPDIR, removed at exit) unless the user set NCCL_DEBUG_FILE; each call
 * reads the part written during it for the network NCCL chose
 * (benches/nccl_log.h).  The first call of any function here sets NCCL's
 * NCCL_DEBUG* variables with setenv(): make it (nccl_pair_available does)
 * before starting threads that read the environment.
 */
#ifndef GPUVET_NCCL_PAIR_H
#define GPUVET_NCCL_PAIR_H

#include <stddef.h>

#include "common/cluster.h"

#ifdef __cplusplus
extern "C" {
#endif

#define NCCL_PAIR_UID_BYTES 128
#define NCCL_PAIR_MSG_BYTES (64u << 20)   /* the pair's message: one ncclSend of 64 MiB */
#define NCCL_PAIR_MIN_AR_BYTES (1u << 20) /* the cluster all-reduce's first size */

/* 0 when NCCL loads and this node has a GPU, else -1 with the skip reason ("no NVIDIA GPU", "NCCL not found: ..."). */
int nccl_pair_available(int *ngpus, char *why, size_t whylen);
/* ncclGetUniqueId, as hex text (2*128 chars + NUL) for the rendezvous. -1 with err. */
int nccl_pair_uid(char hex[2 * NCCL_PAIR_UID_BYTES + 1], char *err, size_t errlen);
/*
 * GPU 0 of this node <-> GPU 0 of the peer, a 2-rank communicator from uid_hex; lower = rank 0 of
 * it.  a->b then b->a with ncclSend/ncclRecv, GB/s; net: NCCL's chosen network from its log
 * (benches/nccl_log.h), e.g. "IB", "AWS Libfabric", "Socket".  -1 with err (timeout_ms bounds it:
 * ncclCommAbort on expiry).
 *
 * Each direction: one untimed operation (connections are made lazily), two timed to choose the
 * count, then 5 to 50 operations of NCCL_PAIR_MSG_BYTES lasting about 0.25 s, each side timing
 * from idle stream to idle stream; the figure is bytes / the slower side's time per operation
 * (both sides agree through a 1-element all-reduce, so both return the same figures).  When no
 * connection went over a network (two GPUs of one machine), net is what NCCL used instead
 * ("P2P over NVLink", "SHM (host memory)"); "" when the user routes NCCL's log.
 */
int nccl_pair_run(const char *uid_hex, int lower, int timeout_ms, double *gbps_ab, double *gbps_ba,
		  char *net, size_t netlen, char *err, size_t errlen);
/*
 * The cluster all-reduce: every GPU of every node in one communicator of `total` ranks; this
 * node's GPUs take ranks first_rank .. first_rank+ngpus-1.  Sizes from 1 MiB doubling to
 * max_bytes; points[] (caller's array of *npoints capacity) get bytes, time_us, algbw, busbw
 * (nccl-tests' formula 2(n-1)/n).  -1 with err.
 *
 * The arguments are checked before NCCL is touched (total < 1, ngpus < 1 or over 64, first_rank
 * out of 0..total-ngpus, max_bytes under 1 MiB, a capacity under nccl_cluster_npoints(max_bytes),
 * timeout_ms < 1, a bad uid).  The ranks agree on the largest size first (the smallest any rank's
 * free memory allows, both buffers in 40% of it), so *npoints may come back below the capacity.
 * Each size is timed as the single-node bench times it (benches/allreduce_int.cuh: nccl-tests'
 * warm-up and iteration counts), with the slowest rank's time, identical on every rank.
 */
int nccl_cluster_allreduce(const char *uid_hex, int first_rank, int ngpus, int total, double max_bytes,
			   int timeout_ms, struct gv_cluster_ar_point *points, size_t *npoints,
			   char *net, size_t netlen, char *err, size_t errlen);
/* How many points nccl_cluster_allreduce gives at most for max_bytes (0 under 1 MiB). */
size_t nccl_cluster_npoints(double max_bytes);

/* The unique id <-> hex (lowercase out, either case in).  decode: -1 with err unless exactly
 * 2*NCCL_PAIR_UID_BYTES hex digits. */
void nccl_pair_uid_encode(const unsigned char id[NCCL_PAIR_UID_BYTES], char hex[2 * NCCL_PAIR_UID_BYTES + 1]);
int nccl_pair_uid_decode(const char *hex, unsigned char id[NCCL_PAIR_UID_BYTES], char *err, size_t errlen);

#ifdef __cplusplus
}
#endif
#endif
