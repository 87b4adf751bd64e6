/*
 * test_cluster_nodes.c - #56 items 4 and 8 on the nodes themselves: stragglers only on evidence
 * beyond noise (the margin from the nodes' own spread, a suspect measured again before it is
 * named: cluster_suspects() says whom), and clocks far apart either way.  Each case failed on
 * c4fdb45's analysis.
 */
#include "tests/unit/cluster_cases.h"

/* n nodes whose GEMM is base x spread[i] (and again[i] when measured again, NAN not). */
static struct gv_cluster *gemms(int n, const double *v, const double *again)
{
	struct gv_cluster *c = healthy(n, 10);
	for (int i = 0; i < n; i++)
		give_again(&c->nodes[i], "gemm.bf16.tflops", v[i], 1, again ? again[i] : NAN);
	return c;
}

static void test_straggler_needs_measuring_again(void)
{
	static const double v[] = { 700, 705, 560, 698, 702 };
	int ranks[8];
	/* 20 % under, never measured again: a suspect, not a straggler */
	struct gv_cluster *c = gemms(5, v, NULL);
	CHECK(cluster_suspects(c, NULL, ranks, 8) == 1 && ranks[0] == 2);
	analyse(c);
	CHECK(c->verdict == 0 && count(c, GV_FIND_STRAGGLER, -2, -2) == 0);
	gv_cluster_free(c);
	/* measured again at the others' rate: it was noise */
	static const double fine[] = { NAN, NAN, 701, NAN, NAN };
	c = gemms(5, v, fine);
	analyse(c);
	CHECK(c->verdict == 0 && count(c, GV_FIND_STRAGGLER, -2, -2) == 0);
	gv_cluster_free(c);
	/* measured again and still 20 % under: a straggler, drained, both figures said */
	static const double still[] = { NAN, NAN, 565, NAN, NAN };
	c = gemms(5, v, still);
	analyse(c);
	CHECK(c->verdict == 1 && count(c, GV_FIND_STRAGGLER, 2, -1) == 1);
	CHECK_STR(drains(c), "2");
	CHECK(strstr(evidence(c, GV_FIND_STRAGGLER), "gemm.bf16.tflops 560 is 20% under the median 700") != NULL);
	CHECK(strstr(evidence(c, GV_FIND_STRAGGLER), "565 measured again") != NULL);
	CHECK(strncmp(evidence(c, GV_FIND_STRAGGLER), "straggler", 9) != 0);   /* `cluster show` says the kind */
	gv_cluster_free(c);
}

/* Every node measured again beside the suspect: its second figure is judged against theirs, not the first median. */
static void test_measured_again_side_by_side(void)
{
	static const double v[] = { 700, 705, 560, 698, 702 };
	/* all five slower the second time (a shared machine under load): the suspect with them is not named,
	 * though its 490 is 30 % under the first median */
	static const double slower[] = { 500, 505, 490, 498, 502 };
	struct gv_cluster *c = gemms(5, v, slower);
	analyse(c);
	CHECK(c->verdict == 0 && count(c, GV_FIND_STRAGGLER, -2, -2) == 0);
	gv_cluster_free(c);
	/* all faster the second time (clocks up after the first burn): 640 is 9 % under the first median,
	 * 16 % under the nodes measured beside it, a straggler */
	static const double faster[] = { 760, 765, 640, 758, 762 };
	c = gemms(5, v, faster);
	analyse(c);
	CHECK(c->verdict == 1 && count(c, GV_FIND_STRAGGLER, 2, -1) == 1);
	CHECK(strstr(evidence(c, GV_FIND_STRAGGLER), "gemm.bf16.tflops 560 is 20% under the median 700 of 5 nodes, "
						     "and 640 measured again 16% under the median 760 of the 5 "
						     "measured again beside it") != NULL);
	gv_cluster_free(c);
	/* two measured again besides the suspect: a median of three, still the second pass's */
	static const double three[] = { NAN, 505, 490, 498, NAN };
	c = gemms(5, v, three);
	analyse(c);
	CHECK(c->verdict == 0 && count(c, GV_FIND_STRAGGLER, -2, -2) == 0);
	/* one besides it: too few, the first median judges (490 is 30 % under 700) */
	c->nodes[1].metrics[0].remeasured = NAN;
	analyse(c);
	CHECK(count(c, GV_FIND_STRAGGLER, 2, -1) == 1);
	CHECK(strstr(evidence(c, GV_FIND_STRAGGLER), "and 490 measured again (30%)") != NULL);
	gv_cluster_free(c);
}

static void test_margin_from_the_spread(void)
{
	/* four nodes sharing two cores: their figures spread 30 %; 33 % under the median is within 3 deviations */
	static const double noisy[] = { 0.95, 0.70, 0.636, 1.1, 0.9, 1.2, 0.8 };
	static const double again[] = { NAN, NAN, 0.62, NAN, NAN, NAN, NAN };
	struct gv_cluster *c = healthy(7, 10);
	for (int i = 0; i < 7; i++)
		give_again(&c->nodes[i], "host.staging.shm.gbps", noisy[i], 1, again[i]);
	int ranks[8];
	CHECK(cluster_suspects(c, NULL, ranks, 8) == 0);
	analyse(c);
	CHECK(c->verdict == 0 && count(c, GV_FIND_STRAGGLER, -2, -2) == 0);
	/* the same 33 % under among quiet nodes (2 % apart) is beyond it, and so again */
	static const double quiet[] = { 0.95, 0.94, 0.636, 0.96, 0.95, 0.93, 0.955 };
	for (int i = 0; i < 7; i++)
		c->nodes[i].metrics[0].value = quiet[i];
	CHECK(cluster_suspects(c, NULL, ranks, 8) == 1 && ranks[0] == 2);
	analyse(c);
	CHECK(count(c, GV_FIND_STRAGGLER, 2, -1) == 1);
	/* a rank that shares its host is left out of the comparison */
	snprintf(c->nodes[2].host, sizeof c->nodes[2].host, "node3");
	snprintf(c->nodes[2].addr, sizeof c->nodes[2].addr, "%s", c->nodes[3].addr);
	CHECK(cluster_suspects(c, NULL, ranks, 8) == 0);
	gv_cluster_free(c);
}

static void test_clock_skew(void)
{
	/* 400 days ahead, and 10 years behind: both named, drained; a second off is not */
	struct gv_cluster *c = healthy(5, 10);
	c->nodes[0].clock_skew_s = 0;
	c->nodes[1].clock_skew_s = 400 * 86400.0;
	c->nodes[2].clock_skew_s = 0.4;
	c->nodes[3].clock_skew_s = -10 * 365.25 * 86400;
	c->nodes[4].clock_skew_s = -1.2;
	analyse(c);
	CHECK(c->verdict == 1);
	CHECK_STR(drains(c), "1,3");
	CHECK(count(c, GV_FIND_CLOCK_SKEW, 1, -1) == 1 && count(c, GV_FIND_CLOCK_SKEW, 3, -1) == 1);
	CHECK(strstr(evidence(c, GV_FIND_CLOCK_SKEW), "400 days ahead") != NULL);
	int found = 0;
	for (size_t i = 0; i < c->nfindings; i++)
		found += c->findings[i].kind == GV_FIND_CLOCK_SKEW && strstr(c->findings[i].evidence, "10.0 years behind");
	CHECK(found == 1);
	/* rank 0's own clock off: the others agree with each other, so rank 0 is named */
	for (int i = 1; i < 5; i++)
		c->nodes[i].clock_skew_s = -4000 + 0.1 * i;
	analyse(c);
	CHECK_STR(drains(c), "0");
	CHECK(strstr(evidence(c, GV_FIND_CLOCK_SKEW), "1.1 h ahead") != NULL);
	/* unknown skews (an older runtime) judge nothing */
	for (int i = 0; i < 5; i++)
		c->nodes[i].clock_skew_s = NAN;
	analyse(c);
	CHECK(c->verdict == 0);
	gv_cluster_free(c);
}

TEST_MAIN(T(test_straggler_needs_measuring_again), T(test_measured_again_side_by_side), T(test_margin_from_the_spread), T(test_clock_skew))
