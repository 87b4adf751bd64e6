/* html_summary.c - the report's summary: runs, verdicts and flags counted by type (see html.h). */
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

/* ---- summary: from the counts over every run (report_agg.c) ---- */

static int cmp_flag_count(const void *a, const void *b)
{
	const struct rep_flag_count *x = a, *y = b;
	if (x->sev != y->sev)
		return x->sev - y->sev;
	if (x->runs != y->runs)
		return y->runs - x->runs;
	return strcmp(x->code, y->code);
}

static void flag_table(FILE *f, const struct rdoc *d)
{
	struct rep_flag_count fc[sizeof d->agg.fc / sizeof d->agg.fc[0]];
	size_t nfc = d->agg.nfc;

	memcpy(fc, d->agg.fc, nfc * sizeof *fc);
	qsort(fc, nfc, sizeof *fc, cmp_flag_count);
	fputs("<h3>Flags at a glance</h3>\n", f);
	if (nfc == 0) {
		fputs("<p>No run raised a flag.</p>\n", f);
		return;
	}
	fputs("<table class=\"sortable\" id=\"flags\"><thead><tr><th>flag</th><th>worst severity</th>"
	      "<th>runs</th><th>example</th></tr></thead><tbody>\n", f);
	for (size_t k = 0; k < nfc; k++) {
		fprintf(f, "<tr><td><code>");
		html_esc(f, fc[k].code);
		fprintf(f, "</code></td><td class=\"%s\">%s</td><td class=n>%d</td><td>",
			rep_sev_name(fc[k].sev), rep_sev_name(fc[k].sev), fc[k].runs);
		if (fc[k].latest_detail > 0)
			fprintf(f, "<a href=\"#run-%lld\">run %lld</a>", (long long)fc[k].latest_detail,
				(long long)fc[k].latest_detail);
		else
			fputs("\xE2\x80\x94", f);
		fputs("</td></tr>\n", f);
	}
	fputs("</tbody></table>\n", f);
}

static int cmp_sku_key(const void *a, const void *b)
{
	return strcmp((*(const struct rep_sku *const *)a)->key, (*(const struct rep_sku *const *)b)->key);
}

static int same_str(const char *a, const char *b)
{
	return !strcmp(a ? a : "", b ? b : "");
}

/*
 * The type's BF16 GEMM figure as `gpuvet rank` and `gpuvet cost` use it: its most sustained
 * profile's median (judge/rank_profile.c), from the report's BF16 ranking (a priced row, or a
 * measured type listed unpriced); *basis says which ("sustained", "burst"). NaN when the ranking
 * has no figure for the type (its runs all flagged critical, no instance type).
 */
static double ranked_value(const struct rdoc *d, const struct rep_sku *r, const char **basis)
{
	json_t *rk, *e;
	size_t k, i;
	json_array_foreach(d->rankings, k, rk) {
		if (!same_str(rep_jstr(rk, "metric"), "gemm.bf16.tflops") || !same_str(rep_jstr(rk, "per"), "instance"))
			continue;
		json_array_foreach(json_object_get(rk, "rows"), i, e)
			if (!json_is_true(json_object_get(e, "estimate")) && same_str(rep_jstr(e, "provider"), r->provider) &&
			    same_str(rep_jstr(e, "instance_type"), r->itype) &&
			    (same_str(rep_jstr(e, "run_region"), r->region) || same_str(rep_jstr(e, "region"), r->region))) {
				*basis = rep_jstr(e, "basis");
				return rep_jnum(e, "value");
			}
		json_array_foreach(json_object_get(rk, "unpriced"), i, e)
			if (!json_is_true(json_object_get(e, "estimate")) && same_str(rep_jstr(e, "provider"), r->provider) &&
			    same_str(rep_jstr(e, "instance_type"), r->itype) && json_is_number(json_object_get(e, "value"))) {
				*basis = rep_jstr(e, "basis");
				return rep_jnum(e, "value");
			}
		break;
	}
	return NAN;
}

static void sku_table(FILE *f, const struct rdoc *d)
{
	const struct rep_sku **sk = gv_malloc((d->agg.nsku ? d->agg.nsku : 1) * sizeof *sk);

	for (size_t k = 0; k < d->agg.nsku; k++)
		sk[k] = &d->agg.sku[k];
	qsort(sk, d->agg.nsku, sizeof *sk, cmp_sku_key);
	fputs("<h3>Instance types, by region</h3>\n<div class=\"scroll\"><table class=\"sortable\" id=\"skus\"><thead><tr>"
	      "<th>provider</th><th>instance type</th><th>region</th><th>GPUs</th><th>runs</th>"
	      "<th>accepted</th><th>rejected</th><th>with critical flags</th>"
	      "<th>BF16 GEMM <small>TFLOP/s, as ranked: the most sustained profile's median</small></th>"
	      "<th>latest run</th></tr></thead><tbody>\n", f);
	for (size_t k = 0; k < d->agg.nsku; k++) {
		const struct rep_sku *r = sk[k];
		if (!r->runs)
			continue;
		fputs("<tr>", f);
		rep_td_text(f, r->provider);
		rep_td_text(f, r->itype);
		rep_td_text(f, r->region);
		fprintf(f, "<td>%d \xC3\x97 ", r->gpu_count);
		html_esc(f, rep_orq(r->gpu_model));
		fputs("</td>", f);
		rep_td_num(f, (double)r->runs, NULL);
		rep_td_num(f, r->acc, NULL);
		rep_td_num(f, r->rej, NULL);
		rep_td_num(f, r->crit, NULL);
		const char *basis = NULL;
		double v = ranked_value(d, r, &basis);
		if (isfinite(v) && basis) {
			char b[32];
			rep_fmt_val(v, b, sizeof b);
			fprintf(f, "<td class=n data-v=\"%.17g\">%s <small>(", v, b);
			html_esc(f, basis);
			fputs(")</small></td>", f);
		} else {   /* not in the ranking (its runs flagged critical, or no type): the median of every run, said so */
			double m = rep_med_value(&r->bf16);
			char b[32];
			rep_fmt_val(m, b, sizeof b);
			fprintf(f, "<td class=n>%s <small>%s</small></td>", isfinite(m) ? b : "\xE2\x80\x94",
				isfinite(m) ? "(median of every run, not ranked)" : "");
		}
		rep_td_text(f, r->has_started ? r->started : NULL);   /* the type's newest run */
		fputs("</tr>\n", f);
	}
	fputs("</tbody></table></div>\n", f);
	free(sk);
}

void rep_section_summary(FILE *f, const struct rdoc *d, const struct report_page *pg)
{
	(void)pg;
	const struct rep_agg *a = &d->agg;
	size_t nsku = rep_agg_types(a);   /* instance types, whatever their regions: the table below has a row per region */
	fputs("<section id=\"summary\"><h2>Summary</h2>\n", f);
	if (a->synthetic)
		fprintf(f, "<p class=\"demo\"><b>Synthetic demo data:</b> %d of these runs are labelled "
			   "synthetic in their host name; their numbers are not measurements.</p>\n", a->synthetic);
	fprintf(f, "<div class=\"cards\"><div class=\"card\"><b>%zu</b>runs</div>"
		   "<div class=\"card\"><b>%zu</b>instance types</div>"
		   "<div class=\"card\"><b>%d</b>accepted</div><div class=\"card\"><b>%d</b>rejected</div>"
		   "<div class=\"card\"><b>%d</b>unmeasurable</div><div class=\"card\"><b>%d</b>not judged</div>",
		a->runs, nsku, a->verd[0], a->verd[1], a->verd[2], a->verd[3]);
	if (a->incomplete)
		fprintf(f, "<div class=\"card\"><b>%d</b>incomplete</div>", a->incomplete);
	fputs("</div>\n", f);
	flag_table(f, d);
	sku_table(f, d);
	fputs("</section>\n", f);
}
