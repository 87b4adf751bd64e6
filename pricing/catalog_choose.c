/*
 * catalog_choose.c - which stored price a type is priced at (catalog.h):
 * the winning source, a spot price's zones (the lowest and the median of a
 * region), and one type's price in one market and region, with what it
 * says when that region has none.  One owner for the rule, so `prices
 * list`, `rank` and `cost` agree.
 */
#include "pricing/catalog.h"
#include "common/util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int price_source_priority(const char *source)
{
	if (!strncmp(source, "import:", 7))
		return 2;
	return strncmp(source, "catalog:", 8) ? 1 : 0;
}

void price_zones_add(struct price_zones *z, const struct price_row *r)
{
	int prio = price_source_priority(r->rec.source);
	if (z->n && prio < z->prio)
		return;
	if (z->n && prio > z->prio)
		z->n = 0;
	z->prio = prio;
	z->v = gv_realloc(z->v, (z->n + 1) * sizeof *z->v);
	z->v[z->n].usd = r->usd_per_hour;
	gv_strlcpy(z->v[z->n].zone, r->rec.zone, sizeof z->v[z->n].zone);
	z->n++;
}

static int zone_cmp(const void *pa, const void *pb)
{
	const struct price_zone *a = pa, *b = pb;
	if (isnan(a->usd) || isnan(b->usd))
		return isnan(a->usd) - isnan(b->usd);
	if (a->usd != b->usd)
		return a->usd < b->usd ? -1 : 1;
	return strcmp(a->zone, b->zone);
}

const struct price_zone *price_zones_median(struct price_zones *z)
{
	size_t n = 0;
	if (!z->n)
		return NULL;
	qsort(z->v, z->n, sizeof *z->v, zone_cmp);
	while (n < z->n && !isnan(z->v[n].usd))
		n++;
	return n ? &z->v[(n - 1) / 2] : NULL;
}

void price_zones_free(struct price_zones *z)
{
	free(z->v);
	memset(z, 0, sizeof *z);
}

/* ---- one type, one market ---- */

struct place {
	struct price_row best;
	int prio;
	struct price_zones zones;
};

struct places {
	struct place *v;
	size_t n;
};

/* Is row a better price than have: its source wins, then it is cheaper in USD (no rate: after any rate). */
static int better(const struct price_row *row, int prio, const struct price_row *have, int have_prio)
{
	if (prio != have_prio)
		return prio > have_prio;
	if (isnan(row->usd_per_hour) || isnan(have->usd_per_hour))
		return !isnan(row->usd_per_hour) && isnan(have->usd_per_hour);
	return row->usd_per_hour < have->usd_per_hour;
}

static int take_place(void *ud, const struct price_row *row)
{
	struct places *p = ud;
	struct place *pl = NULL;
	for (size_t i = 0; i < p->n && !pl; i++)
		if (!strcmp(p->v[i].best.rec.region, row->rec.region))
			pl = &p->v[i];
	int prio = price_source_priority(row->rec.source);
	if (!pl) {
		p->v = gv_realloc(p->v, (p->n + 1) * sizeof *p->v);
		pl = &p->v[p->n++];
		memset(pl, 0, sizeof *pl);
		pl->best = *row;
		pl->prio = prio;
	} else if (better(row, prio, &pl->best, pl->prio)) {
		pl->best = *row;
		pl->prio = prio;
	}
	price_zones_add(&pl->zones, row);
	return 0;
}

/* The best place among those in region (NULL: all; a place with no region holds in every one). */
static struct place *best_place(struct places *p, const char *region)
{
	struct place *b = NULL;
	for (size_t i = 0; i < p->n; i++) {
		struct place *pl = &p->v[i];
		if (region && pl->best.rec.region[0] && strcmp(pl->best.rec.region, region))
			continue;
		if (!b || better(&pl->best, pl->prio, &b->best, b->prio))
			b = pl;
	}
	return b;
}

int catalog_choose_price(sqlite3 *db, const char *provider, const char *instance_type, const char *market,
			 const char *region, int max_age_days, struct price_choice *out, char *err, size_t errlen)
{
	struct places p = { 0 };
	struct price_filter f = { .provider = provider, .market = market, .instance_type = instance_type,
				  .max_age_days = max_age_days };
	memset(out, 0, sizeof *out);
	out->median_usd_per_hour = NAN;
	int rc = catalog_prices(db, &f, PRICE_ORDER_STORED, take_place, &p, err, errlen);
	if (rc == 0) {
		struct place *b = region && *region ? best_place(&p, region) : NULL;
		if (!b && region && *region && (b = best_place(&p, NULL)) != NULL) {
			out->elsewhere = 1;
			snprintf(out->note, sizeof out->note, "priced at %s; no %sprice in %s",
				 b->best.rec.region[0] ? b->best.rec.region : "any region",
				 !strcmp(market, "spot") ? "spot " : "", region);
		} else if (!b) {
			b = best_place(&p, NULL);
		}
		if (b) {
			out->found = 1;
			out->row = b->best;
			if (!strcmp(market, "spot")) {
				const struct price_zone *m = price_zones_median(&b->zones);
				out->zones = b->zones.n;
				if (m) {
					out->median_usd_per_hour = m->usd;
					gv_strlcpy(out->median_zone, m->zone, sizeof out->median_zone);
				}
			}
		}
	}
	for (size_t i = 0; i < p.n; i++)
		price_zones_free(&p.v[i].zones);
	free(p.v);
	return rc;
}
