/*
 * cluster_pairs.c - the pair matrix judged (judge/cluster_int.h): a pair's
 * figure is its slower direction; a pair is slow under the policy's
 * fraction of the cluster median or of the stated rate per network card.
 *
 * The cluster median is the median of the nodes' own medians (node_median).
 *
 * Bad nodes (docs/cluster.md "The analysis"): a candidate is a node with at
 * least 2 measured pairs of which at least bad_node_share are slow.  Two
 * neighbours of a bad node share its slow pair, so a candidate is named only
 * on its pairs with peers that are not candidates themselves ("independent"
 * pairs): bad when that share of them is slow too.  A candidate with no
 * independent pair (all its peers are candidates: a ring whose two
 * neighbours are bad) is named only when a slow pair of it is left
 * unexplained by the nodes named so far.  Every slow pair with no bad node
 * at either end is a bad link (both nodes named, not drained: the link or
 * the route is at fault, and the provisioning script gets the pair).
 */
#include "judge/cluster_int.h"
#include "common/stats.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FAILED_LISTED 16   /* failed pairs named one by one; the rest counted in one finding */

double cluster_pair_figure(const struct gv_cluster_pair *p, enum cluster_fig f)
{
	double ab = f == CLUSTER_FIG_HOST ? p->gbps_ab : p->nccl_gbps_ab;
	double ba = f == CLUSTER_FIG_HOST ? p->gbps_ba : p->nccl_gbps_ba;
	if (p->state != GV_PAIR_MEASURED || !isfinite(ab) || !isfinite(ba))
		return NAN;
	return ab < ba ? ab : ba;
}

struct pjudge {
	struct gv_cluster *c;
	enum cluster_fig f;
	const struct cluster_rules *r;
	struct cluster_tally *t;
	double median, floor, stated;  /* stated: the per-card floor in force (0: off) */
	size_t nv;                     /* pairs with a figure */
	unsigned char *slow;           /* per pair */
	int *measured, *nslow, *tried, *failed;
	unsigned char *cand, *bad;
};

static const char *what(enum cluster_fig f)
{
	return f == CLUSTER_FIG_HOST ? "host to host" : "GPU to GPU (NCCL)";
}

/* ", 0.2 of the stated 12.5 GB/s per network card" or "" */
static void vs_stated(const struct pjudge *j, double v, char *buf, size_t size)
{
	if (isfinite(j->r->stated_card) && j->r->stated_card > 0)
		snprintf(buf, size, ", %.2f of the stated %.4g GB/s per network card", v / j->r->stated_card,
			 j->r->stated_card);
	else if (isfinite(j->r->stated_node) && j->r->stated_node > 0)
		snprintf(buf, size, " (stated %.4g GB/s per node: not a single stream's bound over %s)", j->r->stated_node,
			 j->c->transport[0] ? j->c->transport : "this provider");
	else
		snprintf(buf, size, " (no stated rate for the type)");
}

/* Counts per node; returns how many figures there are (into vals). */
static size_t tally_pairs(struct pjudge *j, double *vals)
{
	size_t nv = 0;
	for (size_t k = 0; k < j->c->npairs; k++) {
		const struct gv_cluster_pair *p = &j->c->pairs[k];
		double v = cluster_pair_figure(p, j->f);
		if (p->state == GV_PAIR_SKIPPED)
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

static int set_floor(struct pjudge *j)
{
	const struct policy_cluster *pc = &j->r->pc;
	double of_med = j->f == CLUSTER_FIG_HOST ? pc->pair_of_median : pc->nccl_of_median;
	double of_st = j->f == CLUSTER_FIG_HOST ? pc->pair_of_stated : pc->nccl_of_stated;
	j->stated = of_st > 0 && isfinite(j->r->stated_card) ? of_st * j->r->stated_card : 0;
	if (j->stated > 0 && j->median < j->stated) {
		/* the whole fabric under its stated rate: one cluster-wide finding; nodes judged against the median */
		j->t->reject = 1;
		if (gv_cluster_add_finding(j->c, GV_FIND_FABRIC_RULE, -1, -1, 0,
					   "the fabric as a whole is slow (%s): the pairs' median %.4g GB/s is %.2f of the "
					   "stated %.4g GB/s per network card, under the %.2f required (%s)%s", what(j->f),
					   j->median, j->median / j->r->stated_card, j->r->stated_card, of_st,
					   j->c->transport[0] ? j->c->transport : "provider unknown",
					   j->nv == 1 ? "; one pair cannot tell a node from the link: neither is drained, a "
							"third node would" : ""))
			return -1;
		j->stated = 0;
	}
	j->floor = of_med > 0 ? of_med * j->median : 0;
	if (j->stated > j->floor)
		j->floor = j->stated;
	for (size_t k = 0; k < j->c->npairs; k++) {
		double v = cluster_pair_figure(&j->c->pairs[k], j->f);
		j->slow[k] = isfinite(v) && v < j->floor;
		if (j->slow[k])
			j->nslow[j->c->pairs[k].a]++, j->nslow[j->c->pairs[k].b]++;
	}
	return 0;
}

static void find_bad(struct pjudge *j)
{
	int n = j->c->nnodes;
	double share = j->r->pc.bad_node_share > 0 ? j->r->pc.bad_node_share : 1;
	for (int i = 0; i < n; i++)
		j->cand[i] = j->measured[i] >= 2 && j->nslow[i] >= share * j->measured[i] - 1e-9;
	int *im = calloc((size_t)n, sizeof *im), *is = calloc((size_t)n, sizeof *is);
	if (!im || !is)
		goto out;
	for (size_t k = 0; k < j->c->npairs; k++) {
		const struct gv_cluster_pair *p = &j->c->pairs[k];
		if (!isfinite(cluster_pair_figure(p, j->f)))
			continue;
		if (!j->cand[p->b])
			im[p->a]++, is[p->a] += j->slow[k];
		if (!j->cand[p->a])
			im[p->b]++, is[p->b] += j->slow[k];
	}
	for (int i = 0; i < n; i++)
		j->bad[i] = j->cand[i] && im[i] > 0 && is[i] >= share * im[i] - 1e-9;
	/* candidates without an independent pair: named when a slow pair of theirs is left unexplained */
	for (size_t k = 0; k < j->c->npairs; k++) {
		const struct gv_cluster_pair *p = &j->c->pairs[k];
		if (!j->slow[k] || j->bad[p->a] || j->bad[p->b])
			continue;
		for (int e = 0; e < 2; e++) {
			int i = e ? p->b : p->a;
			if (j->cand[i] && im[i] == 0)
				j->bad[i] = 2;   /* 2: named in this pass (its other slow pairs are explained by it) */
		}
	}
out:
	free(im);
	free(is);
}

static int already(const struct gv_cluster *c, int kind, int rank, int peer)
{
	for (size_t i = 0; i < c->nfindings; i++)
		if (c->findings[i].kind == kind && c->findings[i].rank == rank && c->findings[i].peer == peer)
			return 1;
	return 0;
}

static int name_bad_nodes(struct pjudge *j, double *vals)
{
	for (int i = 0; i < j->c->nnodes; i++) {
		if (!j->bad[i] || already(j->c, GV_FIND_BAD_NODE, i, -1))
			continue;
		size_t nv = 0;
		for (size_t k = 0; k < j->c->npairs; k++)
			if ((j->c->pairs[k].a == i || j->c->pairs[k].b == i) && isfinite(cluster_pair_figure(&j->c->pairs[k], j->f)))
				vals[nv++] = cluster_pair_figure(&j->c->pairs[k], j->f);
		double own = gv_median_inplace(vals, nv);
		char st[192];
		vs_stated(j, own, st, sizeof st);
		j->t->reject = 1;
		if (gv_cluster_add_finding(j->c, GV_FIND_BAD_NODE, i, -1, 1,
					   "bad node: %d of its %d measured pairs are slow (%s): their median %.4g GB/s is "
					   "%.2f of the cluster median %.4g GB/s%s", j->nslow[i], j->measured[i], what(j->f),
					   own, j->median > 0 ? own / j->median : 0, j->median, st))
			return -1;
	}
	return 0;
}

static int name_bad_links(struct pjudge *j)
{
	for (size_t k = 0; k < j->c->npairs; k++) {
		const struct gv_cluster_pair *p = &j->c->pairs[k];
		if (!j->slow[k] || j->bad[p->a] || j->bad[p->b] || already(j->c, GV_FIND_BAD_LINK, p->a, p->b))
			continue;
		double v = cluster_pair_figure(p, j->f);
		double ab = j->f == CLUSTER_FIG_HOST ? p->gbps_ab : p->nccl_gbps_ab;
		double ba = j->f == CLUSTER_FIG_HOST ? p->gbps_ba : p->nccl_gbps_ba;
		char st[192];
		vs_stated(j, v, st, sizeof st);
		int alone = j->measured[p->a] < 2 || j->measured[p->b] < 2;
		j->t->reject = 1;
		if (gv_cluster_add_finding(j->c, GV_FIND_BAD_LINK, p->a, p->b, 0,
					   "bad link or route between ranks %d (%s) and %d (%s): %.4g GB/s %s (%.4g one way, "
					   "%.4g the other) is %.2f of the cluster median %.4g GB/s%s; %s", p->a,
					   j->c->nodes[p->a].host, p->b, j->c->nodes[p->b].host, v, what(j->f), ab, ba,
					   j->median > 0 ? v / j->median : 0, j->median, st,
					   alone ? "with one measured pair per node a slow link cannot be told from a slow "
						   "node (a third node would)" : "the other pairs of both nodes are not slow"))
			return -1;
	}
	return 0;
}

/* Failed pairs: a node whose every tried pair failed, while others measured, is unreachable (a bad node). */
static int name_failed(struct pjudge *j, size_t nv)
{
	size_t listed = 0, unexplained = 0;
	for (int i = 0; i < j->c->nnodes; i++)
		j->bad[i] = j->c->nodes[i].state == GV_NODE_OK && j->tried[i] > 0 && j->failed[i] == j->tried[i] && nv > 0;
	for (int i = 0; i < j->c->nnodes; i++)
		if (j->bad[i]) {
			j->t->reject = 1;
			if (gv_cluster_add_finding(j->c, GV_FIND_BAD_NODE, i, -1, 1,
						   "unreachable: every one of its %d pairs failed (%s) while %zu other pairs "
						   "were measured", j->tried[i], what(j->f), nv))
				return -1;
		}
	for (size_t k = 0; k < j->c->npairs; k++) {
		const struct gv_cluster_pair *p = &j->c->pairs[k];
		if (p->state != GV_PAIR_FAILED || j->bad[p->a] || j->bad[p->b] ||
		    j->c->nodes[p->a].state != GV_NODE_OK || j->c->nodes[p->b].state != GV_NODE_OK)
			continue;   /* explained: an unreachable, missing or lost node (named on its own) */
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
		if (isfinite(v)) {
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

int cluster_judge_pairs(struct gv_cluster *c, enum cluster_fig f, const struct cluster_rules *r, struct cluster_tally *t,
			double *median)
{
	struct pjudge j = { .c = c, .f = f, .r = r, .t = t };
	size_t n = (size_t)c->nnodes;
	int rc = -1;
	size_t nvals = c->npairs > n ? c->npairs : n;   /* a figure per pair, then a median per node */
	double *vals = malloc((nvals ? nvals : 1) * sizeof *vals);
	j.slow = calloc(c->npairs ? c->npairs : 1, 1);
	j.measured = calloc(n, sizeof(int));
	j.nslow = calloc(n, sizeof(int));
	j.tried = calloc(n, sizeof(int));
	j.failed = calloc(n, sizeof(int));
	j.cand = calloc(n, 1);
	j.bad = calloc(n, 1);
	*median = NAN;
	if (!vals || !j.slow || !j.measured || !j.nslow || !j.tried || !j.failed || !j.cand || !j.bad)
		goto out;
	size_t nv = tally_pairs(&j, vals);
	if (f == CLUSTER_FIG_HOST && name_failed(&j, nv))
		goto out;
	j.nv = nv;
	if (nv) {
		*median = j.median = node_median(&j, vals);
		if (isnan(j.median))
			goto out;
		memset(j.bad, 0, n);
		if (set_floor(&j))
			goto out;
		find_bad(&j);
		if (name_bad_nodes(&j, vals) || name_bad_links(&j))
			goto out;
	}
	rc = 0;
out:
	free(vals);
	free(j.slow);
	free(j.measured);
	free(j.nslow);
	free(j.tried);
	free(j.failed);
	free(j.cand);
	free(j.bad);
	return rc;
}
