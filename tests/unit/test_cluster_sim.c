/*
 * test_cluster_sim.c - the 1,024-node simulation (#49): a synthetic cluster
 * run (tests/unit/cluster_synth.h: 1,024 nodes, lognormal noise of a few
 * percent around a healthy rate, 3 bad nodes at a fifth, 3 bad links alone at
 * a fifth, 1 straggler at 0.75 of the GEMM median), analysed with the
 * built-in policy on each schedule:
 *
 *   all     523,776 pairs in 1,023 rounds: every plant found, nothing else.
 *   ring    1,024 pairs in 2 rounds: the bad nodes (both of a node's pairs
 *           slow), the straggler, and the one planted link that is a ring
 *           edge (250-251); the other two links are never measured.
 *   bisect  5,120 pairs in 10 rounds: the bad nodes (10 slow pairs each),
 *           the straggler, and the link whose ranks differ in one bit
 *           (250-251); the others are never measured.
 *
 * On every schedule no healthy node is named and the drain list is exactly
 * the bad nodes and the straggler.  The time is tests/bench/cluster_sim.c's.
 */
#include "tests/unit/cluster_synth.h"
#include "tests/unit/t.h"

#include <string.h>

static int named(const struct gv_cluster *c, int kind, int rank, int peer)
{
	for (size_t i = 0; i < c->nfindings; i++)
		if (c->findings[i].kind == kind && c->findings[i].rank == rank && c->findings[i].peer == peer)
			return 1;
	return 0;
}

/* Every finding is a plant; returns how many findings name a healthy node (must be 0). */
static int healthy_named(const struct gv_cluster *c, const struct synth_plants *pl)
{
	int wrong = 0;
	for (size_t i = 0; i < c->nfindings; i++) {
		const struct gv_cluster_finding *f = &c->findings[i];
		int ok = (f->kind == GV_FIND_BAD_NODE && synth_is_bad(pl, f->rank)) ||
			 (f->kind == GV_FIND_BAD_LINK && synth_is_link(pl, f->rank, f->peer)) ||
			 (f->kind == GV_FIND_STRAGGLER && f->rank == pl->straggler);
		if (!ok) {
			fprintf(stderr, "named but healthy: %s rank %d peer %d: %s\n", gv_finding_name(f->kind), f->rank,
				f->peer, f->evidence);
			wrong++;
		}
	}
	return wrong;
}

static int drained(const struct gv_cluster *c)
{
	int n = 0;
	for (size_t i = 0; i < c->nfindings; i++)
		n += c->findings[i].drain;
	return n;
}

static struct gv_cluster *run(enum cluster_pairs k)
{
	char err[256] = "";
	struct gv_cluster *c = synth_cluster(1024, k, &synth_default);
	CHECK(c != NULL);
	if (!c)
		return NULL;
	CHECK(cluster_analyse(c, NULL, err, sizeof err) == 0);
	CHECK(c->verdict == 1);
	CHECK(healthy_named(c, &synth_default) == 0);
	for (int i = 0; i < synth_default.nbad; i++)
		CHECK(named(c, GV_FIND_BAD_NODE, synth_default.bad_nodes[i], -1));
	CHECK(named(c, GV_FIND_STRAGGLER, synth_default.straggler, -1));
	CHECK(drained(c) == synth_default.nbad + 1);
	CHECK(c->pair_median_gbps > 0.9 * SYNTH_RATE && c->pair_median_gbps < 1.05 * SYNTH_RATE);
	CHECK(fabs(c->stated_gbps - 400) < 1e-9);
	return c;
}

static void test_sim_all(void)
{
	struct gv_cluster *c = run(CLUSTER_PAIRS_ALL);
	if (!c)
		return;
	CHECK(c->npairs == 523776 && c->nrounds == 1023);
	for (int i = 0; i < synth_default.nlinks; i++)
		CHECK(named(c, GV_FIND_BAD_LINK, synth_default.links[i][0], synth_default.links[i][1]));
	CHECK(c->nfindings == (size_t)(synth_default.nbad + synth_default.nlinks + 1));
	gv_cluster_free(c);
}

static void test_sim_ring(void)
{
	struct gv_cluster *c = run(CLUSTER_PAIRS_RING);
	if (!c)
		return;
	CHECK(c->npairs == 1024 && c->nrounds == 2);
	CHECK(named(c, GV_FIND_BAD_LINK, 250, 251));
	CHECK(c->nfindings == (size_t)(synth_default.nbad + 1 + 1));
	gv_cluster_free(c);
}

static void test_sim_bisect(void)
{
	struct gv_cluster *c = run(CLUSTER_PAIRS_BISECT);
	if (!c)
		return;
	CHECK(c->npairs == 5120 && c->nrounds == 10);
	CHECK(named(c, GV_FIND_BAD_LINK, 250, 251));
	CHECK(c->nfindings == (size_t)(synth_default.nbad + 1 + 1));
	gv_cluster_free(c);
}

/* Without plants nothing is named on any schedule: the noise alone never rejects. */
static void test_sim_clean(void)
{
	static const struct synth_plants none = { .nbad = 0, .nlinks = 0, .straggler = -1 };
	for (int k = 0; k < 3; k++) {
		char err[256];
		struct gv_cluster *c = synth_cluster(1024, (enum cluster_pairs)k, &none);
		CHECK(c && cluster_analyse(c, NULL, err, sizeof err) == 0);
		CHECK(c && c->verdict == 0 && c->nfindings == 0);
		gv_cluster_free(c);
	}
}

TEST_MAIN(T(test_sim_all), T(test_sim_ring), T(test_sim_bisect), T(test_sim_clean))
