/*
 * catalog_list.c - what `gpuvet prices list` shows, computed from the
 * stored rows (catalog.h): one offer per provider, instance type and
 * region with its on-demand and spot prices side by side, the GPU filter
 * (MODEL[:COUNT]), natural name order and a price's age.
 */
#include "pricing/catalog.h"
#include "common/util.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

int natural_cmp(const char *a, const char *b)
{
	while (*a && *b) {
		if (isdigit((unsigned char)*a) && isdigit((unsigned char)*b)) {
			while (*a == '0' && isdigit((unsigned char)a[1]))
				a++;
			while (*b == '0' && isdigit((unsigned char)b[1]))
				b++;
			size_t la = strspn(a, "0123456789"), lb = strspn(b, "0123456789");
			if (la != lb)
				return la < lb ? -1 : 1;
			int c = strncmp(a, b, la);
			if (c)
				return c < 0 ? -1 : 1;
			a += la;
			b += lb;
			continue;
		}
		int ca = tolower((unsigned char)*a), cb = tolower((unsigned char)*b);
		if (ca != cb)
			return ca < cb ? -1 : 1;
		a++;
		b++;
	}
	return *a ? 1 : *b ? -1 : 0;
}

int price_gpu_want_parse(const char *s, struct gpu_want *w, char *err, size_t errlen)
{
	const char *colon = strchr(s, ':');
	size_t n = colon ? (size_t)(colon - s) : strlen(s);
	w->count = NAN;
	if (n == 0 || n >= sizeof w->model) {
		snprintf(err, errlen, "gpu '%s' is not MODEL or MODEL:COUNT (e.g. H100:8)", s);
		return -1;
	}
	memcpy(w->model, s, n);
	w->model[n] = '\0';
	if (colon) {
		long c;
		if (gv_parse_long(colon + 1, 1, PRICE_MAX_GPUS, &c) < 0) {
			snprintf(err, errlen, "gpu count '%s' is not a whole number from 1 to %d", colon + 1,
				 PRICE_MAX_GPUS);
			return -1;
		}
		w->count = (double)c;
	}
	return 0;
}

/* The model is the wanted name, or starts with it followed by '-' or ' ' (A100 finds A100-80-SXM, not A10 A100). */
int price_gpu_matches(const struct gpu_want *w, const char *gpu_model, double gpu_count)
{
	size_t n = strlen(w->model);
	if (strncasecmp(gpu_model, w->model, n) || (gpu_model[n] && gpu_model[n] != '-' && gpu_model[n] != ' '))
		return 0;
	return isnan(w->count) || gpu_count == w->count;
}

long price_age_days(const char *captured_at, time_t now)
{
	struct tm tm = { 0 };
	if (strlen(captured_at) < 10 || sscanf(captured_at, "%4d-%2d-%2d", &tm.tm_year, &tm.tm_mon, &tm.tm_mday) != 3)
		return -1;
	tm.tm_year -= 1900;
	tm.tm_mon -= 1;
	time_t t = timegm(&tm);
	if (t == (time_t)-1)
		return -1;
	return t > now ? 0 : (long)((now - t) / 86400);
}

static int cheaper(const struct price_row *r, const struct price_side *s)
{
	if (!isnan(r->usd_per_hour) && !isnan(s->usd_per_hour))
		return r->usd_per_hour < s->usd_per_hour;
	return r->hourly < s->hourly;
}

static void side_take(struct price_side *s, const struct price_row *r)
{
	s->have = 1;
	s->hourly = r->hourly;
	s->usd_per_hour = r->usd_per_hour;
	s->usd_per_unit = r->usd_per_unit;
	gv_strlcpy(s->currency, r->rec.currency, sizeof s->currency);
	gv_strlcpy(s->source, r->rec.source, sizeof s->source);
	gv_strlcpy(s->captured_at, r->rec.captured_at, sizeof s->captured_at);
	gv_strlcpy(s->zone, r->rec.zone, sizeof s->zone);
	gv_strlcpy(s->fx_captured_at, r->fx_captured_at, sizeof s->fx_captured_at);
}

static struct price_offer *offer_find(struct price_offers *o, const struct price_rec *r)
{
	for (size_t i = o->n; i-- > 0;)
		if (!strcmp(o->v[i].provider, r->provider) && !strcmp(o->v[i].instance_type, r->instance_type) &&
		    !strcmp(o->v[i].region, r->region))
			return &o->v[i];
	if (o->n == o->cap) {
		o->cap = o->cap ? o->cap * 2 : 64;
		o->v = gv_realloc(o->v, o->cap * sizeof *o->v);
	}
	struct price_offer *f = &o->v[o->n++];
	memset(f, 0, sizeof *f);
	gv_strlcpy(f->provider, r->provider, sizeof f->provider);
	gv_strlcpy(f->instance_type, r->instance_type, sizeof f->instance_type);
	gv_strlcpy(f->region, r->region, sizeof f->region);
	f->gpu_count = f->gpu_memory_gib = f->memory_gib = NAN;
	f->vcpus = -1;
	return f;
}

int price_offers_add(struct price_offers *o, const struct price_row *row)
{
	const struct price_rec *r = &row->rec;
	if (strcmp(r->market, "on_demand") && strcmp(r->market, "spot"))
		return 0; /* reserved terms are listed with --records */
	struct price_offer *f = offer_find(o, r);
	struct price_side *s = !strcmp(r->market, "spot") ? &f->spot : &f->od;
	if (s == &f->spot)
		price_zones_add(&f->spot_zones, row);
	if (!s->have || price_source_priority(r->source) > price_source_priority(s->source) ||
	    (price_source_priority(r->source) == price_source_priority(s->source) && cheaper(row, s)))
		side_take(s, row);
	if (!f->gpu_model[0])
		gv_strlcpy(f->gpu_model, r->gpu_model, sizeof f->gpu_model);
	if (isnan(f->gpu_count))
		f->gpu_count = r->gpu_count;
	if (isnan(f->gpu_memory_gib))
		f->gpu_memory_gib = r->gpu_memory_gib;
	if (isnan(f->memory_gib))
		f->memory_gib = r->memory_gib;
	if (f->vcpus < 0)
		f->vcpus = r->vcpus;
	return 1;
}

double price_offer_per_gpu(const struct price_offer *f, const struct price_side *s)
{
	if (!s->have || isnan(s->usd_per_hour) || isnan(f->gpu_count) || f->gpu_count < 1)
		return NAN;
	return s->usd_per_hour / f->gpu_count;
}

/* the offer's headline price: on-demand in USD, else spot; NAN when neither is in USD */
static double headline(const struct price_offer *f, int per_gpu)
{
	const struct price_side *s = f->od.have && !isnan(f->od.usd_per_hour) ? &f->od : &f->spot;
	if (!s->have)
		return NAN;
	return per_gpu ? price_offer_per_gpu(f, s) : s->usd_per_hour;
}

static enum offer_sort sort_by;

static int num_cmp(double a, double b)
{
	if (isnan(a) || isnan(b))
		return isnan(a) - isnan(b); /* unknown last */
	return a < b ? -1 : a > b;
}

static int offer_cmp(const void *pa, const void *pb)
{
	const struct price_offer *a = pa, *b = pb;
	int c = 0;
	if (sort_by == OFFER_SORT_PRICE)
		c = num_cmp(headline(a, 0), headline(b, 0));
	else if (sort_by == OFFER_SORT_GPU_PRICE)
		c = num_cmp(headline(a, 1), headline(b, 1));
	if (!c && sort_by != OFFER_SORT_NAME)
		c = natural_cmp(a->provider, b->provider);
	if (!c && (sort_by == OFFER_SORT_GPU || sort_by == OFFER_SORT_PRICE || sort_by == OFFER_SORT_GPU_PRICE)) {
		c = natural_cmp(a->gpu_model, b->gpu_model);
		if (!c)
			c = num_cmp(a->gpu_count, b->gpu_count);
	}
	if (!c)
		c = natural_cmp(a->instance_type, b->instance_type);
	if (!c && sort_by == OFFER_SORT_NAME)
		c = natural_cmp(a->provider, b->provider);
	if (!c)
		c = natural_cmp(a->region, b->region);
	return c;
}

void price_offers_sort(struct price_offers *o, enum offer_sort by)
{
	sort_by = by;
	if (o->n)
		qsort(o->v, o->n, sizeof *o->v, offer_cmp);
}

/* USD per hour of a side, +inf when it has none (or no rate): never the cheapest. */
static double side_usd(const struct price_side *s)
{
	return s->have && !isnan(s->usd_per_hour) ? s->usd_per_hour : INFINITY;
}

size_t price_offers_cheapest_regions(struct price_offers *o)
{
	size_t out = 0, left = 0;
	price_offers_sort(o, OFFER_SORT_NAME);   /* each type's regions together */
	for (size_t i = 0; i < o->n;) {
		size_t j = i, od = i, sp = i;
		while (j < o->n && !strcmp(o->v[j].instance_type, o->v[i].instance_type) &&
		       !strcmp(o->v[j].provider, o->v[i].provider)) {
			if (side_usd(&o->v[j].od) < side_usd(&o->v[od].od))
				od = j;
			if (side_usd(&o->v[j].spot) < side_usd(&o->v[sp].spot))
				sp = j;
			j++;
		}
		int has_od = isfinite(side_usd(&o->v[od].od)), has_sp = isfinite(side_usd(&o->v[sp].spot));
		for (size_t k = i; k < j; k++) {
			if ((k == od && has_od) || (k == sp && has_sp) || (k == i && !has_od && !has_sp))
				o->v[out++] = o->v[k];   /* moved: its zones go with it */
			else {
				price_zones_free(&o->v[k].spot_zones);
				left++;
			}
		}
		i = j;
	}
	o->n = out;
	return left;
}

void price_offers_free(struct price_offers *o)
{
	for (size_t i = 0; i < o->n; i++)
		price_zones_free(&o->v[i].spot_zones);
	free(o->v);
	memset(o, 0, sizeof *o);
}
