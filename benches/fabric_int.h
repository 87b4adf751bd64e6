/*
 * fabric_int.h - what benches/fabric.c (loading, the endpoint) and
 * benches/fabric_pair.c (the pair measurement) share.
 *
 * Only the few libfabric functions the library exports are looked up with
 * dlsym (struct fabric_lib); every other fi_* call of <rdma/fi_*.h> is a
 * static inline that goes through the object's ops table, so it needs no
 * symbol of the library (`ldd gpuvet` names no libfabric).
 */
#ifndef GPUVET_FABRIC_INT_H
#define GPUVET_FABRIC_INT_H

#include "benches/fabric.h"

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <stdint.h>

struct fabric_lib {
	int (*getinfo)(uint32_t, const char *, const char *, uint64_t, const struct fi_info *, struct fi_info **);
	void (*freeinfo)(struct fi_info *);
	struct fi_info *(*dupinfo)(const struct fi_info *);
	int (*fabric)(struct fi_fabric_attr *, struct fid_fabric **, void *);
	const char *(*strerror)(int);
	uint32_t (*version)(void);
};

#define FABRIC_RX_SLOTS 16    /* receives kept posted */
#define FABRIC_TX_SLOTS 160   /* sends in flight at most: the window and control messages, and what
				 a failed pair leaves stuck toward its dead peer (one window each) */
#ifndef FABRIC_WINDOW
#define FABRIC_WINDOW   8     /* data sends in flight while streaming */
#endif
#define FABRIC_AV_CACHE 64    /* peers' addresses inserted once each */

/* A send in flight: its context (FI_CONTEXT/FI_CONTEXT2 modes) and, for control messages, its bytes. */
struct fabric_txop {
	struct fi_context2 ctx;
	int busy;
	fi_addr_t dest;
	unsigned char msg[64];
};

struct fabric_rxop {
	struct fi_context2 ctx;
	unsigned char *buf;
	int repost;                        /* taken, to be posted again */
};

struct fabric {
	const struct fabric_lib *lib;
	struct fi_info *info;
	struct fid_fabric *fab;
	struct fid_domain *dom;
	struct fid_cq *cq;                 /* sends and receives complete here */
	int cq_wait;                       /* it has a wait object: fi_cq_sread sleeps until a completion */
	struct fid_av *av;
	struct fid_ep *ep;
	int mr_local;                      /* FI_MR_LOCAL: buffers registered, descriptors passed */
	char provider[64];
	char addr[2 * 256 + 1];            /* hex of fi_getname */
	char version[16];
	uint64_t hash;                     /* FNV-1a of addr: every message says who sent it */
	/* the buffers, made by the first fabric_pair (their size is its msg_bytes) */
	size_t msg_bytes;
	unsigned char *rxmem, *txdata;
	struct fid_mr *rxmr, *txmr, *ctlmr;
	struct fabric_rxop rx[FABRIC_RX_SLOTS];
	struct fabric_txop tx[FABRIC_TX_SLOTS];
	int tx_busy;                       /* sends posted and not completed */
	struct { char hex[2 * 256 + 1]; fi_addr_t fa; } av_cache[FABRIC_AV_CACHE];
	int nav;
	/* hellos of peers whose pair had not begun here yet (a partner a round ahead): their hashes */
	uint64_t early[FABRIC_AV_CACHE];
	int nearly;
	int broken;                        /* a pair failed with traffic possibly in flight: never closed */
	struct fabric *next_kept;          /* fabric.c's list of those */
};

/* fabric.c: fi_strerror of a negative libfabric return, through the loaded library. */
const char *fabric_strerr(const struct fabric *f, int rc);
/* fabric.c: the peer's hex address in the address vector (inserted once). 0, or -1 with err. */
int fabric_peer(struct fabric *f, const char *hex, fi_addr_t *fa, char *err, size_t errlen);
/* fabric.c: the buffers for msg_bytes messages, receives posted.  0, or -1 with err. */
int fabric_buffers(struct fabric *f, size_t msg_bytes, char *err, size_t errlen);
/* fabric.c: posts receive slot i again. 0, or a negative libfabric code. */
int fabric_post_rx(struct fabric *f, int i);
uint64_t fabric_fnv(const char *s);
/* Where a provider (fi_info's prov_name) stands: 0 efa, 1 verbs, 2 tcp (each alone or under a
 * utility provider: "verbs;ofi_rxm"), -1 not taken; with forced (GPUVET_FABRIC_PROVIDER) 0 when
 * the name is forced or begins with it ("tcp" takes "tcp;ofi_rxm"), else -1. */
int fabric_prov_rank(const char *name, const char *forced);

#endif
