/*
 * test_cluster.c - judge/cluster.h: the pair schedules (disjoint rounds,
 * coverage, round counts for n = 1..5, 1024 and every n up to 200), the
 * stated network rate table, a node's straggler figures from a real
 * capture (tests/fixtures/gpu).  The analysis and the policy's section:
 * test_cluster_analyse.c; the 1,024-node simulation: test_cluster_sim.c.
 */
#include "judge/cluster.h"
#include "tests/unit/t.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Checks the schedule's invariants; returns the pairs (caller frees). */
static struct gv_cluster_pair *check_schedule(int n, enum cluster_pairs k, size_t *np, int *nr)
{
	struct gv_cluster_pair *p = NULL;
	CHECK(cluster_schedule(n, k, &p, np, nr) == 0);
	int *seen_round = calloc((size_t)n, sizeof *seen_round);
	unsigned char *met = calloc((size_t)n * (size_t)n, 1);
	int prev_round = 0, dup = 0, disjoint = 1, ordered = 1, fresh = 1;
	for (int i = 0; i < n; i++)
		seen_round[i] = -1;
	for (size_t i = 0; i < *np; i++) {
		CHECK(p[i].a >= 0 && p[i].a < p[i].b && p[i].b < n);
		ordered &= p[i].round >= prev_round && p[i].round < *nr;
		prev_round = p[i].round;
		disjoint &= seen_round[p[i].a] != p[i].round && seen_round[p[i].b] != p[i].round;
		seen_round[p[i].a] = seen_round[p[i].b] = p[i].round;
		dup += met[(size_t)p[i].a * (size_t)n + (size_t)p[i].b]++;
		fresh &= p[i].state == GV_PAIR_SKIPPED && isnan(p[i].gbps_ab) && isnan(p[i].nccl_gbps_ba);
	}
	CHECK(disjoint);
	CHECK(ordered);
	CHECK(fresh);
	CHECK(dup == 0);
	free(seen_round);
	free(met);
	return p;
}

static void test_schedule_all(void)
{
	static const int ns[] = { 1, 2, 3, 4, 5, 6, 7, 16, 17, 1024 };
	for (size_t t = 0; t < sizeof ns / sizeof ns[0]; t++) {
		int n = ns[t], nr;
		size_t np;
		struct gv_cluster_pair *p = check_schedule(n, CLUSTER_PAIRS_ALL, &np, &nr);
		CHECK(np == (size_t)n * (size_t)(n - 1) / 2);   /* every pair, once (no duplicates checked above) */
		CHECK(nr == (n == 1 ? 0 : n % 2 ? n : n - 1));
		free(p);
	}
	int nr;
	size_t np;
	struct gv_cluster_pair *p = check_schedule(1024, CLUSTER_PAIRS_ALL, &np, &nr);
	CHECK(np == 523776 && nr == 1023);
	free(p);
}

static void test_schedule_ring(void)
{
	for (int n = 1; n <= 40; n++) {
		int nr;
		size_t np;
		struct gv_cluster_pair *p = check_schedule(n, CLUSTER_PAIRS_RING, &np, &nr);
		CHECK(np == (size_t)(n == 1 ? 0 : n == 2 ? 1 : n));
		CHECK(nr == (n == 1 ? 0 : n == 2 ? 1 : n % 2 ? 3 : 2));
		for (size_t i = 0; i < np; i++)   /* i with its next */
			CHECK(p[i].b == p[i].a + 1 || (p[i].a == 0 && p[i].b == n - 1));
		free(p);
	}
}

static void test_schedule_bisect(void)
{
	for (int n = 1; n <= 200; n++) {
		int nr, dims = 0;
		size_t np;
		struct gv_cluster_pair *p = check_schedule(n, CLUSTER_PAIRS_BISECT, &np, &nr);
		int *deg = calloc((size_t)n, sizeof *deg);
		for (size_t i = 0; i < np; i++)
			deg[p[i].a]++, deg[p[i].b]++;
		for (int i = 0; n >= 3 && i < n; i++)
			CHECK(deg[i] >= 2);   /* a bad node shows on 2 pairs: told from a bad link */
		while ((1 << dims) < n)
			dims++;
		if ((n & (n - 1)) == 0 && n >= 4) {
			CHECK(nr == dims);   /* a power of two: the plain hypercube */
			CHECK(np == (size_t)n / 2 * (size_t)dims);
		}
		CHECK(nr <= dims + 2);
		free(deg);
		free(p);
	}
	int nr;
	size_t np;
	struct gv_cluster_pair *p = check_schedule(1024, CLUSTER_PAIRS_BISECT, &np, &nr);
	CHECK(nr == 10 && np == 5120);
	free(p);
	p = check_schedule(1000, CLUSTER_PAIRS_BISECT, &np, &nr);
	CHECK(nr <= 12);
	free(p);
}

static void test_schedule_errors(void)
{
	struct gv_cluster_pair *p = (struct gv_cluster_pair *)1;
	size_t np = 7;
	int nr = 7;
	enum cluster_pairs k;
	CHECK(cluster_schedule(0, CLUSTER_PAIRS_ALL, &p, &np, &nr) == -1);
	CHECK(p == NULL && np == 0 && nr == 0);
	CHECK(cluster_schedule(GV_CLUSTER_MAX_NODES + 1, CLUSTER_PAIRS_RING, &p, &np, &nr) == -1);
	CHECK(cluster_schedule(4, (enum cluster_pairs)9, &p, &np, &nr) == -1);
	CHECK(cluster_pairs_parse("bisect", &k) == 0 && k == CLUSTER_PAIRS_BISECT);
	CHECK(cluster_pairs_parse("ring", &k) == 0 && k == CLUSTER_PAIRS_RING);
	CHECK(cluster_pairs_parse("all", &k) == 0 && k == CLUSTER_PAIRS_ALL);
	CHECK(cluster_pairs_parse("All", &k) == -1);
	CHECK(cluster_pairs_parse(NULL, &k) == -1);
	CHECK_STR(cluster_pairs_name(CLUSTER_PAIRS_RING), "ring");
}

static void test_stated_rate(void)
{
	double g = 0;
	const char *src = NULL;
	CHECK(cluster_stated_rate("aws", "p5.48xlarge", &g, &src) == 0);
	CHECK_NEAR(g, 400, 1e-9);                    /* 3,200 Gbps / 8 */
	CHECK(src && strstr(src, "docs.aws.amazon.com") && strstr(src, "3,200 Gbps"));
	CHECK(cluster_stated_cards("aws", "p5.48xlarge") == 32);
	CHECK(cluster_stated_rate("", "p4d.24xlarge", &g, &src) == 0 && fabs(g - 50) < 1e-9);
	CHECK(cluster_stated_rate("aws", "p3dn.24xlarge", &g, &src) == 0 && fabs(g - 12.5) < 1e-9);
	CHECK(cluster_stated_rate("aws", "p5en.48xlarge", &g, NULL) == 0 && cluster_stated_cards("aws", "p5en.48xlarge") == 16);
	CHECK(cluster_stated_rate("lambda", "p5.48xlarge", &g, &src) == -1);   /* another provider's type */
	CHECK(cluster_stated_rate("aws", "m5.large", &g, &src) == -1);
	CHECK(cluster_stated_rate("aws", "", &g, &src) == -1);
	CHECK(cluster_stated_cards("aws", "m5.large") == 1);
	/* every row of the shipped table is taken: none dropped by a parse slip */
	FILE *f = fopen("judge/published/network.csv", "r");
	char line[2048], type[64];
	int rows = 0, found = 0;
	CHECK(f != NULL);
	while (f && fgets(line, sizeof line, f))
		if (rows++ && sscanf(line, "%*[^,],%63[^,]", type) == 1)
			found += cluster_stated_rate(NULL, type, &g, NULL) == 0;
	if (f)
		fclose(f);
	CHECK(rows > 5 && found == rows - 1);
}

static json_t *capture(void)
{
	json_error_t e;
	json_t *fp = json_load_file("tests/fixtures/gpu/h100-2026-11-22/quick-profile.json", 0, &e);
	CHECK(fp != NULL);
	return fp;
}

static const struct gv_cluster_metric *metric(const struct gv_cluster_node *n, const char *name)
{
	for (size_t i = 0; i < n->nmetrics; i++)
		if (!strcmp(n->metrics[i].name, name))
			return &n->metrics[i];
	return NULL;
}

static void test_node_metrics(void)
{
	json_t *fp = capture();
	struct gv_cluster_node n;
	memset(&n, 0, sizeof n);
	CHECK(cluster_node_metrics(fp, &n) == 0);
	const struct gv_cluster_metric *g = metric(&n, "gemm.bf16.tflops");
	CHECK(g && g->higher_better == 1);
	/* the worst GPU's row, not the instance total */
	double worst = INFINITY;
	size_t i;
	json_t *m;
	json_array_foreach(json_object_get(fp, "metrics"), i, m)
		if (!strcmp(json_string_value(json_object_get(m, "name")), "gemm.bf16.tflops") &&
		    json_integer_value(json_object_get(m, "gpu")) >= 0 && json_number_value(json_object_get(m, "value")) < worst)
			worst = json_number_value(json_object_get(m, "value"));
	CHECK(g && g->value == worst);
	/* only figures whose noise is small or that were measured more than once (#56): GEMM and the pinned
	 * copies by their rows; the local all-reduce is one timing of 10 operations, ingest one pass */
	CHECK(metric(&n, "memcpy.h2d.pinned.gbps") != NULL && metric(&n, "memcpy.d2d.gbps") != NULL);
	CHECK(metric(&n, "memcpy.bidir.pinned.gbps") == NULL && metric(&n, "memcpy.h2d.pageable.gbps") == NULL);
	CHECK(metric(&n, "allreduce.busbw.gbps") == NULL && metric(&n, "ingest.gbps") == NULL);
	CHECK(metric(&n, "gemm.bf16.pct_of_peak") == NULL);   /* a percent: not a straggler figure */
	CHECK(metric(&n, "soak.xid.count") == NULL);          /* a count */
	CHECK(metric(&n, "host.cpu_steal.pct") == NULL);
	/* a latency in us measured once is left out; measured 3 times it is kept, less is better */
	json_t *rows = json_object_get(fp, "metrics");
	json_array_append_new(rows, json_pack("{s:s,s:s,s:i,s:f,s:s}", "bench", "nvme", "name", "nvme.randread.p99_us", "gpu",
					      -1, "value", 90.0, "unit", "us"));
	CHECK(cluster_node_metrics(fp, &n) == 0 && metric(&n, "nvme.randread.p99_us") == NULL);
	json_object_set_new(json_array_get(rows, json_array_size(rows) - 1), "params", json_pack("{s:i}", "passes", 3));
	CHECK(cluster_node_metrics(fp, &n) == 0);
	CHECK(metric(&n, "nvme.randread.p99_us") && metric(&n, "nvme.randread.p99_us")->higher_better == 0);
	/* the host bench as it reports: memory bandwidth best of passes - 1, staging best of 3, decode timed once */
	json_array_append_new(rows, json_pack("{s:s,s:s,s:i,s:f,s:s,s:{s:i,s:i}}", "bench", "host", "name",
					      "host.membw.copy.gbps", "gpu", -1, "value", 20.0, "unit", "GB/s", "params",
					      "passes", 10, "best_of", 9));
	json_array_append_new(rows, json_pack("{s:s,s:s,s:i,s:f,s:s,s:{s:i}}", "bench", "host", "name",
					      "host.staging.shm.gbps", "gpu", -1, "value", 2.0, "unit", "GB/s", "params",
					      "passes", 3));
	json_array_append_new(rows, json_pack("{s:s,s:s,s:i,s:f,s:s,s:{s:f}}", "bench", "host", "name",
					      "host.decode.images_per_s", "gpu", -1, "value", 900.0, "unit", "images/s",
					      "params", "seconds", 1.5));
	CHECK(cluster_node_metrics(fp, &n) == 0);
	CHECK(metric(&n, "host.membw.copy.gbps") && metric(&n, "host.staging.shm.gbps"));
	CHECK(metric(&n, "host.decode.images_per_s") == NULL);
	CHECK(isnan(metric(&n, "host.staging.shm.gbps")->remeasured));
	/* arrays smaller than the last-level cache: the figure read the cache, whatever shared it then (#56) */
	json_t *cp = json_object_get(json_array_get(rows, json_array_size(rows) - 3), "params");
	json_object_set_new(cp, "array_bytes", json_integer(43 << 20));
	json_object_set_new(cp, "llc_bytes", json_integer(300 << 20));
	CHECK(cluster_node_metrics(fp, &n) == 0 && metric(&n, "host.membw.copy.gbps") == NULL);
	json_object_set_new(cp, "array_bytes", json_integer(1200 << 20));
	CHECK(cluster_node_metrics(fp, &n) == 0 && metric(&n, "host.membw.copy.gbps") != NULL);
	json_t *empty = json_object();
	CHECK(cluster_node_metrics(empty, &n) == 0 && n.nmetrics == 0);
	json_decref(empty);
	free(n.metrics);
	json_decref(fp);
}

TEST_MAIN(T(test_schedule_all), T(test_schedule_ring), T(test_schedule_bisect), T(test_schedule_errors),
	  T(test_stated_rate), T(test_node_metrics))
