/*
 * store_util.c - what the store's files share (store_int.h), below all of
 * them: the live-run lock, the store's error and SQLite's message, and the
 * statement, bind and step helpers.  store.c (open, migrations, close),
 * store_write.c, store_load.c, store_import.c, store_read.c ... call down
 * into it; it calls none of them.
 */
#include "results/store.h"
#include "results/store_int.h"
#include "common/util.h"

#include <errno.h>
#include <fcntl.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/statvfs.h>
#include <time.h>

/* ---- the live-run lock ---- */

/*
 * A run being written is marked live by an open-file-description lock on
 * one byte far past SQLite's own lock bytes (LIVE_LOCK_BASE + run id):
 * another process sees it with F_OFD_GETLK, and the kernel drops it when
 * the writer dies however it dies.  So a live run lists as "running" and a
 * killed one as "incomplete", and merge leaves a live run for later.  The
 * descriptor (s->lock_fd, the file opened again by store.c's open_common) is
 * closed only after sqlite3_close() (store.c store_close): closing a
 * descriptor of the database file would drop SQLite's own POSIX locks.
 */
#define LIVE_LOCK_BASE (1LL << 42)

int sto_live_lock(struct store *s, int64_t run_id, short type)
{
	if (s->lock_fd < 0)
		return -1;
	struct flock fl = { .l_type = type, .l_whence = SEEK_SET, .l_start = LIVE_LOCK_BASE + run_id, .l_len = 1 };
	return fcntl(s->lock_fd, F_OFD_SETLK, &fl);
}

/* True when another process holds run_id's live lock. */
int sto_run_is_live(struct store *s, int64_t run_id)
{
	if (s->lock_fd < 0)
		return 0;
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = LIVE_LOCK_BASE + run_id, .l_len = 1 };
	return fcntl(s->lock_fd, F_OFD_GETLK, &fl) == 0 && fl.l_type != F_UNLCK;
}

int store_run_live(struct store *s, int64_t run_id)
{
	return sto_run_is_live(s, run_id);
}

/* ---- errors ---- */

void sto_set_err(struct store *s, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(s->err, sizeof s->err, fmt, ap);
	va_end(ap);
}

/*
 * SQLite's message, with the system's cause when the disk failed: "disk I/O
 * error (Input/output error)", "database or disk is full (No space left on device)".
 */
const char *store_sqlite_msg(void *conn, char *buf, size_t len)
{
	sqlite3 *db = conn;
	int ec = sqlite3_extended_errcode(db) & 0xff, se = sqlite3_system_errno(db);
	const char *file = sqlite3_db_filename(db, "main");
	struct statvfs vf;
	struct rlimit fl;
	if (se && (ec == SQLITE_IOERR || ec == SQLITE_FULL || ec == SQLITE_CANTOPEN))
		snprintf(buf, len, "%s (%s)", sqlite3_errmsg(db), strerror(se));
	else if ((ec == SQLITE_IOERR || ec == SQLITE_FULL) && !getrlimit(RLIMIT_FSIZE, &fl) && fl.rlim_cur != RLIM_INFINITY)
		/* SQLite kept no errno: under a file size limit (ulimit -f) a write past it failed with EFBIG */
		snprintf(buf, len, "%s (%s: the file size limit, ulimit -f, is %llu bytes)", sqlite3_errmsg(db),
			 strerror(EFBIG), (unsigned long long)fl.rlim_cur);
	else if ((ec == SQLITE_IOERR || ec == SQLITE_FULL) && file && *file && !statvfs(file, &vf) &&
		 (unsigned long long)vf.f_bavail * vf.f_frsize < (1u << 20))
		/* SQLite kept no errno (a failed sync is rolled back): the file system tells */
		snprintf(buf, len, "%s (%s)", sqlite3_errmsg(db), strerror(ENOSPC));
	else
		snprintf(buf, len, "%s", sqlite3_errmsg(db));
	return buf;
}

const char *sto_db_msg(struct store *s)
{
	int ec = sqlite3_errcode(s->db);
	s->busy = ec == SQLITE_BUSY || ec == SQLITE_LOCKED;
	return store_sqlite_msg(s->db, s->dbmsg, sizeof s->dbmsg);
}

int store_is_busy(const struct store *s)
{
	return s && s->busy;
}

int store_fail(struct store *s, const char *what)
{
	sto_set_err(s, "database '%s': %s: %s", s->path, what, sto_db_msg(s));
	return STORE_ERR;
}

int sto_exec_sql(struct store *s, const char *sql)
{
	char *msg = NULL;
	if (sqlite3_exec(s->db, sql, NULL, NULL, &msg) != SQLITE_OK) {
		sto_set_err(s, "database '%s': %s", s->path, sto_db_msg(s));   /* SQLite's message, with the disk's cause */
		sqlite3_free(msg);
		return STORE_ERR;
	}
	return STORE_OK;
}

/* ---- small binding helpers ---- */

void store_bind_text(sqlite3_stmt *st, int i, const char *v)
{
	if (v)
		sqlite3_bind_text(st, i, v, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(st, i);
}

/* Text bound without a copy: v must live until the sto_step_kept*() that follows, which unbinds it. */
void sto_bind_kept_text(sqlite3_stmt *st, int i, const char *v)
{
	if (v)
		sqlite3_bind_text(st, i, v, -1, SQLITE_STATIC);
	else
		sqlite3_bind_null(st, i);
}

void sto_bind_real(sqlite3_stmt *st, int i, double v)
{
	if (v == v)
		sqlite3_bind_double(st, i, v);
	else
		sqlite3_bind_null(st, i);
}

int store_prepare(struct store *s, const char *sql, sqlite3_stmt **st)
{
	if (sqlite3_prepare_v2(s->db, sql, -1, st, NULL) != SQLITE_OK)
		return store_fail(s, "preparing a statement");
	return STORE_OK;
}

int store_step_ids(struct store *s, sqlite3_stmt *st, int64_t **ids, size_t *n, const char *what)
{
	size_t cap = 0;
	int rc;
	*ids = NULL;
	*n = 0;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (*n == cap) {
			cap = cap ? cap * 2 : 64;
			*ids = gv_realloc(*ids, cap * sizeof **ids);
		}
		(*ids)[(*n)++] = sqlite3_column_int64(st, 0);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		free(*ids);
		*ids = NULL;
		*n = 0;
		return store_fail(s, what);
	}
	return STORE_OK;
}

/*
 * A statement prepared once per connection and kept (an import runs each per
 * fingerprint: preparing them was a tenth of its time); step it with
 * sto_step_kept(), never finalize it.
 */
int sto_prepare_kept(struct store *s, const char *sql, sqlite3_stmt **st)
{
	int i = 0;
	while (i < STORE_KEPT_STMTS && s->kept[i].sql && s->kept[i].sql != sql)
		i++;
	if (i == STORE_KEPT_STMTS) {
		sto_set_err(s, "database '%s': more than %d kept statements", s->path, STORE_KEPT_STMTS);
		return STORE_ERR;
	}
	if (!s->kept[i].sql) {
		if (store_prepare(s, sql, &s->kept[i].st))
			return STORE_ERR;
		s->kept[i].sql = sql;
	}
	*st = s->kept[i].st;
	sqlite3_clear_bindings(*st);
	return STORE_OK;
}

/* A kept statement stepped as before it was kept: any failure, a constraint too, is STORE_ERR. */
int sto_step_kept_err(struct store *s, sqlite3_stmt *st, const char *what)
{
	int rc = sqlite3_step(st) == SQLITE_DONE ? STORE_OK : store_fail(s, what);
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);   /* no pointer of sto_bind_kept_text() outlives the step */
	return rc;
}

/* sto_step_done() for a kept statement: reset, not finalized. */
int sto_step_kept(struct store *s, sqlite3_stmt *st, const char *what)
{
	int rc = sqlite3_step(st);
	if (rc != SQLITE_DONE)
		sto_set_err(s, "database '%s': %s: %s", s->path, what, sto_db_msg(s));
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);   /* as sto_step_kept_err */
	return rc == SQLITE_DONE ? STORE_OK : rc == SQLITE_CONSTRAINT ? STORE_DUP : STORE_ERR;
}

/* Steps a statement that returns no row, finalizes it. */
int sto_step_done(struct store *s, sqlite3_stmt *st, const char *what)
{
	int rc = sqlite3_step(st);
	if (rc != SQLITE_DONE) {
		int r = rc == SQLITE_CONSTRAINT ? STORE_DUP : STORE_ERR;
		sto_set_err(s, "database '%s': %s: %s", s->path, what, sto_db_msg(s));
		sqlite3_finalize(st);
		return r;
	}
	sqlite3_finalize(st);
	return STORE_OK;
}

void sto_now_iso(char buf[32])
{
	gv_iso8601((long)time(NULL), buf, 32);
}

/* ---- the open store, as the other files read it ---- */

int store_schema_version(struct store *s)
{
	return s->version;
}

sqlite3 *store_conn(struct store *s)
{
	return s->db;
}

char *store_col_strdup(sqlite3_stmt *st, int i)
{
	const unsigned char *t = sqlite3_column_text(st, i);
	return t ? gv_strdup((const char *)t) : NULL;
}

int sto_run_head(struct store *s, int64_t run_id, sqlite3_stmt **st)
{
	if (store_prepare(s, "SELECT " STORE_RUN_HEAD_COLS " FROM runs WHERE id = ?", st))
		return STORE_ERR;
	sqlite3_bind_int64(*st, 1, run_id);
	int rc = sqlite3_step(*st);
	if (rc == SQLITE_ROW)
		return STORE_OK;
	sqlite3_finalize(*st);
	*st = NULL;
	if (rc == SQLITE_DONE) {
		sto_set_err(s, "no run %lld in the store", (long long)run_id);
		return STORE_NOTFOUND;
	}
	return store_fail(s, "reading the run");
}

const char *sto_run_status(struct store *s, int64_t run_id, const char *stored)
{
	if (stored && !strcmp(stored, "complete"))
		return "complete";
	return stored && !strcmp(stored, "running") && sto_run_is_live(s, run_id) ? "running" : "incomplete";
}
