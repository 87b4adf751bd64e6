/*
 * cost_more.c - what a cost table leaves out, said instead of dropped
 * (issue 48 item 8): how many more types would fit the job as estimates
 * when they were not asked for, and the types of the catalog whose GPU could
 * be estimated but that have no price in the asked market (aws p5e.48xlarge
 * has a spot price only in the shipped catalog), listed as unpriced with why.
 */
#include "judge/cost.h"
#include "judge/cost_int.h"
#include "judge/rank.h"
#include "pricing/catalog.h"
#include "results/store.h"
#include "common/gpus.h"

#include <stdio.h>
#include <string.h>

static const char *str(const json_t *o, const char *k)
{
	return json_string_value(json_object_get(o, k));
}

/* Whether list holds an entry for provider's type. */
static int listed(const json_t *list, const char *provider, const char *itype)
{
	size_t i;
	json_t *x;
	json_array_foreach(list, i, x) {
		const char *p = str(x, "provider"), *t = str(x, "instance_type");
		if (p && t && !strcmp(p, provider) && !strcmp(t, itype))
			return 1;
	}
	return 0;
}

long cost_estimates_that_fit(const json_t *with)
{
	json_t *x;
	size_t i;
	long n = 0;
	json_array_foreach(json_object_get(with, "rows"), i, x)
		n += json_is_true(json_object_get(x, "estimate")) && json_is_true(json_object_get(x, "fits"));
	return n;
}

struct walk {
	const struct cost_opts *o;
	const char *market;
	json_t *res, *un;       /* the result so far; its "unpriced" list */
	struct price_rec cur;   /* the type whose rows are passing (PRICE_ORDER_TYPE), its first row */
	int cur_priced;         /* it has a row in market */
};

/* The type that passed: listed when it has no price in market, a GPU with a reference, and no row or entry yet. */
static void finish(struct walk *w)
{
	const struct price_rec *p = &w->cur;
	if (!p->provider[0] || w->cur_priced || !gpu_ref_find(p->gpu_model) ||
	    listed(json_object_get(w->res, "rows"), p->provider, p->instance_type) ||
	    listed(w->un, p->provider, p->instance_type) ||
	    listed(json_object_get(w->res, "unranked"), p->provider, p->instance_type))
		return;
	char why[300];
	rank_no_price_why(w->market, w->o->region, p->provider, why, sizeof why);
	size_t n = strlen(why);
	snprintf(why + n, sizeof why - n, "; the catalog has a %s price only (--market %s)", p->market, p->market);
	json_array_append_new(w->un, json_pack("{s:s,s:s,s:s,s:s,s:b}", "provider", p->provider, "instance_type",
					       p->instance_type, "gpu_model", p->gpu_model, "why", why, "estimate", 1));
}

static int take_price(void *ud, const struct price_row *r)
{
	struct walk *w = ud;
	const struct price_rec *p = &r->rec;
	if (strcmp(p->provider, w->cur.provider) || strcmp(p->instance_type, w->cur.instance_type)) {
		finish(w);
		w->cur = *p;
		w->cur_priced = 0;
	}
	w->cur_priced |= !strcmp(p->market, w->market);
	return 0;
}

int cost_list_unpriced(struct store *s, const struct cost_opts *o, json_t *res, char *err, size_t errlen)
{
	struct walk w = { .o = o, .market = o->market ? o->market : "on_demand", .res = res,
			  .un = json_object_get(res, "unpriced") };
	if (!json_is_array(w.un)) {
		w.un = json_array();
		json_object_set_new(res, "unpriced", w.un);
	}
	struct price_filter f = { .region = o->region, .max_age_days = o->max_age_days };
	int rc = catalog_prices(store_db(s), &f, PRICE_ORDER_TYPE, take_price, &w, err, errlen);
	if (rc == 0)
		finish(&w);
	return rc < 0 ? -1 : 0;
}
