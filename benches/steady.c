/*
 * steady.c - the settling rule and the measuring window of steady.h.
 */
#include "benches/steady.h"
#include "common/stats.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct steady_cfg steady_cfg_for(enum bench_profile p)
{
	struct steady_cfg c = {
		.min_warm_s = 0.5,
		.max_warm_s = 3.0,
		.window_s = 1.0,
		.batch_s = 0.02,
		.cap_frac = 0.95,
		.hold_s = 0.25,
		.stable_tol = 0.01,
		.stable_win_s = 0.25,
	};
	switch (p) {
	case PROFILE_FULL:
		c.max_warm_s = 5.0;
		c.window_s = 4.0;
		break;
	case PROFILE_STANDARD:
		c.max_warm_s = 5.0;
		c.window_s = 2.0;
		break;
	case PROFILE_QUICK:
	default:
		break;
	}
	return c;
}

static void *grow(void *p, int *cap, int need, size_t elem)
{
	if (need <= *cap)
		return p;
	int nc = *cap ? *cap * 2 : 256;
	while (nc < need)
		nc *= 2;
	void *q = realloc(p, (size_t)nc * elem);
	if (!q)
		abort();
	*cap = nc;
	return q;
}

void steady_trace_add_batch(struct steady_trace *tr, double t, double value)
{
	tr->b = (struct steady_batch *)grow(tr->b, &tr->cap_b, tr->nb + 1, sizeof *tr->b);
	tr->b[tr->nb].t = t;
	tr->b[tr->nb].value = value;
	tr->nb++;
}

void steady_trace_add_nv(struct steady_trace *tr, const struct gpu_reading *s)
{
	tr->nv = (struct gpu_reading *)grow(tr->nv, &tr->cap_nv, tr->nnv + 1, sizeof *tr->nv);
	tr->nv[tr->nnv++] = *s;
}

void steady_trace_free(struct steady_trace *tr)
{
	free(tr->b);
	free(tr->nv);
	memset(tr, 0, sizeof *tr);
}

const char *steady_verdict_name(enum steady_verdict v)
{
	switch (v) {
	case STEADY_CAPPED: return "power_cap";
	case STEADY_STABLE: return "stable_clocks";
	case STEADY_STABLE_NO_NVML: return "stable_throughput";
	case STEADY_TIMEOUT: return "timeout";
	case STEADY_WARMING:
	default: return "warming";
	}
}

/* Mean batch throughput over (lo, hi]; NAN when no batch ends there. */
static double batch_mean(const struct steady_trace *tr, double lo, double hi)
{
	double s = 0;
	int n = 0;
	for (int i = tr->nb - 1; i >= 0 && tr->b[i].t > lo; i--)
		if (tr->b[i].t <= hi) {
			s += tr->b[i].value;
			n++;
		}
	return n ? s / n : NAN;
}

/* Mean SM clock over (lo, hi] and whether a power-cap reason was seen there. */
static double clock_mean(const struct steady_trace *tr, double lo, double hi, int *capped)
{
	double s = 0;
	int n = 0;
	for (int i = tr->nnv - 1; i >= 0 && tr->nv[i].t > lo; i--) {
		const struct gpu_reading *v = &tr->nv[i];
		if (v->t > hi)
			continue;
		if (v->have_reasons && (v->reasons & STEADY_REASON_POWER_CAP))
			*capped = 1;
		if (isfinite(v->sm_mhz)) {
			s += v->sm_mhz;
			n++;
		}
	}
	return n ? s / n : NAN;
}

static int agree(double a, double b, double tol)
{
	return isfinite(a) && isfinite(b) && b != 0 && fabs(a - b) <= tol * fabs(b);
}

/* Every reading of the last hold_s at the cap (at least two readings). */
static int at_cap(const struct steady_trace *tr, const struct steady_cfg *c, double now)
{
	int n = 0;
	for (int i = tr->nnv - 1; i >= 0 && tr->nv[i].t >= now - c->hold_s; i--) {
		const struct gpu_reading *v = &tr->nv[i];
		if (!isfinite(v->power_w) || !isfinite(v->cap_w) || v->cap_w <= 0)
			return 0;
		if (v->power_w < c->cap_frac * v->cap_w)
			return 0;
		n++;
	}
	return n >= 2;
}

enum steady_verdict steady_settled(const struct steady_trace *tr, const struct steady_cfg *c, double now)
{
	if (now >= c->max_warm_s)
		return STEADY_TIMEOUT;
	if (now < c->min_warm_s)
		return STEADY_WARMING;
	if (tr->nnv > 0) {
		int capped = 0;
		double w = c->stable_win_s;
		if (at_cap(tr, c, now))
			return STEADY_CAPPED;
		double c1 = clock_mean(tr, now - 2 * w, now - w, &capped);
		double c2 = clock_mean(tr, now - w, now, &capped);
		if (isfinite(c1) && isfinite(c2)) {
			if (!capped && agree(c2, c1, c->stable_tol) &&
			    agree(batch_mean(tr, now - w, now), batch_mean(tr, now - 2 * w, now - w), c->stable_tol))
				return STEADY_STABLE;
			return STEADY_WARMING;
		}
	}
	/* no clock readings: throughput alone, over whole power-cap periods */
	if (now >= 2.0 && agree(batch_mean(tr, now - 1.0, now), batch_mean(tr, now - 2.0, now - 1.0), c->stable_tol))
		return STEADY_STABLE_NO_NVML;
	return STEADY_WARMING;
}

/* Nearest-rank quantile of sorted v. */
static double quantile(const double *v, int n, double q)
{
	int i = (int)floor(q * (n - 1) + 0.5);
	return v[i < 0 ? 0 : i >= n ? n - 1 : i];
}

static void summarize_nv(const struct steady_trace *tr, double t0, double t1, struct steady_summary *o)
{
	double sum[4] = { 0, 0, 0, 0 };
	int cnt[4] = { 0, 0, 0, 0 };
	o->temp_max_c = NAN;
	for (int i = 0; i < tr->nnv; i++) {
		const struct gpu_reading *v = &tr->nv[i];
		if (v->t < t0 || v->t > t1)
			continue;
		const double x[4] = { v->sm_mhz, v->power_w, v->cap_w, v->temp_c };
		for (int k = 0; k < 4; k++)
			if (isfinite(x[k])) {
				sum[k] += x[k];
				cnt[k]++;
			}
		if (isfinite(v->temp_c) && !(v->temp_c <= o->temp_max_c))
			o->temp_max_c = v->temp_c;
		if (v->have_reasons)
			o->reasons |= v->reasons;
		o->nv_samples++;
	}
	o->sm_mhz = cnt[0] ? sum[0] / cnt[0] : NAN;
	o->power_w = cnt[1] ? sum[1] / cnt[1] : NAN;
	o->cap_w = cnt[2] ? sum[2] / cnt[2] : NAN;
	o->temp_c = cnt[3] ? sum[3] / cnt[3] : NAN;
}

void steady_summarize(const struct steady_trace *tr, double t0, double t1, struct steady_summary *o)
{
	enum steady_verdict how = o->how;
	memset(o, 0, sizeof *o);
	o->how = how;
	o->t0 = o->settle_s = t0;
	o->t1 = t1;
	o->burst = NAN;
	for (int i = 0; i < tr->nb && tr->b[i].t <= STEADY_BURST_S; i++)
		if (!(tr->b[i].value <= o->burst))
			o->burst = tr->b[i].value;
	size_t cap = tr->nb > 0 ? (size_t)tr->nb : 1;
	double *v = (double *)malloc(sizeof *v * cap);
	if (!v)
		abort();
	double sum = 0, inv = 0;
	for (int i = 0; i < tr->nb; i++)
		if (tr->b[i].t > t0 && tr->b[i].t <= t1 && tr->b[i].value > 0) {
			v[o->batches++] = tr->b[i].value;
			sum += tr->b[i].value;
			inv += 1.0 / tr->b[i].value;
		}
	if (o->batches) {
		int n = o->batches;
		o->median = gv_median_inplace(v, (size_t)n);  /* sorts v */
		o->min = v[0];
		o->max = v[n - 1];
		o->mean = sum / n;
		o->rate = n / inv;
		o->p05 = quantile(v, n, 0.05);
		o->p95 = quantile(v, n, 0.95);
		o->batch_spread = o->median > 0 ? (o->p95 - o->p05) / o->median : 0;
	} else {
		o->rate = o->median = o->mean = o->min = o->max = o->p05 = o->p95 = NAN;
	}
	free(v);
	summarize_nv(tr, t0, t1, o);
}

void steady_reason_names(unsigned long long mask, char *buf, size_t len)
{
	static const struct { unsigned long long bit; const char *name; } names[] = {
		{ 0x1, "gpu_idle" }, { 0x2, "applications_clocks" }, { 0x4, "sw_power_cap" },
		{ 0x8, "hw_slowdown" }, { 0x10, "sync_boost" }, { 0x20, "sw_thermal" },
		{ 0x40, "hw_thermal" }, { 0x80, "hw_power_brake" }, { 0x100, "display_clocks" },
		{ 0x200, "board_limit" }, { 0x400, "reliability" },
	};
	size_t w = 0;
	if (len)
		buf[0] = '\0';
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (mask & names[i].bit) {
			int r = snprintf(buf + w, len - w, "%s%s", w ? "," : "", names[i].name);
			if (r < 0 || (size_t)r >= len - w)
				return;
			w += (size_t)r;
		}
}

/* JSON number or null. */
static const char *num(char *b, size_t n, double v, const char *fmt)
{
	if (!isfinite(v))
		return "null";
	snprintf(b, n, fmt, v);
	return b;
}

int steady_params(char *buf, size_t len, const struct steady_summary *s)
{
	char b[7][32], names[256], quoted[320];
	size_t q = 0;
	steady_reason_names(s->reasons, names, sizeof names);
	/* "a,b" -> "\"a\",\"b\"" */
	quoted[0] = '\0';
	for (const char *p = names; *p && q + 4 < sizeof quoted; p++) {
		if (p == names)
			quoted[q++] = '"';
		if (*p == ',') {
			quoted[q++] = '"';
			quoted[q++] = ',';
			quoted[q++] = '"';
		} else {
			quoted[q++] = *p;
		}
		if (!p[1])
			quoted[q++] = '"';
		quoted[q] = '\0';
	}
	int w = snprintf(buf, len,
			 "\"timing\":\"steady\",\"settled_by\":\"%s\",\"settle_s\":%.3g,\"window_s\":%.3g,"
			 "\"batches\":%d,\"batch_median\":%s,\"batch_spread\":%.4g,\"burst\":%s,\"sm_clock_mhz\":%s,\"power_w\":%s,"
			 "\"power_cap_w\":%s,\"temp_c\":%s,\"temp_max_c\":%s,\"clock_event_reasons\":[%s],"
			 "\"clock_event_mask\":%llu,\"nvml_samples\":%d",
			 steady_verdict_name(s->how), s->settle_s, s->t1 - s->t0, s->batches,
			 num(b[6], sizeof b[6], s->median, "%.6g"), s->batch_spread,
			 num(b[0], sizeof b[0], s->burst, "%.6g"), num(b[1], sizeof b[1], s->sm_mhz, "%.5g"),
			 num(b[2], sizeof b[2], s->power_w, "%.5g"), num(b[3], sizeof b[3], s->cap_w, "%.5g"),
			 num(b[4], sizeof b[4], s->temp_c, "%.4g"), num(b[5], sizeof b[5], s->temp_max_c, "%.4g"),
			 quoted, s->reasons, s->nv_samples);
	return w < 0 || (size_t)w >= len ? -1 : w;
}
