/*
 * cluster_sched.c - the pair schedules of a cluster run (judge/cluster.h):
 * rounds of disjoint pairs, so each node measures one peer at a time.
 *
 *   all     the round-robin (circle) method: node m-1 stays, the others
 *           rotate; m = n (even) or n + 1 (odd: the extra slot is a bye).
 *           m - 1 rounds, every pair exactly once.
 *   ring    i with i+1 mod n: the even edges, then the odd ones (a third
 *           round for the closing edge when n is odd).
 *   bisect  the hypercube: round k pairs i with i XOR 2^k, ceil(log2 n)
 *           rounds.  Past a power of two some partners do not exist; the
 *           nodes left without one in a round are paired with each other in
 *           rank order (a pair not yet used).  Then, while a node has fewer
 *           than 2 distinct peers (n >= 3), extra rounds pair it with a peer
 *           it has not met: a bad node shows on 2 or more pairs and can be
 *           told from a bad link (docs/cluster.md "Pair schedules").
 */
#include "judge/cluster.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static const char *const pair_names[] = { "all", "ring", "bisect" };

int cluster_pairs_parse(const char *s, enum cluster_pairs *k)
{
	for (int i = 0; s && i < 3; i++)
		if (!strcmp(s, pair_names[i])) {
			*k = (enum cluster_pairs)i;
			return 0;
		}
	return -1;
}

const char *cluster_pairs_name(enum cluster_pairs k)
{
	return (int)k >= 0 && (int)k < 3 ? pair_names[k] : "?";
}

struct sched {
	struct gv_cluster_pair *p;
	size_t n, cap;
	int nodes;
	uint8_t *met;      /* bisect: nodes x nodes, 1 once a pair is scheduled (NULL otherwise) */
	int *degree;       /* bisect: distinct peers per node */
};

static int add(struct sched *s, int a, int b, int round)
{
	if (a > b) {
		int t = a;
		a = b;
		b = t;
	}
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 64;
		struct gv_cluster_pair *p = realloc(s->p, cap * sizeof *p);
		if (!p)
			return -1;
		s->p = p;
		s->cap = cap;
	}
	struct gv_cluster_pair *q = &s->p[s->n++];
	memset(q, 0, sizeof *q);
	q->a = a;
	q->b = b;
	q->round = round;
	q->state = GV_PAIR_SKIPPED;
	q->gbps_ab = q->gbps_ba = q->lat_us = NAN;
	q->nccl_gbps_ab = q->nccl_gbps_ba = NAN;
	if (s->met) {
		s->met[(size_t)a * (size_t)s->nodes + (size_t)b] = s->met[(size_t)b * (size_t)s->nodes + (size_t)a] = 1;
		s->degree[a]++;
		s->degree[b]++;
	}
	return 0;
}

static int met(const struct sched *s, int a, int b)
{
	return s->met[(size_t)a * (size_t)s->nodes + (size_t)b];
}

static int sched_all(struct sched *s, int n, int *nrounds)
{
	int m = n % 2 ? n + 1 : n;   /* slot m-1 is fixed; when n is odd it is the bye */
	for (int r = 0; r < m - 1; r++) {
		if (m - 1 < n && add(s, m - 1, r, r))
			return -1;
		for (int i = 1; i < m / 2; i++)
			if (add(s, (r + i) % (m - 1), (r - i + m - 1) % (m - 1), r))
				return -1;
	}
	*nrounds = m - 1;
	return 0;
}

static int sched_ring(struct sched *s, int n, int *nrounds)
{
	if (n == 2) {
		*nrounds = 1;
		return add(s, 0, 1, 0);
	}
	for (int i = 0; i + 1 < n; i += 2)   /* (0,1) (2,3) ... */
		if (add(s, i, i + 1, 0))
			return -1;
	for (int i = 1; i + 1 < n; i += 2)   /* (1,2) (3,4) ... */
		if (add(s, i, i + 1, 1))
			return -1;
	if (n % 2 == 0) {                    /* even: (n-1, 0) closes the ring in round 1 */
		*nrounds = 2;
		return add(s, n - 1, 0, 1);
	}
	*nrounds = 3;
	return add(s, n - 1, 0, 2);
}

/* One round of the hypercube's dimension k; the nodes left without a partner pair with each other. */
static int bisect_round(struct sched *s, int n, int k, int round, int *busy, int *left)
{
	int nleft = 0;
	memset(busy, 0, (size_t)n * sizeof *busy);
	for (int i = 0; i < n; i++) {
		int j = i ^ (1 << k);
		if (i < j && j < n && !met(s, i, j)) {
			if (add(s, i, j, round))
				return -1;
			busy[i] = busy[j] = 1;
		}
	}
	for (int i = 0; i < n; i++)
		if (!busy[i])
			left[nleft++] = i;
	for (int x = 0; x < nleft; x++) {
		if (busy[left[x]])
			continue;
		for (int y = x + 1; y < nleft; y++)
			if (!busy[left[y]] && !met(s, left[x], left[y])) {
				if (add(s, left[x], left[y], round))
					return -1;
				busy[left[x]] = busy[left[y]] = 1;
				break;
			}
	}
	return 0;
}

/* Extra rounds until every node has 2 distinct peers (n >= 3). */
static int bisect_fill(struct sched *s, int n, int *round, int *busy)
{
	for (;;) {
		int need = 0;
		memset(busy, 0, (size_t)n * sizeof *busy);
		for (int i = 0; i < n; i++) {
			if (s->degree[i] >= 2 || busy[i])
				continue;
			need = 1;
			/* a free peer it has not met, the fewest-met first so the round stays small */
			int best = -1;
			for (int j = 0; j < n; j++)
				if (j != i && !busy[j] && !met(s, i, j) && (best < 0 || s->degree[j] < s->degree[best]))
					best = j;
			if (best >= 0) {
				if (add(s, i, best, *round))
					return -1;
				busy[i] = busy[best] = 1;
			}
		}
		if (!need)
			return 0;
		++*round;
	}
}

static int sched_bisect(struct sched *s, int n, int *nrounds)
{
	int dims = 0, round = 0, rc = -1;
	while ((1 << dims) < n)
		dims++;
	s->met = calloc((size_t)n * (size_t)n, 1);
	s->degree = calloc((size_t)n, sizeof *s->degree);
	int *busy = calloc((size_t)n, sizeof *busy), *left = calloc((size_t)n, sizeof *left);
	if (!s->met || !s->degree || !busy || !left)
		goto out;
	for (int k = 0; k < dims; k++) {
		size_t before = s->n;
		if (bisect_round(s, n, k, round, busy, left))
			goto out;
		round += s->n > before;
	}
	if (n >= 3 && bisect_fill(s, n, &round, busy))
		goto out;
	*nrounds = round;
	rc = 0;
out:
	free(busy);
	free(left);
	free(s->met);
	free(s->degree);
	s->met = NULL;
	s->degree = NULL;
	return rc;
}

int cluster_schedule(int n, enum cluster_pairs k, struct gv_cluster_pair **pairs, size_t *npairs, int *nrounds)
{
	struct sched s = { .nodes = n };
	int rc;
	*pairs = NULL;
	*npairs = 0;
	*nrounds = 0;
	if (n < 1 || n > GV_CLUSTER_MAX_NODES)
		return -1;
	if (n == 1)
		return 0;
	rc = k == CLUSTER_PAIRS_ALL ? sched_all(&s, n, nrounds) : k == CLUSTER_PAIRS_RING ? sched_ring(&s, n, nrounds) :
	     k == CLUSTER_PAIRS_BISECT ? sched_bisect(&s, n, nrounds) : -1;
	if (rc) {
		free(s.p);
		*nrounds = 0;
		return -1;
	}
	*pairs = s.p;
	*npairs = s.n;
	return 0;
}
