/*
 * cluster_nodes.c - a node's own figures for the straggler analysis
 * (cluster_node_metrics) and the stragglers themselves
 * (cluster_find_stragglers, judge/cluster_int.h).
 *
 * Which figures, and which way is better, come from the benches' declared
 * metric rows (benches/bench.h metric_info): every throughput
 * (METRIC_RANKABLE, more is better) and every latency (METRIC_LOWER_IS_BETTER
 * in us or ms, less is better).  Counts and percentages are left out: a
 * relative margin around a median near zero means nothing.  A per-GPU
 * metric is reduced to the node's worst GPU (a node is as slow as its
 * slowest GPU in a synchronous step); a metric with only an instance row
 * (the all-reduce, ingest) keeps that row, its worst when repeated.
 */
#include "judge/cluster.h"
#include "judge/cluster_int.h"
#include "benches/bench.h"
#include "common/stats.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
			    !isfinite(json_number_value(val)) || (pass == 0) != (gpu >= 0))
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

/* The cluster median of each metric name the nodes report (at least 3 nodes), computed once. */
struct medians {
	char (*name)[64];
	double *med;
	size_t *count;
	size_t n;
};

static int build_medians(const struct gv_cluster *c, struct medians *md)
{
	size_t cap = 0;
	for (int j = 0; j < c->nnodes; j++)
		cap += c->nodes[j].state == GV_NODE_OK ? c->nodes[j].nmetrics : 0;
	md->name = calloc(cap ? cap : 1, sizeof *md->name);
	md->med = calloc(cap ? cap : 1, sizeof *md->med);
	md->count = calloc(cap ? cap : 1, sizeof *md->count);
	double *vals = malloc((size_t)c->nnodes * sizeof *vals);
	if (!md->name || !md->med || !md->count || !vals) {
		free(vals);
		return -1;
	}
	for (int j = 0; j < c->nnodes; j++)
		for (size_t k = 0; c->nodes[j].state == GV_NODE_OK && k < c->nodes[j].nmetrics; k++) {
			const char *name = c->nodes[j].metrics[k].name;
			size_t u = 0;
			while (u < md->n && strcmp(md->name[u], name))
				u++;
			if (u < md->n)
				continue;
			size_t nv = 0;
			for (int i = j; i < c->nnodes; i++)   /* earlier nodes lack it, or it would be known */
				for (size_t q = 0; c->nodes[i].state == GV_NODE_OK && q < c->nodes[i].nmetrics; q++)
					if (!strcmp(c->nodes[i].metrics[q].name, name) && isfinite(c->nodes[i].metrics[q].value))
						vals[nv++] = c->nodes[i].metrics[q].value;
			snprintf(md->name[md->n], sizeof md->name[0], "%s", name);
			md->count[md->n] = nv;
			md->med[md->n++] = gv_median_inplace(vals, nv);
		}
	free(vals);
	return 0;
}

/* The worst of node i's metrics against the cluster median; 1 when it is a straggler. */
static int straggles(const struct gv_cluster *c, int i, const struct cluster_rules *r, const struct medians *md,
		     char *why, size_t whylen)
{
	const struct gv_cluster_node *n = &c->nodes[i];
	double worst = 0;
	int count = 0;
	for (size_t m = 0; m < n->nmetrics; m++) {
		const struct gv_cluster_metric *x = &n->metrics[m];
		size_t u = 0;
		while (u < md->n && strcmp(md->name[u], x->name))
			u++;
		if (u == md->n || md->count[u] < 3 || !isfinite(x->value))
			continue;   /* a median of two says nothing about which one is off */
		double med = md->med[u];
		double off = !(med > 0) ? 0 : x->higher_better ? 1 - x->value / med : x->value / med - 1;
		double margin = x->higher_better ? r->pc.node_below : r->pc.node_above;
		if (!(margin > 0) || !(off > margin))
			continue;
		count++;
		if (off > worst) {
			worst = off;
			snprintf(why, whylen, "%s %.4g is %.0f%% %s the median %.4g of %zu nodes (allowed %.0f%%)", x->name,
				 x->value, 100 * off, x->higher_better ? "under" : "over", med, md->count[u], 100 * margin);
		}
	}
	if (count > 1) {
		size_t l = strlen(why);
		snprintf(why + l, whylen - l, ", and %d more figure%s", count - 1, count - 1 == 1 ? "" : "s");
	}
	return count > 0;
}

int cluster_find_stragglers(struct gv_cluster *c, const struct cluster_rules *r, struct cluster_tally *t)
{
	struct medians md = { 0 };
	int rc = build_medians(c, &md);
	for (int i = 0; !rc && i < c->nnodes; i++) {
		char why[300] = "";
		if (c->nodes[i].state != GV_NODE_OK || !straggles(c, i, r, &md, why, sizeof why))
			continue;
		rc = gv_cluster_add_finding(c, GV_FIND_STRAGGLER, i, -1, 1, "straggler: %s", why);
		t->reject = 1;
	}
	free(md.name);
	free(md.med);
	free(md.count);
	return rc;
}

/* Not yet: no node is a suspect, so none is measured again (#56 fills this in). */
int cluster_suspects(const struct gv_cluster *c, const struct policy *p, int *ranks, int max)
{
	(void)c;
	(void)p;
	(void)ranks;
	(void)max;
	return 0;
}
