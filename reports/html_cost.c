/*
 * html_cost.c - the report's "what your job costs" section (issue 37):
 * shown when the report is built with a job (`gpuvet report --job
 * llama-3.1-8b:train:2e9`), right after the answer, naming the cheapest
 * instance type the job fits; the rows are judge/cost.c's, as `gpuvet cost
 * --json` prints them (render only: no rule of its own).
 */
#include "reports/html.h"
#include "reports/report_int.h"
#include "reports/html_escape.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define COST_ROWS_SHOWN 20

static void money(FILE *f, double v, double lo, double hi)
{
	char a[32], b[32], c[32];
	rep_fmt_val(v, a, sizeof a);
	rep_fmt_val(lo, b, sizeof b);
	rep_fmt_val(hi, c, sizeof c);
	fprintf(f, "$%s <small>($%s-%s)</small>", a, b, c);
}

/* One sentence: the cheapest type the job fits, or that none does and the first reason why. */
static void cheapest(FILE *f, json_t *rows)
{
	size_t i;
	json_t *r;
	json_array_foreach(rows, i, r) {
		if (!json_is_true(json_object_get(r, "fits")))
			continue;
		fputs("<p class=\"answer\">Cheapest for it: <b>", f);
		html_esc(f, rep_jstr(r, "provider"));
		fputs(" ", f);
		html_esc(f, rep_jstr(r, "instance_type"));
		fprintf(f, "</b> (%s), %.0f instance(s): ", json_is_true(json_object_get(r, "estimate")) ? "estimate" : "measured",
			rep_jnum(r, "instances"));
		money(f, rep_jnum(r, "usd_per_million_tokens"), rep_jnum(r, "usd_per_million_tokens_low"),
		      rep_jnum(r, "usd_per_million_tokens_high"));
		fputs(" per million tokens, ", f);
		money(f, rep_jnum(r, "job_usd"), rep_jnum(r, "job_usd_low"), rep_jnum(r, "job_usd_high"));
		fprintf(f, " and %.3g hours for the job; bound by ", rep_jnum(r, "job_hours"));
		html_esc(f, rep_jstr(r, "bound"));
		fputs(".</p>\n", f);
		return;
	}
	fputs("<p class=\"answer\">No priced instance type fits it", f);
	if ((r = json_array_get(rows, 0))) {
		fputs(" (", f);
		html_esc(f, rep_jstr(r, "instance_type"));
		fputs(": ", f);
		html_esc(f, rep_jstr(r, "why"));
		fputs(")", f);
	}
	fputs(".</p>\n", f);
}

static void row_html(FILE *f, json_t *r)
{
	int fits = json_is_true(json_object_get(r, "fits"));
	fputs("<tr>", f);
	rep_td_text(f, rep_jstr(r, "provider"));
	rep_td_text(f, rep_jstr(r, "instance_type"));
	fprintf(f, "<td>%.0fx ", rep_jnum(r, "gpu_count"));
	html_esc(f, rep_orq(rep_jstr(r, "gpu_model")));
	fputs("</td>", f);
	rep_td_text(f, fits ? "yes" : "no");
	rep_td_num(f, fits ? rep_jnum(r, "instances") : NAN, "");
	rep_td_num(f, rep_jnum(r, "tokens_per_s_per_gpu"), "");
	rep_td_num(f, rep_jnum(r, "usd_per_million_tokens"), "");
	rep_td_num(f, rep_jnum(r, "job_hours"), "");
	rep_td_num(f, rep_jnum(r, "job_usd"), "");
	rep_td_text(f, rep_jstr(r, "bound"));
	rep_td_text(f, fits ? rep_jstr(r, "basis") : rep_jstr(r, "why"));
	fputs("</tr>\n", f);
}

void rep_section_cost(FILE *f, const struct rdoc *d, const struct report_page *pg)
{
	(void)pg;
	if (!d->cost)
		return;
	json_t *job = json_object_get(d->cost, "job"), *rows = json_object_get(d->cost, "rows");
	fputs("<section id=\"cost\"><h2>What your job costs</h2>\n<p>", f);
	if (!job) {
		html_esc(f, rep_orq(rep_jstr(d->cost, "error")));
		fputs("</p></section>\n", f);
		return;
	}
	json_t *m = json_object_get(job, "model");
	fputs("Job: ", f);
	html_esc(f, rep_jstr(job, "task"));
	fputs(" ", f);
	html_esc(f, rep_jstr(m, "name"));
	fprintf(f, " (%.3g B parameters), %.3g tokens, sequence %.0f, ", rep_jnum(m, "params") / 1e9,
		rep_jnum(job, "tokens"), rep_jnum(job, "seq"));
	html_esc(f, rep_orq(rep_jstr(job, "precision")));
	fputs(", ", f);
	html_esc(f, rep_market_name(rep_jstr(d->cost, "market")));
	fputs(" prices. Predicted from each type's measured figures, else the GPU model's reference "
	      "(docs/cost.md); bands in <code>gpuvet cost --json</code>.</p>\n", f);
	cheapest(f, rows);
	fputs("<div class=\"scroll\"><table class=\"sortable\" id=\"costlist\"><thead><tr><th>provider</th><th>instance "
	      "type</th><th>GPUs</th><th>fits</th><th>instances</th><th>tokens/s per GPU</th><th>$ per million "
	      "tokens <small>$/Mtok</small></th><th>job hours</th><th>job $</th><th>bound</th><th>basis or why not</th></tr></thead><tbody>\n", f);
	size_t i, n = json_array_size(rows);
	json_t *r;
	json_array_foreach(rows, i, r) {
		if (i >= COST_ROWS_SHOWN)
			break;
		row_html(f, r);
	}
	fputs("</tbody></table></div>\n", f);
	if (n > COST_ROWS_SHOWN)
		fprintf(f, "<p>%zu more instance type(s): <code>gpuvet cost --json</code> lists them.</p>\n",
			n - COST_ROWS_SHOWN);
	fputs("</section>\n", f);
}
