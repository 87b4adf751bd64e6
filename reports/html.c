/*
 * html.c - the self-contained HTML report (see html.h): the page frame, the
 * reduction of a run to its summary, and the table of sections
 * (report_sections), each in its own file html_<name>.c; what they all use
 * is below them, in html_util.c.
 */
#include "reports/html.h"
#include "reports/report_int.h"
#include "benches/bench.h"
#include "reports/html_escape.h"
#include "reports/report_assets.h"
#include "common/embed.h"
#include "reports/sha256.h"
#include "reports/svg.h"
#include "judge/rank.h"
#include "judge/flags.h"
#include "judge/accept.h"
#include "judge/policy.h"
#include "pricing/catalog.h"
#include "common/gpus.h"
#include "results/store.h"
#include "results/fprun.h"
#include "judge/derive.h"
#include "common/stats.h"
#include "common/util.h"
#include "common/version.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

GV_EMBED(gv_report_css, "reports/assets/report.css");
GV_EMBED(gv_report_js, "reports/assets/report.js");

static void sku_key(char *buf, size_t size, const char *prov, const char *it, const char *reg)
{
	snprintf(buf, size, "%s / %s / %s", prov ? prov : "?", it ? it : "?", reg ? reg : "?");
}

/* ---- reducing a run ---- */

const char *report_sku_key(struct rep_strs *strs, const char *provider, const char *itype, const char *region)
{
	char key[512];
	sku_key(key, sizeof key, provider, itype, region);
	return rep_strs_get(strs, key);
}

void report_sum_init_run(struct run_sum *r, struct rep_strs *strs)
{
	for (size_t i = 0; i < N_HEAD; i++)
		r->head[i] = NAN;
	r->sku = report_sku_key(strs, r->provider, r->itype, r->region);
}

void report_sum_add_metric(struct run_sum *r, const char *name, double value)
{
	for (size_t h = 0; h < N_HEAD; h++)
		if (name && !strcmp(name, report_head[h]))
			r->head[h] = value;
}

void report_sum_add_bench(struct run_sum *r, const char *st)
{
	if (st && !strcmp(st, "ok"))
		r->nb_ok++;
	else if (st && !strcmp(st, "skipped"))
		r->nb_skip++;
	else
		r->nb_fail++;
}

void report_sum_add_flag(struct run_sum *r, const char *code, const char *sev)
{
	int si = rep_sev_index(sev);
	size_t len = r->flags ? strlen(r->flags) : 0, need;

	r->nflag[si]++;
	if (!code)
		return;
	need = len + strlen(code) + strlen(rep_sev_name(si)) + 3;
	r->flags = gv_realloc(r->flags, need);
	snprintf(r->flags + len, need - len, "%s%s:%s", len ? " " : "", code, rep_sev_name(si));
}

/* The latest verdict (by time, then order seen) stands for the run. */
void report_sum_add_verdict(struct run_sum *r, struct rep_strs *strs, const char *verdict, const char *policy,
			    const char *at)
{
	if (r->verdict && at && r->verdict_at && strcmp(at, r->verdict_at) < 0)
		return;
	free(r->verdict_at);
	r->verdict = rep_strs_get(strs, verdict);
	r->policy = rep_strs_get(strs, policy);
	r->verdict_at = dupn(at);
}

/*
 * A verdict's first failed check, named by its flag, else its metric; a copy,
 * or NULL.  The detail is the verdict's own text in the typed run, parsed here
 * for this one question.
 */
static char *first_failed(const char *detail)
{
	json_t *det = detail ? json_loads(detail, 0, NULL) : NULL;
	json_t *e = json_array_get(json_object_get(det, "failed"), 0);
	const char *what = rep_jstr(e, "flag") ? rep_jstr(e, "flag") : rep_jstr(e, "metric");
	char *out = dupn(what);
	json_decref(det);
	return out;
}

/* The verdict that stands for the run (report_sum_add_verdict chose it by time), or NULL. */
static const struct fp_verdict *standing_verdict(const struct run_sum *r, const struct fprun *fp)
{
	for (size_t i = 0; i < fp->nverdicts; i++) {
		const struct fp_verdict *v = &fp->verdicts[i];
		if (!v->imported && r->verdict_at && v->at && !strcmp(r->verdict_at, v->at))
			return v;
	}
	return NULL;
}

/* A run's summary from its typed run (report_render's runs in memory), as report_load.c makes one from its row. */
static void run_sum_init(struct run_sum *r, struct rep_strs *strs, const struct fprun *fp)
{
	const struct fp_head *h = &fp->run;

	memset(r, 0, sizeof *r);
	r->id = h->id;
	r->uuid = dupn(h->uuid);
	r->status = rep_strs_get(strs, h->status);
	r->profile = rep_strs_get(strs, h->profile);
	r->version = rep_strs_get(strs, h->version);
	r->host = rep_strs_get(strs, h->hostname);
	r->provider = rep_strs_get(strs, h->provider);
	r->itype = rep_strs_get(strs, h->instance_type);
	r->region = rep_strs_get(strs, h->region);
	r->gpu_model = rep_strs_get(strs, h->gpu_model);
	r->started = dupn(h->started_at);
	r->gpu_count = h->gpu_count > 0 ? h->gpu_count : 0;
	report_sum_init_run(r, strs);

	for (size_t i = 0; i < fp->nmetrics; i++)
		if (fp->metrics[i].gpu == -1)
			report_sum_add_metric(r, fp->metrics[i].name, fp->metrics[i].value);
	for (size_t i = 0; i < fp->nbenches; i++)
		report_sum_add_bench(r, fp->benches[i].status);
	for (size_t i = 0; i < fp->nflags; i++)
		report_sum_add_flag(r, fp->flags[i].code, fp->flags[i].severity);
	for (size_t i = 0; i < fp->nverdicts; i++)
		if (!fp->verdicts[i].imported)   /* an imported verdict is history, not the run's */
			report_sum_add_verdict(r, strs, fp->verdicts[i].verdict, fp->verdicts[i].policy, fp->verdicts[i].at);
}

void report_run_sum_free(struct run_sum *r)
{
	free(r->uuid);
	free(r->started);
	free(r->verdict_at);
	free(r->flags);
	fprun_free(r->fp);
}

/* ---- page frame ---- */

static void page_head(FILE *f, const struct rdoc *d, const struct report_page *pg)
{
	char css_h[64], js_h[64];

	sha256_csp_source(REPORT_CSS, strlen(REPORT_CSS), css_h, sizeof css_h);
	sha256_csp_source(REPORT_JS, strlen(REPORT_JS), js_h, sizeof js_h);
	fprintf(f, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
		   "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
		   "style-src '%s'; script-src '%s'; img-src data:; base-uri 'none'; form-action 'none'\">\n"
		   "<meta name=\"referrer\" content=\"no-referrer\">\n"
		   "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
		   "<meta name=\"generator\" content=\"gpuvet %s\">\n"
		   "<title>gpuvet report</title>\n<style>%s</style>\n</head>\n<body>\n",
		css_h, js_h, GPUVET_VERSION, REPORT_CSS);
	fputs("<header>", f);
	if (!rep_cluster_headline(f, d, pg))
		rep_headline(f, d, pg);
	fprintf(f, "<p>gpuvet report, generated %s by ", d->generated_at);
	html_esc(f, gv_version_line());   /* the build too: commit, date, release tarball or not */
	fputs(" from ", f);
	if (d->runs_in_store && d->runs_in_store != d->agg.runs)
		fprintf(f, "%zu of the store's %zu runs", d->agg.runs, d->runs_in_store);
	else
		fprintf(f, "%zu run%s", d->agg.runs, d->agg.runs == 1 ? "" : "s");
	fputs("</p></header>\n<nav><a href=\"#answer\">This machine</a>", f);
	if (d->cluster)
		fputs("<a href=\"#cluster\">Cluster</a>", f);
	fputs("<a href=\"#charts\">Perf per dollar</a>"
	      "<a href=\"#summary\">Summary</a><a href=\"#ranking\">Ranking</a><a href=\"#runs\">Runs</a>"
	      "<a href=\"#detail\">Run detail</a><a href=\"#provenance\">Provenance</a></nav>\n<main>\n", f);
}

static void page_tail(FILE *f)
{
	fprintf(f, "</main>\n<script>%s</script>\n</body>\n</html>\n", REPORT_JS);
}

/* ---- entry points ---- */

/* The page, top to bottom: a section a row. */
static const struct {
	const char *name;
	report_section_fn render;
} report_sections[] = {
	{ "answer", rep_section_answer },           /* html_answer.c: the verdict first */
	{ "cluster", rep_section_cluster },         /* html_cluster.c: the newest cluster run, when there is one */
	{ "cost", rep_section_cost },               /* html_cost.c: with --job, what it costs */
	{ "bars", rep_section_bars },               /* html_ranking.c: throughput per dollar */
	{ "summary", rep_section_summary },         /* html_summary.c */
	{ "ranking", rep_section_ranking },         /* html_ranking.c */
	{ "runs", rep_section_runs },               /* html_runs.c */
	{ "detail", rep_section_detail },           /* html_detail.c (charts: html_charts.c) */
	{ "provenance", rep_section_provenance },   /* html_provenance.c */
};

int report_render_doc(const struct rdoc *d, FILE *f)
{
	struct report_page pg = { .nt = 0 };
	struct policy *builtin = NULL;
	char err[256];
	if (!d->policy && policy_load(NULL, &builtin, err, sizeof err)) {
		snprintf(d->load_err ? d->load_err : err, d->load_err ? d->load_errlen : sizeof err,
			 "the built-in policy: %s", err);
		return -1;
	}
	pg.policy = d->policy ? d->policy : builtin;
	pg.nt = rep_answer_targets(d, pg.tg, sizeof pg.tg / sizeof pg.tg[0]);
	pg.top = pg.nt ? &d->runs[pg.tg[0]] : NULL;
	pg.fleet = d->agg.runs > 1 && pg.top && !pg.top->forced;   /* --run asks about runs: they head the page */
	page_head(f, d, &pg);
	for (size_t i = 0; i < sizeof report_sections / sizeof report_sections[0]; i++)
		report_sections[i].render(f, d, &pg);
	page_tail(f);
	policy_free(builtin);
	return ferror(f) ? -1 : 0;
}

static void now_iso(char *buf, size_t size)
{
	gv_iso8601((long)time(NULL), buf, size);
}

/* Why runs were rejected, from the runs in memory: each rejected run's standing verdict's first failed check. */
static void reasons_mem(struct rdoc *d)
{
	for (size_t i = 0; i < d->n; i++) {
		const struct run_sum *r = &d->runs[i];
		size_t k;
		if (!r->verdict || strcmp(r->verdict, "reject"))
			continue;
		const struct fp_verdict *v = standing_verdict(r, r->fp);
		char *what = v ? first_failed(v->detail) : NULL;
		for (k = 0; k < d->nreasons && strcmp(d->reasons[k].what, what ? what : "?"); k++)
			;
		if (k == d->nreasons && k < sizeof d->reasons / sizeof d->reasons[0]) {
			gv_strlcpy(d->reasons[k].what, what ? what : "?", sizeof d->reasons[k].what);
			d->nreasons++;
		}
		if (k < d->nreasons) {
			d->reasons[k].runs++;
			d->reasons[k].example = r->id > d->reasons[k].example ? r->id : d->reasons[k].example;
		}
		free(what);
	}
}

int report_render(const struct report_input *in, FILE *out)
{
	struct rdoc d = { 0 };
	char now[32];
	int rc;

	memset(&d, 0, sizeof d);
	d.n = in->n_fps;
	d.runs = gv_calloc(d.n ? d.n : 1, sizeof *d.runs);
	d.strs = rep_strs_new();
	rep_agg_init(&d.agg, d.strs, in->detail_per_sku, in->detail_max);
	for (size_t i = 0; i < d.n; i++) {
		struct fprun *fp = derive_from_json(in->fps[i]);   /* decoded once and derived, as a stored run is loaded */
		if (!fp)
			fp = fprun_new();   /* not an object: a run with nothing in it, summarised as such */
		run_sum_init(&d.runs[i], d.strs, fp);
		d.runs[i].fp = fp;
		d.runs[i].detail = in->detail ? in->detail[i] : 0;
		rep_agg_add(&d.agg, &d.runs[i], i);
	}
	reasons_mem(&d);
	report_pick_detail(&d.agg, d.runs, d.n);
	rep_agg_medians_mem(&d.agg, d.runs, d.n, 1);   /* the fleet is these runs */
	rep_agg_note_detail(&d.agg, d.runs, d.n);
	d.rankings = in->rankings;
	d.rank_error = in->rank_error;
	d.prices = in->prices;
	d.prices_error = in->prices_error;
	d.runs_in_store = in->runs_in_store;
	if (!in->generated_at)
		now_iso(now, sizeof now);
	d.generated_at = in->generated_at ? in->generated_at : now;
	d.remedy = in->remedy;
	rc = report_render_doc(&d, out);
	for (size_t i = 0; i < d.n; i++)
		report_run_sum_free(&d.runs[i]);
	free(d.runs);
	rep_agg_free(&d.agg);
	rep_strs_free(d.strs);
	return rc;
}

