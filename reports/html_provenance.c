/* html_provenance.c - where the report's numbers come from: prices, references, versions (see html.h). */
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
#include "common/version.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- provenance ---- */

/* Which gpuvet versions measured the runs, with their run counts. */
static void versions_line(FILE *f, const struct rdoc *d)
{
	const char *const *vers = d->agg.vers;
	const int *vcount = d->agg.vcount, nv = d->agg.nv;
	if (!nv)
		return;
	fputs("<p>Runs measured by: ", f);
	for (int k = 0; k < nv; k++) {
		fputs(k ? ", gpuvet " : "gpuvet ", f);
		html_esc(f, vers[k]);
		fprintf(f, " (%d run%s)", vcount[k], vcount[k] == 1 ? "" : "s");
	}
	fputs(".</p>\n", f);
}

static void sources_table(FILE *f, const struct rdoc *d)
{
	size_t i;
	json_t *p;
	if (!json_array_size(d->price_sources))
		return;
	fputs("<h4>Price sources</h4>\n<table><thead><tr><th>source</th><th>provider</th>"
	      "<th>prices' date</th><th>loaded into this store</th>"
	      "<th>status</th><th>rows</th><th>message</th></tr></thead><tbody>\n", f);
	json_array_foreach(d->price_sources, i, p) {
		fputs("<tr>", f);
		rep_td_text(f, rep_jstr(p, "source"));
		rep_td_text(f, rep_jstr(p, "provider"));
		char when[96];
		rep_td_text(f, price_date_words(rep_jstr(p, "source"), rep_jstr(p, "captured_at"), when, sizeof when));
		rep_td_text(f, rep_jstr(p, "fetched_at"));
		rep_td_text(f, rep_jstr(p, "status"));
		rep_td_num(f, rep_jnum(p, "rows"), NULL);
		rep_td_text(f, rep_jstr(p, "message"));
		fputs("</tr>\n", f);
	}
	fputs("</tbody></table>\n", f);
}

/* The datasheet rows of the models the runs used. */
static void gpu_table(FILE *f, const struct rdoc *d)
{
	fputs("<h3>Reference GPU table</h3>\n<p>Peak figures behind percent of peak "
	      "(dense, boost clock).</p>\n<div class=\"scroll\"><table><thead><tr><th>key</th><th>GPU</th>"
	      "<th>BF16 <small>TFLOP/s</small></th><th>memory bandwidth <small>GB/s</small></th>"
	      "<th>source</th></tr></thead><tbody>\n", f);
	for (size_t g = 0; g < gpu_refs_count; g++) {
		const struct gpu_ref *ref = &gpu_refs[g];
		int used = 0;
		for (size_t m = 0; m < d->agg.nmodels && !used; m++)
			used = !strcmp(d->agg.models[m], ref->key);
		if (!used)
			continue;
		fputs("<tr>", f);
		rep_td_text(f, ref->key);
		rep_td_text(f, ref->name);
		rep_td_num(f, ref->peak_tflops[GPU_BF16], NULL);
		rep_td_num(f, ref->mem_bw_gbps, NULL);
		rep_td_text(f, ref->source);
		fputs("</tr>\n", f);
	}
	fputs("</tbody></table></div>\n", f);
}

void rep_section_provenance(FILE *f, const struct rdoc *d, const struct report_page *pg)
{
	(void)pg;
	fprintf(f, "<section id=\"provenance\"><h2>Provenance</h2>\n<p>Report generated %s by ", d->generated_at);
	html_esc(f, gv_version_line());
	fputs(".</p>\n", f);
	versions_line(f, d);
	rep_prices_table(f, d);   /* html_prices.c */
	sources_table(f, d);
	gpu_table(f, d);
	fputs("</section>\n", f);
}
