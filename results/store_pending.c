/* store_pending.c - a finished bench kept aside while the store was busy (store_pending.h). */
#include "results/store_pending.h"
#include "results/bench_rows.h"
#include "results/store_int.h"
#include "common/outfile.h"
#include "common/util.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define PENDING_MAX_BYTES (1u << 30)

static int pending_dir(struct store *s, char *dir, size_t len)
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
	if (!uuid || pending_dir(s, dir, sizeof dir) || (mkdir(dir, 0700) && errno != EEXIST)) {
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

/* Whether the run already holds the bench (its file outlived the commit of an earlier replay). */
static int has_bench(struct store *s, int64_t run_id, const char *bench)
{
	sqlite3_stmt *st;
	int yes = 0;
	if (store_prepare(s, "SELECT 1 FROM benches WHERE run_id = ? AND name = ?", &st))
		return 0;
	sqlite3_bind_int64(st, 1, run_id);
	store_bind_text(st, 2, bench);
	yes = sqlite3_step(st) == SQLITE_ROW;
	sqlite3_finalize(st);
	return yes;
}

/* One kept bench: 1 stored (file removed), 0 left for later (said). */
static int replay_one(struct store *s, const char *path)
{
	size_t n = 0;
	char *text = gv_read_file_max(path, PENDING_MAX_BYTES, &n);
	json_t *doc = text ? json_loadb(text, n, 0, NULL) : NULL;
	free(text);
	const char *uuid = json_string_value(json_object_get(doc, "run_uuid"));
	const char *bench = json_string_value(json_object_get(doc, "bench"));
	const char *status = json_string_value(json_object_get(doc, "status"));
	int64_t run_id = 0;
	int done = 0;
	if (!uuid || !bench || !status || !json_is_array(json_object_get(doc, "rows"))) {
		gv_err("kept bench results '%s' are not readable: left as they are", path);
	} else if (strlen(uuid) != 36 || store_resolve_run(s, uuid, &run_id)) {
		gv_err("kept bench results '%s' belong to run %s, which this store does not hold: left as they are",
		       path, uuid);
	} else if (has_bench(s, run_id, bench)) {
		done = 1;
	} else {
		struct bench_outcome o = { status, json_string_value(json_object_get(doc, "reason")),
					   json_number_value(json_object_get(doc, "duration_s")),
					   json_string_value(json_object_get(doc, "config")) };
		if (store_put_bench_rows(s, run_id, bench, json_object_get(doc, "rows"), &o))
			gv_err("kept bench results '%s' not stored yet: %s", path, store_errmsg(s));
		else {
			gv_err("stored the %s results of run %lld kept in '%s' while the store was busy", bench,
			       (long long)run_id, path);
			done = 1;
		}
	}
	json_decref(doc);
	if (done && unlink(path))
		gv_err("cannot remove '%s' (its results are stored): %s", path, strerror(errno));
	return done;
}

int store_pending_replay(struct store *s)
{
	char dir[PATH_MAX], path[PATH_MAX + 300];
	if (pending_dir(s, dir, sizeof dir))
		return 0;
	DIR *d = opendir(dir);
	if (!d)
		return 0;   /* nothing was ever kept */
	struct dirent *e;
	int stored = 0;
	while ((e = readdir(d)) != NULL) {
		size_t k = strlen(e->d_name);
		if (k < 6 || strcmp(e->d_name + k - 5, ".json") || e->d_name[0] == '.')
			continue;   /* a temporary being written is dot-named or not .json */
		snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
		stored += replay_one(s, path);
	}
	closedir(d);
	rmdir(dir);   /* gone once empty; kept while anything waits */
	return stored;
}
