/*
 * store_load_run.c - a stored run read into the typed run (store.h
 * store_load_run, results/fprun.h) from its rows, never through a JSON tree:
 * a metric row becomes a struct of about 60 bytes and its parameters, a
 * series' blob an array of doubles.  The texts the store keeps in columns
 * (the inventory, a metric's params, a bench's config) are read by the one
 * reader (results/fprun_decode.c).
 */
#include "results/store.h"
#include "results/store_int.h"
#include "results/fprun_int.h"
#include "common/util.h"

#include <math.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

static const char *col(struct fprun *r, sqlite3_stmt *st, int i)
{
	return fprun_str(r, (const char *)sqlite3_column_text(st, i));
}

static double col_num(sqlite3_stmt *st, int i)
{
	return sqlite3_column_type(st, i) == SQLITE_NULL ? NAN : sqlite3_column_double(st, i);
}

/* run.gpuvet_build from run_builds (schema 9), when the run has one. */
static int load_build(struct store *s, int64_t run_id, struct fprun *r)
{
	sqlite3_stmt *st;
	if (store_prepare(s, "SELECT git_commit, built_at, release FROM run_builds WHERE run_id = ?", &st))
		return STORE_ERR;
	sqlite3_bind_int64(st, 1, run_id);
	int rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		r->run.has_build = 1;
		r->run.build_commit = col(r, st, 0);
		r->run.build_at = col(r, st, 1);
		r->run.build_release = sqlite3_column_int(st, 2);
	}
	sqlite3_finalize(st);
	return rc == SQLITE_ROW || rc == SQLITE_DONE ? STORE_OK : store_fail(s, "reading the run's gpuvet build");
}

static int load_head(struct store *s, int64_t run_id, struct fprun *r)
{
	sqlite3_stmt *st;
	int rc = sto_run_head(s, run_id, &st);
	if (rc)
		return rc;
	struct fp_head *h = &r->run;
	h->id = run_id;
	h->uuid = col(r, st, 1);
	h->status = fprun_str(r, sto_run_status(s, run_id, (const char *)sqlite3_column_text(st, 2)));
	h->profile = col(r, st, 3);
	h->version = col(r, st, 4);
	h->hostname = col(r, st, 5);
	h->started_at = col(r, st, 6);
	h->finished_at = col(r, st, 7);
	h->provider = col(r, st, 8);
	h->instance_type = col(r, st, 9);
	h->region = col(r, st, 10);
	h->gpu_model = col(r, st, 11);
	h->gpu_count = sqlite3_column_int(st, 12);
	if (s->version >= 9 && load_build(s, run_id, r)) {
		sqlite3_finalize(st);
		return STORE_ERR;
	}
	const char *inv = (const char *)sqlite3_column_text(st, 13);
	struct jtree t;
	if (inv && !jt_parse(&t, inv, strlen(inv)))
		fprun_decode_inventory(r, &t, 1);
	else
		r->inv.text = fprun_str(r, "{}");
	if (inv)
		jt_free(&t);
	sqlite3_finalize(st);
	return STORE_OK;
}

static int load_benches(struct store *s, int64_t run_id, struct fprun *r)
{
	sqlite3_stmt *st;
	size_t cap = 8;
	if (store_prepare(s, "SELECT name, status, reason, duration_s, config FROM benches WHERE run_id = ? ORDER BY rowid",
			  &st))
		return STORE_ERR;
	sqlite3_bind_int64(st, 1, run_id);
	r->benches = gv_calloc(cap, sizeof *r->benches);
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (r->nbenches == cap)
			r->benches = gv_realloc(r->benches, (cap *= 2) * sizeof *r->benches);
		struct fp_bench *b = &r->benches[r->nbenches++];
		memset(b, 0, sizeof *b);
		b->name = col(r, st, 0);
		b->status = col(r, st, 1);
		b->reason = col(r, st, 2);
		b->duration_s = col_num(st, 3);
		b->config = fprun_decode_obj_text(r, (const char *)sqlite3_column_text(st, 4));
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? STORE_OK : store_fail(s, "reading the run");
}

static int load_metrics(struct store *s, int64_t run_id, struct fprun *r)
{
	sqlite3_stmt *st;
	if (store_prepare(s, "SELECT bench, name, gpu, value, unit, params FROM metrics WHERE run_id = ? ORDER BY id", &st))
		return STORE_ERR;
	sqlite3_bind_int64(st, 1, run_id);
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct fp_metric *m = fprun_add_metric(r, (const char *)sqlite3_column_text(st, 0),
						       (const char *)sqlite3_column_text(st, 1), sqlite3_column_int(st, 2),
						       col_num(st, 3), (const char *)sqlite3_column_text(st, 4));
		const char *text = (const char *)sqlite3_column_text(st, 5);
		m->params = fprun_decode_obj_text(r, text);
		m->params_text = fprun_copy(r, text);
		m->of = fp_obj_str(&m->params, "of");
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? STORE_OK : store_fail(s, "reading the run");
}

/* A series per row, its blob unpacked (a store before schema 5 keeps a row per point: read by samples_legacy). */
static int load_series(struct store *s, int64_t run_id, struct fprun *r)
{
	sqlite3_stmt *st;
	size_t cap = 16;
	int legacy = s->version < 5;
	if (store_prepare(s, legacy ? "SELECT bench, series, gpu, x, y FROM samples WHERE run_id = ? ORDER BY series, gpu,"
				      " rowid" :
				      "SELECT bench, series, gpu, points FROM series WHERE run_id = ? ORDER BY series, gpu, bench",
			  &st))
		return STORE_ERR;
	sqlite3_bind_int64(st, 1, run_id);
	r->series = gv_calloc(cap, sizeof *r->series);
	int rc;
	struct fp_series *cur = NULL;
	size_t curcap = 0;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *name = (const char *)sqlite3_column_text(st, 1);
		int gpu = sqlite3_column_int(st, 2);
		if (!legacy || !cur || strcmp(cur->name, name ? name : "") || cur->gpu != gpu) {
			if (r->nseries == cap)
				r->series = gv_realloc(r->series, (cap *= 2) * sizeof *r->series);
			cur = &r->series[r->nseries++];
			memset(cur, 0, sizeof *cur);
			cur->bench = fprun_str(r, sqlite3_column_text(st, 0) ? (const char *)sqlite3_column_text(st, 0) : "");
			cur->name = fprun_str(r, name ? name : "");
			cur->gpu = gpu;
			curcap = 0;
		}
		if (legacy) {
			if (cur->n == curcap)
				cur->xy = gv_realloc(cur->xy, (curcap = curcap ? 2 * curcap : 64) * 2 * sizeof *cur->xy);
			cur->xy[2 * cur->n] = col_num(st, 3);
			cur->xy[2 * cur->n + 1] = col_num(st, 4);
			cur->n++;
			continue;
		}
		const unsigned char *b = sqlite3_column_blob(st, 3);
		cur->n = (size_t)sqlite3_column_bytes(st, 3) / STORE_POINT_BYTES;
		cur->xy = gv_malloc((2 * cur->n + 1) * sizeof *cur->xy);
		for (size_t i = 0; i < cur->n; i++) {
			cur->xy[2 * i] = sto_unpack_double(b + STORE_POINT_BYTES * i);
			cur->xy[2 * i + 1] = sto_unpack_double(b + STORE_POINT_BYTES * i + 8);
		}
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? STORE_OK : store_fail(s, "reading the run");
}

/* A flag's evidence.gpu, -1 for the instance or none. */
static int evidence_gpu(const char *ev)
{
	struct jtree t;
	long long g = -1;
	if (ev && !jt_parse(&t, ev, strlen(ev)) && jt_is_int(&t, jt_get(&t, 1, "gpu")))
		g = jt_int(&t, jt_get(&t, 1, "gpu"));
	if (ev)
		jt_free(&t);
	return g >= -1 && g < 1 << 20 ? (int)g : -1;
}

static int load_flags(struct store *s, int64_t run_id, struct fprun *r)
{
	sqlite3_stmt *st;
	if (store_prepare(s, "SELECT code, severity, message, evidence, remediation FROM flags WHERE run_id = ? ORDER BY id",
			  &st))
		return STORE_ERR;
	sqlite3_bind_int64(st, 1, run_id);
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *ev = (const char *)sqlite3_column_text(st, 3);
		fprun_add_flag(r, (const char *)sqlite3_column_text(st, 0), (const char *)sqlite3_column_text(st, 1),
			       (const char *)sqlite3_column_text(st, 2), (const char *)sqlite3_column_text(st, 4), ev,
			       evidence_gpu(ev));
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? STORE_OK : store_fail(s, "reading the run");
}

static int load_verdicts(struct store *s, int64_t run_id, struct fprun *r)
{
	sqlite3_stmt *st;
	if (store_prepare(s, s->version >= 6 ?
		       "SELECT verdict, policy, at, detail, policy_digest, policy_source, imported FROM verdicts"
		       " WHERE run_id = ? ORDER BY at, id" :
		       "SELECT verdict, policy, at, detail, '', NULL, 0 FROM verdicts WHERE run_id = ? ORDER BY at, id", &st))
		return STORE_ERR;
	sqlite3_bind_int64(st, 1, run_id);
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct fp_verdict v = { (const char *)sqlite3_column_text(st, 0), (const char *)sqlite3_column_text(st, 1),
					(const char *)sqlite3_column_text(st, 2), (const char *)sqlite3_column_text(st, 4),
					(const char *)sqlite3_column_text(st, 5), (const char *)sqlite3_column_text(st, 3),
					sqlite3_column_int(st, 6) };
		fprun_add_verdict(r, &v);
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? STORE_OK : store_fail(s, "reading the run");
}

int store_load_run(struct store *s, int64_t run_id, unsigned parts, struct fprun **out)
{
	struct fprun *r = fprun_new();
	int rc = load_head(s, run_id, r);
	*out = NULL;
	if (!rc)
		rc = load_benches(s, run_id, r);
	if (!rc)
		rc = load_metrics(s, run_id, r);
	if (!rc && !(parts & STORE_RUN_NO_SERIES))
		rc = load_series(s, run_id, r);
	if (!rc && !(parts & STORE_RUN_NO_FLAGS))
		rc = load_flags(s, run_id, r);
	if (!rc)
		rc = load_verdicts(s, run_id, r);
	if (rc) {
		fprun_free(r);
		return rc;
	}
	*out = r;
	return STORE_OK;
}
