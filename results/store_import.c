/*
 * store_import.c - fingerprints from outside into the store (store.h): one from a parsed
 * text or a json_t, in batches of one transaction, and whole stores merged.
 */
#include "results/store.h"
#include "results/store_int.h"
#include "results/import_rows.h"
#include "common/util.h"
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

/* ---- import and merge: the rows built by import_rows.c, written ---- */

static int write_run(struct store *s, const struct store_import_rows *r, int64_t *run_id)
{
	int rc = sto_insert_run(s, r->uuid, r->status, r->profile, r->version, r->hostname, r->provider, r->itype,
				r->region, r->gpu_model, r->gpu_count, r->started, r->finished, r->inventory, run_id);
	if (rc == STORE_DUP)
		sto_set_err(s, "run %s is already in the store", r->uuid);
	for (size_t i = 0; i < r->ngpus && rc == STORE_OK; i++) {
		const struct ir_gpu *g = &r->gpus[i];
		rc = sto_insert_gpu(s, *run_id, g->idx, g->name, g->uuid, g->reference_model);
	}
	if (rc == STORE_OK && r->has_build)
		rc = sto_insert_build(s, *run_id, r->build_commit, r->built_at, r->build_release);
	return rc;
}

static int write_rows(struct store *s, struct store_import_rows *r, int64_t run_id)
{
	int rc = STORE_OK;
	for (size_t i = 0; i < r->nbenches && rc == STORE_OK; i++) {
		const struct ir_bench *b = &r->benches[i];
		rc = sto_insert_bench(s, run_id, b->name, b->status, b->reason, b->duration_s, b->config);
	}
	for (size_t i = 0; i < r->nmetrics && rc == STORE_OK; i++) {
		const struct ir_metric *m = &r->metrics[i];
		rc = store_put_metric(s, run_id, m->bench, m->name, m->gpu, m->value, m->unit, m->params);
	}
	for (size_t i = 0; i < r->nseries && rc == STORE_OK; i++) {
		struct ir_series *e = &r->series[i];
		rc = sto_put_series_blob(s, run_id, e->bench, e->series, e->gpu, e->blob, e->n);
		e->blob = NULL;   /* the store's now (freed there, written or not) */
	}
	for (size_t i = 0; i < r->nflags && rc == STORE_OK; i++) {
		const struct ir_flag *f = &r->flags[i];
		rc = sto_insert_flag(s, run_id, f->code, f->severity, f->message, f->evidence, f->remediation);
	}
	for (size_t i = 0; i < r->nverdicts && rc == STORE_OK; i++)
		rc = sto_insert_verdict(s, run_id, &r->verdicts[i].v);
	return rc;
}

/*
 * The run and its rows; fp_check has passed.  STORE_DUP only from the run's
 * row (its uuid), before anything of it is written: a constraint after that
 * is an error, never "already present" (inside a batch nothing undoes it).
 * An element refused while the rows were built is said once the run's row is in.
 */
static int import_body(struct store *s, struct store_import_rows *r, int64_t *run_id)
{
	int rc = write_run(s, r, run_id);
	if (rc != STORE_OK)
		return rc;
	if (r->late) {
		sto_set_err(s, "%s", r->err);
		return STORE_ERR;
	}
	rc = write_rows(s, r, *run_id);
	return rc == STORE_DUP ? STORE_ERR : rc;
}

/*
 * A run copied while it was still running (a merge during the run) or cut
 * short is replaced by a later complete copy of the same run, so the empty
 * copy does not stay forever.  Inside the import's transaction.
 */
static int replace_partial_copy(struct store *s, const struct store_import_rows *r)
{
	const char *uuid = r->uuid;
	if (!uuid || strcmp(r->status, "complete"))
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
	uint32_t run = jt_get(t, fp, "run");
	const char *uuid = jt_str(t, jt_get(t, run, "uuid")), *inst = jt_str(t, jt_get(t, run, "status"));
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
		    "%.12s imported); a uuid names one run, so nothing of it is imported (the same capture under "
		    "another provider, type or region? 'gpuvet results tag %lld' renames the stored run)", uuid,
		    (long long)id, whole ? "run (identity or results)" : "machine or start", here, there, (long long)id);
	return STORE_ERR;
}

int store_import_prepared(struct store *s, const struct jtree *t, struct store_import_rows *r, int64_t *run_id)
{
	if (r->early) {
		sto_set_err(s, "%s", r->err);
		store_import_rows_free(r);
		return STORE_ERR;
	}
	/* alone, its own transaction; in a batch, the caller undoes its part on failure (store.h) */
	int64_t id;
	int rc = !s->in_batch && sto_exec_sql(s, "BEGIN IMMEDIATE") ? STORE_ERR : STORE_OK;
	if (rc == STORE_OK)
		rc = replace_partial_copy(s, r);
	if (rc == STORE_OK)
		rc = import_body(s, r, &id);
	store_import_rows_free(r);
	if (rc == STORE_DUP)
		rc = same_run_or_conflict(s, t, 1);
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

int store_import_tree(struct store *s, const struct jtree *t, int64_t *run_id)
{
	return store_import_prepared(s, t, store_import_prepare(t), run_id);
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

int store_merge(struct store *s, const char *path, store_added_fn after, int *added, int *skipped, int *live)
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
		int64_t id = 0;
		int r = store_import_fingerprint(s, fp, &id);
		json_decref(fp);
		if (r == STORE_OK && after && after(s, id))
			r = STORE_ERR;
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

