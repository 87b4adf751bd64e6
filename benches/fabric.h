/*
 * fabric.h - host-to-host transport of `gpuvet cluster run`'s pairs (#49):
 * libfabric, loaded with dlopen at run time (gpuvet starts without it), an
 * RDM endpoint (FI_EP_RDM, FI_MSG) on the best provider the node has (efa >
 * verbs;ofi_rxm > tcp), and a pair measurement: bandwidth a->b then b->a,
 * each timed by its receiver, then an 8-byte ping-pong.  Every wait polls its
 * completion queue against a deadline: a dead peer is an error, never a hang.
 *
 * Environment: GPUVET_LIBFABRIC (the library's path, e.g. the EFA
 * installer's /opt/amazon/efa/lib/libfabric.so.1), GPUVET_FABRIC_PROVIDER
 * (force a provider by name, "tcp" or "tcp;ofi_rxm", "efa", "verbs"...), GPUVET_FABRIC_WAIT
 * (poll | sleep: how completions are waited for; fabric_wait()).
 */
#ifndef GPUVET_FABRIC_H
#define GPUVET_FABRIC_H

#include <stddef.h>

struct fabric;
/* dlopen("libfabric.so.1") (GPUVET_LIBFABRIC overrides the path, as the EFA installer's
 * /opt/amazon/efa/lib/libfabric.so.1), fi_getinfo for an RDM endpoint bound to src_ip (NULL:
 * any), provider by preference efa > verbs (ofi_rxm) > tcp (GPUVET_FABRIC_PROVIDER=NAME forces
 * one).  0, or -1 with err: the one-line reason a run prints as "skipped: ..." */
int fabric_open(const char *src_ip, struct fabric **f, char *err, size_t errlen);
const char *fabric_provider(const struct fabric *f);   /* e.g. "tcp", "efa", "verbs;ofi_rxm" */
const char *fabric_addr(const struct fabric *f);       /* this endpoint's address, printable (hex) */
struct fabric_pair_opts {
	size_t msg_bytes;          /* bandwidth message size (default 1 MiB when 0) */
	double seconds_each_way;   /* bandwidth phase length each way (default 0.5 s when 0) */
	int lat_iters;             /* ping-pong round trips of 8 bytes (default 200 when 0) */
	int timeout_ms;            /* the whole pair, both ways and latency (default 20000 when 0) */
};
struct fabric_pair_result { double gbps_ab, gbps_ba, lat_us; }; /* GB/s (1e9 bytes/s), us one-way */
/* Both nodes of a pair call it at the same time with the other's fabric_addr; lower = 1 on the
 * pair's lower rank ("a").  Measures a->b, then b->a (each timed by the receiver, bytes it got
 * over its elapsed time), then latency; both sides return the same three figures.  -1 with err
 * on timeout or a lost peer (never hangs past timeout_ms). */
int fabric_pair(struct fabric *f, const char *peer_addr, int lower, const struct fabric_pair_opts *o,
		struct fabric_pair_result *res, char *err, size_t errlen);
void fabric_close(struct fabric *f);

/* Beyond the design's list: */

/* The library's version, "1.17" (fi_version's major.minor). */
const char *fabric_lib_version(const struct fabric *f);
/* How completions are waited for, "poll" or "sleep" (GPUVET_FABRIC_WAIT; fabric.c says which when). */
const char *fabric_wait(const struct fabric *f);
/* The chosen endpoint's NIC link rate as libfabric states it (fi_info's nic->link_attr->speed,
 * bits/s) and the NIC's name ("" when it has none); -1 when the provider gives none. */
int fabric_link_speed(const struct fabric *f, double *bits_per_s, char *nic, size_t niclen);

#endif
