/*
 * rank_value.c - the value each entry shows per component and per dollar
 * (rank.c's steps "the value each SKU shows" and "value the SKUs per
 * dollar"): its median, else with include_estimates what its GPU model
 * achieved in the stored runs or the model's achievable reference; priced,
 * a row, or said why not in unpriced or unranked.  rank.c loops over the
 * entries with it; rank_estimates.c values each streamed type with
 * rank_estimate_row.
 */
#include "judge/rank_int.h"
#include "judge/unpriced.h"
#include "common/gpus.h"
#include "common/stats.h"
#include "common/util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * The median per-GPU value of metric over the counted runs of every SKU
 * with k's GPU model (an instance total divided by that SKU's GPU count),
 * of one profile: the most sustained one that has such runs (profiles are
 * not mixed; rank_profile_pref).
 * -1 when no such run is stored.
 */
static int measured_per_gpu(const struct ctx *c, const struct sku *k, const char *metric, double *out, size_t *nrun,
			    const char **profile)
{
	const char *prof[8];
	size_t count[8] = { 0 }, np = 0, best = 0;
	double *v = NULL;
	size_t n = 0;
	int scope = rank_per_gpu_scope(metric);
	for (int pass = 0; pass < 2; pass++) {
		/* the entries runs made, listed once: an estimate per priced type is not a pass over every type */
		for (size_t x = 0; x < c->nprofiled; x++) {
			const struct sku *j = &c->s[c->profiled[x]];
			double g = scope ? 1 : rank_sku_gpus(j);
			if (j == k || !j->profile || !(g > 0) || !gpu_same_model(rank_sku_model(j), rank_sku_model(k)))
				continue;
			size_t p;
			for (p = 0; p < np && strcmp(prof[p], j->profile); p++)
				;
			if (p == np && pass == 0 && np < 8)
				prof[np++] = j->profile;
			if (p >= np || (pass == 1 && p != best))
				continue;
			for (size_t q = 0; q < j->nm; q++)
				if (!strcmp(j->m[q].name, metric))
					for (size_t r = 0; r < j->m[q].n; r++) {
						if (pass == 0) {
							count[p]++;
							continue;
						}
						v = gv_realloc(v, (n + 1) * sizeof *v);
						v[n++] = j->m[q].v[r] / g;
					}
		}
		for (size_t p = 1; pass == 0 && p < np; p++)
			if (count[p] && (!count[best] || rank_profile_pref(prof[p]) < rank_profile_pref(prof[best])))
				best = p;
		if (pass == 0 && (!np || !count[best]))
			break;
	}
	if (n) {
		*out = gv_median_inplace(v, n);
		*profile = prof[best];
	}
	free(v);
	*nrun = n;
	return n ? 0 : -1;
}

/*
 * An unmeasured SKU's value of metric: what its GPU model achieved in the
 * stored runs, else the model's achievable reference, times its GPU count
 * (instance totals); never the datasheet peak.  Its basis goes to
 * k->basis.  -1 when there is neither.
 */
static int estimate_of(const struct ctx *c, struct sku *k, const char *metric, double *out)
{
	const char *model = rank_sku_model(k), *src = NULL, *prof = NULL;
	double per = 0, gpus = rank_per_gpu_scope(metric) ? 1 : rank_sku_gpus(k);
	size_t nrun = 0;
	if (!model || !(gpus > 0) || !rank_of_the_gpus(metric))   /* a host figure: only the type's own runs tell it */
		return -1;
	if (measured_per_gpu(c, k, metric, &per, &nrun, &prof) == 0) {
		snprintf(k->basis, sizeof k->basis, "measured: %s, median of %zu stored %s run(s) (%s), %.4g per GPU",
			 model, nrun, prof, rank_profile_basis(prof), per);
		k->est_kind = rank_profile_basis(prof);
		k->est_from_ref = 0;
	} else {
		const struct gpu_ref *ref = gpu_ref_find(model);
		enum gpu_ref_kind kind;
		if (gpu_reference_metric(ref ? ref->key : model, metric, &per, &kind, &src) < 0 || !(per > 0))
			return -1;
		snprintf(k->basis, sizeof k->basis, "reference (%s): %s %.4g per GPU (%.48s...)",
			 gpu_ref_kind_name(kind), model, per, src ? src : "");
		k->est_kind = gpu_ref_kind_name(kind);
		k->est_from_ref = 1;
	}
	*out = per * gpus;
	return 0;
}

/* the value shown for --per (per GPU: instance totals divided) */
static double per_value(const struct rank_opts *o, const struct sku *k, const char *metric, double v)
{
	if (o->per && !strcmp(o->per, "gpu") && !rank_per_gpu_scope(metric))
		return v / rank_sku_gpus(k);
	return v;
}

/* k's value per component into val (NAN none): its median, else its estimate; a SKU with any measured
   component is measured (*meas), never an estimate (*est). */
void rank_shown_one(const struct ctx *c, const struct components *cp, int per_gpu, struct sku *k, double *val,
		    int *meas, int *est)
{
	const struct rank_opts *o = c->o;
	for (size_t j = 0; j < cp->n; j++) {
		double v;
		val[j] = NAN;
		if (rank_median_of(k, cp->names[j], &v) == 0) {
			*meas = 1;
		} else if (!o->include_estimates || estimate_of(c, k, cp->names[j], &v) < 0) {
			continue;
		} else {
			*est = 1;
		}
		if (per_gpu && !(rank_sku_gpus(k) > 0))
			continue;
		val[j] = per_value(o, k, cp->names[j], v);
	}
	if (*meas) {
		*est = 0;
		for (size_t j = 0; j < cp->n; j++)
			if (rank_median_of(k, cp->names[j], &(double){ 0 }) < 0)
				val[j] = NAN;
	}
}

/* k valued per dollar (a row: 1), or said why not in unpriced or unranked (0); -1 when it has no value. */
int rank_value_one(struct ctx *c, const struct components *cp, const double *val, int meas, int est,
		   int composite, struct sku *k, json_t *unpriced, json_t *unranked)
{
	size_t nn = cp->n;
	int have = 0;
	for (size_t j = 0; j < nn; j++)
		have |= !isnan(val[j]);
	if (!have) {
		/* an estimate was asked for and cannot be made: said, not dropped */
		if (c->o->include_estimates && k->priced && !k->profile && nn)
			json_array_append_new(unranked, rank_unranked_json(k, cp->names[0]));
		return -1;
	}
	if (!k->priced || isnan(k->usd_h)) {
		/* measured but not priced in this market, or priced in a currency without a rate: said why */
		if (!meas && !k->priced)
			return 0;
		char why[200];
		if (!k->priced)
			unpriced_why(rank_market_of(c), c->o->region, k->provider, why, sizeof why);
		else
			snprintf(why, sizeof why, "no %s rate stored for its %s price (gpuvet prices fx %s RATE"
				 " --date D --source S)", k->currency, rank_market_of(c), k->currency);
		json_t *e = json_pack("{s:s,s:s,s:s?,s:I,s:s,s:b}", "provider", k->provider, "instance_type", k->itype,
				      "profile", k->profile, "runs", (json_int_t)k->nhave, "why", why, "estimate", !meas);
		rank_score_sku(k, cp, val, composite);   /* a measured type keeps its value without a price */
		if (isfinite(k->value))
			json_object_set_new(e, "value", json_real(k->value));
		json_array_append_new(unpriced, e);
		return 0;
	}
	double price = rank_per_price(c->o, k);
	if (!(price > 0))
		return 0;
	rank_score_sku(k, cp, val, composite);
	k->vpd = k->value / price;
	k->estimate = est;
	return 1;
}

int rank_estimate_row(struct ctx *c, const struct components *cp, int per_gpu, int composite, struct sku *k,
		      json_t *unpriced, json_t *unranked)
{
	double *val = gv_malloc((cp->n ? cp->n : 1) * sizeof *val);
	int meas = 0, est = 0;
	rank_shown_one(c, cp, per_gpu, k, val, &meas, &est);
	int r = rank_value_one(c, cp, val, meas, est, composite, k, unpriced, unranked);
	free(val);
	return r > 0;
}
