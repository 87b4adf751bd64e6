/* html_answer.c - the report's first screen: this machine's verdict and health, the best SKUs per workload (see html.h). */
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
#include "common/stats.h"
#include "common/util.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- the answer: this machine's verdict and health, first ---- */

/* How a run stands, in one word or three, and its CSS class. */
static const char *health_word(const struct run_sum *r, const char **cls)
{
	const char *v = r->verdict;

	*cls = "bad";
	if (v && !strcmp(v, "reject"))
		return "Reject";
	if (r->tolerated)   /* never "Healthy" beside a critical flag the policy let through */
		return "Accepted despite a critical flag";
	if (r->nflag[0] > 0)
		return "Needs attention";
	*cls = "warn";
	if (r->status && strcmp(r->status, "complete"))
		return "Incomplete";
	if (v && !strcmp(v, "unmeasurable"))
		return "Not judged";
	if (r->nflag[1] > 0)
		return "Healthy, with warnings";
	*cls = "good";
	return "Healthy";
}

static const char *verdict_words(const char *v)
{
	if (!v)
		return "not gated";
	if (!strcmp(v, "accept"))
		return "accepted";
	if (!strcmp(v, "reject"))
		return "rejected";
	if (!strcmp(v, "unmeasurable"))
		return "could not be judged";
	return v;
}

/* The runs the answer is about: those asked for with --run (newest first), else the newest run. */
size_t rep_answer_targets(const struct rdoc *d, size_t *out, size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < d->n && n < max; i++)
		if (d->runs[i].forced)
			out[n++] = i;
	if (n == 0 && d->n) {
		size_t best = 0;
		for (size_t i = 1; i < d->n; i++)
			if (rep_cmp_newest(&i, &best, d->runs) < 0)
				best = i;
		out[n++] = best;
	}
	qsort_r(out, n, sizeof *out, rep_cmp_newest, d->runs);
	return n;
}

/* "run 3, 1 × H100-SXM on lambda gpu_1x_h100_sxm5 (accepted)" */
static void run_words(FILE *f, const struct run_sum *r)
{
	fprintf(f, "run %lld, %d \xC3\x97 ", (long long)r->id, r->gpu_count);
	html_esc(f, rep_orq(r->gpu_model));
	if (r->itype && *r->itype) {
		fputs(" on ", f);
		html_esc(f, rep_orq(r->provider));
		fputs(" ", f);
		html_esc(f, r->itype);
	} else {
		fputs(" (instance type unknown)", f);
	}
	fprintf(f, " (%s", verdict_words(r->verdict));
	if (r->tolerated && r->verdict && !strcmp(r->verdict, "accept")) {
		fputs(" despite ", f);
		html_esc(f, r->tolerated);
	}
	fputs(")", f);
}

void rep_headline(FILE *f, const struct run_sum *r)
{
	const char *cls, *w;

	if (!r) {
		fputs("<h1 id=\"verdict\">No run stored yet</h1>", f);
		return;
	}
	w = health_word(r, &cls);
	fprintf(f, "<h1 id=\"verdict\" class=\"%s\">%s: ", cls, w);
	run_words(f, r);
	fputs("</h1>", f);
}

static void fact_gemm(FILE *f, const struct run_sum *r, json_t *fp)
{
	static const enum gpu_dtype dts[2] = { GPU_BF16, GPU_FP16 };
	const struct gpu_ref *ref = r->gpu_model ? gpu_ref_find(r->gpu_model) : NULL;
	const struct gpu_reference *ach = r->gpu_model ? gpu_reference_find(r->gpu_model) : NULL;
	char name[32], b[3][32];

	for (size_t k = 0; k < 2; k++) {
		json_t *m;
		double per;
		snprintf(name, sizeof name, "gemm.%s.tflops", gpu_dtype_name(dts[k]));
		if (!(m = rep_metric_row(fp, name, -1)))
			continue;
		per = rep_jnum(m, "value") / rep_row_gpus(m, r);
		rep_fmt_val(per, b[0], sizeof b[0]);
		fprintf(f, "<li><b>%s matrix multiply</b>: %s TFLOP/s per GPU", k ? "FP16" : "BF16", b[0]);
		double rv;
		enum gpu_ref_kind kind;
		if (ach && !gpu_reference_gemm(ach->key, dts[k], &rv, &kind, NULL)) {
			rep_fmt_val(rv, b[1], sizeof b[1]);
			fprintf(f, ", %.0f %% of the ", 100 * per / rv);
			html_esc(f, r->gpu_model);
			fprintf(f, " reference (%s, %s)", b[1], gpu_ref_kind_name(kind));
		}
		if (ref && ref->peak_tflops[dts[k]] > 0) {
			rep_fmt_val(ref->peak_tflops[dts[k]], b[2], sizeof b[2]);
			fprintf(f, ", %.0f %% of its datasheet peak (%s)", 100 * per / ref->peak_tflops[dts[k]], b[2]);
		}
		fputs(".</li>\n", f);
		return;
	}
}

static void fact_copies(FILE *f, const struct run_sum *r, json_t *fp)
{
	const struct gpu_reference *ach = r->gpu_model ? gpu_reference_find(r->gpu_model) : NULL;
	json_t *m = rep_metric_row(fp, "memcpy.h2d.pinned.gbps", -1), *pl = rep_metric_row(fp, "memcpy.h2d.pct_of_link", -1);
	char b[2][32];
	double v;

	if (!m)
		return;
	v = rep_jnum(m, "value");
	rep_fmt_val(v, b[0], sizeof b[0]);
	fprintf(f, "<li><b>Host-to-GPU copies</b> (pinned): %s GB/s", b[0]);
	if (ach && ach->h2d_gbps > 0) {
		rep_fmt_val(ach->h2d_gbps, b[1], sizeof b[1]);
		fprintf(f, ", %.0f %% of a healthy ", 100 * v / ach->h2d_gbps);
		html_esc(f, r->gpu_model);
		fprintf(f, " (%s)", b[1]);
	}
	if (pl && isfinite(rep_jnum(pl, "value")))
		fprintf(f, ", %.0f %% of the PCIe link it trained at", rep_jnum(pl, "value"));
	fputs(".</li>\n", f);
}

/* Seconds of each band kind (union over GPUs) and the soak's length. */
static void fact_soak(FILE *f, const struct run_sum *r, json_t *fp)
{
	const struct gpu_ref *ref = r->gpu_model ? gpu_ref_find(r->gpu_model) : NULL;
	json_t *a = rep_metric_row(fp, "soak.tflops.first_min", -1), *z = rep_metric_row(fp, "soak.tflops.last_min", -1);
	struct series_buf sb[64];
	struct bands bs = { 0 };
	double secs[N_BAND_KINDS] = { 0 }, span = 0, n = r->gpu_count > 0 ? r->gpu_count : 1;
	size_t ns = rep_collect(fp, "soak.tflops", NULL, sb, 64);
	char b[2][32];

	for (size_t i = 0; i < ns; i++)
		if (sb[i].n && sb[i].x[sb[i].n - 1] > span)
			span = sb[i].x[sb[i].n - 1];
	rep_series_free(sb, ns);
	if (!a && !z && span <= 0)
		return;
	rep_throttle_bands(fp, &bs, ref ? ref->tdp_w : 0);
	for (size_t i = 0; i < bs.n; i++)
		secs[bs.b[i].kind] += bs.b[i].x1 - bs.b[i].x0;
	free(bs.b);
	fprintf(f, "<li><b>Sustained load</b> (%.0f s)", span);
	if (a && z) {
		double x = rep_jnum(a, "value") / n, y = rep_jnum(z, "value") / n;
		rep_fmt_val(x, b[0], sizeof b[0]);
		rep_fmt_val(y, b[1], sizeof b[1]);
		fprintf(f, ": %s \xE2\x86\x92 %s TFLOP/s per GPU, from the first to the last window (%+.1f %%)", b[0], b[1],
			x > 0 ? 100 * (y - x) / x : 0.0);
	}
	fputs(". ", f);
	if (secs[BAND_CAP] > 0 && span > 0)
		fprintf(f, "At its power cap %.0f %% of the time: normal at full load. ",
			fmin(100, 100 * secs[BAND_CAP] / span));
	if (secs[BAND_THERMAL] + secs[BAND_HW] + secs[BAND_POWER] <= 0)
		fputs("No thermal, hardware or power throttling.", f);
	else
		fprintf(f, "<span class=\"critical\">Throttled: thermal %.0f s, hardware slowdown %.0f s, "
			   "power (limit under TDP or clocks held under the cap) %.0f s.</span>",
			secs[BAND_THERMAL], secs[BAND_HW], secs[BAND_POWER]);
	if (secs[BAND_XID] > 0)
		fputs(" <span class=\"critical\">XID events during the load.</span>", f);
	fputs("</li>\n", f);
}

static int cmp_flag_sev(const void *a, const void *b)
{
	json_t *x = *(json_t *const *)a, *y = *(json_t *const *)b;
	return rep_sev_index(rep_jstr(x, "severity")) - rep_sev_index(rep_jstr(y, "severity"));
}

/* Each flag in plain words with what to do, worst first. */
static void answer_flags(FILE *f, const struct rdoc *d, json_t *fp)
{
	json_t *fl = json_object_get(fp, "flags"), **v;
	size_t n = json_array_size(fl);
	char buf[512];

	if (n == 0) {
		fputs("<p>No flag raised.</p>\n", f);
		return;
	}
	v = gv_malloc(n * sizeof *v);
	for (size_t i = 0; i < n; i++)
		v[i] = json_array_get(fl, i);
	qsort(v, n, sizeof *v, cmp_flag_sev);
	fputs("<ul class=\"flaglist\">\n", f);
	for (size_t i = 0; i < n; i++) {
		int si = rep_sev_index(rep_jstr(v[i], "severity"));
		const char *rem = rep_flag_remedy(d, v[i], buf, sizeof buf);
		fprintf(f, "<li><b class=\"%s\">%s</b> <code>", rep_sev_name[si], rep_sev_name[si]);
		html_esc(f, rep_jstr(v[i], "code"));
		fputs("</code> ", f);
		html_esc(f, rep_jstr(v[i], "message"));
		if (rem) {
			fputs("<br><span class=\"todo\">What to do: ", f);
			html_esc(f, rem);
			fputs("</span>", f);
		}
		fputs("</li>\n", f);
	}
	fputs("</ul>\n", f);
	free(v);
}

static void answer_verdict(FILE *f, const struct run_sum *r, json_t *fp)
{
	json_t *vs = json_object_get(fp, "verdicts"), *v, *last = NULL;
	size_t i;

	json_array_foreach(vs, i, v)   /* an imported verdict is history (the detail's table), not the run's */
		if (!json_is_true(json_object_get(v, "imported")) &&
		    (!last || strcmp(rep_orq(rep_jstr(v, "at")), rep_orq(rep_jstr(last, "at"))) >= 0))
			last = v;
	if (!last) {
		fprintf(f, "<p>Not gated: no acceptance verdict stored (<code>gpuvet accept --run %lld</code> "
			   "applies the default policy).</p>\n", (long long)r->id);
		return;
	}
	fputs("<p>", f);
	rep_badge(f, rep_jstr(last, "verdict"));
	fprintf(f, " %s by the policy <b>", verdict_words(rep_jstr(last, "verdict")));
	html_esc(f, rep_orq(rep_jstr(last, "policy")));
	fputs("</b> (", f);
	html_esc(f, rep_orq(rep_jstr(last, "policy_source")));
	fputs(", <code>", f);
	html_esc(f, rep_orq(rep_jstr(last, "policy_digest")));
	fputs("</code>)", f);
	if (rep_jstr(last, "at")) {
		fputs(", ", f);
		html_esc(f, rep_jstr(last, "at"));
	}
	fputs(".</p>\n", f);
	/* the reason in one sentence, as judge/accept.h words it for the CLI too */
	char why[768];
	fputs("<p class=\"why\">Why: ", f);
	html_esc(f, accept_reason_sentence(json_object_get(last, "detail"), rep_jstr(last, "verdict"), why, sizeof why));
	fputs(".</p>\n", f);
}

/* One run's health: verdict, figures against the references, flags with what to do. */
static int answer_run(FILE *f, const struct rdoc *d, const struct run_sum *r, int first)
{
	json_t *fp = r->fp ? json_incref(r->fp) : NULL;
	const char *cls, *w = health_word(r, &cls);

	if (!fp && d->store && store_load_fingerprint(d->store, r->id, &fp))
		fp = NULL;
	if (!first) {
		fprintf(f, "<h2 class=\"%s\">%s: ", cls, w);
		run_words(f, r);
		fputs("</h2>\n", f);
	}
	fputs("<div class=\"health\"><p class=\"muted\">", f);
	html_esc(f, rep_orq(r->provider));
	fputs(" ", f);
	html_esc(f, rep_orq(r->itype));
	if (r->region && *r->region) {
		fputs(" ", f);
		html_esc(f, r->region);
	}
	fputs(", host ", f);
	html_esc(f, rep_orq(r->host));
	fputs(", started ", f);
	html_esc(f, rep_orq(r->started));
	fputs(", profile ", f);
	html_esc(f, rep_orq(r->profile));
	fprintf(f, ". <a href=\"#run-%lld\">Full detail</a>.</p>\n", (long long)r->id);
	if (!fp) {
		fputs("<p class=\"muted\">The run could not be loaded.</p></div>\n", f);
		return 0;
	}
	answer_verdict(f, r, fp);
	fputs("<ul class=\"facts\">\n", f);
	fact_gemm(f, r, fp);
	fact_copies(f, r, fp);
	fact_soak(f, r, fp);
	fputs("</ul>\n", f);
	answer_flags(f, d, fp);
	fputs("</div>\n", f);
	json_decref(fp);
	return 0;
}

/* The ranking of metric (the report's market, per instance), or NULL. */
static json_t *ranking_of(const struct rdoc *d, const char *metric)
{
	json_t *r0 = json_array_get(d->rankings, 0), *rk;
	size_t k;
	json_array_foreach(d->rankings, k, rk) {
		const char *m = rep_jstr(rk, "metric"), *mk = rep_jstr(rk, "market"), *p = rep_jstr(rk, "per");
		if (m && !strcmp(m, metric) && mk && rep_jstr(r0, "market") && !strcmp(mk, rep_jstr(r0, "market")) && p &&
		    !strcmp(p, "instance"))
			return rk;
	}
	return NULL;
}

/*
 * The second question on the first screen: the best instance types per dollar for training
 * (BF16 GEMM), inference (FP16 GEMM) and data-heavy work (score.data), three each, estimates
 * marked as such, as judge/rank.c orders them.
 */
static void best_per_workload(FILE *f, const struct rdoc *d)
{
	static const struct { const char *label, *metric; } wl[] = {
		{ "Training (BF16 GEMM)", "gemm.bf16.tflops" },
		{ "Inference (FP16 GEMM)", "gemm.fp16.tflops" },
		{ "Data-heavy (NVMe and object store score)", "score.data" },
	};
	int any = 0;
	for (size_t w = 0; w < sizeof wl / sizeof wl[0]; w++) {
		json_t *rk = ranking_of(d, wl[w].metric), *row;
		size_t i;
		if (!rk || !json_array_size(json_object_get(rk, "rows")))
			continue;
		if (!any++)
			fputs("<h3>Most per dollar, by workload</h3>\n<ul class=\"workloads\">\n", f);
		fprintf(f, "<li><b>%s</b>: ", wl[w].label);
		json_array_foreach(json_object_get(rk, "rows"), i, row) {
			char buf[32];
			if (i == 3)
				break;
			fputs(i ? "; " : "", f);
			html_esc(f, rep_orq(rep_jstr(row, "provider")));
			fputs(" ", f);
			html_esc(f, rep_orq(rep_jstr(row, "instance_type")));
			rep_fmt_val(rep_jnum(row, "value_per_dollar"), buf, sizeof buf);
			fprintf(f, " %s ", buf);
			html_esc(f, rep_orq(rep_jstr(rk, "unit")));
			fputs(" per USD-hour ", f);
			rep_basis_words(f, row, rep_jstr(rk, "unit"));
		}
		fputs("</li>\n", f);
	}
	if (any)
		fputs("</ul>\n", f);
}

void rep_section_answer(FILE *f, const struct rdoc *d, const struct report_page *pg)
{
	const size_t *tg = pg->tg;
	size_t nt = pg->nt;
	fputs("<section id=\"answer\">\n", f);
	if (nt == 0)
		fputs("<p>No run in the store: <code>gpuvet run</code> measures this machine.</p>\n", f);
	for (size_t i = 0; i < nt; i++)
		answer_run(f, d, &d->runs[tg[i]], i == 0);
	best_per_workload(f, d);
	fputs("</section>\n", f);
}
