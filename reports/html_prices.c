/*
 * html_prices.c - the report's price list (Provenance), bounded whatever the
 * catalog's size: the PRICE_CHEAPEST_PER_MODEL cheapest prices of each GPU
 * model and market (pricing/catalog_cheapest.c chooses them, in SQL), and
 * for each group the rows not listed, counted, with their price range.
 * A 1.1 M-row catalog is then a table of a few hundred rows; each ranking
 * row names the price it used itself (html_ranking.c).
 */
#include "reports/html.h"
#include "reports/report_int.h"
#include "reports/html_escape.h"
#include "pricing/catalog.h"
#include "results/store.h"
#include "common/util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct price_walk {
	json_t *groups;
	json_t *rows;   /* the group being read */
};

static int take_cheap(void *ud, const struct price_row *row, const struct price_group *last)
{
	struct price_walk *w = ud;
	const struct price_rec *r = &row->rec;
	if (!w->rows)
		w->rows = json_array();
	json_array_append_new(w->rows, json_pack("{s:s,s:s,s:s,s:s,s:f,s:s,s:s,s:s,s:s,s:s,s:s,s:o}",
						 "provider", r->provider, "instance_type", r->instance_type,
						 "region", r->region, "market", r->market, "price", r->price,
						 "currency", r->currency, "source", r->source, "captured_at",
						 r->captured_at, "unit", r->unit, "zone", r->zone, "term", r->term,
						 "usd_per_hour", isnan(row->usd_per_hour) ? json_null()
											 : json_real(row->usd_per_hour)));
	if (!last)
		return 0;
	json_array_append_new(w->groups, json_pack(
		"{s:s,s:s,s:o,s:I,s:I,s:o,s:o,s:I}", "gpu_model", r->gpu_model, "market", r->market, "rows", w->rows,
		"total", (json_int_t)last->total, "rest", (json_int_t)last->rest, "rest_min_usd_h",
		isnan(last->rest_min_usd_h) ? json_null() : json_real(last->rest_min_usd_h), "rest_max_usd_h",
		isnan(last->rest_max_usd_h) ? json_null() : json_real(last->rest_max_usd_h), "unrated",
		(json_int_t)last->unrated));
	w->rows = NULL;
	return 0;
}

json_t *report_load_prices(struct store *s, int max_age_days, char *err, size_t errlen)
{
	struct price_walk w = { .groups = json_array() };
	catalog_cheapest_per_model(store_db(s), PRICE_CHEAPEST_PER_MODEL, max_age_days, take_cheap, &w, err, errlen);
	json_decref(w.rows);   /* a walk stopped by an error mid-group */
	return w.groups;
}

static const char *model_name(json_t *g)
{
	const char *m = rep_jstr(g, "gpu_model");
	return m && *m ? m : "(no GPU model)";
}

static void listed_rows(FILE *f, json_t *groups)
{
	size_t i, j;
	json_t *g, *p;
	json_array_foreach(groups, i, g) {
		json_array_foreach(json_object_get(g, "rows"), j, p) {
			fputs("<tr>", f);
			rep_td_text(f, model_name(g));
			rep_td_text(f, rep_jstr(p, "market"));
			rep_td_text(f, rep_jstr(p, "provider"));
			rep_td_text(f, rep_jstr(p, "instance_type"));
			const char *zone = rep_jstr(p, "zone");
			if (zone && *zone) {   /* spot: one row per zone */
				char *rz = gv_asprintf("%s (%s)", rep_orq(rep_jstr(p, "region")), zone);
				rep_td_text(f, rz);
				free(rz);
			} else {
				rep_td_text(f, rep_jstr(p, "region"));
			}
			rep_td_num(f, rep_jnum(p, "price"), NULL);
			rep_td_text(f, rep_jstr(p, "currency"));
			rep_td_text(f, rep_jstr(p, "unit"));
			rep_td_num(f, rep_jnum(p, "usd_per_hour"), NULL);
			rep_td_text(f, rep_jstr(p, "source"));
			char when[96];   /* a copy date of an undated snapshot is said so */
			rep_td_text(f, price_date_words(rep_jstr(p, "source"), rep_jstr(p, "captured_at"), when, sizeof when));
			fputs("</tr>\n", f);
		}
	}
}

/* Per group that has more than it lists: how many more, and their price range in USD per hour. */
static size_t rest_table(FILE *f, json_t *groups)
{
	size_t i, n = 0;
	json_t *g;
	json_array_foreach(groups, i, g) {
		if (json_integer_value(json_object_get(g, "rest")) <= 0)
			continue;
		if (!n++)
			fputs("<div class=\"scroll\"><table class=\"sortable\" id=\"prices-rest\"><thead><tr><th>GPU model</th>"
			      "<th>market</th><th>prices stored</th><th>listed</th><th>not listed</th>"
			      "<th>their price <small>$/h</small></th></tr></thead><tbody>\n", f);
		long long total = json_integer_value(json_object_get(g, "total"));
		long long rest = json_integer_value(json_object_get(g, "rest"));
		fputs("<tr>", f);
		rep_td_text(f, model_name(g));
		rep_td_text(f, rep_jstr(g, "market"));
		fprintf(f, "<td class=n>%lld</td><td class=n>%lld</td><td class=n>%lld</td>", total,
			total - rest, rest);
		double lo = rep_jnum(g, "rest_min_usd_h"), hi = rep_jnum(g, "rest_max_usd_h");
		char a[32], b[32];
		rep_fmt_val(lo, a, sizeof a);
		rep_fmt_val(hi, b, sizeof b);
		if (isfinite(lo) && isfinite(hi))
			fprintf(f, "<td class=n>%s \xE2\x80\x93 %s</td>", a, b);
		else
			fputs("<td>no rate stored for their currency</td>", f);
		fputs("</tr>\n", f);
	}
	if (n)
		fputs("</tbody></table></div>\n", f);
	return n;
}

void rep_prices_table(FILE *f, const struct rdoc *d)
{
	size_t i;
	json_t *g;
	long long total = 0, listed = 0;
	fputs("<h3>Prices</h3>\n", f);
	if (!json_array_size(d->prices)) {
		if (d->max_age_days > 0)
			fprintf(f, "<p>No price captured in the last %d days (<code>--max-age %d</code>) in the store",
				d->max_age_days, d->max_age_days);
		else
			fputs("<p>No price in the store", f);
		if (d->prices_error) {
			fputs(": ", f);
			html_esc(f, d->prices_error);
		}
		fputs(". Load the shipped catalog with <code>gpuvet prices update</code> or "
		      "<code>gpuvet prices import FILE</code>.</p>\n", f);
		return;
	}
	json_array_foreach(d->prices, i, g) {
		total += json_integer_value(json_object_get(g, "total"));
		listed += (long long)json_array_size(json_object_get(g, "rows"));
	}
	fprintf(f, "<p>The %d cheapest stored prices of each GPU model and market, in US dollars per hour, "
		"with where each comes from and when it was captured; the price each ranked type used is named "
		"in its ranking row. <code>gpuvet prices list</code> lists them all.</p>\n"
		"<div class=\"scroll\"><table class=\"sortable\" id=\"prices\"><thead><tr><th>GPU model</th>"
		"<th>market</th><th>provider</th><th>instance type</th><th>region</th><th>price</th>"
		"<th>currency</th><th>per</th><th>$/h <small>US dollars per hour</small></th><th>source</th>"
		"<th>date</th></tr></thead><tbody>\n", PRICE_CHEAPEST_PER_MODEL);
	listed_rows(f, d->prices);
	fputs("</tbody></table></div>\n", f);
	fprintf(f, "<p class=\"muted\">%lld of %lld stored prices listed", listed, total);
	if (d->max_age_days > 0)
		fprintf(f, "; prices captured over %d days ago are left out here and in the rankings "
			   "(<code>--max-age %d</code>)", d->max_age_days, d->max_age_days);
	fputs(".</p>\n", f);
	if (d->prices_error) {
		fputs("<p class=\"warning\">", f);
		html_esc(f, d->prices_error);
		fputs("</p>\n", f);
	}
	rest_table(f, d->prices);
}
