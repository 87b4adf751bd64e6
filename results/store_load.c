/*
 * store_load.c - a stored run read back as a fingerprint (store.h store_load_fingerprint),
 * and the run lookups (latest, by id or uuid prefix, the list).
 */
#include "results/store.h"
#include "results/store_int.h"
#include "common/util.h"
#include "results/fp_check.h"
#include "common/ident.h"

#include <errno.h>
#include <pwd.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

/* ---- reading ---- */

int store_latest_run(struct store *s, int64_t *run_id)
{
	sqlite3_stmt *st;
	/*
	 * the run stored last (by insertion), never the latest date a run carries: an imported
	 * fingerprint dated 2099, a node whose clock was once ahead or a merged store would
	 * otherwise be judged instead of the run just measured (docs/acceptance.md)
	 */
	if (store_prepare(s, "SELECT id FROM runs ORDER BY id DESC LIMIT 1", &st))
		return STORE_ERR;
	int rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		*run_id = sqlite3_column_int64(st, 0);
		sqlite3_finalize(st);
		return STORE_OK;
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return store_fail(s, "finding the latest run");
	sto_set_err(s, "database '%s' has no runs", s->path);
	return STORE_NOTFOUND;
}

int store_resolve_run(struct store *s, const char *id_or_uuid, int64_t *run_id)
{
	long id;
	sqlite3_stmt *st;
	/* a run number has no leading zero: "00000003" is a uuid prefix, never run 3 */
	if (id_or_uuid[0] != '0' && gv_parse_long(id_or_uuid, 1, LONG_MAX, &id) == 0) {
		if (store_prepare(s, "SELECT id FROM runs WHERE id = ?", &st))
			return STORE_ERR;
		sqlite3_bind_int64(st, 1, id);
		int rc = sqlite3_step(st);
		sqlite3_finalize(st);
		if (rc == SQLITE_ROW) {
			*run_id = id;
			return STORE_OK;
		}
		/* not a run number: maybe a uuid prefix made of digits */
	}
	{
		size_t n = strlen(id_or_uuid);
		if (n < 4 || n > 36 || strspn(id_or_uuid, "0123456789abcdefABCDEF-") != n) {
			sto_set_err(s, "no run '%s' (give a run id or a uuid prefix of at least 4 characters)", id_or_uuid);
			return STORE_NOTFOUND;
		}
		if (store_prepare(s, "SELECT id FROM runs WHERE substr(uuid, 1, ?) = lower(?) LIMIT 2", &st))
			return STORE_ERR;
		sqlite3_bind_int(st, 1, (int)n);
		store_bind_text(st, 2, id_or_uuid);
	}
	int found = 0, rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		*run_id = sqlite3_column_int64(st, 0);
		found++;
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return store_fail(s, "finding the run");
	if (found == 1)
		return STORE_OK;
	sto_set_err(s, found ? "run '%s' is ambiguous: give more of the uuid" : "no run '%s' in the store", id_or_uuid);
	return STORE_NOTFOUND;
}

int store_list_runs(struct store *s, int64_t **ids, size_t *n)
{
	sqlite3_stmt *st;
	*ids = NULL;
	*n = 0;
	if (store_prepare(s, "SELECT id FROM runs ORDER BY started_at, id", &st))
		return STORE_ERR;
	return store_step_ids(s, st, ids, n, "listing runs");
}

static json_t *col_text(sqlite3_stmt *st, int i)
{
	const unsigned char *t = sqlite3_column_text(st, i);
	return t ? json_string((const char *)t) : json_null();
}

static json_t *col_real(sqlite3_stmt *st, int i)
{
	return sqlite3_column_type(st, i) == SQLITE_NULL ? json_null() : json_real(sqlite3_column_double(st, i));
}

/* JSON text column parsed, or null (a stored document is ours: corrupt text shows as null). */
static json_t *col_json(sqlite3_stmt *st, int i)
{
	const char *t = (const char *)sqlite3_column_text(st, i);
	if (!t)
		return json_null();
	json_t *j = json_loads(t, JSON_DECODE_ANY, NULL);
	return j ? j : json_null();
}

static void set_nonnull(json_t *o, const char *k, json_t *v)
{
	json_object_set_new(o, k, v ? v : json_null());
}

/* run.gpuvet_build from run_builds (schema 9), when the run has one. */
static int load_build(struct store *s, int64_t run_id, json_t *run)
{
	sqlite3_stmt *st;
	if (store_prepare(s, "SELECT git_commit, built_at, release FROM run_builds WHERE run_id = ?", &st))
		return STORE_ERR;
	sqlite3_bind_int64(st, 1, run_id);
	int rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		json_object_set_new(run, "gpuvet_build", json_pack("{s:o, s:o, s:b}", "commit", col_text(st, 0),
								     "built_at", col_text(st, 1), "release",
								     sqlite3_column_int(st, 2)));
	sqlite3_finalize(st);
	return rc == SQLITE_ROW || rc == SQLITE_DONE ? STORE_OK : store_fail(s, "reading the run's gpuvet build");
}

/* A run's row as the fingerprint's "run" and "inventory"; STORE_NOTFOUND when there is none. */
static int load_run_head(struct store *s, int64_t run_id, json_t *fp)
{
	sqlite3_stmt *st;
	int rc = sto_run_head(s, run_id, &st);
	if (rc)
		return rc;
	json_t *run = json_object();
	json_object_set_new(run, "id", json_integer(sqlite3_column_int64(st, 0)));
	json_object_set_new(run, "uuid", col_text(st, 1));
	json_object_set_new(run, "status", json_string(sto_run_status(s, run_id, (const char *)sqlite3_column_text(st, 2))));
	static const char *const text_cols[] = { NULL, NULL, NULL, "profile", "gpuvet_version", "hostname",
						 "started_at", "finished_at", "provider", "instance_type", "region",
						 "gpu_model" };
	for (int i = 3; i < 12; i++)
		json_object_set_new(run, text_cols[i], col_text(st, i));
	json_object_set_new(run, "gpu_count", json_integer(sqlite3_column_int(st, 12)));
	json_object_set_new(fp, "run", run);
	json_t *inv = col_json(st, 13);
	json_object_set_new(fp, "inventory", json_is_object(inv) ? inv : (json_decref(inv), json_object()));
	sqlite3_finalize(st);
	return s->version >= 9 ? load_build(s, run_id, run) : STORE_OK;
}

/*
 * One child table of a run as an array of objects under key: the columns
 * named in cols[] (a leading '@' parses the column as JSON, '#' reads it as
 * a number, '%' an integer, '{' JSON that must be an object).
 */
static int load_rows(struct store *s, int64_t run_id, json_t *fp, const char *key, const char *sql,
		     const char *const *cols, int ncols)
{
	sqlite3_stmt *st;
	json_t *arr = json_array();
	json_object_set_new(fp, key, arr);
	if (store_prepare(s, sql, &st))
		return STORE_ERR;
	sqlite3_bind_int64(st, 1, run_id);
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		json_t *o = json_object();
		for (int i = 0; i < ncols; i++) {
			const char *c = cols[i];
			if (*c == '@') {
				set_nonnull(o, c + 1, col_json(st, i));
			} else if (*c == '#') {
				set_nonnull(o, c + 1, col_real(st, i));
			} else if (*c == '%') {
				json_object_set_new(o, c + 1, json_integer(sqlite3_column_int(st, i)));
			} else if (*c == '?') {
				json_object_set_new(o, c + 1, json_boolean(sqlite3_column_int(st, i)));
			} else if (*c == '{') {
				json_t *j = col_json(st, i);
				json_object_set_new(o, c + 1, json_is_object(j) ? j : (json_decref(j), json_object()));
			} else {
				set_nonnull(o, c, col_text(st, i));
			}
		}
		json_array_append_new(arr, o);
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? STORE_OK : store_fail(s, "reading the run");
}

/* A samples entry {bench, series, gpu, points: []} appended to arr; returns its points. */
static json_t *new_series_entry(json_t *arr, const char *bench, const char *series, int gpu)
{
	json_t *cur = json_object(), *pts = json_array();
	if (bench)
		json_object_set_new(cur, "bench", json_string(bench));
	json_object_set_new(cur, "series", json_string(series ? series : ""));
	json_object_set_new(cur, "gpu", json_integer(gpu));
	json_object_set_new(cur, "points", pts);
	json_array_append_new(arr, cur);
	return pts;
}

static json_t *real_or_null(double v)
{
	return v == v ? json_real(v) : json_null();
}

/* A version-2 to -4 store (read-only): a row per point. */
static int load_sample_rows(struct store *s, int64_t run_id, json_t *arr)
{
	sqlite3_stmt *st;
	json_t *cur = NULL, *pts = NULL;
	if (store_prepare(s, "SELECT bench, series, gpu, x, y FROM samples WHERE run_id = ? ORDER BY series, gpu, rowid", &st))
		return STORE_ERR;
	sqlite3_bind_int64(st, 1, run_id);
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *series = (const char *)sqlite3_column_text(st, 1);
		int gpu = sqlite3_column_int(st, 2);
		if (!cur || strcmp(json_string_value(json_object_get(cur, "series")), series ? series : "") ||
		    json_integer_value(json_object_get(cur, "gpu")) != gpu) {
			pts = new_series_entry(arr, (const char *)sqlite3_column_text(st, 0), series, gpu);
			cur = json_array_get(arr, json_array_size(arr) - 1);
		}
		json_array_append_new(pts, json_pack("[oo]", col_real(st, 3), col_real(st, 4)));
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? STORE_OK : store_fail(s, "reading the run");
}

/* The samples of a run, a series per row, its points unpacked into [x, y] pairs. */
static int load_samples(struct store *s, int64_t run_id, json_t *fp)
{
	sqlite3_stmt *st;
	json_t *arr = json_array();
	json_object_set_new(fp, "samples", arr);
	if (s->version < 5)
		return load_sample_rows(s, run_id, arr);
	if (store_prepare(s, "SELECT bench, series, gpu, points FROM series WHERE run_id = ? ORDER BY series, gpu, bench", &st))
		return STORE_ERR;
	sqlite3_bind_int64(st, 1, run_id);
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		json_t *pts = new_series_entry(arr, (const char *)sqlite3_column_text(st, 0),
					       (const char *)sqlite3_column_text(st, 1), sqlite3_column_int(st, 2));
		const unsigned char *b = sqlite3_column_blob(st, 3);
		size_t n = (size_t)sqlite3_column_bytes(st, 3) / STORE_POINT_BYTES;
		for (size_t i = 0; i < n; i++)
			json_array_append_new(pts, json_pack("[oo]", real_or_null(sto_unpack_double(b + STORE_POINT_BYTES * i)),
							     real_or_null(sto_unpack_double(b + STORE_POINT_BYTES * i + 8))));
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? STORE_OK : store_fail(s, "reading the run");
}

int store_load_fingerprint(struct store *s, int64_t run_id, json_t **out)
{
	static const char *const bench_cols[] = { "name", "status", "reason", "#duration_s", "@config" };
	static const char *const metric_cols[] = { "bench", "name", "%gpu", "#value", "unit", "{params" };
	static const char *const flag_cols[] = { "code", "severity", "message", "@evidence", "remediation" };
	static const char *const verdict_cols[] = { "verdict", "policy", "at", "@detail", "policy_digest",
						    "policy_source", "?imported" };
	json_t *fp = json_object();
	*out = NULL;
	json_object_set_new(fp, "schema", json_string(FINGERPRINT_SCHEMA));
	int rc = load_run_head(s, run_id, fp);
	if (!rc)
		rc = load_rows(s, run_id, fp, "benches",
			       "SELECT name, status, reason, duration_s, config FROM benches WHERE run_id = ? ORDER BY rowid",
			       bench_cols, 5);
	if (!rc)
		rc = load_rows(s, run_id, fp, "metrics",
			       "SELECT bench, name, gpu, value, unit, params FROM metrics WHERE run_id = ? ORDER BY id",
			       metric_cols, 6);
	if (!rc)
		rc = load_samples(s, run_id, fp);
	if (!rc)
		rc = load_rows(s, run_id, fp, "flags",
			       "SELECT code, severity, message, evidence, remediation FROM flags WHERE run_id = ?"
			       " ORDER BY id", flag_cols, 5);
	if (!rc)
		rc = load_rows(s, run_id, fp, "verdicts", s->version >= 6 ?
			       "SELECT verdict, policy, at, detail, policy_digest, policy_source, imported FROM verdicts"
			       " WHERE run_id = ? ORDER BY at, id" :
			       "SELECT verdict, policy, at, detail, '', NULL, 0 FROM verdicts WHERE run_id = ? ORDER BY at, id",
			       verdict_cols, 7);
	if (rc) {
		json_decref(fp);
		return rc;
	}
	*out = fp;
	return STORE_OK;
}

