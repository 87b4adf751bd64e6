/* html_runs.c - the report's table of runs (see html.h). */
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
		html_esc(f, rep_orq(t));
	}
	fputs("</td>", f);
}

void rep_section_runs(FILE *f, const struct rdoc *d, const struct report_page *pg)
{
	(void)pg;
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
	for (size_t i = 0; i < d->n; i++) {
		const struct run_sum *r = &d->runs[i];
		/* a row is an anchor (#r-ID): the fleet headline's counts link to the runs they count */
		if (r->detail)
			fprintf(f, "<tr id=\"r-%lld\"><td class=n><a href=\"#run-%lld\">%lld</a></td>", (long long)r->id,
				(long long)r->id, (long long)r->id);
		else
			fprintf(f, "<tr id=\"r-%lld\"><td class=n>%lld</td>", (long long)r->id, (long long)r->id);
		started_cell(f, r->started);
		rep_td_text(f, r->host);
		fputs("<td>", f);
		html_esc(f, rep_orq(r->provider));
		fputs(" ", f);
		html_esc(f, rep_orq(r->itype));
		if (r->region && *r->region) {
			fputs(" <small>", f);
			html_esc(f, r->region);
			fputs("</small>", f);
		}
		fprintf(f, "</td><td>%d \xC3\x97 ", r->gpu_count);
		html_esc(f, rep_orq(r->gpu_model));
		fputs("</td><td>", f);
		rep_badge(f, r->verdict);
		if (r->status && strcmp(r->status, "complete")) {
			fputs(" ", f);
			rep_badge(f, r->status);
		}
		fputs("</td><td>", f);
		if (r->flags) {
			const char *p = r->flags;
			while (*p) {
				const char *sp = strchr(p, ' '), *colon;
				size_t len = sp ? (size_t)(sp - p) : strlen(p);
				char sev[16] = "";   /* "CODE:severity"; none: info */
				colon = memchr(p, ':', len);
				if (colon)
					snprintf(sev, sizeof sev, "%.*s", (int)(len - (size_t)(colon + 1 - p)), colon + 1);
				fprintf(f, "<code class=\"%s\">", rep_sev_name(rep_sev_index(sev)));
				html_esc_n(f, p, colon ? (size_t)(colon - p) : len);
				fputs("</code> ", f);
				p = sp ? sp + 1 : p + len;
			}
		} else {
			fputs("\xE2\x80\x94", f);
		}
		fputs("</td>", f);
		for (size_t h = 0; h < N_HEAD; h++) {
			/* a figure that measures nothing on this run (an all-reduce of one GPU, stored as 0 before
			   the bench skipped it): absent, with why (judge/flags.h) */
			const char *na = flags_metric_not_applicable(report_head[h], r->gpu_count);
			if (na) {
				fputs("<td class=\"na\" data-v=\"-1\" title=\"", f);
				html_esc(f, na);
				fprintf(f, "\">\xE2\x80\x94 <small>%d GPU%s</small></td>", r->gpu_count,
					r->gpu_count == 1 ? "" : "s");
			} else {
				rep_td_head(f, report_head[h], r->head[h]);
			}
		}
		fprintf(f, "<td class=n data-v=\"%d\">%d/%d/%d</td></tr>\n", r->nb_ok, r->nb_ok, r->nb_skip,
			r->nb_fail);
	}
	fputs("</tbody></table></div>\n", f);
	if (d->unlisted)
		fprintf(f, "<p class=\"demo\" id=\"runs-left-out\">%zu more runs left out of this table to keep the file "
			   "small (the summary and the rankings count them): it lists the detailed, the newest and the "
			   "flagged runs, at most %d. <code>gpuvet results list</code> lists every run.</p>\n",
			d->unlisted, REPORT_ROWS_MAX);
	fputs("</section>\n", f);
}
