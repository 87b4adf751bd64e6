/*
 * test_cluster_analyse.c - cluster_analyse() on small clusters with known
 * answers (a bad node, a bad link, two nodes, missing / lost / rejected /
 * unmeasured nodes, failed pairs and an unreachable node, a straggler, the
 * whole fabric under its stated rate, the all-reduce rule) and the policy's
 * `cluster:` section: the built-in default's values and every refusal with
 * its line number.
 */
#include "tests/unit/cluster_cases.h"

#include <jansson.h>

static void test_analyse_healthy(void)
{
	struct gv_cluster *c = healthy(6, 1.0);
	analyse(c);
	CHECK(c->verdict == 0);
	CHECK(c->nfindings == 0);
	CHECK(c->pair_median_gbps > 0.95 && c->pair_median_gbps < 1.05);
	CHECK(isnan(c->stated_gbps));
	CHECK(strstr(c->policy, "default") != NULL);
	CHECK(strstr(c->ar_why, "no GPUs") != NULL);   /* noted, not unmeasurable */
	gv_cluster_free(c);
}

static void test_analyse_bad_node(void)
{
	/* four nodes, one at a fifth: the issue's own case */
	struct gv_cluster *c = healthy(4, 0.138);
	slow(c, 2, -1, 0.2);
	analyse(c);
	CHECK(c->verdict == 1);
	CHECK(count(c, GV_FIND_BAD_NODE, 2, -1) == 1);
	CHECK(count(c, GV_FIND_BAD_NODE, -2, -2) == 1);
	CHECK(count(c, GV_FIND_BAD_LINK, -2, -2) == 0);
	CHECK(c->findings[0].drain == 1);
	CHECK(strstr(evidence(c, GV_FIND_BAD_NODE), "3 of its 3 measured pairs") != NULL);
	CHECK(strstr(evidence(c, GV_FIND_BAD_NODE), "of the healthy pairs'") != NULL);
	gv_cluster_free(c);
	/* a ring whose two neighbours of node 2 are bad: node 2 is not named */
	c = gv_cluster_new(8);
	for (int i = 0; i < 8; i++)
		c->nodes[i].state = GV_NODE_OK, c->nodes[i].verdict = 0;
	CHECK(cluster_schedule(8, CLUSTER_PAIRS_RING, &c->pairs, &c->npairs, &c->nrounds) == 0);
	for (size_t k = 0; k < c->npairs; k++) {
		c->pairs[k].state = GV_PAIR_MEASURED;
		c->pairs[k].gbps_ab = c->pairs[k].gbps_ba = 10;
	}
	slow(c, 1, -1, 0.2);
	slow(c, 3, -1, 0.2);
	analyse(c);
	CHECK(count(c, GV_FIND_BAD_NODE, 1, -1) == 1 && count(c, GV_FIND_BAD_NODE, 3, -1) == 1);
	CHECK(count(c, GV_FIND_BAD_NODE, -2, -2) == 2);
	CHECK(count(c, GV_FIND_BAD_LINK, -2, -2) == 0);
	gv_cluster_free(c);
}

static void test_analyse_three(void)
{
	/* three nodes: a bad node shows on both its pairs, a bad link on one */
	struct gv_cluster *c = healthy(3, 1.0);
	slow(c, 0, -1, 0.2);
	analyse(c);
	CHECK(c->verdict == 1 && c->nfindings == 1 && count(c, GV_FIND_BAD_NODE, 0, -1) == 1);
	gv_cluster_free(c);
	c = healthy(3, 1.0);
	slow(c, 0, 1, 0.2);
	analyse(c);
	CHECK(c->verdict == 1 && c->nfindings == 1 && count(c, GV_FIND_BAD_LINK, 0, 1) == 1);
	gv_cluster_free(c);
	/* a pair naming a rank outside the cluster is refused, not indexed */
	c = healthy(3, 1.0);
	c->pairs[1].b = 7;
	char err[128] = "";
	CHECK(cluster_analyse(c, NULL, err, sizeof err) == -1);
	CHECK(strstr(err, "ranks") != NULL);
	gv_cluster_free(c);
}

static void test_analyse_nccl(void)
{
	/* host pairs healthy, node 4's GPU pairs at a fifth: named from the NCCL figures */
	struct gv_cluster *c = healthy(6, 1.0);
	for (size_t k = 0; k < c->npairs; k++) {
		struct gv_cluster_pair *p = &c->pairs[k];
		double f = p->a == 4 || p->b == 4 ? 0.2 : 1;
		p->nccl_gbps_ab = 40 * f;
		p->nccl_gbps_ba = 41 * f;
	}
	analyse(c);
	CHECK(c->verdict == 1 && c->nfindings == 1 && count(c, GV_FIND_BAD_NODE, 4, -1) == 1);
	CHECK(strstr(evidence(c, GV_FIND_BAD_NODE), "GPU to GPU (NCCL)") != NULL);
	/* both transports slow on node 4: named once */
	slow(c, 4, -1, 0.2);
	analyse(c);
	CHECK(c->nfindings == 1 && strstr(evidence(c, GV_FIND_BAD_NODE), "host to host") != NULL);
	gv_cluster_free(c);
}

static void test_analyse_json_again(void)
{
	/* a stored run read back (common/cluster_json.c) is judged the same: the analysis starts afresh */
	struct gv_cluster *c = healthy(5, 2.0);
	slow(c, 1, 3, 0.3);
	slow(c, 0, -1, 0.2);
	analyse(c);
	json_t *doc = gv_cluster_to_json(c);
	char err[256] = "";
	struct gv_cluster *back = gv_cluster_from_json(doc, err, sizeof err);
	CHECK(back != NULL);
	if (back) {
		analyse(back);
		CHECK(back->verdict == c->verdict && back->nfindings == c->nfindings);
		for (size_t i = 0; i < c->nfindings && i < back->nfindings; i++)
			CHECK_STR(back->findings[i].evidence, c->findings[i].evidence);
		json_t *drain = json_object_get(doc, "drain");
		CHECK(json_array_size(drain) == 1 && json_integer_value(json_object_get(json_array_get(drain, 0), "rank")) == 0);
		/* the bad links as a list of their own, as docs/cluster.md says (#56) */
		json_t *links = json_object_get(doc, "links"), *l0 = json_array_get(links, 0);
		CHECK(json_array_size(links) == 1 && json_integer_value(json_object_get(l0, "a")) == 1 &&
		      json_integer_value(json_object_get(l0, "b")) == 3);
		CHECK_STR(json_string_value(json_object_get(l0, "host_b")), "node3");
	}
	gv_cluster_free(back);
	json_decref(doc);
	gv_cluster_free(c);
}

static void test_analyse_bad_link(void)
{
	struct gv_cluster *c = healthy(5, 2.0);
	slow(c, 1, 3, 0.3);
	analyse(c);
	CHECK(c->verdict == 1);
	CHECK(count(c, GV_FIND_BAD_LINK, 1, 3) == 1);
	CHECK(count(c, GV_FIND_BAD_NODE, -2, -2) == 0);
	CHECK(c->nfindings == 1 && c->findings[0].drain == 0);
	CHECK(strstr(evidence(c, GV_FIND_BAD_LINK), "node1") && strstr(evidence(c, GV_FIND_BAD_LINK), "node3"));
	gv_cluster_free(c);
	/* a pair 30 % under the median is noise at the 0.6 rule: accepted */
	c = healthy(5, 2.0);
	slow(c, 1, 3, 0.7);
	analyse(c);
	CHECK(c->verdict == 0 && c->nfindings == 0);
	gv_cluster_free(c);
	/* only one direction slow: the slower direction is the pair's figure */
	c = healthy(5, 2.0);
	for (size_t k = 0; k < c->npairs; k++)
		if (c->pairs[k].a == 0 && c->pairs[k].b == 4)
			c->pairs[k].gbps_ba = 0.2;
	analyse(c);
	CHECK(count(c, GV_FIND_BAD_LINK, 0, 4) == 1);
	gv_cluster_free(c);
}

static void test_analyse_two_nodes(void)
{
	/* a slow pair of 2 nodes against a stated rate: a link finding naming both, nobody drained */
	struct gv_cluster *c = healthy(2, 1.0);
	snprintf(c->transport, sizeof c->transport, "efa");
	for (int i = 0; i < 2; i++) {
		snprintf(c->nodes[i].provider, sizeof c->nodes[i].provider, "aws");
		snprintf(c->nodes[i].instance_type, sizeof c->nodes[i].instance_type, "p5.48xlarge");
	}
	analyse(c);
	CHECK_NEAR(c->stated_gbps, 400, 1e-9);
	CHECK(strstr(c->stated_source, "3,200 Gbps") != NULL);
	/* 1 GB/s is 0.08 of 12.5 GB/s a card: the fabric-wide finding, then no node or link is singled out */
	CHECK(c->verdict == 1);
	CHECK(count(c, GV_FIND_FABRIC_RULE, -1, -1) == 1);
	CHECK(strstr(evidence(c, GV_FIND_FABRIC_RULE), "per network card") != NULL);
	CHECK(strstr(evidence(c, GV_FIND_FABRIC_RULE), "cannot tell a node from the link") != NULL);
	CHECK(c->findings[0].drain == 0);
	CHECK(count(c, GV_FIND_BAD_NODE, -2, -2) == 0);
	gv_cluster_free(c);
	/* healthy at 10 GB/s a card's 12.5: accepted */
	c = healthy(2, 10.0);
	snprintf(c->transport, sizeof c->transport, "efa");
	for (int i = 0; i < 2; i++)
		snprintf(c->nodes[i].instance_type, sizeof c->nodes[i].instance_type, "p5.48xlarge");
	analyse(c);
	CHECK(c->verdict == 0);
	gv_cluster_free(c);
}

static void test_analyse_presence(void)
{
	struct gv_cluster *c = healthy(4, 1.0);
	c->nodes[3].state = GV_NODE_MISSING;
	for (size_t k = 0; k < c->npairs; k++)
		if (c->pairs[k].b == 3)
			c->pairs[k].state = GV_PAIR_SKIPPED;
	analyse(c);
	CHECK(c->verdict == 3);   /* nothing rejects, a node could not be measured */
	CHECK(count(c, GV_FIND_MISSING, 3, -1) == 1 && c->findings[0].drain == 1);
	c->nodes[1].verdict = 1;
	snprintf(c->nodes[1].why, sizeof c->nodes[1].why, "gemm.bf16.tflops on gpu 3 is 402, under the 600 needed");
	analyse(c);
	CHECK(c->verdict == 1);   /* reject wins over could not measure, as accept's */
	CHECK(count(c, GV_FIND_NODE_REJECTED, 1, -1) == 1);
	CHECK(strstr(evidence(c, GV_FIND_NODE_REJECTED), "gpu 3 is 402") != NULL);
	c->nodes[1].verdict = 3;
	c->nodes[3].state = GV_NODE_LOST;
	analyse(c);
	for (size_t k = 0; k < c->npairs; k++)   /* lost mid-run: its pairs failed, explained by the loss */
		if (c->pairs[k].b == 3)
			c->pairs[k].state = GV_PAIR_FAILED;
	analyse(c);
	CHECK(c->verdict == 3);
	CHECK(count(c, GV_FIND_NODE_UNMEASURED, 1, -1) == 1 && count(c, GV_FIND_LOST, 3, -1) == 1);
	CHECK(c->nfindings == 2);
	gv_cluster_free(c);
}

static void test_analyse_failed(void)
{
	/* every pair of node 1 failed while the others measured: unreachable, drained, rejected */
	struct gv_cluster *c = healthy(5, 1.0);
	for (size_t k = 0; k < c->npairs; k++)
		if (c->pairs[k].a == 1 || c->pairs[k].b == 1) {
			c->pairs[k].state = GV_PAIR_FAILED;
			snprintf(c->pairs[k].why, sizeof c->pairs[k].why, "timed out after 20000 ms");
		}
	analyse(c);
	CHECK(c->verdict == 1);
	CHECK(count(c, GV_FIND_BAD_NODE, 1, -1) == 1);
	CHECK(strstr(evidence(c, GV_FIND_BAD_NODE), "unreachable") != NULL);
	CHECK(count(c, GV_FIND_FABRIC_RULE, -2, -2) == 0);
	gv_cluster_free(c);
	/* one failed pair alone: could not be measured (3), the pair named */
	c = healthy(5, 1.0);
	c->pairs[2].state = GV_PAIR_FAILED;
	analyse(c);
	CHECK(c->verdict == 3);
	CHECK(count(c, GV_FIND_FABRIC_RULE, c->pairs[2].a, c->pairs[2].b) == 1);
	gv_cluster_free(c);
	/* nothing measured at all */
	c = healthy(3, 1.0);
	for (size_t k = 0; k < c->npairs; k++)
		c->pairs[k].state = GV_PAIR_SKIPPED;
	analyse(c);
	CHECK(c->verdict == 3 && strstr(evidence(c, GV_FIND_FABRIC_RULE), "no pair") != NULL);
	gv_cluster_free(c);
}

static void test_analyse_straggler(void)
{
	struct gv_cluster *c = healthy(5, 1.0);
	for (int i = 0; i < 5; i++) {
		give_again(&c->nodes[i], "gemm.bf16.tflops", i == 2 ? 560 : 700 + i, 1, i == 2 ? 565 : NAN);
		give_again(&c->nodes[i], "nvme.randread.p99_us", i == 4 ? 400 : 100, 0, i == 4 ? 390 : NAN);
		give(&c->nodes[i], "memcpy.h2d.pinned.gbps", i == 1 ? 52 : 55, 1);   /* 5 % under: noise */
	}
	analyse(c);
	CHECK(c->verdict == 1);
	CHECK(count(c, GV_FIND_STRAGGLER, 2, -1) == 1 && count(c, GV_FIND_STRAGGLER, 4, -1) == 1);
	CHECK(count(c, GV_FIND_STRAGGLER, -2, -2) == 2);
	CHECK(strstr(evidence(c, GV_FIND_STRAGGLER), "gemm.bf16.tflops 560") != NULL);
	gv_cluster_free(c);
	/* two nodes: a median of two names nobody */
	c = healthy(2, 1.0);
	give(&c->nodes[0], "gemm.bf16.tflops", 300, 1);
	give(&c->nodes[1], "gemm.bf16.tflops", 700, 1);
	analyse(c);
	CHECK(count(c, GV_FIND_STRAGGLER, -2, -2) == 0);
	gv_cluster_free(c);
}

static void test_analyse_allreduce(void)
{
	struct gv_cluster *c = healthy(3, 10.0);
	snprintf(c->transport, sizeof c->transport, "efa");
	for (int i = 0; i < 3; i++) {
		c->nodes[i].ngpus = 8;
		snprintf(c->nodes[i].instance_type, sizeof c->nodes[i].instance_type, "p4d.24xlarge");
	}
	analyse(c);
	CHECK(c->verdict == 3);   /* GPUs but no all-reduce: could not be measured */
	CHECK(strstr(evidence(c, GV_FIND_FABRIC_RULE), "allreduce") != NULL);
	c->ar = calloc(2, sizeof *c->ar);
	c->nar = 2;
	c->ar[0] = (struct gv_cluster_ar_point){ 1 << 20, 100, 10, 16 };
	c->ar[1] = (struct gv_cluster_ar_point){ 1 << 30, 40000, 27, 42 };   /* 42 of 50 GB/s: 0.84 */
	analyse(c);
	CHECK(c->verdict == 0);
	c->ar[1].busbw_gbps = 4;   /* sockets */
	analyse(c);
	CHECK(c->verdict == 1 && strstr(evidence(c, GV_FIND_FABRIC_RULE), "0.08 of the stated 50") != NULL);
	gv_cluster_free(c);
}

static int parse(const char *text, char *err, size_t errlen, struct policy **p)
{
	return policy_parse(text, strlen(text), "test", p, err, errlen);
}

static void test_policy_cluster(void)
{
	struct policy *p = NULL;
	char err[256];
	CHECK(policy_load(NULL, &p, err, sizeof err) == 0);
	CHECK(p->cluster.line > 0);
	CHECK_NEAR(p->cluster.pair_of_healthy, 0.6, 1e-12);
	CHECK_NEAR(p->cluster.pair_of_link, 0.5, 1e-12);
	CHECK_NEAR(p->cluster.lat_of_healthy, 3, 1e-12);
	CHECK_NEAR(p->cluster.node_spread, 3, 1e-12);
	CHECK_NEAR(p->cluster.skew_max_s, 300, 1e-12);
	CHECK(p->cluster.pair_of_median == 0 && p->cluster.pair_min_gbps == 0 && p->cluster.lat_max_us == 0);
	CHECK_NEAR(p->cluster.pair_of_stated, 0.5, 1e-12);
	CHECK_NEAR(p->cluster.bad_node_share, 0.75, 1e-12);
	CHECK_NEAR(p->cluster.nccl_of_healthy, 0.6, 1e-12);
	CHECK_NEAR(p->cluster.ar_of_stated, 0.6, 1e-12);
	CHECK_NEAR(p->cluster.node_below, 0.15, 1e-12);
	CHECK_NEAR(p->cluster.node_above, 0.5, 1e-12);
	policy_free(p);
	/* a policy's own section is used; a stricter median fraction names a pair at 0.7 */
	const char *text = "name: strict\nrules:\n  - metric: memcpy.h2d.pinned.gbps\n    min: 1\n"
			   "cluster:\n  - metric: cluster.pair.gbps\n    min_fraction_of_median: 0.8\n";
	CHECK(parse(text, err, sizeof err, &p) == 0);
	CHECK(p->cluster.line == 5 && p->cluster.bad_node_share == 1 && p->cluster.node_below == 0);
	struct gv_cluster *c = healthy(5, 2.0);
	slow(c, 1, 3, 0.7);
	CHECK(cluster_analyse(c, p, err, sizeof err) == 0);
	CHECK(c->verdict == 1 && count(c, GV_FIND_BAD_LINK, 1, 3) == 1);
	CHECK(strstr(c->policy, "strict sha256:") == c->policy);
	gv_cluster_free(c);
	policy_free(p);
	/* no section: the built-in's rules, said so */
	CHECK(parse("name: plain\nrules:\n  - metric: memcpy.h2d.pinned.gbps\n    min: 1\n", err, sizeof err, &p) == 0);
	CHECK(p->cluster.line == 0);
	c = healthy(5, 2.0);
	slow(c, 1, 3, 0.7);
	CHECK(cluster_analyse(c, p, err, sizeof err) == 0 && c->verdict == 0);
	CHECK(strstr(c->policy, "built-in default") != NULL);
	gv_cluster_free(c);
	policy_free(p);
}

/* Nodes their gate cannot measure (no GPU): counted by default (3), only reported when the policy says so. */
static void test_policy_nodes_reported(void)
{
	struct policy *p = NULL;
	char err[256];
	const char *text = "name: fabric-only\nrules:\n  - metric: host.membw.copy.gbps\n    min: 0.001\n"
			   "cluster:\n  - metric: cluster.node.verdict\n    unmeasured: reported\n"
			   "  - metric: cluster.pair.gbps\n    min_fraction_of_median: 0.6\n";
	CHECK(parse(text, err, sizeof err, &p) == 0);
	CHECK(p && p->cluster.node_unmeasured_reported == 1);
	struct gv_cluster *c = healthy(4, 1.0);
	for (int i = 0; i < 4; i++)
		c->nodes[i].verdict = 3;
	CHECK(cluster_analyse(c, NULL, err, sizeof err) == 0 && c->verdict == 3);
	CHECK(cluster_analyse(c, p, err, sizeof err) == 0 && c->verdict == 0);
	CHECK(count(c, GV_FIND_NODE_UNMEASURED, -2, -2) == 4);   /* still listed, not drained */
	slow(c, 2, -1, 0.2);   /* the fabric still decides */
	CHECK(cluster_analyse(c, p, err, sizeof err) == 0 && c->verdict == 1 && count(c, GV_FIND_BAD_NODE, 2, -1) == 1);
	c->nodes[1].verdict = 1;   /* and a node its gate rejects is rejected */
	CHECK(cluster_analyse(c, p, err, sizeof err) == 0 && count(c, GV_FIND_NODE_REJECTED, 1, -1) == 1);
	gv_cluster_free(c);
	policy_free(p);
	p = NULL;
	CHECK(parse("name: t\nrules:\n  - {metric: memcpy.h2d.pinned.gbps, min: 1}\ncluster:\n"
		    "  - metric: cluster.node.verdict\n    unmeasured: ignored\n", err, sizeof err, &p) == -1);
	CHECK(strstr(err, "line 6: 'unmeasured' is counts or reported") != NULL);
}

static void test_policy_cluster_errors(void)
{
	static const struct {
		const char *section, *want;
	} bad[] = {
		{ "cluster: 3\n", "line 4: 'cluster' must be a list" },
		{ "cluster:\n  - metric: cluster.pair.gbs\n    min_fraction_of_median: 0.5\n", "line 5: a cluster rule's metric" },
		{ "cluster:\n  - metric: cluster.pair.gbps\n    min_fraction_of_medain: 0.5\n",
		  "line 6: unknown key 'min_fraction_of_medain' for cluster.pair.gbps" },
		{ "cluster:\n  - metric: cluster.pair.gbps\n    min_fraction_of_median: 1.5\n", "line 6: 'min_fraction_of_median' must be in (0, 1]" },
		{ "cluster:\n  - metric: cluster.pair.gbps\n    min_fraction_of_median: '0.5'\n", "line 6: 'min_fraction_of_median' must be a plain" },
		{ "cluster:\n  - metric: cluster.pair.gbps\n    bad_node_share: 0.4\n", "line 6: 'bad_node_share' must be in (0.5, 1]" },
		{ "cluster:\n  - metric: cluster.allreduce.busbw.gbps\n    min_fraction_of_median: 0.5\n",
		  "line 6: unknown key 'min_fraction_of_median' for cluster.allreduce.busbw.gbps" },
		{ "cluster:\n  - metric: cluster.node.*\n", "line 5: cluster rule for cluster.node.* has no threshold" },
		{ "cluster:\n  - metric: cluster.node.*\n    max_fraction_below_median: 0.1\n  - metric: cluster.node.*\n"
		  "    max_fraction_above_median: 0.1\n", "line 7: cluster.node.* has a rule already (line 5)" },
		{ "cluster:\n  - [cluster.pair.gbps]\n", "line 5: a cluster rule is a mapping" },
		{ "cluster:\n  - metric: cluster.pair.gbps\n    min_fraction_of_median: 0.5\n    min_fraction_of_median: 0.6\n",
		  "line 7: 'min_fraction_of_median' given twice" },
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		char text[1024], err[256] = "";
		struct policy *p = NULL;
		snprintf(text, sizeof text, "name: t\nrules:\n  - {metric: memcpy.h2d.pinned.gbps, min: 1}\n%s", bad[i].section);
		CHECK(parse(text, err, sizeof err, &p) == -1);
		CHECK(p == NULL);
		if (!strstr(err, bad[i].want))
			fprintf(stderr, "case %zu: got '%s', want '%s'\n", i, err, bad[i].want);
		CHECK(strstr(err, bad[i].want) != NULL);
	}
}

/*
 * The section is its table of keys (#57's defect: a `switch` on row position beside the table let a
 * removed row leave its rule silently off): every row sets its own field and no other, no two rows
 * set one field, and each number kind refuses a value out of its range.
 */
static void test_policy_cluster_keys(void)
{
	size_t n = policy_cluster_keys();
	CHECK(n >= 19);
	for (size_t i = 0; i < n; i++) {
		const char *metric, *key;
		size_t off, off2;
		CHECK(policy_cluster_key(i, &metric, &key, &off) == 0);
		for (size_t k = 0; k < i; k++) {
			const char *m2, *k2;
			CHECK(policy_cluster_key(k, &m2, &k2, &off2) == 0 && off2 != off);
		}
		char text[512], err[256] = "";
		int word = !strcmp(key, "unmeasured");
		snprintf(text, sizeof text, "name: t\nrules:\n  - {metric: memcpy.h2d.pinned.gbps, min: 1}\ncluster:\n"
			 "  - metric: %s\n    %s: %s\n", metric, key, word ? "reported" : "1");
		struct policy *p = NULL;
		CHECK(parse(text, err, sizeof err, &p) == 0);
		if (!p) {
			fprintf(stderr, "%s %s: %s\n", metric, key, err);
			continue;
		}
		struct policy_cluster want;
		memset(&want, 0, sizeof want);
		want.line = p->cluster.line;
		want.bad_node_share = 1;   /* no share given: every pair */
		*(double *)(void *)((char *)&want + off) = 1;   /* every field a double, a word's 0 or 1 */
		CHECK(memcmp(&want, &p->cluster, sizeof want) == 0);
		policy_free(p);
		if (word)
			continue;
		snprintf(text, sizeof text, "name: t\nrules:\n  - {metric: memcpy.h2d.pinned.gbps, min: 1}\ncluster:\n"
			 "  - metric: %s\n    %s: 1e12\n", metric, key);
		CHECK(parse(text, err, sizeof err, &p) == -1 && strstr(err, "must be in") != NULL);
	}
	const char *metric, *key;
	size_t off;
	CHECK(policy_cluster_key(n, &metric, &key, &off) == -1);
}

TEST_MAIN(T(test_policy_cluster), T(test_policy_cluster_keys), T(test_policy_nodes_reported), T(test_policy_cluster_errors), T(test_analyse_healthy), T(test_analyse_bad_node),
	  T(test_analyse_three), T(test_analyse_nccl), T(test_analyse_json_again),
	  T(test_analyse_bad_link), T(test_analyse_two_nodes), T(test_analyse_presence), T(test_analyse_failed),
	  T(test_analyse_straggler), T(test_analyse_allreduce))
