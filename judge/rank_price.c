/*
 * rank_price.c - where a ranked SKU is priced (rank_int.h).
 *
 * load_prices (rank.c) gives every SKU its cheapest price in the ranking's
 * market over every region (or --region's).  Here a measured SKU whose runs
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
	return 0;
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

json_t *rank_stale_json(struct sku *const *order, size_t n)
{
	json_t *out = json_array();
	time_t now = time(NULL);
	for (size_t i = 0; i < n; i++) {
		const struct sku *k = order[i];
		long age = k->captured ? price_age_days(k->captured, now) : -1;
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
