/*
 * store.c - the SQLite store (see store.h).
 *
 * Schema history lives in migrations[]: entry i takes a store from
 * user_version i to i+1.  A store is recognised by PRAGMA application_id
 * (STORE_APP_ID) and refused, untouched, when it belongs to something else
 * or is newer than this binary.
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

#define STORE_APP_ID 0x47505654 /* "GPVT" */
#define STORE_BUSY_MS 10000
#define STORE_KEPT_STMTS 16

struct store {
	int version;            /* the schema version it was opened at (after any migration) */
	sqlite3 *db;
	char *path;
	char err[512];
	char dbmsg[256];          /* db_msg(): SQLite's message with the system's cause */
	int busy;                 /* the last failure was SQLITE_BUSY or SQLITE_LOCKED */
	volatile int *stop;       /* store_set_stop_flag() */
	struct {
		const char *sql;  /* a string literal, matched by address */
		sqlite3_stmt *st;
	} kept[STORE_KEPT_STMTS]; /* prepare_kept(): the statements an import runs per fingerprint */
	int in_bench;
	int in_batch;     /* store_batch_begin .. store_batch_end: imports share its transaction */
	int lock_fd;      /* the file again, for the live-run locks (closed after SQLite's) */
	int64_t live_run; /* the run this process is writing, 0 when none */
};

/*
 * A run being written is marked live by an open-file-description lock on
 * one byte far past SQLite's own lock bytes (LIVE_LOCK_BASE + run id):
 * another process sees it with F_OFD_GETLK, and the kernel drops it when
 * the writer dies however it dies.  So a live run lists as "running" and a
 * killed one as "incomplete", and merge leaves a live run for later.  The
 * descriptor is closed only after sqlite3_close(): closing a descriptor of
 * the database file would drop SQLite's own POSIX locks.
 */
#define LIVE_LOCK_BASE (1LL << 42)

static int live_lock(struct store *s, int64_t run_id, short type)
{
	if (s->lock_fd < 0)
		return -1;
	struct flock fl = { .l_type = type, .l_whence = SEEK_SET, .l_start = LIVE_LOCK_BASE + run_id, .l_len = 1 };
	return fcntl(s->lock_fd, F_OFD_SETLK, &fl);
}

/* True when another process holds run_id's live lock. */
static int run_is_live(struct store *s, int64_t run_id)
{
	if (s->lock_fd < 0)
		return 0;
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = LIVE_LOCK_BASE + run_id, .l_len = 1 };
	return fcntl(s->lock_fd, F_OFD_GETLK, &fl) == 0 && fl.l_type != F_UNLCK;
}

int store_run_live(struct store *s, int64_t run_id)
{
	return run_is_live(s, run_id);
}

static char open_err[512];

static const char *const migrations[] = {
	/* 0 -> 1 */
	"CREATE TABLE runs ("
	"  id INTEGER PRIMARY KEY,"
	"  uuid TEXT NOT NULL UNIQUE,"
	"  status TEXT NOT NULL CHECK (status IN ('running','complete','incomplete')),"
	"  profile TEXT, gpuvet_version TEXT, hostname TEXT,"
	"  provider TEXT, instance_type TEXT, region TEXT,"
	"  gpu_model TEXT, gpu_count INTEGER NOT NULL DEFAULT 0,"
	"  started_at TEXT NOT NULL, finished_at TEXT,"
	"  inventory TEXT);"
	"CREATE INDEX runs_sku ON runs(provider, instance_type);"
	"CREATE TABLE gpus ("
	"  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
	"  idx INTEGER NOT NULL, name TEXT, uuid TEXT, reference_model TEXT,"
	"  PRIMARY KEY (run_id, idx));"
	"CREATE TABLE benches ("
	"  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
	"  name TEXT NOT NULL,"
	"  status TEXT NOT NULL CHECK (status IN ('ok','skipped','failed','timed_out')),"
	"  reason TEXT, duration_s REAL, config TEXT,"
	"  PRIMARY KEY (run_id, name));"
	"CREATE TABLE metrics ("
	"  id INTEGER PRIMARY KEY,"
	"  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
	"  bench TEXT NOT NULL, name TEXT NOT NULL, gpu INTEGER NOT NULL DEFAULT -1,"
	"  value REAL, unit TEXT, params TEXT);"
	"CREATE INDEX metrics_run ON metrics(run_id);"
	"CREATE INDEX metrics_name ON metrics(name, gpu);"
	"CREATE TABLE samples ("
	"  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
	"  bench TEXT NOT NULL, series TEXT NOT NULL, gpu INTEGER NOT NULL DEFAULT -1,"
	"  x REAL, y REAL);"
	"CREATE INDEX samples_run ON samples(run_id, series, gpu);"
	"CREATE TABLE flags ("
	"  id INTEGER PRIMARY KEY,"
	"  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
	"  code TEXT NOT NULL,"
	"  severity TEXT NOT NULL CHECK (severity IN ('critical','warning','info')),"
	"  message TEXT, evidence TEXT);"
	"CREATE INDEX flags_run ON flags(run_id);"
	"CREATE TABLE verdicts ("
	"  id INTEGER PRIMARY KEY,"
	"  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
	"  verdict TEXT NOT NULL CHECK (verdict IN ('accept','reject','unmeasurable')),"
	"  policy TEXT NOT NULL, detail TEXT, at TEXT NOT NULL,"
	"  UNIQUE (run_id, policy));"
	"CREATE TABLE prices ("
	"  id INTEGER PRIMARY KEY,"
	"  provider TEXT NOT NULL, instance_type TEXT NOT NULL,"
	"  region TEXT NOT NULL DEFAULT '', zone TEXT NOT NULL DEFAULT '',"
	"  gpu_model TEXT, gpu_count REAL, gpu_memory_gib REAL, vcpus INTEGER, memory_gib REAL,"
	"  market TEXT NOT NULL CHECK (market IN ('on_demand','spot','reserved')),"
	"  term TEXT NOT NULL DEFAULT '', upfront REAL,"
	"  price REAL NOT NULL CHECK (price >= 0),"
	"  unit TEXT NOT NULL CHECK (unit IN ('hour','month')),"
	"  currency TEXT NOT NULL, source TEXT NOT NULL, source_version TEXT,"
	"  captured_at TEXT NOT NULL,"
	"  UNIQUE (provider, instance_type, region, zone, market, term, source));"
	"CREATE INDEX prices_sku ON prices(provider, instance_type);"
	"CREATE TABLE fx_rates ("
	"  currency TEXT PRIMARY KEY, usd_per_unit REAL NOT NULL,"
	"  captured_at TEXT NOT NULL, source TEXT NOT NULL);"
	"CREATE TABLE price_sources ("
	"  source TEXT PRIMARY KEY, provider TEXT, fetched_at TEXT, status TEXT,"
	"  message TEXT, rows INTEGER);",
	/* 1 -> 2: what to do about a flag, one line (issue 13) */
	"ALTER TABLE flags ADD COLUMN remediation TEXT;",
	/*
	 * 2 -> 3: what rank and the report read, each from a covering index so
	 * no row of a run's inventory or a flag's evidence is read (issue 17)
	 */
	"CREATE INDEX metrics_head ON metrics(name, run_id, value, unit) WHERE gpu = -1;"
	"DROP INDEX runs_sku; CREATE INDEX runs_sku ON runs(provider, instance_type, region, gpu_model, gpu_count);"
	"DROP INDEX flags_run; CREATE INDEX flags_run ON flags(run_id, severity, code);",
	/*
	 * 3 -> 4 (issue 17): `results list`, `export --format csv` and the report read every run in
	 * started order: covering indexes, so they never sort, and never read a run's inventory
	 * (kilobytes) or a bench's config to print a few columns.  Only indexes, so a binary of this
	 * version still reads a version-2 or -3 store read-only (STORE_READ_MIN_VERSION).
	 */
	"CREATE INDEX runs_list ON runs(started_at, id, uuid, status, provider, instance_type, region, gpu_model,"
	" gpu_count, profile, gpuvet_version, hostname, finished_at);"
	"CREATE INDEX benches_list ON benches(run_id, name, status);",
	/*
	 * 4 -> 5 (issue 17): a series is one row, its points one blob (STORE_POINT_BYTES
	 * per point), not a row per point: an import writes about 60 rows per fingerprint
	 * instead of 420.  The rows of `samples` are packed by samples_to_series().
	 */
	"CREATE TABLE series ("
	"  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
	"  bench TEXT NOT NULL, series TEXT NOT NULL, gpu INTEGER NOT NULL DEFAULT -1,"
	"  points BLOB NOT NULL,"
	"  UNIQUE (run_id, series, gpu, bench));",
};

#define N_MIGRATIONS ((int)(sizeof migrations / sizeof migrations[0]))
_Static_assert(sizeof migrations / sizeof migrations[0] == STORE_SCHEMA_VERSION, "one migration per schema version");

static void set_err(struct store *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void set_err(struct store *s, const char *fmt, ...)
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
	if (se && (ec == SQLITE_IOERR || ec == SQLITE_FULL || ec == SQLITE_CANTOPEN))
		snprintf(buf, len, "%s (%s)", sqlite3_errmsg(db), strerror(se));
	else if ((ec == SQLITE_IOERR || ec == SQLITE_FULL) && file && *file && !statvfs(file, &vf) &&
		 (unsigned long long)vf.f_bavail * vf.f_frsize < (1u << 20))
		/* SQLite kept no errno (a failed sync is rolled back): the file system tells */
		snprintf(buf, len, "%s (%s)", sqlite3_errmsg(db), strerror(ENOSPC));
	else
		snprintf(buf, len, "%s", sqlite3_errmsg(db));
	return buf;
}

static const char *db_msg(struct store *s)
{
	int ec = sqlite3_errcode(s->db);
	s->busy = ec == SQLITE_BUSY || ec == SQLITE_LOCKED;
	return store_sqlite_msg(s->db, s->dbmsg, sizeof s->dbmsg);
}

int store_is_busy(const struct store *s)
{
	return s && s->busy;
}

/* SQLite's busy handler while a stop flag is set: as the busy timeout, but a stop ends the wait. */
static int busy_wait(void *arg, int count)
{
	struct store *s = arg;
	if ((s->stop && *s->stop) || count >= STORE_BUSY_MS / 10)
		return 0;
	sqlite3_sleep(10);
	return 1;
}

void store_set_stop_flag(struct store *s, volatile int *stop)
{
	s->stop = stop;
	if (stop)
		sqlite3_busy_handler(s->db, busy_wait, s);
	else
		sqlite3_busy_timeout(s->db, STORE_BUSY_MS);
}

static int sql_fail(struct store *s, const char *what)
{
	set_err(s, "database '%s': %s: %s", s->path, what, db_msg(s));
	return STORE_ERR;
}

const char *store_errmsg(const struct store *s)
{
	return s ? s->err : open_err;
}

const char *store_open_error(void)
{
	return open_err;
}

void *store_db(struct store *s)
{
	return s->db;
}

const char *store_default_path(void)
{
	static char buf[PATH_MAX];
	const char *e = getenv("GPUVET_DB");
	if (e && *e)
		return e;
	const char *x = getenv("XDG_DATA_HOME");
	if (x && *x) {
		snprintf(buf, sizeof buf, "%s/gpuvet/gpuvet.db", x);
		return buf;
	}
	/* HOME unset (a cron job, a container): the account's home, as git does; never the working directory */
	const char *h = getenv("HOME");
	if (!h || !*h) {
		struct passwd *pw = getpwuid(getuid());
		h = pw && pw->pw_dir && *pw->pw_dir ? pw->pw_dir : "/nonexistent-home";
	}
	snprintf(buf, sizeof buf, "%s/.local/share/gpuvet/gpuvet.db", h);
	return buf;
}

/* mkdir -p of the directory part of path. */
static int make_parent_dirs(const char *path)
{
	char buf[PATH_MAX];
	if (gv_strlcpy(buf, path, sizeof buf) >= sizeof buf) {
		errno = ENAMETOOLONG;
		return -1;
	}
	char *slash = strrchr(buf, '/');
	if (!slash || slash == buf)
		return 0;
	*slash = '\0';
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, 0755) < 0 && errno != EEXIST)
			return -1;
		*p = '/';
	}
	if (mkdir(buf, 0755) < 0 && errno != EEXIST)
		return -1;
	return 0;
}

static int exec_sql(struct store *s, const char *sql)
{
	char *msg = NULL;
	if (sqlite3_exec(s->db, sql, NULL, NULL, &msg) != SQLITE_OK) {
		set_err(s, "database '%s': %s", s->path, db_msg(s));   /* SQLite's message, with the disk's cause */
		sqlite3_free(msg);
		return STORE_ERR;
	}
	return STORE_OK;
}

static int pragma_int(struct store *s, const char *sql, int *out)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK)
		return STORE_ERR;
	int rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		*out = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	return rc == SQLITE_ROW ? STORE_OK : STORE_ERR;
}

static const char *describe_open_failure(sqlite3 *db, int rc)
{
	switch (rc) {
	case SQLITE_NOTADB: return "not a database";
	case SQLITE_CORRUPT: return "database file is corrupt";
	case SQLITE_CANTOPEN: return "cannot open file";
	case SQLITE_READONLY: return "read-only";
	default: return db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
	}
}

/*
 * gpuvet's schema has tables and indexes only.  A view or a trigger (a
 * recursive view standing in for a table hangs every reader and fills the
 * temp directory; a trigger runs code on gpuvet's writes) means the file is
 * not gpuvet's own: refused before any row is read.
 */
static int foreign_schema(struct store *s)
{
	sqlite3_stmt *st;
	int rc = sqlite3_prepare_v2(s->db, "SELECT type, name FROM sqlite_master WHERE type IN ('view', 'trigger') LIMIT 1",
				    -1, &st, NULL);
	if (rc != SQLITE_OK)
		return sql_fail(s, "reading the schema");
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		char shown[4 * 64 + 16];
		ident_escape((const char *)sqlite3_column_text(st, 1), shown, 64);
		set_err(s, "database '%s' holds a %s ('%s'): gpuvet's schema has none, so it is not gpuvet's; "
			   "not touching it", s->path, (const char *)sqlite3_column_text(st, 0), shown);
		sqlite3_finalize(st);
		return STORE_NOTGPUVET;
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? STORE_OK : sql_fail(s, "reading the schema");
}

/* What the header says: tables, application_id, user_version, in one read transaction. */
static int read_header(struct store *s, int *ntables, int *appid, int *version)
{
	sqlite3_stmt *st;
	int rc = sqlite3_prepare_v2(s->db, "SELECT count(*) FROM sqlite_master", -1, &st, NULL);
	if (rc == SQLITE_OK) {
		rc = sqlite3_step(st);
		if (rc == SQLITE_ROW) {
			*ntables = sqlite3_column_int(st, 0);
			rc = SQLITE_OK;
		}
		sqlite3_finalize(st);
	}
	if (rc != SQLITE_OK) {
		int ext = sqlite3_errcode(s->db);
		if (ext == SQLITE_NOTADB) {
			set_err(s, "'%s' is not a gpuvet database (not an sqlite file)", s->path);
			return STORE_NOTGPUVET;
		}
		set_err(s, "cannot read database '%s': %s", s->path,
			ext == SQLITE_CORRUPT ? describe_open_failure(s->db, ext) : db_msg(s));
		return STORE_ERR;
	}
	if (pragma_int(s, "PRAGMA application_id", appid) || pragma_int(s, "PRAGMA user_version", version))
		return sql_fail(s, "reading the schema version");
	return foreign_schema(s);
}

/* STORE_OK when the header is a gpuvet store (or an empty file) this binary can open. */
static int judge_header(struct store *s, int ntables, int appid, int version)
{
	if (appid != STORE_APP_ID && !(appid == 0 && ntables == 0 && version == 0)) {
		set_err(s, "'%s' is not a gpuvet database", s->path);
		return STORE_NOTGPUVET;
	}
	if (appid == STORE_APP_ID && version == 0 && ntables > 0) {
		set_err(s, "database '%s' is marked as gpuvet's but has no schema version (%d tables): "
			"not touching it", s->path, ntables);
		return STORE_NOTGPUVET;
	}
	if (version > STORE_SCHEMA_VERSION) {
		set_err(s, "database '%s' has schema version %d, newer than this gpuvet (%d): upgrade gpuvet",
			s->path, version, STORE_SCHEMA_VERSION);
		return STORE_TOONEW;
	}
	return STORE_OK;
}

/*
 * Runs one statement, retrying while another process holds the lock it
 * needs: a change of journal mode does not wait through the busy handler.
 */
static int exec_retry(struct store *s, const char *sql)
{
	for (int waited = 0;; waited += 10) {
		int rc = sqlite3_exec(s->db, sql, NULL, NULL, NULL);
		if (rc == SQLITE_OK)
			return STORE_OK;
		if ((rc != SQLITE_BUSY && rc != SQLITE_LOCKED) || waited >= STORE_BUSY_MS)
			return exec_sql(s, sql);
		usleep(10000);
	}
}

/* The migration's progress on a terminal (a 100k-run store has 38 M sample rows: minutes). */
static void migrate_progress(long long done, long long total)
{
	if (total < 1000000 || !gv_progress_enabled())
		return;
	if (done < 0)
		fputc('\n', stderr);   /* failed: the error goes on its own line */
	else if (done < total)
		fprintf(stderr, "\rgpuvet: packing the store's %lld sample points into series (schema 5): %lld %%",
			total, done * 100 / total);
	else
		fprintf(stderr, "\rgpuvet: packed the store's %lld sample points into series (schema 5)    \n", total);
}

/* 4 -> 5: each series' rows of samples, in their order, packed into one row of series; samples dropped. */
static int samples_to_series(struct store *s)
{
	sqlite3_stmt *st;
	if (store_prepare(s, "SELECT run_id, bench, series, gpu, x, y, (SELECT max(rowid) FROM samples) FROM samples"
			  " ORDER BY run_id, series, gpu, rowid", &st))
		return STORE_ERR;
	double *xy = NULL;
	size_t n = 0, cap = 0;
	int64_t run = 0;
	char *bench = NULL, *series = NULL;
	int gpu = 0, rc = STORE_OK, step;
	long long rows = 0, total = 0;
	while (rc == STORE_OK && (step = sqlite3_step(st)) == SQLITE_ROW) {
		if (rows++ % 1000000 == 0)
			migrate_progress(rows - 1, total = sqlite3_column_int64(st, 6));
		const char *b = (const char *)sqlite3_column_text(st, 1), *se = (const char *)sqlite3_column_text(st, 2);
		int64_t r = sqlite3_column_int64(st, 0);
		int g = sqlite3_column_int(st, 3);
		if (n && (r != run || g != gpu || strcmp(bench, b ? b : "") || strcmp(series, se ? se : ""))) {
			rc = store_put_series(s, run, bench, series, gpu, xy, n);
			n = 0;
		}
		if (!n) {
			free(bench);
			free(series);
			bench = strdup(b ? b : "");
			series = strdup(se ? se : "");
			run = r;
			gpu = g;
		}
		if (n == cap) {
			double *grown = realloc(xy, 2 * (cap ? 2 * cap : 256) * sizeof *xy);
			if (grown) {
				xy = grown;
				cap = cap ? 2 * cap : 256;
			}
		}
		if (n == cap || !bench || !series) {
			set_err(s, "out of memory migrating the samples");
			rc = STORE_ERR;
			break;
		}
		xy[2 * n] = sqlite3_column_type(st, 4) == SQLITE_NULL ? 0.0 / 0.0 : sqlite3_column_double(st, 4);
		xy[2 * n + 1] = sqlite3_column_type(st, 5) == SQLITE_NULL ? 0.0 / 0.0 : sqlite3_column_double(st, 5);
		n++;
	}
	if (rc == STORE_OK && step != SQLITE_DONE)
		rc = sql_fail(s, "migrating the samples");
	if (rc == STORE_OK && n)
		rc = store_put_series(s, run, bench, series, gpu, xy, n);
	migrate_progress(rc == STORE_OK ? total : -1, total);
	sqlite3_finalize(st);
	free(xy);
	free(bench);
	free(series);
	return rc == STORE_OK ? exec_sql(s, "DROP TABLE samples") : rc;
}

/* The steps of a migration SQL cannot do, run after its SQL. */
static int (*const migration_code[N_MIGRATIONS])(struct store *) = { [4] = samples_to_series };

/* Migrates under the write lock, re-reading the header there. */
static int migrate(struct store *s)
{
	int ntables = 0, appid = 0, version = 0, rc;
	if (exec_retry(s, "BEGIN IMMEDIATE"))
		return STORE_ERR;
	/* another process may have migrated (or written something else) meanwhile */
	if ((rc = read_header(s, &ntables, &appid, &version)) || (rc = judge_header(s, ntables, appid, version)))
		goto fail;
	rc = STORE_ERR;
	for (int v = version; v < N_MIGRATIONS; v++) {
		if (exec_sql(s, migrations[v]) || (migration_code[v] && migration_code[v](s)))
			goto fail;
		char sql[96];
		snprintf(sql, sizeof sql, "PRAGMA user_version=%d; PRAGMA application_id=%d", v + 1, STORE_APP_ID);
		if (exec_sql(s, sql))
			goto fail;
	}
	if (exec_sql(s, "COMMIT"))
		goto fail;
	return STORE_OK;
fail:
	sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
	return rc;
}

/*
 * The corruption check of every open: PRAGMA quick_check (b-tree structure,
 * page and record format; not index contents), stopped after
 * QUICK_CHECK_BUDGET_MS by a watchdog's sqlite3_interrupt().  It reads the whole file (about 10 ms per MB:
 * tests/bench/store_open_bench.sh, README), so a store up to about 50 MB
 * (some hundreds of runs) is checked whole on every open and a larger one
 * as far as the budget goes; SQLite still refuses a corrupt page it meets
 * later, and no write is committed on top of one.
 */
#define QUICK_CHECK_BUDGET_MS 500.0
/* A read-only open (list, export, rank, report) writes nothing on a corrupt page: a shorter look. */
#define QUICK_CHECK_BUDGET_RO_MS 100.0

/* A watchdog thread: sqlite3_interrupt() once the budget is spent, unless told to stop first. */
struct qc_watch {
	sqlite3 *db;
	double budget_ms;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int done;
};

static void *qc_watchdog(void *arg)
{
	struct qc_watch *w = arg;
	struct timespec until;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_nsec += (long)(w->budget_ms * 1e6);
	until.tv_sec += until.tv_nsec / 1000000000L;
	until.tv_nsec %= 1000000000L;
	pthread_mutex_lock(&w->mu);
	int rc = 0;
	while (!w->done && rc != ETIMEDOUT)
		rc = pthread_cond_timedwait(&w->cv, &w->mu, &until);
	if (!w->done)
		sqlite3_interrupt(w->db);
	pthread_mutex_unlock(&w->mu);
	return NULL;
}

static int quick_check(struct store *s, double budget_ms)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(s->db, "PRAGMA quick_check(1)", -1, &st, NULL) != SQLITE_OK)
		goto corrupt;
	struct qc_watch wd = { .db = s->db, .budget_ms = budget_ms, .mu = PTHREAD_MUTEX_INITIALIZER,
			       .cv = PTHREAD_COND_INITIALIZER };
	pthread_t th;
	int watching = pthread_create(&th, NULL, qc_watchdog, &wd) == 0;
	int rc = sqlite3_step(st);
	if (watching) {
		pthread_mutex_lock(&wd.mu);
		wd.done = 1;
		pthread_cond_signal(&wd.cv);
		pthread_mutex_unlock(&wd.mu);
		pthread_join(th, NULL);
	}
	if (rc == SQLITE_INTERRUPT) { /* the budget is spent: what was read is sound */
		sqlite3_finalize(st);
		return STORE_OK;
	}
	const unsigned char *v = rc == SQLITE_ROW ? sqlite3_column_text(st, 0) : NULL;
	int ok = v && !strcmp((const char *)v, "ok");
	char first[160] = "";
	if (!ok && v) { /* one line: drop SQLite's banner, newlines become "; " */
		const char *t = (const char *)v, *banner = "*** in database main ***\n";
		if (!strncmp(t, banner, strlen(banner)))
			t += strlen(banner);
		size_t w = 0;
		for (; *t && w + 3 < sizeof first; t++) {
			if (*t == '\n') {
				first[w++] = ';';
				first[w++] = ' ';
			} else if ((unsigned char)*t >= 0x20) {
				first[w++] = *t;
			}
		}
		first[w] = 0;
	}
	sqlite3_finalize(st);
	if (ok)
		return STORE_OK;
	if (rc == SQLITE_BUSY || rc == SQLITE_LOCKED)
		return sql_fail(s, "checking the database");
	set_err(s, "database '%s' is corrupt (%s): refusing to use it; restore a copy or start a new "
		"one with --db", s->path, first[0] ? first : sqlite3_errmsg(s->db));
	return STORE_CORRUPT;
corrupt:
	set_err(s, "database '%s' is corrupt (%s): refusing to use it; restore a copy or start a new "
		"one with --db", s->path, sqlite3_errmsg(s->db));
	return STORE_CORRUPT;
}

/*
 * Recognises the file, checks it and migrates it.  Nothing is written to a
 * foreign or corrupt file.  Two processes opening a new store at once both
 * succeed: the header is read in one transaction, the migration re-reads it
 * under the write lock, and the switch to WAL retries while the other holds
 * a lock.
 */
static int check_and_migrate(struct store *s, int readonly)
{
	int appid = 0, version = 0, ntables = 0, rc;
	/* Reading the schema is the first access: a non-database fails here, untouched. */
	if (exec_retry(s, "BEGIN"))
		return STORE_ERR;
	rc = read_header(s, &ntables, &appid, &version);
	sqlite3_exec(s->db, "COMMIT", NULL, NULL, NULL);
	if (rc || (rc = judge_header(s, ntables, appid, version)))
		return rc;
	if (ntables > 0 && (rc = quick_check(s, readonly ? QUICK_CHECK_BUDGET_RO_MS : QUICK_CHECK_BUDGET_MS)))
		return rc;
	s->version = ntables > 0 ? version : STORE_SCHEMA_VERSION;
	if (readonly) {
		if (version < STORE_READ_MIN_VERSION) {
			set_err(s, "database '%s' has an old schema (%d): open it once read-write to migrate",
				s->path, version);
			return STORE_ERR;
		}
		return STORE_OK;
	}
	if (version < STORE_SCHEMA_VERSION && (rc = migrate(s)))
		return rc;
	s->version = STORE_SCHEMA_VERSION;
	return exec_retry(s, "PRAGMA journal_mode=WAL");
}

/*
 * Durability (docs/store.md): WAL with synchronous=NORMAL.  A commit
 * is then in the WAL file (write(2) done) before COMMIT returns, so a
 * process crash (kill -9, a segfault) never loses a committed run; only a
 * power loss or kernel crash can take back the last transactions, which
 * SQLite documents ("WAL mode is always consistent with synchronous=NORMAL,
 * but WAL mode does lose durability", https://www.sqlite.org/pragma.html#pragma_synchronous).
 * GPUVET_DB_SYNC=full waits for an fsync on every commit instead.
 */
static int set_synchronous(struct store *s)
{
	const char *v = getenv("GPUVET_DB_SYNC");
	if (v && *v && strcmp(v, "normal") && strcmp(v, "full")) {
		set_err(s, "GPUVET_DB_SYNC '%s' is not normal or full", v);
		return STORE_ERR;
	}
	return exec_sql(s, v && !strcmp(v, "full") ? "PRAGMA synchronous=FULL" : "PRAGMA synchronous=NORMAL");
}

/* "file:PATH?immutable=1" when the store can only be read and no -wal shows a writer at work, else NULL. */
static char *immutable_uri(const char *path)
{
	char *wal = gv_asprintf("%s-wal", path), *dir = gv_strdup(path);
	char *slash = strrchr(dir, '/');
	if (slash)
		slash[slash == dir] = '\0';
	int only_read = access(path, W_OK) != 0 && access(slash ? dir : ".", W_OK) != 0 && access(wal, F_OK) != 0;
	free(wal);
	free(dir);
	if (!only_read)
		return NULL;
	/* percent-encode what a URI path may not hold as it is */
	size_t n = strlen(path);
	char *u = gv_malloc(3 * n + 32), *o = u;
	o += sprintf(o, "file:");
	for (const char *c = path; *c; c++) {
		if (*c == '%' || *c == '?' || *c == '#' || (unsigned char)*c < 0x21 || (unsigned char)*c >= 0x7f)
			o += sprintf(o, "%%%02X", (unsigned char)*c);
		else
			*o++ = *c;
	}
	strcpy(o, "?immutable=1");
	return u;
}

static int open_common(const char *path, struct store **out, int readonly)
{
	*out = NULL;
	open_err[0] = '\0';
	struct store *s = gv_calloc(1, sizeof *s);
	s->path = gv_strdup(path);
	s->lock_fd = -1;
	int flags = readonly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
	struct stat sb;

	if (readonly && stat(path, &sb) < 0) {
		snprintf(open_err, sizeof open_err, "cannot open database '%s': %s", path, strerror(errno));
		goto fail_nodb;
	}
	if (!readonly && stat(path, &sb) < 0) {
		if (errno != ENOENT) {
			snprintf(open_err, sizeof open_err, "cannot open database '%s': %s", path, strerror(errno));
			goto fail_nodb;
		}
		if (make_parent_dirs(path) < 0) {
			snprintf(open_err, sizeof open_err, "cannot create directory for database '%s': %s", path,
				 strerror(errno));
			goto fail_nodb;
		}
	}
	if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode)) {
		snprintf(open_err, sizeof open_err, "cannot open database '%s': is a directory", path);
		goto fail_nodb;
	}
	/*
	 * A WAL store that may only be read (no write permission on it or its directory) cannot get
	 * the -shm file a reader needs: with no -wal beside it (no writer is at work), it is opened
	 * immutable, which reads without one.
	 */
	char *uri = readonly ? immutable_uri(path) : NULL;
	int rc = sqlite3_open_v2(uri ? uri : path, &s->db, flags | SQLITE_OPEN_NOMUTEX | (uri ? SQLITE_OPEN_URI : 0),
				 NULL);
	if (uri)
		gv_debug("store %s: read-only file and directory, no -wal: opened immutable", path);
	free(uri);
	if (rc != SQLITE_OK) {
		snprintf(open_err, sizeof open_err, "cannot open database '%s': %s", path,
			 describe_open_failure(s->db, rc));
		goto fail;
	}
	sqlite3_extended_result_codes(s->db, 0);
	sqlite3_busy_timeout(s->db, STORE_BUSY_MS);
	rc = check_and_migrate(s, readonly);
	if (rc != STORE_OK) {
		gv_strlcpy(open_err, s->err, sizeof open_err);
		store_close(s);
		return rc;
	}
	if (exec_sql(s, "PRAGMA foreign_keys=ON") || (!readonly && set_synchronous(s))) {
		gv_strlcpy(open_err, s->err, sizeof open_err);
		store_close(s);
		return STORE_ERR;
	}
	s->lock_fd = open(path, O_RDONLY | O_CLOEXEC); /* -1: live runs list as incomplete */
	*out = s;
	return STORE_OK;
fail:
	sqlite3_close(s->db);
fail_nodb:
	free(s->path);
	free(s);
	return STORE_ERR;
}

int store_open(const char *path, struct store **out)
{
	return open_common(path, out, 0);
}

int store_open_readonly(const char *path, struct store **out)
{
	return open_common(path, out, 1);
}

void store_close(struct store *s)
{
	if (!s)
		return;
	if (s->in_bench || s->in_batch)
		sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
	for (int i = 0; i < STORE_KEPT_STMTS; i++)
		sqlite3_finalize(s->kept[i].st);
	sqlite3_close(s->db);
	if (s->lock_fd >= 0)
		close(s->lock_fd); /* after SQLite's: see LIVE_LOCK_BASE */
	free(s->path);
	free(s);
}

/* ---- small binding helpers ---- */

static void bind_text(sqlite3_stmt *st, int i, const char *v)
{
	if (v)
		sqlite3_bind_text(st, i, v, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(st, i);
}

static void bind_real(sqlite3_stmt *st, int i, double v)
{
	if (v == v)
		sqlite3_bind_double(st, i, v);
	else
		sqlite3_bind_null(st, i);
}

static int prepare(struct store *s, const char *sql, sqlite3_stmt **st)
{
	if (sqlite3_prepare_v2(s->db, sql, -1, st, NULL) != SQLITE_OK)
		return sql_fail(s, "preparing a statement");
	return STORE_OK;
}

/*
 * A statement prepared once per connection and kept (an import runs each per
 * fingerprint: preparing them was a tenth of its time); step it with
 * step_kept(), never finalize it.
 */
static int prepare_kept(struct store *s, const char *sql, sqlite3_stmt **st)
{
	int i = 0;
	while (i < STORE_KEPT_STMTS && s->kept[i].sql && s->kept[i].sql != sql)
		i++;
	if (i == STORE_KEPT_STMTS) {
		set_err(s, "database '%s': more than %d kept statements", s->path, STORE_KEPT_STMTS);
		return STORE_ERR;
	}
	if (!s->kept[i].sql) {
		if (prepare(s, sql, &s->kept[i].st))
			return STORE_ERR;
		s->kept[i].sql = sql;
	}
	*st = s->kept[i].st;
	sqlite3_clear_bindings(*st);
	return STORE_OK;
}

/* A kept statement stepped as before it was kept: any failure, a constraint too, is STORE_ERR. */
static int step_kept_err(struct store *s, sqlite3_stmt *st, const char *what)
{
	int rc = sqlite3_step(st) == SQLITE_DONE ? STORE_OK : sql_fail(s, what);
	sqlite3_reset(st);
	return rc;
}

/* step_done() for a kept statement: reset, not finalized. */
static int step_kept(struct store *s, sqlite3_stmt *st, const char *what)
{
	int rc = sqlite3_step(st);
	if (rc != SQLITE_DONE)
		set_err(s, "database '%s': %s: %s", s->path, what, db_msg(s));
	sqlite3_reset(st);
	return rc == SQLITE_DONE ? STORE_OK : rc == SQLITE_CONSTRAINT ? STORE_DUP : STORE_ERR;
}

/* Steps a statement that returns no row, finalizes it. */
static int step_done(struct store *s, sqlite3_stmt *st, const char *what)
{
	int rc = sqlite3_step(st);
	if (rc != SQLITE_DONE) {
		int r = rc == SQLITE_CONSTRAINT ? STORE_DUP : STORE_ERR;
		set_err(s, "database '%s': %s: %s", s->path, what, db_msg(s));
		sqlite3_finalize(st);
		return r;
	}
	sqlite3_finalize(st);
	return STORE_OK;
}

static void now_iso(char buf[32])
{
	gv_iso8601((long)time(NULL), buf, 32);
}

/* ---- writing ---- */

static int insert_run(struct store *s, const char *uuid, const char *status, const char *profile,
		      const char *version, const char *hostname, const char *provider,
		      const char *itype, const char *region, const char *gpu_model, int gpu_count,
		      const char *started, const char *finished, const char *inventory_json, int64_t *run_id)
{
	sqlite3_stmt *st;
	if (prepare_kept(s, "INSERT INTO runs (uuid, status, profile, gpuvet_version, hostname, provider,"
		       " instance_type, region, gpu_model, gpu_count, started_at, finished_at, inventory)"
		       " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)", &st))
		return STORE_ERR;
	bind_text(st, 1, uuid);
	bind_text(st, 2, status);
	bind_text(st, 3, profile);
	bind_text(st, 4, version);
	bind_text(st, 5, hostname);
	bind_text(st, 6, provider);
	bind_text(st, 7, itype);
	bind_text(st, 8, region);
	bind_text(st, 9, gpu_model);
	sqlite3_bind_int(st, 10, gpu_count);
	bind_text(st, 11, started);
	bind_text(st, 12, finished);
	bind_text(st, 13, inventory_json);
	int rc = step_kept(s, st, "recording the run");
	if (rc == STORE_OK)
		*run_id = sqlite3_last_insert_rowid(s->db);
	return rc;
}

/* One GPU of a run, from its inventory. */
static int insert_gpu(struct store *s, int64_t run_id, long long idx, const char *name, const char *uuid,
		      const char *reference_model)
{
	sqlite3_stmt *st;
	if (prepare_kept(s, "INSERT OR IGNORE INTO gpus (run_id, idx, name, uuid, reference_model)"
		       " VALUES (?,?,?,?,?)", &st))
		return STORE_ERR;
	sqlite3_bind_int64(st, 1, run_id);
	sqlite3_bind_int64(st, 2, idx);
	bind_text(st, 3, name);
	bind_text(st, 4, uuid);
	bind_text(st, 5, reference_model);
	return step_kept(s, st, "recording the gpus");
}

/* The run row and its GPUs, from a run being written. */
static int insert_live_run(struct store *s, const struct run_info *ri, const char *uuid, const char *started,
			   int64_t *run_id)
{
	char *inv = ri->inventory ? json_dumps(ri->inventory, JSON_COMPACT) : NULL;
	int rc = insert_run(s, uuid, "running", ri->profile, ri->gpuvet_version, ri->hostname, ri->provider,
			    ri->instance_type, ri->region, ri->gpu_model, ri->gpu_count, started, NULL, inv, run_id);
	free(inv);
	size_t i;
	json_t *g;
	json_array_foreach(ri->inventory ? json_object_get(ri->inventory, "gpus") : NULL, i, g) {
		json_t *jidx = json_object_get(g, "index");
		if (rc == STORE_OK)
			rc = insert_gpu(s, *run_id, json_is_integer(jidx) ? json_integer_value(jidx) : (json_int_t)i,
					json_string_value(json_object_get(g, "name")),
					json_string_value(json_object_get(g, "uuid")),
					json_string_value(json_object_get(g, "reference_model")));
	}
	return rc;
}

int store_begin_run(struct store *s, const struct run_info *ri, int64_t *run_id)
{
	char uuid[37], started[32];
	if (ri->uuid)
		gv_strlcpy(uuid, ri->uuid, sizeof uuid);
	else
		gv_uuid(uuid);
	now_iso(started);
	if (exec_sql(s, "BEGIN IMMEDIATE"))
		return STORE_ERR;
	int rc = insert_live_run(s, ri, uuid, started, run_id);
	if (rc) {
		sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
		return rc;
	}
	if ((rc = exec_sql(s, "COMMIT")))
		return rc;
	if (live_lock(s, *run_id, F_RDLCK) == 0)
		s->live_run = *run_id;
	return STORE_OK;
}

int store_bench_begin(struct store *s, int64_t run_id, const char *bench)
{
	(void)run_id;
	(void)bench;
	if (s->in_bench) {
		set_err(s, "database '%s': bench transaction already open", s->path);
		return STORE_ERR;
	}
	if (exec_sql(s, "BEGIN IMMEDIATE"))
		return STORE_ERR;
	s->in_bench = 1;
	return STORE_OK;
}

int store_put_metric(struct store *s, int64_t run_id, const char *bench, const char *name,
		     int gpu, double value, const char *unit, const char *params_json)
{
	sqlite3_stmt *st;
	if (prepare_kept(s, "INSERT INTO metrics (run_id, bench, name, gpu, value, unit, params) VALUES (?,?,?,?,?,?,?)",
			 &st))
		return STORE_ERR;
	sqlite3_bind_int64(st, 1, run_id);
	bind_text(st, 2, bench);
	bind_text(st, 3, name);
	sqlite3_bind_int(st, 4, gpu);
	bind_real(st, 5, value);
	bind_text(st, 6, unit);
	bind_text(st, 7, params_json);
	return step_kept_err(s, st, "recording a metric");
}

/* One coordinate of a point: little-endian binary64, whatever the host's byte order. */
static void pack_double(unsigned char *out, double d)
{
	uint64_t u;
	memcpy(&u, &d, 8);
	for (int b = 0; b < 8; b++)
		out[b] = (unsigned char)(u >> (8 * b));
}

static double unpack_double(const unsigned char *p)
{
	uint64_t u = 0;
	for (int b = 7; b >= 0; b--)
		u = u << 8 | p[b];
	double d;
	memcpy(&d, &u, 8);
	return d;
}

/* An empty series' blob for n points (freed by the caller, or handed to put_series_blob). */
static unsigned char *series_blob(struct store *s, const char *series, size_t n)
{
	if (n > (size_t)INT_MAX / STORE_POINT_BYTES) {
		set_err(s, "series '%s': too many points (%zu)", series, n);
		return NULL;
	}
	unsigned char *blob = malloc(n * STORE_POINT_BYTES + 1);
	if (!blob)
		set_err(s, "out of memory for series '%s'", series);
	return blob;
}

/* Writes n packed points (blob from series_blob, freed here); a second write of the same series appends. */
static int put_series_blob(struct store *s, int64_t run_id, const char *bench, const char *series, int gpu,
			   unsigned char *blob, size_t n)
{
	sqlite3_stmt *st;
	if (n == 0 || prepare_kept(s, "INSERT INTO series (run_id, bench, series, gpu, points) VALUES (?,?,?,?,?)"
				   " ON CONFLICT DO UPDATE SET points = CAST(points || excluded.points AS BLOB)", &st)) {
		free(blob);
		return n == 0 ? STORE_OK : STORE_ERR;
	}
	sqlite3_bind_int64(st, 1, run_id);
	bind_text(st, 2, bench);
	bind_text(st, 3, series);
	sqlite3_bind_int(st, 4, gpu);
	sqlite3_bind_blob(st, 5, blob, (int)(n * STORE_POINT_BYTES), free);
	return step_kept_err(s, st, "recording a series");
}

int store_put_series(struct store *s, int64_t run_id, const char *bench, const char *series, int gpu,
		     const double *xy, size_t n)
{
	if (n == 0)
		return STORE_OK;
	unsigned char *blob = series_blob(s, series, n);
	if (!blob)
		return STORE_ERR;
	for (size_t i = 0; i < 2 * n; i++)
		pack_double(blob + 8 * i, xy[i]);
	return put_series_blob(s, run_id, bench, series, gpu, blob, n);
}

static int insert_bench(struct store *s, int64_t run_id, const char *bench, const char *status,
			const char *reason, double duration_s, const char *config_json)
{
	sqlite3_stmt *st;
	/* an upsert, not INSERT OR REPLACE: a REPLACE may delete, so SQLite journals every page it
	 * touches in a statement journal, a temp file inside an import's batch (28 pwrites a run) */
	if (prepare_kept(s, "INSERT INTO benches (run_id, name, status, reason, duration_s, config)"
		       " VALUES (?,?,?,?,?,?) ON CONFLICT (run_id, name) DO UPDATE SET status = excluded.status,"
		       " reason = excluded.reason, duration_s = excluded.duration_s, config = excluded.config", &st))
		return STORE_ERR;
	sqlite3_bind_int64(st, 1, run_id);
	bind_text(st, 2, bench);
	bind_text(st, 3, status);
	bind_text(st, 4, reason);
	bind_real(st, 5, duration_s);
	bind_text(st, 6, config_json);
	return step_kept(s, st, "recording the bench");
}

int store_bench_end(struct store *s, int64_t run_id, const char *bench, const char *status,
		    const char *reason, double duration_s, const char *config_json)
{
	if (!s->in_bench && store_bench_begin(s, run_id, bench))
		return STORE_ERR;
	int rc = insert_bench(s, run_id, bench, status, reason, duration_s, config_json);
	if (rc == STORE_OK)
		rc = exec_sql(s, "COMMIT");
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

static int insert_flag(struct store *s, int64_t run_id, const char *code, const char *severity,
		       const char *message, const char *evidence_json, const char *remediation)
{
	sqlite3_stmt *st;
	if (prepare_kept(s, "INSERT INTO flags (run_id, code, severity, message, evidence, remediation) VALUES (?,?,?,?,?,?)",
		    &st))
		return STORE_ERR;
	sqlite3_bind_int64(st, 1, run_id);
	bind_text(st, 2, code);
	bind_text(st, 3, severity);
	bind_text(st, 4, message);
	bind_text(st, 5, evidence_json);
	bind_text(st, 6, remediation);
	return step_kept(s, st, "recording a flag");
}

int store_put_flag(struct store *s, int64_t run_id, const char *code, const char *severity,
		   const char *message, const char *evidence_json, const char *remediation)
{
	return insert_flag(s, run_id, code, severity, message, evidence_json, remediation);
}

int store_clear_flags(struct store *s, int64_t run_id)
{
	sqlite3_stmt *st;
	if (prepare(s, "DELETE FROM flags WHERE run_id = ?", &st))
		return STORE_ERR;
	sqlite3_bind_int64(st, 1, run_id);
	return step_done(s, st, "clearing flags");
}

static int insert_verdict(struct store *s, int64_t run_id, const char *verdict, const char *policy,
			  const char *detail_json, const char *at)
{
	sqlite3_stmt *st;
	if (prepare_kept(s, "INSERT INTO verdicts (run_id, verdict, policy, detail, at) VALUES (?,?,?,?,?)"
			 " ON CONFLICT (run_id, policy) DO UPDATE SET verdict = excluded.verdict,"
			 " detail = excluded.detail, at = excluded.at", &st))   /* an upsert: see insert_bench */
		return STORE_ERR;
	sqlite3_bind_int64(st, 1, run_id);
	bind_text(st, 2, verdict);
	bind_text(st, 3, policy);
	bind_text(st, 4, detail_json);
	bind_text(st, 5, at);
	return step_kept(s, st, "recording the verdict");
}

int store_put_verdict(struct store *s, int64_t run_id, const char *verdict, const char *policy,
		      const char *detail_json)
{
	char at[32];
	now_iso(at);
	return insert_verdict(s, run_id, verdict, policy, detail_json, at);
}

int store_finish_run(struct store *s, int64_t run_id, const char *status)
{
	sqlite3_stmt *st;
	char at[32];
	now_iso(at);
	if (prepare(s, "UPDATE runs SET status = ?, finished_at = ? WHERE id = ?", &st))
		return STORE_ERR;
	bind_text(st, 1, status);
	bind_text(st, 2, at);
	sqlite3_bind_int64(st, 3, run_id);
	int rc = step_done(s, st, "finishing the run");
	if (rc == STORE_OK && s->live_run == run_id) {
		live_lock(s, run_id, F_UNLCK);
		s->live_run = 0;
	}
	return rc;
}

int store_tag_run(struct store *s, int64_t run_id, const char *provider, const char *instance_type,
		  const char *region)
{
	sqlite3_stmt *st;
	if (prepare(s, "UPDATE runs SET provider = coalesce(?, provider), instance_type = coalesce(?, instance_type), "
		       "region = coalesce(?, region) WHERE id = ?", &st))
		return STORE_ERR;
	bind_text(st, 1, provider);
	bind_text(st, 2, instance_type);
	bind_text(st, 3, region);
	sqlite3_bind_int64(st, 4, run_id);
	int rc = step_done(s, st, "naming the run");
	if (rc == STORE_OK && sqlite3_changes(s->db) != 1) {
		set_err(s, "no run %lld", (long long)run_id);
		return STORE_ERR;
	}
	return rc;
}

/* ---- reading ---- */

int store_latest_run(struct store *s, int64_t *run_id)
{
	sqlite3_stmt *st;
	/* instants, not text: a store merged from older gpuvets may hold times with UTC offsets */
	if (prepare(s, "SELECT id FROM runs ORDER BY julianday(started_at) DESC, id DESC LIMIT 1", &st))
		return STORE_ERR;
	int rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		*run_id = sqlite3_column_int64(st, 0);
		sqlite3_finalize(st);
		return STORE_OK;
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return sql_fail(s, "finding the latest run");
	set_err(s, "database '%s' has no runs", s->path);
	return STORE_NOTFOUND;
}

int store_resolve_run(struct store *s, const char *id_or_uuid, int64_t *run_id)
{
	long id;
	sqlite3_stmt *st;
	/* a run number has no leading zero: "00000003" is a uuid prefix, never run 3 */
	if (id_or_uuid[0] != '0' && gv_parse_long(id_or_uuid, 1, LONG_MAX, &id) == 0) {
		if (prepare(s, "SELECT id FROM runs WHERE id = ?", &st))
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
			set_err(s, "no run '%s' (give a run id or a uuid prefix of at least 4 characters)", id_or_uuid);
			return STORE_NOTFOUND;
		}
		if (prepare(s, "SELECT id FROM runs WHERE substr(uuid, 1, ?) = lower(?) LIMIT 2", &st))
			return STORE_ERR;
		sqlite3_bind_int(st, 1, (int)n);
		bind_text(st, 2, id_or_uuid);
	}
	int found = 0, rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		*run_id = sqlite3_column_int64(st, 0);
		found++;
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return sql_fail(s, "finding the run");
	if (found == 1)
		return STORE_OK;
	set_err(s, found ? "run '%s' is ambiguous: give more of the uuid" : "no run '%s' in the store", id_or_uuid);
	return STORE_NOTFOUND;
}

int store_list_runs(struct store *s, int64_t **ids, size_t *n)
{
	sqlite3_stmt *st;
	*ids = NULL;
	*n = 0;
	if (prepare(s, "SELECT id FROM runs ORDER BY started_at, id", &st))
		return STORE_ERR;
	size_t cap = 0;
	int rc;
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
		return sql_fail(s, "listing runs");
	}
	return STORE_OK;
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

/* A run's row as the fingerprint's "run" and "inventory"; STORE_NOTFOUND when there is none. */
static int load_run_head(struct store *s, int64_t run_id, json_t *fp)
{
	sqlite3_stmt *st;
	if (prepare(s, "SELECT id, uuid, status, profile, gpuvet_version, hostname, started_at, finished_at,"
		       " provider, instance_type, region, gpu_model, gpu_count, inventory FROM runs WHERE id = ?", &st))
		return STORE_ERR;
	sqlite3_bind_int64(st, 1, run_id);
	int rc = sqlite3_step(st);
	if (rc != SQLITE_ROW) {
		sqlite3_finalize(st);
		if (rc == SQLITE_DONE) {
			set_err(s, "no run %lld in the store", (long long)run_id);
			return STORE_NOTFOUND;
		}
		return sql_fail(s, "reading the run");
	}
	json_t *run = json_object();
	json_object_set_new(run, "id", json_integer(sqlite3_column_int64(st, 0)));
	json_object_set_new(run, "uuid", col_text(st, 1));
	const char *status = (const char *)sqlite3_column_text(st, 2);
	/* a run still marked running is live while its writer holds its lock, else it was killed */
	int live = status && !strcmp(status, "running") && run_is_live(s, run_id);
	json_object_set_new(run, "status", json_string(status && !strcmp(status, "complete") ? "complete"
							: live ? "running" : "incomplete"));
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
	return STORE_OK;
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
	if (prepare(s, sql, &st))
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
	return rc == SQLITE_DONE ? STORE_OK : sql_fail(s, "reading the run");
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
	if (prepare(s, "SELECT bench, series, gpu, x, y FROM samples WHERE run_id = ? ORDER BY series, gpu, rowid", &st))
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
	return rc == SQLITE_DONE ? STORE_OK : sql_fail(s, "reading the run");
}

/* The samples of a run, a series per row, its points unpacked into [x, y] pairs. */
static int load_samples(struct store *s, int64_t run_id, json_t *fp)
{
	sqlite3_stmt *st;
	json_t *arr = json_array();
	json_object_set_new(fp, "samples", arr);
	if (s->version < 5)
		return load_sample_rows(s, run_id, arr);
	if (prepare(s, "SELECT bench, series, gpu, points FROM series WHERE run_id = ? ORDER BY series, gpu, bench", &st))
		return STORE_ERR;
	sqlite3_bind_int64(st, 1, run_id);
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		json_t *pts = new_series_entry(arr, (const char *)sqlite3_column_text(st, 0),
					       (const char *)sqlite3_column_text(st, 1), sqlite3_column_int(st, 2));
		const unsigned char *b = sqlite3_column_blob(st, 3);
		size_t n = (size_t)sqlite3_column_bytes(st, 3) / STORE_POINT_BYTES;
		for (size_t i = 0; i < n; i++)
			json_array_append_new(pts, json_pack("[oo]", real_or_null(unpack_double(b + STORE_POINT_BYTES * i)),
							     real_or_null(unpack_double(b + STORE_POINT_BYTES * i + 8))));
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? STORE_OK : sql_fail(s, "reading the run");
}

int store_load_fingerprint(struct store *s, int64_t run_id, json_t **out)
{
	static const char *const bench_cols[] = { "name", "status", "reason", "#duration_s", "@config" };
	static const char *const metric_cols[] = { "bench", "name", "%gpu", "#value", "unit", "{params" };
	static const char *const flag_cols[] = { "code", "severity", "message", "@evidence", "remediation" };
	static const char *const verdict_cols[] = { "verdict", "policy", "at", "@detail" };
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
		rc = load_rows(s, run_id, fp, "verdicts",
			       "SELECT verdict, policy, at, detail FROM verdicts WHERE run_id = ? ORDER BY at, id",
			       verdict_cols, 4);
	if (rc) {
		json_decref(fp);
		return rc;
	}
	*out = fp;
	return STORE_OK;
}

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
	int rc = insert_run(s, uuid, status && !strcmp(status, "complete") ? "complete" : "incomplete",
			    jstr(t, run, "profile"), jstr(t, run, "gpuvet_version"), jstr(t, run, "hostname"),
			    jstr(t, run, "provider"), jstr(t, run, "instance_type"), jstr(t, run, "region"),
			    jstr(t, run, "gpu_model"), (int)jt_int(t, gc), st_at, fin_at, inv_text, run_id);
	free(inv_text);
	if (rc == STORE_DUP)
		set_err(s, "run %s is already in the store", uuid);
	size_t i;
	jt_foreach(t, jt_get(t, inv, "gpus"), i, g) {
		uint32_t ix = jt_get(t, g, "index");
		if (rc == STORE_OK)
			rc = insert_gpu(s, *run_id, jt_is_int(t, ix) ? jt_int(t, ix) : (long long)i, jstr(t, g, "name"),
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
			set_err(s, "fingerprint: benches[%zu] needs name, status (ok|skipped|failed|timed_out)", i);
			return STORE_ERR;
		}
		char *cfg = jt_text(t, jt_get(t, e, "config"));
		int rc = insert_bench(s, run_id, name, st, jstr(t, e, "reason"), dur, cfg);
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
			set_err(s, "fingerprint: metrics[%zu] needs a name and a numeric value", i);
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
			set_err(s, "fingerprint: samples[%zu] needs a series and points", i);
			return STORE_ERR;
		}
		unsigned char *blob = series_blob(s, series, jt_size(t, pts));
		if (!blob)
			return STORE_ERR;
		jt_foreach(t, pts, j, p) {
			uint32_t px = jt_first(t, p), py = px ? jt_next(t, p, px) : 0;
			double x, y;
			if (jt_size(t, p) != 2 || jnum(t, px, &x) || jnum(t, py, &y)) {
				free(blob);
				set_err(s, "fingerprint: samples[%zu].points[%zu] is not [x, y]", i, j);
				return STORE_ERR;
			}
			pack_double(blob + STORE_POINT_BYTES * j, x);
			pack_double(blob + STORE_POINT_BYTES * j + 8, y);
		}
		int rc = put_series_blob(s, run_id, bench ? bench : "", series, jgpu(t, e), blob, jt_size(t, pts));
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
			set_err(s, "fingerprint: flags[%zu] needs a code and a severity (critical|warning|info)", i);
			return STORE_ERR;
		}
		char *ev = jt_text(t, jt_get(t, e, "evidence"));
		int rc = insert_flag(s, run_id, code, sv, jstr(t, e, "message"), ev, jstr(t, e, "remediation"));
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
			set_err(s, "fingerprint: verdicts[%zu] needs verdict, policy and at", i);
			return STORE_ERR;
		}
		char *d = jt_text(t, jt_get(t, e, "detail"));
		int rc = insert_verdict(s, run_id, v, pol, d, at);
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
	/* a run still being written here is never replaced (its writer holds its lock): refused, said why */
	if (prepare(s, "SELECT id FROM runs WHERE uuid = ? AND status = 'running'", &st))
		return STORE_ERR;
	bind_text(st, 1, uuid);
	int src = sqlite3_step(st);
	int64_t live_id = src == SQLITE_ROW ? sqlite3_column_int64(st, 0) : -1;
	sqlite3_finalize(st);
	if (src != SQLITE_ROW && src != SQLITE_DONE)
		return sql_fail(s, "reading the run's status");   /* an error (no memory) may have ended the transaction */
	if (live_id >= 0 && run_is_live(s, live_id)) {
		set_err(s, "run %s is still running in this store (run %lld): a running run is never replaced; "
			   "import it again when it has finished", uuid, (long long)live_id);
		return STORE_ERR;
	}
	if (prepare_kept(s, "DELETE FROM runs WHERE uuid = ? AND status <> 'complete'", &st))
		return STORE_ERR;
	bind_text(st, 1, uuid);
	return step_kept(s, st, "replacing an incomplete copy of the run");
}

int store_import_tree(struct store *s, const struct jtree *t, int64_t *run_id)
{
	const uint32_t fp = 1;   /* the root */
	const char *schema = jstr(t, fp, "schema");
	if (!schema || strcmp(schema, FINGERPRINT_SCHEMA)) {
		set_err(s, "not a gpuvet fingerprint (schema '%s' expected)", FINGERPRINT_SCHEMA);
		return STORE_ERR;
	}
	if (fp_check(t, fp, s->err, sizeof s->err))
		return STORE_ERR;
	/* alone, its own transaction; in a batch, the caller undoes its part on failure (store.h) */
	int64_t id;
	if (!s->in_batch && exec_sql(s, "BEGIN IMMEDIATE"))
		return STORE_ERR;
	int rc = replace_partial_copy(s, t, fp);
	if (rc == STORE_OK)
		rc = import_body(s, t, fp, &id);
	if (!s->in_batch && rc == STORE_OK && exec_sql(s, "COMMIT"))
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
		set_err(s, "not a gpuvet fingerprint (schema '%s' expected)", FINGERPRINT_SCHEMA);
	else if (jt_parse(&t, text, strlen(text)))
		set_err(s, "fingerprint: %s", t.err);   /* jansson wrote it: only a "\u0000" in a string */
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
		set_err(s, "database '%s': a transaction is already open", s->path);
		return STORE_ERR;
	}
	if (exec_sql(s, "BEGIN IMMEDIATE"))
		return STORE_ERR;
	s->in_batch = 1;
	return STORE_OK;
}

int store_batch_mark(struct store *s)
{
	return s->in_batch ? exec_sql(s, "SAVEPOINT part") : STORE_OK;
}

int store_batch_unmark(struct store *s, int keep)
{
	if (!s->in_batch)
		return STORE_OK;
	if (keep)
		return exec_sql(s, "RELEASE part");
	return exec_sql(s, "ROLLBACK TO part; RELEASE part");
}

int store_batch_end(struct store *s, int commit)
{
	if (!s->in_batch)
		return STORE_OK;
	s->in_batch = 0;
	if (commit && sqlite3_get_autocommit(s->db)) {
		/* a failed write (a full disk, an I/O error) made SQLite undo the whole transaction */
		set_err(s, "database '%s': a failed write undid the open transaction", s->path);
		return STORE_ERR;
	}
	if (commit)
		return exec_sql(s, "COMMIT") == STORE_OK ? STORE_OK
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
		set_err(s, "%s", store_open_error());
		return rc;
	}
	int64_t *ids;
	size_t n;
	if ((rc = store_list_runs(o, &ids, &n))) {
		set_err(s, "%s", store_errmsg(o));
		store_close(o);
		return rc;
	}
	for (size_t i = 0; i < n && rc == STORE_OK; i++) {
		json_t *fp;
		if ((rc = store_load_fingerprint(o, ids[i], &fp))) {
			set_err(s, "%s", store_errmsg(o));
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

/* ---- shared with the store's other files (store_int.h) ---- */

int store_schema_version(struct store *s)
{
	return s->version;
}

sqlite3 *store_conn(struct store *s)
{
	return s->db;
}

int store_fail(struct store *s, const char *what)
{
	return sql_fail(s, what);
}

int store_prepare(struct store *s, const char *sql, sqlite3_stmt **st)
{
	return prepare(s, sql, st);
}

void store_bind_text(sqlite3_stmt *st, int i, const char *v)
{
	bind_text(st, i, v);
}

char *store_col_strdup(sqlite3_stmt *st, int i)
{
	const unsigned char *t = sqlite3_column_text(st, i);
	return t ? gv_strdup((const char *)t) : NULL;
}
