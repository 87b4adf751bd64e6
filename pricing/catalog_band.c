/*
 * catalog_band.c - a GPU model's plausible price (catalog.h, struct
 * price_bands): over every stored price of the model in one market that has a
 * USD rate and a GPU count, the median US dollars per GPU-hour, and the band
 * from a third of it to three times it.  In the shipped catalogs 2,419 of
 * the 2,480 prices sit inside their model's band (97.5 %); the 61 outside
 * are the prices a buyer should look at twice: 8 x A100 40 GB spot at
 * $2.51/h (0.31 per GPU-hour, a quarter of the A100's median spot), a
 * one-T4 type with 64 vCPUs at 3.5 x the T4's median, 8 x V100 at $0.79 per
 * GPU-hour.  A spot price is never flagged high: at or under its own
 * on-demand price is the market's cap, not an error.  One walk over the
 * market's prices for every model.  A listing (`prices list`, `prices
 * cheapest`) loads each market's bands once per call (struct price_band_set)
 * and says each flagged band once, in price_band_words' words.
 */
#include "pricing/catalog.h"
#include "common/stats.h"
#include "common/util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct band_model {
	char model[64];
	double *v, median;
	size_t n, cap;
};

struct price_bands {
	char market[16];
	struct band_model *m;
	size_t n, cap;
};

static struct band_model *band_of(struct price_bands *b, const char *model, int add)
{
	for (size_t i = 0; i < b->n; i++)
		if (!strcmp(b->m[i].model, model))
			return &b->m[i];
	if (!add)
		return NULL;
	if (b->n == b->cap) {
		b->cap = b->cap ? 2 * b->cap : 16;
		b->m = gv_realloc(b->m, b->cap * sizeof *b->m);
	}
	struct band_model *m = &b->m[b->n++];
	memset(m, 0, sizeof *m);
	gv_strlcpy(m->model, model, sizeof m->model);
	return m;
}

static int take(void *ud, const struct price_row *r)
{
	struct price_bands *b = ud;
	if (!r->rec.gpu_model[0] || !(r->rec.gpu_count > 0) || !(r->usd_per_hour > 0))
		return 0;
	struct band_model *m = band_of(b, r->rec.gpu_model, 1);
	if (m->n == m->cap) {
		m->cap = m->cap ? 2 * m->cap : 64;
		m->v = gv_realloc(m->v, m->cap * sizeof *m->v);
	}
	m->v[m->n++] = r->usd_per_hour / r->rec.gpu_count;
	return 0;
}

struct price_bands *price_bands_load(sqlite3 *db, const char *market, int max_age_days, char *err, size_t errlen)
{
	struct price_bands *b = gv_calloc(1, sizeof *b);
	struct price_filter f = { .market = market, .max_age_days = max_age_days };
	gv_strlcpy(b->market, market, sizeof b->market);
	if (catalog_prices(db, &f, PRICE_ORDER_STORED, take, b, err, errlen) < 0) {
		price_bands_free(b);
		return NULL;
	}
	for (size_t i = 0; i < b->n; i++) {   /* the values are not kept: the median is all a band needs */
		b->m[i].median = gv_median_inplace(b->m[i].v, b->m[i].n);
		free(b->m[i].v);
		b->m[i].v = NULL;
	}
	return b;
}

int price_band_test(const struct price_bands *b, const char *model, double usd_per_gpu_hour, struct price_band_hit *h)
{
	struct band_model *m = b && model ? band_of((struct price_bands *)b, model, 0) : NULL;
	memset(h, 0, sizeof *h);
	if (!m || m->n < PRICE_BAND_MIN_PRICES || !(usd_per_gpu_hour > 0) || !(m->median > 0))
		return 0;
	double lo = m->median / PRICE_BAND_FACTOR, hi = m->median * PRICE_BAND_FACTOR;
	if (usd_per_gpu_hour >= lo && (!strcmp(b->market, "spot") || usd_per_gpu_hour <= hi))
		return 0;
	gv_strlcpy(h->model, model, sizeof h->model);
	gv_strlcpy(h->market, b->market, sizeof h->market);
	h->low = lo;
	h->high = hi;
	h->median = m->median;
	h->prices = m->n;
	char words[200];
	snprintf(h->note, sizeof h->note, "$%.3g per GPU-hour is %s %s: check it before you rely on it",
		 usd_per_gpu_hour, usd_per_gpu_hour < lo ? "under" : "over", price_band_words(h, words, sizeof words));
	return 1;
}

const char *price_band_words(const struct price_band_hit *h, char *buf, size_t n)
{
	snprintf(buf, n, "the plausible band of %s %s prices ($%.3g-%.3g: a third to 3x the median of %zu stored)",
		 h->model, !strcmp(h->market, "spot") ? "spot" : "on-demand", h->low, h->high, h->prices);
	return buf;
}

int price_band_check(const struct price_bands *b, const char *model, double usd_per_gpu_hour, char *note, size_t n)
{
	struct price_band_hit h;
	int out = price_band_test(b, model, usd_per_gpu_hour, &h);
	gv_strlcpy(note, h.note, n);
	return out;
}

int price_band_set_check(struct price_band_set *s, const char *market, const char *model, double usd_per_gpu_hour,
			 struct price_band_hit *h, char *err, size_t errlen)
{
	int spot = market && !strcmp(market, "spot");
	struct price_bands **b = spot ? &s->spot : &s->od;
	memset(h, 0, sizeof *h);
	if (!market || (!spot && strcmp(market, "on_demand")) || !model || !model[0] || !(usd_per_gpu_hour > 0))
		return 0;
	if (!*b && !(*b = price_bands_load(s->db, market, s->max_age_days, err, errlen)))
		return -1;
	if (!price_band_test(*b, model, usd_per_gpu_hour, h))
		return 0;
	for (size_t i = 0; i < s->nflagged; i++)   /* each (model, market) said once under the table */
		if (!strcmp(s->flagged[i].model, h->model) && !strcmp(s->flagged[i].market, h->market))
			return 1;
	s->flagged = gv_realloc(s->flagged, (s->nflagged + 1) * sizeof *s->flagged);
	s->flagged[s->nflagged++] = *h;
	return 1;
}

void price_band_set_free(struct price_band_set *s)
{
	price_bands_free(s->od);
	price_bands_free(s->spot);
	free(s->flagged);
	s->od = s->spot = NULL;
	s->flagged = NULL;
	s->nflagged = 0;
}

void price_bands_free(struct price_bands *b)
{
	if (!b)
		return;
	for (size_t i = 0; i < b->n; i++)
		free(b->m[i].v);
	free(b->m);
	free(b);
}
