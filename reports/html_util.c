/*
 * html_util.c - what every section of the report shares (report_int.h), below
 * them all: the runs table's headline metrics, a fingerprint's JSON read
 * (fields, metric rows), numbers and JSON values for people, table cells and
 * badges.  The sections (html_<name>.c) and the page (html.c) call down into
 * it; it calls nothing of theirs.
 */
#include "reports/report_int.h"
#include "benches/bench.h"
#include "reports/html_escape.h"
#include "judge/flags.h"
#include "results/fprun.h"

#include <math.h>
#include <string.h>

/* Headline metrics of the runs table (instance level, gpu -1); label and unit from their benches' rows. */
const char *const report_head[N_HEAD] = {
	"gemm.bf16.tflops", "gemm.fp16.tflops", "memcpy.h2d.pinned.gbps", "allreduce.busbw.gbps",
	"nvme.seqread.gbps", "soak.tflops.last_min", "soak.sm_clock.drop_pct",
	"host.decode.images_per_s_per_gpu", "host.membw.triad.gbps", "host.staging.shm.gbps",
};


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

/* 0 critical, 1 warning, 2 info or unknown: common/severity.h's order, worst first */
int rep_sev_index(const char *s)
{
	int r = gv_severity_rank(s);
	return r < 0 ? 2 : GV_SEV_CRITICAL - r;
}

const char *rep_sev_name(int index)
{
	return gv_severity_name(GV_SEV_CRITICAL - index);
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

	if (!what || !*what) {   /* README "Words and units": one word per state */
		fputs("<span class=\"muted\">not judged</span>", f);
		return;
	}
	if (!strcmp(what, "accept") || !strcmp(what, "reject") || !strcmp(what, "unmeasurable") ||
	    !strcmp(what, "incomplete"))
		cls = what;
	fprintf(f, "<b class=\"badge %s\">", cls);
	html_esc(f, !strcmp(what, "accept") ? "accepted" : !strcmp(what, "reject") ? "rejected" : what);
	fputs("</b>", f);
}

int rep_obj_int(const struct fp_obj *o, const char *key, long long *v)
{
	const struct fp_kv *kv = fp_obj_get(o, key);
	if (!kv || kv->type != FPV_NUM || !kv->is_int || !(fabs(kv->num) < 9.2e18))
		return -1;
	*v = (long long)kv->num;
	return 0;
}

/* GPUs a GEMM-like instance row counts: the bench's own "gpus" param, else the run's. */
int rep_row_gpus(const struct fp_metric *m, const struct run_sum *r)
{
	long long g = 0;
	if (rep_obj_int(&m->params, "gpus", &g))
		g = 0;
	return g > 0 && g < 1 << 20 ? (int)g : r->gpu_count > 0 ? r->gpu_count : 1;
}

int rep_row_is_measurement(const struct fp_metric *m)
{
	long long ranks = 0;
	int given = !rep_obj_int(&m->params, "ranks", &ranks);
	return flags_metric_is_measurement_ranks(m->name, given, ranks);
}
