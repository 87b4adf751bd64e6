/* test_rank.c - ranking on stored runs with known answers (store C API, real SQLite) */
#include "pricing/catalog.h"
#include "common/gpus.h"
#include "judge/rank.h"
#include "results/store.h"
#include "common/util.h"
#include "tests/unit/t.h"

#include <sqlite3.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char *db_path;

/*
 * Prices (imported, so they win over the shipped catalogs):
 *   test/big    8 GPUs  10.00 USD/h  us-east-1
 *   test/small  1 GPU    1.00 USD/h  (any region)
 *   test/spotty 1 GPU    2.00 USD/h  spot only
 *   test/ref    8x H100-SXM 20 USD/h  never measured (estimates)
 * Runs:
 *   big   us-east-1  gemm.bf16.tflops 800, 1000, 900 (median 900); allreduce 100 on the first;
 *                    THROTTLE_POWER on the second
 *   small us-west-2  gemm.bf16.tflops 100, 120 (median 110)
 *   nowhere/x        gemm.bf16.tflops 5 (no price)
 */
static const char prices_csv[] =
	"provider,instance_type,region,gpu_model,gpu_count,market,price,unit,currency,captured_at\n"
	"test,big,us-east-1,H100-SXM,8,on_demand,10,hour,USD,2026-11-01\n"
	"test,small,,A10G,1,on_demand,1,hour,USD,2026-11-01\n"
	"test,spotty,,A10G,1,spot,2,hour,USD,2026-11-01\n"
	"test,ref,us-east-1,H100-SXM,8,on_demand,20,hour,USD,2026-11-01\n";

static int64_t add_run(struct store *s, const char *provider, const char *itype, const char *region, int gpus,
		       const char *metric, double v)
{
	struct run_info ri = { .profile = "quick", .gpuvet_version = GPUVET_VERSION, .hostname = "test",
			       .provider = provider, .instance_type = itype, .region = region,
			       .gpu_count = gpus };
	int64_t id = -1;
	CHECK(store_begin_run(s, &ri, &id) == STORE_OK);
	CHECK(store_bench_begin(s, id, "gemm") == STORE_OK);
	CHECK(store_put_metric(s, id, "gemm", metric, -1, v, "TFLOP/s", NULL) == STORE_OK);
	CHECK(store_put_metric(s, id, "gemm", "gemm.bf16.pct_of_peak", -1, 50, "%", NULL) == STORE_OK);
	CHECK(store_bench_end(s, id, "gemm", "ok", NULL, 1.0, NULL) == STORE_OK);
	CHECK(store_finish_run(s, id, "complete") == STORE_OK);
	return id;
}

static struct store *setup(void)
{
	struct store *s;
	char err[512];
	const char *dir = getenv("TMPDIR");
	free(db_path);
	db_path = gv_asprintf("%s/test_rank_%d_%ld.db", dir ? dir : "/tmp", (int)getpid(), random());
	CHECK(store_open(db_path, &s) == STORE_OK);
	CHECK(catalog_ensure_shipped(store_db(s), 0, NULL, err, sizeof err) == 0);
	CHECK(catalog_import_buffer(store_db(s), "t.csv", prices_csv, strlen(prices_csv), "import:t", "t", NULL,
				    err, sizeof err) == 0);
	int64_t b1 = add_run(s, "test", "big", "us-east-1", 8, "gemm.bf16.tflops", 800);
	int64_t b2 = add_run(s, "test", "big", "us-east-1", 8, "gemm.bf16.tflops", 1000);
	add_run(s, "test", "big", "us-east-1", 8, "gemm.bf16.tflops", 900);
	add_run(s, "test", "small", "us-west-2", 1, "gemm.bf16.tflops", 100);
	add_run(s, "test", "small", "us-west-2", 1, "gemm.bf16.tflops", 120);
	add_run(s, "nowhere", "x", "r", 1, "gemm.bf16.tflops", 5);
	CHECK(store_bench_begin(s, b1, "allreduce") == STORE_OK);
	CHECK(store_put_metric(s, b1, "allreduce", "allreduce.busbw.gbps", -1, 100, "GB/s", NULL) == STORE_OK);
	CHECK(store_bench_end(s, b1, "allreduce", "ok", NULL, 1.0, NULL) == STORE_OK);
	CHECK(store_put_flag(s, b2, "THROTTLE_POWER", "warning", "power cap", "{}", NULL) == STORE_OK);
	return s;
}

static void teardown(struct store *s)
{
	store_close(s);
	unlink(db_path);
}

static json_t *row_of(json_t *r, const char *itype)
{
	size_t i;
	json_t *row;
	json_array_foreach(json_object_get(r, "rows"), i, row)
		if (!strcmp(json_string_value(json_object_get(row, "instance_type")), itype))
			return row;
	return NULL;
}

static double num(json_t *o, const char *k) { return json_number_value(json_object_get(o, k)); }

static void test_median_per_dollar_runs_and_flags(void)
{
	struct store *s = setup();
	struct rank_opts o = { 0 };
	json_t *r;
	char err[512];
	CHECK(rank_compute(s, &o, &r, err, sizeof err) == 0);
	if (!r) {
		teardown(s);
		return;
	}
	CHECK_STR(json_string_value(json_object_get(r, "metric")), "gemm.bf16.tflops");
	CHECK_STR(json_string_value(json_object_get(r, "unit")), "TFLOP/s");
	json_t *rows = json_object_get(r, "rows");
	CHECK(json_array_size(rows) == 2);
	json_t *first = json_array_get(rows, 0), *second = json_array_get(rows, 1);
	CHECK_STR(json_string_value(json_object_get(first, "instance_type")), "small");
	CHECK_NEAR(num(first, "value"), 110, 1e-9);
	CHECK_NEAR(num(first, "value_per_dollar"), 110, 1e-9);
	CHECK(json_integer_value(json_object_get(first, "runs")) == 2);
	CHECK(json_array_size(json_object_get(first, "flags")) == 0);
	CHECK_STR(json_string_value(json_object_get(second, "instance_type")), "big");
	CHECK_NEAR(num(second, "value"), 900, 1e-9);
	CHECK_NEAR(num(second, "value_per_dollar"), 90, 1e-9);
	CHECK_NEAR(num(second, "price_per_hour"), 10, 1e-12);
	CHECK(json_integer_value(json_object_get(second, "runs")) == 3);
	CHECK_STR(json_string_value(json_array_get(json_object_get(second, "flags"), 0)), "THROTTLE_POWER");
	CHECK(json_is_false(json_object_get(second, "estimate")));
	CHECK(json_integer_value(json_object_get(first, "rank")) == 1);
	/* the measured type without a price is reported, not ranked */
	json_t *unp = json_array_get(json_object_get(r, "unpriced"), 0);
	CHECK_STR(json_string_value(json_object_get(unp, "provider")), "nowhere");
	json_decref(r);
	teardown(s);
}

static void test_per_gpu_region_and_market(void)
{
	struct store *s = setup();
	json_t *r;
	char err[512];
	struct rank_opts o = { .per = "gpu" };
	CHECK(rank_compute(s, &o, &r, err, sizeof err) == 0);
	json_t *big = row_of(r, "big");
	CHECK(big != NULL);
	CHECK_NEAR(num(big, "value"), 112.5, 1e-9);        /* 900 / 8 GPUs */
	CHECK_NEAR(num(big, "price_per_hour"), 1.25, 1e-12); /* 10 / 8 */
	CHECK_NEAR(num(big, "value_per_dollar"), 90, 1e-9);
	json_decref(r);

	/* --region joins runs and prices of that region (a price without region holds everywhere) */
	struct rank_opts w = { .region = "us-west-2" };
	CHECK(rank_compute(s, &w, &r, err, sizeof err) == 0);
	CHECK(json_array_size(json_object_get(r, "rows")) == 1);
	CHECK(row_of(r, "small") != NULL && row_of(r, "big") == NULL);
	json_decref(r);

	/* spot prices: only 'spotty' has one, and it has no run */
	struct rank_opts sp = { .market = "spot" };
	CHECK(rank_compute(s, &sp, &r, err, sizeof err) == 0);
	CHECK(json_array_size(json_object_get(r, "rows")) == 0);
	CHECK(json_array_size(json_object_get(r, "unpriced")) == 3);
	json_decref(r);
	teardown(s);
}

static void test_training_score(void)
{
	struct store *s = setup();
	json_t *r;
	char err[512];
	struct rank_opts o = { .metric = "score.training" };
	CHECK(rank_compute(s, &o, &r, err, sizeof err) == 0);
	json_t *big = row_of(r, "big"), *small = row_of(r, "small");
	CHECK(big && small);
	if (big && small) {
		/*
		 * Fixed units (judge/rank.c score_units): big (8 GPUs) gemm 900/1000 and all-reduce 100/400,
		 * equal weights: 0.575, per dollar 0.0575.  small (1 GPU): all-reduce does not apply to one GPU,
		 * so no cap: 110/1000 = 0.11, per dollar 0.11, first.
		 */
		CHECK_NEAR(num(big, "value"), (0.9 + 0.25) / 2, 1e-12);
		CHECK_NEAR(num(big, "value_per_dollar"), 0.0575, 1e-12);
		CHECK_NEAR(num(small, "value"), 0.11, 1e-12);
		CHECK(json_array_size(json_object_get(small, "missing")) == 0);
		CHECK_STR(json_string_value(json_array_get(json_object_get(small, "not_applicable"), 0)),
			  "allreduce.busbw.gbps");
		CHECK_STR(json_string_value(json_object_get(json_array_get(json_object_get(r, "rows"), 0),
							    "instance_type")), "small");
		CHECK_NEAR(json_number_value(json_object_get(json_object_get(r, "units"), "allreduce.busbw.gbps")), 400,
			   1e-12);
	}
	/* the same number whatever else is in the table: big alone (--region) scores the same */
	json_t *alone;
	struct rank_opts ro = { .metric = "score.training", .region = "us-east-1" };
	CHECK(rank_compute(s, &ro, &alone, err, sizeof err) == 0);
	json_t *big2 = row_of(alone, "big");
	CHECK(big2 && json_array_size(json_object_get(alone, "rows")) == 1);
	if (big && big2)
		CHECK_NEAR(num(big2, "value"), num(big, "value"), 1e-12);
	json_decref(alone);
	CHECK_STR(json_string_value(json_object_get(r, "unit")), "score");
	json_decref(r);
	teardown(s);
}

static void test_estimates_are_marked(void)
{
	struct store *s = setup();
	json_t *r;
	char err[512];
	struct rank_opts o = { .include_estimates = 1 };
	CHECK(rank_compute(s, &o, &r, err, sizeof err) == 0);
	/* ref (8x H100-SXM, never measured): what the stored H100-SXM runs of big reached per GPU
	 * (800, 1000, 900 over 8 GPUs: median 112.5) x 8, never the datasheet peak */
	json_t *ref = row_of(r, "ref");
	CHECK(ref != NULL);
	if (ref) {
		CHECK(json_is_true(json_object_get(ref, "estimate")));
		CHECK(json_integer_value(json_object_get(ref, "runs")) == 0);
		CHECK_NEAR(num(ref, "value"), 900, 1e-9);
		CHECK(strncmp(json_string_value(json_object_get(ref, "estimate_basis")), "measured: H100-SXM, median of 3",
			      31) == 0);
	}
	/* a measured type is never an estimate, even with a reference row; measured and estimated rows ranked
	 * together by value per dollar (issue 58 item 10: rank 1 is the best row, whatever its basis) */
	CHECK(json_is_false(json_object_get(row_of(r, "big"), "estimate")));
	CHECK(json_is_null(json_object_get(row_of(r, "big"), "estimate_basis")));
	size_t i;
	json_t *row;
	int seen_est = 0;
	double last = INFINITY;
	json_array_foreach(json_object_get(r, "rows"), i, row) {
		double vpd = num(row, "value_per_dollar");
		CHECK(vpd <= last);
		last = vpd;
		seen_est |= json_is_true(json_object_get(row, "estimate"));
	}
	CHECK(seen_est);
	json_decref(r);
	teardown(s);
}

/* No stored run of the model: the one reference of common/gpus.c, with its kind. */
static void test_estimates_fall_back_to_achievable(void)
{
	const char *key = "H100-SXM";
	double ach = 0;
	const char *src = NULL;
	if (gpu_reference_metric(key, "gemm.bf16.tflops", &ach, NULL, &src) < 0)
		return; /* the table has no row to test against */
	struct store *s = setup();
	char err[512];
	const char *p = "provider,instance_type,region,gpu_model,gpu_count,market,price,unit,currency,captured_at\n"
			"test,big,us-east-1,A10G,8,on_demand,9,hour,USD,2026-11-01\n"; /* cheaper: big is no H100 now */
	CHECK(catalog_import_buffer(store_db(s), "u.csv", p, strlen(p), "import:u", "u", NULL, err, sizeof err) == 0);
	json_t *r;
	struct rank_opts o = { .include_estimates = 1 };
	CHECK(rank_compute(s, &o, &r, err, sizeof err) == 0);
	json_t *ref = row_of(r, "ref");
	CHECK(ref != NULL);
	if (ref) {
		CHECK_NEAR(num(ref, "value"), ach * 8, 1e-9);
		CHECK(strncmp(json_string_value(json_object_get(ref, "estimate_basis")), "reference (measured)", 20) == 0);
	}
	const struct gpu_ref *h100 = gpu_ref_find(key);
	CHECK(!h100 || ach < h100->peak_tflops[GPU_BF16]);
	json_decref(r);
	teardown(s);
}

/* A run with a critical flag is left out by default, counted, and back with include_flagged. */
static void test_critical_runs_left_out(void)
{
	struct store *s = setup();
	int64_t bad = add_run(s, "test", "small", "us-west-2", 1, "gemm.bf16.tflops", 10);
	CHECK(store_put_flag(s, bad, "CONTENTION", "critical", "another process", "{}", NULL) == STORE_OK);
	json_t *r;
	char err[512];
	struct rank_opts o = { 0 };
	CHECK(rank_compute(s, &o, &r, err, sizeof err) == 0);
	json_t *small = row_of(r, "small");
	CHECK(json_integer_value(json_object_get(small, "runs")) == 2);
	CHECK_NEAR(num(small, "value"), 110, 1e-9);
	CHECK(json_integer_value(json_object_get(r, "runs_left_out")) == 1);
	json_decref(r);
	o.include_flagged = 1;
	CHECK(rank_compute(s, &o, &r, err, sizeof err) == 0);
	small = row_of(r, "small");
	CHECK(json_integer_value(json_object_get(small, "runs")) == 3);
	CHECK_NEAR(num(small, "value"), 100, 1e-9);
	CHECK_STR(json_string_value(json_array_get(json_object_get(small, "flags"), 0)), "CONTENTION");
	CHECK(json_integer_value(json_object_get(r, "runs_left_out")) == 0);
	json_decref(r);
	teardown(s);
}

/* Spot beside on-demand: each price with its own value per dollar. */
static void test_spot_beside_on_demand(void)
{
	struct store *s = setup();
	char err[512];
	const char *p = "provider,instance_type,region,zone,market,price,unit,currency,captured_at\n"
			"test,small,us-west-2,us-west-2a,spot,0.5,hour,USD,2026-11-01\n";
	CHECK(catalog_import_buffer(store_db(s), "s.csv", p, strlen(p), "import:s", "s", NULL, err, sizeof err) == 0);
	json_t *r;
	struct rank_opts o = { 0 };
	CHECK(rank_compute(s, &o, &r, err, sizeof err) == 0);
	json_t *small = row_of(r, "small");
	CHECK_NEAR(num(small, "on_demand_price_per_hour"), 1, 1e-12);
	CHECK_NEAR(num(small, "spot_price_per_hour"), 0.5, 1e-12);
	CHECK_NEAR(num(small, "value_per_dollar_spot"), 220, 1e-9);
	CHECK_NEAR(num(small, "value_per_dollar_on_demand"), 110, 1e-9);
	CHECK(json_is_null(json_object_get(row_of(r, "big"), "spot_price_per_hour")));
	json_decref(r);
	teardown(s);
}

static void test_refusals(void)
{
	struct store *s = setup();
	json_t *r;
	char err[512];
	struct rank_opts lat = { .metric = "nvme.randread.p99_us" };
	CHECK(rank_compute(s, &lat, &r, err, sizeof err) < 0 && r == NULL);
	CHECK(strstr(err, "not a throughput") != NULL);
	struct rank_opts sc = { .metric = "score.fun" };
	CHECK(rank_compute(s, &sc, &r, err, sizeof err) < 0);
	CHECK(strstr(err, "unknown score") != NULL);
	struct rank_opts none = { .metric = "objstore.get.gbps" };
	CHECK(rank_compute(s, &none, &r, err, sizeof err) < 0);
	CHECK(strstr(err, "no stored run has metric objstore.get.gbps") != NULL);
	struct rank_opts mk = { .market = "cheap" };
	CHECK(rank_compute(s, &mk, &r, err, sizeof err) < 0);
	teardown(s);
}

/* The host bench's rates rank per dollar too; a *_per_gpu rate is not divided again by --per gpu. */
static void host_run(struct store *s, const char *itype, int gpus, double ips, double ips_per_gpu)
{
	struct run_info ri = { .profile = "quick", .gpuvet_version = GPUVET_VERSION, .hostname = "test",
			       .provider = "test", .instance_type = itype, .region = "us-east-1", .gpu_count = gpus };
	int64_t id = -1;
	CHECK(store_begin_run(s, &ri, &id) == STORE_OK);
	CHECK(store_bench_begin(s, id, "host") == STORE_OK);
	CHECK(store_put_metric(s, id, "host", "host.decode.images_per_s", -1, ips, "images/s", NULL) == STORE_OK);
	CHECK(store_put_metric(s, id, "host", "host.decode.images_per_s_per_gpu", -1, ips_per_gpu, "images/s",
			       NULL) == STORE_OK);
	CHECK(store_bench_end(s, id, "host", "ok", NULL, 1.0, NULL) == STORE_OK);
	CHECK(store_finish_run(s, id, "complete") == STORE_OK);
}

static void test_host_rates(void)
{
	struct store *s = setup();
	char err[512];
	json_t *r = NULL;
	host_run(s, "big", 8, 16000, 2000);    /* 10 USD/h, 8 GPUs */
	host_run(s, "small", 1, 1500, 1500);   /* 1 USD/h, 1 GPU */
	struct rank_opts o = { .metric = "host.decode.images_per_s" };
	CHECK(rank_compute(s, &o, &r, err, sizeof err) == 0);
	if (r) {
		CHECK_STR(json_string_value(json_object_get(r, "unit")), "images/s");
		json_t *first = json_array_get(json_object_get(r, "rows"), 0);
		CHECK_STR(json_string_value(json_object_get(first, "instance_type")), "big");
		CHECK_NEAR(num(first, "value_per_dollar"), 16000 / 10.0, 1e-9);
		CHECK_NEAR(num(row_of(r, "small"), "value_per_dollar"), 1500, 1e-9);
		json_decref(r);
	}
	o = (struct rank_opts){ .metric = "host.decode.images_per_s_per_gpu", .per = "gpu" };
	CHECK(rank_compute(s, &o, &r, err, sizeof err) == 0);
	if (r) {
		json_t *big = row_of(r, "big");
		CHECK_NEAR(num(big, "value"), 2000, 1e-9);                 /* kept, not / 8 */
		CHECK_NEAR(num(big, "value_per_dollar"), 2000 / 1.25, 1e-9);
		CHECK_STR(json_string_value(json_object_get(json_array_get(json_object_get(r, "rows"), 0),
							    "instance_type")), "big");
		json_decref(r);
	}
	teardown(s);
}

/* A store of schema 2 (before rank's covering indexes), opened read-only as the report may: same answer. */
static void test_old_schema_read_only(void)
{
	struct store *s = setup();
	struct rank_opts o = { 0 };
	json_t *want = NULL, *got = NULL;
	char err[512];
	CHECK(rank_compute(s, &o, &want, err, sizeof err) == 0);
	CHECK(sqlite3_exec(store_db(s), "DROP INDEX metrics_head; DROP INDEX runs_sku; DROP INDEX flags_run;"
			   "CREATE INDEX runs_sku ON runs(provider, instance_type); CREATE INDEX flags_run ON flags(run_id);"
			   "PRAGMA user_version = 2", NULL, NULL, NULL) == SQLITE_OK);
	store_close(s);
	CHECK(store_open_readonly(db_path, &s) == STORE_OK);
	CHECK(rank_compute(s, &o, &got, err, sizeof err) == 0);
	if (want && got)
		CHECK(json_equal(want, got));
	json_decref(want);
	json_decref(got);
	teardown(s);
}

/*
 * Rankings over one gather (the report's) count what each asks for, exactly as each ranking alone: a run
 * with only the all-reduce counts for the all-reduce and the training score, not for the BF16 GEMM, and
 * its flags go only where it counts.
 */
static int64_t gather_fixture(struct store *s)
{
	int64_t ar = add_run(s, "test", "big", "us-east-1", 8, "allreduce.busbw.gbps", 120);
	int64_t bad = add_run(s, "test", "big", "us-east-1", 8, "allreduce.busbw.gbps", 5);
	add_run(s, NULL, NULL, NULL, 8, "allreduce.busbw.gbps", 90);   /* no provider: unnamed */
	CHECK(store_put_flag(s, ar, "AR_ONLY", "warning", "all-reduce only", "{}", NULL) == STORE_OK);
	CHECK(store_put_flag(s, bad, "CONTENTION", "critical", "another process", "{}", NULL) == STORE_OK);
	return bad;
}

static void test_gathered_rankings_count_as_alone(void)
{
	struct store *s = setup();
	int64_t bad = gather_fixture(s);
	struct rank_opts o[] = {
		{ .estimates_max = 5, .include_estimates = 1 }, { .market = "spot" }, { .per = "gpu" },
		{ .metric = "allreduce.busbw.gbps" }, { .metric = "score.training" }, { .metric = "score.data" },
		{ .metric = "memcpy.d2d.gbps" }, { .metric = "allreduce.busbw.gbps", .region = "us-west-2" },
	};
	size_t n = sizeof o / sizeof o[0];
	char err[512];
	struct rank_gather *g = rank_gather_new(s, o, n, err, sizeof err);
	CHECK(g != NULL);
	for (size_t i = 0; g && i < n; i++) {
		json_t *alone = NULL, *got = NULL;
		char e1[512] = "", e2[512] = "";
		int r1 = rank_compute(s, &o[i], &alone, e1, sizeof e1), r2 = rank_compute_gathered(s, g, &o[i], &got, e2,
												       sizeof e2);
		CHECK(r1 == r2 && !strcmp(e1, e2));
		CHECK((!alone && !got) || (alone && got && json_equal(alone, got)));
		if (i == 0 || i == 3) {   /* BF16: big's 3 runs, its flag; the all-reduce: its 2 runs and theirs */
			json_t *big = row_of(got, "big");
			CHECK(big && json_integer_value(json_object_get(big, "runs")) == (i ? 2 : 3));
			CHECK_STR(json_string_value(json_array_get(json_object_get(big, "flags"), 0)),
				  i ? "AR_ONLY" : "THROTTLE_POWER");
			CHECK(json_array_size(json_object_get(big, "flags")) == 1);
			CHECK(json_integer_value(json_object_get(got, "runs_left_out")) == (i ? 1 : 0));
			if (i)
				CHECK(json_integer_value(json_object_get(json_array_get(json_object_get(got, "left_out"), 0),
									  "run")) == bad);
		}
		if (i == 7)   /* no all-reduce run in us-west-2 (read apart: another region): why, as rank alone says it */
			CHECK(r2 < 0 && strstr(e2, "1 stored run(s) have allreduce.busbw.gbps but no provider"));
		json_decref(alone);
		json_decref(got);
	}
	rank_gather_delete(g);
	teardown(s);
}

TEST_MAIN(T(test_host_rates), T(test_old_schema_read_only), T(test_gathered_rankings_count_as_alone),
	  T(test_median_per_dollar_runs_and_flags), T(test_per_gpu_region_and_market), T(test_training_score),
	  T(test_estimates_are_marked), T(test_estimates_fall_back_to_achievable), T(test_critical_runs_left_out),
	  T(test_spot_beside_on_demand), T(test_refusals))
