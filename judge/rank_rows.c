/*
 * rank_rows.c - the ranking's score with its fixed units, and the JSON each
 * row and the result are written as (judge/rank.c computes what they say;
 * docs/ranking.md is the user's account of every field).
 */
#include "judge/rank_int.h"
#include "pricing/catalog.h"
#include "judge/identity.h"
#include "benches/bench.h"
#include "common/gpus.h"
#include "common/util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * The score's fixed units: a component scores value / unit.  Instance totals
 * (GEMM, NVMe, object store) and per-GPU or per-link figures (memcpy,
 * all-reduce) each in the unit a good current machine reaches the order of.
 * multi: applies to 2 GPUs or more only.
 */
static const struct score_unit {
	const char *pattern;
	double unit;
	int multi;
} score_units[] = {
	{ "gemm.*.tflops", 1000, 0 }, { "gemm.*.best_shape.tflops", 1000, 0 }, { "soak.tflops.first_min", 1000, 0 },
	{ "soak.tflops.last_min", 1000, 0 }, { "allreduce.busbw.gbps", 400, 1 }, { "allreduce.algbw.gbps", 400, 1 },
	{ "memcpy.d2d.gbps", 3000, 0 }, { "memcpy.*.pinned.gbps", 50, 0 }, { "memcpy.*.pageable.gbps", 50, 0 },
	{ "ingest.gbps", 50, 0 }, { "nvme.seqread.gbps", 10, 0 }, { "nvme.seqwrite.gbps", 10, 0 },
	{ "nvme.randread.kiops", 1000, 0 }, { "objstore.get.gbps", 10, 0 }, { "objstore.put.gbps", 10, 0 },
	{ "host.membw.copy.gbps", 100, 0 }, { "host.membw.triad.gbps", 100, 0 },
	{ "host.decode.images_per_s", 10000, 0 }, { "host.decode.images_per_s_per_gpu", 2000, 0 },
	{ "host.staging.shm.gbps", 10, 0 },
};

static const struct score_unit *score_unit_of(const char *m)
{
	for (size_t i = 0; i < sizeof score_units / sizeof score_units[0]; i++)
		if (metric_name_matches(score_units[i].pattern, m))
			return &score_units[i];
	return NULL;
}

/* min, max and coefficient of variation (percent; 0 for one run) of the SKU's values of metric */
/* Every region the type's runs came from, most runs first, and how many ran there (an estimate: null). */
static json_t *run_regions_json(const struct sku *k)
{
	int order[RANK_RUN_REGIONS];
	if (k->estimate || !k->nrr)
		return json_null();
	for (int i = 0; i < k->nrr; i++) {
		int j = i;
		while (j > 0 && k->rr[order[j - 1]].runs < k->rr[i].runs) {
			order[j] = order[j - 1];
			j--;
		}
		order[j] = i;
	}
	json_t *a = json_array();
	for (int i = 0; i < k->nrr; i++)
		json_array_append_new(a, json_pack("{s:s,s:i}", "region", k->rr[order[i]].name, "runs", k->rr[order[i]].runs));
	if (k->rr_more)
		json_array_append_new(a, json_pack("{s:n,s:i}", "region", "runs", k->rr_more));
	return a;
}

static json_t *spread_json(const struct sku *k, const char *metric)
{
	for (size_t i = 0; i < k->nm; i++) {
		if (strcmp(k->m[i].name, metric) || !k->m[i].n)
			continue;
		const struct mvals *m = &k->m[i];
		double lo = m->v[0], hi = m->v[0], sum = 0, sq = 0;
		for (size_t j = 0; j < m->n; j++) {
			lo = m->v[j] < lo ? m->v[j] : lo;
			hi = m->v[j] > hi ? m->v[j] : hi;
			sum += m->v[j];
		}
		double mean = sum / (double)m->n;
		for (size_t j = 0; j < m->n; j++)
			sq += (m->v[j] - mean) * (m->v[j] - mean);
		double cv = m->n > 1 && mean != 0 ? 100.0 * sqrt(sq / (double)(m->n - 1)) / fabs(mean) : 0;
		return json_pack("{s:s,s:f,s:f,s:f}", "metric", metric, "min", lo, "max", hi, "cv_pct", cv);
	}
	return json_null();
}

/*
 * k's value: the component's, or the score: the weighted mean of the
 * components that apply, each over its fixed unit (score_units).
 */
void rank_score_sku(struct sku *k, const struct components *cp, const double *val, int composite)
{
	if (!composite) {
		k->value = val[0];
		return;
	}
	double sw = 0, sv = 0, gpus = rank_sku_gpus(k);
	/* an estimate kept by the bounded stream (judge/rank_estimates.c) is valued again with the rest */
	json_decref(k->components);
	json_decref(k->missing);
	json_decref(k->not_applicable);
	k->components = json_object();
	k->missing = json_array();
	k->not_applicable = json_array();
	for (size_t j = 0; j < cp->n; j++) {
		const struct score_unit *u = score_unit_of(cp->names[j]);
		if (!u)
			continue;
		if (u->multi && gpus > 0 && gpus < 2) {
			json_array_append_new(k->not_applicable, json_string(cp->names[j]));
			continue;
		}
		sw += cp->weights[j];
		double v = val[j];
		if (isnan(v)) {
			json_array_append_new(k->missing, json_string(cp->names[j]));
			continue;
		}
		sv += cp->weights[j] * v / u->unit;
		json_object_set_new(k->components, cp->names[j], json_real(v / u->unit));
	}
	k->value = sw > 0 ? sv / sw : 0;
}

/* Why a priced SKU without runs has no estimate of metric: its model has no such path or no reference. */
json_t *rank_unranked_json(const struct sku *k, const char *metric)
{
	const char *model = rank_sku_model(k);
	const struct gpu_ref *ref = gpu_ref_find(model);
	char why[200], dt[16];
	if (!rank_of_the_gpus(metric))
		snprintf(why, sizeof why, "%s is the host's, not the GPUs': only runs of this instance type tell it (never "
			 "estimated from another type or scaled by GPUs)", metric);
	else if (!model)
		snprintf(why, sizeof why, "the catalog names no GPU model for it");
	else if (!ref)
		snprintf(why, sizeof why, "GPU model %s has no reference in gpuvet's table (docs/acceptance.md)", model);
	else if (sscanf(metric, "gemm.%15[a-z0-9].tflops", dt) == 1 && gpu_dtype_from_name(dt) >= 0 &&
		 !(ref->peak_tflops[gpu_dtype_from_name(dt)] > 0))
		snprintf(why, sizeof why, "%s has no %s path: rank it with --metric gemm.%s.tflops", model, dt,
			 gpu_dtype_name(gpu_headline_dtype(ref)));
	else
		snprintf(why, sizeof why, "no reference for %s on %s in gpuvet's table (docs/acceptance.md)", metric, model);
	return json_pack("{s:s,s:s,s:s?,s:s}", "provider", k->provider, "instance_type", k->itype, "gpu_model", model,
			 "why", why);
}

/* A price per the request's --per, or null. */
static json_t *per_price_json(const struct ctx *c, const struct sku *k, int priced, double usd_h)
{
	if (!priced || isnan(usd_h))
		return json_null();
	double p = c->o->per && !strcmp(c->o->per, "gpu") ? usd_h / rank_sku_gpus(k) : usd_h;
	return p > 0 ? json_real(p) : json_null();
}

/*
 * On-demand and spot side by side (price and value per dollar of each, null
 * where the SKU has none), and the rate behind a converted price.
 */
static void market_columns(const struct ctx *c, const struct sku *k, json_t *row)
{
	int spot = !strcmp(rank_market_of(c), "spot");
	json_t *od = spot ? per_price_json(c, k, k->other_priced, k->other_usd_h) : per_price_json(c, k, 1, k->usd_h);
	json_t *sp = spot ? per_price_json(c, k, 1, k->usd_h) : per_price_json(c, k, k->other_priced, k->other_usd_h);
	if (!strcmp(rank_market_of(c), "reserved")) {
		json_decref(sp);
		sp = json_null();
	}
	json_object_set_new(row, "value_per_dollar_on_demand",
			    json_is_number(od) ? json_real(k->value / json_number_value(od)) : json_null());
	json_object_set_new(row, "value_per_dollar_spot",
			    json_is_number(sp) ? json_real(k->value / json_number_value(sp)) : json_null());
	json_object_set_new(row, "on_demand_price_per_hour", od);
	json_object_set_new(row, "spot_price_per_hour", sp);
	json_object_set_new(row, "price_fx", isnan(k->fx_rate) ? json_null() :
			    json_pack("{s:s,s:f,s:s}", "currency", k->currency, "usd_per_unit", k->fx_rate,
				      "captured_at", k->fx_date));
}

/* GPU memory (GiB) and measured device-memory bandwidth (GB/s per GPU) per dollar-hour; null where unknown */
static void memory_columns(const struct ctx *c, const struct sku *k, json_t *row)
{
	double gpus = rank_sku_gpus(k), bw;
	int per_gpu = c->o->per && !strcmp(c->o->per, "gpu");
	double mem = k->gpu_mem_gib * (per_gpu ? 1 : gpus);
	double price = rank_per_price(c->o, k);
	json_object_set_new(row, "gpu_memory_gib", isfinite(mem) && mem > 0 ? json_real(mem) : json_null());
	json_object_set_new(row, "gpu_memory_gib_per_dollar",
			    isfinite(mem) && mem > 0 && price > 0 ? json_real(mem / price) : json_null());
	int have = !k->estimate && gpus > 0 && isfinite(k->usd_h) && rank_median_of((struct sku *)k, MEMBW_METRIC, &bw) == 0;
	json_object_set_new(row, "mem_bw_gbps_per_dollar", have ? json_real(bw / (k->usd_h / gpus)) : json_null());
}

json_t *rank_row_json(struct ctx *c, const struct sku *k, size_t rank, int composite)
{
	json_t *flags = json_array();
	for (size_t f = 0; f < k->nflags; f++)
		json_array_append_new(flags, json_string(k->flags[f]));
	double gpus = rank_sku_gpus(k);
	const char *model = k->gpu_model ? k->gpu_model : k->run_gpu_model;
	json_t *row = json_object();
	json_object_set_new(row, "rank", json_integer((json_int_t)rank));
	json_object_set_new(row, "provider", json_string(k->provider));
	json_object_set_new(row, "instance_type", json_string(k->itype));
	json_object_set_new(row, "region", json_string(k->region ? k->region : ""));
	json_object_set_new(row, "gpu_model", model ? json_string(model) : json_null());
	json_object_set_new(row, "gpu_count", gpus > 0 ? json_real(gpus) : json_null());
	json_object_set_new(row, "price_per_hour", json_real(rank_per_price(c->o, k)));
	json_object_set_new(row, "currency", json_string("USD"));
	json_object_set_new(row, "price_source", json_string(k->source ? k->source : ""));
	json_object_set_new(row, "price_captured_at", json_string(k->captured ? k->captured : ""));
	/* false: price_captured_at is the day an undated snapshot was copied, not the price's own date */
	json_object_set_new(row, "price_date_known", json_boolean(!k->source || price_source_dated(k->source)));
	json_object_set_new(row, "value", json_real(k->value));
	json_object_set_new(row, "value_per_dollar", json_real(k->vpd));
	json_object_set_new(row, "runs",
			    json_integer(k->estimate ? 0 : k->nhave));
	json_object_set_new(row, "profile", !k->estimate && k->profile ? json_string(k->profile) : json_null());
	json_object_set_new(row, "spread", k->estimate ? json_null() : spread_json(k, c->first_component));
	json_object_set_new(row, "flags", flags);
	json_object_set_new(row, "estimate", json_boolean(k->estimate));
	json_object_set_new(row, "estimate_basis", k->estimate ? json_string(k->basis) : json_null());
	json_object_set_new(row, "custom", json_boolean(identity_is_custom(k->provider)));
	json_object_set_new(row, "interruptible", json_boolean(!strcmp(rank_market_of(c), "spot")));
	/* where: spot is the region's lowest zone; a run priced elsewhere than it ran says so */
	json_object_set_new(row, "zone", k->zone[0] ? json_string(k->zone) : json_null());
	json_object_set_new(row, "run_region", !k->estimate && k->run_region ? json_string(k->run_region) : json_null());
	json_object_set_new(row, "run_regions", run_regions_json(k));
	json_object_set_new(row, "price_note", k->price_note[0] ? json_string(k->price_note) : json_null());
	json_object_set_new(row, "spot_dearer_note", k->dearer_note[0] ? json_string(k->dearer_note) : json_null());
	json_object_set_new(row, "price_band_note", k->band_note[0] ? json_string(k->band_note) : json_null());
	market_columns(c, k, row);
	memory_columns(c, k, row);
	rank_basis_columns(k, row);
	if (composite) {
		json_object_set(row, "components", k->components);
		json_object_set(row, "missing", k->missing);
		json_object_set(row, "not_applicable", k->not_applicable);
	}
	return row;
}

json_t *rank_result_json(const struct rank_opts *o, const char *metric, const char *market, const char *per,
			   const char *unit, const struct components *cp, int composite, json_t *rows,
			   json_t *unpriced, long left_out, json_t *left)
{
	json_t *res = json_object();
	json_object_set_new(res, "metric", json_string(metric));
	json_object_set_new(res, "unit", json_string(unit));
	json_object_set_new(res, "value_per_dollar_unit",
			    json_string(!strcmp(per, "gpu") ? "per USD per GPU-hour" : "per USD per instance-hour"));
	json_object_set_new(res, "market", json_string(market));
	json_object_set_new(res, "per", json_string(per));
	json_object_set_new(res, "region", o->region ? json_string(o->region) : json_null());
	if (composite) {
		json_t *w = json_object();
		for (size_t j = 0; j < cp->n; j++)
			json_object_set_new(w, cp->names[j], json_real(cp->weights[j]));
		json_object_set_new(res, "weights", w);
		json_t *u = json_object();
		for (size_t j = 0; j < cp->n; j++) {
			const struct score_unit *su = score_unit_of(cp->names[j]);
			if (su)
				json_object_set_new(u, cp->names[j], json_real(su->unit));
		}
		json_object_set_new(res, "units", u);
		json_object_set_new(res, "normalisation",
				    json_string("each component divided by its fixed unit (units); weighted mean over the "
						"components that apply (all-reduce: 2 GPUs or more), a missing one counting "
						"0; ranked by score per USD-hour (docs/ranking.md)"));
	}
	json_object_set_new(res, "rows", rows);
	json_object_set_new(res, "unpriced", unpriced);
	json_object_set_new(res, "runs_left_out", json_integer(left_out));
	json_object_set_new(res, "left_out", left);
	json_object_set_new(res, "runs_left_out_reason",
			    json_string(o->include_flagged ? "" : "critical flags (--include-flagged to count them)"));
	return res;
}
