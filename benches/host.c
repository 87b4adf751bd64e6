/*
 * host.c - can this host feed its GPUs?  Three CPU-side measurements, no
 * GPU needed, about 3-6 s in the quick profile on any machine:
 *
 * 1. Memory bandwidth per NUMA node (STREAM's copy and triad, as McCalpin's
 *    stream.c defines them).  Nodes measured: the ones NVML says the GPUs
 *    sit on; all nodes with CPUs when no GPU is visible or no GPU's node is
 *    known (params "selection").  Per node: one thread per core of the node,
 *    each bound to its core (hwloc_set_cpubind), three arrays of n doubles
 *    bound to the node (hwloc_alloc_membind; first touch by the bound
 *    threads where the kernel refuses mbind), each array >= 4x the last-level
 *    cache of the node and >= 80 MB (STREAM's rule and its default size).
 *    Each pass runs copy (c = a) then triad (a = b + q c), split statically
 *    over the threads between barriers; the best pass after the first
 *    counts, as STREAM reports:
 *
 *      host.membw.copy.gbps  = 2 * 8 n / min_t_copy  / 1e9
 *      host.membw.triad.gbps = 3 * 8 n / min_t_triad / 1e9
 *
 *    The result is checked: after k passes every a[i] equals x_k with
 *    x_0 = 1, x_k = 2 + 3 x_{k-1}.  Samples of both series, x = the node's
 *    OS index, one point per node.  Instance value (gpu -1): the GPUs' node,
 *    the lowest of several GPU nodes (the weakest one a GPU depends on), or
 *    with no GPU node the best node.  Params record the cpuset the threads
 *    were bound to and the PUs they last ran on (read back through hwloc),
 *    and the nodeset the arrays' pages are on.
 *
 * 2. JPEG decode with libjpeg-turbo's TurboJPEG API on every PU (one thread
 *    per PU, bound to it; GPUVET_HOST_DECODE_THREADS=N uses the first N),
 *    of four real photographs at ImageNet sizes embedded in the binary
 *    (benches/host_jpeg/, provenance in its README), each thread cycling
 *    through them into RGB for a fixed time:
 *
 *      host.decode.images_per_s         = images decoded / (start .. last image done)
 *      host.decode.images_per_s_per_gpu = that / GPUs visible (NVML); omitted
 *                                         without a GPU (params say why)
 *
 * 3. Staging: a file in /dev/shm (else the page cache of $TMPDIR, params
 *    "source") read sequentially in 32 MiB chunks into pinned memory
 *    (cudaHostAlloc) by one thread on the headline node; ordinary
 *    memory when CUDA has no device, with the reason in params:
 *
 *      host.staging.shm.gbps = file bytes / best pass seconds / 1e9
 *
 * The topology is restricted to the process's CPU binding, so under
 * taskset or a cpuset cgroup the bench uses only the CPUs it was given.
 * The staging file is unlinked as soon as it is open, so a killed bench
 * leaves nothing behind.
 */
#include "benches/bench.h"
#include "benches/host_int.h"
#include "platform/gv_nvml.h"
#include "common/util.h"

#include <cuda_runtime_api.h>
#include <errno.h>
#include <fcntl.h>
#include <hwloc.h>
#include <jansson.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <turbojpeg.h>
#include <unistd.h>

/* ---- plan ---- */

#define HOST_MIN_ARRAY   (80ull * 1000 * 1000)   /* STREAM's default: 10M doubles */
#define HOST_TRIAD_Q     3.0


static struct host_plan host_plan_for(enum bench_profile p)
{
	switch (p) {
	case PROFILE_FULL:
		return (struct host_plan){ 20, 4.0, 16.0, 10.0, 2048u << 20, 5 };
	case PROFILE_STANDARD:
		return (struct host_plan){ 20, 2.0, 8.0, 5.0, 1024u << 20, 5 };
	case PROFILE_QUICK:
	default:
		return (struct host_plan){ 10, 1.0, 4.0, 1.5, 256u << 20, 3 };
	}
}

static int host_deadline(const struct bench_config *cfg)
{
	struct host_plan pl = host_plan_for(cfg->profile);
	/* passes, first touch of up to 8 nodes, decode, staging file, CUDA start-up */
	return (int)(pl.membw_total_s + 8 * 1.5 + pl.decode_s + 30);
}

/* ---- small helpers ---- */

static char *host_bitmap_list(hwloc_const_bitmap_t b)
{
	char *s = NULL;
	if (!b || hwloc_bitmap_list_asprintf(&s, b) < 0)
		return gv_strdup("");
	return s;
}

static void host_set_list(json_t *o, const char *key, hwloc_const_bitmap_t b)
{
	char *s = host_bitmap_list(b);
	json_object_set_new(o, key, json_string(s));
	free(s);
}

/* ---- where the GPUs are (NVML, as the inventory reads it) ---- */



/* NVML's "00000000:18:00.0" as sysfs names it, "0000:18:00.0". */
static int host_gpu_sysfs_node(const char *bus_id)
{
	char sid[32], path[96], buf[32];
	size_t n = strlen(bus_id);
	if (n < 12 || n > 20)
		return -1;
	const char *tail = n > 12 ? bus_id + n - 12 : bus_id;
	size_t i;
	for (i = 0; tail[i] && i < sizeof sid - 1; i++)
		sid[i] = (char)(tail[i] >= 'A' && tail[i] <= 'F' ? tail[i] + 32 : tail[i]);
	sid[i] = 0;
	snprintf(path, sizeof path, "/sys/bus/pci/devices/%s/numa_node", sid);
	FILE *f = fopen(path, "r");
	long v = -1;
	if (!f)
		return -1;
	if (fgets(buf, sizeof buf, f))
		v = strtol(buf, NULL, 10);
	fclose(f);
	return v >= 0 && v < 65536 ? (int)v : -1;
}

static void host_find_gpus(hwloc_topology_t topo, struct host_gpus *g)
{
	const struct gv_nvml *n;
	unsigned cnt = 0;
	nvmlReturn_t rc = NVML_ERROR_FUNCTION_NOT_FOUND;
	memset(g, 0, sizeof *g);
	n = gv_nvml_load(g->why, sizeof g->why);
	if (!n)
		return;
	if (!n->DeviceGetCount || (rc = n->DeviceGetCount(&cnt)) != NVML_SUCCESS) {
		snprintf(g->why, sizeof g->why, "nvmlDeviceGetCount: %s",
			 n->DeviceGetCount ? gv_nvml_strerror(n, rc) : "missing");
		return;
	}
	if (!cnt) {
		snprintf(g->why, sizeof g->why, "nvml lists no gpu");
		return;
	}
	g->count = (int)cnt;
	for (unsigned i = 0; i < cnt; i++) {
		nvmlDevice_t d;
		unsigned node = 0;
		int os = -1;
		if (!n->DeviceGetHandleByIndex || n->DeviceGetHandleByIndex(i, &d) != NVML_SUCCESS)
			continue;
		if (n->DeviceGetNumaNodeId && n->DeviceGetNumaNodeId(d, &node) == NVML_SUCCESS) {
			os = (int)node;
		} else {
			nvmlPciInfo_t pci;
			if (n->DeviceGetPciInfo && n->DeviceGetPciInfo(d, &pci) == NVML_SUCCESS) {
				pci.busId[sizeof pci.busId - 1] = 0;
				os = host_gpu_sysfs_node(pci.busId);
			}
		}
		hwloc_obj_t o = os >= 0 ? hwloc_get_numanode_obj_by_os_index(topo, (unsigned)os) : NULL;
		if (o && o->logical_index < HOST_MAX_NODES) {
			g->on_node[o->logical_index]++;
			g->known++;
		}
	}
}

/* ---- 1. STREAM copy and triad on one node ---- */

/*
 * A sense-reversing barrier that spins (as OpenMP's runtime does before it
 * sleeps), so every thread starts a kernel at once: a futex wake-up that
 * lags the clock would count as memory time.  It yields after a while, for
 * machines with fewer free CPUs than threads.
 */
struct host_barrier {
	atomic_int count, sense;
	int n;
};

static void host_barrier_wait(struct host_barrier *b, int *local_sense)
{
	int s = !*local_sense;
	*local_sense = s;
	if (atomic_fetch_add(&b->count, 1) == b->n - 1) {
		atomic_store(&b->count, 0);
		atomic_store(&b->sense, s);
		return;
	}
	for (unsigned long spins = 0; atomic_load(&b->sense) != s; spins++) {
		if (spins > 20000)
			sched_yield();
#if defined(__x86_64__) || defined(__i386__)
		else
			__builtin_ia32_pause();
#endif
	}
}

struct host_node_result {
	int os_index, threads, passes;
	size_t n;                    /* elements per array */
	double copy_gbps, triad_gbps, llc_bytes;
	const char *array_rule;      /* what sized the arrays: 4 x the LLC, STREAM's minimum, or the memory cap */
	hwloc_bitmap_t bound, ran, mem;
	char membind[160];
};

struct host_membw {
	hwloc_topology_t topo;
	hwloc_obj_t node;
	double *a, *b, *c;
	size_t n;
	int nthreads, max_passes;
	double budget_s;
	struct host_barrier bar;
	pthread_mutex_t mu;
	double t0, t_copy[64], t_triad[64];
	int passes;                  /* done, set by thread 0 */
	atomic_int stop;
	hwloc_bitmap_t bound, ran;
	int bind_failed;
};

/*
 * The kernels, as functions with restrict parameters so the compiler may
 * treat them as STREAM's own loops: gcc -O2 turns the copy into memcpy (as
 * it does STREAM's, whose glibc version streams large copies with
 * non-temporal stores) and may vectorise the triad.
 */
__attribute__((noinline)) static void host_copy(double *restrict c, const double *restrict a, size_t lo, size_t hi)
{
	for (size_t i = lo; i < hi; i++)
		c[i] = a[i];
}

__attribute__((noinline)) static void host_triad(double *restrict a, const double *restrict b,
						 const double *restrict c, size_t lo, size_t hi)
{
	for (size_t i = lo; i < hi; i++)
		a[i] = b[i] + HOST_TRIAD_Q * c[i];
}

struct host_membw_thread {
	struct host_membw *m;
	int tid;
	hwloc_obj_t core;
};

static void *host_membw_worker(void *arg)
{
	struct host_membw_thread *t = arg;
	struct host_membw *m = t->m;
	size_t lo = m->n * (size_t)t->tid / (size_t)m->nthreads;
	size_t hi = m->n * (size_t)(t->tid + 1) / (size_t)m->nthreads;
	double *a = m->a, *b = m->b, *c = m->c;
	hwloc_bitmap_t set = hwloc_bitmap_alloc();
	int sense = 0;
	int bound = hwloc_set_cpubind(m->topo, t->core->cpuset, HWLOC_CPUBIND_THREAD) == 0;
	if (bound)
		bound = hwloc_get_cpubind(m->topo, set, HWLOC_CPUBIND_THREAD) == 0;
	/* first touch by the bound thread: pages land on its node even without mbind */
	for (size_t i = lo; i < hi; i++) {
		a[i] = 1.0;
		b[i] = 2.0;
		c[i] = 0.0;
	}
	for (int p = 0; p < 64; p++) {
		host_barrier_wait(&m->bar, &sense);
		if (atomic_load(&m->stop))
			break;
		if (t->tid == 0)
			m->t0 = bench_now();
		host_copy(c, a, lo, hi);
		host_barrier_wait(&m->bar, &sense);
		if (t->tid == 0) {
			double now = bench_now();
			m->t_copy[p] = now - m->t0;
			m->t0 = now;
		}
		host_barrier_wait(&m->bar, &sense);
		host_triad(a, b, c, lo, hi);
		host_barrier_wait(&m->bar, &sense);
		if (t->tid == 0) {
			m->t_triad[p] = bench_now() - m->t0;
			m->passes = p + 1;
			double spent = 0;
			for (int k = 0; k <= p; k++)
				spent += m->t_copy[k] + m->t_triad[k];
			if (m->passes >= m->max_passes || (m->passes >= 3 && spent > m->budget_s))
				atomic_store(&m->stop, 1);
		}
	}
	hwloc_bitmap_t last = hwloc_bitmap_alloc();
	int have_last = hwloc_get_last_cpu_location(m->topo, last, HWLOC_CPUBIND_THREAD) == 0;
	pthread_mutex_lock(&m->mu);
	if (bound)
		hwloc_bitmap_or(m->bound, m->bound, set);
	else
		m->bind_failed = 1;
	if (have_last)
		hwloc_bitmap_or(m->ran, m->ran, last);
	pthread_mutex_unlock(&m->mu);
	hwloc_bitmap_free(last);
	hwloc_bitmap_free(set);
	return NULL;
}

/* Sum of the deepest caches that serve the node's CPUs. */
static double host_llc_bytes(hwloc_topology_t topo, hwloc_const_cpuset_t cpus)
{
	static const hwloc_obj_type_t levels[] = { HWLOC_OBJ_L3CACHE, HWLOC_OBJ_L2CACHE, HWLOC_OBJ_L1CACHE };
	for (size_t l = 0; l < sizeof levels / sizeof levels[0]; l++) {
		double sum = 0;
		hwloc_obj_t o = NULL;
		while ((o = hwloc_get_next_obj_by_type(topo, levels[l], o)))
			if (o->cpuset && hwloc_bitmap_intersects(o->cpuset, cpus))
				sum += (double)o->attr->cache.size;
		if (sum > 0)
			return sum;
	}
	return 0;
}

static double *host_alloc_on(struct host_membw *m, size_t bytes, int *bound, char *why, size_t wlen)
{
	void *p = hwloc_alloc_membind(m->topo, bytes, m->node->nodeset, HWLOC_MEMBIND_BIND,
				      HWLOC_MEMBIND_BYNODESET);
	if (p) {
		*bound = 1;
		return p;
	}
	snprintf(why, wlen, "first touch by the bound threads (hwloc_alloc_membind: %s)", strerror(errno));
	*bound = 0;
	if (posix_memalign(&p, 4096, bytes))
		return NULL;
	return p;
}

/* The expected a[] after k passes: x_0 = 1, x_k = 2 + q x_{k-1}. */
static double host_expected(int k)
{
	double x = 1;
	for (int i = 0; i < k; i++)
		x = 2.0 + HOST_TRIAD_Q * x;
	return x;
}

/* Doubles per array: 4 x the node's last-level cache (at least HOST_MIN_ARRAY bytes), three arrays
 * in at most an eighth of the available memory and of the node's own; r->llc_bytes set. */
static size_t host_array_doubles(hwloc_topology_t topo, hwloc_obj_t node, struct host_node_result *r)
{
	r->llc_bytes = host_llc_bytes(topo, node->cpuset);
	double want = 4 * r->llc_bytes > (double)HOST_MIN_ARRAY ? 4 * r->llc_bytes : (double)HOST_MIN_ARRAY;
	long avail = host_mem_available();
	double cap = avail > 0 ? (double)avail / 8.0 / 3.0 : want;   /* 3 arrays in an eighth */
	if (node->attr && node->attr->numanode.local_memory &&
	    (double)node->attr->numanode.local_memory / 8.0 / 3.0 < cap)
		cap = (double)node->attr->numanode.local_memory / 8.0 / 3.0;
	r->array_rule = 4 * r->llc_bytes > (double)HOST_MIN_ARRAY ? "4 x llc" : "stream minimum";
	if (want > cap) {   /* a large cache on a small machine: the arrays as large as memory allows, and said */
		want = cap;
		r->array_rule = host_mem_test_bytes() > 0 ? "an eighth of GPUVET_TEST_HOST_MEM_MB (under 4 x llc)"
							     : "an eighth of available memory (under 4 x llc)";
	}
	return (size_t)(want / 8) / 4096 * 4096;
}

/* The passes' result checked (every sampled a[i] is x_k exactly) and the best pass kept: 0, or -1 said. */
static int host_membw_result(struct bench_ctx *ctx, hwloc_topology_t topo, hwloc_obj_t node,
			     const struct host_membw *mp, size_t bytes, struct host_node_result *r)
{
	/* check: every sampled a[i] is x_k exactly */
	double expect = host_expected(mp->passes);
	for (size_t i = 0; i < mp->n; i += mp->n / 1024 + 1)
		if (mp->a[i] != expect) {
			bench_reason(ctx, "numa node %u: triad result a[%zu] = %g, expected %g", node->os_index, i,
				     mp->a[i], expect);
			return -1;
		}
	if (mp->passes < 2) {
		bench_reason(ctx, "numa node %u: only %d pass", node->os_index, mp->passes);
		return -1;
	}
	double best_c = mp->t_copy[1], best_t = mp->t_triad[1];
	for (int p = 2; p < mp->passes; p++) {
		if (mp->t_copy[p] < best_c)
			best_c = mp->t_copy[p];
		if (mp->t_triad[p] < best_t)
			best_t = mp->t_triad[p];
	}
	r->threads = mp->nthreads;
	r->passes = mp->passes;
	r->n = mp->n;
	r->copy_gbps = 2.0 * (double)bytes / best_c / 1e9;
	r->triad_gbps = 3.0 * (double)bytes / best_t / 1e9;
	r->bound = mp->bind_failed ? hwloc_bitmap_alloc() : hwloc_bitmap_dup(mp->bound);
	r->ran = hwloc_bitmap_dup(mp->ran);
	r->mem = hwloc_bitmap_alloc();
	if (hwloc_get_area_memlocation(topo, mp->a, bytes, r->mem, HWLOC_MEMBIND_BYNODESET) < 0)
		hwloc_bitmap_zero(r->mem);
	return 0;
}

static int host_membw_node(struct bench_ctx *ctx, hwloc_topology_t topo, hwloc_obj_t node,
			   const struct host_plan *pl, struct host_node_result *r)
{
	struct host_membw m = { .topo = topo, .node = node, .max_passes = pl->membw_passes,
				.budget_s = pl->membw_budget_s };
	int ncores = hwloc_get_nbobjs_inside_cpuset_by_type(topo, node->cpuset, HWLOC_OBJ_CORE);
	hwloc_obj_type_t unit = HWLOC_OBJ_CORE;
	int rc = BENCH_FAIL, abound = 0, bbound = 0, cbound = 0;
	if (ncores <= 0) {
		unit = HWLOC_OBJ_PU;
		ncores = hwloc_get_nbobjs_inside_cpuset_by_type(topo, node->cpuset, HWLOC_OBJ_PU);
	}
	r->os_index = (int)node->os_index;
	m.nthreads = ncores;
	m.n = host_array_doubles(topo, node, r);
	if (m.nthreads <= 0 || m.n < 4096) {
		bench_reason(ctx, "numa node %u: no cores or no memory to measure", node->os_index);
		return BENCH_FAIL;
	}
	size_t bytes = m.n * sizeof(double);
	m.a = host_alloc_on(&m, bytes, &abound, r->membind, sizeof r->membind);
	m.b = host_alloc_on(&m, bytes, &bbound, r->membind, sizeof r->membind);
	m.c = host_alloc_on(&m, bytes, &cbound, r->membind, sizeof r->membind);
	if (abound && bbound && cbound)
		snprintf(r->membind, sizeof r->membind, "hwloc_alloc_membind bind");
	struct host_membw_thread *th = gv_calloc((size_t)m.nthreads, sizeof *th);
	pthread_t *tid = gv_calloc((size_t)m.nthreads, sizeof *tid);
	int started = 0;
	m.bound = hwloc_bitmap_alloc();
	m.ran = hwloc_bitmap_alloc();
	pthread_mutex_init(&m.mu, NULL);
	if (!m.a || !m.b || !m.c) {
		bench_reason(ctx, "numa node %u: cannot allocate 3 x %zu bytes", node->os_index, bytes);
		goto out;
	}
	m.bar.n = m.nthreads;
	for (int i = 0; i < m.nthreads; i++) {
		th[i] = (struct host_membw_thread){ &m, i,
			hwloc_get_obj_inside_cpuset_by_type(topo, node->cpuset, unit, (unsigned)i) };
		if (pthread_create(&tid[i], NULL, host_membw_worker, &th[i])) {
			bench_reason(ctx, "numa node %u: cannot start thread %d", node->os_index, i);
			abort();  /* the barrier would wait forever; the harness records the crash */
		}
		started++;
	}
	for (int i = 0; i < started; i++)
		pthread_join(tid[i], NULL);

	if (host_membw_result(ctx, topo, node, &m, bytes, r))
		goto out;
	rc = BENCH_OK;
out:
	pthread_mutex_destroy(&m.mu);
	hwloc_bitmap_free(m.bound);
	hwloc_bitmap_free(m.ran);
	free(th);
	free(tid);
	if (abound)
		hwloc_free(topo, m.a, bytes);
	else
		free(m.a);
	if (bbound)
		hwloc_free(topo, m.b, bytes);
	else
		free(m.b);
	if (cbound)
		hwloc_free(topo, m.c, bytes);
	else
		free(m.c);
	return rc;
}

/*
 * Nodes to measure: the GPUs' nodes (*gpu_nodes = 1), else every node with
 * CPUs; *selection says which and why.
 */
static int host_pick_nodes(hwloc_topology_t topo, const struct host_gpus *g, hwloc_obj_t *out,
			   const char **selection, int *gpu_nodes)
{
	int nn = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_NUMANODE), k = 0;
	*gpu_nodes = 0;
	for (int pass = 0; pass < 2 && !k; pass++) {
		if (pass == 0 && !g->known)
			continue;
		for (int i = 0; i < nn && i < HOST_MAX_NODES; i++) {
			hwloc_obj_t o = hwloc_get_obj_by_type(topo, HWLOC_OBJ_NUMANODE, (unsigned)i);
			if (!o || !o->cpuset || hwloc_bitmap_iszero(o->cpuset))
				continue;   /* memory-only node (CXL, HBM without cores) */
			if (pass == 0 && !g->on_node[i])
				continue;
			out[k++] = o;
		}
		*gpu_nodes = pass == 0 && k > 0;
		*selection = pass == 0 ? "numa nodes with a gpu (nvml)"
			     : g->known ? "all numa nodes: the gpus' numa nodes have no cpus"
			     : g->count ? "all numa nodes: no gpu's numa node is known"
					: "all numa nodes: no gpu visible";
	}
	return k;
}

static void host_node_params(json_t *p, hwloc_obj_t node, const struct host_node_result *r)
{
	json_object_set_new(p, "node", json_integer(r->os_index));
	json_object_set_new(p, "threads", json_integer(r->threads));
	json_object_set_new(p, "elements", json_integer((json_int_t)r->n));
	json_object_set_new(p, "array_bytes", json_integer((json_int_t)(r->n * sizeof(double))));
	json_object_set_new(p, "llc_bytes", json_integer((json_int_t)r->llc_bytes));
	json_object_set_new(p, "array_rule", json_string(r->array_rule ? r->array_rule : ""));
	json_object_set_new(p, "passes", json_integer(r->passes));
	json_object_set_new(p, "best_of", json_integer(r->passes - 1));
	host_set_list(p, "node_cpuset", node->cpuset);
	host_set_list(p, "cpuset", r->bound);
	host_set_list(p, "ran_on", r->ran);
	host_set_list(p, "mem_nodeset", r->mem);
	json_object_set_new(p, "membind", json_string(r->membind));
}

/* Measures the nodes; *headline gets the node the instance value comes from. */
static int host_membw(struct bench_ctx *ctx, hwloc_topology_t topo, const struct host_plan *pl,
		      const struct host_gpus *g, hwloc_obj_t *headline)
{
	hwloc_obj_t nodes[HOST_MAX_NODES];
	struct host_node_result res[HOST_MAX_NODES];
	const char *selection = "";
	int gpu_nodes, k = host_pick_nodes(topo, g, nodes, &selection, &gpu_nodes), best = -1, rc = BENCH_OK;
	struct host_plan plan = *pl;
	json_t *list = json_array();
	*headline = NULL;
	memset(res, 0, sizeof res);
	if (!k) {
		bench_reason(ctx, "no numa node with cpus in the topology");
		json_decref(list);
		return BENCH_FAIL;
	}
	/* many nodes share membw_total_s, so the quick profile stays within 10 s on any machine */
	if (plan.membw_budget_s * k > plan.membw_total_s)
		plan.membw_budget_s = plan.membw_total_s / k;
	for (int i = 0; i < k; i++) {
		if (host_membw_node(ctx, topo, nodes[i], &plan, &res[i]) != BENCH_OK) {
			rc = BENCH_FAIL;
			continue;
		}
		bench_sample(ctx, "host.membw.copy.gbps", -1, res[i].os_index, res[i].copy_gbps);
		bench_sample(ctx, "host.membw.triad.gbps", -1, res[i].os_index, res[i].triad_gbps);
		bench_log(ctx, "numa node %d: %d threads, 3 x %zu doubles: copy %.2f GB/s, triad %.2f GB/s",
			  res[i].os_index, res[i].threads, res[i].n, res[i].copy_gbps, res[i].triad_gbps);
		json_array_append_new(list, json_integer(res[i].os_index));
		/* GPU nodes: the weakest one a GPU depends on; without: the best node */
		if (best < 0 || (gpu_nodes ? res[i].triad_gbps < res[best].triad_gbps
					   : res[i].triad_gbps > res[best].triad_gbps))
			best = i;
		bench_progress(ctx, 0.05 + 0.45 * (i + 1) / k);
	}
	if (best >= 0) {
		json_t *p = json_object();
		host_node_params(p, nodes[best], &res[best]);
		json_object_set_new(p, "selection", json_string(selection));
		json_object_set_new(p, "nodes_measured", list);
		json_object_set_new(p, "instance_value", json_string(gpu_nodes ? "lowest gpu node" : "best node"));
		json_object_set_new(p, "gpus_on_node",
				    json_integer(gpu_nodes ? g->on_node[nodes[best]->logical_index] : 0));
		json_object_set_new(p, "gpus", json_integer(g->count));
		char *ps = host_params(p);
		bench_metric(ctx, "host.membw.copy.gbps", -1, res[best].copy_gbps, "GB/s", ps);
		bench_metric(ctx, "host.membw.triad.gbps", -1, res[best].triad_gbps, "GB/s", ps);
		free(ps);
		json_decref(p);
		*headline = nodes[best];
	} else {
		json_decref(list);
	}
	for (int i = 0; i < k; i++) {
		if (res[i].bound)
			hwloc_bitmap_free(res[i].bound);
		if (res[i].ran)
			hwloc_bitmap_free(res[i].ran);
		if (res[i].mem)
			hwloc_bitmap_free(res[i].mem);
	}
	return rc;
}

/* ---- the bench ---- */

static int host_run(struct bench_ctx *ctx, const struct bench_config *cfg)
{
	struct host_plan pl = host_plan_for(cfg->profile);
	struct host_gpus *g = gv_calloc(1, sizeof *g);
	hwloc_topology_t topo;
	hwloc_obj_t node = NULL;
	int rc, r;
	/* the process's own binding (taskset, a cgroup) bounds every thread the bench starts */
	if (hwloc_topology_init(&topo) ||
	    hwloc_topology_set_flags(topo, HWLOC_TOPOLOGY_FLAG_RESTRICT_TO_CPUBINDING |
					   HWLOC_TOPOLOGY_FLAG_IS_THISSYSTEM) ||
	    hwloc_topology_load(topo)) {
		bench_reason(ctx, "hwloc cannot load the machine's topology");
		free(g);
		return BENCH_FAIL;
	}
	host_find_gpus(topo, g);
	char echo[256];
	snprintf(echo, sizeof echo,
		 "{\"membw_max_passes\":%d,\"membw_budget_s\":%g,\"decode_s\":%g,\"stage_bytes\":%zu,\"stage_passes\":%d}",
		 pl.membw_passes, pl.membw_budget_s, pl.decode_s, pl.stage_bytes, pl.stage_passes);
	bench_config_echo(ctx, echo);
	bench_progress(ctx, 0.02);
	rc = host_membw(ctx, topo, &pl, g, &node);
	r = host_decode(ctx, topo, &pl, g);
	if (rc == BENCH_OK)
		rc = r;
	r = host_staging(ctx, topo, &pl, node);
	if (rc == BENCH_OK)
		rc = r;
	hwloc_topology_destroy(topo);
	free(g);
	return rc;
}

/* What each metric is (benches/bench.h): all throughputs, ranked per dollar. */
static const struct metric_info host_metrics[] = {
	{ "host.membw.copy.gbps", "GB/s", "host memory copy", METRIC_RANKABLE, METRIC_PEAK_NONE },
	{ "host.membw.triad.gbps", "GB/s", "host memory triad", METRIC_RANKABLE, METRIC_PEAK_NONE },
	{ "host.decode.images_per_s", "images/s", "JPEG decode", METRIC_RANKABLE, METRIC_PEAK_NONE },
	{ "host.decode.images_per_s_per_gpu", "images/s", "JPEG decode per GPU", METRIC_RANKABLE | METRIC_PER_GPU,
	  METRIC_PEAK_NONE },
	{ "host.staging.shm.gbps", "GB/s", "/dev/shm staging", METRIC_RANKABLE, METRIC_PEAK_NONE },
	{ NULL, NULL, NULL, 0, METRIC_PEAK_NONE },
};

/* The series it samples (struct bench .series): judged under this bench only. */
static const char *const host_series[] = { "host.membw.copy.gbps", "host.membw.triad.gbps", NULL };

const struct bench bench_host = {
	.name = "host",
	.summary = "can the host feed its gpus: numa memory bandwidth, jpeg decode, /dev/shm staging",
	.flags = 0,
	.deadline_s = host_deadline,
	.run = host_run,
	.metrics = host_metrics,
	.series = host_series,
};
