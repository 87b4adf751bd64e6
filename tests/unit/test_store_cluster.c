/*
 * test_store_cluster.c - cluster runs in the store (issue 49, results/store_cluster.c): the
 * migration from schema 7 keeps what was stored, a whole cluster run (NaN figures, metrics,
 * findings, the all-reduce) comes back as it went in, a uuid stored twice is left as it is, a
 * merge copies what the other store lacks and nothing twice, and a write that fails at any
 * SQLite allocation leaves the file sound and the cluster run stored whole or not at all.
 *
 * `test_store_cluster --write DB KIND [UUID]` stores one made-up cluster run of KIND (reject:
 * four nodes, one bad node to drain, a bad link, a failed pair, no all-reduce; accept: three
 * nodes with an all-reduce curve; big: 100 nodes, one bad; huge: 1,024 nodes, every pair; KIND-judged:
 * the same judged by the analysis, as a real run stores it) into DB for the integration tests
 * (tests/integration/test_cluster_show.py, test_report_cluster.py) until `gpuvet cluster run`
 * stores real ones.  The figures are invented, shaped like a libfabric tcp run over veth.
 */
#include "tests/unit/t.h"
#include "common/cluster.h"
#include "judge/cluster.h"
#include "judge/policy.h"
#include "results/store.h"

#include <math.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define UUID_REJECT "c1a5e7e1-0b5e-4a11-9d3a-5e7e10000001"
#define UUID_ACCEPT "c1a5e7e1-0b5e-4a11-9d3a-5e7e10000002"
#define UUID_BIG    "c1a5e7e1-0b5e-4a11-9d3a-5e7e10000003"

static char dir[256];

static const char *tmp_db(const char *name)
{
	static char path[4][512];
	static int next;
	if (!dir[0]) {
		const char *t = getenv("TMPDIR");
		snprintf(dir, sizeof dir, "%s/gpuvet-test-cluster-XXXXXX", t ? t : "/tmp");
		if (!mkdtemp(dir))
			abort();
	}
	char *p = path[next++ % 4];
	snprintf(p, sizeof path[0], "%s/%s", dir, name);
	return p;
}

static void add_metric(struct gv_cluster_node *n, const char *name, double v, int hb)
{
	n->metrics = realloc(n->metrics, (n->nmetrics + 1) * sizeof *n->metrics);
	if (!n->metrics)
		abort();
	struct gv_cluster_metric *m = &n->metrics[n->nmetrics++];
	memset(m, 0, sizeof *m);
	snprintf(m->name, sizeof m->name, "%s", name);
	m->value = v;
	m->higher_better = hb;
	m->remeasured = NAN;
}

/* Node i's fixed columns: host, address, its run, type. */
static void fill_node(struct gv_cluster *c, int i, const char *host_fmt)
{
	struct gv_cluster_node *n = &c->nodes[i];
	n->state = GV_NODE_OK;
	snprintf(n->host, sizeof n->host, host_fmt, i);
	snprintf(n->addr, sizeof n->addr, "198.18.%d.%d", i / 250, i % 250 + 1);
	snprintf(n->run_uuid, sizeof n->run_uuid, "a0000000-0000-4000-8000-%012d", i + 1);
	snprintf(n->provider, sizeof n->provider, "aws");
	snprintf(n->instance_type, sizeof n->instance_type, "p5.48xlarge");
	n->verdict = 0;
	snprintf(n->why, sizeof n->why, "every check passed");
	add_metric(n, "host.membw.gbps", 180.0 + i % 7, 1);
	add_metric(n, "pcie.h2d.latency_us", i % 3 ? NAN : 9.5, 0);   /* not measured on some */
}

/* Every pair of n nodes in the round-robin order; slow rank `bad` at a fifth, pair (la, lb) alone at a third. */
static void fill_pairs(struct gv_cluster *c, int bad, int la, int lb)
{
	int n = c->nnodes;
	c->pairs = calloc((size_t)n * (n - 1) / 2, sizeof *c->pairs);
	if (!c->pairs)
		abort();
	for (int a = 0; a < n; a++)
		for (int b = a + 1; b < n; b++) {
			struct gv_cluster_pair *p = &c->pairs[c->npairs++];
			p->a = a;
			p->b = b;
			p->round = (a + b) % (n - 1 + n % 2);
			p->state = GV_PAIR_MEASURED;
			double f = (a == bad || b == bad) ? 0.2 : (a == la && b == lb) ? 0.33 : 1.0;
			p->gbps_ab = 11.8 * f + 0.01 * a;
			p->gbps_ba = 11.6 * f + 0.01 * b;
			p->lat_us = 28.5 / f;
			p->nccl_gbps_ab = p->nccl_gbps_ba = NAN;   /* no GPUs */
		}
	c->nrounds = n - 1 + n % 2;
}

static struct gv_cluster *cluster_reject(const char *uuid)
{
	struct gv_cluster *c = gv_cluster_new(4);
	snprintf(c->uuid, sizeof c->uuid, "%s", uuid ? uuid : UUID_REJECT);
	snprintf(c->started_at, sizeof c->started_at, "2026-11-27T10:00:00Z");
	snprintf(c->engine, sizeof c->engine, "slurm");
	snprintf(c->schedule, sizeof c->schedule, "all");
	snprintf(c->transport, sizeof c->transport, "tcp");
	snprintf(c->profile, sizeof c->profile, "quick");
	snprintf(c->policy, sizeof c->policy, "default sha256:0123456789ab");
	snprintf(c->ar_why, sizeof c->ar_why, "no GPUs on the nodes");
	c->stated_gbps = 400.0;
	snprintf(c->stated_source, sizeof c->stated_source, "https://aws.amazon.com/ec2/instance-types/p5/ (3200 Gbps EFA)");
	for (int i = 0; i < 4; i++)
		fill_node(c, i, i == 2 ? "node-%d<&>" : "node-%d");
	fill_pairs(c, 2, 0, 3);
	struct gv_cluster_pair *p13 = &c->pairs[4];   /* (1,3) */
	p13->state = GV_PAIR_FAILED;
	p13->gbps_ab = p13->gbps_ba = p13->lat_us = NAN;
	snprintf(p13->why, sizeof p13->why, "timed out after 20 s");
	c->pair_median_gbps = 11.6;
	c->verdict = 1;
	gv_cluster_add_finding(c, GV_FIND_BAD_NODE, 2, -1, 1, "every pair of rank 2 is slow: 2.3 GB/s median against "
			       "the cluster median of 11.6 GB/s (20 %%)");
	gv_cluster_add_finding(c, GV_FIND_BAD_LINK, 0, 3, 0, "pair 0-3 alone is slow: 3.8 GB/s against 11.6 GB/s (33 %%)");
	return c;
}

static struct gv_cluster *cluster_accept(const char *uuid)
{
	struct gv_cluster *c = gv_cluster_new(3);
	snprintf(c->uuid, sizeof c->uuid, "%s", uuid ? uuid : UUID_ACCEPT);
	snprintf(c->started_at, sizeof c->started_at, "2026-11-27T11:00:00Z");
	snprintf(c->engine, sizeof c->engine, "mpi");
	snprintf(c->schedule, sizeof c->schedule, "all");
	snprintf(c->transport, sizeof c->transport, "efa");
	snprintf(c->nccl_net, sizeof c->nccl_net, "AWS Libfabric");
	snprintf(c->profile, sizeof c->profile, "quick");
	for (int i = 0; i < 3; i++) {
		fill_node(c, i, "gpu-%d");
		c->nodes[i].ngpus = 8;
		snprintf(c->nodes[i].gpu_model, sizeof c->nodes[i].gpu_model, "H100-SXM");
		c->nodes[i].clock_skew_s = i ? 0.25 * i : 0;   /* #56: what the runtime measures */
		c->nodes[i].link_gbps = 12.5;
		snprintf(c->nodes[i].link_source, sizeof c->nodes[i].link_source, "libfabric efa rdmap%ds0 100 Gbps", i + 16);
	}
	c->nodes[1].metrics[0].remeasured = 183.5;
	c->authenticated = 1;
	c->deadline_s = 900;
	fill_pairs(c, -1, -1, -1);
	c->pair_median_gbps = 11.7;
	c->pair_healthy_gbps = 11.8;
	c->ar = calloc(8, sizeof *c->ar);
	for (int i = 0; i < 8; i++) {
		struct gv_cluster_ar_point *p = &c->ar[c->nar++];
		p->bytes = (double)(1 << 20) * (1 << (2 * i));
		p->busbw_gbps = 300.0 * p->bytes / (p->bytes + 64e6);
		p->algbw_gbps = p->busbw_gbps * 24 / (2.0 * 23);
		p->time_us = p->bytes / (p->algbw_gbps * 1e3);
	}
	c->verdict = 0;
	return c;
}

static struct gv_cluster *cluster_big(void)
{
	struct gv_cluster *c = gv_cluster_new(100);
	snprintf(c->uuid, sizeof c->uuid, "%s", UUID_BIG);
	snprintf(c->started_at, sizeof c->started_at, "2026-11-27T12:00:00Z");
	snprintf(c->engine, sizeof c->engine, "kubernetes");
	snprintf(c->schedule, sizeof c->schedule, "all");
	snprintf(c->transport, sizeof c->transport, "tcp");
	for (int i = 0; i < 100; i++)
		fill_node(c, i, "big-%03d");
	c->nodes[99].state = GV_NODE_MISSING;
	snprintf(c->nodes[99].why, sizeof c->nodes[99].why, "never arrived at the rendezvous within 120 s");
	fill_pairs(c, 41, -1, -1);
	for (size_t i = 0; i < c->npairs; i++)
		if (c->pairs[i].b == 99) {
			c->pairs[i].state = GV_PAIR_SKIPPED;
			c->pairs[i].gbps_ab = c->pairs[i].gbps_ba = c->pairs[i].lat_us = NAN;
		}
	c->pair_median_gbps = 11.7;
	c->verdict = 1;
	snprintf(c->ar_why, sizeof c->ar_why, "no GPUs on the nodes");
	gv_cluster_add_finding(c, GV_FIND_MISSING, 99, -1, 1, "rank 99 never arrived at the rendezvous within 120 s");
	gv_cluster_add_finding(c, GV_FIND_BAD_NODE, 41, -1, 1, "every pair of rank 41 is slow: 2.3 GB/s median (20 %%)");
	return c;
}

/* 1,024 nodes, every pair (523,776), rank 700 slow: the scale, for timing the store and the report. */
static struct gv_cluster *cluster_huge(void)
{
	struct gv_cluster *c = gv_cluster_new(1024);
	snprintf(c->uuid, sizeof c->uuid, "c1a5e7e1-0b5e-4a11-9d3a-5e7e10001024");
	snprintf(c->started_at, sizeof c->started_at, "2026-11-27T13:00:00Z");
	snprintf(c->engine, sizeof c->engine, "slurm");
	snprintf(c->schedule, sizeof c->schedule, "all");
	snprintf(c->transport, sizeof c->transport, "efa");
	for (int i = 0; i < 1024; i++)
		fill_node(c, i, "p5-%04d");
	fill_pairs(c, 700, -1, -1);
	c->pair_median_gbps = 11.7;
	c->verdict = 1;
	gv_cluster_add_finding(c, GV_FIND_BAD_NODE, 700, -1, 1, "every pair of rank 700 is slow (20 %%)");
	return c;
}

/* Two clusters equal field by field (NaN equal to NaN). */
static int same_num(double a, double b)
{
	return (isnan(a) && isnan(b)) || a == b;
}

static void check_same(const struct gv_cluster *a, const struct gv_cluster *b)
{
	CHECK_STR(a->uuid, b->uuid);
	CHECK_STR(a->started_at, b->started_at);
	CHECK_STR(a->engine, b->engine);
	CHECK_STR(a->schedule, b->schedule);
	CHECK_STR(a->transport, b->transport);
	CHECK_STR(a->nccl_net, b->nccl_net);
	CHECK_STR(a->profile, b->profile);
	CHECK_STR(a->policy, b->policy);
	CHECK_STR(a->ar_why, b->ar_why);
	CHECK_STR(a->stated_source, b->stated_source);
	CHECK(a->nnodes == b->nnodes && a->nrounds == b->nrounds && a->verdict == b->verdict);
	CHECK(a->authenticated == b->authenticated && same_num(a->deadline_s, b->deadline_s));
	CHECK(same_num(a->pair_healthy_gbps, b->pair_healthy_gbps));
	CHECK(same_num(a->stated_gbps, b->stated_gbps) && same_num(a->pair_median_gbps, b->pair_median_gbps));
	for (int i = 0; i < a->nnodes && i < b->nnodes; i++) {
		const struct gv_cluster_node *x = &a->nodes[i], *y = &b->nodes[i];
		CHECK(x->rank == y->rank && x->state == y->state && x->ngpus == y->ngpus && x->verdict == y->verdict);
		CHECK(!strcmp(x->host, y->host) && !strcmp(x->addr, y->addr) && !strcmp(x->run_uuid, y->run_uuid));
		CHECK(!strcmp(x->provider, y->provider) && !strcmp(x->instance_type, y->instance_type));
		CHECK(!strcmp(x->gpu_model, y->gpu_model) && !strcmp(x->why, y->why));
		CHECK(same_num(x->clock_skew_s, y->clock_skew_s) && same_num(x->link_gbps, y->link_gbps));
		CHECK_STR(x->link_source, y->link_source);
		CHECK(x->nmetrics == y->nmetrics);
		for (size_t m = 0; m < x->nmetrics && m < y->nmetrics; m++)
			CHECK(!strcmp(x->metrics[m].name, y->metrics[m].name) &&
			      same_num(x->metrics[m].value, y->metrics[m].value) &&
			      same_num(x->metrics[m].remeasured, y->metrics[m].remeasured) &&
			      x->metrics[m].higher_better == y->metrics[m].higher_better);
	}
	CHECK(a->npairs == b->npairs && a->nar == b->nar && a->nfindings == b->nfindings);
	for (size_t i = 0; i < a->npairs && i < b->npairs; i++) {
		const struct gv_cluster_pair *x = &a->pairs[i], *y = &b->pairs[i];
		CHECK(x->a == y->a && x->b == y->b && x->round == y->round && x->state == y->state);
		CHECK(same_num(x->gbps_ab, y->gbps_ab) && same_num(x->gbps_ba, y->gbps_ba) && same_num(x->lat_us, y->lat_us));
		CHECK(same_num(x->nccl_gbps_ab, y->nccl_gbps_ab) && same_num(x->nccl_gbps_ba, y->nccl_gbps_ba));
		CHECK_STR(x->why, y->why);
	}
	for (size_t i = 0; i < a->nar && i < b->nar; i++)
		CHECK(same_num(a->ar[i].bytes, b->ar[i].bytes) && same_num(a->ar[i].busbw_gbps, b->ar[i].busbw_gbps) &&
		      same_num(a->ar[i].algbw_gbps, b->ar[i].algbw_gbps) && same_num(a->ar[i].time_us, b->ar[i].time_us));
	for (size_t i = 0; i < a->nfindings && i < b->nfindings; i++) {
		const struct gv_cluster_finding *x = &a->findings[i], *y = &b->findings[i];
		CHECK(x->kind == y->kind && x->rank == y->rank && x->peer == y->peer && x->drain == y->drain);
		CHECK_STR(x->evidence, y->evidence);
	}
}

static long long count(const char *path, const char *sql)
{
	sqlite3 *db;
	sqlite3_stmt *st;
	long long n = -1;
	if (sqlite3_open(path, &db) == SQLITE_OK && sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK) {
		if (sqlite3_step(st) == SQLITE_ROW)
			n = sqlite3_column_int64(st, 0);
		sqlite3_finalize(st);
	}
	sqlite3_close(db);
	return n;
}

static void test_round_trip(void)
{
	struct store *s;
	const char *p = tmp_db("rt.db");
	CHECK(store_open(p, &s) == STORE_OK);
	if (!s)
		return;
	struct gv_cluster *r = cluster_reject(NULL), *a = cluster_accept(NULL), *got = NULL;
	CHECK(store_load_cluster(s, NULL, &got) == 1 && !got);
	CHECK(strstr(store_errmsg(s), "has no cluster runs") != NULL);
	CHECK(store_put_cluster(s, r) == STORE_OK);
	CHECK(store_put_cluster(s, a) == STORE_OK);
	CHECK(store_load_cluster(s, NULL, &got) == 0);   /* the one stored last */
	if (got)
		check_same(a, got);
	gv_cluster_free(got);
	got = NULL;
	store_close(s);
	CHECK(store_open_readonly(p, &s) == STORE_OK);
	if (!s)
		return;
	const char *ids[] = { UUID_REJECT, "c1a5e7e1-0b5e-4a11-9d3a-5e7e10000001", "C1A5E7E1-0B5E-4A11-9D3A-5E7E10000001", "1" };
	for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++) {
		CHECK(store_load_cluster(s, ids[i], &got) == 0);
		if (got)
			check_same(r, got);
		CHECK(got && isnan(got->pairs[4].gbps_ab) && got->pairs[4].state == GV_PAIR_FAILED);
		CHECK(got && isnan(got->nodes[1].metrics[1].value) && got->nodes[0].metrics[1].value == 9.5);
		gv_cluster_free(got);
		got = NULL;
	}
	/* what `cluster show --json` prints of a stored run reads back as the run (common/cluster_json.c) */
	CHECK(store_load_cluster(s, UUID_REJECT, &got) == 0);
	json_t *j = got ? gv_cluster_to_json(got) : NULL;
	char err[160] = "";
	struct gv_cluster *back = j ? gv_cluster_from_json(j, err, sizeof err) : NULL;
	CHECK(back != NULL);
	if (back)
		check_same(r, back);
	json_decref(j);
	gv_cluster_free(back);
	gv_cluster_free(got);
	got = NULL;
	CHECK(store_load_cluster(s, "c1a5", &got) == 1 && strstr(store_errmsg(s), "ambiguous"));
	CHECK(store_load_cluster(s, "ffff", &got) == 1 && strstr(store_errmsg(s), "no cluster run 'ffff'"));
	CHECK(store_load_cluster(s, "3", &got) == 1);
	CHECK(store_load_cluster(s, "x<y", &got) == 1 && !got);
	store_close(s);
	gv_cluster_free(r);
	gv_cluster_free(a);
}

/*
 * One uuid, one cluster run: the same run again is STORE_DUP (nothing written); another run under a
 * stored uuid is refused, said, and the first kept.
 */
static void test_dup_left_alone(void)
{
	struct store *s;
	const char *p = tmp_db("dup.db");
	CHECK(store_open(p, &s) == STORE_OK);
	if (!s)
		return;
	struct gv_cluster *r = cluster_reject(NULL), *other = cluster_accept(UUID_REJECT), *got = NULL;
	CHECK(store_put_cluster(s, r) == STORE_OK);
	CHECK(store_put_cluster(s, r) == STORE_DUP);
	CHECK(store_put_cluster(s, other) == STORE_ERR && strstr(store_errmsg(s), "another cluster run under the uuid "
								  UUID_REJECT " is stored already"));
	CHECK(store_load_cluster(s, UUID_REJECT, &got) == 0);
	if (got)
		check_same(r, got);
	gv_cluster_free(got);
	memset(other->uuid, 0, sizeof other->uuid);
	CHECK(store_put_cluster(s, other) == STORE_ERR && strstr(store_errmsg(s), "needs a uuid"));
	store_close(s);
	CHECK(count(p, "SELECT count(*) FROM clusters") == 1 && count(p, "SELECT count(*) FROM cluster_nodes") == 4);
	gv_cluster_free(r);
	gv_cluster_free(other);
}

/* A schema-7 store (this schema without the cluster tables) opens, migrates to 8 and loses nothing. */
static void test_migrate_from_7(void)
{
	const char *p = tmp_db("v7.db");
	struct store *s;
	CHECK(store_open(p, &s) == STORE_OK);
	if (!s)
		return;
	/* test_store.c's sample fingerprint */
	json_t *fp = json_pack("{s:s,s:{s:s,s:s,s:s,s:s,s:s,s:i},s:{s:[]},"
			       "s:[{s:s,s:s,s:f}],s:[{s:s,s:s,s:i,s:f,s:s,s:{s:i}}],"
			       "s:[{s:s,s:s,s:i,s:[[f,f],[f,f]]}],s:[{s:s,s:s,s:s}],s:[]}",
			       "schema", FINGERPRINT_SCHEMA,
			       "run", "uuid", "a0000000-0000-4000-8000-000000000001", "status", "complete",
			       "started_at", "2026-11-21T00:00:00Z", "provider", "aws", "instance_type", "p5.48xlarge",
			       "gpu_count", 8, "inventory", "gpus",
			       "benches", "name", "gemm", "status", "ok", "duration_s", 1.5,
			       "metrics", "bench", "gemm", "name", "gemm.bf16.tflops", "gpu", -1, "value", 42.0, "unit",
			       "TFLOP/s", "params", "m", 8192,
			       "samples", "bench", "soak", "series", "soak.temp.c", "gpu", 0, "points", 0.0, 50.0, 1.0, 51.0,
			       "flags", "code", "CPU_STEAL", "severity", "warning", "message", "steal",
			       "verdicts");
	CHECK(store_import_fingerprint(s, fp, NULL) == STORE_OK);
	json_decref(fp);
	store_close(s);
	sqlite3 *db;
	CHECK(sqlite3_open(p, &db) == SQLITE_OK);
	CHECK(sqlite3_exec(db, "DROP TABLE cluster_findings; DROP TABLE cluster_allreduce; DROP TABLE cluster_pairs;"
			   " DROP TABLE cluster_metrics; DROP TABLE cluster_nodes; DROP TABLE clusters;"
			   " PRAGMA user_version=7", NULL, NULL, NULL) == SQLITE_OK);
	sqlite3_close(db);
	/* read-only: read as it is, no cluster run, nothing written */
	CHECK(store_open_readonly(p, &s) == STORE_OK);
	if (s) {
		struct gv_cluster *got = NULL;
		CHECK(store_schema_version(s) == 7);
		CHECK(store_load_cluster(s, NULL, &got) == 1 && !got);
		CHECK(store_load_cluster(s, "c1a5e7e1", &got) == 1 && strstr(store_errmsg(s), "schema 7"));
		struct gv_cluster *c = cluster_reject(NULL);
		CHECK(store_put_cluster(s, c) == STORE_ERR);
		gv_cluster_free(c);
		store_close(s);
	}
	CHECK(count(p, "PRAGMA user_version") == 7);
	CHECK(store_open(p, &s) == STORE_OK);   /* read-write: migrated */
	if (!s)
		return;
	CHECK(store_schema_version(s) == STORE_SCHEMA_VERSION && STORE_SCHEMA_VERSION >= 8);
	int64_t id = 0;
	json_t *back = NULL;
	CHECK(store_resolve_run(s, "a0000000", &id) == STORE_OK && store_load_fingerprint(s, id, &back) == STORE_OK);
	CHECK(json_real_value(json_object_get(json_array_get(json_object_get(back, "metrics"), 0), "value")) == 42.0);
	json_decref(back);
	struct gv_cluster *c = cluster_reject(NULL), *got = NULL;
	CHECK(store_put_cluster(s, c) == STORE_OK && store_load_cluster(s, NULL, &got) == 0);
	gv_cluster_free(got);
	gv_cluster_free(c);
	store_close(s);
	CHECK(count(p, "PRAGMA user_version") == STORE_SCHEMA_VERSION && count(p, "SELECT count(*) FROM runs") == 1);
	CHECK(count(p, "SELECT count(*) FROM metrics") == 1 && count(p, "SELECT count(*) FROM clusters") == 1);
}

/*
 * A schema-8 store (this schema without #56's columns) reads read-only as it is, those figures
 * unknown; read-write it migrates to the current schema and keeps its cluster run; a store set back to 8 by hand,
 * its columns still there, migrates too (a column is added only where missing).
 */
static void test_migrate_from_8(void)
{
	const char *p = tmp_db("v8.db");
	struct store *s;
	struct gv_cluster *a = cluster_accept(NULL), *got = NULL;
	CHECK(store_open(p, &s) == STORE_OK && store_put_cluster(s, a) == STORE_OK);
	store_close(s);
	sqlite3 *db;
	CHECK(sqlite3_open(p, &db) == SQLITE_OK);
	CHECK(sqlite3_exec(db, "ALTER TABLE clusters DROP COLUMN authenticated; ALTER TABLE clusters DROP COLUMN deadline_s;"
			   " ALTER TABLE clusters DROP COLUMN pair_healthy_gbps;"
			   " ALTER TABLE cluster_nodes DROP COLUMN clock_skew_s; ALTER TABLE cluster_nodes DROP COLUMN link_gbps;"
			   " ALTER TABLE cluster_nodes DROP COLUMN link_source; ALTER TABLE cluster_metrics DROP COLUMN remeasured;"
			   " PRAGMA user_version=8", NULL, NULL, NULL) == SQLITE_OK);
	sqlite3_close(db);
	CHECK(store_open_readonly(p, &s) == STORE_OK);
	if (s) {
		CHECK(store_schema_version(s) == 8 && store_load_cluster(s, NULL, &got) == 0);
		CHECK(got && got->authenticated == 0 && isnan(got->deadline_s) && isnan(got->nodes[1].clock_skew_s) &&
		      isnan(got->nodes[1].link_gbps) && !got->nodes[1].link_source[0] && isnan(got->nodes[1].metrics[0].remeasured));
		CHECK(got && got->nodes[1].metrics[0].value == a->nodes[1].metrics[0].value);
		gv_cluster_free(got);
		got = NULL;
		store_close(s);
	}
	CHECK(count(p, "PRAGMA user_version") == 8);
	for (int again = 0; again < 2; again++) {
		CHECK(store_open(p, &s) == STORE_OK);   /* read-write: migrated (the second time: set back, columns kept) */
		if (!s)
			break;
		CHECK(store_schema_version(s) == STORE_SCHEMA_VERSION && store_load_cluster(s, UUID_ACCEPT, &got) == 0);
		CHECK(got && isnan(got->nodes[1].clock_skew_s) && got->nodes[2].ngpus == 8);
		gv_cluster_free(got);
		got = NULL;
		struct gv_cluster *b = cluster_accept("c1a5e7e1-0b5e-4a11-9d3a-5e7e1000000b");
		if (again)
			snprintf(b->uuid, sizeof b->uuid, "c1a5e7e1-0b5e-4a11-9d3a-5e7e1000000c");
		CHECK(store_put_cluster(s, b) == STORE_OK && store_load_cluster(s, b->uuid, &got) == 0);
		if (got)
			check_same(b, got);   /* the new columns round-trip */
		gv_cluster_free(got);
		got = NULL;
		gv_cluster_free(b);
		store_close(s);
		CHECK(count(p, "PRAGMA user_version") == STORE_SCHEMA_VERSION);
		CHECK(sqlite3_open(p, &db) == SQLITE_OK && sqlite3_exec(db, "PRAGMA user_version=8", NULL, NULL, NULL) == SQLITE_OK);
		sqlite3_close(db);
	}
	CHECK(count(p, "SELECT count(*) FROM pragma_integrity_check WHERE integrity_check <> 'ok'") == 0);
	gv_cluster_free(a);
}

static int count_row(void *ud, const struct store_cluster_row *r)
{
	int *n = ud;
	(*n)++;
	return r->nnodes < 1;
}

/* A merge copies the cluster runs the store lacks, whole, and none twice. */
static void test_merge(void)
{
	const char *pa = tmp_db("ma.db"), *pb = tmp_db("mb.db");
	struct store *a, *b;
	CHECK(store_open(pa, &a) == STORE_OK && store_open(pb, &b) == STORE_OK);
	if (!a || !b)
		return;
	struct gv_cluster *r = cluster_reject(NULL), *ac = cluster_accept(NULL), *big = cluster_big();
	CHECK(store_put_cluster(a, r) == STORE_OK && store_put_cluster(a, big) == STORE_OK);
	CHECK(store_put_cluster(b, ac) == STORE_OK && store_put_cluster(b, r) == STORE_OK);
	store_close(a);
	int added = -1, skipped = -1;
	CHECK(store_batch_begin(b) == STORE_OK && store_batch_mark(b) == STORE_OK);   /* as `results merge` does */
	CHECK(store_merge_clusters(b, pa, &added, &skipped) == STORE_OK && added == 1 && skipped == 1);
	CHECK(store_batch_unmark(b, 1) == STORE_OK && store_batch_end(b, 1) == STORE_OK);
	CHECK(store_merge_clusters(b, pa, &added, &skipped) == STORE_OK && added == 0 && skipped == 2);
	int n = 0;
	CHECK(store_each_cluster(b, count_row, &n) == STORE_OK && n == 3);
	struct gv_cluster *got = NULL;
	CHECK(store_load_cluster(b, UUID_BIG, &got) == 0);
	if (got)
		check_same(big, got);
	gv_cluster_free(got);
	CHECK(store_merge_clusters(b, tmp_db("absent.db"), &added, &skipped) != STORE_OK);
	CHECK(strstr(store_errmsg(b), "absent.db") != NULL);
	store_close(b);
	CHECK(count(pb, "SELECT count(*) FROM cluster_pairs") == 6 + 3 + 4950);
	gv_cluster_free(r);
	gv_cluster_free(ac);
	gv_cluster_free(big);
}

/* ---- fault injection: SQLite's allocator fails at call N of a put ---- */

static sqlite3_mem_methods real_mem;
static long fail_at = -1, calls;

static void *fi_malloc(int n)
{
	if (fail_at >= 0 && ++calls == fail_at)
		return NULL;
	return real_mem.xMalloc(n);
}

static void *fi_realloc(void *p, int n)
{
	if (fail_at >= 0 && ++calls == fail_at)
		return NULL;
	return real_mem.xRealloc(p, n);
}

static void test_put_under_malloc_failure(void)
{
	sqlite3_mem_methods fi;
	sqlite3_shutdown();
	CHECK(sqlite3_config(SQLITE_CONFIG_GETMALLOC, &real_mem) == SQLITE_OK);
	fi = real_mem;
	fi.xMalloc = fi_malloc;
	fi.xRealloc = fi_realloc;
	CHECK(sqlite3_config(SQLITE_CONFIG_MALLOC, &fi) == SQLITE_OK);
	sqlite3_initialize();
	const char *p = tmp_db("fault.db");
	struct store *s;
	CHECK(store_open(p, &s) == STORE_OK);
	struct gv_cluster *first = cluster_accept(NULL);
	CHECK(s && store_put_cluster(s, first) == STORE_OK);
	store_close(s);
	int successes = 0, failures = 0;
	for (long n = 1; n < 300; n++) {
		struct gv_cluster *c = cluster_reject(NULL);
		snprintf(c->uuid, sizeof c->uuid, "c1a5e7e1-0b5e-4a11-9d3a-%012d", (int)n);
		calls = 0;
		fail_at = -1;
		if (store_open(p, &s) != STORE_OK) {
			CHECK(0);
			gv_cluster_free(c);
			break;
		}
		fail_at = n;
		int rc = store_put_cluster(s, c);
		fail_at = -1;
		store_close(s);
		successes += rc == STORE_OK;
		failures += rc != STORE_OK;
		char sql[160];
		CHECK(count(p, "SELECT count(*) FROM pragma_integrity_check WHERE integrity_check <> 'ok'") == 0);
		snprintf(sql, sizeof sql, "SELECT count(*) FROM cluster_pairs WHERE cluster_id IN"
			 " (SELECT id FROM clusters WHERE uuid = '%s')", c->uuid);
		CHECK(count(p, sql) == (rc == STORE_OK ? 6 : 0));   /* whole or nothing */
		CHECK(count(p, "SELECT count(*) FROM cluster_nodes n JOIN clusters c ON c.id = n.cluster_id"
			       " WHERE c.uuid = '" UUID_ACCEPT "'") == 3);   /* what was stored is never lost */
		gv_cluster_free(c);
		if (rc == STORE_OK && calls < n)
			break;   /* the put needed fewer allocations than n: every point was covered */
	}
	CHECK(successes >= 1 && failures >= 10);
	gv_cluster_free(first);
	sqlite3_shutdown();
	sqlite3_config(SQLITE_CONFIG_MALLOC, &real_mem);
	sqlite3_initialize();
}

/*
 * KIND-judged: its findings, verdict, median and stated rate made by the analysis under the built-in
 * policy, as `gpuvet cluster run` would store them (what `cluster import` derives again and accepts).
 */
static int judged(struct gv_cluster *c)
{
	struct policy *p = NULL;
	char err[256];
	int rc = policy_load(NULL, &p, err, sizeof err) || cluster_analyse(c, p, err, sizeof err);
	if (rc)
		fprintf(stderr, "test_store_cluster: %s\n", err);
	policy_free(p);
	return rc;
}

/* --write DB KIND [UUID]: one made-up cluster run into DB, for the integration tests. */
static int write_one(const char *db, const char *kind, const char *uuid)
{
	size_t l = strlen(kind);
	int judge = l > 7 && !strcmp(kind + l - 7, "-judged");
	char base[32];
	snprintf(base, sizeof base, "%.*s", (int)(judge ? l - 7 : l), kind);
	struct gv_cluster *c = !strcmp(base, "reject") ? cluster_reject(uuid) : !strcmp(base, "accept") ?
		cluster_accept(uuid) : !strcmp(base, "big") ? cluster_big() : !strcmp(base, "huge") ? cluster_huge() : NULL;
	struct store *s = NULL;
	if (!c) {
		fprintf(stderr, "test_store_cluster: unknown kind '%s' (reject, accept, big, huge, each also -judged)\n", kind);
		return 2;
	}
	if (judge && judged(c)) {
		gv_cluster_free(c);
		return 1;
	}
	int rc = store_open(db, &s);
	if (rc == STORE_OK)
		rc = store_put_cluster(s, c);
	if (rc != STORE_OK)
		fprintf(stderr, "test_store_cluster: %s\n", s ? store_errmsg(s) : store_open_error());
	store_close(s);
	gv_cluster_free(c);
	return rc == STORE_OK ? 0 : 1;
}

int main(int argc, char **argv)
{
	if (argc >= 4 && !strcmp(argv[1], "--write"))
		return write_one(argv[2], argv[3], argc > 4 ? argv[4] : NULL);
	static const struct t_case cases[] = {
		T(test_round_trip), T(test_dup_left_alone), T(test_migrate_from_7), T(test_migrate_from_8), T(test_merge),
		T(test_put_under_malloc_failure),
	};
	int passed = 0, failed = 0;
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		t_cur_failed = 0;
		cases[i].fn();
		if (t_cur_failed) {
			failed++;
			fprintf(stderr, "FAIL %s\n", cases[i].name);
		} else {
			passed++;
		}
	}
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
