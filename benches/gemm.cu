/*
 * gemm.cu - cuBLASLt matrix-multiply throughput per data type.
 *
 * For each dtype (FP32 with CUBLAS_COMPUTE_32F, i.e. no tensor cores; TF32
 * with CUBLAS_COMPUTE_32F_FAST_TF32; FP16 and BF16 with FP32 accumulation;
 * FP8 E4M3 with BF16 output on compute capability >= 8.9):
 *
 *  1. correctness: a 512^3 GEMM on every GPU, every element compared with
 *     an FP64 reference of the same inputs (gemm_tolerance() in gpu_math.c);
 *  2. square sizes of the profile, every GPU at once, the curve
 *     gemm.<dtype>.tflops vs m (samples, gpu -1);
 *  3. standard/full: an achievable-peak search over (m, n, k) shapes within a
 *     time budget, as mamf-finder does;
 *  4. the best shape measured again with the profile's repetitions on every
 *     GPU at once (gpu -1: the sum of the GPUs' TFLOP/s) and, with more
 *     than one GPU, on each GPU alone (gpu = index); its result checked on
 *     sampled elements against the FP64 reference.
 *
 * Every measurement: random data generated on the device, the heuristic's
 * top algorithms each timed and the fastest kept, warm-up, then `reps`
 * GEMMs each between two CUDA events, enqueued behind a spin gate so host
 * launch overhead never falls inside a timed region; the median of the
 * reps is the time.  TFLOP/s = 2 m n k / median / 1e12.
 */
#include "benches/gpu_common.cuh"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


#define GEMM_MAX_GPUS 64
#define GEMM_CHECK_SIZE 512
#define GEMM_CHECK_SAMPLES 4096

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

static void gemm_params(char *buf, size_t len, const struct gemm_meas *m, int d, int reps, int warmup,
			enum gemm_dtype dt, double max_err, int from_search)
{
	int w = snprintf(buf, len,
			 "{\"m\":%d,\"n\":%d,\"k\":%d,\"reps\":%d,\"warmup\":%d,\"spread\":%.6g,\"median_ms\":%.6g,"
			 "\"min_ms\":%.6g,\"max_ms\":%.6g,\"algo_id\":%d,\"algos_tried\":%d,\"compute\":\"%s\","
			 "\"layout\":\"%s\",\"max_err\":%.3g,\"tolerance\":%.3g,\"workspace_mib\":%u,"
			 "\"from_search\":%d,\"concurrent\":%d",
			 m->sh.m, m->sh.n, m->sh.k, reps, warmup, m->st[d].spread, m->st[d].median, m->st[d].min,
			 m->st[d].max, m->algo_id[d], m->algos_tried[d],
			 dt == GEMM_TF32 ? "32F_FAST_TF32" : "32F", dt == GEMM_FP8 ? "TN" : "NN", max_err,
			 gemm_tolerance(dt), GV_GEMM_WORKSPACE >> 20, from_search, m->ngpu > 1 ? 1 : 0);
	if (w < 0 || (size_t)w >= len)
		return;
	if (m->ngpu > 1) {
		w += snprintf(buf + w, len - (size_t)w, ",\"gpus\":%d,\"per_gpu_tflops\":[", m->ngpu);
		for (int i = 0; i < m->ngpu && (size_t)w < len; i++)
			w += snprintf(buf + w, len - (size_t)w, "%s%.6g", i ? "," : "", m->tflops[i]);
		if ((size_t)w < len)
			w += snprintf(buf + w, len - (size_t)w, "]");
	}
	if ((size_t)w < len)
		snprintf(buf + w, len - (size_t)w, "}");
}

/* One dtype from correctness check to metrics; BENCH_OK, BENCH_FAIL, or BENCH_SKIP when unsupported. */
static int gemm_dtype_run(struct bench_ctx *ctx, const struct bench_config *cfg, enum gemm_dtype dt, int n,
			  double free_bytes, struct gv_gate *gate, struct gv_gerr *err, double prog0, double prog1)
{
	struct gv_gemm *gs = (struct gv_gemm *)gv_calloc((size_t)n, sizeof *gs);
	struct gv_gemm **g = (struct gv_gemm **)gv_calloc((size_t)n, sizeof *g);
	struct gemm_meas *meas = (struct gemm_meas *)gv_calloc(2, sizeof *meas);
	struct gemm_meas *cur = &meas[0], *best = &meas[1];
	struct bench_reps rp = bench_reps_for(cfg->profile);
	const char *name = gemm_dtype_name(dt);
	char series[64], params[2048];
	int sizes[16], nsizes, rc = BENCH_FAIL, opened = 0, top = cfg->profile == PROFILE_QUICK ? 4 : 8;
	int from_search = 0;
	double worst = 0;
	struct gemm_shape bestsh = { 0, 0, 0 };
	struct gemm_shape *shapes = NULL;

	snprintf(series, sizeof series, "gemm.%s.tflops", name);
	for (int d = 0; d < n; d++) {
		g[d] = &gs[d];
		opened = d + 1;   /* gv_gemm_close() copes with a half-opened one */
		if (gv_gemm_open(g[d], d, dt, err))
			goto out;
	}

	/* 1. correctness on a small case, every element */
	for (int d = 0; d < n; d++) {
		struct gemm_shape s = { GEMM_CHECK_SIZE, GEMM_CHECK_SIZE, GEMM_CHECK_SIZE };
		int r = gv_gemm_set_shape(g[d], s, 1, err);
		if (r == 1) {
			bench_log(ctx, "%s skipped: %s", name, err->text);
			memset(err, 0, sizeof *err);
			rc = BENCH_SKIP;
			goto out;
		}
		double e = 0;
		if (r || gv_gemm_enqueue(g[d], err) || gv_gemm_check(g[d], 0, &e, err))
			goto out;
		if (!(e <= gemm_tolerance(dt))) {
			gv_gerr_set(err, "gemm %s result wrong on gpu %d: max error %.3g > tolerance %.3g (m=n=k=%d)",
				    name, d, e, gemm_tolerance(dt), GEMM_CHECK_SIZE);
			goto out;
		}
		if (e > worst)
			worst = e;
	}
	bench_log(ctx, "%s: %dx%dx%d matches the fp64 reference on %d gpu(s), max error %.3g", name,
		  GEMM_CHECK_SIZE, GEMM_CHECK_SIZE, GEMM_CHECK_SIZE, n, worst);

	/* 2. square sizes, all GPUs at once */
	nsizes = gemm_square_sizes(cfg->profile, sizes, 16);
	best->agg = -1;
	for (int i = 0; i < nsizes; i++) {
		struct gemm_shape s = { sizes[i], sizes[i], sizes[i] };
		if (gemm_bytes(&s, gv_ab_size(dt), gv_d_size(dt)) > 0.45 * free_bytes) {
			bench_log(ctx, "%s: %d^3 skipped: needs more than 45%% of free gpu memory", name, sizes[i]);
			break;
		}
		int r = gemm_measure(g, n, s, rp.warmup, rp.reps, top, gate, cur, err);
		if (r)
			goto out;
		bench_sample(ctx, series, -1, sizes[i], cur->agg);
		bench_log(ctx, "%s %d^3: %.1f TFLOP/s on %d gpu(s)", name, sizes[i], cur->agg, n);
		double last_ms = cur->st[0].median;
		if (cur->agg > best->agg) {
			struct gemm_meas *t = best;
			best = cur;
			cur = t;
		}
		bench_progress(ctx, prog0 + (prog1 - prog0) * 0.5 * (i + 1) / nsizes);
		/* a slow GPU (FP32 on a T4): the next size would take 8x as long */
		double next_s = last_ms / 1e3 * 8 * (rp.warmup + rp.reps) * (top + 1);
		if (i + 1 < nsizes && next_s > (cfg->profile == PROFILE_QUICK ? 8.0 : 60.0)) {
			bench_log(ctx, "%s: larger sizes skipped (%.0f s expected)", name, next_s);
			break;
		}
	}
	if (best->agg < 0) {
		gv_gerr_set(err, "gemm %s: no size fits in free gpu memory", name);
		goto out;
	}

	/* 3. achievable-peak shape search */
	{
		double budget = gemm_search_budget_s(cfg->profile), t0 = bench_now();
		int maxs = 1200;
		shapes = (struct gemm_shape *)gv_calloc((size_t)maxs, sizeof *shapes);
		int ns = gemm_search_shapes(cfg->profile, shapes, maxs), tried = 0;
		for (int i = 0; i < ns && budget > 0 && bench_now() - t0 < budget; i++) {
			if (gemm_bytes(&shapes[i], gv_ab_size(dt), gv_d_size(dt)) > 0.45 * free_bytes)
				continue;
			int r = gemm_measure(g, n, shapes[i], 1, rp.reps / 2 > 3 ? rp.reps / 2 : 3, top, gate, cur,
					     err);
			if (r < 0)
				goto out;
			if (r == 1) {   /* no algorithm for this shape: try the next */
				memset(err, 0, sizeof *err);
				continue;
			}
			tried++;
			if (cur->agg > best->agg) {
				struct gemm_meas *t = best;
				best = cur;
				cur = t;
				from_search = 1;
			}
			bench_progress(ctx, prog0 + (prog1 - prog0) * (0.5 + 0.3 * (bench_now() - t0) / budget));
		}
		if (budget > 0)
			bench_log(ctx, "%s: shape search tried %d shapes in %.1f s, best %dx%dx%d", name, tried,
				  bench_now() - t0, best->sh.m, best->sh.n, best->sh.k);
	}

	/* 4. the best shape again, full repetitions: instance aggregate, then each GPU alone */
	bestsh = best->sh;
	if (gemm_measure(g, n, bestsh, rp.warmup, rp.reps, top, gate, cur, err))
		goto out;
	worst = 0;
	for (int d = 0; d < n; d++) {
		double e = 0;
		if (gv_gemm_check(g[d], GEMM_CHECK_SAMPLES, &e, err))
			goto out;
		if (!(e <= gemm_tolerance(dt))) {
			gv_gerr_set(err, "gemm %s result wrong on gpu %d: max error %.3g > tolerance %.3g (%dx%dx%d)",
				    name, d, e, gemm_tolerance(dt), bestsh.m, bestsh.n, bestsh.k);
			goto out;
		}
		if (e > worst)
			worst = e;
	}
	{
		/* the aggregate row: slowest GPU's median and widest spread */
		struct gemm_meas agg = *cur;
		int slow = 0;
		for (int d = 1; d < n; d++)
			if (cur->st[d].median > cur->st[slow].median)
				slow = d;
		agg.st[0] = cur->st[slow];
		for (int d = 0; d < n; d++)
			if (cur->st[d].spread > agg.st[0].spread)
				agg.st[0].spread = cur->st[d].spread;
		gemm_params(params, sizeof params, &agg, 0, rp.reps, rp.warmup, dt, worst, from_search);
		bench_metric(ctx, series, -1, cur->agg, "TFLOP/s", params);
	}
	if (n == 1) {
		gemm_params(params, sizeof params, cur, 0, rp.reps, rp.warmup, dt, worst, from_search);
		bench_metric(ctx, series, 0, cur->tflops[0], "TFLOP/s", params);
	} else {
		for (int d = 0; d < n; d++) {
			struct gemm_meas *alone = best;   /* reuse the struct */
			if (gemm_measure(&g[d], 1, bestsh, rp.warmup, rp.reps, top, gate, alone, err))
				goto out;
			gemm_params(params, sizeof params, alone, 0, rp.reps, rp.warmup, dt, worst, from_search);
			bench_metric(ctx, series, d, alone->tflops[0], "TFLOP/s", params);
		}
	}
	bench_progress(ctx, prog1);
	rc = BENCH_OK;
out:
	for (int d = 0; d < opened; d++)
		gv_gemm_close(g[d]);
	free(shapes);
	free(meas);
	free(g);
	free(gs);
	return rc;
}

static int gemm_run(struct bench_ctx *ctx, const struct bench_config *cfg)
{
	struct gv_gerr err;
	struct gv_gate gate = { NULL };
	int n = 0, min_cc = 1000, ran = 0, rc = BENCH_FAIL;
	double free_min = 1e30;
	char echo[512];
	int w;

	memset(&err, 0, sizeof err);
	if (gv_probe_gpus(ctx, &n) != BENCH_OK)
		return BENCH_SKIP;
	if (n > GEMM_MAX_GPUS)
		n = GEMM_MAX_GPUS;
	for (int d = 0; d < n; d++) {
		cudaDeviceProp p;
		size_t fr = 0, tot = 0;
		GV_CUDA(&err, cudaGetDeviceProperties(&p, d));
		GV_CUDA(&err, cudaSetDevice(d));
		GV_CUDA(&err, cudaMemGetInfo(&fr, &tot));
		if (p.major * 10 + p.minor < min_cc)
			min_cc = p.major * 10 + p.minor;
		if ((double)fr < free_min)
			free_min = (double)fr;
		bench_log(ctx, "gpu %d: %s, compute capability %d.%d, %.1f GiB free", d, p.name, p.major, p.minor,
			  fr / 1073741824.0);
	}
	if (gv_gate_init(&gate, &err))
		goto fail;
	w = snprintf(echo, sizeof echo, "{\"profile\":\"%s\",\"gpus\":%d,\"min_cc\":%d,\"dtypes\":[",
		     bench_profile_name(cfg->profile), n, min_cc);
	for (int dt = 0; dt < GEMM_DTYPE_COUNT; dt++) {
		if (min_cc < gemm_dtype_min_cc((enum gemm_dtype)dt)) {
			bench_log(ctx, "%s skipped: needs compute capability %d.%d", gemm_dtype_name((enum gemm_dtype)dt),
				  gemm_dtype_min_cc((enum gemm_dtype)dt) / 10, gemm_dtype_min_cc((enum gemm_dtype)dt) % 10);
			continue;
		}
		int r = gemm_dtype_run(ctx, cfg, (enum gemm_dtype)dt, n, free_min, &gate, &err,
				       (double)dt / GEMM_DTYPE_COUNT, (double)(dt + 1) / GEMM_DTYPE_COUNT);
		if (r == BENCH_FAIL)
			goto fail;
		if (r == BENCH_OK) {
			ran++;
			if (w > 0 && (size_t)w < sizeof echo)
				w += snprintf(echo + w, sizeof echo - (size_t)w, "%s\"%s\"", ran > 1 ? "," : "",
					      gemm_dtype_name((enum gemm_dtype)dt));
		}
	}
	if (w > 0 && (size_t)w < sizeof echo)
		snprintf(echo + w, sizeof echo - (size_t)w, "]}");
	bench_config_echo(ctx, echo);
	gv_gate_free(&gate);
	if (!ran) {
		bench_reason(ctx, "no gemm data type is supported on this gpu");
		return BENCH_SKIP;
	}
	return BENCH_OK;
fail:
	gv_gate_free(&gate);
	bench_reason(ctx, "%s", err.set ? err.text : "gemm failed");
	return rc;
}

extern "C" const struct bench bench_gemm = {
	.name = "gemm",
	.summary = "cuBLASLt GEMM FP32/TF32/FP16/BF16/FP8 TFLOP/s, every GPU at once and each alone",
	.flags = BENCH_NEEDS_GPU,
	.deadline_s = gemm_deadline,
	.probe = gemm_probe,
	.run = gemm_run,
};
