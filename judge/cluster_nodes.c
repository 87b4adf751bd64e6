/*
 * cluster_nodes.c - a node's own figures for the straggler analysis
 * (cluster_node_metrics), the suspects rank 0 has measure again
 * (cluster_suspects) and the stragglers (cluster_find_stragglers,
 * judge/cluster_int.h).  docs/cluster.md "Stragglers".
 *
 * Only figures whose noise is known to be small count, so that a node is
 * never drained on one noisy figure: a metric whose row says its spread is
 * small (METRIC_LOW_SPREAD: GEMM, device memory, pinned copies), or one whose
 * row's params say it was measured more than once (best_of, passes or reps of
 * 2 or more: host memory bandwidth, /dev/shm staging); never a figure taken
 * once (JPEG decode, fio, object store), nor a bandwidth whose arrays fit in
 * the last-level cache (in_cache).  Which way is better comes from the
 * bench's row: throughputs (METRIC_RANKABLE) and latencies in us or ms
 * (METRIC_LOWER_IS_BETTER); a per-GPU metric is reduced to the node's worst
 * GPU (a synchronous step waits for it).
 *
 * The margin is the cluster's own: for each figure, the median of the nodes
 * and their median absolute deviation (MAD); a node is off when its figure is
 * further from the median than the larger of the policy's fraction
 * (max_fraction_below_median / _above_) and spread_multiple robust standard
 * deviations (1.4826 x MAD, the normal's sigma).  A node off on any figure is
 * a suspect; rank 0 has every node measure the suspects' benches again side
 * by side (metric.remeasured), and a suspect is a straggler only when its
 * figure measured again is off too, against the median of that second pass.
 */
#include "judge/cluster.h"
#include "judge/cluster_int.h"
#include "benches/bench.h"
#include "common/stats.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAD_SIGMA 1.4826   /* a normal distribution's standard deviation over its median absolute deviation */

/* 1: more is better, 0: less is better, -1: not a straggler figure. */
static int direction(const char *name, const char *unit)
{
	const struct metric_info *mi = metric_info_find(name);
	if (!mi)
		return -1;
	if (mi->flags & METRIC_RANKABLE)
		return 1;
	if ((mi->flags & METRIC_LOWER_IS_BETTER) && unit && (!strcmp(unit, "us") || !strcmp(unit, "ms")))
		return 0;
	return -1;
}

/* How many times a row's figure was measured, as its params say (best_of, passes, reps); 1 when they do not. */
static long repeated(const json_t *params)
{
	static const char *const keys[] = { "best_of", "passes", "reps" };
	for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
		const json_t *v = json_object_get(params, keys[i]);
		if (json_is_integer(v))
			return (long)json_integer_value(v);
	}
	return 1;
}

/*
 * A memory-bandwidth row whose arrays were smaller than the last-level cache (its params say array_bytes and
 * llc_bytes): it measured the cache as much as the memory, and what it reads depends on what else shares that
 * cache at the moment (4 ranks of one test machine read 2.5 and 34 GB/s for the same copy, #56).
 */
static int in_cache(const json_t *params)
{
	const json_t *a = json_object_get(params, "array_bytes"), *l = json_object_get(params, "llc_bytes");
	return json_is_number(a) && json_is_number(l) && json_number_value(a) < json_number_value(l);
}

/* A figure the straggler analysis may judge: its noise is known to be small, or it was measured more than once
 * and not inside a cache it shares. */
static int quiet(const char *name, const json_t *row)
{
	const struct metric_info *mi = metric_info_find(name);
	const json_t *params = json_object_get(row, "params");
	return (mi && (mi->flags & METRIC_LOW_SPREAD)) || (repeated(params) >= 2 && !in_cache(params));
}

static struct gv_cluster_metric *find_metric(struct gv_cluster_node *n, const char *name)
{
	for (size_t i = 0; i < n->nmetrics; i++)
		if (!strcmp(n->metrics[i].name, name))
			return &n->metrics[i];
	return NULL;
}

/* Keeps the worse of the value held and v. */
static void keep_worst(struct gv_cluster_metric *m, double v)
{
	if (isnan(m->value) || (m->higher_better ? v < m->value : v > m->value))
		m->value = v;
}

int cluster_node_metrics(const json_t *fingerprint, struct gv_cluster_node *n)
{
	const json_t *rows = json_object_get(fingerprint, "metrics"), *row;
	size_t i, cap = json_array_size(rows);
	free(n->metrics);
	n->metrics = NULL;
	n->nmetrics = 0;
	if (!json_is_array(rows))
		return json_is_object(fingerprint) ? 0 : -1;
	n->metrics = calloc(cap ? cap : 1, sizeof *n->metrics);
	if (!n->metrics)
		return -1;
	/* two passes: per-GPU rows first; an instance row only for a metric with no per-GPU row */
	for (int pass = 0; pass < 2; pass++) {
		size_t before = n->nmetrics;
		json_array_foreach(rows, i, row) {
			const char *name = json_string_value(json_object_get(row, "name"));
			const json_t *val = json_object_get(row, "value");
			int gpu = (int)json_integer_value(json_object_get(row, "gpu"));
			if (!name || strlen(name) >= sizeof n->metrics->name || !json_is_number(val) ||
			    !isfinite(json_number_value(val)) || (pass == 0) != (gpu >= 0) || !quiet(name, row))
				continue;
			int dir = direction(name, json_string_value(json_object_get(row, "unit")));
			if (dir < 0)
				continue;
			struct gv_cluster_metric *m = find_metric(n, name);
			if (m && pass == 1 && (size_t)(m - n->metrics) < before)
				continue;   /* a per-GPU row of it was kept */
			if (!m) {
				m = &n->metrics[n->nmetrics++];
				snprintf(m->name, sizeof m->name, "%s", name);
				m->higher_better = dir;
				m->value = NAN;
				m->remeasured = NAN;
			}
			keep_worst(m, json_number_value(val));
		}
	}
	return 0;
}

/* Each figure the nodes report (at least 3 nodes): the median, the MAD and how many, computed once. */
struct medians {
	char (*name)[64];
	double *med, *mad;
	size_t *count;
	size_t n;
};

static int counted(const struct gv_cluster *c, const unsigned char *shared, int i)
{
	return c->nodes[i].state == GV_NODE_OK && !(shared && shared[i]);
}

/* A figure as first measured, or as measured again (again: remeasured, NAN where it was not). */
static double figure(const struct gv_cluster_metric *m, int again)
{
	return again ? m->remeasured : m->value;
}

/* The nodes' values of one figure (from node j on, earlier nodes lack it) into vals; how many. */
static size_t values_of(const struct gv_cluster *c, const unsigned char *shared, int j, const char *name, int again,
			double *vals)
{
	size_t nv = 0;
	for (int i = j; i < c->nnodes; i++)
		for (size_t q = 0; counted(c, shared, i) && q < c->nodes[i].nmetrics; q++)
			if (!strcmp(c->nodes[i].metrics[q].name, name) && isfinite(figure(&c->nodes[i].metrics[q], again)))
				vals[nv++] = figure(&c->nodes[i].metrics[q], again);
	return nv;
}

/* The medians of the figures as first measured (again 0), or of the same measured again side by side (again 1). */
static int build_medians(const struct gv_cluster *c, const unsigned char *shared, int again, struct medians *md)
{
	size_t cap = 0;
	for (int j = 0; j < c->nnodes; j++)
		cap += counted(c, shared, j) ? c->nodes[j].nmetrics : 0;
	md->name = calloc(cap ? cap : 1, sizeof *md->name);
	md->med = calloc(cap ? cap : 1, sizeof *md->med);
	md->mad = calloc(cap ? cap : 1, sizeof *md->mad);
	md->count = calloc(cap ? cap : 1, sizeof *md->count);
	double *vals = malloc((size_t)c->nnodes * sizeof *vals);
	if (!md->name || !md->med || !md->mad || !md->count || !vals) {
		free(vals);
		return -1;
	}
	for (int j = 0; j < c->nnodes; j++)
		for (size_t k = 0; counted(c, shared, j) && k < c->nodes[j].nmetrics; k++) {
			const char *name = c->nodes[j].metrics[k].name;
			size_t u = 0;
			while (u < md->n && strcmp(md->name[u], name))
				u++;
			if (u < md->n)
				continue;
			size_t nv = values_of(c, shared, j, name, again, vals);
			double med = gv_median_inplace(vals, nv);
			for (size_t q = 0; q < nv; q++)
				vals[q] = fabs(vals[q] - med);
			snprintf(md->name[md->n], sizeof md->name[0], "%s", name);
			md->count[md->n] = nv;
			md->mad[md->n] = gv_median_inplace(vals, nv);
			md->med[md->n++] = med;
		}
	free(vals);
	return 0;
}

static void free_medians(struct medians *md)
{
	free(md->name);
	free(md->med);
	free(md->mad);
	free(md->count);
}

/* How far v is from the median on the bad side, as a fraction of it (negative: the good side). */
static double off_by(const struct gv_cluster_metric *x, double v, double med)
{
	return !(med > 0) || !isfinite(v) ? 0 : x->higher_better ? 1 - v / med : v / med - 1;
}

/* The margin of figure u for x's direction: 0 when the policy has no check that way. */
static double margin_of(const struct gv_cluster_metric *x, const struct cluster_rules *r, const struct medians *md,
			size_t u)
{
	double floor = x->higher_better ? r->pc.node_below : r->pc.node_above;
	if (!(floor > 0) || !(md->med[u] > 0))
		return 0;
	double spread = r->pc.node_spread * MAD_SIGMA * md->mad[u] / md->med[u];
	return spread > floor ? spread : floor;
}

static size_t index_of(const struct medians *md, const char *name)
{
	size_t u = 0;
	while (u < md->n && strcmp(md->name[u], name))
		u++;
	return u;
}

/* What a figure is judged against: a median, the margin around it, the MAD behind the margin and how many nodes. */
struct basis {
	double med, margin, mad;
	size_t count;
};

static int basis_of(const struct gv_cluster_metric *x, const struct cluster_rules *r, const struct medians *md,
		    struct basis *b)
{
	size_t u = md ? index_of(md, x->name) : 0;
	if (!md || u == md->n || md->count[u] < 3)
		return -1;   /* a median of two says nothing about which one is off */
	*b = (struct basis){ md->med[u], margin_of(x, r, md, u), md->mad[u], md->count[u] };
	return 0;
}

/* Why node i straggles on figure x: both measurements against what each was judged against. */
static void say_why(const struct gv_cluster_metric *x, const struct cluster_rules *r, const struct basis *first,
		    const struct basis *again, int beside, char *why, size_t whylen)
{
	const char *way = x->higher_better ? "under" : "over";
	double pol = 100 * (x->higher_better ? r->pc.node_below : r->pc.node_above);
	double off = off_by(x, x->value, first->med), off2 = off_by(x, x->remeasured, again->med);
	if (beside)
		snprintf(why, whylen, "%s %.4g is %.0f%% %s the median %.4g of %zu nodes, and %.4g measured again %.0f%% %s "
			 "the median %.4g of the %zu measured again beside it; the margins %.0f%% and %.0f%% are the larger of "
			 "the policy's %.0f%% and %.3g robust deviations (MAD %.3g, then %.3g)", x->name, x->value, 100 * off,
			 way, first->med, first->count, x->remeasured, 100 * off2, way, again->med, again->count,
			 100 * first->margin, 100 * again->margin, pol, r->pc.node_spread, first->mad, again->mad);
	else
		snprintf(why, whylen, "%s %.4g is %.0f%% %s the median %.4g of %zu nodes, and %.4g measured again (%.0f%%); "
			 "the margin %.0f%% is the larger of the policy's %.0f%% and %.3g robust deviations (MAD %.3g)",
			 x->name, x->value, 100 * off, way, first->med, first->count, x->remeasured, 100 * off2,
			 100 * first->margin, pol, r->pc.node_spread, first->mad);
}

/*
 * Node i against the medians: suspect on some figure (return 1, 2 when measured again and still
 * off on one, in which case why says so).  The figure measured again is judged against the
 * nodes measured again beside it (again: at least 3 of them), so that whatever moved every node
 * between the two passes (a GPU's clocks after the first burn, other tenants, the load of a
 * shared test machine) moves the median with it; against the first median where they were not
 * (a runtime that measured only its suspects again, again NULL).
 */
static int straggles(const struct gv_cluster *c, int i, const struct cluster_rules *r, const struct medians *md,
		     const struct medians *again, char *why, size_t whylen)
{
	const struct gv_cluster_node *n = &c->nodes[i];
	double worst = 0;
	int suspect = 0, confirmed = 0;
	for (size_t m = 0; m < n->nmetrics; m++) {
		const struct gv_cluster_metric *x = &n->metrics[m];
		struct basis first, second;
		if (basis_of(x, r, md, &first) || !isfinite(x->value))
			continue;
		double off = off_by(x, x->value, first.med);
		if (!(first.margin > 0) || !(off > first.margin))
			continue;
		suspect = 1;
		int beside = !basis_of(x, r, again, &second);
		if (!beside)
			second = first;
		if (!isfinite(x->remeasured) || !(second.margin > 0) || !(off_by(x, x->remeasured, second.med) > second.margin))
			continue;
		confirmed++;
		if (off > worst) {
			worst = off;
			say_why(x, r, &first, &second, beside, why, whylen);
		}
	}
	if (confirmed > 1) {
		size_t l = strlen(why);
		snprintf(why + l, whylen - l, ", and %d more figure%s", confirmed - 1, confirmed - 1 == 1 ? "" : "s");
	}
	return confirmed ? 2 : suspect;
}

int cluster_find_stragglers(struct gv_cluster *c, const struct cluster_rules *r, struct cluster_tally *t)
{
	struct medians md = { 0 }, again = { 0 };
	int rc = build_medians(c, r->shared, 0, &md) || build_medians(c, r->shared, 1, &again) ? -1 : 0;
	for (int i = 0; !rc && i < c->nnodes; i++) {
		char why[384] = "";
		if (!counted(c, r->shared, i) || straggles(c, i, r, &md, &again, why, sizeof why) != 2)
			continue;
		rc = gv_cluster_add_finding(c, GV_FIND_STRAGGLER, i, -1, 1, "%s", why);
		t->reject = 1;
	}
	free_medians(&md);
	free_medians(&again);
	return rc;
}

int cluster_suspects(const struct gv_cluster *c, const struct policy *p, int *ranks, int max)
{
	struct cluster_rules r;
	struct medians md = { 0 };
	char err[256];
	int n = -1;
	memset(&r, 0, sizeof r);
	r.shared = calloc((size_t)c->nnodes, 1);
	if (r.shared && !cluster_rules_of(p, &r, NULL, 0, err, sizeof err)) {
		cluster_shared_hosts(c, r.shared, NULL);
		if (!build_medians(c, r.shared, 0, &md))
			n = 0;
	}
	for (int i = 0; n >= 0 && i < c->nnodes && n < max; i++) {
		char why[384];
		if (counted(c, r.shared, i) && straggles(c, i, &r, &md, NULL, why, sizeof why))
			ranks[n++] = i;
	}
	free(r.shared);
	free_medians(&md);
	return n;
}
