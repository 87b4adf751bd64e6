/*
 * gemm.cu - cuBLASLt matrix-multiply throughput per data type.
 *
 * For each dtype (FP32 with CUBLAS_COMPUTE_32F, i.e. no tensor cores; TF32
 * with CUBLAS_COMPUTE_32F_FAST_TF32; FP16 and BF16 with FP32 accumulation;
 * FP8 E4M3 with BF16 output on compute capability >= 8.9):
 *
 *  1. correctness: a 512^3 GEMM on every GPU, every element compared with
 *     an FP64 reference of the same inputs (gemm_tolerance() in gpu_math.c);
 *  2. square sizes of the profile up to 8192, every GPU at once, short
 *     bursts: the curve gemm.<dtype>.tflops vs m (samples, gpu -1);
 *  3. the headline, gemm.<dtype>.tflops: the largest square size measured up
 *     to 8192 (the same shape in every profile), in the steady state of
 *     benches/steady.h: warm until the power and clocks settle, then work
 *     done / time over a fixed window (1 s quick, 2 s standard, 4 s full),
 *     every GPU at once (gpu -1: the sum) and, with more than one GPU, each
 *     GPU alone (gpu = index); the window's SM clock, power, cap,
 *     temperature and clock-event reasons in the params; the result checked
 *     on sampled elements against the FP64 reference;
 *  4. standard/full, once every dtype has its headline: the curve's larger
 *     squares, then an achievable-peak search over (m, n, k) shapes within a
 *     time budget, as mamf-finder does (short bursts), and when it found a
 *     better shape than the headline's,
 *     gemm.<dtype>.best_shape.tflops, that shape in the steady state, every
 *     GPU at once.
 *
 * Steps 1-3 run for every dtype before any step 4, so every profile takes
 * its headline after the same history: seconds of full-power bursts at
 * 16384^3 or in a search leave the GPU hotter and its power-cap loop lower
 * (an H100 SXM at 700 W: bf16 676 against 697 TFLOP/s, SM 1300 against
 * 1362 MHz), and the headline would depend on the profile (issue 39).
 *
 * Bursts (steps 2 and 4): random data generated on the device, the heuristic's
 * top algorithms each timed and the fastest kept, warm-up, then `reps`
 * GEMMs each between two CUDA events, enqueued behind a spin gate so host
 * launch overhead never falls inside a timed region.  Steady state (3-4):
 * batches of about 20 ms between CUDA events, six in flight per GPU.
 * TFLOP/s = 2 m n k / seconds / 1e12.
 */
#include "benches/gpu_common.cuh"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


#define GEMM_MAX_GPUS 64
#define GEMM_CHECK_SIZE 512
#define GEMM_CHECK_SAMPLES 4096
#define GEMM_HEADLINE_MAX 8192   /* the headline shape: the largest square size measured up to this */
/*
 * The search times each shape with the heuristic's top 4 algorithms, 1 warm-up and 3 products:
 * the standard profile's 100 shapes then take about 4.2 s of products on an H100 (10 s budget).
 * With 8 x (1 + 10) the budget held the 16 largest and missed the wide-k shapes that are an H100's
 * best sustained bf16 (4096x4096x16384: 702 against 676 TFLOP/s at 8192^3, tests/fixtures/gpu/
 * h100-2026-11-26).  The best shape's steady figure still picks from the profile's 8.
 */
#define GEMM_SEARCH_TOP 4
#define GEMM_SEARCH_WARMUP 1
#define GEMM_SEARCH_REPS 3

struct gemm_meas {
	struct gemm_shape sh;
	int ngpu;
	double tflops[GEMM_MAX_GPUS];
	struct bench_stats st[GEMM_MAX_GPUS];
	int algo_id[GEMM_MAX_GPUS], algos_tried[GEMM_MAX_GPUS];
	double agg;
};

static int gemm_deadline(const struct bench_config *cfg)
{
	switch (cfg->profile) {
	case PROFILE_STANDARD: return 1200;
	case PROFILE_FULL: return 3600;
	case PROFILE_QUICK:
	default: return 300;
	}
}

static int gemm_probe(struct bench_ctx *ctx, const struct bench_config *cfg)
{
	(void)cfg;
	return gv_probe_gpus_libs(ctx, GV_NEED_CUBLASLT);
}

/* Sets the shape on every GPU and times it on all of them at once; 1 when unsupported. */
static int gemm_measure(struct gv_gemm **g, int n, struct gemm_shape sh, int warmup, int reps, int top,
			struct gv_gate *gate, struct gemm_meas *out, struct gv_gerr *err)
{
	double *ms = (double *)gv_calloc((size_t)n * (size_t)reps, sizeof *ms);
	int rc;
	memset(out, 0, sizeof *out);
	out->sh = sh;
	out->ngpu = n;
	for (int d = 0; d < n; d++) {
		rc = gv_gemm_set_shape(g[d], sh, top, err);
		if (rc) {
			free(ms);
			return rc;
		}
		out->algo_id[d] = g[d]->algo_id;
		out->algos_tried[d] = g[d]->algos_tried;
	}
	if (gv_gemm_time(g, n, warmup, reps, gate, ms, err)) {
		free(ms);
		return -1;
	}
	for (int d = 0; d < n; d++) {
		bench_stats(ms + (size_t)d * reps, reps, &out->st[d]);
		out->tflops[d] = gemm_tflops(sh.m, sh.n, sh.k, out->st[d].median / 1e3);
		out->agg += out->tflops[d];
	}
	free(ms);
	return 0;
}

/* One dtype's state across its steps. */
struct gemm_job {
	struct bench_ctx *ctx;
	const struct bench_config *cfg;
	enum gemm_dtype dt;
	const char *name;
	char series[64];
	int n, opened, top, from_search, squares_stopped;
	double free_bytes, worst, prog0, prog1;
	struct gv_gate *gate;
	struct gv_gerr *err;
	struct bench_reps rp;
	struct gv_gemm *gs, **g;
	const struct gv_nvml *nv;
	nvmlDevice_t nvdev[GEMM_MAX_GPUS];
	int have_nv[GEMM_MAX_GPUS];
	struct gemm_shape headline;    /* the largest square size measured, at most GEMM_HEADLINE_MAX */
	struct gemm_meas burst[2];     /* scratch and best burst of the squares and the search */
	struct gemm_meas *best;
};

static double progress(const struct gemm_job *j, double f)
{
	return j->prog0 + (j->prog1 - j->prog0) * f;
}

/* 1. a 512^3 product on every GPU, every element against FP64; BENCH_SKIP when cuBLASLt has no algorithm. */
static int gemm_check_small(struct gemm_job *j)
{
	j->worst = 0;
	for (int d = 0; d < j->n; d++) {
		struct gemm_shape s = { GEMM_CHECK_SIZE, GEMM_CHECK_SIZE, GEMM_CHECK_SIZE };
		int r = gv_gemm_set_shape(j->g[d], s, 1, j->err);
		if (r == 1) {
			bench_log(j->ctx, "%s skipped: %s", j->name, j->err->text);
			memset(j->err, 0, sizeof *j->err);
			return BENCH_SKIP;
		}
		double e = 0;
		if (r || gv_gemm_enqueue(j->g[d], j->err) || gv_gemm_check(j->g[d], 0, &e, j->err))
			return BENCH_FAIL;
		if (!(e <= gemm_tolerance(j->dt))) {
			gv_gerr_set(j->err, "gemm %s result wrong on gpu %d: max error %.3g > tolerance %.3g (m=n=k=%d)",
				    j->name, d, e, gemm_tolerance(j->dt), GEMM_CHECK_SIZE);
			return BENCH_FAIL;
		}
		if (e > j->worst)
			j->worst = e;
	}
	bench_log(j->ctx, "%s: %dx%dx%d matches the fp64 reference on %d gpu(s), max error %.3g", j->name,
		  GEMM_CHECK_SIZE, GEMM_CHECK_SIZE, GEMM_CHECK_SIZE, j->n, j->worst);
	return BENCH_OK;
}

/* Keeps cur as the best burst when it beats it. */
static void keep_best(struct gemm_job *j, struct gemm_meas **cur)
{
	if ((*cur)->agg > j->best->agg) {
		struct gemm_meas *t = j->best;
		j->best = *cur;
		*cur = t;
	}
}

/*
 * 2. square sizes, all GPUs at once, short bursts: the curve, and the headline size.
 * large = 0: the sizes up to GEMM_HEADLINE_MAX (before the headline); 1: the larger ones
 * (after every headline, with the search), unless the first pass had to stop.
 */
static int gemm_squares(struct gemm_job *j, int large)
{
	int sizes[16], nsizes = gemm_square_sizes(j->cfg->profile, sizes, 16);
	struct gemm_meas *cur = j->best == &j->burst[0] ? &j->burst[1] : &j->burst[0];
	if (!large) {
		cur = &j->burst[0];
		j->best = &j->burst[1];
		j->best->agg = -1;
	} else if (j->squares_stopped) {
		return 0;
	}
	for (int i = 0; i < nsizes; i++) {
		struct gemm_shape s = { sizes[i], sizes[i], sizes[i] };
		if ((sizes[i] > GEMM_HEADLINE_MAX) != large)
			continue;
		if (gemm_bytes(&s, gv_ab_size(j->dt), gv_d_size(j->dt)) > 0.45 * j->free_bytes) {
			bench_log(j->ctx, "%s: %d^3 skipped: needs more than 45%% of free gpu memory", j->name, sizes[i]);
			j->squares_stopped = 1;
			break;
		}
		if (gemm_measure(j->g, j->n, s, j->rp.warmup, j->rp.reps, j->top, j->gate, cur, j->err))
			return -1;
		bench_sample(j->ctx, j->series, -1, sizes[i], cur->agg);
		bench_log(j->ctx, "%s %d^3: %.1f TFLOP/s on %d gpu(s) (burst)", j->name, sizes[i], cur->agg, j->n);
		if (sizes[i] <= GEMM_HEADLINE_MAX)
			j->headline = s;
		double last_ms = cur->st[0].median;
		keep_best(j, &cur);
		bench_progress(j->ctx, progress(j, 0.7 * (i + 1) / nsizes));
		/* a slow GPU (FP32 on a T4): the next size would take 8x as long */
		double next_s = last_ms / 1e3 * 8 * (j->rp.warmup + j->rp.reps) * (j->top + 1);
		if (i + 1 < nsizes && next_s > (j->cfg->profile == PROFILE_QUICK ? 8.0 : 60.0)) {
			bench_log(j->ctx, "%s: larger sizes skipped (%.0f s expected)", j->name, next_s);
			j->squares_stopped = 1;
			break;
		}
	}
	if (!large && (j->best->agg < 0 || j->headline.m == 0)) {
		gv_gerr_set(j->err, "gemm %s: no size fits in free gpu memory", j->name);
		return -1;
	}
	return 0;
}

/* 3. standard/full: the achievable-peak shape search (mamf-finder), short bursts. */
static int gemm_search(struct gemm_job *j)
{
	double budget = gemm_search_budget_s(j->cfg->profile), t0 = bench_now();
	int maxs = 1200, tried = 0, rc = -1;
	struct gemm_meas *cur = j->best == &j->burst[0] ? &j->burst[1] : &j->burst[0];
	struct gemm_shape *shapes = (struct gemm_shape *)gv_calloc((size_t)maxs, sizeof *shapes);
	int ns = gemm_search_shapes(j->cfg->profile, shapes, maxs);
	for (int i = 0; i < ns && budget > 0 && bench_now() - t0 < budget; i++) {
		if (gemm_bytes(&shapes[i], gv_ab_size(j->dt), gv_d_size(j->dt)) > 0.45 * j->free_bytes)
			continue;
		int r = gemm_measure(j->g, j->n, shapes[i], GEMM_SEARCH_WARMUP, GEMM_SEARCH_REPS, GEMM_SEARCH_TOP, j->gate,
				     cur, j->err);
		if (r < 0)
			goto out;
		if (r == 1) {   /* no algorithm for this shape: try the next */
			memset(j->err, 0, sizeof *j->err);
			continue;
		}
		tried++;
		struct gemm_meas *before = j->best;
		keep_best(j, &cur);
		if (j->best != before)
			j->from_search = 1;
		bench_progress(j->ctx, progress(j, 0.7 + 0.2 * (bench_now() - t0) / budget));
	}
	if (budget > 0)
		bench_log(j->ctx, "%s: shape search tried %d shapes in %.1f s, best %dx%dx%d", j->name, tried,
			  bench_now() - t0, j->best->sh.m, j->best->sh.n, j->best->sh.k);
	rc = 0;
out:
	free(shapes);
	return rc;
}

static void gemm_params(char *buf, size_t len, const struct gemm_job *j, struct gv_gemm *const *g,
			const struct gv_steady_gpu *st, int nst, double agg)
{
	const struct gv_gemm *g0 = g[0];
	int w = snprintf(buf, len,
			 "{\"m\":%d,\"n\":%d,\"k\":%d,\"batch_products\":%d,\"algo_id\":%d,\"algos_tried\":%d,"
			 "\"compute\":\"%s\",\"layout\":\"%s\",\"max_err\":%.3g,\"tolerance\":%.3g,\"workspace_mib\":%u,"
			 "\"from_search\":%d,\"concurrent\":%d,",
			 g0->sh.m, g0->sh.n, g0->sh.k, st[0].batch, g0->algo_id, g0->algos_tried,
			 j->dt == GEMM_TF32 ? "32F_FAST_TF32" : "32F", j->dt == GEMM_FP8 ? "TN" : "NN", j->worst,
			 gemm_tolerance(j->dt), GV_GEMM_WORKSPACE >> 20, j->from_search, nst > 1 ? 1 : 0);
	if (w < 0 || (size_t)w >= len)
		return;
	/* the window of the slowest GPU: what holds the instance back */
	int slow = 0;
	for (int d = 1; d < nst; d++)
		if (st[d].sum.rate < st[slow].sum.rate)
			slow = d;
	int r = steady_params(buf + w, len - (size_t)w, &st[slow].sum);
	if (r < 0)
		return;
	w += r;
	if (nst > 1) {
		w += snprintf(buf + w, len - (size_t)w, ",\"gpus\":%d,\"sum_tflops\":%.6g,\"per_gpu_tflops\":[", nst, agg);
		for (int i = 0; i < nst && (size_t)w < len; i++)
			w += snprintf(buf + w, len - (size_t)w, "%s%.6g", i ? "," : "", st[i].sum.rate);
		if ((size_t)w < len)
			w += snprintf(buf + w, len - (size_t)w, "]");
	}
	if ((size_t)w < len)
		snprintf(buf + w, len - (size_t)w, "}");
}

/*
 * Steady-state TFLOP/s of shape sh on the GPUs g[0..n) at once (benches/steady.h);
 * st[d].sum.rate per GPU, *agg their sum; the result checked on sampled elements.
 */
static int gemm_steady(struct gemm_job *j, struct gv_gemm **g, int n, struct gemm_shape sh, struct gv_steady_gpu *st,
		       double *agg)
{
	struct steady_cfg sc = steady_cfg_for(j->cfg->profile);
	*agg = 0;
	for (int d = 0; d < n; d++) {
		if (gv_gemm_set_shape(g[d], sh, j->top, j->err))
			return -1;
		memset(&st[d], 0, sizeof st[d]);
		st[d].g = g[d];
		st[d].have_nv = j->have_nv[g[d]->dev];
		st[d].nv = j->nvdev[g[d]->dev];
	}
	if (gv_gemm_steady(st, n, j->nv, &sc, j->err)) {
		for (int d = 0; d < n; d++)
			steady_trace_free(&st[d].tr);
		return -1;
	}
	for (int d = 0; d < n; d++) {
		double e = 0;
		steady_trace_free(&st[d].tr);
		*agg += st[d].sum.rate;
		if (gv_gemm_check(g[d], GEMM_CHECK_SAMPLES, &e, j->err))
			return -1;
		if (!(e <= gemm_tolerance(j->dt))) {
			gv_gerr_set(j->err, "gemm %s result wrong on gpu %d: max error %.3g > tolerance %.3g (%dx%dx%d)",
				    j->name, g[d]->dev, e, gemm_tolerance(j->dt), sh.m, sh.n, sh.k);
			return -1;
		}
	}
	if (!(*agg > 0)) {
		gv_gerr_set(j->err, "gemm %s: no batch finished inside the measuring window", j->name);
		return -1;
	}
	return 0;
}

/*
 * 4. metric at shape sh, steady state: every GPU at once (gpu -1: the sum),
 * then each GPU alone (gpu d) when alone is set and there is more than one.
 */
static int gemm_report(struct gemm_job *j, const char *metric, struct gemm_shape sh, int alone)
{
	struct gv_steady_gpu *st = (struct gv_steady_gpu *)gv_calloc((size_t)j->n, sizeof *st);
	char params[3072];
	double agg = 0;
	int rc = -1;
	if (gemm_steady(j, j->g, j->n, sh, st, &agg))
		goto out;
	gemm_params(params, sizeof params, j, j->g, st, j->n, agg);
	bench_metric(j->ctx, metric, -1, agg, "TFLOP/s", params);
	bench_log(j->ctx, "%s %dx%dx%d: %.1f TFLOP/s steady on %d gpu(s) (settled by %s at %.2f s, burst %.1f)",
		  j->name, sh.m, sh.n, sh.k, agg, j->n, steady_verdict_name(st[0].sum.how), st[0].sum.settle_s,
		  st[0].sum.burst);
	for (int d = 0; d < j->n; d++) {
		if (alone && j->n > 1 && gemm_steady(j, &j->g[d], 1, sh, &st[d], &agg))
			goto out;
		gemm_params(params, sizeof params, j, &j->g[d], &st[d], 1, st[d].sum.rate);
		bench_metric(j->ctx, metric, d, st[d].sum.rate, "TFLOP/s", params);
	}
	rc = 0;
out:
	free(st);
	return rc;
}

/* Opens the dtype's cuBLASLt handle on every GPU; 0 or -1 with j->err set. */
static int gemm_job_open(struct gemm_job *j)
{
	j->gs = (struct gv_gemm *)gv_calloc((size_t)j->n, sizeof *j->gs);
	j->g = (struct gv_gemm **)gv_calloc((size_t)j->n, sizeof *j->g);
	for (int d = 0; d < j->n; d++) {
		j->g[d] = &j->gs[d];
		j->opened = d + 1;   /* gv_gemm_close() copes with a half-opened one */
		if (gv_gemm_open(j->g[d], d, j->dt, j->err))
			return -1;
	}
	return 0;
}

static void gemm_job_close(struct gemm_job *j)
{
	for (int d = 0; d < j->opened; d++)
		gv_gemm_close(j->g[d]);
	free(j->g);
	free(j->gs);
	j->g = NULL;
	j->gs = NULL;
	j->opened = 0;
}

/* Steps 1-3 of one dtype: BENCH_OK, BENCH_FAIL, or BENCH_SKIP when unsupported. */
static int gemm_dtype_head(struct gemm_job *j)
{
	int rc = BENCH_FAIL;
	j->name = gemm_dtype_name(j->dt);
	j->rp = bench_reps_for(j->cfg->profile);
	j->top = j->cfg->profile == PROFILE_QUICK ? 4 : 8;
	snprintf(j->series, sizeof j->series, "gemm.%s.tflops", j->name);
	if (gemm_job_open(j))
		goto out;
	if ((rc = gemm_check_small(j)) != BENCH_OK)
		goto out;
	rc = BENCH_FAIL;
	if (gemm_squares(j, 0))
		goto out;
	bench_progress(j->ctx, progress(j, 0.8));
	/* the headline: the same square shape in every profile, steady state */
	if (gemm_report(j, j->series, j->headline, 1))
		goto out;
	bench_progress(j->ctx, j->prog1);
	rc = BENCH_OK;
out:
	gemm_job_close(j);
	return rc;
}

/* Step 4 of one dtype whose headline is measured: the shape search and its best shape; 0 or -1. */
static int gemm_dtype_search(struct gemm_job *j)
{
	int rc = -1;
	if (gemm_job_open(j) || gemm_squares(j, 1) || gemm_search(j))
		goto out;
	/* the search's best shape, steady state, when it found one other than the headline */
	if (j->from_search && memcmp(&j->best->sh, &j->headline, sizeof j->headline)) {
		char metric[64];
		snprintf(metric, sizeof metric, "gemm.%s.best_shape.tflops", j->name);
		if (gemm_report(j, metric, j->best->sh, 0))
			goto out;
	}
	bench_progress(j->ctx, j->prog1);
	rc = 0;
out:
	gemm_job_close(j);
	return rc;
}

/* The job's share of the bench's progress: phase 0 (steps 1-3) or 1 (the search), dtype slot i of n. */
static void gemm_job_span(struct gemm_job *j, int phase, int i, int n)
{
	double head = gemm_search_budget_s(j->cfg->profile) > 0 ? 0.5 : 1.0;
	double lo = phase ? head : 0, width = (phase ? 1 - head : head) / n;
	j->prog0 = lo + width * i;
	j->prog1 = lo + width * (i + 1);
}

/* The lowest compute capability and free memory over GPUs 0..n, each logged; 0 or -1 with err set. */
static int gemm_gpus(struct bench_ctx *ctx, int n, int *min_cc, double *free_min, struct gv_gerr *err)
{
	for (int d = 0; d < n; d++) {
		cudaDeviceProp p;
		size_t fr = 0, tot = 0;
		GV_CUDA(err, cudaGetDeviceProperties(&p, d));
		GV_CUDA(err, cudaSetDevice(d));
		GV_CUDA(err, cudaMemGetInfo(&fr, &tot));
		if (p.major * 10 + p.minor < *min_cc)
			*min_cc = p.major * 10 + p.minor;
		if ((double)fr < *free_min)
			*free_min = (double)fr;
		bench_log(ctx, "gpu %d: %s, compute capability %d.%d, %.1f GiB free", d, p.name, p.major, p.minor,
			  fr / 1073741824.0);
	}
	return 0;
fail:
	return -1;
}

static int gemm_run(struct bench_ctx *ctx, const struct bench_config *cfg)
{
	struct gv_gerr err;
	struct gv_gate gate = { NULL };
	int n = 0, min_cc = 1000, ran = 0, rc = BENCH_FAIL, njobs = 0;
	struct gemm_job *jobs[GEMM_DTYPE_COUNT] = { NULL };
	double free_min = 1e30;
	char echo[768], why[256] = "";
	int w;
	const struct gv_nvml *nv = NULL;
	static nvmlDevice_t nvdev[GEMM_MAX_GPUS];
	static int have_nv[GEMM_MAX_GPUS];

	memset(&err, 0, sizeof err);
	if (gv_probe_gpus(ctx, &n) != BENCH_OK)
		return BENCH_SKIP;
	if (n > GEMM_MAX_GPUS)
		n = GEMM_MAX_GPUS;
	if (gemm_gpus(ctx, n, &min_cc, &free_min, &err))
		goto fail;
	nv = gv_nvml_load(why, sizeof why);
	if (!nv)
		bench_log(ctx, "nvml not available: the window's clocks and power are not recorded: %s", why);
	for (int d = 0; nv && d < n; d++)
		have_nv[d] = gv_nvml_dev_for_cuda(nv, d, &nvdev[d]) == 0;
	if (gv_gate_init(&gate, &err))
		goto fail;
	{
		struct steady_cfg sc = steady_cfg_for(cfg->profile);
		w = snprintf(echo, sizeof echo,
			     "{\"profile\":\"%s\",\"gpus\":%d,\"min_cc\":%d,\"timing\":\"steady\",\"window_s\":%.3g,"
			     "\"max_warm_s\":%.3g,\"headline_max\":%d,\"nvml\":%d,\"dtypes\":[",
			     bench_profile_name(cfg->profile), n, min_cc, sc.window_s, sc.max_warm_s, GEMM_HEADLINE_MAX,
			     nv ? 1 : 0);
	}
	struct gemm_job proto;
	memset(&proto, 0, sizeof proto);
	proto.ctx = ctx;
	proto.cfg = cfg;
	proto.n = n;
	proto.free_bytes = free_min;
	proto.gate = &gate;
	proto.err = &err;
	proto.nv = nv;
	memcpy(proto.nvdev, nvdev, sizeof nvdev);
	memcpy(proto.have_nv, have_nv, sizeof have_nv);
	for (int dt = 0; dt < GEMM_DTYPE_COUNT; dt++) {
		if (min_cc < gemm_dtype_min_cc((enum gemm_dtype)dt)) {
			bench_log(ctx, "%s skipped: needs compute capability %d.%d", gemm_dtype_name((enum gemm_dtype)dt),
				  gemm_dtype_min_cc((enum gemm_dtype)dt) / 10, gemm_dtype_min_cc((enum gemm_dtype)dt) % 10);
			continue;
		}
		struct gemm_job *job = (struct gemm_job *)gv_calloc(1, sizeof *job);
		*job = proto;
		job->dt = (enum gemm_dtype)dt;
		jobs[njobs++] = job;
	}
	/* every headline first (steps 1-3), then every search (step 4): see the top of this file */
	for (int i = 0; i < njobs; i++) {
		gemm_job_span(jobs[i], 0, i, njobs);
		int r = gemm_dtype_head(jobs[i]);
		if (r == BENCH_FAIL)
			goto fail;
		if (r != BENCH_OK) {
			free(jobs[i]);
			jobs[i] = NULL;
			continue;
		}
		ran++;
		if (w > 0 && (size_t)w < sizeof echo)
			w += snprintf(echo + w, sizeof echo - (size_t)w, "%s\"%s\"", ran > 1 ? "," : "", jobs[i]->name);
	}
	for (int i = 0; gemm_search_budget_s(cfg->profile) > 0 && i < njobs; i++) {
		if (!jobs[i])
			continue;
		gemm_job_span(jobs[i], 1, i, njobs);
		if (gemm_dtype_search(jobs[i]))
			goto fail;
	}
	if (w > 0 && (size_t)w < sizeof echo)
		snprintf(echo + w, sizeof echo - (size_t)w, "]}");
	bench_config_echo(ctx, echo);
	gv_gate_free(&gate);
	for (int i = 0; i < njobs; i++)
		free(jobs[i]);
	if (!ran) {
		bench_reason(ctx, "no gemm data type is supported on this gpu");
		return BENCH_SKIP;
	}
	return BENCH_OK;
fail:
	gv_gate_free(&gate);
	for (int i = 0; i < njobs; i++)
		free(jobs[i]);
	bench_reason(ctx, "%s", err.set ? err.text : "gemm failed");
	return rc;
}

#define R METRIC_RANKABLE
#define G METRIC_PER_GPU
#define L METRIC_LOWER_IS_BETTER

/* The metrics this bench reports (struct metric_info, benches/bench.h). */
static const struct metric_info gemm_metrics[] = {
	{ "gemm.*.tflops", "TFLOP/s", "GEMM", R | METRIC_LOW_SPREAD, METRIC_PEAK_GEMM },
	/* standard/full: the shape search's best shape, steady state (not a peak-rule figure: another shape) */
	{ "gemm.*.best_shape.tflops", "TFLOP/s", "GEMM best shape", R, METRIC_PEAK_NONE },
	/* added by the harness from the reference table (runners/run.c) */
	{ "gemm.*.pct_of_peak", "%", "GEMM % of peak", 0, METRIC_PEAK_PERCENT },
	{ NULL, NULL, NULL, 0, METRIC_PEAK_NONE },
};

#undef R
#undef G
#undef L

/* The series it samples (struct bench .series): judged under this bench only. */
static const char *const gemm_series[] = { "gemm.*.tflops", NULL };

extern "C" const struct bench bench_gemm = {
	.name = "gemm",
	.summary = "cuBLASLt GEMM FP32/TF32/FP16/BF16/FP8 TFLOP/s, every GPU at once and each alone",
	.flags = BENCH_NEEDS_GPU,
	.deadline_s = gemm_deadline,
	.probe = gemm_probe,
	.run = gemm_run,
	.metrics = gemm_metrics,
	.words = gemm_dtype_words,
	.series = gemm_series,
};
