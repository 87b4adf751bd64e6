/*
 * store.c - the SQLite store (see store.h).
 *
 * Schema history lives in migrations[]: entry i takes a store from
 * user_version i to i+1.  A store is recognised by PRAGMA application_id
 * (STORE_APP_ID) and refused, untouched, when it belongs to something else
 * or is newer than this binary.
 *
 * This file opens, checks, migrates and closes; the helpers every store
 * file shares (errors, statements, the live-run lock) are store_util.c's,
 * below it.
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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define STORE_APP_ID 0x47505654 /* "GPVT" */



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
	/*
	 * 5 -> 6 (issue 34): a verdict is keyed by the digest of its policy's text, not its name
	 * (a file named "default" no longer replaces the built-in's verdict), says where the policy
	 * came from, and is marked imported when it arrived in a fingerprint (history: it counts
	 * for nothing).  A verdict stored before has no digest (''): it matches no policy, so
	 * no fleet baseline counts it until the run is judged again.
	 */
	"CREATE TABLE IF NOT EXISTS verdicts (id INTEGER PRIMARY KEY, run_id INTEGER NOT NULL,"
	"  verdict TEXT NOT NULL, policy TEXT NOT NULL, detail TEXT, at TEXT NOT NULL);"   /* a partial old store */
	"CREATE TABLE verdicts6 ("
	"  id INTEGER PRIMARY KEY,"
	"  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
	"  verdict TEXT NOT NULL CHECK (verdict IN ('accept','reject','unmeasurable')),"
	"  policy TEXT NOT NULL, detail TEXT, at TEXT NOT NULL,"
	"  policy_digest TEXT NOT NULL DEFAULT '', policy_source TEXT,"
	"  imported INTEGER NOT NULL DEFAULT 0 CHECK (imported IN (0, 1)),"
	"  UNIQUE (run_id, policy_digest, policy, imported));"
	"INSERT INTO verdicts6 (id, run_id, verdict, policy, detail, at) "
	"  SELECT id, run_id, verdict, policy, detail, at FROM verdicts;"
	"DROP TABLE verdicts;"
	"ALTER TABLE verdicts6 RENAME TO verdicts;"
	"CREATE INDEX verdicts_fleet ON verdicts(policy_digest, verdict, imported, run_id);",
	/*
	 * 6 -> 7 (issue 38): metrics_name goes.  Since 3 every read of a metric by name asks for the
	 * run-level row (gpu = -1) INDEXED BY metrics_head, and a run's rows come by metrics_run; the
	 * third index only cost an import an index entry a metric row (10 to 15 % of its time).
	 * A store read read-only before 3 keeps it (it is never migrated by a read).
	 */
	"DROP INDEX IF EXISTS metrics_name;",
	/* 7 -> 8 (issue 49): cluster runs, their nodes, pairs, all-reduce and findings (store_int.h) */
	STORE_CLUSTER_SCHEMA,
	/*
	 * 8 -> 9 (issue 59): the gpuvet build that measured a run (run.gpuvet_build: commit, link
	 * time, release tarball or not), a row beside the run; a run without one (stored before, or
	 * imported from a fingerprint without it) has none.  A table, IF NOT EXISTS, not a column:
	 * a store whose user_version was set back by hand migrates again without an error.
	 */
	"CREATE TABLE IF NOT EXISTS run_builds ("
	"  run_id INTEGER PRIMARY KEY REFERENCES runs(id) ON DELETE CASCADE,"
	"  git_commit TEXT, built_at TEXT,"
	"  release INTEGER NOT NULL DEFAULT 0 CHECK (release IN (0, 1)));",
	/* 9 -> 10 (issue 56): the cluster tables' new columns, added where missing (sto_cluster_columns) */
	"",
};

#define N_MIGRATIONS ((int)(sizeof migrations / sizeof migrations[0]))
_Static_assert(sizeof migrations / sizeof migrations[0] == STORE_SCHEMA_VERSION, "one migration per schema version");

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
	case SQLITE_CANTOPEN:   /* the system's words when it said why (Permission denied, ...) */
		return db && sqlite3_system_errno(db) ? strerror(sqlite3_system_errno(db)) : "cannot open file";
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
		return store_fail(s, "reading the schema");
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		char shown[4 * 64 + 16];
		ident_escape((const char *)sqlite3_column_text(st, 1), shown, 64);
		sto_set_err(s, "database '%s' holds a %s ('%s'): gpuvet's schema has none, so it is not gpuvet's; "
			   "not touching it", s->path, (const char *)sqlite3_column_text(st, 0), shown);
		sqlite3_finalize(st);
		return STORE_NOTGPUVET;
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? STORE_OK : store_fail(s, "reading the schema");
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
			sto_set_err(s, "'%s' is not a gpuvet database (not an sqlite file)", s->path);
			return STORE_NOTGPUVET;
		}
		sto_set_err(s, "cannot read database '%s': %s", s->path,
			ext == SQLITE_CORRUPT ? describe_open_failure(s->db, ext) : sto_db_msg(s));
		return STORE_ERR;
	}
	if (pragma_int(s, "PRAGMA application_id", appid) || pragma_int(s, "PRAGMA user_version", version))
		return store_fail(s, "reading the schema version");
	return foreign_schema(s);
}

/* STORE_OK when the header is a gpuvet store (or an empty file) this binary can open. */
static int judge_header(struct store *s, int ntables, int appid, int version)
{
	if (appid != STORE_APP_ID && !(appid == 0 && ntables == 0 && version == 0)) {
		sto_set_err(s, "'%s' is not a gpuvet database", s->path);
		return STORE_NOTGPUVET;
	}
	if (appid == STORE_APP_ID && version == 0 && ntables > 0) {
		sto_set_err(s, "database '%s' is marked as gpuvet's but has no schema version (%d tables): "
			"not touching it", s->path, ntables);
		return STORE_NOTGPUVET;
	}
	if (version > STORE_SCHEMA_VERSION) {
		sto_set_err(s, "database '%s' has schema version %d, newer than this gpuvet (%d): upgrade gpuvet",
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
			return sto_exec_sql(s, sql);
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

/*
 * 4 -> 5: each series' rows of samples, in their order, packed into one row of series; samples dropped.
 * Packed by store_write.c's store_put_series, the one owner of the points' format: the opener calls
 * down into the writer, which calls nothing of this file (what both use is store_util.c's).
 */
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
			sto_set_err(s, "out of memory migrating the samples");
			rc = STORE_ERR;
			break;
		}
		xy[2 * n] = sqlite3_column_type(st, 4) == SQLITE_NULL ? 0.0 / 0.0 : sqlite3_column_double(st, 4);
		xy[2 * n + 1] = sqlite3_column_type(st, 5) == SQLITE_NULL ? 0.0 / 0.0 : sqlite3_column_double(st, 5);
		n++;
	}
	if (rc == STORE_OK && step != SQLITE_DONE)
		rc = store_fail(s, "migrating the samples");
	if (rc == STORE_OK && n)
		rc = store_put_series(s, run, bench, series, gpu, xy, n);
	migrate_progress(rc == STORE_OK ? total : -1, total);
	sqlite3_finalize(st);
	free(xy);
	free(bench);
	free(series);
	return rc == STORE_OK ? sto_exec_sql(s, "DROP TABLE samples") : rc;
}

/* The steps of a migration SQL cannot do, run after its SQL. */
static int (*const migration_code[N_MIGRATIONS])(struct store *) = { [4] = samples_to_series,
								     [9] = sto_cluster_columns };

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
		if (sto_exec_sql(s, migrations[v]) || (migration_code[v] && migration_code[v](s)))
			goto fail;
		char sql[96];
		snprintf(sql, sizeof sql, "PRAGMA user_version=%d; PRAGMA application_id=%d", v + 1, STORE_APP_ID);
		if (sto_exec_sql(s, sql))
			goto fail;
	}
	if (sto_exec_sql(s, "COMMIT"))
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
		return store_fail(s, "checking the database");
	sto_set_err(s, "database '%s' is corrupt (%s): refusing to use it; restore a copy or start a new "
		"one with --db", s->path, first[0] ? first : sqlite3_errmsg(s->db));
	return STORE_CORRUPT;
corrupt:
	sto_set_err(s, "database '%s' is corrupt (%s): refusing to use it; restore a copy or start a new "
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
		if (ntables == 0) {   /* a 0-byte or empty file is no store yet: not "an old schema (0)" */
			sto_set_err(s, "database '%s' is empty (no gpuvet store in it yet)", s->path);
			return STORE_ERR;
		}
		if (version < STORE_READ_MIN_VERSION) {
			sto_set_err(s, "database '%s' has an old schema (%d): open it once read-write to migrate",
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
		sto_set_err(s, "GPUVET_DB_SYNC '%s' is not normal or full", v);
		return STORE_ERR;
	}
	return sto_exec_sql(s, v && !strcmp(v, "full") ? "PRAGMA synchronous=FULL" : "PRAGMA synchronous=NORMAL");
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
	if (!readonly && sqlite3_db_readonly(s->db, "main") == 1) {   /* SQLite fell back: the file is not writable */
		snprintf(open_err, sizeof open_err, "database '%s' can only be read here (no write permission, or a "
			 "read-only file system): nothing is stored in it", path);
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
	if (sto_exec_sql(s, "PRAGMA foreign_keys=ON") || (!readonly && set_synchronous(s))) {
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
		close(s->lock_fd); /* after SQLite's: closing it first would drop SQLite's own locks (store_util.c) */
	free(s->path);
	free(s);
}
