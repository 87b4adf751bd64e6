/* html.c - the self-contained HTML report; see html.h */
#include "reports/html.h"
#include "reports/report_int.h"
#include "benches/bench.h"
#include "reports/html_escape.h"
#include "reports/report_assets.h"
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
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Headline metrics of the runs table (instance level, gpu -1); label and unit from their benches' rows. */
const char *const report_head[N_HEAD] = {
	"gemm.bf16.tflops", "gemm.fp16.tflops", "memcpy.h2d.pinned.gbps", "allreduce.busbw.gbps",
	"nvme.seqread.gbps", "soak.tflops.last_min", "soak.sm_clock.drop_pct",
	"host.decode.images_per_s_per_gpu", "host.membw.triad.gbps", "host.staging.shm.gbps",
};

/* ---- small helpers ---- */

static void td_num(FILE *f, double v, const char *suffix);

/*
 * A headline cell: percentages to one decimal, and a drop that is negative
 * (the clock rose) said as no drop, not as "-4.186".
 */
static void td_head(FILE *f, const char *metric, double v)
{
	const struct metric_info *mi = metric ? metric_info_find(metric) : NULL;
	if (!isfinite(v) || !mi || strcmp(mi->unit, "%")) {
		td_num(f, v, NULL);
		return;
	}
	if (strstr(metric, ".drop_pct") && v < 0)
		fprintf(f, "<td class=n data-v=\"%.10g\">none (rose %.1f)</td>", v, -v);
	else
		fprintf(f, "<td class=n>%.1f</td>", v);
}

static const char *jstr(json_t *o, const char *k)
{
	json_t *v = json_object_get(o, k);
	return json_is_string(v) ? json_string_value(v) : NULL;
}

static double jnum(json_t *o, const char *k)
{
	json_t *v = json_object_get(o, k);
	return json_is_number(v) ? json_number_value(v) : NAN;
}

static const char *orq(const char *s)
{
	return s && *s ? s : "\xE2\x80\x94";  /* em dash for "none" */
}

static const char *market_name(const char *m)
{
	return m && !strcmp(m, "on_demand") ? "on-demand" : orq(m);
}

/* 0 critical, 1 warning, 2 info or unknown: the order of judge/flags.h, worst first */
static int sev_index(const char *s)
{
	int r = flags_severity_rank(s);
	return r < 0 ? 2 : 2 - r;
}

static const char *const SEV_NAME[3] = { "critical", "warning", "info" };

/* Numbers for people: about four significant digits, no exponent below 1e9. */
static void fmt_val(double v, char *buf, size_t size)
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
static void json_human(FILE *f, const char *key, json_t *v, int depth)
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
			json_human(f, key, e, depth + 1);
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
			json_human(f, k, e, depth + 1);
		}
		fputs(depth ? "}" : first ? "\xE2\x80\x94" : "</span>", f);
	} else {
		fputs("\xE2\x80\x94", f);
	}
}

/* A numeric cell: text for people, data-v for sorting. */
static void td_num(FILE *f, double v, const char *suffix)
{
	char buf[64];

	if (!isfinite(v)) {
		fputs("<td class=n>\xE2\x80\x94</td>", f);
		return;
	}
	fmt_val(v, buf, sizeof buf);
	/* the script sorts by the text when it is a number; data-v only where a suffix hides it */
	if (suffix && *suffix)
		fprintf(f, "<td class=n data-v=\"%.10g\">%s%s</td>", v, buf, suffix);
	else
		fprintf(f, "<td class=n>%s</td>", buf);
}

static void td_text(FILE *f, const char *s)
{
	fputs("<td>", f);
	html_esc(f, orq(s));
	fputs("</td>", f);
}

static void tag(FILE *f, const char *open, const char *text, const char *close)
{
	fputs(open, f);
	html_esc(f, text);
	fputs(close, f);
}

static void badge(FILE *f, const char *what)
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

void report_sum_init_run(struct run_sum *r)
{
	char key[512];

	for (size_t i = 0; i < N_HEAD; i++)
		r->head[i] = NAN;
	sku_key(key, sizeof key, r->provider, r->itype, r->region);
	r->sku = gv_strdup(key);
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
	int si = sev_index(sev);
	size_t len = r->flags ? strlen(r->flags) : 0, need;

	r->nflag[si]++;
	if (!code)
		return;
	need = len + strlen(code) + strlen(SEV_NAME[si]) + 3;
	r->flags = gv_realloc(r->flags, need);
	snprintf(r->flags + len, need - len, "%s%s:%s", len ? " " : "", code, SEV_NAME[si]);
}

/* The latest verdict (by time, then order seen) stands for the run. */
void report_sum_add_verdict(struct run_sum *r, const char *verdict, const char *policy, const char *at)
{
	if (r->verdict && at && r->verdict_at && strcmp(at, r->verdict_at) < 0)
		return;
	free(r->verdict);
	free(r->policy);
	free(r->verdict_at);
	r->verdict = dupn(verdict);
	r->policy = dupn(policy);
	r->verdict_at = dupn(at);
}

static void run_sum_init(struct run_sum *r, json_t *fp)
{
	json_t *run = json_object_get(fp, "run"), *v;
	size_t i;

	memset(r, 0, sizeof *r);
	v = json_object_get(run, "id");
	r->id = json_is_integer(v) ? (int64_t)json_integer_value(v) : 0;
	r->uuid = dupn(jstr(run, "uuid"));
	r->status = dupn(jstr(run, "status"));
	r->profile = dupn(jstr(run, "profile"));
	r->version = dupn(jstr(run, "gpuvet_version"));
	r->host = dupn(jstr(run, "hostname"));
	r->provider = dupn(jstr(run, "provider"));
	r->itype = dupn(jstr(run, "instance_type"));
	r->region = dupn(jstr(run, "region"));
	r->gpu_model = dupn(jstr(run, "gpu_model"));
	r->started = dupn(jstr(run, "started_at"));
	v = json_object_get(run, "gpu_count");
	r->gpu_count = json_is_integer(v) ? (int)json_integer_value(v) : 0;
	report_sum_init_run(r);

	json_array_foreach(json_object_get(fp, "metrics"), i, v) {
		json_t *g = json_object_get(v, "gpu");
		if (json_is_integer(g) && json_integer_value(g) == -1)
			report_sum_add_metric(r, jstr(v, "name"), jnum(v, "value"));
	}
	json_array_foreach(json_object_get(fp, "benches"), i, v)
		report_sum_add_bench(r, jstr(v, "status"));
	json_array_foreach(json_object_get(fp, "flags"), i, v)
		report_sum_add_flag(r, jstr(v, "code"), jstr(v, "severity"));
	json_array_foreach(json_object_get(fp, "verdicts"), i, v)
		report_sum_add_verdict(r, jstr(v, "verdict"), jstr(v, "policy"), jstr(v, "at"));
}

void report_run_sum_free(struct run_sum *r)
{
	free(r->uuid); free(r->status); free(r->profile); free(r->version); free(r->host);
	free(r->provider); free(r->itype); free(r->region); free(r->gpu_model); free(r->started);
	free(r->sku); free(r->verdict); free(r->policy); free(r->verdict_at); free(r->flags);
	json_decref(r->fp);
}

/* ---- which runs get full detail ---- */

/* Orders of run indices (qsort_r with the run array as argument). */
static int cmp_sku_newest(const void *a, const void *b, void *base)
{
	const struct run_sum *runs = base;
	const struct run_sum *x = &runs[*(const size_t *)a], *y = &runs[*(const size_t *)b];
	int c = strcmp(x->sku, y->sku);
	if (c)
		return c;
	c = strcmp(y->started ? y->started : "", x->started ? x->started : "");
	if (c)
		return c;
	return (y->id > x->id) - (y->id < x->id);
}

static int cmp_newest(const void *a, const void *b, void *base)
{
	const struct run_sum *runs = base;
	const struct run_sum *x = &runs[*(const size_t *)a], *y = &runs[*(const size_t *)b];
	int c = strcmp(y->started ? y->started : "", x->started ? x->started : "");
	if (c)
		return c;
	return (y->id > x->id) - (y->id < x->id);
}

/* Marks runs[i].detail under the size rule (html.h); forced ones stay. */
void report_pick_detail(struct run_sum *runs, size_t n, int per_sku, int max)
{
	size_t *idx, *cand, nc = 0, forced = 0;

	if (per_sku <= 0)
		per_sku = REPORT_DETAIL_PER_SKU;
	if (max <= 0)
		max = REPORT_DETAIL_MAX;
	if (n == 0)
		return;
	idx = gv_malloc(n * sizeof *idx);
	cand = gv_malloc(n * sizeof *cand);
	for (size_t i = 0; i < n; i++) {
		idx[i] = i;
		runs[i].forced = runs[i].detail != 0;
		runs[i].charts = runs[i].forced;
		forced += runs[i].forced;
	}
	qsort_r(idx, n, sizeof *idx, cmp_sku_newest, runs);
	for (size_t i = 0, k = 0; i < n; i++) {
		k = (i > 0 && !strcmp(runs[idx[i]].sku, runs[idx[i - 1]].sku)) ? k + 1 : 0;
		if (k < (size_t)per_sku && !runs[idx[i]].detail)
			cand[nc++] = idx[i];
	}
	qsort_r(cand, nc, sizeof *cand, cmp_newest, runs);
	for (size_t i = 0; i < nc && forced + i < (size_t)max; i++)
		runs[cand[i]].detail = 1;
	/* charts: the newest detailed run of each instance type */
	for (size_t i = 0, k = 0; i < n; i++) {
		k = (i > 0 && !strcmp(runs[idx[i]].sku, runs[idx[i - 1]].sku)) ? k : 0;
		if (runs[idx[i]].detail && k < REPORT_CHARTS_PER_SKU && !runs[idx[i]].forced) {
			runs[idx[i]].charts = 1;
			k++;
		}
	}
	free(idx);
	free(cand);
}


static void headline(FILE *f, const struct run_sum *r);

/* ---- page frame ---- */

static void page_head(FILE *f, const struct rdoc *d, const struct run_sum *top)
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
	headline(f, top);
	fprintf(f, "<p>gpuvet report, generated %s by gpuvet %s from ", d->generated_at, GPUVET_VERSION);
	if (d->runs_in_store && d->runs_in_store != d->n)
		fprintf(f, "%zu of the store's %zu runs", d->n, d->runs_in_store);
	else
		fprintf(f, "%zu run%s", d->n, d->n == 1 ? "" : "s");
	fputs("</p></header>\n<nav><a href=\"#answer\">This machine</a><a href=\"#charts\">Perf per dollar</a>"
	      "<a href=\"#summary\">Summary</a><a href=\"#ranking\">Ranking</a><a href=\"#runs\">Runs</a>"
	      "<a href=\"#detail\">Run detail</a><a href=\"#provenance\">Provenance</a></nav>\n<main>\n", f);
}

static void page_tail(FILE *f)
{
	fprintf(f, "</main>\n<script>%s</script>\n</body>\n</html>\n", REPORT_JS);
}

/* ---- summary ---- */

struct flag_count {
	char code[48];
	int sev, runs;
	int64_t latest_detail;   /* a run with detail that has the flag, 0 if none */
	size_t last_run;         /* index of the last run counted, to count each run once */
};

static int cmp_flag_count(const void *a, const void *b)
{
	const struct flag_count *x = a, *y = b;
	if (x->sev != y->sev)
		return x->sev - y->sev;
	if (x->runs != y->runs)
		return y->runs - x->runs;
	return strcmp(x->code, y->code);
}

static size_t count_flags(const struct rdoc *d, struct flag_count *fc, size_t max)
{
	size_t nfc = 0;

	for (size_t i = 0; i < d->n; i++) {
		const char *p = d->runs[i].flags;
		while (p && *p) {
			const char *sp = strchr(p, ' '), *colon;
			size_t len = sp ? (size_t)(sp - p) : strlen(p), cl;
			char code[48];
			int sev = 2;
			size_t k;

			colon = memchr(p, ':', len);
			cl = colon ? (size_t)(colon - p) : len;
			if (cl >= sizeof code)
				cl = sizeof code - 1;
			memcpy(code, p, cl);
			code[cl] = 0;
			if (colon)
				sev = (int)colon[1] == 'c' ? 0 : colon[1] == 'w' ? 1 : 2;
			for (k = 0; k < nfc; k++)
				if (!strcmp(fc[k].code, code))
					break;
			if (k == nfc && nfc < max) {
				memset(&fc[nfc], 0, sizeof fc[nfc]);
				gv_strlcpy(fc[nfc].code, code, sizeof fc[nfc].code);
				fc[nfc].sev = sev;
				fc[nfc].last_run = (size_t)-1;
				nfc++;
			}
			if (k < nfc) {
				/* count each run once per code */
				if (fc[k].last_run != i) {
					fc[k].last_run = i;
					fc[k].runs++;
					if (d->runs[i].detail)
						fc[k].latest_detail = d->runs[i].id;
				}
				if (sev < fc[k].sev)
					fc[k].sev = sev;
			}
			p = sp ? sp + 1 : NULL;
		}
	}
	qsort(fc, nfc, sizeof *fc, cmp_flag_count);
	return nfc;
}

static void section_summary(FILE *f, const struct rdoc *d)
{
	int verd[4] = { 0 }, incomplete = 0, synthetic = 0;
	size_t nsku = 0, *idx, nfc;
	struct flag_count fc[64];

	for (size_t i = 0; i < d->n; i++) {
		const char *v = d->runs[i].verdict;
		verd[!v ? 3 : !strcmp(v, "accept") ? 0 : !strcmp(v, "reject") ? 1 : 2]++;
		incomplete += d->runs[i].status && strcmp(d->runs[i].status, "complete") != 0;
		synthetic += d->runs[i].host && strstr(d->runs[i].host, "synthetic") != NULL;
	}
	fputs("<section id=\"summary\"><h2>Summary</h2>\n", f);
	if (synthetic)
		fprintf(f, "<p class=\"demo\"><b>Synthetic demo data:</b> %d of these runs are labelled "
			   "synthetic in their host name; their numbers are not measurements.</p>\n", synthetic);
	/* group by instance type */
	idx = gv_malloc((d->n ? d->n : 1) * sizeof *idx);
	for (size_t i = 0; i < d->n; i++)
		idx[i] = i;
	qsort_r(idx, d->n, sizeof *idx, cmp_sku_newest, d->runs);
	for (size_t i = 0; i < d->n; i++)
		nsku += i == 0 || strcmp(d->runs[idx[i]].sku, d->runs[idx[i - 1]].sku) != 0;

	fprintf(f, "<div class=\"cards\"><div class=\"card\"><b>%zu</b>runs</div>"
		   "<div class=\"card\"><b>%zu</b>instance types</div>"
		   "<div class=\"card\"><b>%d</b>accepted</div><div class=\"card\"><b>%d</b>rejected</div>"
		   "<div class=\"card\"><b>%d</b>unmeasurable</div><div class=\"card\"><b>%d</b>not gated</div>",
		d->n, nsku, verd[0], verd[1], verd[2], verd[3]);
	if (incomplete)
		fprintf(f, "<div class=\"card\"><b>%d</b>incomplete</div>", incomplete);
	fputs("</div>\n", f);
	nfc = count_flags(d, fc, sizeof fc / sizeof fc[0]);
	fputs("<h3>Flags at a glance</h3>\n", f);
	if (nfc == 0) {
		fputs("<p>No run raised a flag.</p>\n", f);
	} else {
		fputs("<table class=\"sortable\" id=\"flags\"><thead><tr><th>flag</th><th>worst severity</th>"
		      "<th>runs</th><th>example</th></tr></thead><tbody>\n", f);
		for (size_t k = 0; k < nfc; k++) {
			fprintf(f, "<tr><td><code>");
			html_esc(f, fc[k].code);
			fprintf(f, "</code></td><td class=\"%s\">%s</td><td class=n>%d</td><td>",
				SEV_NAME[fc[k].sev], SEV_NAME[fc[k].sev], fc[k].runs);
			if (fc[k].latest_detail > 0)
				fprintf(f, "<a href=\"#run-%lld\">run %lld</a>", (long long)fc[k].latest_detail,
					(long long)fc[k].latest_detail);
			else
				fputs("\xE2\x80\x94", f);
			fputs("</td></tr>\n", f);
		}
		fputs("</tbody></table>\n", f);
	}

	fputs("<h3>Instance types</h3>\n<div class=\"scroll\"><table class=\"sortable\" id=\"skus\"><thead><tr>"
	      "<th>provider</th><th>instance type</th><th>region</th><th>GPUs</th><th>runs</th>"
	      "<th>accepted</th><th>rejected</th><th>with critical flags</th>"
	      "<th>median BF16 GEMM <small>TFLOP/s</small></th><th>latest run</th></tr></thead><tbody>\n", f);
	for (size_t i = 0; i < d->n;) {
		size_t j = i, nv = 0;
		int acc = 0, rej = 0, crit = 0;
		double *vals = gv_malloc(d->n * sizeof *vals), med = NAN;
		const struct run_sum *r = &d->runs[idx[i]];
		while (j < d->n && !strcmp(d->runs[idx[j]].sku, r->sku)) {
			const struct run_sum *q = &d->runs[idx[j]];
			acc += q->verdict && !strcmp(q->verdict, "accept");
			rej += q->verdict && !strcmp(q->verdict, "reject");
			crit += q->nflag[0] > 0;
			if (isfinite(q->head[0]))
				vals[nv++] = q->head[0];
			j++;
		}
		if (nv)
			med = gv_median_inplace(vals, nv);
		free(vals);
		fputs("<tr>", f);
		td_text(f, r->provider);
		td_text(f, r->itype);
		td_text(f, r->region);
		fprintf(f, "<td>%d \xC3\x97 ", r->gpu_count);
		html_esc(f, orq(r->gpu_model));
		fputs("</td>", f);
		td_num(f, (double)(j - i), NULL);
		td_num(f, acc, NULL);
		td_num(f, rej, NULL);
		td_num(f, crit, NULL);
		td_num(f, med, NULL);
		td_text(f, r->started);   /* idx is newest first within a SKU */
		fputs("</tr>\n", f);
		i = j;
	}
	fputs("</tbody></table></div>\n</section>\n", f);
	free(idx);
}

/* ---- ranking ---- */

static json_t *rank_row_find(json_t *rk, json_t *row)
{
	const char *p = jstr(row, "provider"), *it = jstr(row, "instance_type"), *rg = jstr(row, "region");
	const char *pf = jstr(row, "profile");
	size_t i;
	json_t *v;

	/* the same SKU, region and profile (judge/rank.c keeps profiles apart) */
	json_array_foreach(json_object_get(rk, "rows"), i, v) {
		const char *p2 = jstr(v, "provider"), *it2 = jstr(v, "instance_type"), *rg2 = jstr(v, "region");
		const char *pf2 = jstr(v, "profile");
		if (!strcmp(p ? p : "", p2 ? p2 : "") && !strcmp(it ? it : "", it2 ? it2 : "") &&
		    !strcmp(rg ? rg : "", rg2 ? rg2 : "") && !strcmp(pf ? pf : "", pf2 ? pf2 : ""))
			return v;
	}
	return NULL;
}

static int is_per_gpu(json_t *rk)
{
	const char *per = jstr(rk, "per");
	return per && !strcmp(per, "gpu");
}

/* A ranking's metric for people: "BF16 GEMM" (its bench's row), the composite's own name otherwise. */
static const char *rank_label(json_t *rk, char *buf, size_t size)
{
	const char *m = jstr(rk, "metric");
	if (m && !strncmp(m, "score.", 6))
		snprintf(buf, size, "%s score", m + 6);
	else
		metric_label(m ? m : "?", buf, size);
	return buf;
}

static void rank_col_head(FILE *f, json_t *rk)
{
	char lab[96];

	fputs("<th>", f);
	html_esc(f, rank_label(rk, lab, sizeof lab));
	fputs(" per $<br><small>", f);
	html_esc(f, market_name(jstr(rk, "market")));
	fputs("</small></th>", f);
}

static void flags_cell(FILE *f, json_t *flags)
{
	size_t i;
	json_t *v;
	int any = 0;

	fputs("<td>", f);
	json_array_foreach(flags, i, v) {
		const char *code = json_is_string(v) ? json_string_value(v) : jstr(v, "code");
		if (!code)
			continue;
		fputs(any++ ? " " : "", f);
		tag(f, "<code>", code, "</code>");
	}
	if (!any)
		fputs("\xE2\x80\x94", f);
	fputs("</td>", f);
}

/* Measured instance types the ranking could not price. */
static void unpriced_note(FILE *f, json_t *rk)
{
	json_t *u = json_object_get(rk, "unpriced"), *v;
	size_t i;

	if (!json_array_size(u))
		return;
	fputs("<p>Measured but not ranked, no ", f);
	html_esc(f, market_name(jstr(rk, "market")));
	fputs(" price: ", f);
	json_array_foreach(u, i, v) {
		fputs(i ? ", " : "", f);
		html_esc(f, orq(jstr(v, "provider")));
		fputs(" ", f);
		html_esc(f, orq(jstr(v, "instance_type")));
		if (json_is_integer(json_object_get(v, "runs"))) {
			fputs(" (", f);
			if (jstr(v, "profile")) {
				html_esc(f, jstr(v, "profile"));
				fputs(", ", f);
			}
			fprintf(f, "%lld run%s)", (long long)json_integer_value(json_object_get(v, "runs")),
				json_integer_value(json_object_get(v, "runs")) == 1 ? "" : "s");
		}
	}
	fputs(".</p>\n", f);
}

/* The ranking with the same metric as r0 for another market or per. */
static json_t *rank_variant(const struct rdoc *d, json_t *r0, const char *market, const char *per)
{
	size_t nrk = json_array_size(d->rankings);
	const char *metric = jstr(r0, "metric");

	for (size_t k = 1; k < nrk; k++) {
		json_t *rk = json_array_get(d->rankings, k);
		const char *m = jstr(rk, "market"), *p = jstr(rk, "per"), *mt = jstr(rk, "metric");
		if (m && p && mt && metric && !strcmp(m, market) && !strcmp(p, per) && !strcmp(mt, metric))
			return rk;
	}
	return NULL;
}

/*
 * The table follows rankings[0] (rank's defaults) row for row.  Per-GPU
 * rankings add value per GPU and price per GPU-hour; their value per
 * dollar equals the per-instance one (both divide by the GPU count), so it
 * is not repeated.  The other per-instance rankings add one value-per-dollar
 * column each.
 */
static void section_ranking(FILE *f, const struct rdoc *d)
{
	json_t *r0 = json_array_get(d->rankings, 0), *row, *spot, *gpu_od;
	size_t i, nrk = json_array_size(d->rankings);
	const char *m0;

	fputs("<section id=\"ranking\"><h2>Ranking: performance per dollar</h2>\n", f);
	if (!r0) {
		fputs("<p>No ranking: ", f);
		html_esc(f, d->rank_error ? d->rank_error : "no priced instance type");
		fputs(".</p></section>\n", f);
		return;
	}
	m0 = jstr(r0, "market");
	if (json_array_size(json_object_get(r0, "rows")) == 0) {
		fputs("<p>No ranking: no instance type has both a stored run and a price. Load prices with "
		      "<code>gpuvet prices update</code> or <code>gpuvet prices import FILE</code>.</p>\n", f);
		unpriced_note(f, r0);
		fputs("</section>\n", f);
		return;
	}
	spot = rank_variant(d, r0, "spot", "instance");
	gpu_od = rank_variant(d, r0, m0 ? m0 : "on_demand", "gpu");
	fputs("<p>Ordered as <code>gpuvet rank</code> orders them: <b>", f);
	html_esc(f, jstr(r0, "metric"));
	fputs("</b> per dollar, ", f);
	html_esc(f, market_name(m0));
	fputs(" prices, per ", f);
	html_esc(f, jstr(r0, "per"));
	fputs(". A value is the median over the stored runs of an instance type; value per dollar is the "
	      "value divided by the hourly price (", f);
	html_esc(f, jstr(r0, "unit"));
	fputs(" per USD per instance-hour; per GPU it is the same number, value per GPU over price per "
	      "GPU-hour). Rows marked <span class=\"est\">(estimate)</span> were never measured as that type: "
	      "their value is the median per GPU of stored runs of the same GPU model or, with none, what a healthy "
	      "GPU of the model sustains (never the datasheet peak), as each row says; they are hidden until you "
	      "ask for them.", f);
	{
		json_int_t left = json_integer_value(json_object_get(r0, "runs_left_out"));
		if (left > 0)
			fprintf(f, " %lld run%s with a critical flag %s left out (<code>gpuvet rank --include-flagged</code> "
				   "counts them).", (long long)left, left == 1 ? "" : "s", left == 1 ? "is" : "are");
		else
			fputs(" Runs with a critical flag are left out; none is here.", f);
	}
	fputs("</p>\n", f);
	{
		size_t nest = 0;
		json_array_foreach(json_object_get(r0, "rows"), i, row)
			nest += json_is_true(json_object_get(row, "estimate"));
		/* estimates are hidden until asked for: a checkbox and CSS, so it works without the script */
		if (nest)
			fprintf(f, "<input type=\"checkbox\" id=\"show-est\"><label class=\"toggle-l\" for=\"show-est\">"
				   "show the %zu estimated row%s (types never measured here)</label>\n", nest, nest == 1 ? "" : "s");
	}
	fputs("<div class=\"scroll\"><table class=\"sortable\" id=\"rank\"><thead><tr><th>#</th><th>provider</th>"
	      "<th>instance type</th><th>region</th><th>GPUs</th><th>runs</th>"
	      "<th>on-demand<br><small>$/h</small></th><th>spot<br><small>$/h</small></th>"
	      "<th>per GPU<br><small>$/GPU-h</small></th><th>", f);
	{
		char lab[96];
		html_esc(f, rank_label(r0, lab, sizeof lab));
	}
	fputs("<br><small>", f);
	html_esc(f, jstr(r0, "unit"));
	fputs("</small></th><th>per GPU<br><small>", f);
	html_esc(f, jstr(r0, "unit"));
	fputs("</small></th>", f);
	for (size_t k = 0; k < nrk; k++) {
		json_t *rk = json_array_get(d->rankings, k);
		if (!is_per_gpu(rk))
			rank_col_head(f, rk);
	}
	fputs("<th>flags</th><th>price source</th></tr></thead><tbody>\n", f);
	json_array_foreach(json_object_get(r0, "rows"), i, row) {
		int est = json_is_true(json_object_get(row, "estimate"));
		json_t *sr = spot ? rank_row_find(spot, row) : NULL, *gr = gpu_od ? rank_row_find(gpu_od, row) : NULL;
		double gc = jnum(row, "gpu_count");
		double od = m0 && !strcmp(m0, "spot") ? NAN : jnum(row, "price_per_hour");

		fprintf(f, "<tr class=\"%s\">", est ? "est" : "m");
		td_num(f, jnum(row, "rank"), NULL);
		td_text(f, jstr(row, "provider"));
		fputs("<td class=\"it\">", f);
		html_esc(f, orq(jstr(row, "instance_type")));
		if (est) {
			fputs(" <span class=\"est\" title=\"", f);
			html_esc(f, orq(jstr(row, "estimate_basis")));
			fputs("\">(estimate)</span>", f);
		}
		fputs("</td>", f);
		td_text(f, jstr(row, "region"));
		fprintf(f, "<td>%.0f \xC3\x97 ", isfinite(gc) ? gc : 0.0);
		html_esc(f, orq(jstr(row, "gpu_model")));
		fputs("</td>", f);
		/* runs of one profile, never mixed (judge/rank.c): "4 quick" */
		if (jstr(row, "profile")) {
			fprintf(f, "<td class=n data-v=\"%.0f\">%.0f ", jnum(row, "runs"), jnum(row, "runs"));
			html_esc(f, jstr(row, "profile"));
			fputs("</td>", f);
		} else {
			td_num(f, jnum(row, "runs"), NULL);
		}
		td_num(f, od, NULL);
		td_num(f, sr ? jnum(sr, "price_per_hour") : NAN, NULL);
		td_num(f, gr ? jnum(gr, "price_per_hour") : NAN, NULL);
		td_num(f, jnum(row, "value"), est ? " (est.)" : NULL);
		td_num(f, gr ? jnum(gr, "value") : NAN, est ? " (est.)" : NULL);
		for (size_t k = 0; k < nrk; k++) {
			json_t *rk = json_array_get(d->rankings, k), *o;
			if (is_per_gpu(rk))
				continue;
			o = k == 0 ? row : rank_row_find(rk, row);
			td_num(f, o ? jnum(o, "value_per_dollar") : NAN, NULL);
		}
		flags_cell(f, json_object_get(row, "flags"));
		fputs("<td><small>", f);
		html_esc(f, orq(jstr(row, "price_source")));
		if (jstr(row, "price_captured_at")) {
			fputs(", ", f);
			html_esc(f, jstr(row, "price_captured_at"));
		}
		fputs("</small></td></tr>\n", f);
	}
	fputs("</tbody></table></div>\n", f);
	unpriced_note(f, r0);
	fputs("</section>\n", f);
}

/* Is row the instance type of run r? */
static int row_is_run(json_t *row, const struct run_sum *r)
{
	const char *p = jstr(row, "provider"), *it = jstr(row, "instance_type");
	return r && p && it && r->provider && r->itype && !strcmp(p, r->provider) && !strcmp(it, r->itype);
}

/* One bar chart of a ranking's measured rows; 0 when it has none with a value. */
static int bars_one(FILE *f, json_t *rk, const struct run_sum *top, int color)
{
	json_t *rows = json_object_get(rk, "rows"), *row;
	size_t n = json_array_size(rows), nb = 0, i, more = 0, cap = n < 25 ? n + 1 : 25;
	struct svg_bar *bars = gv_calloc(cap, sizeof *bars);
	char **labels = gv_calloc(cap, sizeof *labels), lab[96], *title, *unit;
	int any = 0;

	json_array_foreach(rows, i, row) {
		const char *rg = jstr(row, "region");
		double v = jnum(row, "value_per_dollar");
		if (json_is_true(json_object_get(row, "estimate")))
			continue;   /* measured types only: estimates are rows of the table */
		if (nb == 25) {
			more++;
			continue;
		}
		labels[nb] = gv_asprintf("%s %s%s%s%s", orq(jstr(row, "provider")), orq(jstr(row, "instance_type")),
					 rg && *rg ? " " : "", rg && *rg ? rg : "", row_is_run(row, top) ? " (this machine)" : "");
		/* this machine's type in black, the others in the chart's colour */
		bars[nb] = (struct svg_bar){ labels[nb], v, row_is_run(row, top) ? 6 : color, 0 };
		any |= isfinite(v) && v > 0;
		nb++;
	}
	if (any) {
		title = gv_asprintf("%s per dollar, %s prices%s", rank_label(rk, lab, sizeof lab),
				    market_name(jstr(rk, "market")), more ? " (top 25)" : "");
		unit = jstr(rk, "value_per_dollar_unit")
			       ? gv_asprintf("%s %s", orq(jstr(rk, "unit")), jstr(rk, "value_per_dollar_unit"))
			       : gv_asprintf("%s per USD per hour", orq(jstr(rk, "unit")));
		svg_bar_chart(f, title, unit, bars, nb, 640);
		free(title);
		free(unit);
	}
	for (i = 0; i < nb; i++)
		free(labels[i]);
	free(labels);
	free(bars);
	return any;
}

/* The answer to "which type gives the most per dollar": the best measured type; estimates only fill the table. */
static void best_measured(FILE *f, const struct rdoc *d)
{
	json_t *r0 = json_array_get(d->rankings, 0), *top = NULL, *row;
	size_t ri;

	json_array_foreach(json_object_get(r0, "rows"), ri, row) {
		if (!json_is_true(json_object_get(row, "estimate"))) {
			top = row;
			break;
		}
	}
	if (top) {
		char buf[64];
		fmt_val(jnum(top, "value_per_dollar"), buf, sizeof buf);
		fputs("<p class=\"best\">Most per dollar among measured types (", f);
		html_esc(f, jstr(r0, "metric"));
		fputs(", ", f);
		html_esc(f, market_name(jstr(r0, "market")));
		fputs(" prices): <b>", f);
		html_esc(f, jstr(top, "provider"));
		fputs(" ", f);
		html_esc(f, jstr(top, "instance_type"));
		fputs("</b>", f);
		if (jstr(top, "region") && *jstr(top, "region")) {
			fputs(" in ", f);
			html_esc(f, jstr(top, "region"));
		}
		fprintf(f, ", %s ", buf);
		html_esc(f, jstr(r0, "unit"));
		fputs(" per USD per hour", f);
		fputs(".</p>\n", f);
	}

}

static void section_bars(FILE *f, const struct rdoc *d, const struct run_sum *top)
{
	size_t nrk = json_array_size(d->rankings), charts = 0;

	fputs("<section id=\"charts\"><h2>Performance per dollar, measured instance types</h2>\n", f);
	if (!nrk) {
		fputs("<p>No ranking, so no chart", f);
		if (d->rank_error) {
			fputs(": ", f);
			html_esc(f, d->rank_error);
		}
		fputs(".</p></section>\n", f);
		return;
	}
	best_measured(f, d);
	fputs("<p>Higher is better. Only types measured by a stored run; estimates are rows of the "
	      "<a href=\"#ranking\">ranking</a>, hidden by default.", f);
	if (top && top->itype && *top->itype)
		fputs(" This machine's type is drawn in black.", f);
	fputs("</p>\n", f);
	unpriced_note(f, json_array_get(d->rankings, 0));
	fputs("<div class=\"charts\">\n", f);
	for (size_t k = 0; k < nrk && charts < 10; k++) {
		json_t *rk = json_array_get(d->rankings, k);
		if (is_per_gpu(rk))
			continue;   /* same value per dollar as per instance */
		charts += (size_t)bars_one(f, rk, top, (int)charts);
	}
	fputs("</div>\n</section>\n", f);
}

/* ---- the runs table ---- */

/* An ISO time that may wrap between date and time (the text stays the same). */
static void started_cell(FILE *f, const char *t)
{
	const char *T = t ? strchr(t, 'T') : NULL;

	fputs("<td>", f);
	if (T) {
		html_esc_n(f, t, (size_t)(T - t));
		fputs("<wbr>", f);
		html_esc(f, T);
	} else {
		html_esc(f, orq(t));
	}
	fputs("</td>", f);
}

static void section_runs(FILE *f, const struct rdoc *d)
{
	fputs("<section id=\"runs\"><h2>Runs</h2>\n<p>Every run, newest last. Runs with a link have full detail "
	      "below: the newest runs of each instance type (", f);
	fputs("see <a href=\"#detail\">Run detail</a>); the figures here are instance-level headline metrics.</p>\n", f);
	fputs("<div class=\"scroll\"><table class=\"sortable\" id=\"runlist\"><thead><tr><th>run</th><th>started</th>"
	      "<th>host</th><th>instance <small>provider type region</small></th><th>GPUs</th>"
	      "<th>verdict</th><th>flags</th>", f);
	for (size_t h = 0; h < N_HEAD; h++) {
		const struct metric_info *mi = metric_info_find(report_head[h]);
		char label[96];
		fprintf(f, "<th>%s <small>%s</small></th>", metric_label(report_head[h], label, sizeof label), mi ? mi->unit : "");
	}
	fputs("<th>benches<br><small>ok/skip/fail</small></th></tr></thead><tbody>\n", f);
	size_t unlisted = 0;
	for (size_t i = 0; i < d->n; i++) {
		const struct run_sum *r = &d->runs[i];
		if (r->unlisted) {
			unlisted++;
			continue;
		}
		if (r->detail)
			fprintf(f, "<tr><td class=n><a href=\"#run-%lld\">%lld</a></td>", (long long)r->id, (long long)r->id);
		else
			fprintf(f, "<tr><td class=n>%lld</td>", (long long)r->id);
		started_cell(f, r->started);
		td_text(f, r->host);
		fputs("<td>", f);
		html_esc(f, orq(r->provider));
		fputs(" ", f);
		html_esc(f, orq(r->itype));
		if (r->region && *r->region) {
			fputs(" <small>", f);
			html_esc(f, r->region);
			fputs("</small>", f);
		}
		fprintf(f, "</td><td>%d \xC3\x97 ", r->gpu_count);
		html_esc(f, orq(r->gpu_model));
		fputs("</td><td>", f);
		badge(f, r->verdict);
		if (r->status && strcmp(r->status, "complete")) {
			fputs(" ", f);
			badge(f, r->status);
		}
		fputs("</td><td>", f);
		if (r->flags) {
			const char *p = r->flags;
			while (*p) {
				const char *sp = strchr(p, ' '), *colon;
				size_t len = sp ? (size_t)(sp - p) : strlen(p);
				colon = memchr(p, ':', len);
				fprintf(f, "<code class=\"%s\">", colon ? SEV_NAME[colon[1] == 'c' ? 0 : colon[1] == 'w' ? 1 : 2]
									: "info");
				html_esc_n(f, p, colon ? (size_t)(colon - p) : len);
				fputs("</code> ", f);
				p = sp ? sp + 1 : p + len;
			}
		} else {
			fputs("\xE2\x80\x94", f);
		}
		fputs("</td>", f);
		for (size_t h = 0; h < N_HEAD; h++)
			td_head(f, report_head[h], r->head[h]);
		fprintf(f, "<td class=n data-v=\"%d\">%d/%d/%d</td></tr>\n", r->nb_ok, r->nb_ok, r->nb_skip,
			r->nb_fail);
	}
	fputs("</tbody></table></div>\n", f);
	if (unlisted)
		fprintf(f, "<p class=\"demo\" id=\"runs-left-out\">%zu more runs left out of this table to keep the file "
			   "small (the summary and the rankings count them): it lists the detailed, the newest and the "
			   "flagged runs, at most %d. <code>gpuvet results list</code> lists every run.</p>\n",
			unlisted, REPORT_ROWS_MAX);
	fputs("</section>\n", f);
}

/* ---- per-run detail ---- */

static void scalar_text(FILE *f, json_t *v)
{
	char buf[64];

	if (json_is_string(v))
		html_esc(f, json_string_value(v));
	else if (json_is_integer(v))
		fprintf(f, "%lld", (long long)json_integer_value(v));
	else if (json_is_real(v)) {
		fmt_val(json_real_value(v), buf, sizeof buf);
		fputs(buf, f);
	} else if (json_is_true(v))
		fputs("yes", f);
	else if (json_is_false(v))
		fputs("no", f);
	else if (json_is_null(v) || !v)
		fputs("\xE2\x80\x94", f);
	else
		json_human(f, NULL, v, 1);
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
			json_human(f, NULL, o, 0);
			fputs("</td></tr>\n", f);
		}
		fputs("</tbody></table></div>\n", f);
		return;
	}
	fputs("<div class=\"scroll\"><table><thead><tr>", f);
	for (size_t c = 0; c < nc; c++)
		tag(f, "<th>", cols[c], "</th>");
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
			tag(f, "<tr><th>", k, "</th><td>");
			scalar_text(f, v);
			fputs("</td></tr>\n", f);
		}
	}
	fputs("</tbody></table>\n", f);
	json_object_foreach(inv, k, v) {
		if (is_object_array(v)) {
			tag(f, "<h4>", k, "</h4>\n");
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

/* Percent of peak for a metric: a stored companion metric, else gpu_pct_of_peak() for GEMM (common/gpus.h). */
static double pct_of_peak(json_t *metrics, json_t *m, const char *gpu_model, int gpu_count, int *computed)
{
	const char *name = jstr(m, "name");
	json_int_t gpu = json_integer_value(json_object_get(m, "gpu"));
	const char *last = name ? strrchr(name, '.') : NULL, *second;
	char want[2][160];
	size_t i;
	json_t *o;

	*computed = 0;
	if (!name || !last || strstr(name, "pct"))
		return NAN;
	snprintf(want[0], sizeof want[0], "%.*s.pct_of_peak", (int)(last - name), name);
	second = strchr(name, '.');
	second = second ? strchr(second + 1, '.') : NULL;
	if (second)
		snprintf(want[1], sizeof want[1], "%.*s.pct_of_link", (int)(second - name), name);
	else
		want[1][0] = 0;
	json_array_foreach(metrics, i, o) {
		const char *n2 = jstr(o, "name");
		if (!n2 || json_integer_value(json_object_get(o, "gpu")) != gpu)
			continue;
		if (!strcmp(n2, want[0]) || (want[1][0] && !strcmp(n2, want[1])))
			return jnum(o, "value");
	}
	/* the harness's rule (common/gpus.h): the instance peak counts the GPUs the bench loaded */
	json_int_t loaded = json_integer_value(json_object_get(json_object_get(m, "params"), "gpus"));
	char dt[16];
	double pct, peak;
	if (gpu_model && !gpu_pct_of_peak(gpu_ref_find(gpu_model), name, (int)gpu, jnum(m, "value"),
					  loaded > 0 && loaded < 1 << 20 ? (int)loaded : 0, gpu_count, dt, &pct, &peak)) {
		*computed = 1;
		return pct;
	}
	return NAN;
}

static void metrics_table(FILE *f, json_t *fp, const struct run_sum *r)
{
	json_t *metrics = json_object_get(fp, "metrics"), *m;
	size_t i;
	char id[48];

	if (json_array_size(metrics) == 0) {
		fputs("<p class=\"muted\">No metrics.</p>\n", f);
		return;
	}
	snprintf(id, sizeof id, "metrics-%lld", (long long)r->id);
	fprintf(f, "<div class=\"scroll\"><table class=\"sortable\" id=\"%s\"><thead><tr><th>metric</th><th>GPU</th>"
		   "<th>value</th><th>unit</th><th>%% of peak</th><th>parameters</th></tr></thead><tbody>\n", id);
	json_array_foreach(metrics, i, m) {
		json_int_t gpu = json_integer_value(json_object_get(m, "gpu"));
		int computed;
		if (!flags_metric_is_measurement(jstr(m, "name"), json_object_get(m, "params")))
			continue; /* an all-reduce of one GPU: absent, not 0 */
		double pct = pct_of_peak(metrics, m, r->gpu_model, r->gpu_count, &computed);
		fputs("<tr>", f);
		tag(f, "<td><code>", jstr(m, "name"), "</code></td>");
		if (gpu < 0)
			fputs("<td data-v=\"-1\">instance</td>", f);
		else
			fprintf(f, "<td class=n>%lld</td>", (long long)gpu);
		td_head(f, jstr(m, "name"), jnum(m, "value"));
		td_text(f, jstr(m, "unit"));
		td_num(f, pct, computed ? " (ref.)" : NULL);
		fputs("<td class=\"ev\">", f);
		json_human(f, NULL, json_object_get(m, "params"), 0);
		fputs("</td></tr>\n", f);
	}
	fputs("</tbody></table></div>\n", f);
}

/* Opens the table of fp's array key with its header row; or writes empty_html and returns 0 when it is empty. */
static int table_open(FILE *f, json_t *fp, const char *key, const char *empty_html, const char *head_cells)
{
	if (json_array_size(json_object_get(fp, key)) == 0) {
		fputs(empty_html, f);
		return 0;
	}
	fprintf(f, "<table><thead><tr>%s</tr></thead><tbody>\n", head_cells);
	return 1;
}

static void benches_table(FILE *f, json_t *fp)
{
	json_t *b;
	size_t i;

	if (!table_open(f, fp, "benches", "<p class=\"muted\">No bench recorded.</p>\n",
			"<th>bench</th><th>status</th><th>reason</th><th>duration</th>"))
		return;
	json_array_foreach(json_object_get(fp, "benches"), i, b) {
		const char *st = jstr(b, "status");
		fputs("<tr>", f);
		td_text(f, jstr(b, "name"));
		fprintf(f, "<td class=\"%s\">", st && !strcmp(st, "ok") ? "" : st && !strcmp(st, "skipped") ? "info" : "critical");
		html_esc(f, orq(st));
		fputs("</td>", f);
		td_text(f, jstr(b, "reason"));
		td_num(f, jnum(b, "duration_s"), " s");
		fputs("</tr>\n", f);
	}
	fputs("</tbody></table>\n", f);
}

/* What to do about a flag: stored, else computed by the CLI's function (d->remedy); an info flag needs nothing. */
static const char *flag_remedy(const struct rdoc *d, json_t *fl, char *buf, size_t len)
{
	int si = sev_index(jstr(fl, "severity"));
	const char *rem = jstr(fl, "remediation");
	json_t *g = json_object_get(json_object_get(fl, "evidence"), "gpu");

	if (si == 2)   /* an info flag is a normal state (at the power cap under full load): nothing to fix */
		return "nothing: information, not a fault";
	if (!rem && d->remedy)
		rem = d->remedy(jstr(fl, "code"), SEV_NAME[si], json_is_integer(g) ? (int)json_integer_value(g) : -1,
				buf, len);
	return rem;
}

static void flags_table(FILE *f, const struct rdoc *d, json_t *fp)
{
	char buf[512];

	json_t *fl;
	size_t i;

	if (!table_open(f, fp, "flags", "<p>No flags.</p>\n",
			"<th>flag</th><th>severity</th><th>message</th><th>what to do</th><th>evidence</th>"))
		return;
	json_array_foreach(json_object_get(fp, "flags"), i, fl) {
		int si = sev_index(jstr(fl, "severity"));
		fputs("<tr>", f);
		tag(f, "<td><code>", jstr(fl, "code"), "</code></td>");
		fprintf(f, "<td class=\"%s\">%s</td>", SEV_NAME[si], SEV_NAME[si]);
		td_text(f, jstr(fl, "message"));
		td_text(f, flag_remedy(d, fl, buf, sizeof buf));
		fputs("<td class=\"ev\">", f);
		json_human(f, NULL, json_object_get(fl, "evidence"), 0);
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
			json_human(f, NULL, n, 0);
		fputs("</li>", f);
	}
	fputs("</ul>", f);
}

static void verdict_detail(FILE *f, json_t *det)
{
	json_t *passed = json_object_get(det, "passed"), *notes = json_object_get(det, "notes");

	if (!json_is_array(passed) && !json_is_array(notes)) {
		json_human(f, NULL, det, 0);
		return;
	}
	fprintf(f, "%zu check%s passed", json_array_size(passed), json_array_size(passed) == 1 ? "" : "s");
	if (json_array_size(notes)) {
		fputs("; notes:", f);
		human_list(f, notes);
	}
}

static void verdicts_block(FILE *f, json_t *fp)
{
	json_t *v;
	size_t i;

	if (!table_open(f, fp, "verdicts", "<p>Not gated: no acceptance verdict stored (<code>gpuvet accept</code>).</p>\n",
			"<th>verdict</th><th>policy</th><th>at</th><th>reasons</th>"))
		return;
	json_array_foreach(json_object_get(fp, "verdicts"), i, v) {
		json_t *reasons = json_object_get(json_object_get(v, "detail"), "reasons");
		fputs("<tr><td>", f);
		badge(f, jstr(v, "verdict"));
		fputs("</td>", f);
		td_text(f, jstr(v, "policy"));
		td_text(f, jstr(v, "at"));
		fputs("<td>", f);
		if (json_array_size(reasons)) {
			human_list(f, reasons);
		} else {
			verdict_detail(f, json_object_get(v, "detail"));
		}
		fputs("</td></tr>\n", f);
	}
	fputs("</tbody></table>\n", f);
}

static json_t *metric_row(json_t *fp, const char *name, json_int_t gpu)
{
	json_t *m;
	size_t i;

	json_array_foreach(json_object_get(fp, "metrics"), i, m) {
		const char *n = jstr(m, "name");
		if (n && !strcmp(n, name) && json_integer_value(json_object_get(m, "gpu")) == gpu)
			return m;
	}
	return NULL;
}

/* GPUs a GEMM-like instance row counts: the bench's own "gpus" param, else the run's. */
static int row_gpus(json_t *m, const struct run_sum *r)
{
	json_int_t g = json_integer_value(json_object_get(json_object_get(m, "params"), "gpus"));
	return g > 0 && g < 1 << 20 ? (int)g : r->gpu_count > 0 ? r->gpu_count : 1;
}

/* ---- charts of a run's samples ---- */

struct series_buf {
	char *label;
	double *x, *y;
	size_t n;
	int gpu;
};

struct pt { double x, y; };

static int cmp_pt(const void *a, const void *b)
{
	const struct pt *p = a, *q = b;
	return (p->x > q->x) - (p->x < q->x);
}

/* The points of one samples entry, x ascending. */
static size_t load_points(json_t *sample, double **xs, double **ys)
{
	json_t *pts = json_object_get(sample, "points"), *p;
	size_t n = json_array_size(pts), k = 0, i;
	struct pt *tmp = gv_malloc((n ? n : 1) * sizeof *tmp);
	int sorted = 1;

	json_array_foreach(pts, i, p) {
		json_t *x = json_array_get(p, 0), *y = json_array_get(p, 1);
		if (!json_is_number(x) || !json_is_number(y))
			continue;
		tmp[k].x = json_number_value(x);
		tmp[k].y = json_number_value(y);
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

/* Collects every samples entry whose series matches (exact, or prefix+suffix when suffix given). */
static size_t collect(json_t *fp, const char *prefix, const char *suffix, struct series_buf *out, size_t max)
{
	json_t *s;
	size_t i, n = 0;

	json_array_foreach(json_object_get(fp, "samples"), i, s) {
		const char *name = jstr(s, "series");
		size_t ln, lp = strlen(prefix), ls = suffix ? strlen(suffix) : 0;
		if (!name || n >= max)
			continue;
		ln = strlen(name);
		if (suffix ? (ln < lp + ls || strncmp(name, prefix, lp) || strcmp(name + ln - ls, suffix))
			   : strcmp(name, prefix))
			continue;
		out[n].label = gv_strdup(name);
		out[n].gpu = (int)json_integer_value(json_object_get(s, "gpu"));
		out[n].n = load_points(s, &out[n].x, &out[n].y);
		n++;
	}
	return n;
}

static void series_free(struct series_buf *b, size_t n)
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
enum { BAND_THERMAL, BAND_POWER, BAND_HW, BAND_XID, BAND_CAP, N_BAND_KINDS };
static const char *const BAND_NAMES[N_BAND_KINDS] = {
	"thermal throttling", "power throttling (limit under TDP, or clocks held under the cap)",
	"hardware slowdown", "XID event", "at power cap (normal at full load)",
};
static const double BAND_OPACITY[N_BAND_KINDS] = { 0.3, 0.3, 0.3, 0.5, 0.08 };

struct bands {
	struct svg_band *b;
	size_t n, cap;
};

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
static void throttle_bands(json_t *fp, struct bands *bs, double tdp)
{
	struct series_buf sb[64], pw[64], lim[64];
	size_t n = collect(fp, "soak.clock_events.mask", NULL, sb, 64);
	size_t npw = collect(fp, "soak.power.w", NULL, pw, 64), nlim = collect(fp, "soak.power_limit.w", NULL, lim, 64);

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
	series_free(sb, n);
	series_free(pw, npw);
	series_free(lim, nlim);
	if (n == 0) {
		/* NVML's violation counters cannot tell a normal cap from a low one */
		static const struct { const char *series; int kind; } ctr[] = {
			{ "soak.throttle.thermal_s", BAND_THERMAL }, { "soak.throttle.power_s", BAND_CAP },
		};
		for (size_t c = 0; c < 2; c++) {
			size_t k = collect(fp, ctr[c].series, NULL, sb, 64);
			for (size_t s = 0; s < k; s++)
				for (size_t i = 1; i < sb[s].n; i++)
					if (sb[s].y[i] > sb[s].y[i - 1])
						band_add(bs, sb[s].x[i - 1], sb[s].x[i], ctr[c].kind);
			series_free(sb, k);
		}
	}
	n = collect(fp, "soak.xid", NULL, sb, 64);
	for (size_t s = 0; s < n; s++)
		for (size_t i = 0; i < sb[s].n; i++)
			band_add(bs, sb[s].x[i], sb[s].x[i] + 1, BAND_XID);
	series_free(sb, n);
	bands_merge(bs);
}

/* One chart of per-GPU lines: each GPU its colour; second series dashed. */
static int soak_chart(FILE *f, json_t *fp, const char *title, const char *ylabel, const char *series,
		      const char *dashed_series, const struct bands *bs, const struct svg_ref *refs, size_t nrefs)
{
	struct series_buf sb[128];
	struct svg_series ss[128];
	size_t n = collect(fp, series, NULL, sb, 64), nd = 0;
	char names[128][32];

	if (n == 0)
		return 0;
	if (dashed_series)
		nd = collect(fp, dashed_series, NULL, sb + n, 64);
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
	series_free(sb, n + nd);
	return 1;
}

/* A curve against size: one colour per series, one line per GPU. */
struct sweep {
	const char *title, *prefix, *suffix, *x_label, *y_label;
	int x_bytes, ylog;
};

static int sweep_chart(FILE *f, json_t *fp, const struct sweep *sw, const struct svg_ref *refs, size_t nrefs)
{
	struct series_buf sb[128];
	struct svg_series ss[128];
	size_t n = collect(fp, sw->prefix, sw->suffix, sb, 128), lp = strlen(sw->prefix), ls = strlen(sw->suffix);
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
	series_free(sb, n);
	return 1;
}

/* The median per GPU of soak.tflops.last_min over the other runs of the same GPU model; NaN when none. */
static double fleet_soak_median(const struct rdoc *d, const struct run_sum *r, size_t *nruns)
{
	size_t cap = d->fleet ? d->n_fleet : d->n, n = 0;
	double *v = gv_malloc((cap ? cap : 1) * sizeof *v), med = NAN;

	for (size_t i = 0; d->fleet && i < d->n_fleet; i++) {
		const struct report_fleet *q = &d->fleet[i];
		if (q->id != r->id && r->gpu_model && !strcmp(q->model, r->gpu_model) && isfinite(q->soak))
			v[n++] = q->soak;
	}
	for (size_t i = 0; !d->fleet && i < d->n; i++) {
		const struct run_sum *q = &d->runs[i];
		if (q->id == r->id || !q->gpu_model || !r->gpu_model || strcmp(q->gpu_model, r->gpu_model) ||
		    q->gpu_count <= 0 || !isfinite(q->head[5]))
			continue;
		v[n++] = q->head[5] / q->gpu_count;   /* report_head[5]: soak.tflops.last_min, an instance sum */
	}
	if (n)
		med = gv_median_inplace(v, n);
	free(v);
	*nruns = n;
	return med;
}

/* The first GPU's object of the inventory, or NULL. */
static json_t *inv_gpu0(json_t *fp)
{
	return json_array_get(json_object_get(json_object_get(fp, "inventory"), "gpus"), 0);
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
static int gemm_chart(FILE *f, const struct run_sum *r, json_t *fp)
{
	static const struct sweep g = {
		"GEMM throughput against size (all GPUs at once)", "gemm.", ".tflops",
		"m = n = k (log scale)", "throughput (TFLOP/s)", 0, 0,
	};
	const struct gpu_ref *ref = r->gpu_model ? gpu_ref_find(r->gpu_model) : NULL;
	const struct gpu_reference *ach = r->gpu_model ? gpu_reference_find(r->gpu_model) : NULL;
	json_t *bf = metric_row(fp, "gemm.bf16.tflops", -1);
	int n = bf ? row_gpus(bf, r) : r->gpu_count > 0 ? r->gpu_count : 1;
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

static void run_charts(FILE *f, const struct rdoc *d, const struct run_sum *r, json_t *fp)
{
	const struct gpu_ref *ref = r->gpu_model ? gpu_ref_find(r->gpu_model) : NULL;
	const struct gpu_reference *ach = r->gpu_model ? gpu_reference_find(r->gpu_model) : NULL;
	json_t *g0 = inv_gpu0(fp);
	struct bands bs = { 0 };
	struct svg_ref tref[2], cref[1], pref[1], bref[2];
	size_t nt = 0, nc = 0, np = 0, nb = 0, nfleet;
	double fleet = fleet_soak_median(d, r, &nfleet), maxsm, gen, width;
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
	maxsm = jnum(json_object_get(g0, "max_clocks_mhz"), "sm");
	if (isfinite(maxsm) && maxsm > 0)
		cref[nc++] = (struct svg_ref){ maxsm, "max SM clock", 2 };
	if (ref && ref->tdp_w > 0)
		pref[np++] = (struct svg_ref){ ref->tdp_w, "model TDP", 2 };
	gen = jnum(json_object_get(g0, "pcie"), "gen_max");
	width = jnum(json_object_get(g0, "pcie"), "width_max");
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

	throttle_bands(fp, &bs, ref ? ref->tdp_w : 0);
	fputs("<div class=\"charts\">\n", f);
	any |= soak_chart(f, fp, "Soak: GEMM throughput per GPU", "throughput (TFLOP/s)", "soak.tflops", NULL, &bs,
			  tref, nt);
	any |= soak_chart(f, fp, "Soak: SM clock (solid) and memory clock (dashed)", "clock (MHz)",
			  "soak.sm_clock.mhz", "soak.mem_clock.mhz", &bs, cref, nc);
	any |= soak_chart(f, fp, "Soak: GPU temperature", "temperature (\xC2\xB0" "C)", "soak.temp.c", NULL, &bs, NULL, 0);
	any |= soak_chart(f, fp, "Soak: board power (solid) and power limit (dashed)", "power (W)",
			  "soak.power.w", "soak.power_limit.w", &bs, pref, np);
	any |= sweep_chart(f, fp, &COPIES, bref, nb);
	json_t *ar = metric_row(fp, "allreduce.algbw.gbps", -1);
	if (!ar || flags_metric_is_measurement("allreduce.algbw.gbps", json_object_get(ar, "params")))
		any |= sweep_chart(f, fp, &NCCL, NULL, 0);
	any |= gemm_chart(f, r, fp);
	fputs("</div>\n", f);
	json_t *bus = metric_row(fp, "allreduce.busbw.gbps", -1);
	const char *tp = jstr(json_object_get(bus ? bus : ar, "params"), "transport");
	if (tp) {   /* what NCCL chose says why the all-reduce is as fast as it is */
		fputs("<p class=\"nccl-transport\">All-reduce transport NCCL chose: <b>", f);
		html_esc(f, tp);
		fputs("</b></p>\n", f);
	}
	if (!any)
		fputs("<p class=\"muted\">No time series or size sweep stored for this run.</p>\n", f);
	free(bs.b);
}

static void run_detail(FILE *f, const struct rdoc *d, const struct run_sum *r, json_t *fp)
{
	fprintf(f, "<section class=\"run\" id=\"run-%lld\"><h3>Run %lld: ", (long long)r->id, (long long)r->id);
	html_esc(f, orq(r->provider));
	fputs(" ", f);
	html_esc(f, orq(r->itype));
	fputs(" ", f);
	html_esc(f, orq(r->region));
	fputs(" ", f);
	badge(f, r->verdict);
	if (r->status && strcmp(r->status, "complete"))
		badge(f, "incomplete");
	fputs("</h3>\n<p>host <b>", f);
	html_esc(f, orq(r->host));
	fputs("</b>, started ", f);
	html_esc(f, orq(r->started));
	fputs(", finished ", f);
	html_esc(f, orq(jstr(json_object_get(fp, "run"), "finished_at")));
	fputs(", profile ", f);
	html_esc(f, orq(r->profile));
	fprintf(f, ", %d \xC3\x97 ", r->gpu_count);
	html_esc(f, orq(r->gpu_model));
	fputs(", gpuvet ", f);
	html_esc(f, orq(r->version));
	fputs(", uuid <code>", f);
	html_esc(f, orq(r->uuid));
	fputs("</code></p>\n<h4>Flags</h4>\n", f);
	flags_table(f, d, fp);
	fputs("<h4>Verdict</h4>\n", f);
	verdicts_block(f, fp);
	if (r->charts) {
		fputs("<h4>Charts</h4>\n", f);
		run_charts(f, d, r, fp);
	} else {
		fprintf(f, "<p class=\"muted\">Charts are drawn for the newest run of each instance type; "
			   "<code>gpuvet report --run %lld</code> draws this run's.</p>\n", (long long)r->id);
	}
	fputs("<h4>Benches</h4>\n", f);
	benches_table(f, fp);
	fputs("<details><summary>Metrics</summary>\n", f);
	metrics_table(f, fp, r);
	fputs("</details>\n<details><summary>Inventory</summary>\n", f);
	inventory_block(f, json_object_get(fp, "inventory"));
	fputs("</details>\n</section>\n", f);
}

/* One run's detail, its fingerprint loaded from the store when not in memory; -1 when it cannot be. */
static int detail_one(FILE *f, const struct rdoc *d, const struct run_sum *r)
{
	json_t *fp;

	if (r->fp) {
		run_detail(f, d, r, r->fp);
		return 0;
	}
	if (store_load_fingerprint(d->store, r->id, &fp)) {
		snprintf(d->load_err, d->load_errlen, "cannot load run %lld: %s", (long long)r->id,
			 store_errmsg(d->store));
		return -1;
	}
	run_detail(f, d, r, fp);
	json_decref(fp);
	return 0;
}

static void section_detail(FILE *f, const struct rdoc *d)
{
	size_t nd = 0, *idx;

	for (size_t i = 0; i < d->n; i++)
		nd += d->runs[i].detail && (d->runs[i].fp || d->store);
	fprintf(f, "<section id=\"detail\"><h2>Run detail</h2>\n<p>%zu of %zu runs in detail, newest first: "
		   "the newest %d of each instance type, at most %d in all, and every run asked for with "
		   "<code>--run</code>. The others are rows of the <a href=\"#runs\">runs table</a>; "
		   "<code>gpuvet report --run ID</code> details any run.</p>\n",
		nd, d->n, REPORT_DETAIL_PER_SKU, REPORT_DETAIL_MAX);
	idx = gv_malloc((d->n ? d->n : 1) * sizeof *idx);
	nd = 0;
	for (size_t i = 0; i < d->n; i++)
		if (d->runs[i].detail && (d->runs[i].fp || d->store))
			idx[nd++] = i;
	qsort_r(idx, nd, sizeof *idx, cmp_newest, d->runs);
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

/* ---- provenance ---- */

/* "provider\x1finstance_type" of every ranked row, for the price list */
static json_t *ranked_skus(json_t *rankings)
{
	json_t *set = json_object(), *rk, *row;
	size_t k, i;
	char key[512];

	json_array_foreach(rankings, k, rk) {
		json_array_foreach(json_object_get(rk, "rows"), i, row) {
			snprintf(key, sizeof key, "%s\x1f%s", orq(jstr(row, "provider")), orq(jstr(row, "instance_type")));
			json_object_set_new(set, key, json_true());
		}
	}
	return set;
}

static void section_provenance(FILE *f, const struct rdoc *d)
{
	size_t i, shown = 0;
	json_t *p, *skus = ranked_skus(d->rankings);
	const char *vers[16];
	char key[512];
	int vcount[16], nv = 0;

	fprintf(f, "<section id=\"provenance\"><h2>Provenance</h2>\n<p>Report generated %s by gpuvet %s.</p>\n",
		d->generated_at, GPUVET_VERSION);
	for (size_t r = 0; r < d->n; r++) {
		const char *v = d->runs[r].version ? d->runs[r].version : "unknown";
		int k;
		for (k = 0; k < nv; k++)
			if (!strcmp(vers[k], v))
				break;
		if (k == nv && nv < 16) {
			vers[nv] = v;
			vcount[nv++] = 0;
		}
		if (k < nv)
			vcount[k]++;
	}
	if (nv) {
		fputs("<p>Runs measured by: ", f);
		for (int k = 0; k < nv; k++) {
			fputs(k ? ", gpuvet " : "gpuvet ", f);
			html_esc(f, vers[k]);
			fprintf(f, " (%d run%s)", vcount[k], vcount[k] == 1 ? "" : "s");
		}
		fputs(".</p>\n", f);
	}
	fputs("<h3>Prices</h3>\n", f);
	if (!json_array_size(d->prices)) {
		fputs("<p>No price in the store", f);
		if (d->prices_error) {
			fputs(": ", f);
			html_esc(f, d->prices_error);
		}
		fputs(". Load the shipped catalog with <code>gpuvet prices update</code> or "
		      "<code>gpuvet prices import FILE</code>.</p>\n", f);
	} else {
		fputs("<p>Each price the ranking could use: where it comes from and when it was captured.</p>\n"
		      "<div class=\"scroll\"><table class=\"sortable\" id=\"prices\"><thead><tr><th>provider</th>"
		      "<th>instance type</th><th>region</th><th>market</th><th>price <small>per hour</small></th>"
		      "<th>currency</th><th>source</th><th>captured</th></tr></thead><tbody>\n", f);
		json_array_foreach(d->prices, i, p) {
			snprintf(key, sizeof key, "%s\x1f%s", orq(jstr(p, "provider")), orq(jstr(p, "instance_type")));
			if (json_object_size(skus) ? !json_object_get(skus, key) : shown >= 500)
				continue;
			fputs("<tr>", f);
			td_text(f, jstr(p, "provider"));
			td_text(f, jstr(p, "instance_type"));
			td_text(f, jstr(p, "region"));
			td_text(f, jstr(p, "market"));
			td_num(f, jnum(p, "price"), NULL);
			td_text(f, jstr(p, "currency"));
			td_text(f, jstr(p, "source"));
			td_text(f, jstr(p, "captured_at"));
			fputs("</tr>\n", f);
			shown++;
		}
		fprintf(f, "</tbody></table></div>\n<p class=\"muted\">%zu of %zu stored prices shown (%s).</p>\n",
			shown, json_array_size(d->prices),
			json_object_size(skus) ? "those of ranked instance types" : "the first 500");
	}
	json_decref(skus);
	if (json_array_size(d->price_sources)) {
		fputs("<h4>Price sources</h4>\n<table><thead><tr><th>source</th><th>provider</th>"
		      "<th>prices captured</th><th>loaded into this store</th>"
		      "<th>status</th><th>rows</th><th>message</th></tr></thead><tbody>\n", f);
		json_array_foreach(d->price_sources, i, p) {
			fputs("<tr>", f);
			td_text(f, jstr(p, "source"));
			td_text(f, jstr(p, "provider"));
			td_text(f, jstr(p, "captured_at") ? jstr(p, "captured_at") : "\xE2\x80\x94");
			td_text(f, jstr(p, "fetched_at"));
			td_text(f, jstr(p, "status"));
			td_num(f, jnum(p, "rows"), NULL);
			td_text(f, jstr(p, "message"));
			fputs("</tr>\n", f);
		}
		fputs("</tbody></table>\n", f);
	}
	fputs("<h3>Reference GPU table</h3>\n<p>Peak figures behind percent of peak "
	      "(dense, boost clock).</p>\n<div class=\"scroll\"><table><thead><tr><th>key</th><th>GPU</th>"
	      "<th>BF16 <small>TFLOP/s</small></th><th>memory bandwidth <small>GB/s</small></th>"
	      "<th>source</th></tr></thead><tbody>\n", f);
	for (size_t g = 0; g < gpu_refs_count; g++) {
		const struct gpu_ref *ref = &gpu_refs[g];
		int used = 0;
		for (size_t r = 0; r < d->n && !used; r++)
			used = d->runs[r].gpu_model && !strcmp(d->runs[r].gpu_model, ref->key);
		if (!used)
			continue;
		fputs("<tr>", f);
		td_text(f, ref->key);
		td_text(f, ref->name);
		td_num(f, ref->peak_tflops[GPU_BF16], NULL);
		td_num(f, ref->mem_bw_gbps, NULL);
		td_text(f, ref->source);
		fputs("</tr>\n", f);
	}
	fputs("</tbody></table></div>\n</section>\n", f);
}

/* ---- the answer: this machine's verdict and health, first ---- */

/* How a run stands, in one word or three, and its CSS class. */
static const char *health_word(const struct run_sum *r, const char **cls)
{
	const char *v = r->verdict;

	*cls = "bad";
	if (v && !strcmp(v, "reject"))
		return "Reject";
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
static size_t answer_targets(const struct rdoc *d, size_t *out, size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < d->n && n < max; i++)
		if (d->runs[i].forced)
			out[n++] = i;
	if (n == 0 && d->n) {
		size_t best = 0;
		for (size_t i = 1; i < d->n; i++)
			if (cmp_newest(&i, &best, d->runs) < 0)
				best = i;
		out[n++] = best;
	}
	qsort_r(out, n, sizeof *out, cmp_newest, d->runs);
	return n;
}

/* "run 3, 1 × H100-SXM on lambda gpu_1x_h100_sxm5 (accepted)" */
static void run_words(FILE *f, const struct run_sum *r)
{
	fprintf(f, "run %lld, %d \xC3\x97 ", (long long)r->id, r->gpu_count);
	html_esc(f, orq(r->gpu_model));
	if (r->itype && *r->itype) {
		fputs(" on ", f);
		html_esc(f, orq(r->provider));
		fputs(" ", f);
		html_esc(f, r->itype);
	} else {
		fputs(" (instance type unknown)", f);
	}
	fprintf(f, " (%s)", verdict_words(r->verdict));
}

static void headline(FILE *f, const struct run_sum *r)
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
		if (!(m = metric_row(fp, name, -1)))
			continue;
		per = jnum(m, "value") / row_gpus(m, r);
		fmt_val(per, b[0], sizeof b[0]);
		fprintf(f, "<li><b>%s matrix multiply</b>: %s TFLOP/s per GPU", k ? "FP16" : "BF16", b[0]);
		double rv;
		enum gpu_ref_kind kind;
		if (ach && !gpu_reference_gemm(ach->key, dts[k], &rv, &kind, NULL)) {
			fmt_val(rv, b[1], sizeof b[1]);
			fprintf(f, ", %.0f %% of the ", 100 * per / rv);
			html_esc(f, r->gpu_model);
			fprintf(f, " reference (%s, %s)", b[1], gpu_ref_kind_name(kind));
		}
		if (ref && ref->peak_tflops[dts[k]] > 0) {
			fmt_val(ref->peak_tflops[dts[k]], b[2], sizeof b[2]);
			fprintf(f, ", %.0f %% of its datasheet peak (%s)", 100 * per / ref->peak_tflops[dts[k]], b[2]);
		}
		fputs(".</li>\n", f);
		return;
	}
}

static void fact_copies(FILE *f, const struct run_sum *r, json_t *fp)
{
	const struct gpu_reference *ach = r->gpu_model ? gpu_reference_find(r->gpu_model) : NULL;
	json_t *m = metric_row(fp, "memcpy.h2d.pinned.gbps", -1), *pl = metric_row(fp, "memcpy.h2d.pct_of_link", -1);
	char b[2][32];
	double v;

	if (!m)
		return;
	v = jnum(m, "value");
	fmt_val(v, b[0], sizeof b[0]);
	fprintf(f, "<li><b>Host-to-GPU copies</b> (pinned): %s GB/s", b[0]);
	if (ach && ach->h2d_gbps > 0) {
		fmt_val(ach->h2d_gbps, b[1], sizeof b[1]);
		fprintf(f, ", %.0f %% of a healthy ", 100 * v / ach->h2d_gbps);
		html_esc(f, r->gpu_model);
		fprintf(f, " (%s)", b[1]);
	}
	if (pl && isfinite(jnum(pl, "value")))
		fprintf(f, ", %.0f %% of the PCIe link it trained at", jnum(pl, "value"));
	fputs(".</li>\n", f);
}

/* Seconds of each band kind (union over GPUs) and the soak's length. */
static void fact_soak(FILE *f, const struct run_sum *r, json_t *fp)
{
	const struct gpu_ref *ref = r->gpu_model ? gpu_ref_find(r->gpu_model) : NULL;
	json_t *a = metric_row(fp, "soak.tflops.first_min", -1), *z = metric_row(fp, "soak.tflops.last_min", -1);
	struct series_buf sb[64];
	struct bands bs = { 0 };
	double secs[N_BAND_KINDS] = { 0 }, span = 0, n = r->gpu_count > 0 ? r->gpu_count : 1;
	size_t ns = collect(fp, "soak.tflops", NULL, sb, 64);
	char b[2][32];

	for (size_t i = 0; i < ns; i++)
		if (sb[i].n && sb[i].x[sb[i].n - 1] > span)
			span = sb[i].x[sb[i].n - 1];
	series_free(sb, ns);
	if (!a && !z && span <= 0)
		return;
	throttle_bands(fp, &bs, ref ? ref->tdp_w : 0);
	for (size_t i = 0; i < bs.n; i++)
		secs[bs.b[i].kind] += bs.b[i].x1 - bs.b[i].x0;
	free(bs.b);
	fprintf(f, "<li><b>Sustained load</b> (%.0f s)", span);
	if (a && z) {
		double x = jnum(a, "value") / n, y = jnum(z, "value") / n;
		fmt_val(x, b[0], sizeof b[0]);
		fmt_val(y, b[1], sizeof b[1]);
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
	return sev_index(jstr(x, "severity")) - sev_index(jstr(y, "severity"));
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
		int si = sev_index(jstr(v[i], "severity"));
		const char *rem = flag_remedy(d, v[i], buf, sizeof buf);
		fprintf(f, "<li><b class=\"%s\">%s</b> <code>", SEV_NAME[si], SEV_NAME[si]);
		html_esc(f, jstr(v[i], "code"));
		fputs("</code> ", f);
		html_esc(f, jstr(v[i], "message"));
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

	json_array_foreach(vs, i, v)
		if (!last || strcmp(orq(jstr(v, "at")), orq(jstr(last, "at"))) >= 0)
			last = v;
	if (!last) {
		fprintf(f, "<p>Not gated: no acceptance verdict stored (<code>gpuvet accept --run %lld</code> "
			   "applies the default policy).</p>\n", (long long)r->id);
		return;
	}
	fputs("<p>", f);
	badge(f, jstr(last, "verdict"));
	fprintf(f, " %s by the policy <b>", verdict_words(jstr(last, "verdict")));
	html_esc(f, orq(jstr(last, "policy")));
	fputs("</b>", f);
	if (jstr(last, "at")) {
		fputs(", ", f);
		html_esc(f, jstr(last, "at"));
	}
	fputs(".</p>\n", f);
	/* the reason in one sentence, as judge/accept.h words it for the CLI too */
	char why[768];
	fputs("<p class=\"why\">Why: ", f);
	html_esc(f, accept_reason_sentence(json_object_get(last, "detail"), jstr(last, "verdict"), why, sizeof why));
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
	html_esc(f, orq(r->provider));
	fputs(" ", f);
	html_esc(f, orq(r->itype));
	if (r->region && *r->region) {
		fputs(" ", f);
		html_esc(f, r->region);
	}
	fputs(", host ", f);
	html_esc(f, orq(r->host));
	fputs(", started ", f);
	html_esc(f, orq(r->started));
	fputs(", profile ", f);
	html_esc(f, orq(r->profile));
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
		const char *m = jstr(rk, "metric"), *mk = jstr(rk, "market"), *p = jstr(rk, "per");
		if (m && !strcmp(m, metric) && mk && jstr(r0, "market") && !strcmp(mk, jstr(r0, "market")) && p &&
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
			html_esc(f, orq(jstr(row, "provider")));
			fputs(" ", f);
			html_esc(f, orq(jstr(row, "instance_type")));
			fmt_val(jnum(row, "value_per_dollar"), buf, sizeof buf);
			fprintf(f, " %s ", buf);
			html_esc(f, orq(jstr(rk, "unit")));
			fputs(" per USD-hour", f);
			if (json_is_true(json_object_get(row, "estimate")))
				fputs(" <span class=\"est\">(estimate)</span>", f);
		}
		fputs("</li>\n", f);
	}
	if (any)
		fputs("</ul>\n", f);
}

static void section_answer(FILE *f, const struct rdoc *d, const size_t *tg, size_t nt)
{
	fputs("<section id=\"answer\">\n", f);
	if (nt == 0)
		fputs("<p>No run in the store: <code>gpuvet run</code> measures this machine.</p>\n", f);
	for (size_t i = 0; i < nt; i++)
		answer_run(f, d, &d->runs[tg[i]], i == 0);
	best_per_workload(f, d);
	fputs("</section>\n", f);
}

/* ---- entry points ---- */

int report_render_doc(const struct rdoc *d, FILE *f)
{
	size_t tg[8], nt = answer_targets(d, tg, 8);

	page_head(f, d, nt ? &d->runs[tg[0]] : NULL);
	section_answer(f, d, tg, nt);
	section_bars(f, d, nt ? &d->runs[tg[0]] : NULL);
	section_summary(f, d);
	section_ranking(f, d);
	section_runs(f, d);
	section_detail(f, d);
	section_provenance(f, d);
	page_tail(f);
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
	for (size_t i = 0; i < d.n; i++) {
		run_sum_init(&d.runs[i], in->fps[i]);
		d.runs[i].fp = json_incref(in->fps[i]);
		d.runs[i].detail = in->detail ? in->detail[i] : 0;
	}
	report_pick_detail(d.runs, d.n, in->detail_per_sku, in->detail_max);
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
	return rc;
}

