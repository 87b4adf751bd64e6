/*
 * cluster.h - judging a cluster run (#49): the pair schedules, the stated
 * network rate per instance type (judge/published/network.csv, compiled
 * in), a node's figures for the straggler analysis, and the analysis that
 * names bad nodes, bad links and stragglers and gives the verdict.  The data
 * is common/cluster.h's; the policy's fabric rules are its `cluster:`
 * section (judge/policy_cluster.c, docs/acceptance.md).  docs/cluster.md
 * says how each decision was made.
 */
#ifndef GPUVET_JUDGE_CLUSTER_H
#define GPUVET_JUDGE_CLUSTER_H

#include "common/cluster.h"

#include <jansson.h>
#include <stddef.h>

/*
 * What a cluster figure can physically be (a policy's limits and `cluster import`'s checks).
 * GB/s: NVLink 5's 1.8 TB/s per GPU, both directions together, is the fastest link any GPU or
 * NIC has (B200/GB200); no pair of endpoints, no all-reduce's busbw per GPU and no NIC carries
 * more, so 2,000 GB/s bounds every rate with room.  Latency: 100 s: a pair's 210 round trips
 * (10 warm-up, 200 timed) fit in its deadline, --pair-timeout at most 3,600 s, so the median round
 * trip is under 18 s and the latency, half of it, under 9 s.  Clock skew: 1e10 s (317 years) either way, past any clock a node can hold since 1970.
 */
#define CLUSTER_MAX_GBPS 2000.0
#define CLUSTER_MAX_LAT_US 1e8
#define CLUSTER_MAX_SKEW_S 1e10

enum cluster_pairs { CLUSTER_PAIRS_ALL = 0, CLUSTER_PAIRS_RING, CLUSTER_PAIRS_BISECT };
int cluster_pairs_parse(const char *s, enum cluster_pairs *k);   /* "all"|"ring"|"bisect"; -1 */
const char *cluster_pairs_name(enum cluster_pairs k);
/* Rounds of disjoint pairs for n nodes: *pairs (malloc'd, a < b, .round 0.., state
 * GV_PAIR_SKIPPED, figures NAN, in round order), *npairs, *nrounds.  all: the round-robin
 * (circle) schedule, n-1 rounds for even n, n for odd, every pair once.  ring: i with
 * i+1 mod n, 2 rounds (3 for odd n).  bisect: round k pairs i with i XOR 2^k (a
 * hypercube, ceil(log2 n) rounds; a rank whose partner is past n is paired with
 * partner - 2^floor(log2 n) when that rank is free in the round: docs/cluster.md).
 * -1 on bad n / OOM. */
int cluster_schedule(int n, enum cluster_pairs k, struct gv_cluster_pair **pairs, size_t *npairs, int *nrounds);
/* The instance type's stated network rate, GB/s per node, and where it is stated; -1 unknown. */
int cluster_stated_rate(const char *provider, const char *instance_type, double *gbps, const char **source);
/* The same row's network cards (interfaces the rate is spread over; 1 when the source
 * names none): a single endpoint's pair is judged against gbps / cards. */
int cluster_stated_cards(const char *provider, const char *instance_type);
/* The provider's stated single-flow limit (one TCP connection), GB/s, and where it is stated; -1 none. */
int cluster_flow_rate(const char *provider, double *gbps, const char **source);
/* A node's figures for the straggler analysis, from its fingerprint (the JSON a run loads as). */
int cluster_node_metrics(const json_t *fingerprint, struct gv_cluster_node *n);
struct policy;
/* The ranks whose fingerprint figures look like a straggler's before any re-measurement (at most
 * max, ascending), for rank 0 to have every node measure their benches again side by side
 * (gv_cluster_metric.remeasured) before cluster_analyse() judges them; p NULL: the built-in policy.  The count, or -1 on OOM. */
int cluster_suspects(const struct gv_cluster *c, const struct policy *p, int *ranks, int max);
/* Fills c->pair_median_gbps (the median of the nodes' own median pair figures: robust to a bad
 * node on small clusters, close to the plain median of the pairs on large ones),
 * c->pair_healthy_gbps (what healthy pairs reach: the reference pairs are judged against), c->stated_* (when the
 * nodes name one type), c->findings (replacing any) and
 * c->verdict (0 accept / 1 reject / 3 could not measure), with p's fabric rules (p NULL: the
 * built-in default policy's).  The verdict is accept only when every node is present and
 * accepted by its own gate and the fabric meets the rules.  0, or -1 with err (OOM, or a
 * pair naming a rank outside 0..nnodes-1 or the same rank twice). */
int cluster_analyse(struct gv_cluster *c, const struct policy *p, char *err, size_t errlen);

#endif
