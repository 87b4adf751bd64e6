/*
 * store_write.c - the store's writes (store.h): a run, its benches in one transaction each,
 * metrics, series, flags, verdicts, its end and its tags.
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

/* ---- writing ---- */

int sto_insert_run(struct store *s, const char *uuid, const char *status, const char *profile,
		      const char *version, const char *hostname, const char *provider,
		      const char *itype, const char *region, const char *gpu_model, int gpu_count,
		      const char *started, const char *finished, const char *inventory_json, int64_t *run_id)
{
	sqlite3_stmt *st;
	if (sto_prepare_kept(s, "INSERT INTO runs (uuid, status, profile, gpuvet_version, hostname, provider,"
		       " instance_type, region, gpu_model, gpu_count, started_at, finished_at, inventory)"
		       " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)", &st))
		return STORE_ERR;
	sto_bind_kept_text(st, 1, uuid);
	sto_bind_kept_text(st, 2, status);
	sto_bind_kept_text(st, 3, profile);
	sto_bind_kept_text(st, 4, version);
	sto_bind_kept_text(st, 5, hostname);
	sto_bind_kept_text(st, 6, provider);
	sto_bind_kept_text(st, 7, itype);
	sto_bind_kept_text(st, 8, region);
	sto_bind_kept_text(st, 9, gpu_model);
	sqlite3_bind_int(st, 10, gpu_count);
	sto_bind_kept_text(st, 11, started);
	sto_bind_kept_text(st, 12, finished);
	sto_bind_kept_text(st, 13, inventory_json);
	int rc = sto_step_kept(s, st, "recording the run");
	if (rc == STORE_OK)
		*run_id = sqlite3_last_insert_rowid(s->db);
	return rc;
}

/* One GPU of a run, from its inventory. */
int sto_insert_gpu(struct store *s, int64_t run_id, long long idx, const char *name, const char *uuid,
		      const char *reference_model)
{
	sqlite3_stmt *st;
	if (sto_prepare_kept(s, "INSERT OR IGNORE INTO gpus (run_id, idx, name, uuid, reference_model)"
		       " VALUES (?,?,?,?,?)", &st))
		return STORE_ERR;
	sqlite3_bind_int64(st, 1, run_id);
	sqlite3_bind_int64(st, 2, idx);
	sto_bind_kept_text(st, 3, name);
	sto_bind_kept_text(st, 4, uuid);
	sto_bind_kept_text(st, 5, reference_model);
	return sto_step_kept(s, st, "recording the gpus");
}

int sto_insert_build(struct store *s, int64_t run_id, const char *commit, const char *built_at, int release)
{
	sqlite3_stmt *st;
	if (sto_prepare_kept(s, "INSERT INTO run_builds (run_id, git_commit, built_at, release) VALUES (?,?,?,?)", &st))
		return STORE_ERR;
	sqlite3_bind_int64(st, 1, run_id);
	sto_bind_kept_text(st, 2, commit);
	sto_bind_kept_text(st, 3, built_at);
	sqlite3_bind_int(st, 4, release ? 1 : 0);
	return sto_step_kept(s, st, "recording the gpuvet build");
}

/* The run row, its GPUs and its build, from a run being written. */
static int insert_live_run(struct store *s, const struct run_info *ri, const char *uuid, const char *started,
			   int64_t *run_id)
{
	char *inv = ri->inventory ? json_dumps(ri->inventory, JSON_COMPACT) : NULL;
	int rc = sto_insert_run(s, uuid, "running", ri->profile, ri->gpuvet_version, ri->hostname, ri->provider,
			    ri->instance_type, ri->region, ri->gpu_model, ri->gpu_count, started, NULL, inv, run_id);
	free(inv);
	size_t i;
	json_t *g;
	json_array_foreach(ri->inventory ? json_object_get(ri->inventory, "gpus") : NULL, i, g) {
		json_t *jidx = json_object_get(g, "index");
		if (rc == STORE_OK)
			rc = sto_insert_gpu(s, *run_id, json_is_integer(jidx) ? json_integer_value(jidx) : (json_int_t)i,
					json_string_value(json_object_get(g, "name")),
					json_string_value(json_object_get(g, "uuid")),
					json_string_value(json_object_get(g, "reference_model")));
	}
	if (rc == STORE_OK && ri->build)
		rc = sto_insert_build(s, *run_id, ri->build->commit, ri->build->built_at, ri->build->release);
	return rc;
}

int store_begin_run(struct store *s, const struct run_info *ri, int64_t *run_id)
{
	char uuid[37], started[32];
	if (ri->uuid)
		gv_strlcpy(uuid, ri->uuid, sizeof uuid);
	else
		gv_uuid(uuid);
	sto_now_iso(started);
	if (sto_exec_sql(s, "BEGIN IMMEDIATE"))
		return STORE_ERR;
	int rc = insert_live_run(s, ri, uuid, started, run_id);
	if (rc) {
		sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
		return rc;
	}
	if ((rc = sto_exec_sql(s, "COMMIT")))
		return rc;
	if (sto_live_lock(s, *run_id, F_RDLCK) == 0)
		s->live_run = *run_id;
	return STORE_OK;
}

int store_bench_begin(struct store *s, int64_t run_id, const char *bench)
{
	(void)run_id;
	(void)bench;
	if (s->in_bench) {
		sto_set_err(s, "database '%s': bench transaction already open", s->path);
		return STORE_ERR;
	}
	if (sto_exec_sql(s, "BEGIN IMMEDIATE"))
		return STORE_ERR;
	s->in_bench = 1;
	return STORE_OK;
}

int store_put_metric(struct store *s, int64_t run_id, const char *bench, const char *name,
		     int gpu, double value, const char *unit, const char *params_json)
{
	sqlite3_stmt *st;
	if (sto_prepare_kept(s, "INSERT INTO metrics (run_id, bench, name, gpu, value, unit, params) VALUES (?,?,?,?,?,?,?)",
			 &st))
		return STORE_ERR;
	sqlite3_bind_int64(st, 1, run_id);
	sto_bind_kept_text(st, 2, bench);
	sto_bind_kept_text(st, 3, name);
	sqlite3_bind_int(st, 4, gpu);
	sto_bind_real(st, 5, value);
	sto_bind_kept_text(st, 6, unit);
	sto_bind_kept_text(st, 7, params_json);
	return sto_step_kept_err(s, st, "recording a metric");
}

/* One coordinate of a point: little-endian binary64, whatever the host's byte order. */
void sto_pack_double(unsigned char *out, double d)
{
	uint64_t u;
	memcpy(&u, &d, 8);
	for (int b = 0; b < 8; b++)
		out[b] = (unsigned char)(u >> (8 * b));
}

double sto_unpack_double(const unsigned char *p)
{
	uint64_t u = 0;
	for (int b = 7; b >= 0; b--)
		u = u << 8 | p[b];
	double d;
	memcpy(&d, &u, 8);
	return d;
}

/* An empty series' blob for n points (freed by the caller, or handed to put_series_blob). */
unsigned char *sto_series_blob(struct store *s, const char *series, size_t n)
{
	if (n > (size_t)INT_MAX / STORE_POINT_BYTES) {
		sto_set_err(s, "series '%s': too many points (%zu)", series, n);
		return NULL;
	}
	unsigned char *blob = malloc(n * STORE_POINT_BYTES + 1);
	if (!blob)
		sto_set_err(s, "out of memory for series '%s'", series);
	return blob;
}

/* Writes n packed points (blob from series_blob, freed here); a second write of the same series appends. */
int sto_put_series_blob(struct store *s, int64_t run_id, const char *bench, const char *series, int gpu,
			   unsigned char *blob, size_t n)
{
	sqlite3_stmt *st;
	if (n == 0 || sto_prepare_kept(s, "INSERT INTO series (run_id, bench, series, gpu, points) VALUES (?,?,?,?,?)"
				   " ON CONFLICT DO UPDATE SET points = CAST(points || excluded.points AS BLOB)", &st)) {
		free(blob);
		return n == 0 ? STORE_OK : STORE_ERR;
	}
	sqlite3_bind_int64(st, 1, run_id);
	sto_bind_kept_text(st, 2, bench);
	sto_bind_kept_text(st, 3, series);
	sqlite3_bind_int(st, 4, gpu);
	sqlite3_bind_blob(st, 5, blob, (int)(n * STORE_POINT_BYTES), free);
	return sto_step_kept_err(s, st, "recording a series");
}

int store_put_series(struct store *s, int64_t run_id, const char *bench, const char *series, int gpu,
		     const double *xy, size_t n)
{
	if (n == 0)
		return STORE_OK;
	unsigned char *blob = sto_series_blob(s, series, n);
	if (!blob)
		return STORE_ERR;
	for (size_t i = 0; i < 2 * n; i++)
		sto_pack_double(blob + 8 * i, xy[i]);
	return sto_put_series_blob(s, run_id, bench, series, gpu, blob, n);
}

int sto_insert_bench(struct store *s, int64_t run_id, const char *bench, const char *status,
			const char *reason, double duration_s, const char *config_json)
{
	sqlite3_stmt *st;
	/* an upsert, not INSERT OR REPLACE: a REPLACE may delete, so SQLite journals every page it
	 * touches in a statement journal, a temp file inside an import's batch (28 pwrites a run) */
	if (sto_prepare_kept(s, "INSERT INTO benches (run_id, name, status, reason, duration_s, config)"
		       " VALUES (?,?,?,?,?,?) ON CONFLICT (run_id, name) DO UPDATE SET status = excluded.status,"
		       " reason = excluded.reason, duration_s = excluded.duration_s, config = excluded.config", &st))
		return STORE_ERR;
	sqlite3_bind_int64(st, 1, run_id);
	sto_bind_kept_text(st, 2, bench);
	sto_bind_kept_text(st, 3, status);
	sto_bind_kept_text(st, 4, reason);
	sto_bind_real(st, 5, duration_s);
	sto_bind_kept_text(st, 6, config_json);
	return sto_step_kept(s, st, "recording the bench");
}

int store_bench_end(struct store *s, int64_t run_id, const char *bench, const char *status,
		    const char *reason, double duration_s, const char *config_json)
{
	if (!s->in_bench && store_bench_begin(s, run_id, bench))
		return STORE_ERR;
	int rc = sto_insert_bench(s, run_id, bench, status, reason, duration_s, config_json);
	if (rc == STORE_OK)
		rc = sto_exec_sql(s, "COMMIT");
	if (rc != STORE_OK)
		sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
	s->in_bench = 0;
	return rc;
}

void store_bench_abort(struct store *s)
{
	if (s->in_bench)
		sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
	s->in_bench = 0;
}

int sto_insert_flag(struct store *s, int64_t run_id, const char *code, const char *severity,
		       const char *message, const char *evidence_json, const char *remediation)
{
	sqlite3_stmt *st;
	if (sto_prepare_kept(s, "INSERT INTO flags (run_id, code, severity, message, evidence, remediation) VALUES (?,?,?,?,?,?)",
		    &st))
		return STORE_ERR;
	sqlite3_bind_int64(st, 1, run_id);
	sto_bind_kept_text(st, 2, code);
	sto_bind_kept_text(st, 3, severity);
	sto_bind_kept_text(st, 4, message);
	sto_bind_kept_text(st, 5, evidence_json);
	sto_bind_kept_text(st, 6, remediation);
	return sto_step_kept(s, st, "recording a flag");
}

int store_put_flag(struct store *s, int64_t run_id, const char *code, const char *severity,
		   const char *message, const char *evidence_json, const char *remediation)
{
	return sto_insert_flag(s, run_id, code, severity, message, evidence_json, remediation);
}

int store_clear_flags(struct store *s, int64_t run_id)
{
	sqlite3_stmt *st;
	if (store_prepare(s, "DELETE FROM flags WHERE run_id = ?", &st))
		return STORE_ERR;
	sqlite3_bind_int64(st, 1, run_id);
	return sto_step_done(s, st, "clearing flags");
}

int sto_insert_verdict(struct store *s, int64_t run_id, const struct sto_verdict *v)
{
	sqlite3_stmt *st;
	if (sto_prepare_kept(s, "INSERT INTO verdicts (run_id, verdict, policy, detail, at, policy_digest, policy_source,"
			 " imported) VALUES (?,?,?,?,?,?,?,?)"
			 " ON CONFLICT (run_id, policy_digest, policy, imported) DO UPDATE SET verdict = excluded.verdict,"
			 " detail = excluded.detail, at = excluded.at, policy_source = excluded.policy_source",
			 &st))   /* an upsert: see insert_bench */
		return STORE_ERR;
	sqlite3_bind_int64(st, 1, run_id);
	sto_bind_kept_text(st, 2, v->verdict);
	sto_bind_kept_text(st, 3, v->policy);
	sto_bind_kept_text(st, 4, v->detail_json);
	sto_bind_kept_text(st, 5, v->at);
	sto_bind_kept_text(st, 6, v->digest ? v->digest : "");
	sto_bind_kept_text(st, 7, v->source);
	sqlite3_bind_int(st, 8, v->imported != 0);
	return sto_step_kept(s, st, "recording the verdict");
}

int store_put_verdict(struct store *s, int64_t run_id, const char *verdict, const char *policy,
		      const char *digest, const char *source, const char *detail_json)
{
	char at[32];
	sto_now_iso(at);
	struct sto_verdict v = { verdict, policy, digest, source, detail_json, at, 0 };
	return sto_insert_verdict(s, run_id, &v);
}

int store_finish_run(struct store *s, int64_t run_id, const char *status)
{
	sqlite3_stmt *st;
	char at[32];
	sto_now_iso(at);
	if (store_prepare(s, "UPDATE runs SET status = ?, finished_at = ? WHERE id = ?", &st))
		return STORE_ERR;
	store_bind_text(st, 1, status);
	store_bind_text(st, 2, at);
	sqlite3_bind_int64(st, 3, run_id);
	int rc = sto_step_done(s, st, "finishing the run");
	if (rc == STORE_OK && s->live_run == run_id) {
		sto_live_lock(s, run_id, F_UNLCK);
		s->live_run = 0;
	}
	return rc;
}

int store_tag_run(struct store *s, int64_t run_id, const char *provider, const char *instance_type,
		  const char *region)
{
	sqlite3_stmt *st;
	if (store_prepare(s, "UPDATE runs SET provider = coalesce(?, provider), instance_type = coalesce(?, instance_type), "
		       "region = coalesce(?, region) WHERE id = ?", &st))
		return STORE_ERR;
	store_bind_text(st, 1, provider);
	store_bind_text(st, 2, instance_type);
	store_bind_text(st, 3, region);
	sqlite3_bind_int64(st, 4, run_id);
	int rc = sto_step_done(s, st, "naming the run");
	if (rc == STORE_OK && sqlite3_changes(s->db) != 1) {
		sto_set_err(s, "no run %lld", (long long)run_id);
		return STORE_ERR;
	}
	return rc;
}

