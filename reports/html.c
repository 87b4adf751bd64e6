/*
 * html.c - the self-contained HTML report (see html.h): the page frame, the
 * helpers every section uses, the reduction of a run to its summary, and the
 * table of sections (report_sections), each in its own file html_<name>.c.
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
#include "common/stats.h"
#include "common/util.h"

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

/* Headline metrics of the runs table (instance level, gpu -1); label and unit from their benches' rows. */
const char *const report_head[N_HEAD] = {
	"gemm.bf16.tflops", "gemm.fp16.tflops", "memcpy.h2d.pinned.gbps", "allreduce.busbw.gbps",
	"nvme.seqread.gbps", "soak.tflops.last_min", "soak.sm_clock.drop_pct",
	"host.decode.images_per_s_per_gpu", "host.membw.triad.gbps", "host.staging.shm.gbps",
};

/* ---- small helpers (report_int.h) ---- */

const char *const rep_sev_name[3] = { "critical", "warning", "info" };


/*
 * A headline cell: percentages to one decimal, and a drop that is negative
 * (the clock rose) said as no drop, not as "-4.186".
 */
void rep_td_head(FILE *f, const char *metric, double v)
{
	const struct metric_info *mi = metric ? metric_info_find(metric) : NULL;
	if (!isfinite(v) || !mi || strcmp(mi->unit, "%")) {
		rep_td_num(f, v, NULL);
		return;
	}
	if (strstr(metric, ".drop_pct") && v < 0)
		fprintf(f, "<td class=n data-v=\"%.10g\">none (rose %.1f)</td>", v, -v);
	else
		fprintf(f, "<td class=n>%.1f</td>", v);
}

const char *rep_jstr(json_t *o, const char *k)
{
	json_t *v = json_object_get(o, k);
	return json_is_string(v) ? json_string_value(v) : NULL;
}

double rep_jnum(json_t *o, const char *k)
{
	json_t *v = json_object_get(o, k);
	return json_is_number(v) ? json_number_value(v) : NAN;
}

const char *rep_orq(const char *s)
{
	return s && *s ? s : "\xE2\x80\x94";  /* em dash for "none" */
}

const char *rep_market_name(const char *m)
{
	return m && !strcmp(m, "on_demand") ? "on-demand" : rep_orq(m);
}

/* 0 critical, 1 warning, 2 info or unknown: the order of judge/flags.h, worst first */
int rep_sev_index(const char *s)
{
	int r = flags_severity_rank(s);
	return r < 0 ? 2 : 2 - r;
}



/* Numbers for people: about four significant digits, no exponent below 1e9. */
void rep_fmt_val(double v, char *buf, size_t size)
{
	double a = fabs(v);

	if (!isfinite(v))
		snprintf(buf, size, "\xE2\x80\x94");
	else if (a >= 1e9 || (a > 0 && a < 1e-3))
		snprintf(buf, size, "%.3g", v);
	else if (a >= 1000 || a == floor(a))
		snprintf(buf, size, "%.0f", v);
	else if (a >= 100)
		snprintf(buf, size, "%.1f", v);
	else if (a >= 10)
		snprintf(buf, size, "%.2f", v);
	else
		snprintf(buf, size, "%.3f", v);
}

/* At most four significant digits, no trailing zeros ("60", "697.5", "0.9"); integers above 10^4 whole. */
static void fmt_num4(double v, char *buf, size_t size)
{
	double a = fabs(v);

	if (!isfinite(v))
		snprintf(buf, size, "\xE2\x80\x94");
	else if (a >= 1e4 && a < 1e15)
		snprintf(buf, size, "%.0f", v);
	else
		snprintf(buf, size, "%.4g", v);
}

/* The unit a key's suffix names (power_limit_w: W), or "". */
static const char *key_unit(const char *key)
{
	static const struct { const char *suf, *unit; } u[] = {
		{ "_s", " s" }, { "_w", " W" }, { "_c", " \xC2\xB0" "C" }, { "_mhz", " MHz" }, { "_pct", " %" },
		{ "_gbps", " GB/s" }, { "_tflops", " TFLOP/s" }, { "_us", " \xC2\xB5s" }, { "_ms", " ms" },
	};
	size_t kl = key ? strlen(key) : 0;

	for (size_t i = 0; i < sizeof u / sizeof u[0]; i++) {
		size_t sl = strlen(u[i].suf);
		if (kl > sl && !strcasecmp(key + kl - sl, u[i].suf))
			return u[i].unit;
	}
	return "";
}

/*
 * A JSON value for people (flag evidence, metric parameters, verdict
 * detail): numbers rounded to four significant digits with the unit their
 * key names, objects as "key: value" pairs, never raw JSON with float noise.
 */
void rep_json_human(FILE *f, const char *key, json_t *v, int depth)
{
	char buf[64];
	const char *k;
	json_t *e;
	size_t i;

	if (json_is_string(v)) {
		html_esc(f, json_string_value(v));
	} else if (json_is_integer(v)) {
		fprintf(f, "%lld%s", (long long)json_integer_value(v), key_unit(key));
	} else if (json_is_real(v)) {
		fmt_num4(json_real_value(v), buf, sizeof buf);
		fprintf(f, "%s%s", buf, key_unit(key));
	} else if (json_is_true(v)) {
		fputs("yes", f);
	} else if (json_is_false(v)) {
		fputs("no", f);
	} else if (json_is_array(v)) {
		fputs("[", f);
		json_array_foreach(v, i, e) {
			if (i == 32) {
				fprintf(f, ", \xE2\x80\xA6 %zu in all", json_array_size(v));
				break;
			}
			fputs(i ? ", " : "", f);
			rep_json_human(f, key, e, depth + 1);
		}
		fputs("]", f);
	} else if (json_is_object(v)) {
		int first = 1;
		fputs(depth ? "{" : "", f);
		json_object_foreach(v, k, e) {
			if (depth)
				fputs(first ? "" : ", ", f);
			else
				fputs(first ? "<span class=\"kv\">" : "</span> <span class=\"kv\">", f);
			first = 0;
			html_esc(f, k);
			fputs(": ", f);
			rep_json_human(f, k, e, depth + 1);
		}
		fputs(depth ? "}" : first ? "\xE2\x80\x94" : "</span>", f);
	} else {
		fputs("\xE2\x80\x94", f);
	}
}

/* A numeric cell: text for people, data-v for sorting. */
void rep_td_num(FILE *f, double v, const char *suffix)
{
	char buf[64];

	if (!isfinite(v)) {
		fputs("<td class=n>\xE2\x80\x94</td>", f);
		return;
	}
	rep_fmt_val(v, buf, sizeof buf);
	/* the script sorts by the text when it is a number; data-v only where a suffix hides it */
	if (suffix && *suffix)
		fprintf(f, "<td class=n data-v=\"%.10g\">%s%s</td>", v, buf, suffix);
	else
		fprintf(f, "<td class=n>%s</td>", buf);
}

void rep_td_text(FILE *f, const char *s)
{
	fputs("<td>", f);
	html_esc(f, rep_orq(s));
	fputs("</td>", f);
}

void rep_tag(FILE *f, const char *open, const char *text, const char *close)
{
	fputs(open, f);
	html_esc(f, text);
	fputs(close, f);
}

void rep_badge(FILE *f, const char *what)
{
	const char *cls = "info";

	if (!what || !*what) {
		fputs("<span class=\"muted\">none</span>", f);
		return;
	}
	if (!strcmp(what, "accept") || !strcmp(what, "reject") || !strcmp(what, "unmeasurable") ||
	    !strcmp(what, "incomplete"))
		cls = what;
	fprintf(f, "<b class=\"badge %s\">", cls);
	html_esc(f, what);
	fputs("</b>", f);
}

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
	need = len + strlen(code) + strlen(rep_sev_name[si]) + 3;
	r->flags = gv_realloc(r->flags, need);
	snprintf(r->flags + len, need - len, "%s%s:%s", len ? " " : "", code, rep_sev_name[si]);
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

static void run_sum_init(struct run_sum *r, struct rep_strs *strs, json_t *fp)
{
	json_t *run = json_object_get(fp, "run"), *v;
	size_t i;

	memset(r, 0, sizeof *r);
	v = json_object_get(run, "id");
	r->id = json_is_integer(v) ? (int64_t)json_integer_value(v) : 0;
	r->uuid = dupn(rep_jstr(run, "uuid"));
	r->status = rep_strs_get(strs, rep_jstr(run, "status"));
	r->profile = rep_strs_get(strs, rep_jstr(run, "profile"));
	r->version = rep_strs_get(strs, rep_jstr(run, "gpuvet_version"));
	r->host = rep_strs_get(strs, rep_jstr(run, "hostname"));
	r->provider = rep_strs_get(strs, rep_jstr(run, "provider"));
	r->itype = rep_strs_get(strs, rep_jstr(run, "instance_type"));
	r->region = rep_strs_get(strs, rep_jstr(run, "region"));
	r->gpu_model = rep_strs_get(strs, rep_jstr(run, "gpu_model"));
	r->started = dupn(rep_jstr(run, "started_at"));
	v = json_object_get(run, "gpu_count");
	r->gpu_count = json_is_integer(v) ? (int)json_integer_value(v) : 0;
	report_sum_init_run(r, strs);

	json_array_foreach(json_object_get(fp, "metrics"), i, v) {
		json_t *g = json_object_get(v, "gpu");
		if (json_is_integer(g) && json_integer_value(g) == -1)
			report_sum_add_metric(r, rep_jstr(v, "name"), rep_jnum(v, "value"));
	}
	json_array_foreach(json_object_get(fp, "benches"), i, v)
		report_sum_add_bench(r, rep_jstr(v, "status"));
	json_array_foreach(json_object_get(fp, "flags"), i, v)
		report_sum_add_flag(r, rep_jstr(v, "code"), rep_jstr(v, "severity"));
	json_array_foreach(json_object_get(fp, "verdicts"), i, v)
		if (!json_is_true(json_object_get(v, "imported")))   /* an imported verdict is history, not the run's */
			report_sum_add_verdict(r, strs, rep_jstr(v, "verdict"), rep_jstr(v, "policy"), rep_jstr(v, "at"));
	json_array_foreach(json_object_get(fp, "verdicts"), i, v) {
		const char *code = rep_jstr(json_array_get(json_object_get(json_object_get(v, "detail"), "tolerated"), 0),
					    "flag");
		if (code && !json_is_true(json_object_get(v, "imported")) && r->verdict_at && rep_jstr(v, "at") &&
		    !strcmp(r->verdict_at, rep_jstr(v, "at")) && !strcmp(rep_jstr(v, "verdict"), "accept")) {
			free(r->tolerated);
			r->tolerated = dupn(code);
		}
	}
}

void report_run_sum_free(struct run_sum *r)
{
	free(r->uuid);
	free(r->started);
	free(r->verdict_at);
	free(r->flags);
	free(r->tolerated);
	json_decref(r->fp);
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
	rep_headline(f, d, pg);
	fprintf(f, "<p>gpuvet report, generated %s by gpuvet %s from ", d->generated_at, GPUVET_VERSION);
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
		run_sum_init(&d.runs[i], d.strs, in->fps[i]);
		d.runs[i].fp = json_incref(in->fps[i]);
		d.runs[i].detail = in->detail ? in->detail[i] : 0;
		rep_agg_add(&d.agg, &d.runs[i], i);
	}
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

