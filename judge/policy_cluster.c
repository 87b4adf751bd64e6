/*
 * policy_cluster.c - the policy's `cluster:` section: the fabric rules a
 * cluster run is judged by (judge/policy_cluster.h; judge/cluster.h applies
 * them; docs/acceptance.md "Fabric rules" and judge/policies/default.yaml
 * justify the defaults).  A rule names a metric and some of its keys:
 *
 *   cluster:
 *     - metric: cluster.pair.gbps
 *       min_fraction_of_healthy: 0.6
 *       min: 5
 *
 * Every key is one row of keys[] below: the metric it belongs to, its name,
 * its kind (which says its range) and the field of struct policy_cluster it
 * sets.  Nothing else knows the keys: the metrics a rule may name are the
 * rows' metrics, the keys of a metric its rows, and a key without a row is
 * refused at load (never a rule silently off).  A key not given keeps its
 * check off (0); a policy without the section takes the built-in default's
 * (judge/cluster.c).
 */
#include "judge/policy_int.h"
#include "judge/cluster.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

/* What a key's value is, and so its range. */
enum ckind {
	CK_FRACTION,   /* (0, 1] */
	CK_SHARE,      /* (0.5, 1]: more than half, so two nodes cannot both explain one pair */
	CK_FACTOR,     /* [1, 100] */
	CK_GBPS,       /* (0, CLUSTER_MAX_GBPS] */
	CK_US,         /* (0, CLUSTER_MAX_LAT_US] */
	CK_SECONDS,    /* (0, CLUSTER_MAX_SKEW_S] */
	CK_WORD,       /* counts | reported, 0 or 1 */
};

static const struct {
	double lo, hi;
	int lo_open;
	const char *range;
} kinds[] = {
	[CK_FRACTION] = { 0, 1, 1, "(0, 1]" },
	[CK_SHARE] = { 0.5, 1, 1, "(0.5, 1]" },
	[CK_FACTOR] = { 1, 100, 0, "[1, 100]" },
	[CK_GBPS] = { 0, CLUSTER_MAX_GBPS, 1, "(0, 2000] GB/s" },
	[CK_US] = { 0, CLUSTER_MAX_LAT_US, 1, "(0, 1e8] us" },
	[CK_SECONDS] = { 0, CLUSTER_MAX_SKEW_S, 1, "(0, 1e10] s" },
	[CK_WORD] = { 0, 0, 0, "counts or reported" },
};

#define F(field) offsetof(struct policy_cluster, field)

static const struct ckey {
	const char *metric, *key;
	enum ckind kind;
	size_t off;
} keys[] = {
	{ "cluster.pair.gbps", "min_fraction_of_healthy", CK_FRACTION, F(pair_of_healthy) },
	{ "cluster.pair.gbps", "min_fraction_of_median", CK_FRACTION, F(pair_of_median) },
	{ "cluster.pair.gbps", "min_fraction_of_stated", CK_FRACTION, F(pair_of_stated) },
	{ "cluster.pair.gbps", "min_fraction_of_link", CK_FRACTION, F(pair_of_link) },
	{ "cluster.pair.gbps", "min", CK_GBPS, F(pair_min_gbps) },
	{ "cluster.pair.gbps", "bad_node_share", CK_SHARE, F(bad_node_share) },
	{ "cluster.nccl_pair.gbps", "min_fraction_of_healthy", CK_FRACTION, F(nccl_of_healthy) },
	{ "cluster.nccl_pair.gbps", "min_fraction_of_median", CK_FRACTION, F(nccl_of_median) },
	{ "cluster.nccl_pair.gbps", "min_fraction_of_stated", CK_FRACTION, F(nccl_of_stated) },
	{ "cluster.nccl_pair.gbps", "min", CK_GBPS, F(nccl_min_gbps) },
	{ "cluster.pair.lat_us", "max_factor_of_healthy", CK_FACTOR, F(lat_of_healthy) },
	{ "cluster.pair.lat_us", "max", CK_US, F(lat_max_us) },
	{ "cluster.allreduce.busbw.gbps", "min_fraction_of_stated", CK_FRACTION, F(ar_of_stated) },
	{ "cluster.allreduce.busbw.gbps", "min", CK_GBPS, F(ar_min_gbps) },
	{ "cluster.node.*", "max_fraction_below_median", CK_FRACTION, F(node_below) },
	{ "cluster.node.*", "max_fraction_above_median", CK_FRACTION, F(node_above) },
	{ "cluster.node.*", "spread_multiple", CK_FACTOR, F(node_spread) },
	{ "cluster.node.clock_skew_s", "max", CK_SECONDS, F(skew_max_s) },
	{ "cluster.node.verdict", "unmeasured", CK_WORD, F(node_unmeasured_reported) },
};
#define NKEYS (sizeof keys / sizeof keys[0])

/* A metric stands for its first row: seen[] and the lists below index by that row. */
static size_t metric_row(const char *metric)
{
	for (size_t i = 0; metric && i < NKEYS; i++)
		if (!strcmp(keys[i].metric, metric))
			return i;
	return NKEYS;
}

static const struct ckey *key_row(size_t mrow, const char *key)
{
	for (size_t i = mrow; i < NKEYS; i++)
		if (!strcmp(keys[i].metric, keys[mrow].metric) && !strcmp(keys[i].key, key))
			return &keys[i];
	return NULL;
}

/* The metrics (each once, in the table's order), or one metric's keys, comma-separated into buf. */
static void list_of(const char *metric, char *buf, size_t size)
{
	buf[0] = 0;
	for (size_t i = 0; i < NKEYS; i++) {
		const char *w = metric ? keys[i].key : keys[i].metric;
		if ((metric && strcmp(keys[i].metric, metric)) || (!metric && metric_row(w) != i))
			continue;
		snprintf(buf + strlen(buf), size - strlen(buf), "%s%s", buf[0] ? ", " : "", w);
	}
}

/* One key's value into its field: 0, or -1 said. */
static int set_key(struct pctx *c, const struct ckey *r, yaml_node_t *v, struct policy_cluster *pc)
{
	double *field = (double *)(void *)((char *)pc + r->off), f;
	if (r->kind == CK_WORD) {
		const char *w = policy_scalar(v);
		if (!w || (strcmp(w, "counts") && strcmp(w, "reported")))
			return policy_perr(c, v, "'%s' is %s", r->key, kinds[r->kind].range);
		*field = !strcmp(w, "reported");
		return 0;
	}
	if (policy_get_number(c, v, r->key, &f))
		return -1;
	if (!(kinds[r->kind].lo_open ? f > kinds[r->kind].lo : f >= kinds[r->kind].lo) || !(f <= kinds[r->kind].hi))
		return policy_perr(c, v, "'%s' must be in %s", r->key, kinds[r->kind].range);
	*field = f;
	return 0;
}

static int parse_crule(struct pctx *c, yaml_node_t *n, struct policy_cluster *pc, int *seen)
{
	const char *metric = NULL;
	char list[512];
	if (n->type != YAML_MAPPING_NODE)
		return policy_perr(c, n, "a cluster rule is a mapping with 'metric' and its thresholds");
	if (policy_dup_keys(c, n))
		return -1;
	for (yaml_node_pair_t *pair = n->data.mapping.pairs.start; pair < n->data.mapping.pairs.top; pair++) {
		yaml_node_t *k, *v;
		const char *key = policy_pair_kv(c, pair, &k, &v);
		if (key && !strcmp(key, "metric"))
			metric = policy_scalar(v);
	}
	size_t m = metric_row(metric);
	if (m == NKEYS) {
		list_of(NULL, list, sizeof list);
		return policy_perr(c, n, "a cluster rule's metric is one of %s%s%s", list, metric ? ", not " : "",
				   metric ? metric : " (no 'metric' given)");
	}
	if (seen[m])
		return policy_perr(c, n, "%s has a rule already (line %d)", metric, seen[m]);
	seen[m] = (int)n->start_mark.line + 1;
	int nkeys = 0;
	for (yaml_node_pair_t *pair = n->data.mapping.pairs.start; pair < n->data.mapping.pairs.top; pair++) {
		yaml_node_t *k, *v;
		const char *key = policy_pair_kv(c, pair, &k, &v);
		if (!key)
			return policy_perr(c, k, "cluster rule keys must be plain words");
		if (!strcmp(key, "metric"))
			continue;
		const struct ckey *r = key_row(m, key);
		if (!r) {
			list_of(keys[m].metric, list, sizeof list);
			return policy_perr(c, k, "unknown key '%s' for %s (metric, %s)", key, metric, list);
		}
		if (set_key(c, r, v, pc))
			return -1;
		nkeys++;
	}
	if (!nkeys)
		return policy_perr(c, n, "cluster rule for %s has no threshold", metric);
	return 0;
}

int policy_parse_cluster(struct pctx *c, yaml_node_t *k, yaml_node_t *v, struct policy *p)
{
	int seen[NKEYS] = { 0 };
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

size_t policy_cluster_keys(void)
{
	return NKEYS;
}

int policy_cluster_key(size_t i, const char **metric, const char **key, size_t *off)
{
	if (i >= NKEYS)
		return -1;
	*metric = keys[i].metric;
	*key = keys[i].key;
	*off = keys[i].off;
	return 0;
}
