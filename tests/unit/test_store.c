/*
 * test_store.c - the store's C API, with SQLite fault injection in the
 * style of SQLite's own tests: an allocator that fails at call N, looped
 * over N, then PRAGMA integrity_check and an all-or-nothing check.
 */
#include "tests/unit/t.h"
#include "results/store.h"
#include "runners/run.h"
#include "common/gpus.h"

#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char dir[256];

static const char *tmp_db(const char *name)
{
	static char path[512];
	if (!dir[0]) {
		const char *t = getenv("TMPDIR");
		snprintf(dir, sizeof dir, "%s/gpuvet-test-store-XXXXXX", t ? t : "/tmp");
		if (!mkdtemp(dir))
			abort();
	}
	snprintf(path, sizeof path, "%s/%s", dir, name);
	return path;
}

static json_t *sample_fp(const char *uuid)
{
	return json_pack("{s:s,s:{s:s,s:s,s:s,s:s,s:s,s:i},s:{s:[]},"
			 "s:[{s:s,s:s,s:f}],s:[{s:s,s:s,s:i,s:f,s:s,s:{s:i}}],"
			 "s:[{s:s,s:s,s:i,s:[[f,f],[f,f]]}],s:[{s:s,s:s,s:s}],s:[]}",
			 "schema", FINGERPRINT_SCHEMA,
			 "run", "uuid", uuid, "status", "complete", "started_at", "2026-11-21T00:00:00Z",
			 "provider", "aws", "instance_type", "p5.48xlarge", "gpu_count", 8,
			 "inventory", "gpus",
			 "benches", "name", "gemm", "status", "ok", "duration_s", 1.5,
			 "metrics", "bench", "gemm", "name", "gemm.bf16.tflops", "gpu", -1, "value", 5000.0, "unit",
			 "TFLOP/s", "params", "m", 8192,
			 "samples", "bench", "soak", "series", "soak.temp.c", "gpu", 0, "points", 0.0, 50.0, 1.0, 51.0,
			 "flags", "code", "CPU_STEAL", "severity", "warning", "message", "steal",
			 "verdicts");
}

static void test_open_create_reopen(void)
{
	struct store *s;
	const char *p = tmp_db("a/b/c.db");
	CHECK(store_open(p, &s) == STORE_OK);
	int64_t id = 0;
	struct run_info ri = { .profile = "quick", .gpuvet_version = "t", .provider = "aws" };
	CHECK(store_begin_run(s, &ri, &id) == STORE_OK);
	CHECK(id == 1);
	CHECK(store_bench_begin(s, id, "x") == STORE_OK);
	CHECK(store_put_metric(s, id, "x", "x.a.count", -1, 1.0, "count", NULL) == STORE_OK);
	double first[] = { 0.5, 2.0 }, more[] = { 1.5, 0.0 / 0.0, 2.5, -0.0 };
	CHECK(store_put_series(s, id, "x", "x.s.count", 0, first, 1) == STORE_OK);
	CHECK(store_put_series(s, id, "x", "x.s.count", 0, more, 2) == STORE_OK);  /* appended */
	CHECK(store_put_series(s, id, "x", "x.s.count", 1, more, 0) == STORE_OK);  /* nothing: no row */
	CHECK(store_bench_end(s, id, "x", "ok", NULL, 0.1, "{\"k\":1}") == STORE_OK);
	CHECK(store_finish_run(s, id, "complete") == STORE_OK);
	store_close(s);

	CHECK(store_open_readonly(p, &s) == STORE_OK);
	json_t *fp = NULL;
	int64_t latest = 0;
	CHECK(store_latest_run(s, &latest) == STORE_OK && latest == id);
	CHECK(store_load_fingerprint(s, id, &fp) == STORE_OK);
	CHECK_STR(json_string_value(json_object_get(json_object_get(fp, "run"), "status")), "complete");
	CHECK(json_array_size(json_object_get(fp, "metrics")) == 1);
	json_t *samples = json_object_get(fp, "samples");
	char *pts = json_dumps(json_object_get(json_array_get(samples, 0), "points"), JSON_COMPACT);
	CHECK(json_array_size(samples) == 1);
	CHECK_STR(pts, "[[0.5,2.0],[1.5,null],[2.5,-0.0]]");
	free(pts);
	CHECK(json_integer_value(json_object_get(json_object_get(json_array_get(json_object_get(fp, "benches"), 0),
								  "config"), "k")) == 1);
	json_decref(fp);
	CHECK(store_load_fingerprint(s, 99, &fp) == STORE_NOTFOUND);
	store_close(s);
}

static void test_resolve_and_dup(void)
{
	struct store *s;
	CHECK(store_open(tmp_db("dup.db"), &s) == STORE_OK);
	json_t *fp = sample_fp("11111111-2222-4333-8444-555555555555");
	int64_t id;
	CHECK(store_import_fingerprint(s, fp, &id) == STORE_OK);
	CHECK(store_import_fingerprint(s, fp, &id) == STORE_DUP);
	int64_t r = 0;
	CHECK(store_resolve_run(s, "1111", &r) == STORE_OK && r == id);
	CHECK(store_resolve_run(s, "1", &r) == STORE_OK && r == id);
	CHECK(store_resolve_run(s, "abc", &r) == STORE_NOTFOUND);
	CHECK(store_resolve_run(s, "2", &r) == STORE_NOTFOUND);
	json_decref(fp);
	store_close(s);
}

static void test_cpu_times(void)
{
	struct cpu_times t;
	CHECK(run_read_cpu_times("cpu  100 0 50 800 10 0 5 35 0 0\n", &t) == 0);
	CHECK(t.total == 1000 && t.steal == 35);
	CHECK(run_read_cpu_times("cpu0 1 2 3 4", &t) == -1);
	CHECK(run_read_cpu_times("cpu  1 2", &t) == -1);
}

static void test_stats(void)
{
	struct bench_stats st;
	double v[] = { 3, 1, 2, 10 };
	bench_stats(v, 4, &st);
	CHECK_NEAR(st.median, 2.5, 1e-12);
	CHECK_NEAR(st.min, 1, 0);
	CHECK_NEAR(st.spread, 9 / 2.5, 1e-12);
	bench_stats(v, 0, &st);
	CHECK(st.n == 0 && st.median == 0);
}

static void test_pct_of_peak(void)
{
	const struct gpu_ref *h100 = gpu_ref_find("H100-SXM");
	char dt[16];
	double pct, peak;
	CHECK(h100 != NULL);
	if (!h100)
		return;
	double bf16 = h100->peak_tflops[GPU_BF16];
	/* per GPU: against one GPU's peak */
	CHECK(run_pct_of_peak(h100, "gemm.bf16.tflops", 0, bf16 / 2, NULL, 8, dt, &pct, &peak) == 0);
	CHECK_STR(dt, "bf16");
	CHECK_NEAR(pct, 50, 1e-9);
	/* instance: the GPUs the bench loaded win over the inventory's count */
	json_t *p = json_pack("{s:i}", "gpus", 4);
	CHECK(run_pct_of_peak(h100, "gemm.bf16.tflops", -1, bf16 * 2, p, 8, dt, &pct, &peak) == 0);
	CHECK_NEAR(pct, 50, 1e-9);
	CHECK_NEAR(peak, bf16 * 4, 1e-9);
	json_decref(p);
	CHECK(run_pct_of_peak(h100, "gemm.bf16.tflops", -1, bf16 * 2, NULL, 8, dt, &pct, &peak) == 0);
	CHECK_NEAR(pct, 25, 1e-9);
	/* not a GEMM throughput, unknown dtype, no reference */
	CHECK(run_pct_of_peak(h100, "gemm.bf16.pct_of_peak", -1, 1, NULL, 8, dt, &pct, &peak) == -1);
	CHECK(run_pct_of_peak(h100, "gemm.int4.tflops", -1, 1, NULL, 8, dt, &pct, &peak) == -1);
	CHECK(run_pct_of_peak(h100, "memcpy.h2d.pinned.gbps", -1, 1, NULL, 8, dt, &pct, &peak) == -1);
	CHECK(run_pct_of_peak(NULL, "gemm.bf16.tflops", -1, 1, NULL, 8, dt, &pct, &peak) == -1);
}

/* ---- fault injection: an allocator that fails at call N ---- */

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

static void test_import_under_malloc_failure(void)
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
	json_t *base = sample_fp("00000000-0000-4000-8000-000000000000");
	CHECK(store_import_fingerprint(s, base, NULL) == STORE_OK);
	json_decref(base);
	store_close(s);

	int successes = 0;
	for (long n = 1; n < 400; n++) {
		char u[37];
		snprintf(u, sizeof u, "00000000-0000-4000-8000-%012ld", n);
		calls = 0;
		fail_at = -1;
		if (store_open(p, &s) != STORE_OK) {
			CHECK(0);
			break;
		}
		json_t *fp = sample_fp(u);
		fail_at = n;
		int rc = store_import_fingerprint(s, fp, NULL);
		fail_at = -1;
		json_decref(fp);
		store_close(s);
		successes += rc == STORE_OK;

		/* all or nothing, and the file stays sound */
		sqlite3 *db;
		CHECK(sqlite3_open(p, &db) == SQLITE_OK);
		sqlite3_stmt *st;
		CHECK(sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &st, NULL) == SQLITE_OK);
		CHECK(sqlite3_step(st) == SQLITE_ROW);
		CHECK_STR((const char *)sqlite3_column_text(st, 0), "ok");
		sqlite3_finalize(st);
		char sql[200];
		snprintf(sql, sizeof sql, "SELECT (SELECT count(*) FROM runs WHERE uuid='%s'),"
			 " (SELECT count(*) FROM metrics m JOIN runs r ON r.id=m.run_id WHERE r.uuid='%s')", u, u);
		CHECK(sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK);
		CHECK(sqlite3_step(st) == SQLITE_ROW);
		int runs = sqlite3_column_int(st, 0), metrics = sqlite3_column_int(st, 1);
		CHECK(runs == (rc == STORE_OK));
		CHECK(metrics == (rc == STORE_OK));
		sqlite3_finalize(st);
		sqlite3_close(db);
		if (rc == STORE_OK && calls < n)
			break; /* the whole import needed fewer allocations than n: every point was covered */
	}
	CHECK(successes >= 1);
	sqlite3_shutdown();
	sqlite3_config(SQLITE_CONFIG_MALLOC, &real_mem);
	sqlite3_initialize();
}

/* A store of schema 1 (before flags had a remediation) migrates; its flags keep their rows. */
static void test_migrate_remediation(void)
{
	const char *p = tmp_db("v1.db");
	sqlite3 *db;
	CHECK(sqlite3_open(p, &db) == SQLITE_OK);
	CHECK(sqlite3_exec(db, "PRAGMA application_id=1196447316; PRAGMA user_version=1;"
			   "CREATE TABLE runs (id INTEGER PRIMARY KEY, uuid TEXT NOT NULL UNIQUE, status TEXT NOT NULL,"
			   " profile TEXT, gpuvet_version TEXT, hostname TEXT, provider TEXT, instance_type TEXT, region TEXT,"
			   " gpu_model TEXT, gpu_count INTEGER NOT NULL DEFAULT 0, started_at TEXT NOT NULL, finished_at TEXT,"
			   " inventory TEXT);"
			   "CREATE TABLE flags (id INTEGER PRIMARY KEY, run_id INTEGER NOT NULL, code TEXT NOT NULL,"
			   " severity TEXT NOT NULL, message TEXT, evidence TEXT);"
			   "CREATE INDEX runs_sku ON runs(provider, instance_type);"
			   "CREATE INDEX flags_run ON flags(run_id);"
			   "CREATE TABLE metrics (id INTEGER PRIMARY KEY, run_id INTEGER NOT NULL, bench TEXT NOT NULL,"
			   " name TEXT NOT NULL, gpu INTEGER NOT NULL DEFAULT -1, value REAL, unit TEXT, params TEXT);"
			   "CREATE INDEX metrics_run ON metrics(run_id); CREATE INDEX metrics_name ON metrics(name, gpu);"
			   "CREATE TABLE benches (run_id INTEGER NOT NULL, name TEXT NOT NULL, status TEXT NOT NULL,"
			   " reason TEXT, duration_s REAL, config TEXT, PRIMARY KEY (run_id, name));"
			   "CREATE TABLE samples (run_id INTEGER NOT NULL, bench TEXT NOT NULL, series TEXT NOT NULL,"
			   " gpu INTEGER NOT NULL DEFAULT -1, x REAL, y REAL);"
			   "INSERT INTO runs (id, uuid, status, started_at) VALUES (1, 'u', 'complete', 't');"
			   "INSERT INTO flags (run_id, code, severity, message) VALUES (1, 'XID', 'critical', 'm');",
			   NULL, NULL, NULL) == SQLITE_OK);
	sqlite3_close(db);
	/* the v1 tables above are a subset: migration 2 adds the column, 3 and 4 indexes, 5 packs samples */
	struct store *s;
	CHECK(store_open(p, &s) == STORE_OK);
	if (!s)
		return;
	sqlite3_stmt *st;
	CHECK(sqlite3_prepare_v2(store_db(s), "SELECT count(*), count(remediation) FROM flags", -1, &st, NULL) == SQLITE_OK);
	CHECK(sqlite3_step(st) == SQLITE_ROW && sqlite3_column_int(st, 0) == 1 && sqlite3_column_int(st, 1) == 0);
	sqlite3_finalize(st);
	CHECK(store_put_flag(s, 1, "XID", "warning", "m2", "{}", "check the application") == STORE_OK);
	CHECK(sqlite3_prepare_v2(store_db(s), "SELECT remediation FROM flags WHERE message = 'm2'", -1, &st, NULL) ==
	      SQLITE_OK);
	CHECK(sqlite3_step(st) == SQLITE_ROW);
	CHECK_STR((const char *)sqlite3_column_text(st, 0), "check the application");
	sqlite3_finalize(st);
	/* migration 3: rank's and the report's covering indexes, flags_run now covers the severity */
	CHECK(sqlite3_prepare_v2(store_db(s), "SELECT group_concat(name) FROM (SELECT name FROM sqlite_master WHERE"
			       " type = 'index' AND sql LIKE '%severity%' OR name IN ('metrics_head') ORDER BY name)",
			       -1, &st, NULL) == SQLITE_OK);
	CHECK(sqlite3_step(st) == SQLITE_ROW);
	CHECK_STR((const char *)sqlite3_column_text(st, 0), "flags_run,metrics_head");
	sqlite3_finalize(st);
	/* migration 4: what `results list`, `export` and the report read in started order */
	CHECK(sqlite3_prepare_v2(store_db(s), "SELECT group_concat(name) FROM (SELECT name FROM sqlite_master WHERE"
			       " type = 'index' AND name IN ('runs_list', 'benches_list') ORDER BY name)",
			       -1, &st, NULL) == SQLITE_OK);
	CHECK(sqlite3_step(st) == SQLITE_ROW);
	CHECK_STR((const char *)sqlite3_column_text(st, 0), "benches_list,runs_list");
	sqlite3_finalize(st);
	/* migration 7: metrics keeps the two indexes its reads use (metrics_name was never read since 3) */
	CHECK(sqlite3_prepare_v2(store_db(s), "SELECT group_concat(name) FROM (SELECT name FROM sqlite_master WHERE"
			       " type = 'index' AND tbl_name = 'metrics' ORDER BY name)", -1, &st, NULL) == SQLITE_OK);
	CHECK(sqlite3_step(st) == SQLITE_ROW);
	CHECK_STR((const char *)sqlite3_column_text(st, 0), "metrics_head,metrics_run");
	sqlite3_finalize(st);
	store_close(s);
}

/* store_report_machines' count, and the UNION that counted them before as the oracle */
static void machines(struct store *s, int64_t *n, int64_t *want)
{
	sqlite3_stmt *st;
	*n = -1;
	*want = -2;
	CHECK(store_report_machines(s, n) == STORE_OK);
	CHECK(sqlite3_prepare_v2(store_db(s), "SELECT count(*) FROM (SELECT 'g' || uuid FROM gpus WHERE idx = 0 AND"
				 " uuid <> '' UNION SELECT 'h' || ifnull(provider, '') || '/' || ifnull(hostname, '') FROM"
				 " runs WHERE id NOT IN (SELECT run_id FROM gpus WHERE idx = 0 AND uuid <> ''))",
				 -1, &st, NULL) == SQLITE_OK);
	CHECK(sqlite3_step(st) == SQLITE_ROW);
	*want = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
}

/* The fleet's machines: a GPU 0 UUID, else provider and hostname; GPU rows in any order (a merged store's are not in
 * run order), a GPU 0 without a UUID and a run whose only GPU row is another's counted by host; run ids dense (a
 * bit each) and far apart (a sorted list). */
static void test_machines_in_any_order(void)
{
	struct store *s;
	int64_t id, n, want;
	char u[64];
	CHECK(store_open(tmp_db("machines.db"), &s) == STORE_OK);
	for (int i = 1; i <= 7; i++) {
		snprintf(u, sizeof u, "11111111-2222-4333-8444-%012d", i);
		json_t *fp = sample_fp(u);
		CHECK(store_import_fingerprint(s, fp, &id) == STORE_OK && id == i);
		json_decref(fp);
	}
	CHECK(sqlite3_exec(store_db(s), "INSERT INTO gpus (run_id, idx, uuid) VALUES (3, 0, 'GPU-a'), (1, 0, 'GPU-b'),"
			   " (2, 0, 'GPU-a'), (4, 0, ''), (5, 1, 'GPU-c');"
			   "UPDATE runs SET hostname = 'h1' WHERE id IN (4, 5, 6); UPDATE runs SET hostname = 'h2' WHERE id = 7;"
			   "UPDATE runs SET provider = 'lambda' WHERE id = 6;", NULL, NULL, NULL) == SQLITE_OK);
	machines(s, &n, &want);
	CHECK(n == 5 && want == 5);   /* GPU-a, GPU-b; aws/h1 (runs 4, 5), lambda/h1, aws/h2 */
	CHECK(sqlite3_exec(store_db(s), "INSERT INTO runs (id, uuid, status, started_at, provider, hostname) VALUES"
			   " (100000, 'far', 'complete', '2026-11-22T00:00:00Z', 'aws', 'h3');"
			   "INSERT INTO gpus (run_id, idx, uuid) VALUES (100000, 0, 'GPU-b');", NULL, NULL, NULL) == SQLITE_OK);
	machines(s, &n, &want);
	CHECK(n == 5 && want == 5);   /* run 100000 is GPU-b's again */
	CHECK(sqlite3_exec(store_db(s), "DELETE FROM gpus WHERE run_id = 100000", NULL, NULL, NULL) == SQLITE_OK);
	machines(s, &n, &want);
	CHECK(n == 6 && want == 6);   /* now by its host, aws/h3 */
	store_close(s);
}

/* issue 35 item 8: a 0-byte file read is "empty", not "an old schema (0)" (the user cannot write it to migrate) */
static void test_empty_file_read(void)
{
	const char *p = tmp_db("empty.db");
	FILE *f = fopen(p, "w");
	CHECK(f != NULL);
	if (f)
		fclose(f);
	struct store *s = NULL;
	CHECK(store_open_readonly(p, &s) != STORE_OK);
	CHECK(strstr(store_open_error(), "is empty") != NULL);
	CHECK(strstr(store_open_error(), "old schema") == NULL);
	store_close(s);
}

TEST_MAIN(T(test_open_create_reopen), T(test_empty_file_read), T(test_machines_in_any_order), T(test_migrate_remediation), T(test_resolve_and_dup), T(test_cpu_times), T(test_stats), T(test_pct_of_peak),
	  T(test_import_under_malloc_failure))
