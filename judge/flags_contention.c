/*
 * flags_contention.c - CONTENTION: another tenant shares the GPU, judged
 * from independent kinds of evidence, never from one number (see flags.h
 * and the signal list below).
 */
#include "judge/flags.h"
#include "judge/flags_int.h"
#include "benches/bench.h"
#include "platform/inv_parse.h"
#include "common/gpus.h"
#include "common/stats.h"
#include "common/util.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---- contention ---- */

/*
 * Signals, each judged on its own series:
 *   foreign    another compute process held the GPU during the soak (soak.foreign_procs.count);
 *              invisible on a time-sliced vGPU, so every decision below also stands without it
 *   spread     a gemm metric's repetition spread > FLAG_CONTENTION_SPREAD (burst-timed runs), or
 *              its batch_spread > FLAG_CONTENTION_BATCH_SPREAD (steady-timed ones)
 *   dips       >= FLAG_DIP_MIN_EPISODES separate seconds-long dips of soak.tflops below
 *              (1 - FLAG_DIP_FRAC) x median, at most FLAG_DIP_MAX_THROTTLED of them throttled
 *   jitter     second-to-second changes of soak.tflops above FLAG_JITTER_FRAC (a tenant whose
 *              duty cycle is shorter than the sampling second)
 *   efficiency soak TFLOP/s per watt and per SM MHz below FLAG_CONTENTION_EFF_FRAC x the model's
 *              clean reference (common/gpus.h gpu_reference)
 *   low        (models without that reference) soak.tflops median < FLAG_CONTENTION_LOW_FRAC x
 *              the model's peak while no thermal/HW slowdown was active
 *   steal      host.cpu_steal.pct >= FLAG_CONTENTION_STEAL_PCT
 *   vgpu       the GPU is a vGPU guest
 * How they combine: contention_flags().
 */
struct xm {
	double x;
	unsigned long long mask;
};

static int cmp_xm(const void *a, const void *b)
{
	double x = ((const struct xm *)a)->x, y = ((const struct xm *)b)->x;
	return (x > y) - (x < y);
}

/* Whether a slowdown reason was active in the sample nearest x (within half a second). */
static int slowed_at(const struct xm *v, size_t n, double x)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (v[mid].x < x - 0.5)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i < n && v[i].x <= x + 0.5; i++)
		if (fabs(v[i].x - x) < 0.5 && (v[i].mask & SLOWDOWN_BITS))
			return 1;
	return 0;
}

static void dips_signal(const struct fprun *r, int gpu, json_t *signals)
{
	struct fpts pts = flags_series(r, "soak.tflops", gpu), mpts = flags_series(r, "soak.clock_events.mask", gpu);
	double x0 = 0, x1 = 0, med;
	int n;
	if (flags_pts_span(&pts, &x0, &x1) || flags_pts_median(&pts, x0, x1, &med, &n) || n < 10 || !(med > 0)) {
		flags_pts_free(&pts);
		flags_pts_free(&mpts);
		return;
	}
	size_t nm = 0;
	struct xm *masks = gv_malloc((mpts.n + 1) * sizeof *masks);
	for (size_t i = 0; i < mpts.n; i++)
		if (!flags_mask_of(&mpts, i, &masks[nm].x, &masks[nm].mask))
			nm++;
	qsort(masks, nm, sizeof *masks, cmp_xm);
	int episodes = 0, in_dip = 0, dip_s = 0, throttled = 0;
	double first_start = 0, last_start = 0;
	for (size_t i = 0; i < pts.n; i++) {
		double x = pts.xy[2 * i], y = pts.xy[2 * i + 1];
		int dip = y < (1 - FLAG_DIP_FRAC) * med;
		if (dip) {
			dip_s++;
			if (!in_dip) {
				if (!episodes)
					first_start = x;
				last_start = x;
				episodes++;
			}
			throttled += slowed_at(masks, nm, x);
		}
		in_dip = dip;
	}
	free(masks);
	flags_pts_free(&pts);
	flags_pts_free(&mpts);
	if (episodes >= FLAG_DIP_MIN_EPISODES && throttled <= FLAG_DIP_MAX_THROTTLED * dip_s)
		json_array_append_new(signals, json_pack("{s:s,s:i,s:i,s:i,s:i,s:f,s:f}", "signal", "dips", "gpu", gpu,
			"episodes", episodes, "dip_seconds", dip_s, "throttled_dip_seconds", throttled,
			"median_tflops", med, "mean_interval_s",
			episodes > 1 ? (last_start - first_start) / (episodes - 1) : 0.0));
}

/* The soak's dtype and size (params of its first-window metric, else the bench's config). */
static const char *soak_dtype(struct fprun *r, int gpu, double *m)
{
	const struct fp_metric *row = fprun_metric(r, "soak.tflops.first_min", gpu);
	const struct fp_obj *par = row ? &row->params : NULL;
	if (!par || fp_obj_num(par, "m", m))
		*m = 0;
	return par ? fp_obj_str(par, "dtype") : NULL;
}

/* Median of a soak series of one GPU over all its points; -1 when fewer than min points. */
static int soak_median(const struct fprun *r, const char *series, int gpu, int min, double *med)
{
	struct fpts pts = flags_series(r, series, gpu);
	double x0 = 0, x1 = 0;
	int n, bad = flags_pts_span(&pts, &x0, &x1) || flags_pts_median(&pts, x0, x1, med, &n) || n < min || !(*med > 0);
	flags_pts_free(&pts);
	return bad ? -1 : 0;
}

/*
 * throughput: soak TFLOP/s per watt and per SM MHz both below FLAG_CONTENTION_EFF_FRAC x what a
 * clean GPU of the model achieves (gpu_reference): the board drew its power and ran its clocks,
 * and this process got less work done with them.  A power cap or a thermal slowdown lowers the
 * clock and the power together and leaves both ratios where they were; a tenant in another VM
 * spends them.  Models without a soak reference fall back to "low" (below a fraction of peak).
 * Returns 1 when the model had a reference to judge against.
 */
static int efficiency_signal(struct fprun *r, int gpu, json_t *signals)
{
	const struct gpu_ref *ref = r->d.model;
	const struct gpu_reference *a = ref ? gpu_reference_find(ref->key) : NULL;
	double m = 0, tf, w, mhz;
	const char *dts = soak_dtype(r, gpu, &m);
	if (!a || !(a->soak_tflops_per_w > 0) || !(a->soak_tflops_per_mhz > 0) || !dts || strcmp(dts, a->soak_dtype) ||
	    (m > 0 && m != (double)a->soak_m))
		return 0;
	if (soak_median(r, "soak.tflops", gpu, FLAG_JITTER_MIN_SAMPLES, &tf) ||
	    soak_median(r, "soak.power.w", gpu, FLAG_JITTER_MIN_SAMPLES, &w) ||
	    soak_median(r, "soak.sm_clock.mhz", gpu, FLAG_JITTER_MIN_SAMPLES, &mhz))
		return 1;
	double rw = tf / w / a->soak_tflops_per_w, rc = tf / mhz / a->soak_tflops_per_mhz;
	if (rw < FLAG_CONTENTION_EFF_FRAC && rc < FLAG_CONTENTION_EFF_FRAC)
		json_array_append_new(signals, json_pack("{s:s,s:i,s:f,s:f,s:f,s:f,s:f,s:f,s:f,s:f,s:f,s:s}",
			"signal", "efficiency", "gpu", gpu, "median_tflops", tf, "median_power_w", w,
			"median_sm_mhz", mhz, "tflops_per_w", tf / w, "reference_tflops_per_w", a->soak_tflops_per_w,
			"tflops_per_mhz", tf / mhz, "reference_tflops_per_mhz", a->soak_tflops_per_mhz,
			"fraction_per_w", rw, "fraction_per_mhz", rc, "reference", a->key));
	return 1;
}

/*
 * window: the same judgement on the gemm bench's steady window (benches/steady.h), when its
 * headline is the workload the soak reference holds for (dtype and m = n = k): a second,
 * independent measurement of work per watt and per MHz, minutes before the soak, by another
 * loop.  A tenant that time-slices the GPU evenly (a vGPU neighbour running all the time) leaves
 * neither dips nor jitter in the soak, only the lost work, which this and the soak's efficiency
 * then show twice.  Steady-timed runs only: a burst figure is not a sustained one.
 */
static void window_signal(const struct fprun *r, const struct fp_metric *m, json_t *signals)
{
	const struct gpu_ref *ref = r->d.model;
	const struct gpu_reference *a = ref ? gpu_reference_find(ref->key) : NULL;
	const struct fp_obj *pm = &m->params;
	char want[64];
	double v = m->value, w, mhz, mm, nn, kk;
	if (!a || !(a->soak_tflops_per_w > 0) || !(a->soak_tflops_per_mhz > 0) || !a->soak_dtype)
		return;
	snprintf(want, sizeof want, "gemm.%s.tflops", a->soak_dtype);
	if (strcmp(m->name, want) || m->gpu < 0 || !isfinite(v) ||
	    fp_obj_num(pm, "power_w", &w) || fp_obj_num(pm, "sm_clock_mhz", &mhz) ||
	    fp_obj_num(pm, "m", &mm) || fp_obj_num(pm, "n", &nn) || fp_obj_num(pm, "k", &kk) ||
	    mm != (double)a->soak_m || nn != (double)a->soak_m || kk != (double)a->soak_m || !(w > 0) || !(mhz > 0))
		return;
	const char *timing = fp_obj_str(pm, "timing");
	if (!timing || strcmp(timing, "steady"))
		return;
	double rw = v / w / a->soak_tflops_per_w, rc = v / mhz / a->soak_tflops_per_mhz;
	if (rw < FLAG_CONTENTION_EFF_FRAC && rc < FLAG_CONTENTION_EFF_FRAC)
		json_array_append_new(signals, json_pack("{s:s,s:i,s:s,s:f,s:f,s:f,s:f,s:f,s:s}", "signal", "window",
			"gpu", m->gpu, "metric", m->name, "tflops", v, "power_w", w,
			"sm_mhz", mhz, "fraction_per_w", rw, "fraction_per_mhz", rc, "reference", a->key));
}

static void low_signal(struct fprun *r, int gpu, const struct soak_gpu *sg, json_t *signals)
{
	const struct gpu_ref *ref = r->d.model;
	struct fpts pts = flags_series(r, "soak.tflops", gpu);
	double x0 = 0, x1 = 0, med, slow = 0, m;
	int n, none = !ref || flags_pts_span(&pts, &x0, &x1) || flags_pts_median(&pts, x0, x1, &med, &n);
	flags_pts_free(&pts);
	if (none)
		return;
	/* the soak's dtype, else BF16, else FP16 */
	const char *dts = soak_dtype(r, gpu, &m);
	int dt = dts ? gpu_dtype_from_name(dts) : -1;
	double peak = dt >= 0 && ref->peak_tflops[dt] > 0 ? ref->peak_tflops[dt] :
		      ref->peak_tflops[GPU_BF16] > 0 ? ref->peak_tflops[GPU_BF16] : ref->peak_tflops[GPU_FP16];
	if (!(peak > 0))
		return;
	if (sg)
		slow = sg->bit_s[R_SW_THERMAL] + sg->bit_s[R_HW_THERMAL] + sg->bit_s[R_HW_SLOWDOWN] +
		       sg->bit_s[R_HW_POWER_BRAKE];
	if (med < FLAG_CONTENTION_LOW_FRAC * peak && slow < FLAG_HW_MIN_S)
		json_array_append_new(signals, json_pack("{s:s,s:i,s:f,s:f,s:f}", "signal", "low", "gpu", gpu,
			"median_tflops", med, "peak_tflops", peak, "slowdown_s", slow));
}

/*
 * jitter: a tenant with a duty cycle shorter than the sampling second shows no dips, but makes
 * each second's throughput differ from the next.  The 75th percentile of |y[i+1] - y[i]| over the
 * median (the first second, the boost burst, left out) ignores a few isolated dips and a step
 * (decay), which have their own flags.
 */
static void jitter_signal(const struct fprun *r, int gpu, json_t *signals)
{
	struct fpts pts = flags_series(r, "soak.tflops", gpu);
	size_t n = pts.n, k = 0, i;
	double med, prev = NAN;
	if (n < FLAG_JITTER_MIN_SAMPLES + 1 || soak_median(r, "soak.tflops", gpu, FLAG_JITTER_MIN_SAMPLES, &med)) {
		flags_pts_free(&pts);
		return;
	}
	double *d = gv_malloc(n * sizeof *d);
	for (i = 1; i < n; i++) {
		double y = pts.xy[2 * i + 1];
		if (isnan(y))
			continue;
		if (isfinite(prev))
			d[k++] = fabs(y - prev);
		prev = y;
	}
	if (k + 1 >= FLAG_JITTER_MIN_SAMPLES) {
		qsort(d, k, sizeof *d, gv_cmp_double);
		double pos = 0.75 * (double)(k - 1), lo = d[(size_t)pos];
		double hi = d[(size_t)pos + 1 < k ? (size_t)pos + 1 : k - 1];
		double p75 = lo + (hi - lo) * (pos - floor(pos));
		if (p75 / med > FLAG_JITTER_FRAC)
			json_array_append_new(signals, json_pack("{s:s,s:i,s:f,s:f,s:f,s:i}", "signal", "jitter", "gpu",
				gpu, "p75_step_tflops", p75, "median_tflops", med, "p75_step_frac", p75 / med,
				"steps", (int)k));
	}
	free(d);
	flags_pts_free(&pts);
}

/* Whether GPUVET_TEST_HIDE_FOREIGN asks to judge as if the other tenant were invisible (a vGPU). */
static int foreign_hidden(void)
{
	const char *e = getenv("GPUVET_TEST_HIDE_FOREIGN");
	return e && *e && strcmp(e, "0");
}

static int has_kind(const json_t *signals, const char *const *names)
{
	size_t i;
	json_t *s;
	json_array_foreach(signals, i, s)
		for (int k = 0; names[k]; k++)
			if (!strcmp(json_string_value(json_object_get(s, "signal")), names[k]))
				return 1;
	return 0;
}

static void contention_signals(struct fprun *r, int ngpu, json_t *signals)
{
	for (int gi = -1; gi < ngpu && !foreign_hidden(); gi++) {
		double f;
		if (!fprun_value(r, "soak.foreign_procs.count", gi, &f) && f > 0)
			json_array_append_new(signals, json_pack("{s:s,s:i,s:f}", "signal", "foreign", "gpu", gi,
								 "processes", f));
	}
	for (size_t i = 0; i < r->nmetrics; i++) {
		const struct fp_metric *m = &r->metrics[i];
		double sp;
		/* burst-timed runs (before steady timing) carry "spread"; steady ones "batch_spread" */
		int hit = !fp_obj_num(&m->params, "spread", &sp) ? sp > FLAG_CONTENTION_SPREAD
			  : !fp_obj_num(&m->params, "batch_spread", &sp) && sp > FLAG_CONTENTION_BATCH_SPREAD;
		if (!strncmp(m->name, "gemm.", 5) && hit)
			json_array_append_new(signals, json_pack("{s:s,s:i,s:s,s:f}", "signal", "spread", "gpu", m->gpu,
								 "metric", m->name, "spread", sp));
		if (!strncmp(m->name, "gemm.", 5))
			window_signal(r, m, signals);
	}
	for (int gi = 0; gi < ngpu; gi++) {
		struct soak_gpu sg;
		int have = !flags_soak_gpu_read(r, gi, &sg);
		dips_signal(r, gi, signals);
		jitter_signal(r, gi, signals);
		if (!efficiency_signal(r, gi, signals))
			low_signal(r, gi, have ? &sg : NULL, signals);
	}
	double st;
	if (!fprun_value(r, "host.cpu_steal.pct", -1, &st) && st >= FLAG_CONTENTION_STEAL_PCT)
		json_array_append_new(signals, json_pack("{s:s,s:i,s:f}", "signal", "steal", "gpu", -1, "steal_pct", st));
	for (size_t i = 0; i < r->inv.ngpus; i++)
		if (r->inv.gpus[i].vgpu) {
			json_array_append_new(signals, json_pack("{s:s,s:I}", "signal", "vgpu", "gpu", (json_int_t)i));
			break;
		}
}

/*
 * Kinds of evidence (eight GPUs with spread are one kind; dips and jitter are one, "unsteady";
 * efficiency and low are one, "throughput"; the gemm window's efficiency is "gemm_window"):
 *   foreign + any other kind               critical
 *   throughput + any other kind            critical (the loss is measured, and not alone)
 *   foreign alone                          warning
 *   two or more other kinds                warning
 * One number never raises it: throughput alone is a slow GPU (BELOW_REFERENCE), not a shared one.
 */
void flags_contention(struct fprun *r, int ngpu, json_t *out)
{
	static const char *const k_foreign[] = { "foreign", NULL }, *const k_thr[] = { "efficiency", "low", NULL },
		*const k_spread[] = { "spread", NULL }, *const k_unsteady[] = { "dips", "jitter", NULL },
		*const k_steal[] = { "steal", NULL }, *const k_vgpu[] = { "vgpu", NULL },
		*const k_window[] = { "window", NULL };
	json_t *signals = json_array(), *kinds = json_array();
	contention_signals(r, ngpu, signals);
	int foreign = has_kind(signals, k_foreign), thr = has_kind(signals, k_thr), others = 0;
	const struct { const char *name; const char *const *sig; } kt[] = {
		{ "throughput", k_thr }, { "spread", k_spread }, { "unsteady", k_unsteady }, { "steal", k_steal },
		{ "vgpu", k_vgpu }, { "gemm_window", k_window },
	};
	for (size_t k = 0; k < sizeof kt / sizeof kt[0]; k++)
		if (has_kind(signals, kt[k].sig)) {
			others++;
			json_array_append_new(kinds, json_string(kt[k].name));
		}
	const char *sev = foreign ? (others ? "critical" : "warning") :
			  thr && others >= 2 ? "critical" : others >= 2 ? "warning" : NULL;
	if (!sev) {
		json_decref(signals);
		json_decref(kinds);
		return;
	}
	json_t *e = json_pack("{s:i,s:o,s:o,s:b,s:{s:f,s:f,s:f,s:i,s:f,s:f,s:f,s:f,s:f}}", "gpu", -1, "signals", signals,
		"kinds", kinds, "foreign_hidden", foreign_hidden(), "thresholds",
		"FLAG_CONTENTION_SPREAD", FLAG_CONTENTION_SPREAD, "FLAG_CONTENTION_BATCH_SPREAD",
		FLAG_CONTENTION_BATCH_SPREAD, "FLAG_DIP_FRAC", FLAG_DIP_FRAC,
		"FLAG_DIP_MIN_EPISODES", FLAG_DIP_MIN_EPISODES, "FLAG_DIP_MAX_THROTTLED", FLAG_DIP_MAX_THROTTLED,
		"FLAG_CONTENTION_STEAL_PCT", FLAG_CONTENTION_STEAL_PCT, "FLAG_CONTENTION_LOW_FRAC",
		FLAG_CONTENTION_LOW_FRAC, "FLAG_CONTENTION_EFF_FRAC", FLAG_CONTENTION_EFF_FRAC, "FLAG_JITTER_FRAC",
		FLAG_JITTER_FRAC);
	flags_add(out, "CONTENTION", sev, e, "%s (%d other kind(s) of evidence)",
		 foreign ? "other compute processes used the gpu during the run" :
		 thr ? "the gpu delivered less work per watt and per clock than its model, as a shared gpu does" :
		       "the gpu behaved as if shared", others);
}

