/* store_pending.c - a finished bench kept aside while the store was busy (store_pending.h); replayed by store_pending_replay.c. */
#include "results/store_pending.h"
#include "results/bench_rows.h"
#include "results/store_int.h"
#include "common/outfile.h"
#include "common/util.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int sto_pending_dir(struct store *s, char *dir, size_t len)
{
	const char *db = sqlite3_db_filename(store_conn(s), "main");
	return db && *db && snprintf(dir, len, "%s.pending", db) < (int)len ? 0 : -1;
}

static char *run_uuid(struct store *s, int64_t run_id)
{
	sqlite3_stmt *st;
	char *u = NULL;
	if (store_prepare(s, "SELECT uuid FROM runs WHERE id = ?", &st))
		return NULL;
	sqlite3_bind_int64(st, 1, run_id);
	if (sqlite3_step(st) == SQLITE_ROW)
		u = store_col_strdup(st, 0);
	sqlite3_finalize(st);
	return u;
}

int store_pending_keep(struct store *s, int64_t run_id, const char *bench, const json_t *rows,
		       const struct bench_outcome *o, char *where, size_t len)
{
	char dir[PATH_MAX], path[PATH_MAX + 64], err[512];
	char *uuid = run_uuid(s, run_id);   /* a read: a writer's lock does not stop it (WAL) */
	struct gv_outfile out;
	if (!uuid || sto_pending_dir(s, dir, sizeof dir) || (mkdir(dir, 0700) && errno != EEXIST)) {
		snprintf(where, len, "cannot make a place for it beside the store: %s", uuid ? strerror(errno) : "run not found");
		free(uuid);
		return -1;
	}
	snprintf(path, sizeof path, "%s/%s.%s.json", dir, uuid, bench);
	json_t *doc = json_pack("{s:i,s:s,s:I,s:s,s:s,s:s?,s:f,s:s?,s:O}", "version", 1, "run_uuid", uuid, "run_id",
				(json_int_t)run_id, "bench", bench, "status", o->status, "reason", o->reason,
				"duration_s", o->duration_s, "config", o->config, "rows", (json_t *)rows);
	free(uuid);
	int rc = -1;
	if (doc && !gv_outfile_open_own(&out, path, err, sizeof err)) {
		if (json_dumpf(doc, out.f, JSON_COMPACT | JSON_REAL_PRECISION(17)) == 0 &&
		    !gv_outfile_commit(&out, err, sizeof err))
			rc = 0;
		else if (out.f)
			gv_outfile_abort(&out);
	}
	json_decref(doc);
	snprintf(where, len, "%s", rc ? err : path);
	return rc;
}
