/*
 * rank.c - instance types ordered by a metric per dollar (see rank.h).
 *
 * The formulas, written down once (README "Ranking"):
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
 *             bandwidth divided by the GPU count; metrics whose row says
 *             METRIC_PER_GPU, memcpy.* and allreduce.*, are already per
 *             GPU/link and kept) over the price per GPU-hour.
 *   score.*   composites: for each component metric m, n_m = v_m / max over
 *             SKUs of v_m (so the best SKU scores 1 on m); score =
 *             sum(w_m n_m) / sum(w_m), a missing metric counting 0 (and listed
 *             in "missing"); ranked by score per dollar-hour.  Weights:
 *               score.training  gemm.bf16.tflops 1, allreduce.busbw.gbps 1
 *               score.data      nvme.seqread.gbps, nvme.seqwrite.gbps,
 *                               nvme.randread.kiops, objstore.get.gbps,
 *                               objstore.put.gbps, 1 each
 *               score.all       every throughput metric any run has, 1 each
 *   estimate  with include_estimates, a priced SKU without a run gets, for
 *             each metric, the median per-GPU value of the stored runs of
 *             SKUs with the same GPU model x its GPU count ("measured"
 *             basis), else the model's achievable reference x GPU count
 *             (common/gpus.h gpu_achievable_metric: GEMM and pinned copies),
 *             never the datasheet peak; "estimate": true with its
 *             "estimate_basis", ordered after every measured SKU.
 *   flags     runs with a critical flag are left out (counted in
 *             "runs_left_out") unless include_flagged.
 *   markets   the ranking's market prices the order; the other one (spot
 *             beside on-demand) is shown with its own value per dollar.
 *   currency  every price in US dollars through its stored, dated rate; a
 *             SKU whose winning price has no rate is not ranked but listed
 *             in "unpriced" with why.
 *
 * Only throughput metrics (METRIC_RANKABLE in the rows each bench declares:
 * .tflops, .gbps, .kiops, .images_per_s) are ranked per dollar: a latency or an error
 * count per dollar means nothing.  Which are per GPU (METRIC_PER_GPU) comes
 * from the same rows.
 */
#include "judge/rank.h"
#include "benches/bench.h"
#include "pricing/catalog.h"
#include "pricing/fx.h"
#include "common/gpus.h"
#include "results/store.h"
#include "common/stats.h"
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

/* What a metric is comes from the row its bench declares (benches/bench.h, struct metric_info). */
static int rankable(const char *m)
{
	const struct metric_info *mi = metric_info_find(m);
	return mi && (mi->flags & METRIC_RANKABLE);
}

/* value at gpu -1 is already per GPU (a link or a rank), not an instance total */
static int per_gpu_scope(const char *m)
{
	const struct metric_info *mi = metric_info_find(m);
	return mi && (mi->flags & METRIC_PER_GPU);
}

static const char *default_unit(const char *m)
{
	const struct metric_info *mi = metric_info_find(m);
	return mi ? mi->unit : "";
}

struct mvals {
	char *name;
	double *v;
	size_t n;
};

struct sku {
	char *provider, *itype;
	/* price */
	int priced;
	int prio;
	char *region, *gpu_model, *source, *captured;
	double gpus;            /* NAN unknown */
	double usd_h;           /* NAN: the winning price's currency has no stored rate */
	char currency[4];       /* the winning price's own currency */
	double fx_rate;         /* its rate (USD per unit), NAN for USD */
	char fx_date[32];
	int other_priced, other_prio;   /* the other market (spot beside on-demand, or on-demand) */
	double other_usd_h;
	/* runs */
	long nhave;             /* runs of this SKU that have one of the metrics asked for */
	double run_gpus;        /* gpu count reported by the runs */
	char *run_gpu_model;
	struct mvals *m;
	size_t nm;
	char **flags;
	size_t nflags;
	/* results */
	int estimate;
	char basis[200];        /* an estimate's basis */
	double value, vpd;
	json_t *components, *missing;
};

/* One stored run, as the ranking sees it; found by id with bsearch. */
struct runent {
	int64_t id;
	int sku;                /* index into ctx.s; -1 when the run counts for no SKU */
	unsigned named : 1;     /* has a provider and type, left out by --region */
	unsigned has : 1;       /* has one of the metrics asked for */
	unsigned critical : 1;  /* carries a critical flag */
	unsigned left : 1;      /* left out for it (has a metric asked for; no include_flagged) */
};

struct flagent {
	size_t run;             /* index into ctx.runs */
	char *code;
};

struct ctx {
	struct store *s_store;
	sqlite3 *db;            /* the store's connection, for the price catalog */
	const struct rank_opts *o;
	struct sku *s;
	size_t n;
	char *err;
	size_t errlen;
	const char *metric;     /* the metric asked for (for the reason when nothing ranks) */
	struct runent *runs;    /* every stored run, sorted by id once read */
	size_t nruns;
	struct flagent *fl;     /* the flags of runs that name a SKU, in run order */
	size_t nfl;
	int last_sku;           /* index of the SKU the last run read belonged to; -1 none */
	long unnamed_with;      /* runs that have it but no provider or instance type */
	long elsewhere_with;    /* runs that have it in another region than --region */
	long left_out;          /* runs with a critical flag not counted (no include_flagged) */
	int other;              /* loading the other market's prices */
};

static struct sku *sku_get(struct ctx *c, const char *provider, const char *itype, int create)
{
	for (size_t i = 0; i < c->n; i++)
		if (!strcmp(c->s[i].provider, provider) && !strcmp(c->s[i].itype, itype))
			return &c->s[i];
	if (!create)
		return NULL;
	c->s = gv_realloc(c->s, (c->n + 1) * sizeof *c->s);
	struct sku *k = &c->s[c->n++];
	memset(k, 0, sizeof *k);
	k->provider = gv_strdup(provider);
	k->itype = gv_strdup(itype);
	k->gpus = NAN;
	k->run_gpus = NAN;
	k->fx_rate = NAN;
	k->other_usd_h = NAN;
	return k;
}

static void sku_free(struct sku *k)
{
	free(k->provider);
	free(k->itype);
	free(k->region);
	free(k->gpu_model);
	free(k->source);
	free(k->captured);
	free(k->run_gpu_model);
	for (size_t i = 0; i < k->nm; i++) {
		free(k->m[i].name);
		free(k->m[i].v);
	}
	free(k->m);
	for (size_t i = 0; i < k->nflags; i++)
		free(k->flags[i]);
	free(k->flags);
	json_decref(k->components);
	json_decref(k->missing);
}

static char *dup_or_null(const char *t)
{
	return t && *t ? gv_strdup(t) : NULL;
}

static int source_prio(const char *src)
{
	if (!strncmp(src, "import:", 7))
		return 3;
	if (!strncmp(src, "catalog:", 8))
		return 1;
	return 2;
}

/* Is the row the better price of its SKU: the most specific source, then the cheapest in USD (no rate: last). */
static int better_price(int prio, double usd, int have, int have_prio, double have_usd)
{
	if (!have || prio > have_prio)
		return 1;
	if (prio < have_prio)
		return 0;
	return !isnan(usd) && (isnan(have_usd) || usd < have_usd);
}

static int take_price(void *ud, const struct price_row *row)
{
	struct ctx *c = ud;
	const struct price_rec *r = &row->rec;
	int prio = source_prio(r->source);
	struct sku *k = sku_get(c, r->provider, r->instance_type, 1);
	if (c->other) {
		if (better_price(prio, row->usd_per_hour, k->other_priced, k->other_prio, k->other_usd_h)) {
			k->other_priced = 1;
			k->other_prio = prio;
			k->other_usd_h = row->usd_per_hour;
		}
		return 0;
	}
	if (!better_price(prio, row->usd_per_hour, k->priced, k->prio, k->usd_h))
		return 0;
	free(k->region);
	free(k->gpu_model);
	free(k->source);
	free(k->captured);
	k->priced = 1;
	k->prio = prio;
	k->usd_h = row->usd_per_hour;
	gv_strlcpy(k->currency, r->currency, sizeof k->currency);
	k->fx_rate = strcmp(r->currency, "USD") ? row->usd_per_unit : NAN;
	gv_strlcpy(k->fx_date, row->fx_captured_at, sizeof k->fx_date);
	k->region = gv_strdup(r->region);
	k->gpu_model = dup_or_null(r->gpu_model);
	k->gpus = r->gpu_count;
	k->source = gv_strdup(r->source);
	k->captured = gv_strdup(r->captured_at);
	return 0;
}

/* The ranking's market, then the other one (on-demand's other is spot, spot's and reserved's on-demand). */
static int load_prices(struct ctx *c)
{
	const char *market = c->o->market ? c->o->market : "on_demand";
	struct price_filter f = { .market = market, .region = c->o->region };
	if (catalog_prices(c->db, &f, PRICE_ORDER_STORED, take_price, c, c->err, c->errlen) < 0)
		return -1;
	c->other = 1;
	f.market = strcmp(market, "on_demand") ? "on_demand" : "spot";
	int rc = catalog_prices(c->db, &f, PRICE_ORDER_STORED, take_price, c, c->err, c->errlen);
	c->other = 0;
	return rc;
}

static int cmp_runent(const void *key, const void *elem)
{
	int64_t id = *(const int64_t *)key, e = ((const struct runent *)elem)->id;
	return id < e ? -1 : id > e;
}

static struct runent *run_find(const struct ctx *c, int64_t id)
{
	return c->nruns ? bsearch(&id, c->runs, c->nruns, sizeof *c->runs, cmp_runent) : NULL;
}

static void add_value(struct sku *k, const char *name, double v)
{
	struct mvals *m = NULL;
	for (size_t i = 0; i < k->nm; i++)
		if (!strcmp(k->m[i].name, name))
			m = &k->m[i];
	if (!m) {
		k->m = gv_realloc(k->m, (k->nm + 1) * sizeof *k->m);
		m = &k->m[k->nm++];
		m->name = gv_strdup(name);
		m->v = NULL;
		m->n = 0;
	}
	m->v = gv_realloc(m->v, (m->n + 1) * sizeof *m->v);
	m->v[m->n++] = v;
}

static int take_run(void *ud, const struct store_run_row *r)
{
	struct ctx *c = ud;
	c->runs = gv_realloc(c->runs, (c->nruns + 1) * sizeof *c->runs);
	struct runent *e = &c->runs[c->nruns++];
	*e = (struct runent){ .id = r->id, .sku = -1 };
	if (!r->provider || !r->instance_type)
		return 0;
	if (c->o->region && (!r->region || strcmp(r->region, c->o->region))) {
		e->named = 1;
		return 0;
	}
	/* rows come by provider and type: the last run's SKU is most often this one's */
	struct sku *k = c->last_sku >= 0 ? &c->s[c->last_sku] : NULL;
	if (!k || strcmp(k->provider, r->provider) || strcmp(k->itype, r->instance_type))
		k = sku_get(c, r->provider, r->instance_type, 1);
	e->sku = c->last_sku = (int)(k - c->s);
	if (r->gpu_count > 0)
		k->run_gpus = (double)r->gpu_count;
	if (!k->run_gpu_model && r->gpu_model)
		k->run_gpu_model = gv_strdup(r->gpu_model);
	return 0;
}

static int cmp_runent_id(const void *a, const void *b)
{
	int64_t x = ((const struct runent *)a)->id, y = ((const struct runent *)b)->id;
	return x < y ? -1 : x > y;
}

static int take_flag(void *ud, int64_t run, const char *code, const char *severity, const char *message)
{
	struct ctx *c = ud;
	(void)message;
	struct runent *e = run_find(c, run);
	if (!e || e->sku < 0 || !code)
		return 0;
	if (severity && !strcmp(severity, "critical"))
		e->critical = 1;
	c->fl = gv_realloc(c->fl, (c->nfl + 1) * sizeof *c->fl);
	c->fl[c->nfl++] = (struct flagent){ .run = (size_t)(e - c->runs), .code = gv_strdup(code) };
	return 0;
}

struct metric_walk {
	struct ctx *c;
	json_t *units;
	int64_t orphan;
};

static int take_metric(void *ud, int64_t run, const char *name, double v, const char *unit)
{
	struct metric_walk *w = ud;
	struct ctx *c = w->c;
	struct runent *e = run_find(c, run);
	if (!e || !name)
		return 0;
	if (e->sku < 0) {
		/* the run has the metric but no SKU: say why when nothing can be ranked */
		if (c->metric && !strcmp(name, c->metric) && run != w->orphan) {
			w->orphan = run;
			if (e->named)
				c->elsewhere_with++;
			else
				c->unnamed_with++;
		}
		return 0;
	}
	if (!rankable(name))
		return 0;
	if (e->critical && !c->o->include_flagged) {
		if (!e->left) /* counted once, however many metrics it has */
			c->left_out++;
		e->left = 1;
		return 0;
	}
	e->has = 1;
	if (!isfinite(v))
		return 0;
	add_value(&c->s[e->sku], name, v);
	if (unit && *unit && !json_object_get(w->units, name))
		json_object_set_new(w->units, name, json_string(unit));
	return 0;
}

static void take_code(struct sku *k, const char *code)
{
	for (size_t i = 0; i < k->nflags; i++)
		if (!strcmp(k->flags[i], code))
			return;
	k->flags = gv_realloc(k->flags, (k->nflags + 1) * sizeof *k->flags);
	k->flags[k->nflags++] = gv_strdup(code);
}

/*
 * Runs, their flags and the metrics asked for (names; none: every
 * headline), each read with one query in run order and joined here by run
 * id: linear in the store.  Then per SKU the runs that contributed and
 * the distinct flag codes of those runs.
 */
static int load_runs(struct ctx *c, const char *const *names, size_t nnames, json_t *units)
{
	struct metric_walk w = { .c = c, .units = units, .orphan = -1 };
	c->last_sku = -1;
	if (store_each_run_sku(c->s_store, take_run, c))
		goto fail;
	if (c->nruns) /* qsort and bsearch want a real array, even of nothing */
		qsort(c->runs, c->nruns, sizeof *c->runs, cmp_runent_id);
	if (store_each_flag_code(c->s_store, take_flag, c) ||
	    store_each_headline(c->s_store, names, nnames, take_metric, &w))
		goto fail;
	for (size_t i = 0; i < c->nruns; i++)
		if (c->runs[i].has)
			c->s[c->runs[i].sku].nhave++;
	for (size_t i = 0; i < c->nfl; i++)
		if (c->runs[c->fl[i].run].has)
			take_code(&c->s[c->runs[c->fl[i].run].sku], c->fl[i].code);
	return 0;
fail:
	snprintf(c->err, c->errlen, "%s", store_errmsg(c->s_store));
	return -1;
}

static int median_of(struct sku *k, const char *metric, double *out)
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

static double sku_gpus(const struct sku *k)
{
	return !isnan(k->gpus) && k->gpus > 0 ? k->gpus : k->run_gpus;
}

static const char *sku_model(const struct sku *k)
{
	return k->gpu_model ? k->gpu_model : k->run_gpu_model;
}

/* The same GPU model: the same reference row when either name has one, else the same name. */
static int same_model(const char *a, const char *b)
{
	if (!a || !b)
		return 0;
	const struct gpu_ref *ra = gpu_ref_find(a), *rb = gpu_ref_find(b);
	return ra || rb ? ra == rb : !strcasecmp(a, b);
}

/*
 * The median per-GPU value of metric over the counted runs of every SKU
 * with k's GPU model (an instance total divided by that SKU's GPU count);
 * -1 when no such run is stored.
 */
static int measured_per_gpu(const struct ctx *c, const struct sku *k, const char *metric, double *out, size_t *nrun)
{
	double *v = NULL;
	size_t n = 0;
	for (size_t i = 0; i < c->n; i++) {
		const struct sku *j = &c->s[i];
		double g = per_gpu_scope(metric) ? 1 : sku_gpus(j);
		if (j == k || !(g > 0) || !same_model(sku_model(j), sku_model(k)))
			continue;
		for (size_t q = 0; q < j->nm; q++)
			if (!strcmp(j->m[q].name, metric))
				for (size_t r = 0; r < j->m[q].n; r++) {
					v = gv_realloc(v, (n + 1) * sizeof *v);
					v[n++] = j->m[q].v[r] / g;
				}
	}
	if (n)
		*out = gv_median_inplace(v, n);
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
	const char *model = sku_model(k), *src = NULL;
	double per = 0, gpus = per_gpu_scope(metric) ? 1 : sku_gpus(k);
	size_t nrun = 0;
	if (!model || !(gpus > 0))
		return -1;
	if (measured_per_gpu(c, k, metric, &per, &nrun) == 0) {
		snprintf(k->basis, sizeof k->basis, "measured: %s, median of %zu stored run(s), %.4g per GPU", model,
			 nrun, per);
	} else {
		const struct gpu_ref *ref = gpu_ref_find(model);
		if (gpu_achievable_metric(ref ? ref->key : model, metric, &per, &src) < 0 || !(per > 0))
			return -1;
		snprintf(k->basis, sizeof k->basis, "achievable reference: %s %.4g per GPU (common/gpus.c: %.48s...)",
			 model, per, src ? src : "");
	}
	*out = per * gpus;
	return 0;
}

/* the value shown for --per (per GPU: instance totals divided) */
static double per_value(const struct rank_opts *o, const struct sku *k, const char *metric, double v)
{
	if (o->per && !strcmp(o->per, "gpu") && !per_gpu_scope(metric))
		return v / sku_gpus(k);
	return v;
}

static double per_price(const struct rank_opts *o, const struct sku *k)
{
	if (o->per && !strcmp(o->per, "gpu"))
		return k->usd_h / sku_gpus(k);
	return k->usd_h;
}

static int cmp_rows(const void *a, const void *b)
{
	const struct sku *x = *(const struct sku *const *)a, *y = *(const struct sku *const *)b;
	if (x->estimate != y->estimate)
		return x->estimate - y->estimate; /* every measured SKU before every estimate */
	if (x->vpd != y->vpd)
		return x->vpd < y->vpd ? 1 : -1;
	int c = strcmp(x->provider, y->provider);
	return c ? c : strcmp(x->itype, y->itype);
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
	if (!composite && !rankable(metric)) {
		snprintf(err, errlen, "metric '%s' is not a throughput (.tflops, .gbps, .kiops, .images_per_s): "
				      "ranking it per dollar means nothing", metric);
		return -1;
	}
	return 0;
}

/* The component metrics and their weights: the metric alone, a score's list, or every one a run has. */
struct components {
	const char **names;
	double *weights;
	size_t n;
};

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
	double *best;  /* per component, over priced SKUs */
};

static void shown_values(struct ctx *c, const struct components *cp, int per_gpu, struct shown *sv)
{
	const struct rank_opts *o = c->o;
	size_t nsku = c->n, nn = cp->n;
	sv->val = gv_malloc((nsku ? nsku : 1) * (nn ? nn : 1) * sizeof *sv->val);
	sv->meas = gv_calloc(nsku ? nsku : 1, sizeof *sv->meas);
	sv->est = gv_calloc(nsku ? nsku : 1, sizeof *sv->est);
	sv->best = gv_calloc(nn ? nn : 1, sizeof *sv->best);
	for (size_t i = 0; i < nsku; i++) {
		struct sku *k = &c->s[i];
		for (size_t j = 0; j < nn; j++) {
			double v;
			sv->val[i * nn + j] = NAN;
			if (median_of(k, cp->names[j], &v) == 0) {
				sv->meas[i] = 1;
			} else if (!o->include_estimates || estimate_of(c, k, cp->names[j], &v) < 0) {
				continue;
			} else {
				sv->est[i] = 1;
			}
			if (per_gpu && !(sku_gpus(k) > 0))
				continue;
			sv->val[i * nn + j] = per_value(o, k, cp->names[j], v);
		}
	}
	/* a SKU with any measured component is measured, never an estimate */
	for (size_t i = 0; i < nsku; i++) {
		if (sv->meas[i]) {
			sv->est[i] = 0;
			for (size_t j = 0; j < nn; j++)
				if (median_of(&c->s[i], cp->names[j], &(double){ 0 }) < 0)
					sv->val[i * nn + j] = NAN;
		}
		for (size_t j = 0; j < nn; j++)
			if (!isnan(sv->val[i * nn + j]) && sv->val[i * nn + j] > sv->best[j] && c->s[i].priced)
				sv->best[j] = sv->val[i * nn + j];
	}
}

static void shown_free(struct shown *sv)
{
	free(sv->val);
	free(sv->meas);
	free(sv->est);
	free(sv->best);
}

/* k's value: the component's, or the weighted mean of the components each divided by the best SKU's. */
static void score_sku(struct sku *k, const struct components *cp, const double *val, const double *best,
		      int composite)
{
	if (!composite) {
		k->value = val[0];
		return;
	}
	double sw = 0, sv = 0;
	k->components = json_object();
	k->missing = json_array();
	for (size_t j = 0; j < cp->n; j++) {
		sw += cp->weights[j];
		double v = val[j];
		if (isnan(v) || !(best[j] > 0)) {
			json_array_append_new(k->missing, json_string(cp->names[j]));
			continue;
		}
		sv += cp->weights[j] * v / best[j];
		json_object_set_new(k->components, cp->names[j], json_real(v / best[j]));
	}
	k->value = sw > 0 ? sv / sw : 0;
}

/*
 * The SKUs that have a value, priced ones into order (valued per dollar,
 * flags loaded), unpriced ones listed; returns how many were measured.
 */
static const char *market_of(const struct ctx *c)
{
	return c->o->market ? c->o->market : "on_demand";
}

static int value_skus(struct ctx *c, const struct components *cp, const struct shown *sv, int composite,
		      struct sku **order, size_t *nrows, json_t *unpriced)
{
	int any_measured = 0;
	size_t nn = cp->n;
	*nrows = 0;
	for (size_t i = 0; i < c->n; i++) {
		struct sku *k = &c->s[i];
		int have = 0;
		for (size_t j = 0; j < nn; j++)
			have |= !isnan(sv->val[i * nn + j]);
		if (!have)
			continue;
		if (sv->meas[i])
			any_measured = 1;
		if (!k->priced || isnan(k->usd_h)) {
			/* measured but not priced in this market, or priced in a currency without a rate: said why */
			if (!sv->meas[i] && !k->priced)
				continue;
			char why[200];
			if (!k->priced && !strcmp(market_of(c), "spot"))
				snprintf(why, sizeof why, "no spot price (gpuvet ships none: gpuvet prices update --provider"
					 " aws with AWS credentials, or gpuvet prices import FILE)");
			else if (!k->priced)
				snprintf(why, sizeof why, "no %s price (gpuvet prices import FILE)", market_of(c));
			else
				snprintf(why, sizeof why, "no %s rate stored for its %s price (gpuvet prices fx %s RATE"
					 " --date D --source S)", k->currency, market_of(c), k->currency);
			json_array_append_new(unpriced, json_pack("{s:s,s:s,s:I,s:s,s:b}", "provider", k->provider,
								  "instance_type", k->itype, "runs", (json_int_t)k->nhave,
								  "why", why, "estimate", !sv->meas[i]));
			continue;
		}
		double price = per_price(c->o, k);
		if (!(price > 0))
			continue;
		score_sku(k, cp, &sv->val[i * nn], sv->best, composite);
		k->vpd = k->value / price;
		k->estimate = sv->est[i];
		order[(*nrows)++] = k;
	}
	return any_measured;
}

/* A price per the request's --per, or null. */
static json_t *per_price_json(const struct ctx *c, const struct sku *k, int priced, double usd_h)
{
	if (!priced || isnan(usd_h))
		return json_null();
	double p = c->o->per && !strcmp(c->o->per, "gpu") ? usd_h / sku_gpus(k) : usd_h;
	return p > 0 ? json_real(p) : json_null();
}

/*
 * On-demand and spot side by side (price and value per dollar of each, null
 * where the SKU has none), and the rate behind a converted price.
 */
static void market_columns(const struct ctx *c, const struct sku *k, json_t *row)
{
	int spot = !strcmp(market_of(c), "spot");
	json_t *od = spot ? per_price_json(c, k, k->other_priced, k->other_usd_h) : per_price_json(c, k, 1, k->usd_h);
	json_t *sp = spot ? per_price_json(c, k, 1, k->usd_h) : per_price_json(c, k, k->other_priced, k->other_usd_h);
	if (!strcmp(market_of(c), "reserved")) {
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

static json_t *row_json(struct ctx *c, const struct sku *k, size_t rank, int composite)
{
	json_t *flags = json_array();
	for (size_t f = 0; f < k->nflags; f++)
		json_array_append_new(flags, json_string(k->flags[f]));
	double gpus = sku_gpus(k);
	const char *model = k->gpu_model ? k->gpu_model : k->run_gpu_model;
	json_t *row = json_object();
	json_object_set_new(row, "rank", json_integer((json_int_t)rank));
	json_object_set_new(row, "provider", json_string(k->provider));
	json_object_set_new(row, "instance_type", json_string(k->itype));
	json_object_set_new(row, "region", json_string(k->region ? k->region : ""));
	json_object_set_new(row, "gpu_model", model ? json_string(model) : json_null());
	json_object_set_new(row, "gpu_count", gpus > 0 ? json_real(gpus) : json_null());
	json_object_set_new(row, "price_per_hour", json_real(per_price(c->o, k)));
	json_object_set_new(row, "currency", json_string("USD"));
	json_object_set_new(row, "price_source", json_string(k->source ? k->source : ""));
	json_object_set_new(row, "price_captured_at", json_string(k->captured ? k->captured : ""));
	json_object_set_new(row, "value", json_real(k->value));
	json_object_set_new(row, "value_per_dollar", json_real(k->vpd));
	json_object_set_new(row, "runs",
			    json_integer(k->estimate ? 0 : k->nhave));
	json_object_set_new(row, "flags", flags);
	json_object_set_new(row, "estimate", json_boolean(k->estimate));
	json_object_set_new(row, "estimate_basis", k->estimate ? json_string(k->basis) : json_null());
	market_columns(c, k, row);
	if (composite) {
		json_object_set(row, "components", k->components);
		json_object_set(row, "missing", k->missing);
	}
	return row;
}

static json_t *result_json(const struct rank_opts *o, const char *metric, const char *market, const char *per,
			   const char *unit, const struct components *cp, int composite, json_t *rows,
			   json_t *unpriced, long left_out)
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
		json_object_set_new(res, "normalisation",
				    json_string("each component divided by the best SKU's value; weighted mean, "
						"a missing component counts 0; ranked by score per USD-hour"));
	}
	json_object_set_new(res, "rows", rows);
	json_object_set_new(res, "unpriced", unpriced);
	json_object_set_new(res, "runs_left_out", json_integer(left_out));
	json_object_set_new(res, "runs_left_out_reason",
			    json_string(o->include_flagged ? "" : "critical flags (--include-flagged to count them)"));
	return res;
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

/*
 * The steps: check the request; load prices and runs; choose the component
 * metrics; the value each SKU shows per component; value the SKUs per
 * dollar; order them; write the rows.
 */
int rank_compute(struct store *s, const struct rank_opts *o, json_t **out, char *err, size_t errlen)
{
	struct ctx c = { .s_store = s, .db = store_db(s), .o = o, .err = err, .errlen = errlen };
	const char *metric = o->metric ? o->metric : "gemm.bf16.tflops";
	c.metric = metric;
	const char *market = o->market ? o->market : "on_demand";
	const char *per = o->per ? o->per : "instance";
	int composite = !strncmp(metric, "score.", 6);
	json_t *units = json_object();
	struct components cp = { 0 };
	int rc = -1;

	*out = NULL;
	const char *q[MAX_ASKED];
	size_t nq = asked_metrics(metric, composite, q);
	if (check_request(metric, market, per, composite, err, errlen) < 0 || load_prices(&c) < 0 ||
	    load_runs(&c, q, nq, units) < 0)
		goto done;
	choose_components(&c, metric, composite, &cp);

	struct shown sv;
	shown_values(&c, &cp, !strcmp(per, "gpu"), &sv);
	json_t *rows = json_array(), *unpriced = json_array();
	struct sku **order = gv_malloc((c.n ? c.n : 1) * sizeof *order);
	size_t nrows;
	int any_measured = value_skus(&c, &cp, &sv, composite, order, &nrows, unpriced);
	shown_free(&sv);
	if (!any_measured && !o->include_estimates) {
		if (c.unnamed_with)
			snprintf(err, errlen,
				 "%ld stored run(s) have %s but no provider and instance type (measured without cloud "
				 "metadata, as on lambda): name them with 'gpuvet results tag RUN --provider P --sku TYPE "
				 "--region R'", c.unnamed_with, metric);
		else if (c.left_out)
			snprintf(err, errlen, "the %ld stored run(s) with %s carry critical flags (%s): rank them with"
				 " --include-flagged", c.left_out, metric, "gpuvet results show RUN lists them");
		else if (c.elsewhere_with)
			snprintf(err, errlen, "%ld stored run(s) have %s, none in region %s", c.elsewhere_with, metric,
				 o->region);
		else
			snprintf(err, errlen, "no stored run has %s%s (run gpuvet run, or use --estimates)",
				 composite ? "a metric of " : "metric ", metric);
		free(order);
		json_decref(rows);
		json_decref(unpriced);
		goto done;
	}
	qsort(order, nrows, sizeof *order, cmp_rows);
	for (size_t r = 0; r < nrows; r++)
		json_array_append_new(rows, row_json(&c, order[r], r + 1, composite));
	free(order);

	const char *unit = composite ? "score" : json_string_value(json_object_get(units, metric));
	*out = result_json(o, metric, market, per, unit ? unit : default_unit(metric), &cp, composite, rows, unpriced,
			   c.left_out);
	rc = 0;
done:
	free(c.runs);
	for (size_t i = 0; i < c.nfl; i++)
		free(c.fl[i].code);
	free(c.fl);
	free(cp.names);
	free(cp.weights);
	json_decref(units);
	for (size_t i = 0; i < c.n; i++)
		sku_free(&c.s[i]);
	free(c.s);
	return rc;
}
