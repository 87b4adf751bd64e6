/*
 * cluster.c - the cluster run's analysis and verdict (judge/cluster.h): each
 * node's presence and own gate, rank 0 as the likely cause when it lost
 * everyone, ranks sharing a host, clocks far apart, the pairs
 * (cluster_pairs.c: host to host, GPU to GPU, latency), the all-reduce, the
 * stragglers (cluster_nodes.c), then the verdict with judge/accept.c's
 * precedence: anything that rejects makes it reject (1); else anything the
 * rules need that could not be measured makes it 3; else accept (0).  A rank
 * 0 named as the likely cause makes it 3 whatever else was found: what it
 * measured of the others went through it.
 */
#include "judge/cluster.h"
#include "judge/cluster_int.h"
#include "judge/policy.h"
#include "common/stats.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * The stated rate, when every present node that names its type names the same one.  What one
 * endpoint is held to: over an RDMA provider a network card's share (p5: 3,200 Gbps over 32
 * cards); over any other (tcp) the lower of that and the provider's single-flow limit, where it
 * states one (AWS: 5 Gbps), else nothing (one flow's bound unknown).
 */
static void stated_of(struct gv_cluster *c, struct cluster_rules *r)
{
	const char *type = NULL, *prov = NULL, *src = NULL;
	double gbps, flow;
	r->stated_node = r->stated_one = NAN;
	r->stated_per = "network card";
	for (int i = 0; i < c->nnodes; i++) {
		const struct gv_cluster_node *n = &c->nodes[i];
		if (n->state != GV_NODE_OK || !n->instance_type[0])
			continue;
		if (type && strcmp(type, n->instance_type))
			return;   /* mixed types: no one stated rate */
		type = n->instance_type;
		prov = n->provider;
	}
	if (!type || cluster_stated_rate(prov, type, &gbps, &src))
		return;
	c->stated_gbps = r->stated_node = gbps;
	snprintf(c->stated_source, sizeof c->stated_source, "%s %s: %s", prov && prov[0] ? prov : "", type, src);
	double card = gbps / cluster_stated_cards(prov, type);
	if (strstr(c->transport, "efa") || strstr(c->transport, "verbs")) {
		r->stated_one = card;
	} else if (c->transport[0] && !cluster_flow_rate(prov, &flow, NULL)) {
		r->stated_one = flow < card ? flow : card;
		r->stated_per = flow < card ? "TCP flow (the provider's single-flow limit)" : "network card";
	}
}

/* 2: rank 0 lost every other rank (3 or more nodes); 1: no other rank ever arrived; 0: neither. */
static int coordinator_alone(const struct gv_cluster *c)
{
	int lost = 0;
	if (c->nnodes < 3 || c->nodes[0].state != GV_NODE_OK)
		return 0;
	for (int i = 1; i < c->nnodes; i++) {
		if (c->nodes[i].state == GV_NODE_OK)
			return 0;
		lost += c->nodes[i].state == GV_NODE_LOST;
	}
	return lost ? 2 : 1;
}

static int name_coordinator(struct gv_cluster *c, int alone, struct cluster_tally *t)
{
	int lost = 0;
	for (int i = 1; i < c->nnodes; i++)
		lost += c->nodes[i].state == GV_NODE_LOST;
	t->coordinator = 1;
	if (alone == 2)
		return gv_cluster_add_finding(c, GV_FIND_COORDINATOR, 0, -1, 1,
					      "rank 0 (%s) lost every other rank (%d of %d lost, %d never arrived): its own link "
					      "or host is the likely cause, not %d nodes at once; none of them is drained",
					      c->nodes[0].host[0] ? c->nodes[0].host : "no host name", lost, c->nnodes - 1,
					      c->nnodes - 1 - lost, c->nnodes - 1);
	return gv_cluster_add_finding(c, GV_FIND_COORDINATOR, 0, -1, 0,
				      "no other rank reached rank 0 (%s; %d of %d never arrived): its rendezvous address, "
				      "its network or the launch is the likely cause, not %d nodes at once; nobody is drained",
				      c->nodes[0].host[0] ? c->nodes[0].host : "no host name", c->nnodes - 1, c->nnodes - 1,
				      c->nnodes - 1);
}

/*
 * Each node's presence and its own gate.  A node its gate could not measure
 * counts as unmeasured, unless the policy says such nodes are only reported
 * (cluster.node.verdict unmeasured: reported; a fabric vetted on nodes
 * without GPUs, which gpuvet's gate never accepts).  The evidence never
 * repeats the finding's name: `cluster show` prints "lost: " before it.
 */
static int judge_nodes(struct gv_cluster *c, const struct cluster_rules *r, struct cluster_tally *t)
{
	int alone = coordinator_alone(c);
	if (alone && name_coordinator(c, alone, t))
		return -1;
	for (int i = 0; i < c->nnodes; i++) {
		const struct gv_cluster_node *n = &c->nodes[i];
		const char *why = n->why[0] ? n->why : "no reason given";
		int rc = 0;
		if (n->state == GV_NODE_MISSING) {
			t->unmeasured = 1;
			rc = gv_cluster_add_finding(c, GV_FIND_MISSING, i, -1, !alone, "%s",
						    n->why[0] ? n->why : "it never arrived at the rendezvous");
		} else if (n->state == GV_NODE_LOST) {
			t->unmeasured = 1;
			rc = gv_cluster_add_finding(c, GV_FIND_LOST, i, -1, !alone, "%s",
						    n->why[0] ? n->why : "it dropped out during the run");
		} else if (n->verdict == 1) {
			t->reject = 1;
			rc = gv_cluster_add_finding(c, GV_FIND_NODE_REJECTED, i, -1, 1, "its own gate rejected it: %s", why);
		} else if (n->verdict != 0) {
			t->unmeasured |= !r->pc.node_unmeasured_reported;
			rc = gv_cluster_add_finding(c, GV_FIND_NODE_UNMEASURED, i, -1, 0, "its own gate could not %s: %s",
						    n->verdict == 3 ? "measure what the policy requires" : "judge it", why);
		}
		if (rc)
			return -1;
	}
	return 0;
}

/* Ranks on one host: one finding a host, their pairs left out (r->left_out), not drained. */
static int judge_shared(struct gv_cluster *c, struct cluster_rules *r)
{
	if (!cluster_shared_hosts(c, r->shared, r->left_out))
		return 0;
	unsigned char *told = calloc((size_t)c->nnodes, 1);
	int *ranks = malloc((size_t)c->nnodes * sizeof *ranks), rc = told && ranks ? 0 : -1;
	for (int i = 0; !rc && i < c->nnodes; i++) {
		size_t n = 0;
		if (!r->shared[i] || told[i])
			continue;
		for (int j = i; j < c->nnodes; j++)
			if (r->shared[j] && !told[j] && !strcmp(c->nodes[i].host, c->nodes[j].host) &&
			    !strcmp(c->nodes[i].addr, c->nodes[j].addr))
				told[j] = 1, ranks[n++] = j;
		char list[256];
		cluster_list_ints(ranks, n, 16, list, sizeof list);
		rc = gv_cluster_add_finding(c, GV_FIND_SHARED_HOST, i, n == 2 ? ranks[1] : -1, 0,
					    "ranks %s run on one host (%s, %s as rank 0 saw them): their pairs measure no link "
					    "and are left out, and their fingerprints ran side by side (left out of the "
					    "straggler analysis); run one rank a node (srun --ntasks-per-node=1, mpirun "
					    "--map-by ppr:1:node)", list, c->nodes[i].host, c->nodes[i].addr);
	}
	free(told);
	free(ranks);
	return rc;
}

/*
 * Clocks (cluster.node.clock_skew_s max): each node's clock against the nodes' median (rank 0
 * counts as 0 against itself), so a rank 0 that is off is named, not everyone else.  Past 5
 * minutes credentials fail (Kerberos' default tolerance, munge's 300 s credential lifetime,
 * which Slurm uses), certificates look expired or not yet valid, and the node's stored dates
 * are off by as much: drained until its clock is set.
 */
static int judge_clocks(struct gv_cluster *c, const struct cluster_rules *r, struct cluster_tally *t)
{
	double max = r->pc.skew_max_s, *v = malloc((size_t)c->nnodes * sizeof *v);
	size_t n = 0;
	int rc = v ? 0 : -1;
	for (int i = 0; v && i < c->nnodes; i++) {
		double s = i == 0 && isnan(c->nodes[i].clock_skew_s) ? 0 : c->nodes[i].clock_skew_s;
		if (c->nodes[i].state == GV_NODE_OK && isfinite(s))
			v[n++] = s;
	}
	double ref = n >= 2 ? gv_median_inplace(v, n) : NAN;
	for (int i = 0; !rc && max > 0 && isfinite(ref) && i < c->nnodes; i++) {
		double s = i == 0 && isnan(c->nodes[i].clock_skew_s) ? 0 : c->nodes[i].clock_skew_s;
		char d[32], lim[32];
		if (c->nodes[i].state != GV_NODE_OK || !isfinite(s) || !(fabs(s - ref) > max))
			continue;
		cluster_duration(s - ref, d, sizeof d);
		cluster_duration(max, lim, sizeof lim);
		t->reject = 1;
		rc = gv_cluster_add_finding(c, GV_FIND_CLOCK_SKEW, i, -1, 1,
					    "its clock is %s %s of the nodes' (%+.0f s from rank 0's, their median %+.0f s; more "
					    "than %s): credentials fail past 5 minutes (Kerberos, munge), certificates look %s, "
					    "and its stored dates are off by as much", d, s > ref ? "ahead" : "behind", s, ref,
					    lim, s > ref ? "not yet valid to others" : "expired");
	}
	free(v);
	return rc;
}

/* The all-reduce: judged where the nodes have GPUs; noted (ar_why) where they have none. */
static int judge_allreduce(struct gv_cluster *c, const struct cluster_rules *r, struct cluster_tally *t)
{
	int gpus = 0;
	for (int i = 0; i < c->nnodes; i++)
		gpus += c->nodes[i].state == GV_NODE_OK && c->nodes[i].ngpus > 0;
	if (!gpus) {
		if (!c->nar && !c->ar_why[0])
			snprintf(c->ar_why, sizeof c->ar_why, "no GPUs on the nodes: the all-reduce rule does not apply");
		return 0;
	}
	if (!(r->pc.ar_of_stated > 0) && !(r->pc.ar_min_gbps > 0))
		return 0;
	if (!c->nar) {
		t->unmeasured = 1;
		return gv_cluster_add_finding(c, GV_FIND_FABRIC_RULE, -1, -1, 0, "cluster.allreduce.busbw.gbps not measured: %s",
					      c->ar_why[0] ? c->ar_why : "no all-reduce in the run");
	}
	const struct gv_cluster_ar_point *last = &c->ar[c->nar - 1];
	const char *net = c->nccl_net[0] ? c->nccl_net : "NCCL's network";
	if (r->pc.ar_min_gbps > 0 && !(last->busbw_gbps >= r->pc.ar_min_gbps)) {
		t->reject = 1;
		if (gv_cluster_add_finding(c, GV_FIND_FABRIC_RULE, -1, -1, 0, "all-reduce busbw %.4g GB/s at %.4g MiB over %s "
					   "is under the policy's min %.4g GB/s", last->busbw_gbps, last->bytes / 1048576.0,
					   net, r->pc.ar_min_gbps))
			return -1;
	}
	if (!(r->pc.ar_of_stated > 0))
		return 0;
	if (!isfinite(r->stated_node)) {
		snprintf(c->ar_why, sizeof c->ar_why, "busbw %.4g GB/s at %.4g MiB not judged: no stated rate for the type",
			 last->busbw_gbps, last->bytes / 1048576.0);
		return 0;
	}
	if (last->busbw_gbps >= r->pc.ar_of_stated * r->stated_node)
		return 0;
	t->reject = 1;
	return gv_cluster_add_finding(c, GV_FIND_FABRIC_RULE, -1, -1, 0,
				      "all-reduce busbw %.4g GB/s at %.4g MiB over %s is %.2f of the stated %.4g GB/s per "
				      "node, under the %.2f required", last->busbw_gbps, last->bytes / 1048576.0, net,
				      last->busbw_gbps / r->stated_node, r->stated_node, r->pc.ar_of_stated);
}

static void clear_findings(struct gv_cluster *c)
{
	free(c->findings);
	c->findings = NULL;
	c->nfindings = 0;
}

/* A pair naming a rank outside the cluster (a hand-edited or foreign document) is refused, not indexed. */
static int pairs_valid(const struct gv_cluster *c, char *err, size_t errlen)
{
	for (size_t k = 0; k < c->npairs; k++) {
		const struct gv_cluster_pair *q = &c->pairs[k];
		if (q->a < 0 || q->b < 0 || q->a >= c->nnodes || q->b >= c->nnodes || q->a == q->b) {
			snprintf(err, errlen, "pair %zu names ranks %d and %d: not two ranks of 0..%d", k, q->a, q->b,
				 c->nnodes - 1);
			return -1;
		}
	}
	return 0;
}

/* Every figure of the pairs, then what needs all of them. */
static int judge_fabric(struct gv_cluster *c, struct cluster_rules *r, struct cluster_tally *t)
{
	double m, h;
	if (cluster_judge_pairs(c, CLUSTER_FIG_HOST, r, t, &c->pair_median_gbps, &c->pair_healthy_gbps))
		return -1;
	if (c->nnodes > 1 && !isfinite(c->pair_median_gbps) && !t->coordinator) {
		t->unmeasured = 1;
		if (gv_cluster_add_finding(c, GV_FIND_FABRIC_RULE, -1, -1, 0,
					   "cluster.pair.gbps not measured: no pair of nodes was measured host to host"))
			return -1;
	}
	return cluster_judge_pairs(c, CLUSTER_FIG_NCCL, r, t, &m, &h) || cluster_judge_pairs(c, CLUSTER_FIG_LAT, r, t, &m, &h) ||
	       judge_allreduce(c, r, t) || cluster_find_stragglers(c, r, t);
}

int cluster_analyse(struct gv_cluster *c, const struct policy *p, char *err, size_t errlen)
{
	struct cluster_rules r;
	struct cluster_tally t = { 0, 0, 0 };
	memset(&r, 0, sizeof r);
	if (pairs_valid(c, err, errlen))
		return -1;
	clear_findings(c);
	c->verdict = -1;
	c->stated_gbps = c->pair_median_gbps = c->pair_healthy_gbps = NAN;
	c->stated_source[0] = 0;
	if (cluster_rules_of(p, &r, c->policy, sizeof c->policy, err, errlen))
		return -1;
	r.left_out = calloc(c->npairs ? c->npairs : 1, 1);
	r.shared = calloc((size_t)c->nnodes, 1);
	int rc = -1;
	stated_of(c, &r);
	if (r.left_out && r.shared && !judge_nodes(c, &r, &t) && !judge_shared(c, &r) && !judge_clocks(c, &r, &t) &&
	    !judge_fabric(c, &r, &t)) {
		c->verdict = t.coordinator ? 3 : t.reject ? 1 : t.unmeasured ? 3 : 0;
		rc = 0;
	} else {
		snprintf(err, errlen, "out of memory analysing %d nodes", c->nnodes);
	}
	free(r.left_out);
	free(r.shared);
	return rc;
}
