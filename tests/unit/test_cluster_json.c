/*
 * test_cluster_json.c - a cluster run's JSON (common/cluster_json.c): the
 * writer's document read back is the same run, NAN stays unmeasured, and the
 * reader refuses what is not a cluster run of its own size.
 */
#include "common/cluster.h"
#include "tests/unit/t.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static struct gv_cluster *sample(void)
{
	struct gv_cluster *c = gv_cluster_new(3);
	snprintf(c->uuid, sizeof c->uuid, "0f7e2c1a-0000-4000-8000-000000000001");
	snprintf(c->engine, sizeof c->engine, "slurm");
	snprintf(c->schedule, sizeof c->schedule, "all");
	snprintf(c->transport, sizeof c->transport, "tcp");
	c->nrounds = 3;
	c->verdict = 1;
	c->pair_median_gbps = 1.25;
	for (int i = 0; i < 3; i++) {
		struct gv_cluster_node *n = &c->nodes[i];
		n->state = i == 2 ? GV_NODE_LOST : GV_NODE_OK;
		n->verdict = i == 2 ? -1 : 0;
		snprintf(n->host, sizeof n->host, "node%d", i);
		snprintf(n->addr, sizeof n->addr, "198.18.0.%d", i + 1);
		n->metrics = calloc(1, sizeof *n->metrics);
		n->nmetrics = 1;
		snprintf(n->metrics[0].name, sizeof n->metrics[0].name, "host.membw.gbps");
		n->metrics[0].value = 10.0 + i;
		n->metrics[0].higher_better = 1;
	}
	c->pairs = calloc(2, sizeof *c->pairs);
	c->npairs = 2;
	c->pairs[0] = (struct gv_cluster_pair){ .a = 0, .b = 1, .round = 0, .state = GV_PAIR_MEASURED, .gbps_ab = 1.25,
						.gbps_ba = 1.5, .lat_us = 40, .nccl_gbps_ab = NAN, .nccl_gbps_ba = NAN };
	c->pairs[1] = (struct gv_cluster_pair){ .a = 1, .b = 2, .round = 1, .state = GV_PAIR_FAILED, .gbps_ab = NAN,
						.gbps_ba = NAN, .lat_us = NAN, .nccl_gbps_ab = NAN, .nccl_gbps_ba = NAN };
	snprintf(c->pairs[1].why, sizeof c->pairs[1].why, "peer did not answer within 20 s");
	snprintf(c->ar_why, sizeof c->ar_why, "no GPUs on the nodes");
	gv_cluster_add_finding(c, GV_FIND_LOST, 2, -1, 1, "node2 dropped out in round %d", 1);
	gv_cluster_add_finding(c, GV_FIND_BAD_LINK, 0, 1, 0, "pair 0-1 at %.2f GB/s", 0.25);
	return c;
}

static void round_trip(void)
{
	struct gv_cluster *c = sample();
	json_t *j = gv_cluster_to_json(c);
	CHECK(j != NULL);
	char err[160] = "stale";
	struct gv_cluster *d = gv_cluster_from_json(j, err, sizeof err);
	CHECK(d != NULL);
	if (d) {
		CHECK(d->nnodes == 3 && d->npairs == 2 && d->nfindings == 2 && d->verdict == 1 && d->nrounds == 3);
		CHECK_STR(d->uuid, c->uuid);
		CHECK_STR(d->transport, "tcp");
		CHECK(isnan(d->stated_gbps) && d->pair_median_gbps == 1.25);
		CHECK(d->nodes[2].state == GV_NODE_LOST && d->nodes[2].verdict == -1 && d->nodes[1].verdict == 0);
		CHECK_STR(d->nodes[1].addr, "198.18.0.2");
		CHECK(d->nodes[1].nmetrics == 1 && d->nodes[1].metrics[0].value == 11.0);
		CHECK(d->pairs[0].gbps_ba == 1.5 && isnan(d->pairs[0].nccl_gbps_ab));
		CHECK(d->pairs[1].state == GV_PAIR_FAILED && isnan(d->pairs[1].gbps_ab));
		CHECK(d->findings[1].kind == GV_FIND_BAD_LINK && d->findings[1].peer == 1 && !d->findings[1].drain);
		CHECK_STR(d->ar_why, "no GPUs on the nodes");
		json_t *k = gv_cluster_to_json(d);   /* the same document again */
		CHECK(json_equal(j, k));
		json_decref(k);
	}
	/* the drain list a script reads: the lost node, once */
	json_t *dr = json_object_get(j, "drain");
	CHECK(json_array_size(dr) == 1 && json_integer_value(json_object_get(json_array_get(dr, 0), "rank")) == 2);
	gv_cluster_free(d);
	gv_cluster_free(c);
	json_decref(j);
}

/* Each mutation of a good document is refused with a one-line reason, never read half. */
static void refuses_bad(void)
{
	static const char *const bad[] = {
		"[]",
		"{}",
		"{\"nnodes\":0}",
		"{\"nnodes\":5000}",
		"{\"nnodes\":2,\"pairs\":[{\"a\":1,\"b\":0}]}",
		"{\"nnodes\":2,\"pairs\":[{\"a\":0,\"b\":2}]}",
		"{\"nnodes\":2,\"pairs\":[{\"a\":0,\"b\":1},{\"a\":0,\"b\":1}]}",
		"{\"nnodes\":2,\"nodes\":[{\"rank\":2}]}",
		"{\"nnodes\":2,\"nodes\":[{\"rank\":0,\"state\":\"gone\"}]}",
		"{\"nnodes\":2,\"nodes\":[{\"rank\":0,\"host\":7}]}",
		"{\"nnodes\":2,\"verdict\":\"maybe\"}",
		"{\"nnodes\":2,\"stated\":3}",
		"{\"nnodes\":2,\"findings\":[{\"kind\":\"bad_node\",\"rank\":9}]}",
		"{\"nnodes\":2,\"allreduce\":{\"points\":[{\"bytes\":\"x\"}]}}",
		"{\"nnodes\":2,\"nodes\":[{\"rank\":0,\"metrics\":[{\"value\":1}]}]}",
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		json_t *j = json_loads(bad[i], 0, NULL);
		char err[160] = "";
		struct gv_cluster *c = gv_cluster_from_json(j, err, sizeof err);
		if (c)
			fprintf(stderr, "accepted: %s\n", bad[i]);
		CHECK(c == NULL);
		CHECK(!strncmp(err, "cluster run: ", 13) && !strchr(err, '\n'));
		gv_cluster_free(c);
		json_decref(j);
	}
}

/* What a file gets from gv_cluster_write_json(), or NULL. */
static char *written(const struct gv_cluster *c)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	int rc = f ? gv_cluster_write_json(c, f) : -1;
	if (f)
		fclose(f);
	if (rc) {
		free(buf);
		return NULL;
	}
	return buf;
}

/* The streamed document is json_dumpf's of the whole tree, byte for byte, with pairs and without. */
static void streamed_as_dumped(void)
{
	struct gv_cluster *c = sample();
	for (int round = 0; round < 2; round++) {
		if (round == 1)
			c->npairs = 0;   /* "pairs": [] printed as is */
		json_t *j = gv_cluster_to_json(c);
		char *whole = json_dumps(j, JSON_INDENT(2) | JSON_ENSURE_ASCII), *got = written(c);
		CHECK(whole && got);
		if (whole && got) {
			size_t n = strlen(whole);
			CHECK(strlen(got) == n + 1 && !strncmp(got, whole, n) && got[n] == '\n');
			if (strncmp(got, whole, n))
				fprintf(stderr, "streamed:\n%s\ndumped:\n%s\n", got, whole);
		}
		free(whole);
		free(got);
		json_decref(j);
	}
	c->npairs = 2;
	/* a write that fails is said */
	FILE *full = fopen("/dev/full", "w");
	if (full) {
		setvbuf(full, NULL, _IONBF, 0);
		CHECK(gv_cluster_write_json(c, full) == -1);
		fclose(full);
	}
	gv_cluster_free(c);
}

TEST_MAIN(T(round_trip), T(refuses_bad), T(streamed_as_dumped))
