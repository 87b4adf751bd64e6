/*
 * host_int.h - private to benches/host*.c: what the host bench's file
 * (host.c: plan, memory bandwidth, the bench row; it calls the parts), its
 * JPEG decode (host_decode.c) and staging (host_staging.c) measurements and
 * the helpers they share below them (host_util.c) declare to each other.
 */
#ifndef GPUVET_HOST_INT_H
#define GPUVET_HOST_INT_H

#include "benches/bench.h"

#include <hwloc.h>
#include <jansson.h>
#include <stddef.h>

#define HOST_MAX_NODES   256
#define HOST_STAGE_CHUNK (32u << 20)
#define HOST_STAGE_NBUF  3

struct host_plan {
	int membw_passes;        /* at most; at least 3 */
	double membw_budget_s;   /* per node, both kernels */
	double membw_total_s;    /* all nodes together: many nodes get less each */
	double decode_s;
	size_t stage_bytes;
	int stage_passes;
};

/* Where the GPUs are (NVML, as the inventory reads it): host.c host_find_gpus. */
struct host_gpus {
	int count;                       /* NVML's device count; 0 with why */
	int known;                       /* GPUs whose NUMA node is known */
	int on_node[HOST_MAX_NODES];     /* by hwloc NUMA node logical index */
	char why[256];
};

/* host_util.c: MemAvailable of /proc/meminfo in bytes, -1 unknown; or host_mem_test_bytes() where a test gives it. */
long host_mem_available(void);
/* host_util.c: GPUVET_TEST_HOST_MEM_MB in bytes, read only with GPUVET_TEST_BENCHES=1 (tests running several host
 * benches at once on a small machine size their arrays and staging file by it); -1 when not given. */
long host_mem_test_bytes(void);
/* host_util.c: a params object as the metric rows' JSON text (malloc'd). */
char *host_params(const json_t *params);
/* host_decode.c: 2. JPEG decode on every PU */
int host_decode(struct bench_ctx *ctx, hwloc_topology_t topo, const struct host_plan *pl, const struct host_gpus *g);

/* host_staging.c: 3. staging into pinned memory, on the GPUs' node */
int host_staging(struct bench_ctx *ctx, hwloc_topology_t topo, const struct host_plan *pl, hwloc_obj_t node);

#endif
