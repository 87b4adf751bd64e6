/*
 * cluster_pairs.c - one figure of the pair matrix judged (judge/cluster_int.h): the references a
 * pair is held to and which pairs are slow; cluster_locate.c then names the nodes and links that
 * explain them.  A pair's figure is its slower direction (a latency: its one figure).
 *
 * The references (docs/cluster.md "The analysis"), each a policy key of the figure's rule:
 *  - the healthy pairs' figure (min_fraction_of_healthy; a latency: max_factor_of_healthy): the
 *    0.9 quantile of the pairs' figures (a latency's 0.1), so a majority of slow pairs cannot
 *    define normal: with 2 of 4 nodes slow only 1 pair of 6 is healthy, with 4 of 8, 6 of 28;
 *  - the cluster median (min_fraction_of_median): the median of the nodes' own medians;
 *  - the type's stated rate (min_fraction_of_stated): a network card's share over an RDMA
 *    provider, one flow's limit over tcp where the provider states one (judge/cluster_rate.c);
 *  - the slower node's NIC rate (min_fraction_of_link), over an RDMA provider only: one TCP
 *    socket is bound by a core, not by the NIC;
 *  - an absolute floor (min; a latency: max).
 * When even the healthy pairs miss the stated rate, the NIC rate or the absolute floor, that is
 * the whole fabric: one cluster-wide finding, and that reference is not held against each pair
 * (the nodes are still told apart by the relative ones).
 */
#include "judge/cluster_int.h"
#include "common/stats.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FAILED_LISTED 16   /* failed pairs named one by one; the rest counted in one finding */

/* A bound, tightened by another (the higher floor of a rate, the lower ceiling of a latency). */
static void tighten(const struct pjudge *j, double v, unsigned bit, double *b, unsigned *which)
{
	if (!(v > 0) || !isfinite(v))
		return;
	if (j->hb ? v > *b : v < *b) {
		*b = v;
		*which = bit;
	}
}

double cluster_pair_bound(const struct pjudge *j, size_t k, unsigned *which)
{
	double b = j->hb ? 0 : INFINITY;
	*which = 0;
	tighten(j, j->rel, SLOW_HEALTHY, &b, which);
	tighten(j, j->med, SLOW_MEDIAN, &b, which);
	tighten(j, j->stated, SLOW_STATED, &b, which);
	tighten(j, j->abs, SLOW_ABS, &b, which);
	if (j->of_link > 0)
		tighten(j, j->of_link * cluster_pair_link(j->c, &j->c->pairs[k]), SLOW_LINK, &b, which);
	return b;
}

static int worse(const struct pjudge *j, double v, double bound)
{
	return isfinite(v) && (j->hb ? v < bound : v > bound);
}

/* Counts per node; the figures into vals; how many. */
static size_t tally_pairs(struct pjudge *j, double *vals)
{
	size_t nv = 0;
	for (size_t k = 0; k < j->c->npairs; k++) {
		const struct gv_cluster_pair *p = &j->c->pairs[k];
		double v = cluster_pair_figure(p, j->f);
		if (p->state == GV_PAIR_SKIPPED || j->r->left_out[k])
			continue;
		j->tried[p->a]++, j->tried[p->b]++;
		if (p->state == GV_PAIR_FAILED)
			j->failed[p->a]++, j->failed[p->b]++;
		if (isfinite(v)) {
			vals[nv++] = v;
			j->measured[p->a]++, j->measured[p->b]++;
		}
	}
	return nv;
}

/* One cluster-wide finding: even the healthy pairs miss a reference (vs: how far, and which). */
static int fabric_slow(struct pjudge *j, const char *vs)
{
	j->t->reject = 1;
	return gv_cluster_add_finding(j->c, GV_FIND_FABRIC_RULE, -1, -1, 0,
				      "the fabric as a whole is %s (%s): even the healthy pairs %s %.4g %s, %s (%s)%s",
				      j->hb ? "slow" : "slow to answer", cluster_fig_words(j->f), j->hb ? "reach only" : "take",
				      j->healthy, j->hb ? "GB/s" : "us", vs, j->c->transport[0] ? j->c->transport : "provider unknown",
				      j->nv == 1 ? "; one pair cannot tell a node from the link: neither is drained, a third "
						   "node would" : "");
}

/* The median of the nodes' NIC rates, GB/s; NAN when none states one. */
static double links_median(const struct gv_cluster *c)
{
	double *v = malloc((size_t)c->nnodes * sizeof *v), m = NAN;
	size_t n = 0;
	for (int i = 0; v && i < c->nnodes; i++)
		if (c->nodes[i].state == GV_NODE_OK && c->nodes[i].link_gbps > 0)
			v[n++] = c->nodes[i].link_gbps;
	if (n)
		m = gv_median_inplace(v, n);
	free(v);
	return m;
}

static int rdma(const struct gv_cluster *c)
{
	return strstr(c->transport, "efa") || strstr(c->transport, "verbs");
}

/* The references in force for this figure, each checked first against the healthy pairs. */
static int set_bounds(struct pjudge *j)
{
	const struct policy_cluster *pc = &j->r->pc;
	char what[160];
	double of_h = j->f == CLUSTER_FIG_HOST ? pc->pair_of_healthy : j->f == CLUSTER_FIG_NCCL ? pc->nccl_of_healthy : 0;
	double of_m = j->f == CLUSTER_FIG_HOST ? pc->pair_of_median : j->f == CLUSTER_FIG_NCCL ? pc->nccl_of_median : 0;
	double of_s = j->f == CLUSTER_FIG_HOST ? pc->pair_of_stated : j->f == CLUSTER_FIG_NCCL ? pc->nccl_of_stated : 0;
	j->abs = j->f == CLUSTER_FIG_HOST ? pc->pair_min_gbps : j->f == CLUSTER_FIG_NCCL ? pc->nccl_min_gbps : pc->lat_max_us;
	j->rel = j->f == CLUSTER_FIG_LAT ? pc->lat_of_healthy * j->healthy : of_h * j->healthy;
	j->med = of_m * j->median;
	j->stated = of_s > 0 && isfinite(j->r->stated_one) ? of_s * j->r->stated_one : 0;
	j->of_link = j->f == CLUSTER_FIG_HOST && rdma(j->c) ? pc->pair_of_link : 0;
	if (j->stated > 0 && worse(j, j->healthy, j->stated)) {
		snprintf(what, sizeof what, "%.2f of the stated %.4g GB/s per %s, under the %.2f required",
			 j->healthy / j->r->stated_one, j->r->stated_one, j->r->stated_per, of_s);
		if (fabric_slow(j, what))
			return -1;
		j->stated = 0;
	}
	if (j->abs > 0 && worse(j, j->healthy, j->abs)) {
		snprintf(what, sizeof what, "%s the policy's %s %.4g %s", j->hb ? "under" : "over", j->hb ? "min" : "max",
			 j->abs, j->hb ? "GB/s" : "us");
		if (fabric_slow(j, what))
			return -1;
		j->abs = 0;
	}
	double lm = links_median(j->c);
	if (j->of_link > 0 && isfinite(lm) && worse(j, j->healthy, j->of_link * lm)) {
		snprintf(what, sizeof what, "%.2f of the nodes' NIC rate %.4g GB/s (their median), under the %.2f required",
			 j->healthy / lm, lm, j->of_link);
		if (fabric_slow(j, what))
			return -1;
		j->of_link = 0;
	}
	return 0;
}

/* Which pairs are slow, against which references, and which way. */
static void mark_slow(struct pjudge *j)
{
	for (size_t k = 0; k < j->c->npairs; k++) {
		const struct gv_cluster_pair *p = &j->c->pairs[k];
		double v = cluster_pair_figure(p, j->f);
		unsigned which;
		j->slow[k] = j->way[k] = 0;
		if (!isfinite(v) || j->r->left_out[k])
			continue;
		double b = cluster_pair_bound(j, k, &which);
		if (!worse(j, v, b))
			continue;
		double refs[] = { j->rel, j->med, j->stated, j->of_link * cluster_pair_link(j->c, p), j->abs };   /* SLOW_* order */
		for (unsigned i = 0; i < sizeof refs / sizeof refs[0]; i++)
			if (refs[i] > 0 && worse(j, v, refs[i]))
				j->slow[k] |= (unsigned char)(1u << i);
		if (j->f != CLUSTER_FIG_LAT)
			j->way[k] = (unsigned char)(worse(j, cluster_pair_way(p, j->f, 1), b) | worse(j, cluster_pair_way(p, j->f, 0), b) << 1);
		j->nslow[p->a]++, j->nslow[p->b]++;
	}
}

/* Node i, whose every pair with a present peer (tried) failed while nv others were measured. */
static int name_one_unreachable(struct pjudge *j, int i, int tried, size_t nv)
{
	if (i == 0) {
		j->named[i] = NAMED_COORDINATOR;
		j->t->coordinator = 1;
		return gv_cluster_add_finding(j->c, GV_FIND_COORDINATOR, 0, -1, 1,
					      "every one of rank 0's %d pairs with the others failed (%s) while %zu pairs of "
					      "the other nodes were measured: rank 0's own network is the likely cause, not "
					      "its peers", tried, cluster_fig_words(j->f), nv);
	}
	j->named[i] = NAMED_UNREACHABLE;
	j->t->reject = 1;
	return gv_cluster_add_finding(j->c, GV_FIND_BAD_NODE, i, -1, 1,
				      "unreachable: every one of its %d pairs failed (%s) while %zu other pairs were "
				      "measured", tried, cluster_fig_words(j->f), nv);
}

/*
 * A node whose every pair with a present peer failed while other pairs were measured is
 * unreachable (a bad node; its pairs with a missing or lost peer say nothing of it); rank 0 so,
 * over at least 2 such pairs, is the coordinator, whose own network is then the likely cause (the
 * run is 3: what it measured of the others went through it).
 */
static int name_unreachable(struct pjudge *j, size_t nv)
{
	int n = j->c->nnodes, *tried = calloc((size_t)n, sizeof *tried), *failed = calloc((size_t)n, sizeof *failed);
	if (!tried || !failed) {
		free(tried);
		free(failed);
		return -1;
	}
	for (size_t k = 0; k < j->c->npairs; k++) {
		const struct gv_cluster_pair *p = &j->c->pairs[k];
		if (p->state == GV_PAIR_SKIPPED || j->r->left_out[k] || j->c->nodes[p->a].state != GV_NODE_OK ||
		    j->c->nodes[p->b].state != GV_NODE_OK)
			continue;
		tried[p->a]++, tried[p->b]++;
		if (p->state == GV_PAIR_FAILED)
			failed[p->a]++, failed[p->b]++;
	}
	int rc = 0;
	for (int i = 0; !rc && i < n; i++)
		if (j->c->nodes[i].state == GV_NODE_OK && tried[i] && failed[i] == tried[i] && nv && (i || tried[i] >= 2))
			rc = name_one_unreachable(j, i, tried[i], nv);
	free(tried);
	free(failed);
	return rc;
}

/* Failed pairs no named, missing or lost node explains: named (up to FAILED_LISTED), the run 3. */
static int name_failed(struct pjudge *j)
{
	size_t listed = 0, unexplained = 0;
	for (size_t k = 0; k < j->c->npairs; k++) {
		const struct gv_cluster_pair *p = &j->c->pairs[k];
		if (p->state != GV_PAIR_FAILED || j->r->left_out[k] || cluster_pair_explained(j, k) ||
		    j->c->nodes[p->a].state != GV_NODE_OK || j->c->nodes[p->b].state != GV_NODE_OK)
			continue;
		j->t->unmeasured = 1;
		unexplained++;
		if (listed++ < FAILED_LISTED &&
		    gv_cluster_add_finding(j->c, GV_FIND_FABRIC_RULE, p->a, p->b, 0, "pair of ranks %d and %d failed: %s",
					   p->a, p->b, p->why[0] ? p->why : "no reason given"))
			return -1;
	}
	if (unexplained > FAILED_LISTED &&
	    gv_cluster_add_finding(j->c, GV_FIND_FABRIC_RULE, -1, -1, 0, "%zu pairs failed in all (%d named above)",
				   unexplained, FAILED_LISTED))
		return -1;
	return 0;
}

/*
 * The cluster median: the median of each node's own median pair figure.  Not
 * the plain median of the pairs: a bad node owns n-1 of the n(n-1)/2 pairs,
 * 2 of 3 with 3 nodes, half with 4, and would drag a plain median down to
 * its own rate; its neighbours' medians stay healthy.  With many nodes the
 * two agree.  vals (max(npairs, nnodes)) is scratch.
 */
static double node_median(struct pjudge *j, double *vals)
{
	int n = j->c->nnodes;
	size_t *at = calloc((size_t)n + 1, sizeof *at), *fill = calloc((size_t)n, sizeof *fill);
	double *all = malloc((2 * j->c->npairs + 1) * sizeof *all), med = NAN;
	if (!at || !fill || !all)
		goto out;
	for (int i = 0; i < n; i++)
		at[i + 1] = at[i] + (size_t)j->measured[i];
	for (size_t k = 0; k < j->c->npairs; k++) {
		const struct gv_cluster_pair *p = &j->c->pairs[k];
		double v = cluster_pair_figure(p, j->f);
		if (isfinite(v) && !j->r->left_out[k]) {
			all[at[p->a] + fill[p->a]++] = v;
			all[at[p->b] + fill[p->b]++] = v;
		}
	}
	size_t nm = 0;
	for (int i = 0; i < n; i++)
		if (j->measured[i])
			vals[nm++] = gv_median_inplace(all + at[i], (size_t)j->measured[i]);
	med = gv_median_inplace(vals, nm);
out:
	free(at);
	free(fill);
	free(all);
	return med;
}

/* Nodes a finding of an earlier figure named already: they explain their pairs here too. */
static void named_before(struct pjudge *j)
{
	for (size_t i = 0; i < j->c->nfindings; i++) {
		const struct gv_cluster_finding *x = &j->c->findings[i];
		if (x->drain && x->rank >= 0 && x->rank < j->c->nnodes && !j->named[x->rank] &&
		    (x->kind == GV_FIND_BAD_NODE || x->kind == GV_FIND_INTERMITTENT || x->kind == GV_FIND_COORDINATOR))
			j->named[x->rank] = NAMED_BEFORE;
	}
}

static int judge(struct pjudge *j, double *vals, double *median, double *healthy)
{
	size_t nv = tally_pairs(j, vals);
	named_before(j);
	if (j->f == CLUSTER_FIG_HOST && name_unreachable(j, nv))
		return -1;
	j->nv = nv;
	if (nv) {
		*healthy = j->healthy = cluster_healthy(vals, nv, j->hb);
		*median = j->median = node_median(j, vals);
		if (isnan(j->median) || set_bounds(j))
			return -1;
		mark_slow(j);
		if (cluster_locate(j))
			return -1;
	}
	return j->f == CLUSTER_FIG_HOST ? name_failed(j) : 0;
}

int cluster_judge_pairs(struct gv_cluster *c, enum cluster_fig f, const struct cluster_rules *r, struct cluster_tally *t,
			double *median, double *healthy)
{
	struct pjudge j = { .c = c, .f = f, .r = r, .t = t, .hb = f != CLUSTER_FIG_LAT };
	size_t n = (size_t)c->nnodes;
	int rc = -1;
	size_t nvals = c->npairs > n ? c->npairs : n;   /* a figure per pair, then a median per node */
	double *vals = malloc((nvals ? nvals : 1) * sizeof *vals);
	j.slow = calloc(c->npairs ? c->npairs : 1, 1);
	j.way = calloc(c->npairs ? c->npairs : 1, 1);
	j.measured = calloc(n, sizeof(int));
	j.nslow = calloc(n, sizeof(int));
	j.tried = calloc(n, sizeof(int));
	j.failed = calloc(n, sizeof(int));
	j.cand = calloc(n, 1);
	j.named = calloc(n, 1);
	*median = *healthy = NAN;
	if (vals && j.slow && j.way && j.measured && j.nslow && j.tried && j.failed && j.cand && j.named)
		rc = judge(&j, vals, median, healthy);
	free(vals);
	free(j.slow);
	free(j.way);
	free(j.measured);
	free(j.nslow);
	free(j.tried);
	free(j.failed);
	free(j.cand);
	free(j.named);
	return rc;
}
