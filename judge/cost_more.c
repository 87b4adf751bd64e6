/*
 * cost_more.c - what a cost table leaves out, said instead of dropped
 * (issue 48 item 8): how many more types would fit the job as estimates
 * when they were not asked for, and the types of the catalog whose GPU could
 * be estimated but that have no price in the asked market (aws p5e.48xlarge
 * has a spot price only in the shipped catalog), listed as unpriced with why
 * (the walk and the why are judge/unpriced.c's, rank's too).
 */
#include "judge/cost.h"
#include "judge/cost_int.h"
#include "judge/unpriced.h"
#include "results/store.h"
#include "common/gpus.h"

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

struct unlisted {
	json_t *res, *un;       /* the result so far; its "unpriced" list */
};

/* A type without a price in the market (judge/unpriced.c): listed when its GPU has a reference (an estimate could
   be made) and it has no row or entry yet. */
static int take_unpriced(void *ud, const struct price_rec *p, const char *why)
{
	struct unlisted *u = ud;
	if (!gpu_ref_find(p->gpu_model) || listed(json_object_get(u->res, "rows"), p->provider, p->instance_type) ||
	    listed(u->un, p->provider, p->instance_type) ||
	    listed(json_object_get(u->res, "unranked"), p->provider, p->instance_type))
		return 0;
	json_array_append_new(u->un, json_pack("{s:s,s:s,s:s,s:s,s:b}", "provider", p->provider, "instance_type",
					       p->instance_type, "gpu_model", p->gpu_model, "why", why, "estimate", 1));
	return 0;
}

int cost_list_unpriced(struct store *s, const struct cost_opts *o, json_t *res, char *err, size_t errlen)
{
	struct unlisted u = { .res = res, .un = json_object_get(res, "unpriced") };
	if (!json_is_array(u.un)) {
		u.un = json_array();
		json_object_set_new(res, "unpriced", u.un);
	}
	struct price_filter f = { .market = o->market ? o->market : "on_demand", .region = o->region,
				  .max_age_days = o->max_age_days };
	return unpriced_walk(store_db(s), &f, NULL, take_unpriced, &u, err, errlen);
}
