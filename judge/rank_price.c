/*
 * rank_price.c - where a ranked SKU is priced (rank_int.h).
 *
 * rank_load_prices gives every SKU its cheapest price in the ranking's
 * market over every region (or --region's), the most specific source first.
 * Then rank_price_places: a measured SKU whose runs
 * were tagged with a region is priced in that region instead, through the
 * one choice of a price (pricing/catalog.h catalog_choose_price: the winning
 * source, for spot the region's lowest zone); when that region has no price,
 * it keeps the cheapest other region's and says so ("priced at us-east-1;
 * no price in eu-west-1").  The other market's price shown beside it is the
 * same region's, or none: never another region's without saying so.
 */
#include "judge/rank_int.h"
#include "pricing/catalog.h"
#include "common/util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static char *dup_or_null(const char *t)
{
	return t && *t ? gv_strdup(t) : NULL;
}

static int source_prio(const char *src)
{
	if (!strncmp(src, "import:", 7))
		return 3;
	if (!strncmp(src, "catalog:", 8))
		return 1;
	return 2;
}

/* Is the row the better price of its SKU: the most specific source, then the cheapest in USD (no rate: last). */
static int better_price(int prio, double usd, int have, int have_prio, double have_usd)
{
	if (!have || prio > have_prio)
		return 1;
	if (prio < have_prio)
		return 0;
	return !isnan(usd) && (isnan(have_usd) || usd < have_usd);
}

/*
 * A price row: its type's entry (made for it), or, when the runs were read first (no estimates
 * asked for, or at most estimates_max: judge/rank_estimates.c), every entry the type's runs made
 * and nothing for a type no run measured: a catalog of 1.1 M types is not held for the few a
 * store has runs of.
 */
static int take_price(void *ud, const struct price_row *row)
{
	struct ctx *c = ud;
	if (!c->runs_first)
		return rank_price_entry(c, rank_sku_get(c, row->rec.provider, row->rec.instance_type, 1), row);
	long first = rank_index_first(c, row->rec.provider, row->rec.instance_type);
	if (first >= 0 && !c->s[first].price_seq)
		c->s[first].price_seq = ++c->price_seq;   /* rank_prices_first_order */
	for (long i = first; i >= 0; i = c->s[i].next_same)
		rank_price_entry(c, &c->s[i], row);
	return 0;
}

int rank_price_entry(struct ctx *c, struct sku *k, const struct price_row *row)
{
	const struct price_rec *r = &row->rec;
	int prio = source_prio(r->source);
	if (c->other) {
		if (better_price(prio, row->usd_per_hour, k->other_priced, k->other_prio, k->other_usd_h)) {
			k->other_priced = 1;
			k->other_prio = prio;
			k->other_usd_h = row->usd_per_hour;
		}
		return 0;
	}
	if (!better_price(prio, row->usd_per_hour, k->priced, k->prio, k->usd_h))
		return 0;
	free(k->region);
	free(k->gpu_model);
	free(k->source);
	free(k->captured);
	k->priced = 1;
	k->prio = prio;
	k->usd_h = row->usd_per_hour;
	gv_strlcpy(k->currency, r->currency, sizeof k->currency);
	k->fx_rate = strcmp(r->currency, "USD") ? row->usd_per_unit : NAN;
	gv_strlcpy(k->fx_date, row->fx_captured_at, sizeof k->fx_date);
	k->region = gv_strdup(r->region);
	gv_strlcpy(k->zone, r->zone, sizeof k->zone);
	k->gpu_model = dup_or_null(r->gpu_model);
	k->gpus = r->gpu_count;
	k->gpu_mem_gib = r->gpu_memory_gib;
	k->source = gv_strdup(r->source);
	k->captured = gv_strdup(r->captured_at);
	return 0;
}

/* The ranking's market, then the other one (on-demand's other is spot, spot's and reserved's on-demand). */
int rank_load_prices(struct ctx *c)
{
	const char *market = c->o->market ? c->o->market : "on_demand";
	struct price_filter f = { .market = market, .region = c->o->region, .max_age_days = c->o->max_age_days };
	if (catalog_prices(c->db, &f, PRICE_ORDER_STORED, take_price, c, c->err, c->errlen) < 0)
		return -1;
	c->other = 1;
	f.market = strcmp(market, "on_demand") ? "on_demand" : "spot";
	int rc = catalog_prices(c->db, &f, PRICE_ORDER_STORED, take_price, c, c->err, c->errlen);
	c->other = 0;
	return rc;
}

static void take_choice(struct sku *k, const struct price_choice *ch)
{
	const struct price_row *row = &ch->row;
	const struct price_rec *r = &row->rec;
	k->priced = 1;
	k->usd_h = row->usd_per_hour;
	gv_strlcpy(k->currency, r->currency, sizeof k->currency);
	k->fx_rate = strcmp(r->currency, "USD") ? row->usd_per_unit : NAN;
	gv_strlcpy(k->fx_date, row->fx_captured_at, sizeof k->fx_date);
	free(k->region);
	k->region = gv_strdup(r->region);
	if (r->gpu_model[0]) {
		free(k->gpu_model);
		k->gpu_model = gv_strdup(r->gpu_model);
	}
	if (!isnan(r->gpu_count))
		k->gpus = r->gpu_count;
	if (!isnan(r->gpu_memory_gib))
		k->gpu_mem_gib = r->gpu_memory_gib;
	free(k->source);
	k->source = gv_strdup(r->source);
	free(k->captured);
	k->captured = gv_strdup(r->captured_at);
	gv_strlcpy(k->zone, r->zone, sizeof k->zone);
	gv_strlcpy(k->price_note, ch->note, sizeof k->price_note);
}

/*
 * Ranking spot: a spot price dearer than on-demand for the same type is named (issue 58 item 8): than on-demand
 * where its runs ran (a type priced in another region for want of spot there), else in its own region.
 */
static int spot_dearer(struct ctx *c, struct sku *k)
{
	struct price_choice ch;
	k->dearer_note[0] = '\0';
	if (strcmp(rank_market_of(c), "spot") || !k->priced || !(k->usd_h > 0))
		return 0;
	if (k->run_region && *k->run_region && !c->o->region && (!k->region || strcmp(k->region, k->run_region))) {
		if (catalog_choose_price(c->db, k->provider, k->itype, "on_demand", k->run_region, c->o->max_age_days, &ch,
					 c->err, c->errlen) < 0)
			return -1;
		if (ch.found && !ch.elsewhere && ch.row.usd_per_hour < k->usd_h)
			snprintf(k->dearer_note, sizeof k->dearer_note, "spot $%.4g/h in %s is dearer than on-demand $%.4g/h "
				 "in %s, where its runs ran", k->usd_h, k->region && *k->region ? k->region : "(any)",
				 ch.row.usd_per_hour, k->run_region);
	} else if (k->other_priced && k->other_usd_h < k->usd_h) {
		snprintf(k->dearer_note, sizeof k->dearer_note, "spot $%.4g/h is dearer than on-demand $%.4g/h in %s",
			 k->usd_h, k->other_usd_h, k->region && *k->region ? k->region : "the same region");
	}
	return 0;
}

/* The other market's price of k, in k's region (none elsewhere: never another region's unsaid). */
static int price_other(struct ctx *c, struct sku *k)
{
	const char *other = strcmp(rank_market_of(c), "on_demand") ? "on_demand" : "spot";
	struct price_choice ch;
	if (!k->priced)
		return 0;
	if (catalog_choose_price(c->db, k->provider, k->itype, other, k->region && *k->region ? k->region : NULL,
				 c->o->max_age_days, &ch, c->err, c->errlen) < 0)
		return -1;
	k->other_priced = ch.found && !ch.elsewhere;
	k->other_prio = ch.found ? price_source_priority(ch.row.rec.source) : 0;
	k->other_usd_h = k->other_priced ? ch.row.usd_per_hour : NAN;
	return spot_dearer(c, k);
}

/*
 * The measured SKUs (entries runs made): priced where they ran, and the other market beside.
 * A type no run measured gets its other market's price once it is kept as a row
 * (rank_keep_rows): a query per priced type of a 1.1 M-type catalog is not made for rows
 * never shown.
 */
int rank_price_places(struct ctx *c)
{
	const char *market = rank_market_of(c);
	struct price_choice ch;
	for (size_t i = 0; i < c->n; i++) {
		struct sku *k = &c->s[i];
		if (!k->profile)
			continue;
		if (k->run_region && !c->o->region) {
			if (catalog_choose_price(c->db, k->provider, k->itype, market, k->run_region, c->o->max_age_days,
						 &ch, c->err, c->errlen) < 0)
				return -1;
			if (ch.found)
				take_choice(k, &ch);
		}
		if (price_other(c, k) < 0)
			return -1;
	}
	return 0;
}

long rank_keep_rows(struct ctx *c, struct sku **order, size_t *nrows)
{
	size_t kept = 0, est = 0;
	long left = 0;
	int max = c->o->estimates_max;
	for (size_t r = 0; r < *nrows; r++) {
		struct sku *k = order[r];
		if (k->estimate && max > 0 && est++ >= (size_t)max) {
			left++;
			continue;
		}
		if (!k->profile && price_other(c, k) < 0)
			return -1;
		order[kept++] = k;
	}
	*nrows = kept;
	return left;
}

/* The sources the rows were priced from whose own date is unknown (pricing: price_source_dated), once each. */
json_t *rank_undated_json(struct sku *const *order, size_t n)
{
	json_t *out = json_array();
	for (size_t i = 0; i < n; i++) {
		const struct sku *k = order[i];
		size_t j;
		json_t *e;
		int seen = 0;
		if (!k->source || price_source_dated(k->source))
			continue;
		json_array_foreach(out, j, e)
			seen |= !strcmp(json_string_value(json_object_get(e, "source")), k->source);
		if (!seen)
			json_array_append_new(out, json_pack("{s:s,s:s,s:s%}", "provider", k->provider, "source", k->source,
							     "copied_at", k->captured ? k->captured : "",
							     k->captured ? (size_t)(strlen(k->captured) < 10 ? strlen(k->captured) : 10) : 0));
	}
	return out;
}

/* Staleness from the source's own date where it is known: a copy date of an undated snapshot says nothing of it. */
json_t *rank_stale_json(struct sku *const *order, size_t n)
{
	json_t *out = json_array();
	time_t now = time(NULL);
	for (size_t i = 0; i < n; i++) {
		const struct sku *k = order[i];
		long age = k->captured ? price_source_age_days(k->source, k->captured, now) : -1;
		if (age <= PRICE_STALE_DAYS)
			continue;
		char date[11];
		gv_strlcpy(date, k->captured, sizeof date);
		size_t j;
		json_t *e;
		int seen = 0;
		json_array_foreach(out, j, e)
			seen |= !strcmp(json_string_value(json_object_get(e, "provider")), k->provider) &&
				!strcmp(json_string_value(json_object_get(e, "captured_at")), date);
		if (!seen)
			json_array_append_new(out, json_pack("{s:s,s:s,s:s,s:I}", "provider", k->provider, "source",
							     k->source ? k->source : "", "captured_at", date, "age_days",
							     (json_int_t)age));
	}
	return out;
}

/* Each kept row's price held to its GPU model's plausible band in the market (pricing/catalog_band.c). */
int rank_price_bands(struct ctx *c, struct sku *const *order, size_t n)
{
	struct price_bands *b = NULL;
	for (size_t i = 0; i < n; i++) {
		struct sku *k = order[i];
		double gpus = rank_sku_gpus(k);
		k->band_note[0] = '\0';
		if (!k->priced || !(k->usd_h > 0) || !(gpus > 0) || !rank_sku_model(k))
			continue;
		if (!b && !(b = price_bands_load(c->db, rank_market_of(c), c->o->max_age_days, c->err, c->errlen)))
			return -1;
		price_band_check(b, rank_sku_model(k), k->usd_h / gpus, k->band_note, sizeof k->band_note);
	}
	price_bands_free(b);
	return 0;
}
