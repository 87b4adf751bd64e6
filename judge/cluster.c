/*
 * cluster.c - the cluster run's analysis and verdict (judge/cluster.h):
 * each node's presence and own gate, the pairs (cluster_pairs.c), the
 * all-reduce, the stragglers (cluster_nodes.c), then the verdict with
 * judge/accept.c's precedence: anything that rejects makes it reject (1);
 * else anything the rules need that could not be measured makes it 3;
 * else accept (0).
 */
#include "judge/cluster.h"
#include "judge/cluster_int.h"
#include "judge/policy.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The fabric rules in force: p's section, else the built-in default policy's. */
static int rules_of(const struct policy *p, struct policy_cluster *pc, char *name, size_t namelen, char *err,
		    size_t errlen)
{
	struct policy *builtin = NULL;
	if (p && p->cluster.line) {
		*pc = p->cluster;
	} else {
		if (policy_load(NULL, &builtin, err, errlen))
			return -1;
		*pc = builtin->cluster;
		policy_free(builtin);
	}
	if (p)
		snprintf(name, namelen, "%s %.19s%s", p->name ? p->name : "unnamed", p->digest,
			 p->cluster.line ? "" : " (fabric rules: the built-in default's)");
	else
		snprintf(name, namelen, "%s (built-in)", POLICY_BUILTIN_NAME);
	return 0;
}

/* The stated rate: when every present node that names its type names the same one. */
static void stated_of(struct gv_cluster *c, struct cluster_rules *r)
{
	const char *type = NULL, *prov = NULL, *src = NULL;
	double gbps;
	r->stated_node = r->stated_card = NAN;
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
	/* a single endpoint uses one card; judged against a card's share only over an RDMA provider */
	if (strstr(c->transport, "efa") || strstr(c->transport, "verbs"))
		r->stated_card = gbps / cluster_stated_cards(prov, type);
}

/*
 * Each node's presence and its own gate.  A node its gate could not measure
 * counts as unmeasured, unless the policy says such nodes are only reported
 * (cluster.node.verdict unmeasured: reported; a fabric vetted on nodes
 * without GPUs, which gpuvet's gate never accepts).
 */
static int judge_nodes(struct gv_cluster *c, const struct cluster_rules *r, struct cluster_tally *t)
{
	for (int i = 0; i < c->nnodes; i++) {
		const struct gv_cluster_node *n = &c->nodes[i];
		const char *why = n->why[0] ? n->why : "no reason given";
		int rc = 0;
		if (n->state == GV_NODE_MISSING) {
			t->unmeasured = 1;
			rc = gv_cluster_add_finding(c, GV_FIND_MISSING, i, -1, 1, "missing: never arrived at the rendezvous%s%s%s",
						    n->why[0] ? " (" : "", n->why, n->why[0] ? ")" : "");
		} else if (n->state == GV_NODE_LOST) {
			t->unmeasured = 1;
			rc = gv_cluster_add_finding(c, GV_FIND_LOST, i, -1, 1, "lost: %s", why);
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
	if (!(r->pc.ar_of_stated > 0))
		return 0;
	if (!c->nar) {
		t->unmeasured = 1;
		return gv_cluster_add_finding(c, GV_FIND_FABRIC_RULE, -1, -1, 0, "cluster.allreduce.busbw.gbps not measured: %s",
					      c->ar_why[0] ? c->ar_why : "no all-reduce in the run");
	}
	const struct gv_cluster_ar_point *last = &c->ar[c->nar - 1];
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
				      "node, under the %.2f required", last->busbw_gbps, last->bytes / 1048576.0,
				      c->nccl_net[0] ? c->nccl_net : "NCCL's network", last->busbw_gbps / r->stated_node,
				      r->stated_node, r->pc.ar_of_stated);
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

int cluster_analyse(struct gv_cluster *c, const struct policy *p, char *err, size_t errlen)
{
	struct cluster_rules r;
	struct cluster_tally t = { 0, 0 };
	double nccl_median;
	memset(&r, 0, sizeof r);
	if (pairs_valid(c, err, errlen))
		return -1;
	clear_findings(c);
	c->verdict = -1;
	c->stated_gbps = c->pair_median_gbps = NAN;
	c->stated_source[0] = 0;
	if (rules_of(p, &r.pc, c->policy, sizeof c->policy, err, errlen))
		return -1;
	stated_of(c, &r);
	if (judge_nodes(c, &r, &t) || cluster_judge_pairs(c, CLUSTER_FIG_HOST, &r, &t, &c->pair_median_gbps))
		goto oom;
	if (c->nnodes > 1 && !isfinite(c->pair_median_gbps)) {
		t.unmeasured = 1;
		if (gv_cluster_add_finding(c, GV_FIND_FABRIC_RULE, -1, -1, 0,
					   "cluster.pair.gbps not measured: no pair of nodes was measured host to host"))
			goto oom;
	}
	if (cluster_judge_pairs(c, CLUSTER_FIG_NCCL, &r, &t, &nccl_median) || judge_allreduce(c, &r, &t) ||
	    cluster_find_stragglers(c, &r, &t))
		goto oom;
	c->verdict = t.reject ? 1 : t.unmeasured ? 3 : 0;
	return 0;
oom:
	snprintf(err, errlen, "out of memory analysing %d nodes", c->nnodes);
	return -1;
}
