/*
 * cluster_locate.c - which nodes and links explain one figure's slow pairs (and, host to host,
 * its failed ones), as an operator reads a heat map (judge/cluster_int.h; docs/cluster.md "The
 * analysis"):
 *
 *  1. The share rule.  A candidate is a node with at least 2 measured pairs of which at least
 *     bad_node_share are slow.  Two neighbours of a bad node share its slow pair, so a candidate
 *     is judged on its pairs with peers that are neither candidates nor named: bad when that
 *     share of them is slow too.
 *  2. The fewest nodes covering the rest (greedy set cover).  Of the bad pairs no named node
 *     explains (cluster_pair_explained: a node named for its slow pairs that reached every other
 *     peer does not explain a pair that failed), the node common to the most is named, while it is common to at least 3 of them,
 *     or to 2 when at least half of its own tried pairs are bad (or it is a candidate): its other
 *     pairs are slow too, so the link explanation fails for it, even under bad_node_share (two bad
 *     pairs among many stay two links: two bad routes meeting at a node happen).  Ties: the more
 *     bad pairs it explains, then the larger share of its own pairs bad, then the lower rank.
 *  3. A named node whose pairs go bad, good and bad again over the rounds (or good, bad, good)
 *     is intermittent (a flapping port or cable): named so, with the rounds.
 *  4. Every slow pair left is a bad link: both nodes named, neither drained; the finding says
 *     whether their other pairs are slow, and which way a one-way fault runs.
 */
#include "judge/cluster_int.h"
#include "common/stats.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ROUNDS_LISTED 12   /* rounds named in an intermittent node's pattern */

static int bad_pair(const struct pjudge *j, size_t k)
{
	const struct gv_cluster_pair *p = &j->c->pairs[k];
	if (j->r->left_out[k])
		return 0;
	return j->slow[k] || (j->f == CLUSTER_FIG_HOST && p->state == GV_PAIR_FAILED &&
			      j->c->nodes[p->a].state == GV_NODE_OK && j->c->nodes[p->b].state == GV_NODE_OK);
}

int cluster_pair_explained(const struct pjudge *j, size_t k)
{
	const struct gv_cluster_pair *p = &j->c->pairs[k];
	if (p->state != GV_PAIR_FAILED)
		return j->named[p->a] || j->named[p->b];
	return (j->named[p->a] && j->named[p->b]) || (j->named[p->a] && j->failed[p->a] >= 2) ||
	       (j->named[p->b] && j->failed[p->b] >= 2);
}

static int share_rule(struct pjudge *j)
{
	int n = j->c->nnodes;
	double share = j->r->pc.bad_node_share > 0 ? j->r->pc.bad_node_share : 1;
	int *im = calloc((size_t)n, sizeof *im), *is = calloc((size_t)n, sizeof *is);
	if (!im || !is) {
		free(im);
		free(is);
		return -1;
	}
	for (int i = 0; i < n; i++)
		j->cand[i] = !j->named[i] && j->measured[i] >= 2 && j->nslow[i] >= share * j->measured[i] - 1e-9;
	for (size_t k = 0; k < j->c->npairs; k++) {
		const struct gv_cluster_pair *p = &j->c->pairs[k];
		if (!isfinite(cluster_pair_figure(p, j->f)) || j->r->left_out[k])
			continue;
		if (!j->cand[p->b] && !j->named[p->b])
			im[p->a]++, is[p->a] += j->slow[k] != 0;
		if (!j->cand[p->a] && !j->named[p->a])
			im[p->b]++, is[p->b] += j->slow[k] != 0;
	}
	for (int i = 0; i < n; i++)
		if (j->cand[i] && im[i] > 0 && is[i] >= share * im[i] - 1e-9)
			j->named[i] = NAMED_BAD;
	free(im);
	free(is);
	return 0;
}

/* Step 2: nbad[] (a node's bad pairs) and cov[] (those no named node explains) are scratch of nnodes. */
static void cover(struct pjudge *j, int *nbad, int *cov)
{
	int n = j->c->nnodes;
	memset(nbad, 0, (size_t)n * sizeof *nbad);
	for (size_t k = 0; k < j->c->npairs; k++)
		if (bad_pair(j, k))
			nbad[j->c->pairs[k].a]++, nbad[j->c->pairs[k].b]++;
	for (;;) {
		memset(cov, 0, (size_t)n * sizeof *cov);
		for (size_t k = 0; k < j->c->npairs; k++)
			if (bad_pair(j, k) && !cluster_pair_explained(j, k))
				cov[j->c->pairs[k].a]++, cov[j->c->pairs[k].b]++;
		int best = -1;
		double best_share = 0;
		for (int i = 0; i < n; i++) {
			double share = j->tried[i] ? (double)nbad[i] / j->tried[i] : 0;
			if (j->named[i] || cov[i] < 2 || (share < 0.5 && !j->cand[i] && cov[i] < 3))
				continue;
			if (best < 0 || cov[i] > cov[best] || (cov[i] == cov[best] && share > best_share)) {
				best = i;
				best_share = share;
			}
		}
		if (best < 0)
			return;
		j->named[best] = NAMED_COVER;
	}
}

/* A node's pairs over the rounds: which were bad, which good (measured and not slow). */
struct pattern {
	int *bad, *good;   /* rounds, ascending */
	int nbad, ngood, failed, turns;
	int first_bad;     /* the round of the first bad pair after the last good one, -1 */
	int last_bad;      /* the round of its last bad pair */
	int ends_bad;      /* its last pair was bad */
};

static int cmp_round(const void *x, const void *y, void *arg)
{
	const struct gv_cluster_pair *ps = arg;
	int a = ps[*(const size_t *)x].round, b = ps[*(const size_t *)y].round;
	return a < b ? -1 : a > b;
}

static int pattern_of(const struct pjudge *j, int i, struct pattern *pt)
{
	size_t *ix = malloc((size_t)(j->tried[i] + 1) * sizeof *ix), n = 0;
	memset(pt, 0, sizeof *pt);
	pt->bad = malloc((size_t)(j->tried[i] + 1) * sizeof *pt->bad);
	pt->good = malloc((size_t)(j->tried[i] + 1) * sizeof *pt->good);
	if (!ix || !pt->bad || !pt->good) {
		free(ix);
		return -1;
	}
	for (size_t k = 0; k < j->c->npairs && n < (size_t)j->tried[i]; k++) {
		const struct gv_cluster_pair *p = &j->c->pairs[k];
		if ((p->a == i || p->b == i) && p->state != GV_PAIR_SKIPPED && !j->r->left_out[k])
			ix[n++] = k;
	}
	qsort_r(ix, n, sizeof *ix, cmp_round, j->c->pairs);
	int last = -1;   /* 1 bad, 0 good */
	pt->first_bad = -1;
	for (size_t q = 0; q < n; q++) {
		const struct gv_cluster_pair *p = &j->c->pairs[ix[q]];
		int b = bad_pair(j, ix[q]);
		if (!b && !isfinite(cluster_pair_figure(p, j->f)))
			continue;   /* neither: not measured for this figure */
		if (b) {
			pt->bad[pt->nbad++] = p->round;
			pt->last_bad = p->round;
			pt->failed += p->state == GV_PAIR_FAILED;
			if (last != 1)
				pt->first_bad = p->round;
		} else {
			pt->good[pt->ngood++] = p->round;
		}
		pt->turns += last >= 0 && last != b;
		last = b;
	}
	pt->ends_bad = last == 1;
	free(ix);
	return 0;
}

/* "0.0276 GB/s is 0.20 of the healthy pairs' 0.138 GB/s" (a latency: "is 9.8x the healthy pairs' 30 us"). */
static void vs_healthy(const struct pjudge *j, double v, char *buf, size_t size)
{
	if (j->hb)
		snprintf(buf, size, "%.4g GB/s is %.2f of the healthy pairs' %.4g GB/s", v, j->healthy > 0 ? v / j->healthy : 0,
			 j->healthy);
	else
		snprintf(buf, size, "%.4g us is %.1fx the healthy pairs' %.4g us", v, j->healthy > 0 ? v / j->healthy : 0,
			 j->healthy);
}

/* The other references v misses (bits: SLOW_*), and the stated rate for scale. */
static void vs_others(const struct pjudge *j, double v, unsigned bits, double link, char *buf, size_t size)
{
	size_t l = 0;
	buf[0] = 0;
	if (bits & SLOW_MEDIAN)
		l += (size_t)snprintf(buf + l, size - l, ", %.2f of the cluster median %.4g GB/s", v / j->median, j->median);
	if ((bits & SLOW_LINK) && l < size && link > 0)
		l += (size_t)snprintf(buf + l, size - l, ", %.2f of the NIC's own %.4g GB/s", v / link, link);
	if ((bits & SLOW_ABS) && l < size)
		l += (size_t)snprintf(buf + l, size - l, ", %s the policy's %s %.4g %s", j->hb ? "under" : "over",
				      j->hb ? "min" : "max", j->abs, j->hb ? "GB/s" : "us");
	if (!j->hb || l >= size)
		return;
	if (isfinite(j->r->stated_one) && j->r->stated_one > 0 && v < j->r->stated_one)
		snprintf(buf + l, size - l, ", %.2f of the stated %.4g GB/s per %s", v / j->r->stated_one, j->r->stated_one,
			 j->r->stated_per);
	else if (isfinite(j->r->stated_one) && j->r->stated_one > 0)
		return;   /* over what one endpoint is held to: the stated rate says nothing of it */
	else if (isfinite(j->r->stated_node) && j->r->stated_node > 0)
		snprintf(buf + l, size - l, " (stated %.4g GB/s per node: no single flow's bound over %s)", j->r->stated_node,
			 j->c->transport[0] ? j->c->transport : "this provider");
	else
		snprintf(buf + l, size - l, " (no stated rate for the type)");
}

/* Node i's slow pairs: their figures' median, the union of their SLOW_* bits, and which way they are slow. */
struct node_slow {
	double median, out, in;   /* out/in: the median of what it sends / receives over those pairs (a rate) */
	unsigned bits;
	int out_only, in_only;
};

static void node_slow_of(const struct pjudge *j, int i, double *scratch, struct node_slow *ns)
{
	size_t n = 0, no = 0, ni = 0, m = (size_t)j->nslow[i];
	double *out = scratch + m, *in = scratch + 2 * m;
	memset(ns, 0, sizeof *ns);
	ns->out_only = ns->in_only = j->hb;
	for (size_t k = 0; k < j->c->npairs; k++) {
		const struct gv_cluster_pair *p = &j->c->pairs[k];
		if ((p->a != i && p->b != i) || !j->slow[k] || n >= m)
			continue;
		int sends_ab = p->a == i;
		scratch[n++] = cluster_pair_figure(p, j->f);
		ns->bits |= j->slow[k];
		out[no++] = cluster_pair_way(p, j->f, sends_ab);
		in[ni++] = cluster_pair_way(p, j->f, !sends_ab);
		unsigned out_bit = sends_ab ? 1 : 2;
		ns->out_only &= j->way[k] == out_bit;
		ns->in_only &= j->way[k] == (3 - out_bit);
	}
	ns->median = n ? gv_median_inplace(scratch, n) : NAN;
	ns->out = no ? gv_median_inplace(out, no) : NAN;
	ns->in = ni ? gv_median_inplace(in, ni) : NAN;
	if (!n)
		ns->out_only = ns->in_only = 0;
}

/* "; one way: what it sends is at 0.20 of healthy, what it receives healthy (0.97)" or "" */
static void node_way(const struct pjudge *j, const struct node_slow *ns, char *buf, size_t size)
{
	buf[0] = 0;
	if (ns->out_only || ns->in_only)
		snprintf(buf, size, "; one way: what it %s is at %.2f of healthy, what it %s healthy (%.2f)",
			 ns->out_only ? "sends" : "receives", (ns->out_only ? ns->out : ns->in) / j->healthy,
			 ns->out_only ? "receives" : "sends", (ns->out_only ? ns->in : ns->out) / j->healthy);
}

static int name_intermittent(struct pjudge *j, int i, const struct pattern *pt)
{
	char bad[160], good[160];
	cluster_list_ints(pt->bad, (size_t)pt->nbad, ROUNDS_LISTED, bad, sizeof bad);
	cluster_list_ints(pt->good, (size_t)pt->ngood, ROUNDS_LISTED, good, sizeof good);
	return gv_cluster_add_finding(j->c, GV_FIND_INTERMITTENT, i, -1, 1,
				      "its pairs (%s) were %s in round%s %s and fine in round%s %s (%d of its %d pairs: %d "
				      "failed, %d slow): a port or cable that comes and goes", cluster_fig_words(j->f),
				      pt->failed ? "slow or failed" : "slow", pt->nbad == 1 ? "" : "s", bad,
				      pt->ngood == 1 ? "" : "s", good, pt->nbad, pt->nbad + pt->ngood, pt->failed,
				      pt->nbad - pt->failed);
}

static int name_node(struct pjudge *j, int i, double *scratch)
{
	struct pattern pt;
	struct node_slow ns;
	char h[128], o[224], w[96], since[48] = "", failed[48];
	int rc;
	if (pattern_of(j, i, &pt))
		return -1;
	j->t->reject = 1;
	if (pt.turns >= 2 && pt.ngood >= 1) {
		rc = name_intermittent(j, i, &pt);
		goto out;
	}
	snprintf(failed, sizeof failed, " and %d more failed", pt.failed);
	node_slow_of(j, i, scratch, &ns);
	double link = j->c->nodes[i].link_gbps;
	vs_healthy(j, ns.median, h, sizeof h);
	vs_others(j, ns.median, ns.bits, link, o, sizeof o);
	node_way(j, &ns, w, sizeof w);
	if (pt.turns == 1 && pt.ends_bad)
		snprintf(since, sizeof since, ", from round %d on", pt.first_bad);
	else if (pt.turns == 1)
		snprintf(since, sizeof since, ", until round %d", pt.last_bad);
	if (j->named[i] == NAMED_BAD)
		rc = gv_cluster_add_finding(j->c, GV_FIND_BAD_NODE, i, -1, 1,
					    "%d of its %d measured pairs are %s%s (%s%s): their median %s%s%s", j->nslow[i],
					    j->measured[i], j->hb ? "slow" : "slow to answer", pt.failed ? failed : "",
					    cluster_fig_words(j->f), since, h, o, w);
	else
		rc = gv_cluster_add_finding(j->c, GV_FIND_BAD_NODE, i, -1, 1,
					    "%d of its %d pairs are %s (%s%s), more than any peer of it has: the node is "
					    "their common factor, not %d links; the slow ones' median %s%s%s", pt.nbad,
					    pt.nbad + pt.ngood, pt.failed ? "slow or failed" : "slow", cluster_fig_words(j->f),
					    since, pt.nbad, h, o, w);
out:
	free(pt.bad);
	free(pt.good);
	return rc;
}

static int already(const struct gv_cluster *c, int kind, int rank, int peer)
{
	for (size_t i = 0; i < c->nfindings; i++)
		if (c->findings[i].kind == kind && c->findings[i].rank == rank && c->findings[i].peer == peer)
			return 1;
	return 0;
}

/* "the other pairs of both nodes are not slow", or what is slow besides that no named node explains. */
static void others_words(const struct pjudge *j, const struct gv_cluster_pair *p, const int *nbad, const int *left,
			 char *buf, size_t size)
{
	int oa = left[p->a] - 1, ob = left[p->b] - 1;
	if (j->measured[p->a] < 2 || j->measured[p->b] < 2)
		snprintf(buf, size, "with one measured pair per node a slow link cannot be told from a slow node (a third "
			 "node would)");
	else if (nbad[p->a] == 1 && nbad[p->b] == 1)
		snprintf(buf, size, "the other pairs of both nodes are not slow");
	else if (!oa && !ob)
		snprintf(buf, size, "their other slow pairs are explained by the nodes named");
	else
		snprintf(buf, size, "rank %d has %d other bad pair%s and rank %d %d, too few to name either node", p->a, oa,
			 oa == 1 ? "" : "s", p->b, ob);
}

static int name_link(struct pjudge *j, size_t k, const int *nbad, const int *left)
{
	const struct gv_cluster_pair *p = &j->c->pairs[k];
	double v = cluster_pair_figure(p, j->f), ab = cluster_pair_way(p, j->f, 1), ba = cluster_pair_way(p, j->f, 0);
	char h[128], o[224], way[160], others[160];
	vs_healthy(j, v, h, sizeof h);
	vs_others(j, v, j->slow[k], cluster_pair_link(j->c, p), o, sizeof o);
	others_words(j, p, nbad, left, others, sizeof others);
	if (j->way[k] == 1 || j->way[k] == 2)
		snprintf(way, sizeof way, "one way: rank %d -> rank %d at %.2f of healthy, rank %d -> rank %d healthy (%.2f)",
			 j->way[k] == 1 ? p->a : p->b, j->way[k] == 1 ? p->b : p->a, (j->way[k] == 1 ? ab : ba) / j->healthy,
			 j->way[k] == 1 ? p->b : p->a, j->way[k] == 1 ? p->a : p->b, (j->way[k] == 1 ? ba : ab) / j->healthy);
	else if (j->hb)
		snprintf(way, sizeof way, "both ways (%.4g GB/s one way, %.4g the other)", ab, ba);
	else
		snprintf(way, sizeof way, "one-way latency, half the round trip");
	j->t->reject = 1;
	return gv_cluster_add_finding(j->c, GV_FIND_BAD_LINK, p->a, p->b, 0,
				      "link or route between ranks %d (%s) and %d (%s), %s: %s%s; %s; %s", p->a,
				      j->c->nodes[p->a].host, p->b, j->c->nodes[p->b].host, cluster_fig_words(j->f), h, o, way,
				      others);
}

int cluster_locate(struct pjudge *j)
{
	int n = j->c->nnodes, rc = -1;
	int *nbad = calloc((size_t)n, sizeof *nbad), *cov = calloc((size_t)n, sizeof *cov);
	double *s3 = malloc((3 * j->c->npairs + 3) * sizeof *s3);
	if (!nbad || !cov || !s3 || share_rule(j))
		goto out;
	cover(j, nbad, cov);
	memset(cov, 0, (size_t)n * sizeof *cov);   /* now each node's bad pairs no named node explains */
	for (size_t k = 0; k < j->c->npairs; k++)
		if (bad_pair(j, k) && !cluster_pair_explained(j, k))
			cov[j->c->pairs[k].a]++, cov[j->c->pairs[k].b]++;
	for (int i = 0; i < n; i++)
		if ((j->named[i] == NAMED_BAD || j->named[i] == NAMED_COVER) && !already(j->c, GV_FIND_BAD_NODE, i, -1) &&
		    name_node(j, i, s3))
			goto out;
	for (size_t k = 0; k < j->c->npairs; k++) {
		const struct gv_cluster_pair *p = &j->c->pairs[k];
		if (!j->slow[k] || j->named[p->a] || j->named[p->b] || already(j->c, GV_FIND_BAD_LINK, p->a, p->b))
			continue;
		if (name_link(j, k, nbad, cov))
			goto out;
	}
	rc = 0;
out:
	free(nbad);
	free(cov);
	free(s3);
	return rc;
}
