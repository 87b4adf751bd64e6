/*
 * rank_util.c - what the ranking's files share (rank_int.h), below all of
 * them: what a metric is (rankable, per GPU), an entry's GPUs, model and
 * medians, its price per instance or per GPU, the market asked for and the
 * order of the rows.  It calls no other rank file: rank.c dispatches to the
 * parts (rank_gather.c, rank_price.c, rank_estimates.c, rank_value.c,
 * rank_rows.c), and they call down here, never back into rank.c.
 */
#include "judge/rank_int.h"
#include "judge/identity.h"
#include "benches/bench.h"
#include "common/stats.h"

#include <math.h>
#include <string.h>

/* What a metric is comes from the row its bench declares (benches/bench.h, struct metric_info). */
int rank_rankable(const char *m)
{
	const struct metric_info *mi = metric_info_find(m);
	return mi && (mi->flags & METRIC_RANKABLE);
}

/* value at gpu -1 is already per GPU (a link or a rank), not an instance total */
int rank_per_gpu_scope(const char *m)
{
	const struct metric_info *mi = metric_info_find(m);
	return mi && (mi->flags & METRIC_PER_GPU);
}

int rank_of_the_gpus(const char *m)
{
	const char *owner = metric_owner(m);
	const struct bench *b = owner ? bench_find(owner) : NULL;
	return b && (b->flags & BENCH_NEEDS_GPU);
}

int rank_median_of(struct sku *k, const char *metric, double *out)
{
	for (size_t i = 0; i < k->nm; i++) {
		if (strcmp(k->m[i].name, metric))
			continue;
		struct mvals *m = &k->m[i];
		*out = gv_median_inplace(m->v, m->n);
		return 0;
	}
	return -1;
}

double rank_sku_gpus(const struct sku *k)
{
	return !isnan(k->gpus) && k->gpus > 0 ? k->gpus : k->run_gpus;
}

const char *rank_sku_model(const struct sku *k)
{
	return k->gpu_model ? k->gpu_model : k->run_gpu_model;
}

double rank_per_price(const struct rank_opts *o, const struct sku *k)
{
	if (o->per && !strcmp(o->per, "gpu"))
		return k->usd_h / rank_sku_gpus(k);
	return k->usd_h;
}

const char *rank_market_of(const struct ctx *c)
{
	return c->o->market ? c->o->market : "on_demand";
}

int rank_cmp_rows(const void *a, const void *b)
{
	const struct sku *x = *(const struct sku *const *)a, *y = *(const struct sku *const *)b;
	int cx = identity_is_custom(x->provider), cy = identity_is_custom(y->provider);
	if (cx != cy)
		return cx - cy; /* custom machines rank only among themselves, after the catalogued ones */
	/* measured and estimated rows ranked together by value per dollar, each marked: rank 1 is the best row */
	if (x->vpd != y->vpd)
		return x->vpd < y->vpd ? 1 : -1;
	if (x->estimate != y->estimate)
		return x->estimate - y->estimate; /* a tie goes to the measured type */
	int c = strcmp(x->provider, y->provider);
	if (!c)
		c = strcmp(x->itype, y->itype);
	return c ? c : strcmp(x->profile ? x->profile : "", y->profile ? y->profile : "");
}
