/*
 * memcpy.cu - host<->device and device-local copy bandwidth, per GPU.
 *
 * Per GPU, one at a time: the thread is bound to the GPU's NUMA node (CPU
 * affinity and a preferred-node memory policy, set_mempolicy(2) directly)
 * before the host buffers are allocated, so pinned (cudaHostAlloc) and
 * pageable (malloc, touched) memory sit next to the GPU.
 *
 * Pinned copies (H2D, D2H, bidirectional, D2D) are timed with CUDA events
 * around a batch of `copies` back-to-back cudaMemcpyAsync calls, enqueued
 * behind a spin gate so launch overhead stays out of the timed region (as
 * nvbandwidth).  Bidirectional: H2D on one stream and D2H on another,
 * started by one event, bytes of both directions counted.  Pageable copies
 * cannot be gated (the driver stages them through its own pinned buffer
 * with the host thread inside the call), so they are timed on the host
 * clock around the batch plus a stream synchronisation, as a user's
 * tensor.copy_ from pageable memory is; pageable bidirectional runs H2D
 * and D2H from two host threads released together by a barrier.
 *
 * GB/s = bytes moved / seconds / 1e9 (not GiB).  D2D counts the bytes
 * copied once (the GPU reads and writes each: 2x in DRAM traffic).  The
 * sweep's sizes take the median of 3 batches; the headline is the largest
 * size (memcpy_max_bytes, bounded by free memory), measured for a fixed
 * time whatever the speed: MC_WARM_S of batches not counted, then batches
 * for the profile's window (0.25 s quick, 0.5 s standard, 1 s full, at
 * least 5), and the median of those.
 *
 * memcpy.h2d.pct_of_link = pinned H2D GB/s / gpu_pcie_link_gbps(gen,
 * width), with gen and width read from NVML while the headline batch is in
 * flight (an idle link may train down to save power).
 */
#include "benches/gpu_common.cuh"
#include "common/stats.h"

#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>


enum mc_kind { MC_H2D = 0, MC_D2H, MC_BIDIR, MC_D2D, MC_KIND_COUNT };

struct mc {
	int dev;
	cudaStream_t s1, s2;
	cudaEvent_t start, stop, mid;
	void *hpin_a, *hpin_b, *hpage, *hpage_b, *dbuf_a, *dbuf_b;
	size_t max;
	struct gv_gate gate;
	const struct gv_nvml *nvml;
	nvmlDevice_t nvdev;
	int have_nvdev;
	unsigned link_gen, link_width;   /* read during the headline H2D batch */
};

static int memcpy_deadline(const struct bench_config *cfg)
{
	switch (cfg->profile) {
	case PROFILE_STANDARD: return 900;
	case PROFILE_FULL: return 1800;
	case PROFILE_QUICK:
	default: return 240;
	}
}

static int memcpy_probe(struct bench_ctx *ctx, const struct bench_config *cfg)
{
	(void)cfg;
	int n;
	return gv_probe_gpus(ctx, &n);
}

static void mc_src_dst(struct mc *m, enum mc_kind k, int pinned, void **dst, const void **src,
		       cudaMemcpyKind *kind)
{
	void *host_in = pinned ? m->hpin_a : m->hpage, *host_out = pinned ? m->hpin_b : m->hpage_b;
	switch (k) {
	case MC_H2D: *dst = m->dbuf_a; *src = host_in; *kind = cudaMemcpyHostToDevice; break;
	case MC_D2H: *dst = host_out; *src = m->dbuf_b; *kind = cudaMemcpyDeviceToHost; break;
	case MC_D2D: default: *dst = m->dbuf_b; *src = m->dbuf_a; *kind = cudaMemcpyDeviceToDevice; break;
	}
}

/* One gated batch of pinned copies; GB/s into *gbps.  sample_link: read the PCIe link while in flight. */
static int mc_pinned_batch(struct mc *m, enum mc_kind k, size_t bytes, int copies, int sample_link, double *gbps,
			   struct gv_gerr *err)
{
	float ms = 0;
	void *dst;
	const void *src;
	cudaMemcpyKind kind;
	double moved = (double)bytes * copies * (k == MC_BIDIR ? 2 : 1);

	gv_gate_close(&m->gate);
	if (gv_gate_block(&m->gate, m->s1, 30.0, err))
		goto fail_open;
	GV_CUDA(err, cudaEventRecord(m->start, m->s1));
	if (k == MC_BIDIR) {
		GV_CUDA(err, cudaStreamWaitEvent(m->s2, m->start, 0));
		for (int i = 0; i < copies; i++) {
			GV_CUDA(err, cudaMemcpyAsync(m->dbuf_a, m->hpin_a, bytes, cudaMemcpyHostToDevice, m->s1));
			GV_CUDA(err, cudaMemcpyAsync(m->hpin_b, m->dbuf_b, bytes, cudaMemcpyDeviceToHost, m->s2));
		}
		GV_CUDA(err, cudaEventRecord(m->mid, m->s2));
		GV_CUDA(err, cudaStreamWaitEvent(m->s1, m->mid, 0));
	} else {
		mc_src_dst(m, k, 1, &dst, &src, &kind);
		for (int i = 0; i < copies; i++)
			GV_CUDA(err, cudaMemcpyAsync(dst, src, bytes, kind, m->s1));
	}
	GV_CUDA(err, cudaEventRecord(m->stop, m->s1));
	gv_gate_open(&m->gate);
	if (sample_link && m->have_nvdev) {
		usleep(2000);   /* the copies are running now */
		unsigned g = 0, w = 0;
		if (m->nvml->DeviceGetCurrPcieLinkGeneration &&
		    m->nvml->DeviceGetCurrPcieLinkGeneration(m->nvdev, &g) == NVML_SUCCESS)
			m->link_gen = g;
		if (m->nvml->DeviceGetCurrPcieLinkWidth &&
		    m->nvml->DeviceGetCurrPcieLinkWidth(m->nvdev, &w) == NVML_SUCCESS)
			m->link_width = w;
	}
	GV_CUDA(err, cudaEventSynchronize(m->stop));
	GV_CUDA(err, cudaEventElapsedTime(&ms, m->start, m->stop));
	*gbps = bw_gbps(moved, ms / 1e3);
	return 0;
fail_open:
	gv_gate_open(&m->gate);
	cudaStreamSynchronize(m->s1);
	cudaStreamSynchronize(m->s2);
	return -1;
fail:
	gv_gate_open(&m->gate);
	cudaStreamSynchronize(m->s1);
	cudaStreamSynchronize(m->s2);
	return -1;
}

/* One batch of pageable copies, host clock around the batch and the synchronisation. */
static int mc_pageable_batch(struct mc *m, enum mc_kind k, size_t bytes, int copies, double *gbps,
			     struct gv_gerr *err)
{
	void *dst;
	const void *src;
	cudaMemcpyKind kind;
	double t0;
	mc_src_dst(m, k, 0, &dst, &src, &kind);
	GV_CUDA(err, cudaStreamSynchronize(m->s1));
	t0 = bench_now();
	for (int i = 0; i < copies; i++)
		GV_CUDA(err, cudaMemcpyAsync(dst, src, bytes, kind, m->s1));
	GV_CUDA(err, cudaStreamSynchronize(m->s1));
	*gbps = bw_gbps((double)bytes * copies, bench_now() - t0);
	return 0;
fail:
	return -1;
}

static void mc_free(struct mc *m)
{
	if (cudaSetDevice(m->dev) != cudaSuccess)
		return;
	cudaFreeHost(m->hpin_a);
	cudaFreeHost(m->hpin_b);
	free(m->hpage);
	free(m->hpage_b);
	cudaFree(m->dbuf_a);
	cudaFree(m->dbuf_b);
	if (m->start) cudaEventDestroy(m->start);
	if (m->stop) cudaEventDestroy(m->stop);
	if (m->mid) cudaEventDestroy(m->mid);
	if (m->s1) cudaStreamDestroy(m->s1);
	if (m->s2) cudaStreamDestroy(m->s2);
	gv_gate_free(&m->gate);
}

#define MC_MAX_GPUS 64
/* result slots: 4 pinned kinds + 2 pageable */
enum { R_H2D_PIN, R_D2H_PIN, R_BIDIR_PIN, R_D2D, R_H2D_PAGE, R_D2H_PAGE, R_BIDIR_PAGE, R_COUNT };
static const char *const r_metric[R_COUNT] = {
	"memcpy.h2d.pinned.gbps", "memcpy.d2h.pinned.gbps", "memcpy.bidir.pinned.gbps", "memcpy.d2d.gbps",
	"memcpy.h2d.pageable.gbps", "memcpy.d2h.pageable.gbps", "memcpy.bidir.pageable.gbps",
};

/*
 * Pageable bidirectional: two host threads, H2D on one stream and D2H on the
 * other, released together once both are ready; time from the release
 * until both have synchronised, bytes of both directions counted.
 */
struct mc_dir_arg {
	struct mc *m;
	enum mc_kind k;
	size_t bytes;
	int copies;
	int *ready, *go;      /* __atomic; go: 1 run, -1 give up */
	double t_end;
	struct gv_gerr err;
};

static void *mc_dir_thread(void *p)
{
	struct mc_dir_arg *a = (struct mc_dir_arg *)p;
	void *dst;
	const void *src;
	cudaMemcpyKind kind;
	cudaStream_t s = a->k == MC_H2D ? a->m->s1 : a->m->s2;
	int go;
	mc_src_dst(a->m, a->k, 0, &dst, &src, &kind);
	GV_CUDA(&a->err, cudaSetDevice(a->m->dev));
	__atomic_add_fetch(a->ready, 1, __ATOMIC_ACQ_REL);
	while ((go = __atomic_load_n(a->go, __ATOMIC_ACQUIRE)) == 0)
		sched_yield();
	if (go < 0)
		return NULL;
	for (int i = 0; i < a->copies; i++)
		GV_CUDA(&a->err, cudaMemcpyAsync(dst, src, a->bytes, kind, s));
	GV_CUDA(&a->err, cudaStreamSynchronize(s));
	a->t_end = bench_now();
	return NULL;
fail:
	__atomic_add_fetch(a->ready, 1, __ATOMIC_ACQ_REL);   /* never leave the caller waiting */
	return NULL;
}

static int mc_pageable_bidir(struct mc *m, size_t bytes, int copies, double *gbps, struct gv_gerr *err)
{
	pthread_t th[2];
	struct mc_dir_arg a[2];
	int started = 0, ready = 0, go = 0;
	double t0;
	memset(a, 0, sizeof a);
	for (int i = 0; i < 2; i++) {
		a[i].m = m;
		a[i].k = i == 0 ? MC_H2D : MC_D2H;
		a[i].bytes = bytes;
		a[i].copies = copies;
		a[i].ready = &ready;
		a[i].go = &go;
		if (pthread_create(&th[i], NULL, mc_dir_thread, &a[i]))
			break;
		started++;
	}
	while (__atomic_load_n(&ready, __ATOMIC_ACQUIRE) < started)
		sched_yield();
	t0 = bench_now();
	__atomic_store_n(&go, started == 2 ? 1 : -1, __ATOMIC_RELEASE);
	for (int i = 0; i < started; i++)
		pthread_join(th[i], NULL);
	if (started < 2) {
		gv_gerr_set(err, "cannot start the pageable bidirectional copy threads");
		return -1;
	}
	for (int i = 0; i < 2; i++)
		if (a[i].err.set) {
			gv_gerr_set(err, "%s", a[i].err.text);
			return -1;
		}
	*gbps = bw_gbps(2.0 * (double)bytes * copies, (a[0].t_end > a[1].t_end ? a[0].t_end : a[1].t_end) - t0);
	return 0;
}

/* One batch of the result slot r. */
static int mc_batch(struct mc *m, int r, size_t bytes, int copies, int sample_link, double *gbps,
		    struct gv_gerr *err)
{
	switch (r) {
	case R_H2D_PIN: case R_D2H_PIN: case R_BIDIR_PIN: case R_D2D:
		return mc_pinned_batch(m, (enum mc_kind)r, bytes, copies, sample_link, gbps, err);
	case R_H2D_PAGE:
		return mc_pageable_batch(m, MC_H2D, bytes, copies, gbps, err);
	case R_D2H_PAGE:
		return mc_pageable_batch(m, MC_D2H, bytes, copies, gbps, err);
	default:
		return mc_pageable_bidir(m, bytes, copies, gbps, err);
	}
}

/* The headline size: warm for MC_WARM_S, then batches for the profile's window (at least 5). */
#define MC_WARM_S 0.1
#define MC_MAX_BATCHES 512

static double mc_window_s(enum bench_profile p)
{
	return p == PROFILE_FULL ? 1.0 : p == PROFILE_STANDARD ? 0.5 : 0.25;
}

static int mc_headline(struct mc *m, int r, size_t bytes, int copies, double window_s, double *v, int *nb,
		       struct gv_gerr *err)
{
	double g = 0, t0 = bench_now();
	while (bench_now() - t0 < MC_WARM_S)
		if (mc_batch(m, r, bytes, copies, 0, &g, err))
			return -1;
	*nb = 0;
	t0 = bench_now();
	while ((*nb < 5 || bench_now() - t0 < window_s) && *nb < MC_MAX_BATCHES) {
		if (mc_batch(m, r, bytes, copies, r == R_H2D_PIN && *nb == 2, &v[*nb], err))
			return -1;
		(*nb)++;
	}
	return 0;
}

/* What the headline size gave on one GPU, per result slot. */
struct mc_out {
	double gbps[R_COUNT], spread[R_COUNT];
	int batches[R_COUNT];
};

/* Every kind of copy at every size (the largest timed as the headline); res holds the largest's figures. */
static int mc_sweep(struct bench_ctx *ctx, const struct bench_config *cfg, struct mc *mp, int dev, double *v,
		    struct mc_out *res, struct gv_gerr *err)
{
	size_t sizes[40];
	int nsz;
	nsz = size_sweep(4096, mp->max, sizes, 40);
	for (int si = 0; si < nsz; si++) {
		size_t b = sizes[si];
		int last = si == nsz - 1, copies = memcpy_batch_copies(b), nb = 3;
		char series[64];
		for (int r = 0; r < R_COUNT; r++) {
			double g = 0;
			if (last) {
				if (mc_headline(mp, r, b, copies, mc_window_s(cfg->profile), v, &nb, err))
					goto fail;
			} else {
				/* warm-up batch, not counted */
				if (mc_batch(mp, r, b, 1, 0, &g, err))
					goto fail;
				for (int i = 0; i < nb; i++)
					if (mc_batch(mp, r, b, copies, 0, &v[i], err))
						goto fail;
			}
			g = gv_median_inplace(v, (size_t)nb);
			snprintf(series, sizeof series, "%s", r_metric[r]);
			bench_sample(ctx, series, dev, (double)b, g);
			if (last) {
				res->gbps[r] = g;
				res->batches[r] = nb;
				res->spread[r] = g > 0 ? (v[nb - 1] - v[0]) / g : 0;   /* v is sorted */
			}
		}
	}
	return 0;
fail:
	return -1;
}

/* Pinned H2D as a percent of the PCIe link the GPU trained at, with the link in link_params. */
static void mc_link_pct(const struct mc *mp, const struct gv_nvml *nv, const struct mc_out *res, double *pct,
			char *link_params, size_t lp_len)
{
	if (mp->have_nvdev && mp->link_gen > 0 && mp->link_width > 0) {
		unsigned mg = 0, mw = 0;
		double link = gpu_pcie_link_gbps((int)mp->link_gen, (int)mp->link_width);
		if (nv->DeviceGetMaxPcieLinkGeneration)
			nv->DeviceGetMaxPcieLinkGeneration(mp->nvdev, &mg);
		if (nv->DeviceGetMaxPcieLinkWidth)
			nv->DeviceGetMaxPcieLinkWidth(mp->nvdev, &mw);
		if (link > 0) {
			*pct = res->gbps[R_H2D_PIN] / link * 100.0;
			snprintf(link_params, lp_len,
				 "{\"gen\":%u,\"width\":%u,\"max_gen\":%u,\"max_width\":%u,\"link_gbps\":%.4g,"
				 "\"achieved_gbps\":%.4g,\"bytes\":%zu}",
				 mp->link_gen, mp->link_width, mg, mw, link, res->gbps[R_H2D_PIN], mp->max);
		}
	}
}

static int memcpy_one_gpu(struct bench_ctx *ctx, const struct bench_config *cfg, int dev, const struct gv_nvml *nv,
			  struct mc_out *res, double *pct, char *link_params, size_t lp_len, size_t *headline,
			  struct gv_gerr *err)
{
	struct mc m;
	struct gv_numa_saved saved = { 0, { 0 } };
	size_t fr = 0, tot = 0;
	int rc = -1, node;
	double *v = (double *)gv_calloc(MC_MAX_BATCHES, sizeof *v);
	long pages = sysconf(_SC_AVPHYS_PAGES), psz = sysconf(_SC_PAGESIZE);

	memset(&m, 0, sizeof m);
	m.dev = dev;
	m.nvml = nv;
	*pct = NAN;
	node = gv_dev_numa_node(dev);
	if (node >= 0 && gv_numa_bind(node, &saved) == 0)
		bench_log(ctx, "gpu %d: host buffers and thread on numa node %d", dev, node);
	else
		bench_log(ctx, "gpu %d: numa node unknown or not bindable (%d): default placement", dev, node);

	GV_CUDA(err, cudaSetDevice(dev));
	GV_CUDA(err, cudaMemGetInfo(&fr, &tot));
	m.max = memcpy_max_bytes(cfg->profile);
	while (m.max > (1u << 20) && (double)m.max * 2 > 0.5 * (double)fr)
		m.max /= 2;
	if (pages > 0 && psz > 0)
		while (m.max > (1u << 20) && (double)m.max * 4 > 0.5 * (double)pages * (double)psz)
			m.max /= 2;
	*headline = m.max;
	if (nv && gv_nvml_dev_for_cuda(nv, dev, &m.nvdev) == 0)
		m.have_nvdev = 1;
	GV_CUDA(err, cudaStreamCreateWithFlags(&m.s1, cudaStreamNonBlocking));
	GV_CUDA(err, cudaStreamCreateWithFlags(&m.s2, cudaStreamNonBlocking));
	GV_CUDA(err, cudaEventCreate(&m.start));
	GV_CUDA(err, cudaEventCreate(&m.stop));
	GV_CUDA(err, cudaEventCreateWithFlags(&m.mid, cudaEventDisableTiming));
	if (gv_gate_init(&m.gate, err))
		goto fail;
	GV_CUDA(err, cudaHostAlloc(&m.hpin_a, m.max, cudaHostAllocDefault));
	GV_CUDA(err, cudaHostAlloc(&m.hpin_b, m.max, cudaHostAllocDefault));
	/* 64-byte aligned as PyTorch's CPU allocator gives a tensor (c10 alloc_cpu): a large malloc'd
	 * block starts 16 bytes past a page, and the driver's copy out of its staging buffer then
	 * writes across cache lines (tests/gpu/pageable_align.cu measures it) */
	if (posix_memalign(&m.hpage, 64, m.max))
		m.hpage = NULL;
	if (posix_memalign(&m.hpage_b, 64, m.max))
		m.hpage_b = NULL;
	if (!m.hpage || !m.hpage_b) {
		gv_gerr_set(err, "cannot allocate %zu bytes of pageable host memory", m.max);
		goto fail;
	}
	memset(m.hpage, 0x5a, m.max);   /* fault the pages in, on the preferred node */
	memset(m.hpage_b, 0, m.max);
	memset(m.hpin_a, 0xa5, m.max);
	memset(m.hpin_b, 0, m.max);
	GV_CUDA(err, cudaMalloc(&m.dbuf_a, m.max));
	GV_CUDA(err, cudaMalloc(&m.dbuf_b, m.max));
	GV_CUDA(err, cudaMemset(m.dbuf_a, 1, m.max));
	GV_CUDA(err, cudaMemset(m.dbuf_b, 2, m.max));
	GV_CUDA(err, cudaDeviceSynchronize());

	if (mc_sweep(ctx, cfg, &m, dev, v, res, err))
		goto fail;
	mc_link_pct(&m, nv, res, pct, link_params, lp_len);
	rc = 0;
fail:
	mc_free(&m);
	gv_numa_unbind(&saved);
	free(v);
	return rc;
}

static int memcpy_run(struct bench_ctx *ctx, const struct bench_config *cfg)
{
	struct gv_gerr err;
	int n = 0;
	char why[256] = "", params[512], link_params[384];
	const struct gv_nvml *nv = NULL;
	static struct mc_out res[MC_MAX_GPUS];
	static double pct[MC_MAX_GPUS];
	size_t headline = 0;

	memset(&err, 0, sizeof err);
	if (gv_probe_gpus(ctx, &n) != BENCH_OK)
		return BENCH_SKIP;
	if (n > MC_MAX_GPUS)
		n = MC_MAX_GPUS;
	nv = gv_nvml_load(why, sizeof why);
	if (!nv)
		bench_log(ctx, "pcie link not read: %s", why);
	for (int d = 0; d < n; d++) {
		link_params[0] = '\0';
		if (memcpy_one_gpu(ctx, cfg, d, nv, &res[d], &pct[d], link_params, sizeof link_params, &headline, &err)) {
			bench_reason(ctx, "gpu %d: %s", d, err.text);
			return BENCH_FAIL;
		}
		for (int r = 0; r < R_COUNT; r++) {
			snprintf(params, sizeof params,
				 "{\"bytes\":%zu,\"numa_node\":%d,\"unit_note\":\"1e9 bytes/s\",\"warm_s\":%.3g,"
				 "\"window_s\":%.3g,\"batches\":%d,\"spread\":%.4g}",
				 headline, gv_dev_numa_node(d), MC_WARM_S, mc_window_s(cfg->profile), res[d].batches[r],
				 res[d].spread[r]);
			bench_metric(ctx, r_metric[r], d, res[d].gbps[r], "GB/s", params);
		}
		if (isfinite(pct[d]))
			bench_metric(ctx, "memcpy.h2d.pct_of_link", d, pct[d], "%", link_params);
		bench_progress(ctx, (double)(d + 1) / n);
	}
	/* instance level: the median over GPUs (one link per GPU) */
	for (int r = 0; r < R_COUNT; r++) {
		double v[MC_MAX_GPUS];
		for (int d = 0; d < n; d++)
			v[d] = res[d].gbps[r];
		snprintf(params, sizeof params, "{\"bytes\":%zu,\"gpus\":%d,\"aggregate\":\"median\"}", headline, n);
		bench_metric(ctx, r_metric[r], -1, gv_median_inplace(v, (size_t)n), "GB/s", params);
	}
	{
		double v[MC_MAX_GPUS];
		int c = 0;
		for (int d = 0; d < n; d++)
			if (isfinite(pct[d]))
				v[c++] = pct[d];
		if (c) {
			snprintf(params, sizeof params, "{\"gpus\":%d,\"aggregate\":\"median\"}", c);
			bench_metric(ctx, "memcpy.h2d.pct_of_link", -1, gv_median_inplace(v, (size_t)c), "%", params);
		}
	}
	snprintf(params, sizeof params, "{\"profile\":\"%s\",\"max_bytes\":%zu,\"gpus\":%d,\"gbps\":\"1e9 bytes/s\"}",
		 bench_profile_name(cfg->profile), headline, n);
	bench_config_echo(ctx, params);
	return BENCH_OK;
}

#define R METRIC_RANKABLE
#define G METRIC_PER_GPU
#define L METRIC_LOWER_IS_BETTER

/* The metrics this bench reports (struct metric_info, benches/bench.h). */
static const struct metric_info memcpy_metrics[] = {
	{ "memcpy.h2d.pinned.gbps", "GB/s", "H2D pinned", R | G | METRIC_LOW_SPREAD, METRIC_PEAK_PCIE },
	{ "memcpy.d2h.pinned.gbps", "GB/s", "D2H pinned", R | G | METRIC_LOW_SPREAD, METRIC_PEAK_PCIE },
	{ "memcpy.bidir.pinned.gbps", "GB/s", "bidirectional pinned", R | G, METRIC_PEAK_PCIE_BIDIR },
	{ "memcpy.h2d.pageable.gbps", "GB/s", "H2D pageable", R | G, METRIC_PEAK_PCIE },
	{ "memcpy.d2h.pageable.gbps", "GB/s", "D2H pageable", R | G, METRIC_PEAK_PCIE },
	{ "memcpy.bidir.pageable.gbps", "GB/s", "bidirectional pageable", R | G, METRIC_PEAK_PCIE_BIDIR },
	{ "memcpy.d2d.gbps", "GB/s", "device to device", R | G | METRIC_LOW_SPREAD, METRIC_PEAK_NONE },
	{ "memcpy.h2d.pct_of_link", "%", "H2D % of link", G, METRIC_PEAK_PERCENT },
	{ NULL, NULL, NULL, 0, METRIC_PEAK_NONE },
};

#undef R
#undef G
#undef L

/* The series it samples (struct bench .series): judged under this bench only. */
static const char *const memcpy_series[] = { "memcpy.*.pinned.gbps", "memcpy.*.pageable.gbps", "memcpy.d2d.gbps", NULL };

extern "C" const struct bench bench_memcpy = {
	.name = "memcpy",
	.summary = "host<->device copy GB/s, pinned and pageable, bidirectional, D2D; % of the PCIe link",
	.flags = BENCH_NEEDS_GPU,
	.deadline_s = memcpy_deadline,
	.probe = memcpy_probe,
	.run = memcpy_run,
	.metrics = memcpy_metrics,
	.series = memcpy_series,
};
