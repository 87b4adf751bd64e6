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
 *             bandwidth divided by the GPU count; memcpy.* and allreduce.*
 *             are already per GPU/link and kept) over the price per GPU-hour.
 *   score.*   composites: for each component metric m, n_m = v_m / max over
 *             SKUs of v_m (so the best SKU scores 1 on m); score =
 *             sum(w_m n_m) / sum(w_m), a missing metric counting 0 (and listed
 *             in "missing"); ranked by score per dollar-hour.  Weights:
 *               score.training  gemm.bf16.tflops 1, allreduce.busbw.gbps 1
 *               score.data      nvme.seqread.gbps, nvme.seqwrite.gbps,
 *                               nvme.randread.kiops, objstore.get.gbps,
 *                               objstore.put.gbps, 1 each
 *               score.all       every throughput metric any run has, 1 each
 *   estimate  with include_estimates, a priced SKU without a run gets
 *             gemm.<dtype>.tflops = reference peak x GPU count from
 *             pricing/gpus.h, always "estimate": true; no other metric is
 *             estimated.
 *
 * Only throughput metrics (.tflops, .gbps, .kiops, soak.tflops.*) are
 * ranked per dollar: a latency or an error count per dollar means nothing.
 */
#include "reports/rank.h"
#include "pricing/catalog.h"
#include "pricing/fx.h"
#include "pricing/gpus.h"
#include "results/store.h"
#include "runners/util.h"

#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct weight {
	const char *metric;
	double w;
};

static const struct weight w_training[] = { { "gemm.bf16.tflops", 1 }, { "allreduce.busbw.gbps", 1 } };
static const struct weight w_data[] = {
	{ "nvme.seqread.gbps", 1 }, { "nvme.seqwrite.gbps", 1 }, { "nvme.randread.kiops", 1 },
	{ "objstore.get.gbps", 1 }, { "objstore.put.gbps", 1 },
};

static int ends_with(const char *s, const char *suf)
{
	size_t a = strlen(s), b = strlen(suf);
	return a >= b && !strcmp(s + a - b, suf);
}

static int rankable(const char *m)
{
	return ends_with(m, ".tflops") || ends_with(m, ".gbps") || ends_with(m, ".kiops") ||
	       !strncmp(m, "soak.tflops.", 12);
}

/* value at gpu -1 is already per GPU (a link or a rank), not an instance total */
static int per_gpu_scope(const char *m)
{
	return !strncmp(m, "memcpy.", 7) || !strncmp(m, "allreduce.", 10);
}

static const char *default_unit(const char *m)
{
	if (ends_with(m, ".tflops") || !strncmp(m, "soak.tflops.", 12))
		return "TFLOP/s";
	if (ends_with(m, ".gbps"))
		return "GB/s";
	if (ends_with(m, ".kiops"))
		return "kIOPS";
	return "";
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
	double usd_h;
	/* runs */
	long *runs;
	size_t nruns;
	double run_gpus;        /* gpu count reported by the runs */
	char *run_gpu_model;
	struct mvals *m;
	size_t nm;
	char **flags;
	size_t nflags;
	/* results */
	int estimate;
	double value, vpd;
	json_t *components, *missing;
};

struct ctx {
	sqlite3 *db;
	const struct rank_opts *o;
	struct sku *s;
	size_t n;
	char *err;
	size_t errlen;
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
	free(k->runs);
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

static char *dup_col(sqlite3_stmt *st, int i)
{
	const unsigned char *t = sqlite3_column_text(st, i);
	return t ? gv_strdup((const char *)t) : NULL;
}

static int source_prio(const char *src)
{
	if (!strncmp(src, "import:", 7))
		return 3;
	if (!strncmp(src, "catalog:", 8))
		return 1;
	return 2;
}

static int load_prices(struct ctx *c)
{
	sqlite3_stmt *st;
	const char *market = c->o->market ? c->o->market : "on_demand";
	if (sqlite3_prepare_v2(c->db,
			       "SELECT provider, instance_type, region, gpu_model, gpu_count, price, unit, currency,"
			       " source, captured_at FROM prices WHERE market = ?1"
			       " AND (?2 IS NULL OR region = ?2 OR region = '')",
			       -1, &st, NULL) != SQLITE_OK) {
		snprintf(c->err, c->errlen, "cannot read prices: %s", sqlite3_errmsg(c->db));
		return -1;
	}
	char unrated[256] = ""; /* currencies already said to have no rate */
	sqlite3_bind_text(st, 1, market, -1, SQLITE_STATIC);
	if (c->o->region)
		sqlite3_bind_text(st, 2, c->o->region, -1, SQLITE_STATIC);
	while (sqlite3_step(st) == SQLITE_ROW) {
		const char *cur = (const char *)sqlite3_column_text(st, 7);
		const char *unit = (const char *)sqlite3_column_text(st, 6);
		const char *src = (const char *)sqlite3_column_text(st, 8);
		double rate;
		if (!cur || !unit || !src || fx_usd_per_unit(c->db, cur, &rate, NULL, 0) < 0) {
			if (!cur || !strstr(unrated, cur)) { /* once per currency, not once per price */
				gv_debug("rank: no exchange rate for %s, its prices skipped", cur ? cur : "?");
				size_t u = strlen(unrated);
				if (cur)
					snprintf(unrated + u, sizeof unrated - u, "%s ", cur);
			}
			continue;
		}
		double price = sqlite3_column_double(st, 5);
		double usd_h = (strcmp(unit, "month") ? price : price / 730.0) * rate;
		int prio = source_prio(src);
		struct sku *k = sku_get(c, (const char *)sqlite3_column_text(st, 0),
					(const char *)sqlite3_column_text(st, 1), 1);
		if (k->priced && (prio < k->prio || (prio == k->prio && usd_h >= k->usd_h)))
			continue;
		free(k->region);
		free(k->gpu_model);
		free(k->source);
		free(k->captured);
		k->priced = 1;
		k->prio = prio;
		k->usd_h = usd_h;
		k->region = dup_col(st, 2);
		k->gpu_model = dup_col(st, 3);
		k->gpus = sqlite3_column_type(st, 4) == SQLITE_NULL ? NAN : sqlite3_column_double(st, 4);
		k->source = dup_col(st, 8);
		k->captured = dup_col(st, 9);
	}
	sqlite3_finalize(st);
	return 0;
}

static struct sku *sku_of_run(struct ctx *c, long run)
{
	for (size_t i = 0; i < c->n; i++)
		for (size_t j = 0; j < c->s[i].nruns; j++)
			if (c->s[i].runs[j] == run)
				return &c->s[i];
	return NULL;
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

static int load_runs(struct ctx *c, json_t *units)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(c->db,
			       "SELECT id, provider, instance_type, gpu_count, gpu_model FROM runs"
			       " WHERE provider IS NOT NULL AND instance_type IS NOT NULL"
			       " AND (?1 IS NULL OR region = ?1)",
			       -1, &st, NULL) != SQLITE_OK) {
		snprintf(c->err, c->errlen, "cannot read runs: %s", sqlite3_errmsg(c->db));
		return -1;
	}
	if (c->o->region)
		sqlite3_bind_text(st, 1, c->o->region, -1, SQLITE_STATIC);
	while (sqlite3_step(st) == SQLITE_ROW) {
		struct sku *k = sku_get(c, (const char *)sqlite3_column_text(st, 1),
					(const char *)sqlite3_column_text(st, 2), 1);
		k->runs = gv_realloc(k->runs, (k->nruns + 1) * sizeof *k->runs);
		k->runs[k->nruns++] = (long)sqlite3_column_int64(st, 0);
		if (sqlite3_column_int64(st, 3) > 0)
			k->run_gpus = (double)sqlite3_column_int64(st, 3);
		if (!k->run_gpu_model && sqlite3_column_type(st, 4) != SQLITE_NULL)
			k->run_gpu_model = dup_col(st, 4);
	}
	sqlite3_finalize(st);

	if (sqlite3_prepare_v2(c->db, "SELECT run_id, name, value, unit FROM metrics WHERE gpu = -1 AND value IS NOT NULL"
				      " ORDER BY run_id",
			       -1, &st, NULL) != SQLITE_OK) {
		snprintf(c->err, c->errlen, "cannot read metrics: %s", sqlite3_errmsg(c->db));
		return -1;
	}
	long last = -1;
	struct sku *k = NULL;
	while (sqlite3_step(st) == SQLITE_ROW) {
		long run = (long)sqlite3_column_int64(st, 0);
		const char *name = (const char *)sqlite3_column_text(st, 1);
		if (run != last) {
			k = sku_of_run(c, run);
			last = run;
		}
		if (!k || !name || !rankable(name))
			continue;
		double v = sqlite3_column_double(st, 2);
		if (!isfinite(v))
			continue;
		add_value(k, name, v);
		const char *unit = (const char *)sqlite3_column_text(st, 3);
		if (unit && *unit && !json_object_get(units, name))
			json_object_set_new(units, name, json_string(unit));
	}
	sqlite3_finalize(st);
	return 0;
}

/* distinct flag codes of the runs (of one SKU) that contributed */
static void load_flags(struct ctx *c, struct sku *k, const char *const *metrics, size_t nmetrics)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(c->db, "SELECT DISTINCT f.code FROM flags f WHERE f.run_id = ?1"
				      " AND EXISTS (SELECT 1 FROM metrics m WHERE m.run_id = f.run_id AND m.gpu = -1"
				      " AND +m.name = ?2)",
			       -1, &st, NULL) != SQLITE_OK)
		return;
	for (size_t r = 0; r < k->nruns; r++)
		for (size_t mi = 0; mi < nmetrics; mi++) {
			sqlite3_reset(st);
			sqlite3_bind_int64(st, 1, k->runs[r]);
			sqlite3_bind_text(st, 2, metrics[mi], -1, SQLITE_STATIC);
			while (sqlite3_step(st) == SQLITE_ROW) {
				const char *code = (const char *)sqlite3_column_text(st, 0);
				int seen = 0;
				for (size_t i = 0; i < k->nflags && code; i++)
					seen |= !strcmp(k->flags[i], code);
				if (code && !seen) {
					k->flags = gv_realloc(k->flags, (k->nflags + 1) * sizeof *k->flags);
					k->flags[k->nflags++] = gv_strdup(code);
				}
			}
		}
	sqlite3_finalize(st);
}

/* runs of the SKU that have at least one of the metrics */
static long count_runs(struct ctx *c, struct sku *k, const char *const *metrics, size_t nmetrics)
{
	sqlite3_stmt *st;
	long n = 0;
	if (sqlite3_prepare_v2(c->db, "SELECT 1 FROM metrics WHERE run_id = ?1 AND gpu = -1 AND +name = ?2 LIMIT 1",
			       -1, &st, NULL) != SQLITE_OK)
		return 0;
	for (size_t r = 0; r < k->nruns; r++) {
		int has = 0;
		for (size_t mi = 0; mi < nmetrics && !has; mi++) {
			sqlite3_reset(st);
			sqlite3_bind_int64(st, 1, k->runs[r]);
			sqlite3_bind_text(st, 2, metrics[mi], -1, SQLITE_STATIC);
			has = sqlite3_step(st) == SQLITE_ROW;
		}
		n += has;
	}
	sqlite3_finalize(st);
	return n;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static int median_of(struct sku *k, const char *metric, double *out)
{
	for (size_t i = 0; i < k->nm; i++) {
		if (strcmp(k->m[i].name, metric))
			continue;
		struct mvals *m = &k->m[i];
		qsort(m->v, m->n, sizeof *m->v, cmp_double);
		*out = m->n % 2 ? m->v[m->n / 2] : (m->v[m->n / 2 - 1] + m->v[m->n / 2]) / 2;
		return 0;
	}
	return -1;
}

static double sku_gpus(const struct sku *k)
{
	return !isnan(k->gpus) && k->gpus > 0 ? k->gpus : k->run_gpus;
}

/* reference estimate of gemm.<dtype>.tflops; -1 when none */
static int estimate_of(const struct sku *k, const char *metric, double *out)
{
	char dtype[16];
	if (strncmp(metric, "gemm.", 5) || !ends_with(metric, ".tflops"))
		return -1;
	size_t len = strlen(metric) - 5 - 7;
	if (len == 0 || len >= sizeof dtype)
		return -1;
	memcpy(dtype, metric + 5, len);
	dtype[len] = '\0';
	int d = gpu_dtype_from_name(dtype);
	const struct gpu_ref *ref = k->gpu_model ? gpu_ref_find(k->gpu_model) : NULL;
	double gpus = sku_gpus(k);
	if (d < 0 || !ref || !(gpus > 0) || !(ref->peak_tflops[d] > 0))
		return -1;
	*out = ref->peak_tflops[d] * gpus;
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
	if (x->vpd != y->vpd)
		return x->vpd < y->vpd ? 1 : -1;
	int c = strcmp(x->provider, y->provider);
	return c ? c : strcmp(x->itype, y->itype);
}

int rank_compute(struct store *s, const struct rank_opts *o, json_t **out, char *err, size_t errlen)
{
	struct ctx c = { .db = store_db(s), .o = o, .err = err, .errlen = errlen };
	const char *metric = o->metric ? o->metric : "gemm.bf16.tflops";
	const char *market = o->market ? o->market : "on_demand";
	const char *per = o->per ? o->per : "instance";
	int per_gpu = !strcmp(per, "gpu");
	json_t *units = json_object(), *res = NULL;
	const char **names = NULL;
	double *weights = NULL;
	size_t nnames = 0;
	int composite = !strncmp(metric, "score.", 6);
	int rc = -1;

	*out = NULL;
	if (strcmp(market, "on_demand") && strcmp(market, "spot") && strcmp(market, "reserved")) {
		snprintf(err, errlen, "market must be on_demand, spot or reserved, not '%s'", market);
		goto done;
	}
	if (strcmp(per, "instance") && strcmp(per, "gpu")) {
		snprintf(err, errlen, "per must be instance or gpu, not '%s'", per);
		goto done;
	}
	if (composite && strcmp(metric, "score.training") && strcmp(metric, "score.data") &&
	    strcmp(metric, "score.all")) {
		snprintf(err, errlen, "unknown score '%s' (score.training, score.data or score.all)", metric);
		goto done;
	}
	if (!composite && !rankable(metric)) {
		snprintf(err, errlen, "metric '%s' is not a throughput (.tflops, .gbps, .kiops): "
				      "ranking it per dollar means nothing", metric);
		goto done;
	}
	/* shipped catalogs on first use, when the store is writable */
	if (!sqlite3_db_readonly(c.db, "main") &&
	    catalog_ensure_shipped(c.db, 0, NULL, err, errlen) < 0)
		goto done;
	if (load_prices(&c) < 0 || load_runs(&c, units) < 0)
		goto done;

	/* the component metrics */
	if (!composite) {
		names = gv_malloc(sizeof *names);
		weights = gv_malloc(sizeof *weights);
		names[0] = metric;
		weights[0] = 1;
		nnames = 1;
	} else if (!strcmp(metric, "score.training") || !strcmp(metric, "score.data")) {
		const struct weight *w = !strcmp(metric, "score.training") ? w_training : w_data;
		nnames = !strcmp(metric, "score.training") ? sizeof w_training / sizeof *w_training
							   : sizeof w_data / sizeof *w_data;
		names = gv_malloc(nnames * sizeof *names);
		weights = gv_malloc(nnames * sizeof *weights);
		for (size_t i = 0; i < nnames; i++) {
			names[i] = w[i].metric;
			weights[i] = w[i].w;
		}
	} else {
		for (size_t i = 0; i < c.n; i++)
			for (size_t j = 0; j < c.s[i].nm; j++) {
				int seen = 0;
				for (size_t q = 0; q < nnames; q++)
					seen |= !strcmp(names[q], c.s[i].m[j].name);
				if (!seen) {
					names = gv_realloc(names, (nnames + 1) * sizeof *names);
					weights = gv_realloc(weights, (nnames + 1) * sizeof *weights);
					names[nnames] = c.s[i].m[j].name;
					weights[nnames++] = 1;
				}
			}
	}

	/* per SKU, per component: the shown value (median or estimate) */
	size_t nsku = c.n;
	double *val = gv_malloc((nsku ? nsku : 1) * (nnames ? nnames : 1) * sizeof *val);
	int *meas = gv_calloc(nsku ? nsku : 1, sizeof *meas);
	int *est = gv_calloc(nsku ? nsku : 1, sizeof *est);
	double *best = gv_calloc(nnames ? nnames : 1, sizeof *best);
	for (size_t i = 0; i < nsku; i++) {
		struct sku *k = &c.s[i];
		for (size_t j = 0; j < nnames; j++) {
			double v;
			val[i * nnames + j] = NAN;
			if (median_of(k, names[j], &v) == 0) {
				meas[i] = 1;
			} else if (!o->include_estimates || estimate_of(k, names[j], &v) < 0) {
				continue;
			} else {
				est[i] = 1;
			}
			if (per_gpu && !(sku_gpus(k) > 0))
				continue;
			v = per_value(o, k, names[j], v);
			val[i * nnames + j] = v;
		}
	}
	/* a SKU with any measured component is measured, never an estimate */
	for (size_t i = 0; i < nsku; i++) {
		if (meas[i]) {
			est[i] = 0;
			for (size_t j = 0; j < nnames; j++)
				if (median_of(&c.s[i], names[j], &(double){ 0 }) < 0)
					val[i * nnames + j] = NAN;
		}
		for (size_t j = 0; j < nnames; j++)
			if (!isnan(val[i * nnames + j]) && val[i * nnames + j] > best[j] && c.s[i].priced)
				best[j] = val[i * nnames + j];
	}

	json_t *rows = json_array(), *unpriced = json_array();
	struct sku **order = gv_malloc((nsku ? nsku : 1) * sizeof *order);
	size_t nrows = 0;
	int any_measured = 0;
	for (size_t i = 0; i < nsku; i++) {
		struct sku *k = &c.s[i];
		int have = 0;
		for (size_t j = 0; j < nnames; j++)
			have |= !isnan(val[i * nnames + j]);
		if (!have)
			continue;
		if (meas[i])
			any_measured = 1;
		if (!k->priced) {
			json_array_append_new(unpriced, json_pack("{s:s,s:s,s:I}", "provider", k->provider,
								  "instance_type", k->itype,
								  "runs", (json_int_t)count_runs(&c, k, names, nnames)));
			continue;
		}
		double price = per_price(o, k);
		if (!(price > 0))
			continue;
		if (!composite) {
			k->value = val[i * nnames];
		} else {
			double sw = 0, sv = 0;
			k->components = json_object();
			k->missing = json_array();
			for (size_t j = 0; j < nnames; j++) {
				sw += weights[j];
				double v = val[i * nnames + j];
				if (isnan(v) || !(best[j] > 0)) {
					json_array_append_new(k->missing, json_string(names[j]));
					continue;
				}
				sv += weights[j] * v / best[j];
				json_object_set_new(k->components, names[j], json_real(v / best[j]));
			}
			k->value = sw > 0 ? sv / sw : 0;
		}
		k->vpd = k->value / price;
		k->estimate = est[i];
		if (meas[i])
			load_flags(&c, k, names, nnames);
		order[nrows++] = k;
	}
	free(val);
	free(meas);
	free(est);
	free(best);
	if (!any_measured && !o->include_estimates) {
		snprintf(err, errlen, "no stored run has %s%s (run gpuvet run, or use --estimates)",
			 composite ? "a metric of " : "metric ", metric);
		free(order);
		json_decref(rows);
		json_decref(unpriced);
		goto done;
	}
	qsort(order, nrows, sizeof *order, cmp_rows);
	for (size_t r = 0; r < nrows; r++) {
		struct sku *k = order[r];
		json_t *flags = json_array();
		for (size_t f = 0; f < k->nflags; f++)
			json_array_append_new(flags, json_string(k->flags[f]));
		double gpus = sku_gpus(k);
		const char *model = k->gpu_model ? k->gpu_model : k->run_gpu_model;
		json_t *row = json_object();
		json_object_set_new(row, "rank", json_integer((json_int_t)r + 1));
		json_object_set_new(row, "provider", json_string(k->provider));
		json_object_set_new(row, "instance_type", json_string(k->itype));
		json_object_set_new(row, "region", json_string(k->region ? k->region : ""));
		json_object_set_new(row, "gpu_model", model ? json_string(model) : json_null());
		json_object_set_new(row, "gpu_count", gpus > 0 ? json_real(gpus) : json_null());
		json_object_set_new(row, "price_per_hour", json_real(per_price(o, k)));
		json_object_set_new(row, "currency", json_string("USD"));
		json_object_set_new(row, "price_source", json_string(k->source ? k->source : ""));
		json_object_set_new(row, "price_captured_at", json_string(k->captured ? k->captured : ""));
		json_object_set_new(row, "value", json_real(k->value));
		json_object_set_new(row, "value_per_dollar", json_real(k->vpd));
		json_object_set_new(row, "runs", json_integer(k->estimate ? 0 : count_runs(&c, k, names, nnames)));
		json_object_set_new(row, "flags", flags);
		json_object_set_new(row, "estimate", json_boolean(k->estimate));
		if (composite) {
			json_object_set(row, "components", k->components);
			json_object_set(row, "missing", k->missing);
		}
		json_array_append_new(rows, row);
	}
	free(order);

	const char *unit = composite ? "score" : json_string_value(json_object_get(units, metric));
	if (!unit)
		unit = default_unit(metric);
	res = json_object();
	json_object_set_new(res, "metric", json_string(metric));
	json_object_set_new(res, "unit", json_string(unit));
	json_object_set_new(res, "value_per_dollar_unit",
			    json_string(per_gpu ? "per USD per GPU-hour" : "per USD per instance-hour"));
	json_object_set_new(res, "market", json_string(market));
	json_object_set_new(res, "per", json_string(per));
	json_object_set_new(res, "region", o->region ? json_string(o->region) : json_null());
	if (composite) {
		json_t *w = json_object();
		for (size_t j = 0; j < nnames; j++)
			json_object_set_new(w, names[j], json_real(weights[j]));
		json_object_set_new(res, "weights", w);
		json_object_set_new(res, "normalisation",
				    json_string("each component divided by the best SKU's value; weighted mean, "
						"a missing component counts 0; ranked by score per USD-hour"));
	}
	json_object_set_new(res, "rows", rows);
	json_object_set_new(res, "unpriced", unpriced);
	*out = res;
	rc = 0;
done:
	free(names);
	free(weights);
	json_decref(units);
	for (size_t i = 0; i < c.n; i++)
		sku_free(&c.s[i]);
	free(c.s);
	return rc;
}
