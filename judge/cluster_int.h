/*
 * cluster_int.h - what the files of the cluster analysis share: the fabric
 * rules in effect, the running tally of what rejects and what could not be
 * measured, and the state of one figure's pair judgement.  The files call
 * down only: cluster.c on top, cluster_pairs.c (the pairs' references and
 * which are slow) over cluster_locate.c (which nodes and links explain
 * them), cluster_nodes.c (stragglers), and cluster_util.c below them all.
 */
#ifndef GPUVET_JUDGE_CLUSTER_INT_H
#define GPUVET_JUDGE_CLUSTER_INT_H

#include "judge/cluster.h"
#include "judge/policy.h"

/* The policy's fabric rules (struct policy_cluster) and the figures they are judged against. */
struct cluster_rules {
	struct policy_cluster pc;
	double stated_node;       /* the type's stated rate per node, GB/s; NAN unknown */
	double stated_one;        /* what one endpoint may be held to: a card's share (RDMA) or one flow's limit (tcp); NAN none */
	const char *stated_per;   /* "network card" or "TCP flow" */
	unsigned char *left_out;  /* per pair: 1 when its two ranks share a host (not a link: left out) */
	unsigned char *shared;    /* per node: 1 when it shares its host with another rank */
};

struct cluster_tally {
	int reject;           /* something rejects */
	int unmeasured;       /* something the rules need could not be measured */
	int coordinator;      /* rank 0 itself is the likely cause: the run could not be judged (3) */
};

/* Which figure of a pair: host to host (libfabric), GPU to GPU (NCCL), or the host latency. */
enum cluster_fig { CLUSTER_FIG_HOST = 0, CLUSTER_FIG_NCCL, CLUSTER_FIG_LAT };

/* ---- cluster_util.c ---- */
/* The fabric rules in force (p's section, else the built-in default's) and the policy's name into name. */
int cluster_rules_of(const struct policy *p, struct cluster_rules *r, char *name, size_t namelen, char *err,
		     size_t errlen);
/* The ranks that share a host with another (same host name and same address as rank 0 saw it) into
 * shared[nnodes], the pairs between them into left_out[npairs] (either may be NULL); how many ranks. */
int cluster_shared_hosts(const struct gv_cluster *c, unsigned char *shared, unsigned char *left_out);
/* A pair's figure: its slower direction (latency: the one figure); NAN when not measured. */
double cluster_pair_figure(const struct gv_cluster_pair *p, enum cluster_fig f);
/* The pair's figure one way (a -> b when ab, else b -> a); latency: the one figure. */
double cluster_pair_way(const struct gv_cluster_pair *p, enum cluster_fig f, int ab);
/* The slower of the pair's two NIC rates (link_gbps), GB/s; NAN when neither node states one. */
double cluster_pair_link(const struct gv_cluster *c, const struct gv_cluster_pair *p);
/* The figure healthy pairs reach: the 0.9 quantile (nearest rank) of v[0..n) for a rate, the 0.1
 * quantile for a latency; sorts v.  With fewer than 10 values, the best one.  NAN when n is 0. */
double cluster_healthy(double *v, size_t n, int higher_better);
/* A duration in a person's unit ("400 days", "6.2 min", "40 s"), into buf. */
void cluster_duration(double s, char *buf, size_t size);
/* "1, 3 and 5" from ranks or rounds (at most max named, then "and N more"), into buf. */
void cluster_list_ints(const int *v, size_t n, size_t max, char *buf, size_t size);

/* ---- one figure's pairs judged (cluster_pairs.c, cluster_locate.c) ---- */

/* Why a pair is slow: a bit per reference it is under (or, for a latency, over). */
enum { SLOW_HEALTHY = 1, SLOW_MEDIAN = 2, SLOW_STATED = 4, SLOW_LINK = 8, SLOW_ABS = 16 };   /* mark_slow's order */

/* How a node was named (NAMED_BEFORE: by an earlier figure; it explains its pairs here too). */
enum { NAMED_NONE = 0, NAMED_BAD, NAMED_COVER, NAMED_UNREACHABLE, NAMED_COORDINATOR, NAMED_BEFORE };

struct pjudge {
	struct gv_cluster *c;
	enum cluster_fig f;
	const struct cluster_rules *r;
	struct cluster_tally *t;
	int hb;                        /* 1: more is better (GB/s), 0: less (latency) */
	double median;                 /* the cluster median: the nodes' own medians' median */
	double healthy;                /* what healthy pairs reach (cluster_healthy) */
	double rel, med, stated, abs;  /* the bounds in force (0: off): of the healthy figure, of the median, stated, the policy's */
	double of_link;                /* the fraction of the slower node's NIC rate in force (0: off) */
	size_t nv;                     /* pairs with a figure */
	unsigned char *slow;           /* per pair: SLOW_* bits, 0 when not slow */
	unsigned char *way;            /* per pair: 1 a -> b slow, 2 b -> a slow (a rate) */
	int *measured, *nslow, *tried, *failed;
	unsigned char *cand;           /* candidates of the share rule */
	unsigned char *named;          /* NAMED_* per node */
};

/* The bound pair k is judged against (a floor for a rate, a ceiling for a latency) and which one binds. */
double cluster_pair_bound(const struct pjudge *j, size_t k, unsigned *which);
/* "host to host", "GPU to GPU (NCCL)", "latency" */
const char *cluster_fig_words(enum cluster_fig f);
/* Whether a named node explains pair k: a slow pair, either end named; a failed one, both ends named or a
 * named end that failed other pairs too (a node named for slow pairs that reached every other peer does not
 * explain a failure: the other end, whose other pairs fail too, does: a flapping port beside a slow node). */
int cluster_pair_explained(const struct pjudge *j, size_t k);
/* Names the nodes and links that explain the slow (and, host to host, failed) pairs: bad nodes by the
 * share rule, then the fewest nodes covering what is left (bad or intermittent), then bad links.  -1 on OOM. */
int cluster_locate(struct pjudge *j);

/* Bad nodes, bad links and failed pairs of one figure (cluster_pairs.c); *median and *healthy set.  -1 on OOM. */
int cluster_judge_pairs(struct gv_cluster *c, enum cluster_fig f, const struct cluster_rules *r, struct cluster_tally *t,
			double *median, double *healthy);
/* Stragglers (cluster_nodes.c).  -1 on OOM. */
int cluster_find_stragglers(struct gv_cluster *c, const struct cluster_rules *r, struct cluster_tally *t);

#endif
