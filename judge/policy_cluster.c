/*
 * policy_cluster.c - the policy's `cluster:` section: the fabric rules a
 * cluster run is judged by (judge/cluster.h applies them; docs/acceptance.md
 * "Fabric rules" and judge/policies/default.yaml justify the defaults).
 *
 *   cluster:
 *     - metric: cluster.pair.gbps              slower direction of each pair, host to host
 *       min_fraction_of_median: F             x the cluster median of the pairs
 *       min_fraction_of_stated: F             x the type's stated rate per network card
 *       bad_node_share: F                     a node this share of whose pairs is slow is bad
 *     - metric: cluster.nccl_pair.gbps         the same, GPU 0 to GPU 0 through NCCL
 *       min_fraction_of_median: / min_fraction_of_stated:
 *     - metric: cluster.allreduce.busbw.gbps   the cluster all-reduce's busbw at its largest size
 *       min_fraction_of_stated: F             x the type's stated rate per node
 *     - metric: cluster.node.*                 each node's own figures against the cluster median
 *       max_fraction_below_median: F          throughputs
 *       max_fraction_above_median: F          latencies
 *
 * A metric not named keeps no check (its fractions 0); a policy without the
 * section takes the built-in default's (judge/cluster.c).
 */
#include "judge/policy_int.h"

#include <stdio.h>
#include <string.h>

struct crule {
	const char *metric;
	const char *keys[4];
};

static const struct crule crules[] = {
	{ "cluster.pair.gbps", { "min_fraction_of_median", "min_fraction_of_stated", "bad_node_share", NULL } },
	{ "cluster.nccl_pair.gbps", { "min_fraction_of_median", "min_fraction_of_stated", NULL } },
	{ "cluster.allreduce.busbw.gbps", { "min_fraction_of_stated", NULL } },
	{ "cluster.node.*", { "max_fraction_below_median", "max_fraction_above_median", NULL } },
	{ "cluster.node.verdict", { "unmeasured", NULL } },
};
#define RULE_NODE_VERDICT 4
#define NCRULES (sizeof crules / sizeof crules[0])

/* Where rule r's key lands in p->cluster. */
static double *slot(struct policy_cluster *pc, size_t r, const char *key)
{
	int median = !strcmp(key, "min_fraction_of_median"), stated = !strcmp(key, "min_fraction_of_stated");
	switch (r) {
	case 0:
		return median ? &pc->pair_of_median : stated ? &pc->pair_of_stated : &pc->bad_node_share;
	case 1:
		return median ? &pc->nccl_of_median : &pc->nccl_of_stated;
	case 2:
		return &pc->ar_of_stated;
	default:
		return !strcmp(key, "max_fraction_below_median") ? &pc->node_below : &pc->node_above;
	}
}

static int key_of(size_t r, const char *key)
{
	for (int i = 0; crules[r].keys[i]; i++)
		if (!strcmp(crules[r].keys[i], key))
			return 1;
	return 0;
}

static void key_list(size_t r, char *buf, size_t size)
{
	buf[0] = 0;
	for (int i = 0; crules[r].keys[i]; i++)
		snprintf(buf + strlen(buf), size - strlen(buf), "%s%s", i ? ", " : "", crules[r].keys[i]);
}

static int parse_crule(struct pctx *c, yaml_node_t *n, struct policy_cluster *pc, int *seen)
{
	const char *metric = NULL;
	size_t r = NCRULES;
	if (n->type != YAML_MAPPING_NODE)
		return policy_perr(c, n, "a cluster rule is a mapping with 'metric' and its fractions");
	if (policy_dup_keys(c, n))
		return -1;
	for (yaml_node_pair_t *pair = n->data.mapping.pairs.start; pair < n->data.mapping.pairs.top; pair++) {
		yaml_node_t *k, *v;
		const char *key = policy_pair_kv(c, pair, &k, &v);
		if (key && !strcmp(key, "metric"))
			metric = policy_scalar(v);
	}
	for (size_t i = 0; metric && i < NCRULES; i++)
		if (!strcmp(metric, crules[i].metric))
			r = i;
	if (r == NCRULES)
		return policy_perr(c, n, "a cluster rule's metric is one of cluster.pair.gbps, cluster.nccl_pair.gbps, "
				   "cluster.allreduce.busbw.gbps, cluster.node.*%s%s", metric ? ", not " : "",
				   metric ? metric : " (no 'metric' given)");
	if (seen[r])
		return policy_perr(c, n, "%s has a rule already (line %d)", metric, seen[r]);
	seen[r] = (int)n->start_mark.line + 1;
	int nkeys = 0;
	for (yaml_node_pair_t *pair = n->data.mapping.pairs.start; pair < n->data.mapping.pairs.top; pair++) {
		yaml_node_t *k, *v;
		const char *key = policy_pair_kv(c, pair, &k, &v);
		char keys[160];
		double f;
		if (!key)
			return policy_perr(c, k, "cluster rule keys must be plain words");
		if (!strcmp(key, "metric"))
			continue;
		key_list(r, keys, sizeof keys);
		if (!key_of(r, key))
			return policy_perr(c, k, "unknown key '%s' for %s (metric, %s)", key, metric, keys);
		if (r == RULE_NODE_VERDICT) {   /* a word, not a fraction */
			const char *w = policy_scalar(v);
			if (!w || (strcmp(w, "counts") && strcmp(w, "reported")))
				return policy_perr(c, v, "'unmeasured' is counts or reported");
			pc->node_unmeasured_reported = !strcmp(w, "reported");
			nkeys++;
			continue;
		}
		if (policy_get_number(c, v, key, &f))
			return -1;
		if (!strcmp(key, "bad_node_share") ? !(f > 0.5 && f <= 1) : !(f > 0 && f <= 1))
			return policy_perr(c, v, "'%s' must be in %s", key,
					   !strcmp(key, "bad_node_share") ? "(0.5, 1]" : "(0, 1]");
		*slot(pc, r, key) = f;
		nkeys++;
	}
	if (!nkeys)
		return policy_perr(c, n, "cluster rule for %s has no threshold", metric);
	return 0;
}

int policy_parse_cluster(struct pctx *c, yaml_node_t *k, yaml_node_t *v, struct policy *p)
{
	int seen[NCRULES] = { 0 };
	if (p->cluster.line)
		return policy_perr(c, k, "'cluster' given twice");
	if (v->type != YAML_SEQUENCE_NODE)
		return policy_perr(c, v, "'cluster' must be a list of rules");
	memset(&p->cluster, 0, sizeof p->cluster);
	p->cluster.line = (int)k->start_mark.line + 1;
	for (yaml_node_item_t *it = v->data.sequence.items.start; it < v->data.sequence.items.top; it++)
		if (parse_crule(c, yaml_document_get_node(c->doc, *it), &p->cluster, seen))
			return -1;
	if (!(p->cluster.bad_node_share > 0))
		p->cluster.bad_node_share = 1;   /* no share given: every pair slow, the issue's own words */
	return 0;
}
