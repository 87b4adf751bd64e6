/* html_ranking.c - the report's ranking table and its per-dollar bars (see html.h). */
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

/* ---- ranking ---- */

static json_t *rank_row_find(json_t *rk, json_t *row)
{
	const char *p = rep_jstr(row, "provider"), *it = rep_jstr(row, "instance_type"), *rg = rep_jstr(row, "region");
	size_t i;
	json_t *v;

	/* the same SKU and region: one row per type in each ranking (judge/rank_profile.c) */
	json_array_foreach(json_object_get(rk, "rows"), i, v) {
		const char *p2 = rep_jstr(v, "provider"), *it2 = rep_jstr(v, "instance_type"), *rg2 = rep_jstr(v, "region");
		if (!strcmp(p ? p : "", p2 ? p2 : "") && !strcmp(it ? it : "", it2 ? it2 : "") &&
		    !strcmp(rg ? rg : "", rg2 ? rg2 : ""))
			return v;
	}
	return NULL;
}

static int is_per_gpu(json_t *rk)
{
	const char *per = rep_jstr(rk, "per");
	return per && !strcmp(per, "gpu");
}

static const char *basis_of(json_t *row)
{
	const char *b = rep_jstr(row, "basis_label");
	return b ? b : json_is_true(json_object_get(row, "estimate")) ? "estimate" : "basis unknown";
}

/*
 * What a row's figure is, as judge/rank_profile.c says it: "(sustained)", "(burst)",
 * "(estimate: reference, measured)"; then the type's other profiles, labelled, which do not rank.
 */
void rep_basis_words(FILE *f, json_t *row, const char *unit)
{
	int est = json_is_true(json_object_get(row, "estimate"));
	json_t *o;
	size_t i;
	fprintf(f, "<span class=\"%s\">(", est ? "est" : "basis");
	html_esc(f, basis_of(row));
	fputs(")</span>", f);
	json_array_foreach(json_object_get(row, "other_profiles"), i, o) {
		char buf[32];
		rep_fmt_val(rep_jnum(o, "value_per_dollar"), buf, sizeof buf);
		fputs(i ? ", " : " <span class=\"also\">also ", f);
		html_esc(f, rep_orq(rep_jstr(o, "profile")));
		fputs(" (", f);
		html_esc(f, rep_orq(rep_jstr(o, "basis")));
		fprintf(f, ") %s", buf);
		if (unit) {
			fputs(" ", f);
			html_esc(f, unit);
		}
		fputs(" per $/h", f);
	}
	if (json_array_size(json_object_get(row, "other_profiles")))
		fputs(", not ranked</span>", f);
}

/* A ranking's metric for people: "BF16 GEMM" (its bench's row), the composite's own name otherwise. */
static const char *rank_label(json_t *rk, char *buf, size_t size)
{
	const char *m = rep_jstr(rk, "metric");
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
	html_esc(f, rep_market_name(rep_jstr(rk, "market")));
	fputs("</small></th>", f);
}

static void flags_cell(FILE *f, json_t *flags)
{
	size_t i;
	json_t *v;
	int any = 0;

	fputs("<td>", f);
	json_array_foreach(flags, i, v) {
		const char *code = json_is_string(v) ? json_string_value(v) : rep_jstr(v, "code");
		if (!code)
			continue;
		fputs(any++ ? " " : "", f);
		rep_tag(f, "<code>", code, "</code>");
	}
	if (!any)
		fputs("\xE2\x80\x94", f);
	fputs("</td>", f);
}

static int is_estimate(json_t *e)
{
	return json_is_true(json_object_get(e, "estimate"));
}

/*
 * The catalog's types the ranking could estimate but has no price for in its market (judge/unpriced.c), as
 * `rank --estimates` lists them: a provider's with one why together, the first few named, the rest counted.
 */
static void unpriced_estimates_note(FILE *f, json_t *rk)
{
	json_t *u = json_object_get(rk, "unpriced");
	size_t n = json_array_size(u), i = 0, groups = 0;
	json_int_t more = json_integer_value(json_object_get(rk, "unpriced_left_out"));

	while (i < n && !is_estimate(json_array_get(u, i)))
		i++;   /* the measured ones come first (unpriced_note) */
	if (i == n)
		return;
	fputs("<p>Could be estimated but not ranked, no ", f);
	html_esc(f, rep_market_name(rep_jstr(rk, "market")));
	fputs(" price: ", f);
	while (i < n) {
		json_t *v = json_array_get(u, i);
		const char *p = rep_orq(rep_jstr(v, "provider")), *why = rep_orq(rep_jstr(v, "why"));
		size_t k = i;
		fputs(groups++ ? "; " : "", f);
		html_esc(f, p);
		for (; k < n && is_estimate(json_array_get(u, k)) && !strcmp(rep_orq(rep_jstr(json_array_get(u, k),
		       "provider")), p) && !strcmp(rep_orq(rep_jstr(json_array_get(u, k), "why")), why); k++) {
			if (k - i < 4) {
				fputs(k > i ? ", " : " ", f);
				html_esc(f, rep_orq(rep_jstr(json_array_get(u, k), "instance_type")));
			}
		}
		if (k - i > 4)
			fprintf(f, " and %zu more", k - i - 4);
		fputs(" (", f);
		html_esc(f, why);
		fputs(")", f);
		i = k;
	}
	if (more > 0)
		fprintf(f, "; %lld more types (<code>gpuvet rank --estimates</code> lists each)", (long long)more);
	fputs(".</p>\n", f);
}

/* Measured instance types the ranking could not price. */
static void unpriced_note(FILE *f, json_t *rk)
{
	json_t *u = json_object_get(rk, "unpriced"), *v;
	size_t i, shown = 0;

	json_array_foreach(u, i, v)
		shown += !is_estimate(v);
	if (!shown)
		return;
	shown = 0;
	fputs("<p>Measured but not ranked, no ", f);
	html_esc(f, rep_market_name(rep_jstr(rk, "market")));
	fputs(" price: ", f);
	json_array_foreach(u, i, v) {
		if (is_estimate(v))
			continue;
		fputs(shown++ ? ", " : "", f);
		html_esc(f, rep_orq(rep_jstr(v, "provider")));
		fputs(" ", f);
		html_esc(f, rep_orq(rep_jstr(v, "instance_type")));
		if (json_is_integer(json_object_get(v, "runs"))) {
			fputs(" (", f);
			if (rep_jstr(v, "profile")) {
				html_esc(f, rep_jstr(v, "profile"));
				fputs(", ", f);
			}
			fprintf(f, "%lld run%s", (long long)json_integer_value(json_object_get(v, "runs")),
				json_integer_value(json_object_get(v, "runs")) == 1 ? "" : "s");
			if (json_is_number(json_object_get(v, "value"))) {   /* its value, without a price */
				char b[32];
				rep_fmt_val(rep_jnum(v, "value"), b, sizeof b);
				fprintf(f, ", %s ", b);
				html_esc(f, rep_orq(rep_jstr(rk, "unit")));
			}
			json_t *o;
			size_t j;
			json_array_foreach(json_object_get(v, "other_profiles"), j, o) {
				fputs("; ", f);
				html_esc(f, rep_orq(rep_jstr(o, "profile")));
				fprintf(f, ", %lld run%s", (long long)json_integer_value(json_object_get(o, "runs")),
					json_integer_value(json_object_get(o, "runs")) == 1 ? "" : "s");
			}
			fputs(")", f);
		}
	}
	fputs(".</p>\n", f);
}

/* The ranking with the same metric as r0 for another market or per. */
static json_t *rank_variant(const struct rdoc *d, json_t *r0, const char *market, const char *per)
{
	size_t nrk = json_array_size(d->rankings);
	const char *metric = rep_jstr(r0, "metric");

	for (size_t k = 1; k < nrk; k++) {
		json_t *rk = json_array_get(d->rankings, k);
		const char *m = rep_jstr(rk, "market"), *p = rep_jstr(rk, "per"), *mt = rep_jstr(rk, "metric");
		if (m && p && mt && metric && !strcmp(m, market) && !strcmp(p, per) && !strcmp(mt, metric))
			return rk;
	}
	return NULL;
}

/* What the ranking means, over the table: metric, market, estimates, runs left out. */
static void ranking_intro(FILE *f, json_t *r0, const char *m0)
{
	size_t i;
	json_t *row;
	fputs("<p>Ordered as <code>gpuvet rank</code> orders them: <b>", f);
	html_esc(f, rep_jstr(r0, "metric"));
	fputs("</b> per dollar, ", f);
	html_esc(f, rep_market_name(m0));
	fputs(" prices, per ", f);
	html_esc(f, rep_jstr(r0, "per"));
	fputs(". One row per instance type: its value is the median over its stored runs of its most sustained "
	      "profile (standard, then full, then quick), its other profiles shown under <i>basis</i>, not ranked; "
	      "<i>sustained</i> runs were timed after the GPU settled at its power limit, <i>burst</i> (quick) runs "
	      "are not shown to equal that. Value per dollar is the value divided by the hourly price (", f);
	html_esc(f, rep_jstr(r0, "unit"));
	fputs(" per $/h: per US dollar per instance-hour; per GPU it is the same number, value per GPU over "
	      "price per GPU-hour, $/GPU-h). Rows marked <span class=\"est\">(estimate)</span> were never measured as that type: "
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
		json_int_t more = json_integer_value(json_object_get(r0, "estimates_left_out"));
		if (nest)
			fprintf(f, "<input type=\"checkbox\" id=\"show-est\"><label class=\"toggle-l\" for=\"show-est\">"
				   "show the %zu estimated row%s (types never measured here)</label>\n", nest, nest == 1 ? "" : "s");
		if (more > 0)   /* the report keeps the best REPORT_ESTIMATES_MAX (report_load.c) */
			fprintf(f, "<p class=\"muted\">The best %zu estimates per dollar are listed; %lld more priced types"
				   " are estimated by <code>gpuvet rank --estimates</code>.</p>\n", nest, (long long)more);
	}
}

/* A banner per provider and capture date of an old price the ranking uses (judge/rank_price.c decides which). */
static void stale_banner(FILE *f, json_t *r0)
{
	size_t i;
	json_t *st;
	json_array_foreach(json_object_get(r0, "stale_prices"), i, st) {
		fputs("<p class=\"warning\"><b>Old prices:</b> ", f);
		html_esc(f, rep_orq(rep_jstr(st, "provider")));
		fputs(" prices used here were captured on ", f);
		html_esc(f, rep_orq(rep_jstr(st, "captured_at")));
		fprintf(f, ", %.0f days ago; they may have changed (<code>gpuvet prices update</code>, or "
			   "<code>--max-age DAYS</code> to leave them out).</p>\n", rep_jnum(st, "age_days"));
	}
}

static void ranking_head(FILE *f, const struct rdoc *d, json_t *r0)
{
	size_t nrk = json_array_size(d->rankings);
	fputs("<div class=\"scroll\"><table class=\"sortable\" id=\"rank\"><thead><tr><th>#</th><th>provider</th>"
	      "<th>instance type</th><th>region</th><th>GPUs</th><th>basis<br><small>runs</small></th>"
	      "<th>on-demand<br><small>$/h</small></th><th title=\"interruptible\">spot<br><small>$/h</small></th>"
	      "<th>per GPU<br><small>$/GPU-h</small></th><th>", f);
	{
		char lab[96];
		html_esc(f, rank_label(r0, lab, sizeof lab));
	}
	fputs("<br><small>", f);
	html_esc(f, rep_jstr(r0, "unit"));
	fputs("</small></th><th>per GPU<br><small>", f);
	html_esc(f, rep_jstr(r0, "unit"));
	fputs("</small></th>", f);
	for (size_t k = 0; k < nrk; k++) {
		json_t *rk = json_array_get(d->rankings, k);
		if (!is_per_gpu(rk))
			rank_col_head(f, rk);
	}
	fputs("<th>flags</th><th>price source</th></tr></thead><tbody>\n", f);
}

/*
 * What the row's figures are and its runs, of one profile, never mixed (judge/rank.c): "sustained,
 * 1 standard run"; its other profiles under it (they do not rank).
 */
static void basis_cell(FILE *f, json_t *row)
{
	json_t *o;
	size_t i;
	const char *b = rep_jstr(row, "basis"), *lab = basis_of(row);
	double runs = rep_jnum(row, "runs");
	fprintf(f, "<td data-v=\"%.0f\">", isfinite(runs) ? runs : 0.0);
	/* "estimate" and, under it, from what: "reference, measured" */
	if (b && !strncmp(lab, b, strlen(b)) && lab[strlen(b)] == ':') {
		const char *from = lab + strlen(b) + 1;
		html_esc(f, b);
		fputs("<br><small>", f);
		html_esc(f, from + strspn(from, " "));
		fputs("</small>", f);
	} else {
		html_esc(f, lab);
	}
	if (rep_jstr(row, "profile")) {
		fprintf(f, "<br><small>%.0f ", runs);
		html_esc(f, rep_jstr(row, "profile"));
		fprintf(f, " run%s</small>", runs == 1 ? "" : "s");
	}
	json_array_foreach(json_object_get(row, "other_profiles"), i, o) {
		char buf[32];
		rep_fmt_val(rep_jnum(o, "value"), buf, sizeof buf);
		/* narrow: the table fits 1400 px with every estimate shown */
		fputs(i ? "<br>" : "<br><small class=\"also\">also ", f);
		html_esc(f, rep_orq(rep_jstr(o, "profile")));
		fputs(" (", f);
		html_esc(f, rep_orq(rep_jstr(o, "basis")));
		fprintf(f, "):<br>%.0f run%s, %s", rep_jnum(o, "runs"), rep_jnum(o, "runs") == 1 ? "" : "s", buf);
	}
	if (json_array_size(json_object_get(row, "other_profiles")))
		fputs("</small>", f);
	fputs("</td>", f);
}

/* One instance type: its prices side by side, its value, value per GPU and per dollar of each ranking. */
static void ranking_row(FILE *f, const struct rdoc *d, json_t *row, json_t *spot, json_t *gpu_od, const char *m0)
{
	size_t nrk = json_array_size(d->rankings);
		int est = json_is_true(json_object_get(row, "estimate"));
	json_t *sr = spot ? rank_row_find(spot, row) : NULL, *gr = gpu_od ? rank_row_find(gpu_od, row) : NULL;
	double gc = rep_jnum(row, "gpu_count");
	double od = m0 && !strcmp(m0, "spot") ? NAN : rep_jnum(row, "price_per_hour");

	fprintf(f, "<tr class=\"%s\">", est ? "est" : "m");
	rep_td_num(f, rep_jnum(row, "rank"), NULL);
	rep_td_text(f, rep_jstr(row, "provider"));
	fputs("<td class=\"it\">", f);
	html_esc(f, rep_orq(rep_jstr(row, "instance_type")));
	if (est) {
		fputs(" <span class=\"est\" title=\"", f);
		html_esc(f, rep_orq(rep_jstr(row, "estimate_basis")));
		fputs("\">(estimate)</span>", f);
	}
	fputs("</td>", f);
	fputs("<td class=\"wrap\">", f);
	html_esc(f, rep_orq(rep_jstr(row, "region")));
	if (rep_jstr(row, "price_note")) { /* a run priced in another region than its own (judge/rank_price.c) */
		fputs("<br><small class=\"note\">", f);
		html_esc(f, rep_jstr(row, "price_note"));
		fputs("</small>", f);
	}
	fputs("</td>", f);
	fprintf(f, "<td class=\"wrap\">%.0f \xC3\x97 ", isfinite(gc) ? gc : 0.0);
	html_esc(f, rep_orq(rep_jstr(row, "gpu_model")));
	fputs("</td>", f);
	basis_cell(f, row);
	rep_td_num(f, od, NULL);
	rep_td_num(f, sr ? rep_jnum(sr, "price_per_hour") : NAN, NULL);
	rep_td_num(f, gr ? rep_jnum(gr, "price_per_hour") : NAN, NULL);
	rep_td_num(f, rep_jnum(row, "value"), est ? " (est.)" : NULL);
	rep_td_num(f, gr ? rep_jnum(gr, "value") : NAN, est ? " (est.)" : NULL);
	for (size_t k = 0; k < nrk; k++) {
		json_t *rk = json_array_get(d->rankings, k), *o;
		if (is_per_gpu(rk))
			continue;
		o = k == 0 ? row : rank_row_find(rk, row);
		/* another ranking's figure may rest on another profile: then it says which */
		char sfx[112] = "";
		const char *b = o ? rep_jstr(o, "basis") : NULL, *b0 = rep_jstr(row, "basis");
		if (b && (!b0 || strcmp(b, b0)))
			snprintf(sfx, sizeof sfx, " <small>(%s)</small>", b);
		rep_td_num(f, o ? rep_jnum(o, "value_per_dollar") : NAN, sfx);
	}
	flags_cell(f, json_object_get(row, "flags"));
	fputs("<td><small>", f);
	html_esc(f, rep_orq(rep_jstr(row, "price_source")));
	if (rep_jstr(row, "price_captured_at")) {
		char when[96];
		fputs(", ", f);
		html_esc(f, price_date_words(rep_jstr(row, "price_source"), rep_jstr(row, "price_captured_at"), when,
					     sizeof when));
	}
	fputs("</small></td></tr>\n", f);
}

/*
 * The table follows rankings[0] (rank's defaults) row for row.  Per-GPU
 * rankings add value per GPU and price per GPU-hour; their value per
 * dollar equals the per-instance one (both divide by the GPU count), so it
 * is not repeated.  The other per-instance rankings add one value-per-dollar
 * column each.
 */
void rep_section_ranking(FILE *f, const struct rdoc *d, const struct report_page *pg)
{
	(void)pg;
	json_t *r0 = json_array_get(d->rankings, 0), *row, *spot, *gpu_od;
	size_t i;
	const char *m0;

	fputs("<section id=\"ranking\"><h2>Ranking: performance per dollar</h2>\n", f);
	if (!r0) {
		fputs("<p>No ranking: ", f);
		html_esc(f, d->rank_error ? d->rank_error : "no priced instance type");
		fputs(".</p></section>\n", f);
		return;
	}
	m0 = rep_jstr(r0, "market");
	if (json_array_size(json_object_get(r0, "rows")) == 0) {
		fputs("<p>No ranking: no instance type has both a stored run and a price. Load prices with "
		      "<code>gpuvet prices update</code> or <code>gpuvet prices import FILE</code>.</p>\n", f);
		unpriced_note(f, r0);
		unpriced_estimates_note(f, r0);
		fputs("</section>\n", f);
		return;
	}
	spot = rank_variant(d, r0, "spot", "instance");
	gpu_od = rank_variant(d, r0, m0 ? m0 : "on_demand", "gpu");
	ranking_intro(f, r0, m0);
	stale_banner(f, r0);
	ranking_head(f, d, r0);
	json_array_foreach(json_object_get(r0, "rows"), i, row)
		ranking_row(f, d, row, spot, gpu_od, m0);
	fputs("</tbody></table></div>\n", f);
	fputs("<p class=\"note\">Spot: " RANK_SPOT_NOTE " (the provider may reclaim the "
	      "instance at short notice).</p>\n", f);
	unpriced_note(f, r0);
	unpriced_estimates_note(f, r0);
	fputs("</section>\n", f);
}

/* Is row the instance type of run r? */
static int row_is_run(json_t *row, const struct run_sum *r)
{
	const char *p = rep_jstr(row, "provider"), *it = rep_jstr(row, "instance_type");
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
		const char *rg = rep_jstr(row, "region");
		double v = rep_jnum(row, "value_per_dollar");
		if (json_is_true(json_object_get(row, "estimate")))
			continue;   /* measured types only: estimates are rows of the table */
		if (nb == 25) {
			more++;
			continue;
		}
		labels[nb] = gv_asprintf("%s %s%s%s (%s)%s", rep_orq(rep_jstr(row, "provider")),
					 rep_orq(rep_jstr(row, "instance_type")), rg && *rg ? " " : "", rg && *rg ? rg : "",
					 basis_of(row), row_is_run(row, top) ? " (this machine)" : "");
		/* this machine's type in black, the others in the chart's colour */
		bars[nb] = (struct svg_bar){ labels[nb], v, row_is_run(row, top) ? 6 : color, 0 };
		any |= isfinite(v) && v > 0;
		nb++;
	}
	if (any) {
		const char *mk = rep_jstr(rk, "market");
		title = gv_asprintf("%s per dollar, %s prices%s%s", rank_label(rk, lab, sizeof lab), rep_market_name(mk),
				    mk && !strcmp(mk, "spot") ? " (interruptible, each region's lowest zone)" : "",
				    more ? " (top 25)" : "");
		/* the page's words for the ranking's money unit: $/h, or $/GPU-h where it is per GPU-hour */
		unit = gv_asprintf("%s per %s", rep_orq(rep_jstr(rk, "unit")),
				   strstr(rep_orq(rep_jstr(rk, "value_per_dollar_unit")), "GPU") ? "$/GPU-h" : "$/h");
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
		rep_fmt_val(rep_jnum(top, "value_per_dollar"), buf, sizeof buf);
		fputs("<p class=\"best\">Most per dollar among measured types (", f);
		html_esc(f, rep_jstr(r0, "metric"));
		fputs(", ", f);
		html_esc(f, rep_market_name(rep_jstr(r0, "market")));
		fputs(" prices): <b>", f);
		html_esc(f, rep_jstr(top, "provider"));
		fputs(" ", f);
		html_esc(f, rep_jstr(top, "instance_type"));
		fputs("</b>", f);
		if (rep_jstr(top, "region") && *rep_jstr(top, "region")) {
			fputs(" in ", f);
			html_esc(f, rep_jstr(top, "region"));
		}
		fprintf(f, ", %s ", buf);
		html_esc(f, rep_jstr(r0, "unit"));
		fputs(" per $/h ", f);
		rep_basis_words(f, top, rep_jstr(r0, "unit"));
		fputs(".</p>\n", f);
	}

}

void rep_section_bars(FILE *f, const struct rdoc *d, const struct report_page *pg)
{
	const struct run_sum *top = pg->top;
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
