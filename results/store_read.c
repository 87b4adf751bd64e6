/*
 * store_read.c - the store's read functions for the modules above it
 * (acceptance's fleet, rankings, the report): rows with their derived
 * values computed here once, so no other folder writes SQL.
 */
#include "results/store.h"
#include "results/store_int.h"
#include "common/util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int store_fleet_candidates(struct store *s, int64_t run_id, const char *digest, const char *gpu_model, int gpu_count,
			   const char *instance_type, int64_t **ids, size_t *n)
{
	sqlite3_stmt *st;
	*n = 0;
	*ids = NULL;
	if (store_prepare(s,
		"SELECT DISTINCT r.id FROM runs r JOIN verdicts v ON v.run_id = r.id AND v.verdict = 'accept' "
		"AND v.policy_digest = ?5 AND v.imported = 0 "
		"WHERE r.gpu_model = ?1 AND r.gpu_count = ?2 AND r.id <> ?3 "
		"AND (?4 IS NULL OR r.instance_type IS NULL OR lower(trim(r.instance_type)) = lower(trim(?4))) ORDER BY r.id", &st))
		return STORE_ERR;
	sqlite3_bind_text(st, 1, gpu_model ? gpu_model : "", -1, SQLITE_TRANSIENT);
	sqlite3_bind_int(st, 2, gpu_count);
	sqlite3_bind_int64(st, 3, run_id);
	store_bind_text(st, 4, instance_type);
	sqlite3_bind_text(st, 5, digest ? digest : "", -1, SQLITE_TRANSIENT);
	return store_step_ids(s, st, ids, n, "finding the fleet's accepted runs");
}

int store_reject_reasons(struct store *s, const char *digest, store_reason_fn fn, void *ud)
{
	sqlite3_stmt *st;
	int rc;
	if (store_schema_version(s) < 6)   /* no digest to know the page's policy's verdicts by: none said */
		return STORE_OK;
	if (store_prepare(s,
		"SELECT coalesce(json_extract(detail, '$.failed[0].flag'), json_extract(detail, '$.failed[0].metric'), '?'),"
		" count(*), max(run_id) FROM verdicts WHERE policy_digest = ?1 AND verdict = 'reject' AND imported = 0"
		" AND json_valid(detail) GROUP BY 1 ORDER BY 2 DESC, 1", &st))
		return STORE_ERR;
	sqlite3_bind_text(st, 1, digest ? digest : "", -1, SQLITE_TRANSIENT);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		if (fn(ud, (const char *)sqlite3_column_text(st, 0), sqlite3_column_int64(st, 1), sqlite3_column_int64(st, 2)))
			break;
	sqlite3_finalize(st);
	return rc == SQLITE_ROW || rc == SQLITE_DONE ? STORE_OK : store_fail(s, "reading the rejections' reasons");
}

int store_unjudged_runs(struct store *s, const char *digest, const char *since, int64_t **ids, size_t *n)
{
	sqlite3_stmt *st;
	*n = 0;
	*ids = NULL;
	if (store_prepare(s,
		"SELECT r.id FROM runs r WHERE (?2 IS NULL OR r.started_at >= ?2) AND NOT EXISTS (SELECT 1 FROM verdicts v "
		"WHERE v.run_id = r.id AND v.policy_digest = ?1 AND v.imported = 0) ORDER BY r.started_at, r.id", &st))
		return STORE_ERR;
	sqlite3_bind_text(st, 1, digest ? digest : "", -1, SQLITE_TRANSIENT);
	store_bind_text(st, 2, since);
	return store_step_ids(s, st, ids, n, "finding the runs not yet judged");
}

int store_each_run_sku(struct store *s, store_run_fn fn, void *ud)
{
	sqlite3_stmt *st;
	int rc;
	/* runs_list covers it from schema 4: the runs' inventories are never read */
	if (store_prepare(s, "SELECT id, provider, instance_type, region, gpu_model, gpu_count, profile FROM runs", &st))
		return STORE_ERR;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct store_run_row r = {
			.id = sqlite3_column_int64(st, 0),
			.provider = (const char *)sqlite3_column_text(st, 1),
			.instance_type = (const char *)sqlite3_column_text(st, 2),
			.region = (const char *)sqlite3_column_text(st, 3),
			.gpu_model = (const char *)sqlite3_column_text(st, 4),
			.gpu_count = sqlite3_column_int(st, 5),
			.profile = (const char *)sqlite3_column_text(st, 6),
		};
		if (fn(ud, &r))
			break;
	}
	sqlite3_finalize(st);
	return rc == SQLITE_ROW || rc == SQLITE_DONE ? STORE_OK : store_fail(s, "reading runs");
}

/* "col IN (?1,?2,...)" for n names, or "1" for none. */
static char *in_list(const char *col, size_t n)
{
	if (!n)
		return gv_strdup("1");
	size_t len = strlen(col) + 8 + n * 8;
	char *q = gv_malloc(len);
	size_t w = (size_t)snprintf(q, len, "%s IN (", col);
	for (size_t i = 0; i < n; i++)
		w += (size_t)snprintf(q + w, len - w, "%s?%zu", i ? "," : "", i + 1);
	snprintf(q + w, len - w, ")");
	return q;
}

int store_each_headline(struct store *s, const char *const *names, size_t n, store_metric_fn fn, void *ud)
{
	sqlite3_stmt *st;
	int rc;
	char *in = in_list("name", n);
	/* metrics_head covers it (the planner prefers metrics_name, which reads every row): one name comes in run order */
	char *sql = gv_asprintf("SELECT run_id, name, value, unit FROM metrics%s WHERE gpu = -1 AND %s ORDER BY run_id",
				store_schema_version(s) >= 3 ? " INDEXED BY metrics_head" : "", in);
	free(in);
	rc = store_prepare(s, sql, &st);
	free(sql);
	if (rc)
		return STORE_ERR;
	for (size_t i = 0; i < n; i++)
		sqlite3_bind_text(st, (int)i + 1, names[i], -1, SQLITE_TRANSIENT);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		double v = sqlite3_column_type(st, 2) == SQLITE_NULL ? NAN : sqlite3_column_double(st, 2);
		if (fn(ud, sqlite3_column_int64(st, 0), (const char *)sqlite3_column_text(st, 1), v,
		       (const char *)sqlite3_column_text(st, 3)))
			break;
	}
	sqlite3_finalize(st);
	return rc == SQLITE_ROW || rc == SQLITE_DONE ? STORE_OK : store_fail(s, "reading metrics");
}

/*
 * Each run's flags in run order, one scan of flags_run (run_id, severity,
 * code; covering): "severity code" joined by tabs, in the index's order.  A
 * ranking reads them once beside its metric rows (both in run order) instead
 * of a seek per row: at 1M runs a one-metric ranking took 2.7 s with a
 * subquery per row in the sqlite3 shell, 0.4 s without it, and this whole
 * scan 1.0 s.  Before schema 3 flags_run is (run_id) alone: SQLite sorts.
 */
int store_each_run_flags(struct store *s, store_run_flags_fn fn, void *ud)
{
	sqlite3_stmt *st;
	char *buf = NULL;
	size_t len = 0, cap = 0;
	int64_t run = -1;
	int rc, stop = 0;
	char *sql = gv_asprintf("SELECT run_id, coalesce(severity, '') || ' ' || code FROM flags%s"
				" WHERE code IS NOT NULL ORDER BY run_id, severity, code",
				store_schema_version(s) >= 3 ? " INDEXED BY flags_run" : "");
	rc = store_prepare(s, sql, &st);
	free(sql);
	if (rc)
		return STORE_ERR;
	while (!stop && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t r = sqlite3_column_int64(st, 0);
		const char *t = (const char *)sqlite3_column_text(st, 1);
		size_t tl = (size_t)sqlite3_column_bytes(st, 1);
		if (r != run && len) {
			stop = fn(ud, run, buf);
			len = 0;
		}
		run = r;
		if (len + tl + 2 > cap)
			buf = gv_realloc(buf, cap = 2 * (len + tl + 2));
		if (len)
			buf[len++] = '\t';
		memcpy(buf + len, t ? t : "", tl);
		len += tl;
		buf[len] = 0;
	}
	if (!stop && len && rc == SQLITE_DONE)
		fn(ud, run, buf);
	sqlite3_finalize(st);
	free(buf);
	return rc == SQLITE_ROW || rc == SQLITE_DONE ? STORE_OK : store_fail(s, "reading flags");
}

/* ---- connection settings for long reads ---- */

int store_is_readonly(struct store *s)
{
	return sqlite3_db_readonly(store_conn(s), "main") == 1;
}

const char *store_file(struct store *s)
{
	const char *f = sqlite3_db_filename(store_conn(s), "main");
	return f && *f ? f : NULL;
}

int store_read_cache(struct store *s, int mib)
{
	/* a page cache only: memory-mapping the file made a report's resident size grow with the store */
	char *sql = gv_asprintf("PRAGMA cache_size = -%d", mib * 1024);
	int rc = sqlite3_exec(store_conn(s), sql, NULL, NULL, NULL);
	free(sql);
	return rc == SQLITE_OK ? STORE_OK : store_fail(s, "enlarging the cache");
}

int store_read_begin(struct store *s)
{
	return sqlite3_get_autocommit(store_conn(s)) &&
	       sqlite3_exec(store_conn(s), "BEGIN", NULL, NULL, NULL) == SQLITE_OK;
}

void store_read_end(struct store *s, int began)
{
	if (began && sqlite3_exec(store_conn(s), "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
		sqlite3_exec(store_conn(s), "ROLLBACK", NULL, NULL, NULL);
}

/* ---- `results list` and `results export --format csv` ---- */

/* The status a fingerprint shows: a run marked running is live only while its writer holds its lock. */
static const char *shown_status(struct store *s, int64_t id, const char *status)
{
	if (status && !strcmp(status, "complete"))
		return "complete";
	return status && !strcmp(status, "running") && store_run_live(s, id) ? "running" : "incomplete";
}

/* Per run id: benches but the harness, those ok, flags. */
struct list_counts {
	int64_t max_id;
	int (*c)[3];
};

/* One pass over a covering index each: bench status by run (benches_list), flags by run (flags_run). */
static int list_counts_load(struct store *s, struct list_counts *lc)
{
	sqlite3_stmt *st;
	int rc;
	lc->c = NULL;
	if (store_prepare(s, "SELECT max(id) FROM runs", &st))
		return STORE_ERR;
	lc->max_id = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
	sqlite3_finalize(st);
	if (lc->max_id < 0 || lc->max_id > ((int64_t)1 << 26))
		return STORE_OK;   /* ids far from a count: the per-run counts of the list's statement */
	lc->c = gv_calloc((size_t)lc->max_id + 1, sizeof *lc->c);
	static const char *const sql[] = {
		"SELECT run_id, count(*), sum(status = 'ok') FROM benches WHERE name <> 'harness' GROUP BY run_id",
		"SELECT run_id, 0, 0, count(*) FROM flags GROUP BY run_id",
	};
	for (int q = 0; q < 2; q++) {
		if (store_prepare(s, sql[q], &st))
			goto fail;
		while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
			int64_t id = sqlite3_column_int64(st, 0);
			if (id < 0 || id > lc->max_id)
				continue;   /* a row whose run is gone */
			if (q == 0) {
				lc->c[id][0] = sqlite3_column_int(st, 1);
				lc->c[id][1] = sqlite3_column_int(st, 2);
			} else {
				lc->c[id][2] = sqlite3_column_int(st, 3);
			}
		}
		sqlite3_finalize(st);
		if (rc != SQLITE_DONE) {
			store_fail(s, "counting benches and flags");
			goto fail;
		}
	}
	return STORE_OK;
fail:
	free(lc->c);
	lc->c = NULL;
	return STORE_ERR;
}

struct store_run_row store_run_at(sqlite3_stmt *st)
{
	return (struct store_run_row){
		.id = sqlite3_column_int64(st, 0),
		.uuid = (const char *)sqlite3_column_text(st, 1),
		.status = (const char *)sqlite3_column_text(st, 2),
		.profile = (const char *)sqlite3_column_text(st, 3),
		.gpuvet_version = (const char *)sqlite3_column_text(st, 4),
		.hostname = (const char *)sqlite3_column_text(st, 5),
		.provider = (const char *)sqlite3_column_text(st, 6),
		.instance_type = (const char *)sqlite3_column_text(st, 7),
		.region = (const char *)sqlite3_column_text(st, 8),
		.gpu_model = (const char *)sqlite3_column_text(st, 9),
		.gpu_count = sqlite3_column_int(st, 10),
		.started_at = (const char *)sqlite3_column_text(st, 11),
	};
}

int store_each_list_row(struct store *s, store_list_fn fn, void *ud)
{
	sqlite3_stmt *st;
	int rc;
	struct list_counts lc;
	if (list_counts_load(s, &lc))
		return STORE_ERR;
	/*
	 * runs_list orders and covers the runs (schema 3); the counts come from
	 * one pass over each table above, or, for ids too sparse for an array,
	 * from a range of a covering index per run.
	 */
	/* the verdict (imported ones are history: schema 6 marks them) and the flags a person reads in the list:
	   an index range each (the verdicts' unique key and flags_run) */
	char *sql = gv_asprintf("SELECT " STORE_RUN_COLS ", r.finished_at, %s,"
		" (SELECT v.verdict FROM verdicts v WHERE v.run_id = r.id%s ORDER BY v.at DESC, v.id DESC LIMIT 1),"
		" (SELECT group_concat(code, ',') FROM (SELECT DISTINCT f.code FROM flags f WHERE f.run_id = r.id"
		"  AND f.severity IN ('critical', 'warning') ORDER BY f.severity = 'warning', f.code))"
		" FROM runs r ORDER BY r.started_at, r.id", lc.c ? "0, 0, 0" :
		"(SELECT count(*) FROM benches b WHERE b.run_id = r.id AND b.name <> 'harness'),"
		" (SELECT count(*) FROM benches b WHERE b.run_id = r.id AND b.name <> 'harness' AND b.status = 'ok'),"
		" (SELECT count(*) FROM flags f WHERE f.run_id = r.id)", store_schema_version(s) >= 6 ? " AND NOT v.imported" : "");
	int prc = store_prepare(s, sql, &st);
	free(sql);
	if (prc) {
		free(lc.c);
		return STORE_ERR;
	}
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t id = sqlite3_column_int64(st, 0);
		int in = lc.c && id >= 0 && id <= lc.max_id;
		struct store_list_row r = {
			.run = store_run_at(st),
			.finished_at = (const char *)sqlite3_column_text(st, 12),
			.benches = in ? lc.c[id][0] : sqlite3_column_int(st, 13),
			.benches_ok = in ? lc.c[id][1] : sqlite3_column_int(st, 14),
			.flags = in ? lc.c[id][2] : sqlite3_column_int(st, 15),
			.verdict = (const char *)sqlite3_column_text(st, 16),
			.raised = (const char *)sqlite3_column_text(st, 17),
		};
		r.run.status = shown_status(s, id, r.run.status);
		if (fn(ud, &r))
			break;
	}
	sqlite3_finalize(st);
	free(lc.c);
	return rc == SQLITE_ROW || rc == SQLITE_DONE ? STORE_OK : store_fail(s, "listing runs");
}

int store_each_metric_row(struct store *s, int64_t run_id, store_metric_row_fn fn, void *ud)
{
	sqlite3_stmt *st;
	int rc;
	/*
	 * The runs in started order (runs_list, covering), each run's metrics in
	 * stored order (metrics_run: run_id, then the rowid): no sort of the
	 * metric rows, whatever the store's size.
	 */
	if (store_prepare(s,
		"SELECT r.id, r.uuid, r.started_at, r.status, r.provider, r.instance_type, r.region,"
		" r.gpu_model, r.gpu_count, m.bench, m.name, m.gpu, m.value, m.unit, m.params"
		" FROM runs r JOIN metrics m ON m.run_id = r.id WHERE ?1 = 0 OR r.id = ?1"
		" ORDER BY r.started_at, r.id, m.id", &st))
		return STORE_ERR;
	sqlite3_bind_int64(st, 1, run_id);
	int64_t last = 0;
	const char *shown = NULL;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t id = sqlite3_column_int64(st, 0);
		if (!shown || id != last)
			shown = shown_status(s, id, (const char *)sqlite3_column_text(st, 3));
		last = id;
		struct store_metric_row r = {
			.run = {
				.id = id,
				.uuid = (const char *)sqlite3_column_text(st, 1),
				.started_at = (const char *)sqlite3_column_text(st, 2),
				.status = shown,
				.provider = (const char *)sqlite3_column_text(st, 4),
				.instance_type = (const char *)sqlite3_column_text(st, 5),
				.region = (const char *)sqlite3_column_text(st, 6),
				.gpu_model = (const char *)sqlite3_column_text(st, 7),
				.gpu_count = sqlite3_column_int(st, 8),
			},
			.bench = (const char *)sqlite3_column_text(st, 9),
			.name = (const char *)sqlite3_column_text(st, 10),
			.gpu = sqlite3_column_int(st, 11),
			.has_value = sqlite3_column_type(st, 12) != SQLITE_NULL,
			.value = sqlite3_column_double(st, 12),
			.unit = (const char *)sqlite3_column_text(st, 13),
			.params = (const char *)sqlite3_column_text(st, 14),
			.params_len = (size_t)sqlite3_column_bytes(st, 14),
		};
		if (fn(ud, &r))
			break;
	}
	sqlite3_finalize(st);
	return rc == SQLITE_ROW || rc == SQLITE_DONE ? STORE_OK : store_fail(s, "reading metrics");
}
