/*
 * cluster_cases.h - small cluster runs with known answers, for the analysis's unit tests
 * (test_cluster_analyse.c, test_cluster_localise.c, test_cluster_nodes.c): n healthy nodes on the
 * `all` schedule, then a node, a link or one direction slowed, figures given, findings counted.
 */
#ifndef GPUVET_TEST_CLUSTER_CASES_H
#define GPUVET_TEST_CLUSTER_CASES_H

#include "judge/cluster.h"
#include "judge/policy.h"
#include "tests/unit/t.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* n healthy nodes, schedule all, every pair at rate gbps with a little spread, latency 20 us. */
static inline struct gv_cluster *healthy(int n, double gbps)
{
	struct gv_cluster *c = gv_cluster_new(n);
	snprintf(c->transport, sizeof c->transport, "tcp");
	for (int i = 0; i < n; i++) {
		c->nodes[i].state = GV_NODE_OK;
		c->nodes[i].verdict = 0;
		snprintf(c->nodes[i].host, sizeof c->nodes[i].host, "node%d", i);
		snprintf(c->nodes[i].addr, sizeof c->nodes[i].addr, "198.18.0.%d", i + 1);
	}
	CHECK(cluster_schedule(n, CLUSTER_PAIRS_ALL, &c->pairs, &c->npairs, &c->nrounds) == 0);
	for (size_t k = 0; k < c->npairs; k++) {
		struct gv_cluster_pair *p = &c->pairs[k];
		p->state = GV_PAIR_MEASURED;
		p->gbps_ab = gbps * (1 + 0.01 * (double)((k * 7) % 5));
		p->gbps_ba = gbps * (1 - 0.01 * (double)((k * 3) % 4));
		p->lat_us = 20 * (1 + 0.01 * (double)(k % 3));
	}
	return c;
}

/* Scales every pair of node i (both ways), or the pair (i, j) when j >= 0. */
static inline void slow(struct gv_cluster *c, int i, int j, double f)
{
	for (size_t k = 0; k < c->npairs; k++) {
		struct gv_cluster_pair *p = &c->pairs[k];
		if ((p->a == i || p->b == i) && (j < 0 || p->a == j || p->b == j)) {
			p->gbps_ab *= f;
			p->gbps_ba *= f;
		}
	}
}

/* The nodes of mask (bit i: rank i) at f of the rate both ways: a pair as slow as its slower node. */
static inline void slow_nodes(struct gv_cluster *c, unsigned long mask, double f)
{
	for (size_t k = 0; k < c->npairs; k++) {
		struct gv_cluster_pair *p = &c->pairs[k];
		if ((mask >> p->a & 1) || (mask >> p->b & 1)) {
			p->gbps_ab *= f;
			p->gbps_ba *= f;
		}
	}
}

/* The pair of ranks i and j. */
static inline struct gv_cluster_pair *pair_of(struct gv_cluster *c, int i, int j)
{
	for (size_t k = 0; k < c->npairs; k++)
		if ((c->pairs[k].a == i && c->pairs[k].b == j) || (c->pairs[k].a == j && c->pairs[k].b == i))
			return &c->pairs[k];
	return NULL;
}

/* Findings of kind for rank (-2 any) and peer (-2 any). */
static inline int count(const struct gv_cluster *c, int kind, int rank, int peer)
{
	int n = 0;
	for (size_t i = 0; i < c->nfindings; i++)
		n += c->findings[i].kind == kind && (rank < -1 || c->findings[i].rank == rank) &&
		     (peer < -1 || c->findings[i].peer == peer);
	return n;
}

static inline const char *evidence(const struct gv_cluster *c, int kind)
{
	for (size_t i = 0; i < c->nfindings; i++)
		if (c->findings[i].kind == kind)
			return c->findings[i].evidence;
	return "";
}

/* The ranks to drain, ascending, as a string "1,3" ("" none). */
static inline const char *drains(const struct gv_cluster *c)
{
	static char buf[512];
	buf[0] = 0;
	for (int r = 0; r < c->nnodes; r++)
		for (size_t i = 0; i < c->nfindings; i++)
			if (c->findings[i].drain && c->findings[i].rank == r) {
				snprintf(buf + strlen(buf), sizeof buf - strlen(buf), "%s%d", buf[0] ? "," : "", r);
				break;
			}
	return buf;
}

static inline void dump(const struct gv_cluster *c)
{
	for (size_t i = 0; i < c->nfindings; i++)
		fprintf(stderr, "  %s rank %d peer %d drain %d: %s\n", gv_finding_name(c->findings[i].kind), c->findings[i].rank,
			c->findings[i].peer, c->findings[i].drain, c->findings[i].evidence);
}

static inline void analyse_with(struct gv_cluster *c, const struct policy *p)
{
	char err[256] = "";
	CHECK(cluster_analyse(c, p, err, sizeof err) == 0);
	if (err[0])
		fprintf(stderr, "%s\n", err);
}

static inline void analyse(struct gv_cluster *c)
{
	analyse_with(c, NULL);
}

/* A figure of node n's fingerprint (measured again: again, NAN when it was not). */
static inline void give_again(struct gv_cluster_node *n, const char *name, double v, int hb, double again)
{
	n->metrics = realloc(n->metrics, (n->nmetrics + 1) * sizeof *n->metrics);
	struct gv_cluster_metric *m = &n->metrics[n->nmetrics++];
	memset(m, 0, sizeof *m);
	snprintf(m->name, sizeof m->name, "%s", name);
	m->value = v;
	m->higher_better = hb;
	m->remeasured = again;
}

static inline void give(struct gv_cluster_node *n, const char *name, double v, int hb)
{
	give_again(n, name, v, hb, NAN);
}

/* A policy from text (NULL and the error printed when it does not parse). */
static inline struct policy *policy_of(const char *text)
{
	struct policy *p = NULL;
	char err[256] = "";
	if (policy_parse(text, strlen(text), "test", &p, err, sizeof err)) {
		fprintf(stderr, "policy: %s\n", err);
		return NULL;
	}
	return p;
}

#endif
