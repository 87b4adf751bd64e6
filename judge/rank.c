/*
 * rank.c - instance types ordered by a metric per dollar (see rank.h).
 *
 * The formulas, written down once (docs/ranking.md holds them for users):
 *
 *   SKU       provider + instance type.  Runs join prices on both (and on
 *             the region when --region is given: the run's region and the
 *             price's region, a price with no region holding everywhere).
 *   price     one price row per SKU and market: the most specific source
 *             wins (import > live fetch > shipped catalog), then the lowest
 *             hourly price in US dollars (months are 730 h; other currencies
 *             through their stored fx rate), so without --region the
 *             cheapest region is shown, and named.
 *   value     the median over the SKU's runs of the metric's instance-level
 *             row (gpu = -1); runs = how many runs had it; flags = every flag
 *             code those runs raised.
 *   per       instance: value / price per hour.  gpu: the value per GPU
 *             (instance totals such as GEMM TFLOP/s, NVMe and object-store
 *             bandwidth divided by the GPU count) over the price per GPU-hour.
 *             A metric whose row says METRIC_PER_GPU (memcpy.*, allreduce.*:
 *             already per GPU or link) is always over the price per GPU-hour:
 *             a per-GPU figure over an instance's price mixes units.
 *   profile   runs of different profiles (quick, standard, full) are never in
 *             one median: a SKU has an entry per profile, and one row, valued
 *             by its most sustained profile, the others beside it
 *             (judge/rank_profile.c owns that rule and the basis words).
 *   spread    each row's runs, min and max of the metric and its coefficient
 *             of variation (a score: of its first component).
 *   score.*   composites with a fixed definition, the same number whatever
 *             else is in the table (docs/ranking.md): each component m scores
 *             v_m / U_m with U_m a fixed unit (score_units in rank_rows.c: 1000 TFLOP/s,
 *             400 GB/s of all-reduce, 10 GB/s of NVMe...); score =
 *             sum(w_m v_m / U_m) / sum(w_m) over the components that apply
 *             (all-reduce applies to 2 GPUs or more: a 1-GPU instance is not
 *             capped by it), a measured-but-missing one counting 0 (listed in
 *             "missing"); ranked by score per dollar-hour.  Weights:
 *               score.training  gemm.bf16.tflops 1, allreduce.busbw.gbps 1
 *               score.data      nvme.seqread.gbps, nvme.seqwrite.gbps,
 *                               nvme.randread.kiops, objstore.get.gbps,
 *                               objstore.put.gbps, 1 each
 *               score.all       every throughput metric any run has that has
 *                               a unit in score_units, 1 each
 *   memory    gpu_memory_gib_per_dollar: the SKU's GPU memory (catalog) over
 *             its price; mem_bw_gbps_per_dollar: the median measured
 *             memcpy.d2d.gbps per GPU over the price per GPU-hour (measured
 *             rows only).
 *   custom    a custom provider (judge/identity.h) ranks only among custom
 *             rows: after every catalogued row, numbered apart.
 *   estimate  with include_estimates, a priced SKU without a run gets, for
 *             each metric, the median per-GPU value of the stored runs of
 *             SKUs with the same GPU model x its GPU count ("measured"
 *             basis), else the model's achievable reference x GPU count
 *             (common/gpus.h gpu_reference_metric: GEMM and pinned copies),
 *             never the datasheet peak; "estimate": true with its
 *             "estimate_basis", ordered after every measured SKU.
 *   flags     runs with a critical flag are left out unless include_flagged:
 *             counted in "runs_left_out" and listed in "left_out" (run,
 *             SKU, profile, flag codes).
 *   markets   the ranking's market prices the order; the other one (spot
 *             beside on-demand) is shown with its own value per dollar.
 *   currency  every price in US dollars through its stored, dated rate; a
 *             SKU whose winning price has no rate is not ranked but listed
 *             in "unpriced" with why.
 *   unpriced  with include_estimates, a catalog type with no price in the
 *             market (judge/unpriced.c, cost's rule too) that could be
 *             estimated is listed in "unpriced" after the measured ones, an
 *             estimate with its value, basis and why ("the catalog has a
 *             spot price only (--market spot)").
 *
 * Only throughput metrics (METRIC_RANKABLE in the rows each bench declares:
 * .tflops, .gbps, .kiops, .images_per_s) are ranked per dollar: a latency or an error
 * count per dollar means nothing.  Which are per GPU (METRIC_PER_GPU) comes
 * from the same rows.
 *
 * This file holds the steps (compute) and dispatches to the parts
 * (rank_int.h); each entry's value, measured or estimated, is rank_value.c,
 * and what the parts share sits below them all in rank_util.c.
 */
#include "judge/rank_int.h"
#include "judge/identity.h"
#include "judge/flags.h"
#include "benches/bench.h"
#include "pricing/catalog.h"
#include "pricing/fx.h"
#include "results/store.h"
#include "common/util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

struct weight {
	const char *metric;
	double w;
};

static const struct weight w_training[] = { { "gemm.bf16.tflops", 1 }, { "allreduce.busbw.gbps", 1 } };
static const struct weight w_data[] = {
	{ "nvme.seqread.gbps", 1 }, { "nvme.seqwrite.gbps", 1 }, { "nvme.randread.kiops", 1 },
	{ "objstore.get.gbps", 1 }, { "objstore.put.gbps", 1 },
};

static const char *default_unit(const char *m)
{
	const struct metric_info *mi = metric_info_find(m);
	return mi ? mi->unit : "";
}

/* The request: metric, market, per; -1 with err when one is not understood. */
static int check_request(const char *metric, const char *market, const char *per, int composite, char *err,
			 size_t errlen)
{
	if (strcmp(market, "on_demand") && strcmp(market, "spot") && strcmp(market, "reserved")) {
		snprintf(err, errlen, "market must be on_demand, spot or reserved, not '%s'", market);
		return -1;
	}
	if (strcmp(per, "instance") && strcmp(per, "gpu")) {
		snprintf(err, errlen, "per must be instance or gpu, not '%s'", per);
		return -1;
	}
	if (composite && strcmp(metric, "score.training") && strcmp(metric, "score.data") &&
	    strcmp(metric, "score.all")) {
		snprintf(err, errlen, "unknown score '%s' (score.training, score.data or score.all)", metric);
		return -1;
	}
	if (!composite && !metric_info_find(metric)) {
		snprintf(err, errlen, "unknown metric '%s': no bench reports it (gpuvet run --help lists the benches)",
			 metric);
		return -1;
	}
	if (!composite && !rank_rankable(metric)) {
		snprintf(err, errlen, "metric '%s' is not a throughput (.tflops, .gbps, .kiops, .images_per_s): "
				      "ranking it per dollar means nothing", metric);
		return -1;
	}
	return 0;
}


static void add_component(struct components *cp, const char *name, double w)
{
	cp->names = gv_realloc(cp->names, (cp->n + 1) * sizeof *cp->names);
	cp->weights = gv_realloc(cp->weights, (cp->n + 1) * sizeof *cp->weights);
	cp->names[cp->n] = name;
	cp->weights[cp->n++] = w;
}

static void choose_components(const struct ctx *c, const char *metric, int composite, struct components *cp)
{
	if (!composite) {
		add_component(cp, metric, 1);
	} else if (!strcmp(metric, "score.training") || !strcmp(metric, "score.data")) {
		int tr = !strcmp(metric, "score.training");
		const struct weight *w = tr ? w_training : w_data;
		size_t n = tr ? sizeof w_training / sizeof *w_training : sizeof w_data / sizeof *w_data;
		for (size_t i = 0; i < n; i++)
			add_component(cp, w[i].metric, w[i].w);
	} else {
		for (size_t i = 0; i < c->n; i++)
			for (size_t j = 0; j < c->s[i].nm; j++) {
				int seen = 0;
				for (size_t q = 0; q < cp->n; q++)
					seen |= !strcmp(cp->names[q], c->s[i].m[j].name);
				if (!seen)
					add_component(cp, c->s[i].m[j].name, 1);
			}
	}
}

/* Per SKU and component, the value shown (median, or estimate); NAN when none. */
struct shown {
	double *val;   /* nsku x ncomp */
	int *meas, *est;
};

static void shown_values(struct ctx *c, const struct components *cp, int per_gpu, struct shown *sv)
{
	size_t nsku = c->n, nn = cp->n;
	sv->val = gv_malloc((nsku ? nsku : 1) * (nn ? nn : 1) * sizeof *sv->val);
	sv->meas = gv_calloc(nsku ? nsku : 1, sizeof *sv->meas);
	sv->est = gv_calloc(nsku ? nsku : 1, sizeof *sv->est);
	for (size_t i = 0; i < nsku; i++)
		rank_shown_one(c, cp, per_gpu, &c->s[i], &sv->val[i * nn], &sv->meas[i], &sv->est[i]);
}

static void shown_free(struct shown *sv)
{
	free(sv->val);
	free(sv->meas);
	free(sv->est);
}

/*
 * The SKUs that have a value, priced ones into order (valued per dollar,
 * flags loaded), unpriced ones listed; returns how many were measured.
 */
static int value_skus(struct ctx *c, const struct components *cp, const struct shown *sv, int composite,
		      struct sku **order, size_t *nrows, json_t *unpriced, json_t *unranked)
{
	int any_measured = 0;
	size_t *perm = c->runs_first && c->o->include_estimates ? rank_prices_first_order(c) : NULL;
	*nrows = 0;
	for (size_t x = 0, i; x < c->n; x++) {
		i = perm ? perm[x] : x;
		int r = rank_value_one(c, cp, &sv->val[i * cp->n], sv->meas[i], sv->est[i], composite, &c->s[i],
				       unpriced, unranked);
		any_measured |= r >= 0 && sv->meas[i];
		if (r > 0)
			order[(*nrows)++] = &c->s[i];
	}
	free(perm);
	return any_measured;
}

#define MAX_ASKED 16


/* The metric names to read for a request into buf: the metric, a score's list, or none (score.all: every one). */
static size_t asked_metrics(const char *metric, int composite, const char *buf[MAX_ASKED])
{
	if (!composite) {
		buf[0] = metric;
		return 1;
	}
	int tr = !strcmp(metric, "score.training");
	if (!tr && strcmp(metric, "score.data"))
		return 0;
	const struct weight *w = tr ? w_training : w_data;
	size_t n = tr ? sizeof w_training / sizeof *w_training : sizeof w_data / sizeof *w_data;
	for (size_t i = 0; i < n && i < MAX_ASKED; i++)
		buf[i] = w[i].metric;
	return n < MAX_ASKED ? n : MAX_ASKED;
}

/* Why nothing ranks when no stored run has what was asked (and no estimates were asked for). */
static void say_none_measured(const struct ctx *c, const char *metric, int composite)
{
	if (c->unnamed_with)
		snprintf(c->err, c->errlen,
			 "%ld stored run(s) have %s but no provider and instance type (measured without cloud "
			 "metadata, as on lambda): name them with 'gpuvet results tag RUN --provider P --sku TYPE "
			 "--region R'", c->unnamed_with, metric);
	else if (c->left_out)
		snprintf(c->err, c->errlen, "the %ld stored run(s) with %s carry critical flags (%s): rank them with"
			 " --include-flagged", c->left_out, metric, "gpuvet results show RUN lists them");
	else if (c->elsewhere_with)
		snprintf(c->err, c->errlen, "%ld stored run(s) have %s, none in region %s", c->elsewhere_with, metric,
			 c->o->region);
	else
		snprintf(c->err, c->errlen, "no stored run has %s%s (run gpuvet run, or use --estimates)",
			 composite ? "a metric of " : "metric ", metric);
}

/* The names a request reads: its metric or a score's (asked_metrics), and MEMBW_METRIC for its column (*extra). */
static size_t request_metrics(const char *metric, int composite, const char *q[MAX_ASKED + 1], int *extra)
{
	size_t nq = asked_metrics(metric, composite, q);
	*extra = 0;
	if (nq && nq < MAX_ASKED && strcmp(metric, MEMBW_METRIC)) {
		q[nq++] = MEMBW_METRIC;   /* for the memory-bandwidth-per-dollar column */
		*extra = 1;
	}
	return nq;
}

static const char *gathered_unit(const struct ctx *c, const char *metric)
{
	for (size_t i = 0; i < c->ngm; i++)
		if (!strcmp(c->gm[i].name, metric))
			return c->gm[i].unit;
	return NULL;
}

/* Once the runs are counted and the entries priced: the components, each SKU's value per dollar, the rows. */
static int rank_result(struct ctx *c, const char *metric, int composite, const char *market, const char *per,
		       json_t **out)
{
	const struct rank_opts *o = c->o;
	struct components cp = { 0 };
	int rc = -1;
	json_t *rows = json_array(), *unpriced = json_array(), *unranked = json_array();
	struct sku **order = NULL;
	/* types the catalog has no price for in the market, estimated: after the measured ones (bounded: the report) */
	struct rank_unpriced un = { .list = json_array(), .max = o->estimates_max > 0 ? (size_t)o->estimates_max : 0 };
	long est_streamed = 0, unranked_left = 0;
	struct shown sv;
	size_t nrows;

	choose_components(c, metric, composite, &cp);
	c->first_component = cp.n ? cp.names[0] : metric;
	if (c->runs_first && o->include_estimates &&
	    rank_stream_estimates(c, &cp, !strcmp(per, "gpu"), composite, unpriced, unranked, &un, &est_streamed,
				  &unranked_left) < 0)
		goto done;
	shown_values(c, &cp, !strcmp(per, "gpu"), &sv);
	order = gv_malloc((c->n ? c->n : 1) * sizeof *order);
	int any_measured = value_skus(c, &cp, &sv, composite, order, &nrows, unpriced, unranked);
	shown_free(&sv);
	if (!any_measured && !o->include_estimates) {
		say_none_measured(c, metric, composite);
		goto done;
	}
	rank_group_profiles(c, order, &nrows);   /* one row per instance type */
	rank_group_unpriced(unpriced);
	if (!c->runs_first && o->include_estimates &&
	    rank_list_unpriced(c, &cp, !strcmp(per, "gpu"), composite, &un) < 0)
		goto done;
	json_array_extend(unpriced, un.list);
	qsort(order, nrows, sizeof *order, rank_cmp_rows);
	long est_left = rank_keep_rows(c, order, &nrows);
	if (est_left < 0 || rank_price_bands(c, order, nrows) < 0)   /* a read error, said in err */
		goto done;
	/* custom machines are numbered apart: they rank only among themselves */
	for (size_t r = 0, first_custom = nrows; r < nrows; r++) {
		if (first_custom == nrows && identity_is_custom(order[r]->provider))
			first_custom = r;
		json_array_append_new(rows, rank_row_json(c, order[r], r < first_custom ? r + 1 : r - first_custom + 1,
						     composite));
	}
	json_t *stale = rank_stale_json(order, nrows), *undated = rank_undated_json(order, nrows);

	const char *unit = composite ? "score" : gathered_unit(c, metric);
	*out = rank_result_json(o, metric, market, per, unit ? unit : default_unit(metric), &cp, composite, rows, unpriced,
				c->left_out, json_incref(c->left));
	json_object_set_new(*out, "unranked", unranked);
	rows = unpriced = unranked = NULL;   /* the result's now */
	if (o->include_estimates && o->estimates_max > 0) {   /* the lists bounded too (judge/rank_estimates.c) */
		json_object_set_new(*out, "unranked_left_out", json_integer((json_int_t)unranked_left));
		json_object_set_new(*out, "unpriced_left_out", json_integer((json_int_t)un.left));
	}
	json_object_set_new(*out, "stale_prices", stale);
	json_object_set_new(*out, "undated_prices", undated);
	json_object_set_new(*out, "estimates_left_out", json_integer((json_int_t)(est_left + est_streamed)));
	rc = 0;
done:
	free(order);
	json_decref(rows);
	json_decref(unpriced);
	json_decref(unranked);
	json_decref(un.list);
	free(cp.names);
	free(cp.weights);
	return rc;
}

/* Everything a ranking's context holds (a gather's too). */
static void ctx_free(struct ctx *c)
{
	rank_gather_free(c);
	json_decref(c->left);
	for (size_t i = 0; i < c->n; i++)
		rank_sku_free(&c->s[i]);
	free(c->s);
	rank_index_free(c);
	free(c->profiled);
}

/* What every ranking over one gather shares: the options that decide which runs count. */
struct rank_gather {
	struct rank_opts o;
	struct ctx c;
};

static int same_gather(const struct rank_opts *a, const struct rank_opts *b)
{
	return !a->include_flagged == !b->include_flagged &&
	       (a->region && b->region ? !strcmp(a->region, b->region) : a->region == b->region);
}

/*
 * The steps: check the request; load prices and the runs (or copy them from
 * g, read once for several rankings); count what the request asks for;
 * choose the component metrics; the value each SKU shows per component;
 * value the SKUs per dollar; order them; write the rows.
 */
static int compute(struct store *s, const struct rank_gather *g, const struct rank_opts *o, json_t **out, char *err,
		   size_t errlen)
{
	const char *metric = o->metric ? o->metric : "gemm.bf16.tflops";
	int composite = !strncmp(metric, "score.", 6), extra;
	/* a per-GPU figure is always over the price per GPU-hour */
	struct rank_opts eff = *o;
	if (!composite && rank_per_gpu_scope(metric))
		eff.per = "gpu";
	/* runs first, then only the types runs measured are priced (a bound on the estimates: the others
	   stream past, judge/rank_estimates.c) */
	struct ctx c = { .s_store = s, .db = store_db(s), .o = &eff, .err = err, .errlen = errlen, .left = json_array(),
			 .left_max = o->left_out_max < 0 ? 0 : o->left_out_max ? (size_t)o->left_out_max : RANK_LEFT_OUT_MAX,
			 .runs_first = !o->include_estimates || o->estimates_max > 0 };
	c.metric = metric;
	const char *market = o->market ? o->market : "on_demand";
	const char *per = eff.per ? eff.per : "instance";
	const char *q[MAX_ASKED + 1];
	size_t nq = request_metrics(metric, composite, q, &extra);
	int rc = -1;

	*out = NULL;
	if (g && (!c.runs_first || !same_gather(&g->o, o)))
		g = NULL;   /* prices first, or other runs counted: this ranking reads its own */
	if (check_request(metric, market, per, composite, err, errlen) < 0 || (!c.runs_first && rank_load_prices(&c) < 0))
		goto done;
	if (g)
		rank_gather_copy(&c, &g->c, q, nq);
	else if (rank_gather_runs(&c, q, nq) < 0)
		goto done;
	rank_gather_count(&c, q, nq, extra);
	if ((c.runs_first && rank_load_prices(&c) < 0) || rank_price_places(&c) < 0)
		goto done;
	rc = rank_result(&c, metric, composite, market, per, out);
done:
	ctx_free(&c);
	return rc;
}

int rank_compute(struct store *s, const struct rank_opts *o, json_t **out, char *err, size_t errlen)
{
	return compute(s, NULL, o, out, err, errlen);
}

int rank_compute_gathered(struct store *s, const struct rank_gather *g, const struct rank_opts *o, json_t **out,
			  char *err, size_t errlen)
{
	return compute(s, g, o, out, err, errlen);
}

struct rank_gather *rank_gather_new(struct store *s, const struct rank_opts *o, size_t n, char *err, size_t errlen)
{
	struct rank_gather *g = gv_calloc(1, sizeof *g);
	const char **names = NULL;
	size_t nn = 0;
	int all = 0;
	g->o = o[0];
	g->c = (struct ctx){ .s_store = s, .db = store_db(s), .o = &g->o, .err = err, .errlen = errlen };
	for (size_t i = 0; i < n && !all; i++) {
		const char *metric = o[i].metric ? o[i].metric : "gemm.bf16.tflops", *q[MAX_ASKED + 1];
		int extra;
		size_t nq = request_metrics(metric, !strncmp(metric, "score.", 6), q, &extra);
		all = nq == 0;   /* score.all: every metric */
		names = gv_realloc(names, (nn + nq + 1) * sizeof *names);
		for (size_t j = 0; j < nq; j++) {
			size_t k;
			for (k = 0; k < nn && strcmp(names[k], q[j]); k++)
				;
			if (k == nn)
				names[nn++] = q[j];
		}
	}
	int rc = rank_gather_runs(&g->c, names, all ? 0 : nn);
	free(names);
	if (rc < 0) {
		rank_gather_delete(g);
		return NULL;
	}
	return g;
}

long rank_gather_runs_of(const struct rank_gather *g, const char *metric, const char *provider, const char *itype,
			 const char *profile, int64_t **ids)
{
	return rank_gather_ids(&g->c, metric, provider, itype, profile, ids);
}

void rank_gather_delete(struct rank_gather *g)
{
	if (!g)
		return;
	ctx_free(&g->c);
	free(g);
}
