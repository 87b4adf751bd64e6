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
#include "judge/policy.h"
#include "judge/standing.h"
#include "pricing/catalog.h"
#include "common/gpus.h"
#include "results/store.h"
#include "results/fprun.h"
#include "judge/derive.h"
#include "common/stats.h"
#include "common/util.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- the answer: this machine's verdict and health, first ---- */

/*
 * How a run stands under the page's policy, in one word or three, and its CSS class: a verdict
 * word ("Healthy", "Reject") only where that policy's verdict was recorded here (judge/standing.h);
 * otherwise what is true (no GPU measured, or the policy's verdict as a preview, not judged).
 */
static const char *health_word(const struct run_sum *r, const struct standing *st, const char **cls)
{
	*cls = "bad";
	switch (st->kind) {
	case STANDING_NO_GPU: *cls = "warn"; return "No GPU measured on this machine";
	case STANDING_REJECTED: return "Reject";
	case STANDING_WOULD_REJECT: return "Would be rejected";
	case STANDING_UNMEASURABLE: *cls = "warn"; return "Unmeasurable";
	case STANDING_WOULD_UNMEASURABLE: *cls = "warn"; return "Would be unmeasurable";
	case STANDING_WOULD_ACCEPT: *cls = "warn"; return "Would be accepted";
	case STANDING_ACCEPTED: break;
	}
	if (json_array_size(json_object_get(st->detail, "tolerated")))   /* never "Healthy" beside a tolerated critical flag */
		return "Accepted despite a critical flag";
	if (r->nflag[0] > 0)
		return "Needs attention";
	*cls = "warn";
	if (r->status && strcmp(r->status, "complete"))
		return "Incomplete";
	if (r->nflag[1] > 0)
		return "Healthy, with warnings";
	*cls = "good";
	return "Healthy";
}

static const char *verdict_words(const char *v)
{
	if (!v)
		return "not judged";
	if (!strcmp(v, "accept"))
		return "accepted";
	if (!strcmp(v, "reject"))
		return "rejected";
	if (!strcmp(v, "unmeasurable"))
		return "unmeasurable";
	return v;
}

/* The newest of the runs i admits (-1: none). */
static long newest_where(const struct rdoc *d, int gpu_only)
{
	long best = -1;
	for (size_t i = 0; i < d->n; i++) {
		size_t b = (size_t)best;
		if ((!gpu_only || d->runs[i].gpu_count > 0) && (best < 0 || rep_cmp_newest(&i, &b, d->runs) < 0))
			best = (long)i;
	}
	return best;
}

/*
 * The runs the answer is about: those asked for with --run (newest first), else the newest run
 * that measured a GPU, else the newest run (docs/report.md: a reader of a store holding GPU runs
 * came for them; a newer run without a GPU is named under the answer with its reason).
 */
size_t rep_answer_targets(const struct rdoc *d, size_t *out, size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < d->n && n < max; i++)
		if (d->runs[i].forced)
			out[n++] = i;
	if (n == 0 && d->n) {
		long best = newest_where(d, 1);
		out[n++] = (size_t)(best >= 0 ? best : newest_where(d, 0));
	}
	qsort_r(out, n, sizeof *out, rep_cmp_newest, d->runs);
	return n;
}

/* "run 3, 1 × H100-SXM on lambda gpu_1x_h100_sxm5 (accepted)", the verdict as the page's policy has it */
static void run_words(FILE *f, const struct run_sum *r, const struct standing *st)
{
	if (st->kind == STANDING_NO_GPU)
		fprintf(f, "run %lld", (long long)r->id);
	else
		fprintf(f, "run %lld, %d \xC3\x97 ", (long long)r->id, r->gpu_count);
	if (st->kind != STANDING_NO_GPU)
		html_esc(f, rep_orq(r->gpu_model));
	if (r->itype && *r->itype) {
		fputs(" on ", f);
		html_esc(f, rep_orq(r->provider));
		fputs(" ", f);
		html_esc(f, r->itype);
	} else if (st->kind != STANDING_NO_GPU) {
		fputs(" (instance type unknown)", f);
	}
	fprintf(f, " (%s", st->kind == STANDING_NO_GPU || st->kind >= STANDING_WOULD_ACCEPT ? "not judged" :
		standing_words(st->kind));
	json_t *tol = json_array_get(json_object_get(st->detail, "tolerated"), 0);
	if (st->kind == STANDING_ACCEPTED && tol) {
		fputs(" despite ", f);
		html_esc(f, rep_jstr(tol, "flag"));
	}
	fputs(")", f);
}

/* A run as the answer reads it: the typed run, derived (held in memory, or loaded from the store). */
struct answer_run {
	struct fprun *run;       /* NULL when it cannot be loaded */
	int owned;
};

static void answer_load(const struct rdoc *d, const struct run_sum *r, struct answer_run *a)
{
	memset(a, 0, sizeof *a);
	if (r->fp)
		a->run = r->fp;
	else if (d->store && !derive_load_run(d->store, r->id, STORE_RUN_ALL, &a->run))
		a->owned = 1;
	else
		a->run = NULL;
}

static void answer_free(struct answer_run *a)
{
	if (a->owned)
		fprun_free(a->run);
}

/* r's standing under the page's policy; a run that cannot be loaded stands as not judged. */
static void answer_standing(const struct report_page *pg, struct fprun *fp, struct standing *st)
{
	if (!fp || standing_of(pg->policy, fp, st)) {
		memset(st, 0, sizeof *st);
		st->kind = STANDING_WOULD_UNMEASURABLE;
		snprintf(st->reason, sizeof st->reason, "the run could not be loaded");
	}
}

/* The heading: the verdict word, the run, and for anything short of a recorded verdict, why. */
static void headline_of(FILE *f, const char *tag, const struct run_sum *r, const struct standing *st)
{
	const char *cls, *w = health_word(r, st, &cls);
	fprintf(f, "<%s%s class=\"%s\">%s: ", tag, strcmp(tag, "h1") ? "" : " id=\"verdict\"", cls, w);
	run_words(f, r, st);
	if (st->kind == STANDING_NO_GPU || st->kind >= STANDING_WOULD_ACCEPT) {
		fputs("<br><small>", f);
		html_esc(f, st->reason);
		if (st->kind != STANDING_NO_GPU)
			fputs(" \xE2\x80\x94 a preview of the page's policy, not a recorded verdict", f);
		fputs("</small>", f);
	}
	fprintf(f, "</%s>", tag);
}

/* ---- the fleet: more than one run, none asked for ---- */

/* A count that links to its runs: a lone one to its row, several to the runs table filtered by word (report.js). */
static void count_link(FILE *f, long n, int64_t lone, const char *filter, const char *words)
{
	char num[32];
	snprintf(num, sizeof num, "%ld", n);
	if (n == 1 && lone > 0)
		fprintf(f, "<a href=\"#r-%lld\">", (long long)lone);
	else if (n > 1)
		fprintf(f, "<a href=\"#filter=runlist:%s\">", filter);
	fprintf(f, "%s %s", num, words);
	if (n >= 1 && (n > 1 || lone > 0))
		fputs("</a>", f);
}

/*
 * The page's heading when it covers more than one run: the fleet, its machines (a machine vetted twice is two
 * runs: store_report_machines), instance types and runs, how the page's policy judged the runs (each count a
 * link to its runs), the class of its worst.  The runs are said only where they outnumber the machines; with
 * the machines not counted (a page rendered from fingerprints in memory), the runs alone.  The newest run
 * follows in the answer (rep_section_answer).
 */
static void fleet_headline(FILE *f, const struct rdoc *d)
{
	const struct rep_agg *a = &d->agg;
	size_t types = rep_agg_types(a), m = a->machines;
	const char *cls = a->verd[1] ? "bad" : a->verd[2] || a->verd[3] ? "warn" : "good";
	fprintf(f, "<h1 id=\"verdict\" class=\"%s fleet\">Fleet: ", cls);
	if (m)
		fprintf(f, "%zu machine%s of ", m, m == 1 ? "" : "s");
	else
		fprintf(f, "%zu runs of ", a->runs);
	fprintf(f, "%zu instance type%s", types, types == 1 ? "" : "s");
	if (m && m != a->runs)
		fprintf(f, ", %zu runs", a->runs);
	fputs(": ", f);
	count_link(f, a->verd[0], a->verd_example[0], "accepted", "accepted");
	fputs(", ", f);
	count_link(f, a->verd[1], a->verd_example[1], "rejected", "rejected");
	fputs(", ", f);
	count_link(f, a->verd[2], a->verd_example[2], "unmeasurable", "unmeasurable");
	fputs(", ", f);
	count_link(f, a->verd[3], a->verd_example[3], "not%20judged", "not judged");
	fputs("</h1>", f);
}

static int cmp_fc_worst(const void *x, const void *y)
{
	const struct rep_flag_count *a = x, *b = y;
	if (a->sev != b->sev)
		return a->sev - b->sev;
	if (a->runs != b->runs)   /* the lone critical run first: the one to act on */
		return a->runs - b->runs;
	return strcmp(a->code, b->code);
}

/* Under the fleet's heading: why runs were rejected (the top reasons), and each critical and warning flag. */
static void fleet_facts(FILE *f, const struct rdoc *d)
{
	const struct rep_agg *a = &d->agg;
	struct rep_flag_count fc[sizeof a->fc / sizeof a->fc[0]];
	size_t n = 0;
	fputs("<div id=\"fleet\">", f);
	if (d->nreasons) {
		fputs("<p>Rejected for: ", f);
		for (size_t i = 0; i < d->nreasons; i++) {
			fputs(i ? "; " : "", f);
			fputs("<code>", f);
			html_esc(f, d->reasons[i].what);
			fputs("</code> on ", f);
			count_link(f, d->reasons[i].runs, d->reasons[i].example, "reject", d->reasons[i].runs == 1 ? "run" : "runs");
		}
		fputs(".</p>\n", f);
	}
	for (size_t k = 0; k < a->nfc; k++)
		if (a->fc[k].sev <= 1)   /* critical and warning: info is no finding */
			fc[n++] = a->fc[k];
	qsort(fc, n, sizeof *fc, cmp_fc_worst);
	if (n) {
		fputs("<p>Flags: ", f);
		for (size_t k = 0; k < n; k++) {
			fputs(k ? "; " : "", f);
			fprintf(f, "<b class=\"%s\">%s</b> <code>", rep_sev_name(fc[k].sev), rep_sev_name(fc[k].sev));
			html_esc(f, fc[k].code);
			fputs("</code> on ", f);
			count_link(f, fc[k].runs, fc[k].example, fc[k].code, fc[k].runs == 1 ? "run" : "runs");   /* [A-Z0-9_] */
			if (fc[k].runs == 1 && fc[k].example > 0)
				fprintf(f, " (run %lld)", (long long)fc[k].example);
		}
		fputs(".</p>\n", f);
	} else {
		fputs("<p>No run raised a critical or warning flag.</p>\n", f);
	}
	fputs("<p class=\"muted\">The newest run:</p></div>\n", f);
}

/*
 * The page's first heading, in this order (each kind its own function):
 *   - the newest cluster run, when it is the store's newest item: its verdict (html_cluster.c; issue 56);
 *   - more than one run and none asked for (--run): the fleet (fleet_headline), the newest run below it;
 *   - else the run it is about (headline_of).
 */
void rep_headline(FILE *f, const struct rdoc *d, const struct report_page *pg)
{
	struct standing st;
	struct answer_run a;

	if (pg->fleet) {
		fleet_headline(f, d);
		return;
	}
	if (!pg->top) {
		fputs("<h1 id=\"verdict\">No run stored yet</h1>", f);
		return;
	}
	answer_load(d, pg->top, &a);
	answer_standing(pg, a.run, &st);
	headline_of(f, "h1", pg->top, &st);
	standing_free(&st);
	answer_free(&a);
}

static void fact_gemm(FILE *f, const struct run_sum *r, struct fprun *fp)
{
	static const enum gpu_dtype dts[2] = { GPU_BF16, GPU_FP16 };
	const struct gpu_ref *ref = r->gpu_model ? gpu_ref_find(r->gpu_model) : NULL;
	const struct gpu_reference *ach = r->gpu_model ? gpu_reference_find(r->gpu_model) : NULL;
	char name[32], b[3][32];

	for (size_t k = 0; k < 2; k++) {
		const struct fp_metric *m;
		double per;
		snprintf(name, sizeof name, "gemm.%s.tflops", gpu_dtype_name(dts[k]));
		if (!(m = fprun_metric(fp, name, -1)))
			continue;
		per = m->value / rep_row_gpus(m, r);
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

static void fact_copies(FILE *f, const struct run_sum *r, struct fprun *fp)
{
	const struct gpu_reference *ach = r->gpu_model ? gpu_reference_find(r->gpu_model) : NULL;
	const struct fp_metric *m = fprun_metric(fp, "memcpy.h2d.pinned.gbps", -1);
	const struct fp_metric *pl = fprun_metric(fp, "memcpy.h2d.pct_of_link", -1);
	char b[2][32];
	double v;

	if (!m)
		return;
	v = m->value;
	rep_fmt_val(v, b[0], sizeof b[0]);
	fprintf(f, "<li><b>Host-to-GPU copies</b> (pinned): %s GB/s", b[0]);
	if (ach && ach->h2d_gbps > 0) {
		rep_fmt_val(ach->h2d_gbps, b[1], sizeof b[1]);
		fprintf(f, ", %.0f %% of a healthy ", 100 * v / ach->h2d_gbps);
		html_esc(f, r->gpu_model);
		fprintf(f, " (%s)", b[1]);
	}
	if (pl && isfinite(pl->value))
		fprintf(f, ", %.0f %% of the PCIe link it trained at", pl->value);
	fputs(".</li>\n", f);
}

/* Seconds of each band kind (union over GPUs) and the soak's length. */
static void fact_soak(FILE *f, const struct run_sum *r, struct fprun *fp)
{
	const struct gpu_ref *ref = r->gpu_model ? gpu_ref_find(r->gpu_model) : NULL;
	const struct fp_metric *a = fprun_metric(fp, "soak.tflops.first_min", -1);
	const struct fp_metric *z = fprun_metric(fp, "soak.tflops.last_min", -1);
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
		double x = a->value / n, y = z->value / n;
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
	const struct fp_flag *x = *(const struct fp_flag *const *)a, *y = *(const struct fp_flag *const *)b;
	return rep_sev_index(x->severity) - rep_sev_index(y->severity);
}

/* Each flag in plain words with what to do, worst first. */
static void answer_flags(FILE *f, const struct rdoc *d, const struct fprun *fp)
{
	const struct fp_flag **v;
	size_t n = fp->nflags;
	char buf[512];

	if (n == 0) {
		fputs("<p>No flag raised.</p>\n", f);
		return;
	}
	v = gv_malloc(n * sizeof *v);
	for (size_t i = 0; i < n; i++)
		v[i] = &fp->flags[i];
	qsort(v, n, sizeof *v, cmp_flag_sev);
	fputs("<ul class=\"flaglist\">\n", f);
	for (size_t i = 0; i < n; i++) {
		int si = rep_sev_index(v[i]->severity);
		const char *rem = rep_flag_remedy(d, v[i], buf, sizeof buf);
		fprintf(f, "<li><b class=\"%s\">%s</b> <code>", rep_sev_name(si), rep_sev_name(si));
		html_esc(f, v[i]->code);
		fputs("</code> ", f);
		html_esc(f, v[i]->message);
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

/* "the policy default (built-in, sha256:…)" */
static void policy_words(FILE *f, const char *name, const char *source, const char *digest)
{
	fputs("the policy <b>", f);
	html_esc(f, rep_orq(name));
	fputs("</b> (", f);
	html_esc(f, rep_orq(source));
	fputs(", <code>", f);
	html_esc(f, digest && *digest ? digest : "no digest");
	fputs("</code>)", f);
}

/* The verdicts this page does not stand on: another policy's, an imported one, one without a digest. */
static void verdict_history(FILE *f, const struct fprun *fp, const char *digest)
{
	int n = 0;
	for (size_t i = 0; i < fp->nverdicts; i++) {
		const struct fp_verdict *v = &fp->verdicts[i];
		if (standing_verdict_is_of(v, digest))
			continue;
		fputs(n++ ? "; " : "<p class=\"muted history\">History, not this page's verdict: ", f);
		html_esc(f, verdict_words(v->verdict));
		fputs(" by ", f);
		policy_words(f, v->policy, v->source, v->digest);
		if (v->imported)
			fputs(", imported (judged elsewhere)", f);
		if (v->at) {
			fputs(", ", f);
			html_esc(f, v->at);
		}
	}
	if (n)
		fputs(".</p>\n", f);
}

/* The page's policy's verdict on the run: recorded here, or previewed and said not to be recorded. */
static void answer_verdict(FILE *f, const struct run_sum *r, const struct fprun *fp, const struct standing *st,
			   const struct policy *p)
{
	const struct fp_verdict *v = st->verdict;

	if (st->kind == STANDING_NO_GPU) {
		fputs("<p>No GPU measured: ", f);
		html_esc(f, st->reason);
		fputs(". Nothing here for a GPU policy to judge.</p>\n", f);
		if (v) {
			char why[768];
			fputs("<p class=\"why\">", f);
			rep_badge(f, v->verdict);   /* the verdict's word, then by whom */
			fputs(" by ", f);
			policy_words(f, p->name, p->source, p->digest);
			fputs(": ", f);
			html_esc(f, accept_reason_sentence(st->detail, v->verdict, why, sizeof why));
			fputs(".</p>\n", f);
		}
	} else if (v) {
		fputs("<p>", f);
		rep_badge(f, v->verdict);
		fputs(" by ", f);
		policy_words(f, p->name, p->source, p->digest);
		if (v->at) {
			fputs(", ", f);
			html_esc(f, v->at);
		}
		fputs(".</p>\n<p class=\"why\">Why: ", f);   /* in one sentence, as judge/accept.h words it for the CLI */
		html_esc(f, st->reason);
		fputs(".</p>\n", f);
	} else {
		fputs("<p>Not judged by ", f);
		policy_words(f, p->name, p->source, p->digest);
		fprintf(f, ": it %s (a preview without the fleet baseline, not recorded; <code>gpuvet accept --run %lld"
			   "</code> records it).</p>\n<p class=\"why\">Why: ", standing_words(st->kind), (long long)r->id);
		html_esc(f, st->reason);
		fputs(".</p>\n", f);
	}
	verdict_history(f, fp, p->digest);
}

/* One run's health: verdict, figures against the references, flags with what to do. */
static int answer_run(FILE *f, const struct rdoc *d, const struct report_page *pg, const struct run_sum *r,
		      int first)
{
	struct answer_run a;
	struct standing st;

	answer_load(d, r, &a);
	answer_standing(pg, a.run, &st);
	if (!first) {
		headline_of(f, "h2", r, &st);
		fputc('\n', f);
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
	if (!a.run) {
		fputs("<p class=\"muted\">The run could not be loaded.</p></div>\n", f);
		standing_free(&st);
		return 0;
	}
	answer_verdict(f, r, a.run, &st, pg->policy);
	fputs("<ul class=\"facts\">\n", f);
	fact_gemm(f, r, a.run);
	fact_copies(f, r, a.run);
	fact_soak(f, r, a.run);
	fputs("</ul>\n", f);
	answer_flags(f, d, a.run);
	fputs("</div>\n", f);
	standing_free(&st);
	answer_free(&a);
	return 0;
}

/* A newer run than the answer's that measured no GPU: named with its reason, not the headline. */
static void newer_without_gpu(FILE *f, const struct rdoc *d, const struct report_page *pg)
{
	long nw = newest_where(d, 0);
	const struct run_sum *r;
	struct standing st;
	struct answer_run a;

	if (nw < 0 || !pg->top || &d->runs[nw] == pg->top || d->runs[nw].forced || d->runs[nw].gpu_count > 0)
		return;
	r = &d->runs[nw];
	answer_load(d, r, &a);
	answer_standing(pg, a.run, &st);
	fprintf(f, "<p class=\"muted\" id=\"no-gpu-run\">The newest run, <a href=\"#run-%lld\">run %lld</a>",
		(long long)r->id, (long long)r->id);
	if (r->host) {
		fputs(" on host ", f);
		html_esc(f, r->host);
	}
	fputs(", measured no GPU (", f);
	html_esc(f, st.kind == STANDING_NO_GPU ? st.reason : "no GPU in the run");
	fputs("): it is listed in the runs table, and the answer above is about the newest run that measured one.</p>\n",
	      f);
	standing_free(&st);
	answer_free(&a);
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

static int cmp_per_dollar_desc(const void *a, const void *b)
{
	double x = rep_jnum(*(json_t *const *)a, "value_per_dollar"), y = rep_jnum(*(json_t *const *)b, "value_per_dollar");
	return (y > x) - (y < x);
}

/* "aws p5.4xlarge 99.71 TFLOP/s per $/h, measured (sustained)" */
static void workload_row(FILE *f, json_t *rk, json_t *row)
{
	char buf[32];
	html_esc(f, rep_orq(rep_jstr(row, "provider")));
	fputs(" ", f);
	html_esc(f, rep_orq(rep_jstr(row, "instance_type")));
	rep_fmt_val(rep_jnum(row, "value_per_dollar"), buf, sizeof buf);
	fprintf(f, " %s ", buf);
	html_esc(f, rep_orq(rep_jstr(rk, "unit")));
	fputs(json_is_true(json_object_get(row, "estimate")) ? " per $/h " : " per $/h, measured ", f);
	rep_basis_words(f, row, rep_jstr(rk, "unit"));
}

/* "lambda gpu_1x_gh200 $0.0866/Mtok (estimate: reference (sustained))", a row of `gpuvet cost` */
static void cost_row_words(FILE *f, json_t *row)
{
	const char *src = rep_jstr(json_object_get(row, "inputs"), "gemm_source");
	html_esc(f, rep_orq(rep_jstr(row, "provider")));
	fputs(" ", f);
	html_esc(f, rep_orq(rep_jstr(row, "instance_type")));
	fprintf(f, " $%.3g/Mtok (", rep_jnum(row, "usd_per_million_tokens"));
	if (json_is_true(json_object_get(row, "estimate"))) {
		fputs("<i>estimate</i>: ", f);   /* its GEMM's basis, the part before the figures */
		html_esc_n(f, src ? src : "reference", src ? strcspn(src, ":") : 9);
	} else {
		fprintf(f, "measured, %zu ", json_array_size(json_object_get(row, "runs")));
		html_esc(f, rep_orq(rep_jstr(row, "profile")));
		fputs(" run(s)", f);
	}
	fputs(")", f);
}

/*
 * The reference jobs priced by `gpuvet cost` (report_costs.c): the three cheapest per million tokens of each,
 * measured and estimated together as cost ranks them, and the best measured type beside them when it is not
 * one of the three; the job and the command that prints the same figures said.
 */
static int jobs_per_dollar(FILE *f, const struct rdoc *d, int any)
{
	size_t k, i;
	json_t *w;
	json_array_foreach(d->workloads, k, w) {
		json_t *rows = json_object_get(json_object_get(w, "result"), "rows"), *row;
		size_t shown = 0, measured_shown = 0;
		if (!json_array_size(rows) || !json_is_true(json_object_get(json_array_get(rows, 0), "fits")))
			continue;
		if (!any++)
			fputs("<h3>Most per dollar, by workload</h3>\n<ul class=\"workloads\">\n", f);
		fputs("<li><b>", f);
		html_esc(f, rep_jstr(w, "label"));
		fputs("</b>: ", f);
		json_array_foreach(rows, i, row) {
			int est = json_is_true(json_object_get(row, "estimate"));
			if (!json_is_true(json_object_get(row, "fits")) || (shown >= 3 && (est || measured_shown)))
				continue;
			fputs(shown ? "; " : "", f);
			if (shown >= 3)
				fputs("<i>best measured</i>: ", f);
			cost_row_words(f, row);
			measured_shown |= !est;
			shown++;
		}
		fputs(" <small>(<code>", f);
		html_esc(f, rep_jstr(w, "command"));
		fputs("</code>, on-demand)</small></li>\n", f);
	}
	return any;
}

/*
 * The second question on the first screen: the instance types with the most per dollar for the reference jobs
 * (jobs_per_dollar: dollars per million tokens from `gpuvet cost`), then BF16 matrix multiply and data-heavy work
 * (score.data) per $/h, three each, in the order of their value per dollar, measured and estimated rows together,
 * each marked ("measured" and its basis, or "estimate" and from what). A row without a price has no place.
 */
static void best_per_workload(FILE *f, const struct rdoc *d)
{
	static const struct { const char *label, *metric; } wl[] = {
		{ "BF16 matrix multiply per $/h", "gemm.bf16.tflops" },
		{ "Data-heavy (NVMe and object store score) per $/h", "score.data" },
	};
	int any = jobs_per_dollar(f, d, 0);
	for (size_t w = 0; w < sizeof wl / sizeof wl[0]; w++) {
		json_t *rk = ranking_of(d, wl[w].metric), *rows = json_object_get(rk, "rows"), *row, **best;
		size_t i, n = 0;
		if (!rk || !json_array_size(rows))
			continue;
		best = gv_malloc(json_array_size(rows) * sizeof *best);
		json_array_foreach(rows, i, row)
			if (isfinite(rep_jnum(row, "value_per_dollar")) && rep_jnum(row, "value_per_dollar") > 0)
				best[n++] = row;
		qsort(best, n, sizeof *best, cmp_per_dollar_desc);
		if (n && !any++)
			fputs("<h3>Most per dollar, by workload</h3>\n<ul class=\"workloads\">\n", f);
		if (n)
			fprintf(f, "<li><b>%s</b>: ", wl[w].label);
		int measured_shown = 0;
		for (i = 0; i < n && i < 3; i++) {
			fputs(i ? "; " : "", f);
			workload_row(f, rk, best[i]);
			measured_shown |= !json_is_true(json_object_get(best[i], "estimate"));
		}
		for (; i < n && !measured_shown; i++)   /* the best measured type, named beside the order */
			if (!json_is_true(json_object_get(best[i], "estimate"))) {
				fputs("; <i>best measured</i>: ", f);
				workload_row(f, rk, best[i]);
				break;
			}
		if (n)
			fputs("</li>\n", f);
		free(best);
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
	if (nt) {
		fputs("<p class=\"muted\" id=\"page-policy\">Every verdict on this page is by ", f);
		policy_words(f, pg->policy->name, pg->policy->source, pg->policy->digest);
		fputs(" (<code>gpuvet report --policy FILE</code> judges by another); another policy's, an imported or "
		      "an undigested verdict is shown as history.</p>\n", f);
	}
	if (pg->fleet)
		fleet_facts(f, d);
	for (size_t i = 0; i < nt; i++)   /* under a fleet's heading the newest run has a heading of its own */
		answer_run(f, d, pg, &d->runs[tg[i]], i == 0 && !pg->fleet);
	newer_without_gpu(f, d, pg);
	best_per_workload(f, d);
	fputs("</section>\n", f);
}
