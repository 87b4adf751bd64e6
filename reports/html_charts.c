/* html_charts.c - the charts of one run: soak series with throttling shaded, copy and all-reduce sweeps, GEMM (see html.h). */
#include "reports/html.h"
#include "reports/report_int.h"
#include "benches/bench.h"
#include "reports/html_escape.h"
#include "reports/sha256.h"
#include "reports/svg.h"
#include "judge/rank.h"
#include "judge/flags.h"
#include "judge/accept.h"
#include "pricing/catalog.h"
#include "common/gpus.h"
#include "results/store.h"
#include "results/fprun.h"
#include "common/stats.h"
#include "common/util.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- charts of a run's samples ---- */





static int cmp_pt(const void *a, const void *b)
{
	const struct pt *p = a, *q = b;
	return (p->x > q->x) - (p->x < q->x);
}

/* The points of one series, x ascending (a null reading left out). */
static size_t load_points(const struct fp_series *sr, double **xs, double **ys)
{
	size_t n = sr->n, k = 0, i;
	struct pt *tmp = gv_malloc((n ? n : 1) * sizeof *tmp);
	int sorted = 1;

	for (i = 0; i < n; i++) {
		double x = sr->xy[2 * i], y = sr->xy[2 * i + 1];
		if (isnan(x) || isnan(y))
			continue;
		tmp[k].x = x;
		tmp[k].y = y;
		if (k && tmp[k].x < tmp[k - 1].x)
			sorted = 0;
		k++;
	}
	if (!sorted)
		qsort(tmp, k, sizeof *tmp, cmp_pt);
	*xs = gv_malloc((k ? k : 1) * sizeof **xs);
	*ys = gv_malloc((k ? k : 1) * sizeof **ys);
	for (i = 0; i < k; i++) {
		(*xs)[i] = tmp[i].x;
		(*ys)[i] = tmp[i].y;
	}
	free(tmp);
	return k;
}

/* Collects every series whose name matches (exact, or prefix+suffix when suffix given). */
size_t rep_collect(const struct fprun *fp, const char *prefix, const char *suffix, struct series_buf *out, size_t max)
{
	size_t i, n = 0, lp = strlen(prefix), ls = suffix ? strlen(suffix) : 0;

	for (i = 0; i < fp->nseries; i++) {
		const struct fp_series *sr = &fp->series[i];
		const char *name = sr->name;
		size_t ln;
		if (!name || n >= max)
			continue;
		ln = strlen(name);
		if (suffix ? (ln < lp + ls || strncmp(name, prefix, lp) || strcmp(name + ln - ls, suffix))
			   : strcmp(name, prefix))
			continue;
		out[n].label = gv_strdup(name);
		out[n].gpu = sr->gpu;
		out[n].n = load_points(sr, &out[n].x, &out[n].y);
		n++;
	}
	return n;
}

void rep_series_free(struct series_buf *b, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(b[i].label);
		free(b[i].x);
		free(b[i].y);
	}
}

/*
 * Shaded soak intervals.  A GPU at its power cap under full load is doing
 * what it should (NVML's SW power cap reason is set on every healthy
 * H100 running GEMMs): that is BAND_CAP, drawn faintly and named as normal.
 * Throttling is thermal or hardware slowdown, or a power cap that explains
 * less than the clocks lost: judge/flags.h decides which (flags_reason_kinds,
 * flags_cap_is_throttling), the report only draws it.
 */

static const char *const BAND_NAMES[N_BAND_KINDS] = {
	"thermal throttling", "power throttling (limit under TDP, or clocks held under the cap)",
	"hardware slowdown", "XID event", "at power cap (normal at full load)",
};
static const double BAND_OPACITY[N_BAND_KINDS] = { 0.3, 0.3, 0.3, 0.5, 0.08 };



static void band_add(struct bands *bs, double x0, double x1, int kind)
{
	if (bs->n == bs->cap) {
		bs->cap = bs->cap ? bs->cap * 2 : 64;
		bs->b = gv_realloc(bs->b, bs->cap * sizeof *bs->b);
	}
	bs->b[bs->n++] = (struct svg_band){ x0, x1, kind };
}

static int cmp_band(const void *a, const void *b)
{
	const struct svg_band *p = a, *q = b;
	if (p->kind != q->kind)
		return p->kind - q->kind;
	return (p->x0 > q->x0) - (p->x0 < q->x0);
}

/* Merges touching intervals of the same kind (all GPUs together). */
static void bands_merge(struct bands *bs)
{
	size_t o = 0;

	if (bs->n == 0)
		return;
	qsort(bs->b, bs->n, sizeof *bs->b, cmp_band);
	for (size_t i = 1; i < bs->n; i++) {
		if (bs->b[i].kind == bs->b[o].kind && bs->b[i].x0 <= bs->b[o].x1 + 1e-9) {
			if (bs->b[i].x1 > bs->b[o].x1)
				bs->b[o].x1 = bs->b[i].x1;
		} else {
			bs->b[++o] = bs->b[i];
		}
	}
	bs->n = o + 1;
}

/* The value of gpu's series in b (n entries) at x (the nearest sample); NaN when there is none. */
static double series_at(const struct series_buf *b, size_t n, int gpu, double x)
{
	for (size_t s = 0; s < n; s++) {
		size_t best = 0;
		if (b[s].gpu != gpu || b[s].n == 0)
			continue;
		for (size_t i = 1; i < b[s].n; i++)
			if (fabs(b[s].x[i] - x) < fabs(b[s].x[best] - x))
				best = i;
		return fabs(b[s].x[best] - x) <= 1.0 ? b[s].y[best] : NAN;
	}
	return NAN;
}

/* The kind of a power-capped second, as judge/flags.h rules it: normal (at the cap) or power throttling. */
static int cap_kind(double limit, double power, double tdp)
{
	return flags_cap_is_throttling(limit, power, tdp) ? BAND_POWER : BAND_CAP;
}

/* Intervals from the clock-event mask (as the soak stores it), else from the growth of the violation counters. */
void rep_throttle_bands(const struct fprun *fp, struct bands *bs, double tdp)
{
	struct series_buf sb[64], pw[64], lim[64];
	size_t n = rep_collect(fp, "soak.clock_events.mask", NULL, sb, 64);
	size_t npw = rep_collect(fp, "soak.power.w", NULL, pw, 64), nlim = rep_collect(fp, "soak.power_limit.w", NULL, lim, 64);

	for (size_t s = 0; s < n; s++)
		for (size_t i = 0; i < sb[s].n; i++) {
			unsigned long long m = sb[s].y[i] >= 0 ? (unsigned long long)sb[s].y[i] : 0;
			double x = sb[s].x[i], x1 = i + 1 < sb[s].n ? sb[s].x[i + 1] : x + 1;
			unsigned kinds = flags_reason_kinds(m);
			if (kinds & FLAG_REASON_THERMAL)
				band_add(bs, x, x1, BAND_THERMAL);
			if (kinds & FLAG_REASON_HW)
				band_add(bs, x, x1, BAND_HW);
			if (kinds & FLAG_REASON_POWER)
				band_add(bs, x, x1, cap_kind(series_at(lim, nlim, sb[s].gpu, x),
							    series_at(pw, npw, sb[s].gpu, x), tdp));
		}
	rep_series_free(sb, n);
	rep_series_free(pw, npw);
	rep_series_free(lim, nlim);
	if (n == 0) {
		/* NVML's violation counters cannot tell a normal cap from a low one */
		static const struct { const char *series; int kind; } ctr[] = {
			{ "soak.throttle.thermal_s", BAND_THERMAL }, { "soak.throttle.power_s", BAND_CAP },
		};
		for (size_t c = 0; c < 2; c++) {
			size_t k = rep_collect(fp, ctr[c].series, NULL, sb, 64);
			for (size_t s = 0; s < k; s++)
				for (size_t i = 1; i < sb[s].n; i++)
					if (sb[s].y[i] > sb[s].y[i - 1])
						band_add(bs, sb[s].x[i - 1], sb[s].x[i], ctr[c].kind);
			rep_series_free(sb, k);
		}
	}
	n = rep_collect(fp, "soak.xid", NULL, sb, 64);
	for (size_t s = 0; s < n; s++)
		for (size_t i = 0; i < sb[s].n; i++)
			band_add(bs, sb[s].x[i], sb[s].x[i] + 1, BAND_XID);
	rep_series_free(sb, n);
	bands_merge(bs);
}

/* One chart of per-GPU lines: each GPU its colour; second series dashed. */
static int soak_chart(FILE *f, const struct fprun *fp, const char *title, const char *ylabel, const char *series,
		      const char *dashed_series, const struct bands *bs, const struct svg_ref *refs, size_t nrefs)
{
	struct series_buf sb[128];
	struct svg_series ss[128];
	size_t n = rep_collect(fp, series, NULL, sb, 64), nd = 0;
	char names[128][32];

	if (n == 0)
		return 0;
	if (dashed_series)
		nd = rep_collect(fp, dashed_series, NULL, sb + n, 64);
	for (size_t i = 0; i < n + nd; i++) {
		if (sb[i].gpu < 0)
			snprintf(names[i], sizeof names[i], "instance");
		else
			snprintf(names[i], sizeof names[i], "GPU %d", sb[i].gpu);
		ss[i] = (struct svg_series){ names[i], sb[i].x, sb[i].y, sb[i].n, sb[i].gpu < 0 ? 6 : sb[i].gpu,
					     i < n, i >= n };
	}
	struct svg_chart c = {
		.title = title, .x_label = "time since soak start (s)", .y_label = ylabel,
		.series = ss, .n_series = n + nd, .bands = bs->b, .n_bands = bs->n,
		.band_names = BAND_NAMES, .n_band_kinds = N_BAND_KINDS, .band_opacity = BAND_OPACITY,
		.width = 640, .height = 230, .y_from_zero = 1, .refs = refs, .n_refs = nrefs,
	};
	svg_line_chart(f, &c);
	rep_series_free(sb, n + nd);
	return 1;
}

/* A curve against size: one colour per series, one line per GPU. */
struct sweep {
	const char *title, *prefix, *suffix, *x_label, *y_label;
	int x_bytes, ylog;
};

static int sweep_chart(FILE *f, const struct fprun *fp, const struct sweep *sw, const struct svg_ref *refs, size_t nrefs)
{
	struct series_buf sb[128];
	struct svg_series ss[128];
	size_t n = rep_collect(fp, sw->prefix, sw->suffix, sb, 128), lp = strlen(sw->prefix), ls = strlen(sw->suffix);
	int color = 0;

	if (n == 0)
		return 0;
	for (size_t i = 0; i < n; i++) {   /* "memcpy.h2d.pinned.gbps" -> "h2d pinned" */
		size_t ln = strlen(sb[i].label);
		memmove(sb[i].label, sb[i].label + lp, ln - lp - ls);
		sb[i].label[ln - lp - ls] = 0;
		for (char *c = sb[i].label; *c; c++)
			*c = *c == '.' ? ' ' : *c;
	}
	for (size_t i = 0; i < n; i++) {
		size_t j;
		for (j = 0; j < i; j++)
			if (!strcmp(sb[j].label, sb[i].label))
				break;
		ss[i] = (struct svg_series){ sb[i].label, sb[i].x, sb[i].y, sb[i].n,
					     j < i ? ss[j].color : color++, j == i, 0 };
	}
	struct svg_chart c = {
		.title = sw->title, .x_label = sw->x_label, .y_label = sw->y_label,
		.x_log2 = 1, .x_bytes = sw->x_bytes, .y_from_zero = !sw->ylog, .y_log10 = sw->ylog, .series = ss,
		.n_series = n, .width = 640, .height = sw->ylog ? 300 : 250, .refs = refs, .n_refs = nrefs,
	};
	svg_line_chart(f, &c);
	rep_series_free(sb, n);
	return 1;
}


static const struct sweep COPIES = {
	"Host\xE2\x80\x93" "device copy bandwidth against size", "memcpy.", ".gbps",
	"transfer size (bytes, log scale)", "bandwidth (GB/s, log scale)", 1, 1,
};
static const struct sweep NCCL = {
	"NCCL all-reduce bandwidth against size", "allreduce.", ".gbps",
	"transfer size (bytes, log scale)", "bandwidth (GB/s)", 1, 0,
};

/* GEMM throughput against the square size, every GPU at once, against the model's BF16 figures x GPUs. */
static int gemm_chart(FILE *f, const struct run_sum *r, struct fprun *fp)
{
	static const struct sweep g = {
		"GEMM throughput against size (all GPUs at once)", "gemm.", ".tflops",
		"m = n = k (log scale)", "throughput (TFLOP/s)", 0, 0,
	};
	const struct gpu_ref *ref = r->gpu_model ? gpu_ref_find(r->gpu_model) : NULL;
	const struct gpu_reference *ach = r->gpu_model ? gpu_reference_find(r->gpu_model) : NULL;
	const struct fp_metric *bf = fprun_metric(fp, "gemm.bf16.tflops", -1);
	int n = bf ? rep_row_gpus(bf, r) : r->gpu_count > 0 ? r->gpu_count : 1;
	struct svg_ref refs[2];
	size_t nr = 0;
	char lab[2][96];

	double rv;
	enum gpu_ref_kind kind;
	if (ach && !gpu_reference_gemm(ach->key, GPU_BF16, &rv, &kind, NULL)) {
		snprintf(lab[nr], sizeof lab[nr], "BF16: %s reference (%s)", r->gpu_model, gpu_ref_kind_name(kind));
		refs[nr] = (struct svg_ref){ rv * n, lab[nr], 2 };
		nr++;
	}
	if (ref && ref->peak_tflops[GPU_BF16] > 0) {
		snprintf(lab[nr], sizeof lab[nr], "BF16 datasheet peak");
		refs[nr] = (struct svg_ref){ ref->peak_tflops[GPU_BF16] * n, lab[nr], 6 };
		nr++;
	}
	return sweep_chart(f, fp, &g, refs, nr);
}

void rep_run_charts(FILE *f, const struct rdoc *d, const struct run_sum *r, struct fprun *fp)
{
	const struct gpu_ref *ref = r->gpu_model ? gpu_ref_find(r->gpu_model) : NULL;
	const struct gpu_reference *ach = r->gpu_model ? gpu_reference_find(r->gpu_model) : NULL;
	const struct fp_gpu *g0 = fp->inv.ngpus ? &fp->inv.gpus[0] : NULL;   /* the first device */
	struct bands bs = { 0 };
	struct svg_ref tref[2], cref[1], pref[1], bref[2];
	size_t nt = 0, nc = 0, np = 0, nb = 0, nfleet;
	double fleet = rep_agg_fleet_soak(&d->agg, r, &nfleet), maxsm, gen, width;
	char lt[2][96], lb[2][96];
	int any = 0;

	if (ach && ach->soak_tflops > 0) {
		snprintf(lt[nt], sizeof lt[nt], "healthy %s sustains", r->gpu_model);
		tref[nt] = (struct svg_ref){ ach->soak_tflops, lt[nt], 2 };
		nt++;
	}
	if (isfinite(fleet)) {
		snprintf(lt[nt], sizeof lt[nt], "fleet median (%zu other run%s)", nfleet, nfleet == 1 ? "" : "s");
		tref[nt] = (struct svg_ref){ fleet, lt[nt], 4 };
		nt++;
	}
	maxsm = g0 ? g0->max_sm_mhz : NAN;
	if (isfinite(maxsm) && maxsm > 0)
		cref[nc++] = (struct svg_ref){ maxsm, "max SM clock", 2 };
	if (ref && ref->tdp_w > 0)
		pref[np++] = (struct svg_ref){ ref->tdp_w, "model TDP", 2 };
	gen = g0 ? g0->pcie_gen_max : NAN;
	width = g0 ? g0->pcie_width_max : NAN;
	if (!(gen > 0) && ref) {
		gen = ref->pcie_gen;
		width = ref->pcie_width;
	}
	/* an imported fingerprint's numbers are untrusted: ints through gv_to_int, at most 64 lanes */
	int gi = gv_to_int(gen, 0), wi = gv_to_int(width, 0);
	if (wi <= 64 && gpu_pcie_link_gbps(gi, wi) > 0) {
		snprintf(lb[nb], sizeof lb[nb], "PCIe Gen%d x%d link", gi, wi);
		bref[nb] = (struct svg_ref){ gpu_pcie_link_gbps(gi, wi), lb[nb], 6 };
		nb++;
	}
	if (ach && ach->h2d_gbps > 0) {
		snprintf(lb[nb], sizeof lb[nb], "healthy %s H2D", r->gpu_model);
		bref[nb] = (struct svg_ref){ ach->h2d_gbps, lb[nb], 2 };
		nb++;
	}

	rep_throttle_bands(fp, &bs, ref ? ref->tdp_w : 0);
	fputs("<div class=\"charts\">\n", f);
	any |= soak_chart(f, fp, "Soak: GEMM throughput per GPU", "throughput (TFLOP/s)", "soak.tflops", NULL, &bs,
			  tref, nt);
	any |= soak_chart(f, fp, "Soak: SM clock (solid) and memory clock (dashed)", "clock (MHz)",
			  "soak.sm_clock.mhz", "soak.mem_clock.mhz", &bs, cref, nc);
	any |= soak_chart(f, fp, "Soak: GPU temperature", "temperature (\xC2\xB0" "C)", "soak.temp.c", NULL, &bs, NULL, 0);
	any |= soak_chart(f, fp, "Soak: board power (solid) and power limit (dashed)", "power (W)",
			  "soak.power.w", "soak.power_limit.w", &bs, pref, np);
	any |= sweep_chart(f, fp, &COPIES, bref, nb);
	const struct fp_metric *ar = fprun_metric(fp, "allreduce.algbw.gbps", -1);
	if (!ar || rep_row_is_measurement(ar))
		any |= sweep_chart(f, fp, &NCCL, NULL, 0);
	any |= gemm_chart(f, r, fp);
	fputs("</div>\n", f);
	const struct fp_metric *bus = fprun_metric(fp, "allreduce.busbw.gbps", -1), *tm = bus ? bus : ar;
	const char *tp = tm ? fp_obj_str(&tm->params, "transport") : NULL;
	if (tp) {   /* what NCCL chose says why the all-reduce is as fast as it is */
		fputs("<p class=\"nccl-transport\">All-reduce transport NCCL chose: <b>", f);
		html_esc(f, tp);
		fputs("</b></p>\n", f);
	}
	if (!any)
		fputs("<p class=\"muted\">No time series or size sweep stored for this run.</p>\n", f);
	free(bs.b);
}
