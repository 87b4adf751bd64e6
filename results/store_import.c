/*
 * store_import.c - fingerprints from outside into the store (store.h): one from a parsed
 * text or a json_t, in batches of one transaction, and whole stores merged.
 */
#include "results/store.h"
#include "results/store_int.h"
#include "common/util.h"
#include "results/fp_check.h"
#include "results/run_digest.h"
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

/* ---- import and merge ---- */

static const char *jstr(const struct jtree *t, uint32_t o, const char *k)
{
	return jt_str(t, jt_get(t, o, k));
}

static int valid_status(const char *s, const char *const *allowed)
{
	if (!s)
		return 0;
	for (; *allowed; allowed++)
		if (!strcmp(s, *allowed))
			return 1;
	return 0;
}

/* A number as double; NaN for absent or null (stored as NULL). -1 when neither number nor null. */
static int jnum(const struct jtree *t, uint32_t v, double *out)
{
	if (jt_number(t, v, out))
		return 0;
	if (jt_type(t, v) == JT_ABSENT || jt_type(t, v) == JT_NULL) {
		*out = 0.0 / 0.0;
		return 0;
	}
	return -1;
}

/* An optional GPU index (fp_check bounded it); -1 when absent. */
static int jgpu(const struct jtree *t, uint32_t o)
{
	uint32_t g = jt_get(t, o, "gpu");
	return g ? (int)jt_int(t, g) : -1;
}

static int import_run(struct store *s, const struct jtree *t, uint32_t fp, int64_t *run_id)
{
	uint32_t run = jt_get(t, fp, "run"), inv = jt_get(t, fp, "inventory"), g;
	const char *uuid = jstr(t, run, "uuid"), *status = jstr(t, run, "status");
	uint32_t gc = jt_get(t, run, "gpu_count");
	char *inv_text = jt_text(t, inv);
	/* times as instants in UTC, so that runs order right whatever offset their writers used */
	char started[48], finished[48];
	const char *st_at = jstr(t, run, "started_at"), *fin_at = jstr(t, run, "finished_at");
	if (st_at && !fp_iso8601_utc(st_at, started, sizeof started))
		st_at = started;
	if (fin_at && !fp_iso8601_utc(fin_at, finished, sizeof finished))
		fin_at = finished;
	int rc = sto_insert_run(s, uuid, status && !strcmp(status, "complete") ? "complete" : "incomplete",
			    jstr(t, run, "profile"), jstr(t, run, "gpuvet_version"), jstr(t, run, "hostname"),
			    jstr(t, run, "provider"), jstr(t, run, "instance_type"), jstr(t, run, "region"),
			    jstr(t, run, "gpu_model"), (int)jt_int(t, gc), st_at, fin_at, inv_text, run_id);
	free(inv_text);
	if (rc == STORE_DUP)
		sto_set_err(s, "run %s is already in the store", uuid);
	size_t i;
	jt_foreach(t, jt_get(t, inv, "gpus"), i, g) {
		uint32_t ix = jt_get(t, g, "index");
		if (rc == STORE_OK)
			rc = sto_insert_gpu(s, *run_id, jt_is_int(t, ix) ? jt_int(t, ix) : (long long)i, jstr(t, g, "name"),
					jstr(t, g, "uuid"), jstr(t, g, "reference_model"));
	}
	return rc;
}

static int import_benches(struct store *s, const struct jtree *t, uint32_t fp, int64_t run_id)
{
	static const char *const bench_st[] = { "ok", "skipped", "failed", "timed_out", NULL };
	size_t i;
	uint32_t e;
	jt_foreach(t, jt_get(t, fp, "benches"), i, e) {
		const char *name = jstr(t, e, "name"), *st = jstr(t, e, "status");
		double dur;
		if (!name || !valid_status(st, bench_st) || jnum(t, jt_get(t, e, "duration_s"), &dur)) {
			sto_set_err(s, "fingerprint: benches[%zu] needs name, status (ok|skipped|failed|timed_out)", i);
			return STORE_ERR;
		}
		char *cfg = jt_text(t, jt_get(t, e, "config"));
		int rc = sto_insert_bench(s, run_id, name, st, jstr(t, e, "reason"), dur, cfg);
		free(cfg);
		if (rc)
			return rc;
	}
	return STORE_OK;
}

static int import_metrics(struct store *s, const struct jtree *t, uint32_t fp, int64_t run_id)
{
	size_t i;
	uint32_t e;
	jt_foreach(t, jt_get(t, fp, "metrics"), i, e) {
		const char *name = jstr(t, e, "name"), *bench = jstr(t, e, "bench");
		double v;
		if (!name || jnum(t, jt_get(t, e, "value"), &v)) {
			sto_set_err(s, "fingerprint: metrics[%zu] needs a name and a numeric value", i);
			return STORE_ERR;
		}
		char *params = jt_text(t, jt_get(t, e, "params"));
		int rc = store_put_metric(s, run_id, bench ? bench : "", name, jgpu(t, e), v, jstr(t, e, "unit"), params);
		free(params);
		if (rc)
			return rc;
	}
	return STORE_OK;
}

/* A series' points packed straight from the text's numbers. */
static int import_samples(struct store *s, const struct jtree *t, uint32_t fp, int64_t run_id)
{
	size_t i, j;
	uint32_t e, p;
	jt_foreach(t, jt_get(t, fp, "samples"), i, e) {
		const char *series = jstr(t, e, "series"), *bench = jstr(t, e, "bench");
		uint32_t pts = jt_get(t, e, "points");
		if (!series || jt_type(t, pts) != JT_ARR) {
			sto_set_err(s, "fingerprint: samples[%zu] needs a series and points", i);
			return STORE_ERR;
		}
		unsigned char *blob = sto_series_blob(s, series, jt_size(t, pts));
		if (!blob)
			return STORE_ERR;
		jt_foreach(t, pts, j, p) {
			uint32_t px = jt_first(t, p), py = px ? jt_next(t, p, px) : 0;
			double x, y;
			if (jt_size(t, p) != 2 || jnum(t, px, &x) || jnum(t, py, &y)) {
				free(blob);
				sto_set_err(s, "fingerprint: samples[%zu].points[%zu] is not [x, y]", i, j);
				return STORE_ERR;
			}
			sto_pack_double(blob + STORE_POINT_BYTES * j, x);
			sto_pack_double(blob + STORE_POINT_BYTES * j + 8, y);
		}
		int rc = sto_put_series_blob(s, run_id, bench ? bench : "", series, jgpu(t, e), blob, jt_size(t, pts));
		if (rc)
			return rc;
	}
	return STORE_OK;
}

static int import_flags(struct store *s, const struct jtree *t, uint32_t fp, int64_t run_id)
{
	static const char *const sev[] = { "critical", "warning", "info", NULL };
	size_t i;
	uint32_t e;
	jt_foreach(t, jt_get(t, fp, "flags"), i, e) {
		const char *code = jstr(t, e, "code"), *sv = jstr(t, e, "severity");
		if (!code || !valid_status(sv, sev)) {
			sto_set_err(s, "fingerprint: flags[%zu] needs a code and a severity (critical|warning|info)", i);
			return STORE_ERR;
		}
		char *ev = jt_text(t, jt_get(t, e, "evidence"));
		int rc = sto_insert_flag(s, run_id, code, sv, jstr(t, e, "message"), ev, jstr(t, e, "remediation"));
		free(ev);
		if (rc)
			return rc;
	}
	return STORE_OK;
}

static int import_verdicts(struct store *s, const struct jtree *t, uint32_t fp, int64_t run_id)
{
	static const char *const verd[] = { "accept", "reject", "unmeasurable", NULL };
	size_t i;
	uint32_t e;
	jt_foreach(t, jt_get(t, fp, "verdicts"), i, e) {
		const char *v = jstr(t, e, "verdict"), *pol = jstr(t, e, "policy"), *at = jstr(t, e, "at");
		if (!valid_status(v, verd) || !pol || !at) {
			sto_set_err(s, "fingerprint: verdicts[%zu] needs verdict, policy and at", i);
			return STORE_ERR;
		}
		char *d = jt_text(t, jt_get(t, e, "detail"));
		/* judged elsewhere: kept as history, marked imported, counting for nothing (docs/acceptance.md) */
		struct sto_verdict sv = { v, pol, jstr(t, e, "policy_digest"), jstr(t, e, "policy_source"), d, at, 1 };
		int rc = sto_insert_verdict(s, run_id, &sv);
		free(d);
		if (rc)
			return rc;
	}
	return STORE_OK;
}

/*
 * The run and its rows; fp_check has passed.  STORE_DUP only from the run's
 * row (its uuid), before anything of it is written: a constraint after that
 * is an error, never "already present" (inside a batch nothing undoes it).
 */
static int import_body(struct store *s, const struct jtree *t, uint32_t fp, int64_t *run_id)
{
	int rc = import_run(s, t, fp, run_id);
	if (rc != STORE_OK)
		return rc;
	rc = import_benches(s, t, fp, *run_id);
	if (rc == STORE_OK)
		rc = import_metrics(s, t, fp, *run_id);
	if (rc == STORE_OK)
		rc = import_samples(s, t, fp, *run_id);
	if (rc == STORE_OK)
		rc = import_flags(s, t, fp, *run_id);
	if (rc == STORE_OK)
		rc = import_verdicts(s, t, fp, *run_id);
	return rc == STORE_DUP ? STORE_ERR : rc;
}

/*
 * A run copied while it was still running (a merge during the run) or cut
 * short is replaced by a later complete copy of the same run, so the empty
 * copy does not stay forever.  Inside the import's transaction.
 */
static int replace_partial_copy(struct store *s, const struct jtree *t, uint32_t fp)
{
	uint32_t run = jt_get(t, fp, "run");
	const char *status = jstr(t, run, "status"), *uuid = jstr(t, run, "uuid");
	if (!status || !uuid || strcmp(status, "complete"))
		return STORE_OK;
	sqlite3_stmt *st;
	/* one kept lookup of the uuid per run: most imports find none and write no DELETE */
	if (sto_prepare_kept(s, "SELECT id, status FROM runs WHERE uuid = ?", &st))
		return STORE_ERR;
	store_bind_text(st, 1, uuid);
	int src = sqlite3_step(st);
	int64_t id = src == SQLITE_ROW ? sqlite3_column_int64(st, 0) : -1;
	const char *was = src == SQLITE_ROW ? (const char *)sqlite3_column_text(st, 1) : NULL;
	int running = was && !strcmp(was, "running"), partial = was && strcmp(was, "complete");
	sqlite3_reset(st);
	if (src != SQLITE_ROW && src != SQLITE_DONE)
		return store_fail(s, "reading the run's status");   /* an error (no memory) may have ended the transaction */
	/* a run still being written here is never replaced (its writer holds its lock): refused, said why */
	if (running && sto_run_is_live(s, id)) {
		sto_set_err(s, "run %s is still running in this store (run %lld): a running run is never replaced; "
			   "import it again when it has finished", uuid, (long long)id);
		return STORE_ERR;
	}
	if (!partial)
		return STORE_OK;
	if (sto_prepare_kept(s, "DELETE FROM runs WHERE id = ?", &st))
		return STORE_ERR;
	sqlite3_bind_int64(st, 1, id);
	return sto_step_kept(s, st, "replacing an incomplete copy of the run");
}

/*
 * One uuid, one run (results/run_digest.h): an import whose uuid is stored is "already present"
 * only when it is the same run; a different run under that uuid is an error naming both digests.
 * Both complete: identity, benches and metrics compared; else (a partial copy) the identity alone.
 */
static int same_run_or_conflict(struct store *s, const struct jtree *t, uint32_t fp)
{
	const char *uuid = jstr(t, jt_get(t, fp, "run"), "uuid"), *inst = jstr(t, jt_get(t, fp, "run"), "status");
	char *text = jt_text(t, fp), here[RUN_DIGEST_HEX], there[RUN_DIGEST_HEX];
	json_t *in = text ? json_loads(text, 0, NULL) : NULL, *stored = NULL;
	int64_t id;
	free(text);
	if (!in)
		sto_set_err(s, "run %s: out of memory comparing it with its stored copy", uuid);
	if (!in || store_resolve_run(s, uuid, &id) || store_load_fingerprint(s, id, &stored)) {
		json_decref(in);
		return STORE_ERR;   /* the reason set above or by the store */
	}
	const char *st = json_string_value(json_object_get(json_object_get(stored, "run"), "status"));
	int whole = inst && st && !strcmp(inst, "complete") && !strcmp(st, "complete");
	run_digest(stored, whole, here);
	run_digest(in, whole, there);
	json_decref(in);
	json_decref(stored);
	if (!strcmp(here, there)) {
		sto_set_err(s, "run %s is already in the store", uuid);
		return STORE_DUP;
	}
	sto_set_err(s, "run %s conflicts with the stored run %lld of that uuid: a different %s (digest %.12s here, "
		    "%.12s imported); a uuid names one run, so nothing of it is imported", uuid, (long long)id,
		    whole ? "run (identity or results)" : "machine or start", here, there);
	return STORE_ERR;
}

int store_import_tree(struct store *s, const struct jtree *t, int64_t *run_id)
{
	const uint32_t fp = 1;   /* the root */
	const char *schema = jstr(t, fp, "schema");
	if (!schema || strcmp(schema, FINGERPRINT_SCHEMA)) {
		sto_set_err(s, "not a gpuvet fingerprint (schema '%s' expected)", FINGERPRINT_SCHEMA);
		return STORE_ERR;
	}
	if (fp_check(t, fp, s->err, sizeof s->err))
		return STORE_ERR;
	/* alone, its own transaction; in a batch, the caller undoes its part on failure (store.h) */
	int64_t id;
	if (!s->in_batch && sto_exec_sql(s, "BEGIN IMMEDIATE"))
		return STORE_ERR;
	int rc = replace_partial_copy(s, t, fp);
	if (rc == STORE_OK)
		rc = import_body(s, t, fp, &id);
	if (rc == STORE_DUP)
		rc = same_run_or_conflict(s, t, fp);
	if (!s->in_batch && rc == STORE_OK && sto_exec_sql(s, "COMMIT"))
		rc = STORE_ERR;
	if (!s->in_batch && rc != STORE_OK)
		sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
	if (rc != STORE_OK)
		return rc;
	if (run_id)
		*run_id = id;
	return STORE_OK;
}

int store_import_fingerprint(struct store *s, json_t *fp, int64_t *run_id)
{
	const char *schema = json_string_value(json_object_get(fp, "schema"));
	char *text = json_is_object(fp) && schema ? json_dumps(fp, JSON_COMPACT) : NULL;
	struct jtree t;
	int rc = STORE_ERR;
	if (!text)
		sto_set_err(s, "not a gpuvet fingerprint (schema '%s' expected)", FINGERPRINT_SCHEMA);
	else if (jt_parse(&t, text, strlen(text)))
		sto_set_err(s, "fingerprint: %s", t.err);   /* jansson wrote it: only a "\u0000" in a string */
	else
		rc = store_import_tree(s, &t, run_id);
	if (text)
		jt_free(&t);
	free(text);
	return rc;
}

int store_batch_begin(struct store *s)
{
	if (s->in_batch || s->in_bench) {
		sto_set_err(s, "database '%s': a transaction is already open", s->path);
		return STORE_ERR;
	}
	if (sto_exec_sql(s, "BEGIN IMMEDIATE"))
		return STORE_ERR;
	s->in_batch = 1;
	return STORE_OK;
}

int store_batch_mark(struct store *s)
{
	return s->in_batch ? sto_exec_sql(s, "SAVEPOINT part") : STORE_OK;
}

int store_batch_unmark(struct store *s, int keep)
{
	if (!s->in_batch)
		return STORE_OK;
	if (keep)
		return sto_exec_sql(s, "RELEASE part");
	return sto_exec_sql(s, "ROLLBACK TO part; RELEASE part");
}

int store_batch_end(struct store *s, int commit)
{
	if (!s->in_batch)
		return STORE_OK;
	s->in_batch = 0;
	if (commit && sqlite3_get_autocommit(s->db)) {
		/* a failed write (a full disk, an I/O error) made SQLite undo the whole transaction */
		sto_set_err(s, "database '%s': a failed write undid the open transaction", s->path);
		return STORE_ERR;
	}
	if (commit)
		return sto_exec_sql(s, "COMMIT") == STORE_OK ? STORE_OK
			: (sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL), STORE_ERR);
	sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
	return STORE_OK;
}

int store_merge(struct store *s, const char *path, int *added, int *skipped, int *live)
{
	struct store *o;
	*added = *skipped = *live = 0;
	int rc = store_open_readonly(path, &o);
	if (rc) {
		sto_set_err(s, "%s", store_open_error());
		return rc;
	}
	int64_t *ids;
	size_t n;
	if ((rc = store_list_runs(o, &ids, &n))) {
		sto_set_err(s, "%s", store_errmsg(o));
		store_close(o);
		return rc;
	}
	for (size_t i = 0; i < n && rc == STORE_OK; i++) {
		json_t *fp;
		if ((rc = store_load_fingerprint(o, ids[i], &fp))) {
			sto_set_err(s, "%s", store_errmsg(o));
			break;
		}
		const char *st = json_string_value(json_object_get(json_object_get(fp, "run"), "status"));
		if (st && !strcmp(st, "running")) { /* still being written: a later merge takes it whole */
			(*live)++;
			json_decref(fp);
			continue;
		}
		int r = store_import_fingerprint(s, fp, NULL);
		json_decref(fp);
		if (r == STORE_DUP)
			(*skipped)++;
		else if (r == STORE_OK)
			(*added)++;
		else
			rc = r;
	}
	free(ids);
	store_close(o);
	return rc;
}

