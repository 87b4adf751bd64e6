/* html_detail.c - one run in full: inventory, metrics, benches, flags, verdicts, charts (see html.h). */
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
#include "common/mindex.h"
#include "results/store.h"
#include "judge/derive.h"
#include "results/fprun.h"
#include "common/stats.h"
#include "common/util.h"
#include "common/version.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- per-run detail ---- */

static void scalar_text(FILE *f, json_t *v)
{
	char buf[64];

	if (json_is_string(v))
		html_esc(f, json_string_value(v));
	else if (json_is_integer(v))
		fprintf(f, "%lld", (long long)json_integer_value(v));
	else if (json_is_real(v)) {
		rep_fmt_val(json_real_value(v), buf, sizeof buf);
		fputs(buf, f);
	} else if (json_is_true(v))
		fputs("yes", f);
	else if (json_is_false(v))
		fputs("no", f);
	else if (json_is_null(v) || !v)
		fputs("\xE2\x80\x94", f);
	else
		rep_json_human(f, NULL, v, 1);
}

/* An array of objects as one table: columns are the union of keys (first 16). */
static void object_array_table(FILE *f, json_t *arr)
{
	const char *cols[16];
	size_t nc = 0, i;
	json_t *o;

	json_array_foreach(arr, i, o) {
		const char *k;
		json_t *v;
		json_object_foreach(o, k, v) {
			size_t c;
			for (c = 0; c < nc; c++)
				if (!strcmp(cols[c], k))
					break;
			if (c == nc && nc < 16)
				cols[nc++] = k;
		}
	}
	if (nc > 8) {
		/* too many columns for the page (a GPU has 20 fields): one row of key: value pairs per object */
		fputs("<div class=\"scroll\"><table><thead><tr><th>#</th><th>fields</th></tr></thead><tbody>\n", f);
		json_array_foreach(arr, i, o) {
			fprintf(f, "<tr><td class=n>%zu</td><td class=\"ev\">", i);
			rep_json_human(f, NULL, o, 0);
			fputs("</td></tr>\n", f);
		}
		fputs("</tbody></table></div>\n", f);
		return;
	}
	fputs("<div class=\"scroll\"><table><thead><tr>", f);
	for (size_t c = 0; c < nc; c++)
		rep_tag(f, "<th>", cols[c], "</th>");
	fputs("</tr></thead><tbody>\n", f);
	json_array_foreach(arr, i, o) {
		fputs("<tr>", f);
		for (size_t c = 0; c < nc; c++) {
			fputs("<td>", f);
			scalar_text(f, json_object_get(o, cols[c]));
			fputs("</td>", f);
		}
		fputs("</tr>\n", f);
	}
	fputs("</tbody></table></div>\n", f);
}

static int is_object_array(json_t *v)
{
	size_t i;
	json_t *e;

	if (!json_is_array(v) || json_array_size(v) == 0)
		return 0;
	json_array_foreach(v, i, e)
		if (!json_is_object(e))
			return 0;
	return 1;
}

static void inventory_block(FILE *f, json_t *inv)
{
	const char *k;
	json_t *v;

	if (!json_is_object(inv) || json_object_size(inv) == 0) {
		fputs("<p class=\"muted\">No inventory stored.</p>\n", f);
		return;
	}
	/* scalars and small objects first as key/value rows, then arrays of objects as tables */
	fputs("<table><tbody>\n", f);
	json_object_foreach(inv, k, v) {
		if (is_object_array(v))
			continue;
		if (json_is_object(v)) {
			const char *k2;
			json_t *v2;
			json_object_foreach(v, k2, v2) {
				if (is_object_array(v2))
					continue;
				fputs("<tr><th>", f);
				html_esc(f, k);
				fputs(".", f);
				html_esc(f, k2);
				fputs("</th><td>", f);
				scalar_text(f, v2);
				fputs("</td></tr>\n", f);
			}
		} else {
			rep_tag(f, "<tr><th>", k, "</th><td>");
			scalar_text(f, v);
			fputs("</td></tr>\n", f);
		}
	}
	fputs("</tbody></table>\n", f);
	json_object_foreach(inv, k, v) {
		if (is_object_array(v)) {
			rep_tag(f, "<h4>", k, "</h4>\n");
			object_array_table(f, v);
		} else if (json_is_object(v)) {
			const char *k2;
			json_t *v2;
			json_object_foreach(v, k2, v2) {
				if (!is_object_array(v2))
					continue;
				fputs("<h4>", f);
				html_esc(f, k);
				fputs(".", f);
				html_esc(f, k2);
				fputs("</h4>\n", f);
				object_array_table(f, v2);
			}
		}
	}
}

/*
 * Percent of peak for a metric: the percentage row that names it as the rate it is of (its params'
 * "of": judge/derive.h; the run is loaded derived, so every one does), else gpu_pct_of_peak() for
 * GEMM (common/gpus.h).  Never matched by name: memcpy.h2d.pageable.gbps is not the pinned copy's
 * share of the link.
 */
static double pct_of_peak(const struct fprun *fp, struct mindex *companions, const struct fp_metric *m, int *computed)
{
	const char *name = m->name;
	size_t at;
	long long loaded = 0;

	*computed = 0;
	if (!name || strstr(name, "pct"))
		return NAN;
	if (!mindex_find(companions, name, (long)m->gpu, &at))
		return fp->metrics[at].value;
	/* the harness's rule (common/gpus.h): the instance peak counts the GPUs the bench loaded, of the derived model */
	if (rep_obj_int(&m->params, "gpus", &loaded))
		loaded = 0;
	char dt[16];
	double pct, peak;
	if (fp->d.model && !gpu_pct_of_peak(fp->d.model, name, m->gpu, m->value,
					    loaded > 0 && loaded < 1 << 20 ? (int)loaded : 0, fp->d.ngpu, dt, &pct, &peak)) {
		*computed = 1;
		return pct;
	}
	return NAN;
}

/* A row's params as the page shows them (a {} for none). */
static void params_human(FILE *f, const struct fp_obj *o)
{
	json_t *j = o->present ? fprun_obj_json(o) : json_object();
	rep_json_human(f, NULL, j, 0);
	json_decref(j);
}

/* A stored JSON text (evidence, a verdict's detail, the inventory) read back for display; json null for none. */
static json_t *text_json(const char *s)
{
	json_t *j = s ? json_loads(s, JSON_DECODE_ANY, NULL) : NULL;
	return j ? j : json_null();
}

static void metrics_table(FILE *f, struct fprun *fp, const struct run_sum *r)
{
	char id[48];

	if (fp->nmetrics == 0) {
		fputs("<p class=\"muted\">No metrics.</p>\n", f);
		return;
	}
	struct mindex pct = { 0 };   /* each percentage under the rate it is of (its companion), indexed once */
	for (size_t i = 0; i < fp->nmetrics; i++)
		if (fp->metrics[i].of)
			mindex_add(&pct, fp->metrics[i].of, (long)fp->metrics[i].gpu, i);
	snprintf(id, sizeof id, "metrics-%lld", (long long)r->id);
	fprintf(f, "<div class=\"scroll\"><table class=\"sortable\" id=\"%s\"><thead><tr><th>metric</th><th>GPU</th>"
		   "<th>value</th><th>unit</th><th>%% of peak</th><th>parameters</th></tr></thead><tbody>\n", id);
	for (size_t i = 0; i < fp->nmetrics; i++) {
		const struct fp_metric *m = &fp->metrics[i];
		int computed;
		if (!rep_row_is_measurement(m))
			continue; /* an all-reduce of one GPU: absent, not 0 */
		double pv = pct_of_peak(fp, &pct, m, &computed);
		fputs("<tr>", f);
		rep_tag(f, "<td><code>", m->name, "</code></td>");
		if (m->gpu < 0)
			fputs("<td data-v=\"-1\">instance</td>", f);
		else
			fprintf(f, "<td class=n>%d</td>", m->gpu);
		rep_td_head(f, m->name, m->value);
		rep_td_text(f, m->unit);
		rep_td_num(f, pv, computed ? " (ref.)" : NULL);
		fputs("<td class=\"ev\">", f);
		params_human(f, &m->params);
		fputs("</td></tr>\n", f);
	}
	fputs("</tbody></table></div>\n", f);
	mindex_free(&pct);
}

/* Opens a table of n rows with its header row; or writes empty_html and returns 0 when it is empty. */
static int table_open(FILE *f, size_t n, const char *empty_html, const char *head_cells)
{
	if (n == 0) {
		fputs(empty_html, f);
		return 0;
	}
	fprintf(f, "<table><thead><tr>%s</tr></thead><tbody>\n", head_cells);
	return 1;
}

static void benches_table(FILE *f, const struct fprun *fp)
{
	if (!table_open(f, fp->nbenches, "<p class=\"muted\">No bench recorded.</p>\n",
			"<th>bench</th><th>status</th><th>reason</th><th>duration</th>"))
		return;
	for (size_t i = 0; i < fp->nbenches; i++) {
		const struct fp_bench *b = &fp->benches[i];
		const char *st = b->status;
		fputs("<tr>", f);
		rep_td_text(f, b->name);
		fprintf(f, "<td class=\"%s\">", st && !strcmp(st, "ok") ? "" : st && !strcmp(st, "skipped") ? "info" : "critical");
		html_esc(f, rep_orq(st));
		fputs("</td>", f);
		rep_td_text(f, b->reason);
		rep_td_num(f, b->duration_s, " s");
		fputs("</tr>\n", f);
	}
	fputs("</tbody></table>\n", f);
}

/* What to do about a flag: stored, else computed by the CLI's function (d->remedy); an info flag needs nothing. */
const char *rep_flag_remedy(const struct rdoc *d, const struct fp_flag *fl, char *buf, size_t len)
{
	int si = rep_sev_index(fl->severity);
	const char *rem = fl->remediation;

	if (si == 2)   /* an info flag is a normal state (at the power cap under full load): nothing to fix */
		return "nothing: information, not a fault";
	if (!rem && d->remedy)
		rem = d->remedy(fl->code, rep_sev_name(si), fl->gpu, buf, len);
	return rem;
}

static void flags_table(FILE *f, const struct rdoc *d, const struct fprun *fp)
{
	char buf[512];

	if (!table_open(f, fp->nflags, "<p>No flags.</p>\n",
			"<th>flag</th><th>severity</th><th>message</th><th>what to do</th><th>evidence</th>"))
		return;
	for (size_t i = 0; i < fp->nflags; i++) {
		const struct fp_flag *fl = &fp->flags[i];
		int si = rep_sev_index(fl->severity);
		fputs("<tr>", f);
		rep_tag(f, "<td><code>", fl->code, "</code></td>");
		fprintf(f, "<td class=\"%s\">%s</td>", rep_sev_name(si), rep_sev_name(si));
		rep_td_text(f, fl->message);
		rep_td_text(f, rep_flag_remedy(d, fl, buf, sizeof buf));
		fputs("<td class=\"ev\">", f);
		json_t *ev = text_json(fl->evidence);
		rep_json_human(f, NULL, ev, 0);
		json_decref(ev);
		fputs("</td></tr>\n", f);
	}
	fputs("</tbody></table>\n", f);
}

/* A verdict without reasons (an accept): how many checks passed, and the policy's notes. */

/* A list of reasons or notes: strings as they are, anything else as key: value. */
static void human_list(FILE *f, json_t *arr)
{
	json_t *n;
	size_t i;
	fputs("<ul>", f);
	json_array_foreach(arr, i, n) {
		fputs("<li>", f);
		if (json_is_string(n))
			html_esc(f, json_string_value(n));
		else
			rep_json_human(f, NULL, n, 0);
		fputs("</li>", f);
	}
	fputs("</ul>", f);
}

/*
 * A verdict's reasons: first what decided it, in the sentence the CLI says (judge/accept.h: what failed, or what
 * could not be measured and why), then each check not measured with why, then the checks passed and the notes.
 */
static void verdict_detail(FILE *f, const char *verdict, json_t *det)
{
	json_t *passed = json_object_get(det, "passed"), *notes = json_object_get(det, "notes"), *u;
	char why[768];
	size_t i;

	if (!json_is_array(passed) && !json_is_array(notes)) {
		rep_json_human(f, NULL, det, 0);
		return;
	}
	html_esc(f, accept_reason_sentence(det, verdict ? verdict : "", why, sizeof why));
	if (json_array_size(json_object_get(det, "unmeasurable"))) {
		fputs("<ul>", f);
		json_array_foreach(json_object_get(det, "unmeasurable"), i, u) {
			const char *what = rep_jstr(u, "flag") ? rep_jstr(u, "flag") : rep_jstr(u, "metric");
			fputs("<li>NOT MEASURED ", f);
			html_esc(f, what ? what : "the run");
			fputs(": ", f);
			html_esc(f, rep_orq(rep_jstr(u, "reason")));
			fputs("</li>", f);
		}
		fputs("</ul>", f);
	} else {
		fputs(". ", f);
	}
	fprintf(f, "%zu check%s passed", json_array_size(passed), json_array_size(passed) == 1 ? "" : "s");
	if (json_array_size(notes)) {
		fputs("; notes:", f);
		human_list(f, notes);
	}
}

static void verdicts_block(FILE *f, const struct fprun *fp)
{
	if (!table_open(f, fp->nverdicts, "<p>Not judged: no acceptance verdict stored (<code>gpuvet accept</code>).</p>\n",
			"<th>verdict</th><th>policy</th><th>at</th><th>reasons</th>"))
		return;
	for (size_t i = 0; i < fp->nverdicts; i++) {
		const struct fp_verdict *v = &fp->verdicts[i];
		json_t *det = text_json(v->detail), *reasons = json_object_get(det, "reasons");
		fputs("<tr><td>", f);
		rep_badge(f, v->verdict);
		fputs("</td>", f);
		char pol[256];   /* the policy by name, source and digest; an imported verdict says it was judged elsewhere */
		snprintf(pol, sizeof pol, "%s (%s, %.19s)%s", rep_orq(v->policy), rep_orq(v->source), rep_orq(v->digest),
			 v->imported ? " imported: judged elsewhere, counts for nothing" : "");
		rep_td_text(f, pol);
		rep_td_text(f, v->at);
		fputs("<td>", f);
		if (json_array_size(reasons)) {
			human_list(f, reasons);
		} else {
			verdict_detail(f, v->verdict, det);
		}
		json_decref(det);
		fputs("</td></tr>\n", f);
	}
	fputs("</tbody></table>\n", f);
}

/* " (commit ..., built ..., release tarball)" of run.gpuvet_build; nothing for a run without one. */
static void run_build(FILE *f, const struct fp_head *h)
{
	char text[256];
	if (!h->has_build)
		return;
	fputs(" (", f);
	html_esc(f, gv_build_describe(h->build_commit, h->build_at, h->build_release, text, sizeof text));
	fputs(")", f);
}

static void run_detail(FILE *f, const struct rdoc *d, const struct run_sum *r, struct fprun *fp)
{
	fprintf(f, "<section class=\"run\" id=\"run-%lld\"><h3>Run %lld: ", (long long)r->id, (long long)r->id);
	html_esc(f, rep_orq(r->provider));
	fputs(" ", f);
	html_esc(f, rep_orq(r->itype));
	fputs(" ", f);
	html_esc(f, rep_orq(r->region));
	fputs(" ", f);
	rep_badge(f, r->verdict);
	if (r->status && strcmp(r->status, "complete"))
		rep_badge(f, "incomplete");
	fputs("</h3>\n<p>host <b>", f);
	html_esc(f, rep_orq(r->host));
	fputs("</b>, started ", f);
	html_esc(f, rep_orq(r->started));
	fputs(", finished ", f);
	html_esc(f, rep_orq(fp->run.finished_at));
	fputs(", profile ", f);
	html_esc(f, rep_orq(r->profile));
	fprintf(f, ", %d \xC3\x97 ", r->gpu_count);
	html_esc(f, rep_orq(r->gpu_model));
	fputs(", gpuvet ", f);
	html_esc(f, rep_orq(r->version));
	run_build(f, &fp->run);
	fputs(", uuid <code>", f);
	html_esc(f, rep_orq(r->uuid));
	fputs("</code></p>\n<h4>Flags</h4>\n", f);
	flags_table(f, d, fp);
	fputs("<h4>Verdict</h4>\n", f);
	verdicts_block(f, fp);
	if (r->charts) {
		fputs("<h4>Charts</h4>\n", f);
		rep_run_charts(f, d, r, fp);
	} else {
		fprintf(f, "<p class=\"muted\">Charts are drawn for the newest run of each instance type; "
			   "<code>gpuvet report --run %lld</code> draws this run's.</p>\n", (long long)r->id);
	}
	fputs("<h4>Benches</h4>\n", f);
	benches_table(f, fp);
	fputs("<details><summary>Metrics</summary>\n", f);
	metrics_table(f, fp, r);
	fputs("</details>\n<details><summary>Inventory</summary>\n", f);
	json_t *inv = text_json(fp->inv.text);   /* what was stored, shown as key: value */
	if (!json_is_object(inv)) {
		json_decref(inv);
		inv = json_object();
	}
	inventory_block(f, inv);
	json_decref(inv);
	fputs("</details>\n</section>\n", f);
}

/* One run's detail, its fingerprint loaded from the store when not in memory; -1 when it cannot be. */
static int detail_one(FILE *f, const struct rdoc *d, const struct run_sum *r)
{
	struct fprun *fp;

	if (r->fp) {
		run_detail(f, d, r, r->fp);
		return 0;
	}
	if (derive_load_run(d->store, r->id, STORE_RUN_ALL, &fp)) {   /* with what gpuvet derives, a run stored before too */
		snprintf(d->load_err, d->load_errlen, "cannot load run %lld: %s", (long long)r->id,
			 store_errmsg(d->store));
		return -1;
	}
	run_detail(f, d, r, fp);
	fprun_free(fp);
	return 0;
}

void rep_section_detail(FILE *f, const struct rdoc *d, const struct report_page *pg)
{
	(void)pg;
	size_t nd = 0, *idx;

	for (size_t i = 0; i < d->n; i++)
		nd += d->runs[i].detail && (d->runs[i].fp || d->store);
	fprintf(f, "<section id=\"detail\"><h2>Run detail</h2>\n<p>%zu of %zu runs in detail, newest first: "
		   "the newest %d of each instance type, at most %d in all, and every run asked for with "
		   "<code>--run</code>. The others are rows of the <a href=\"#runs\">runs table</a>; "
		   "<code>gpuvet report --run ID</code> details any run.</p>\n",
		nd, d->agg.runs, REPORT_DETAIL_PER_SKU, REPORT_DETAIL_MAX);
	idx = gv_malloc((d->n ? d->n : 1) * sizeof *idx);
	nd = 0;
	for (size_t i = 0; i < d->n; i++)
		if (d->runs[i].detail && (d->runs[i].fp || d->store))
			idx[nd++] = i;
	qsort_r(idx, nd, sizeof *idx, rep_cmp_newest, d->runs);
	for (size_t i = 0; i < nd; i++) {
		const struct run_sum *r = &d->runs[idx[i]];
		if (d->written && *d->written >= d->budget && !r->forced) {
			size_t left = 0;
			for (size_t j = i; j < nd; j++)
				left += !d->runs[idx[j]].forced;
			fprintf(f, "<p class=\"demo\">%zu more runs left out of the detail: the file has reached "
				   "%.1f MiB. <code>gpuvet report --run ID</code> details any run.</p>\n",
				left, (double)d->budget / 1048576.0);
			/* runs asked for with --run still come */
			for (size_t j = i; j < nd; j++)
				if (d->runs[idx[j]].forced && detail_one(f, d, &d->runs[idx[j]]))
					break;
			break;
		}
		if (detail_one(f, d, r))
			break;
	}
	free(idx);
	fputs("</section>\n", f);
}
