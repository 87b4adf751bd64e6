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

void rep_section_summary(FILE *f, const struct rdoc *d, const struct report_page *pg)
{
	(void)pg;
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
	qsort_r(idx, d->n, sizeof *idx, rep_cmp_sku_newest, d->runs);
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
				rep_sev_name[fc[k].sev], rep_sev_name[fc[k].sev], fc[k].runs);
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
		rep_td_text(f, r->provider);
		rep_td_text(f, r->itype);
		rep_td_text(f, r->region);
		fprintf(f, "<td>%d \xC3\x97 ", r->gpu_count);
		html_esc(f, rep_orq(r->gpu_model));
		fputs("</td>", f);
		rep_td_num(f, (double)(j - i), NULL);
		rep_td_num(f, acc, NULL);
		rep_td_num(f, rej, NULL);
		rep_td_num(f, crit, NULL);
		rep_td_num(f, med, NULL);
		rep_td_text(f, r->started);   /* idx is newest first within a SKU */
		fputs("</tr>\n", f);
		i = j;
	}
	fputs("</tbody></table></div>\n</section>\n", f);
	free(idx);
}
