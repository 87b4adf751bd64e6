/*
 * cluster_synth.h - a synthetic cluster run for the simulation
 * (tests/unit/test_cluster_sim.c) and its timing program
 * (tests/bench/cluster_sim.c): N nodes on one schedule, every pair measured
 * at a healthy rate with lognormal noise, each node's GEMM and host-to-device
 * figures with lognormal noise, and the plants: bad nodes (every pair at a
 * fifth), bad links (one pair at a fifth, its nodes healthy) and a straggler
 * (its GEMM at 0.75 of the others', and so again when measured a second time).
 * Deterministic: a fixed seed.
 *
 * The noise: pairs 3 % (one fabric, one provider, one message size: a few
 * percent, as the tc-shaped namespaces and published pairwise tables show),
 * GEMM 3 %, host-to-device copy 2 %.
 */
#ifndef GPUVET_TEST_CLUSTER_SYNTH_H
#define GPUVET_TEST_CLUSTER_SYNTH_H

#include "judge/cluster.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define SYNTH_RATE     12.5    /* GB/s: one p5 network card (3,200 Gbps / 32 / 8) */
#define SYNTH_FIFTH    0.2

struct synth_plants {
	int bad_nodes[4];
	int nbad;
	int links[4][2];         /* a < b */
	int nlinks;
	int straggler;
};

static uint64_t synth_state;

static double synth_uniform(void)
{
	synth_state ^= synth_state << 13;
	synth_state ^= synth_state >> 7;
	synth_state ^= synth_state << 17;
	return ((double)(synth_state >> 11) + 0.5) / 9007199254740992.0;
}

/* exp(N(0, sigma)): Box-Muller */
static double synth_lognormal(double sigma)
{
	double u = synth_uniform(), v = synth_uniform();
	return exp(sigma * sqrt(-2 * log(u)) * cos(2 * M_PI * v));
}

static int synth_is_bad(const struct synth_plants *pl, int i)
{
	for (int k = 0; k < pl->nbad; k++)
		if (pl->bad_nodes[k] == i)
			return 1;
	return 0;
}

static int synth_is_link(const struct synth_plants *pl, int a, int b)
{
	for (int k = 0; k < pl->nlinks; k++)
		if (pl->links[k][0] == a && pl->links[k][1] == b)
			return 1;
	return 0;
}

/* A figure; again: the same measured again (beside rank 0's suspects, every node), NAN when not. */
static void synth_metric(struct gv_cluster_node *n, const char *name, double v, int hb, double again)
{
	struct gv_cluster_metric *m = &n->metrics[n->nmetrics++];
	snprintf(m->name, sizeof m->name, "%s", name);
	m->value = v;
	m->higher_better = hb;
	m->remeasured = again;
}

/* The cluster with its pairs measured; NULL on OOM.  *sched_s: the schedule's time. */
static struct gv_cluster *synth_cluster(int n, enum cluster_pairs k, const struct synth_plants *pl)
{
	struct gv_cluster *c = gv_cluster_new(n);
	if (!c)
		return NULL;
	synth_state = 0x9e3779b97f4a7c15ull;
	snprintf(c->transport, sizeof c->transport, "efa");
	snprintf(c->schedule, sizeof c->schedule, "%s", cluster_pairs_name(k));
	for (int i = 0; i < n; i++) {
		struct gv_cluster_node *nd = &c->nodes[i];
		nd->state = GV_NODE_OK;
		nd->verdict = 0;
		nd->ngpus = 0;   /* the host path only: no all-reduce to judge */
		snprintf(nd->host, sizeof nd->host, "node%04d", i);
		snprintf(nd->provider, sizeof nd->provider, "aws");
		snprintf(nd->instance_type, sizeof nd->instance_type, "p5.48xlarge");
		nd->metrics = calloc(2, sizeof *nd->metrics);
		if (!nd->metrics) {
			gv_cluster_free(c);
			return NULL;
		}
		/* with a straggler there is a suspect, and every node measures again beside it (the runtime's second pass) */
		double slow = i == pl->straggler ? 0.75 : 1, gemm = 720 * synth_lognormal(0.03) * slow;
		double h2d = 55 * synth_lognormal(0.02);
		int again = pl->straggler >= 0;
		synth_metric(nd, "gemm.bf16.tflops", gemm, 1, again ? 720 * synth_lognormal(0.03) * slow : NAN);
		synth_metric(nd, "memcpy.h2d.pinned.gbps", h2d, 1, again ? 55 * synth_lognormal(0.02) : NAN);
	}
	if (cluster_schedule(n, k, &c->pairs, &c->npairs, &c->nrounds)) {
		gv_cluster_free(c);
		return NULL;
	}
	for (size_t q = 0; q < c->npairs; q++) {
		struct gv_cluster_pair *p = &c->pairs[q];
		double f = synth_is_bad(pl, p->a) || synth_is_bad(pl, p->b) || synth_is_link(pl, p->a, p->b) ? SYNTH_FIFTH : 1;
		p->state = GV_PAIR_MEASURED;
		p->gbps_ab = SYNTH_RATE * f * synth_lognormal(0.03);
		p->gbps_ba = SYNTH_RATE * f * synth_lognormal(0.03);
		p->lat_us = 15 * synth_lognormal(0.05);
	}
	return c;
}

/* The plants of the 1,024-node simulation: bad links away from the bad nodes. */
static const struct synth_plants synth_default = {
	.bad_nodes = { 17, 500, 901 },
	.nbad = 3,
	.links = { { 3, 700 }, { 250, 251 }, { 640, 1001 } },
	.nlinks = 3,
	.straggler = 333,
};

#endif
