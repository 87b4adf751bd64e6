/*
 * cluster_sim.c - times the cluster schedule and analysis at scale (#49):
 * for N nodes (default 1024) and each schedule, the time cluster_schedule()
 * takes, the time cluster_analyse() takes on the synthetic run of
 * tests/unit/cluster_synth.h (the same plants the unit test asserts), the
 * rounds and pairs, what was named, and the wall-clock estimate of a vet at
 * the quick profile (docs/cluster.md "At scale").  Built and run by
 * tests/bench/cluster_sim.sh; not part of `make check`.
 *
 *   cluster_sim [N] [REPEATS]
 */
#include "tests/unit/cluster_synth.h"

#include <time.h>

#define PAIR_S        1.2    /* one pair: 0.5 s each way + latency (benches/fabric.h defaults) */
#define QUICK_S       44.0   /* the quick profile on one H100 (tests/fixtures/gpu/h100-2026-11-22) */

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int one(int n, enum cluster_pairs k, int repeats)
{
	double best_sched = INFINITY, best_an = INFINITY;
	struct gv_cluster *c = NULL;
	for (int r = 0; r < repeats; r++) {
		struct gv_cluster_pair *p;
		size_t np;
		int nr;
		char err[256];
		double t0 = now();
		if (cluster_schedule(n, k, &p, &np, &nr))
			return -1;
		double t1 = now();
		free(p);
		gv_cluster_free(c);
		c = synth_cluster(n, k, &synth_default);   /* builds its own schedule: not timed */
		if (!c)
			return -1;
		double t2 = now();
		if (cluster_analyse(c, NULL, err, sizeof err)) {
			fprintf(stderr, "cluster_sim: %s\n", err);
			return -1;
		}
		double t3 = now();
		best_sched = fmin(best_sched, t1 - t0);
		best_an = fmin(best_an, t3 - t2);
	}
	int bad = 0, links = 0, strag = 0;
	for (size_t i = 0; i < c->nfindings; i++) {
		bad += c->findings[i].kind == GV_FIND_BAD_NODE;
		links += c->findings[i].kind == GV_FIND_BAD_LINK;
		strag += c->findings[i].kind == GV_FIND_STRAGGLER;
	}
	printf("%-7s %5d nodes %7zu pairs %5d rounds  schedule %8.3f ms  analysis %8.3f ms  named: %d bad nodes, %d bad "
	       "links, %d stragglers  vet estimate: %.0f s + %d x %.1f s = %.0f s\n",
	       cluster_pairs_name(k), n, c->npairs, c->nrounds, best_sched * 1e3, best_an * 1e3, bad, links, strag, QUICK_S,
	       c->nrounds, PAIR_S, QUICK_S + c->nrounds * PAIR_S);
	gv_cluster_free(c);
	return 0;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 1024, repeats = argc > 2 ? atoi(argv[2]) : 3;
	if (n < 2 || n > GV_CLUSTER_MAX_NODES || repeats < 1) {
		fprintf(stderr, "usage: cluster_sim [N 2..%d] [REPEATS]\n", GV_CLUSTER_MAX_NODES);
		return 2;
	}
	printf("plants: bad nodes 17 500 901 (every pair at 0.2), bad links 3-700 250-251 640-1001 (0.2), straggler 333 "
	       "(GEMM 0.75); best of %d\n", repeats);
	for (int k = 0; k < 3; k++)
		if (one(n, (enum cluster_pairs)k, repeats))
			return 1;
	return 0;
}
