/*
 * cluster_int.h - what the files of the cluster analysis share
 * (judge/cluster.c, cluster_pairs.c, cluster_nodes.c): the fabric rules in
 * effect and the running tally of what rejects and what could not be
 * measured.
 */
#ifndef GPUVET_JUDGE_CLUSTER_INT_H
#define GPUVET_JUDGE_CLUSTER_INT_H

#include "judge/cluster.h"
#include "judge/policy.h"

/* The policy's fabric rules (struct policy_cluster) and the figures they are judged against. */
struct cluster_rules {
	struct policy_cluster pc;
	double stated_node;   /* the type's stated rate per node, GB/s; NAN unknown */
	double stated_card;   /* per network card, GB/s; NAN unknown or not applicable (not RDMA) */
};

struct cluster_tally {
	int reject;           /* something rejects */
	int unmeasured;       /* something the rules need could not be measured */
};

/* Which figure of a pair: host to host (libfabric) or GPU to GPU (NCCL). */
enum cluster_fig { CLUSTER_FIG_HOST = 0, CLUSTER_FIG_NCCL };

/* A pair's figure: its slower direction; NAN when a direction is missing. */
double cluster_pair_figure(const struct gv_cluster_pair *p, enum cluster_fig f);
/* Bad nodes, bad links and failed pairs of one figure (cluster_pairs.c); *median set.  -1 on OOM. */
int cluster_judge_pairs(struct gv_cluster *c, enum cluster_fig f, const struct cluster_rules *r, struct cluster_tally *t,
			double *median);
/* Stragglers (cluster_nodes.c).  -1 on OOM. */
int cluster_find_stragglers(struct gv_cluster *c, const struct cluster_rules *r, struct cluster_tally *t);

#endif
