/*
 * store_int.h - private to results/store*.c: what the store's read and
 * write files share beside the public API (store.h); the helpers they all
 * call down into are store_util.c's.  Nothing outside
 * results/ includes it, so the SQL stays in the store's files.
 */
#ifndef GPUVET_STORE_INT_H
#define GPUVET_STORE_INT_H

#include <sqlite3.h>

#include "results/store.h"

#define STORE_BUSY_MS 10000
#define STORE_KEPT_STMTS 16

struct store {
	int version;            /* the schema version it was opened at (after any migration) */
	sqlite3 *db;
	char *path;
	char err[512];
	char dbmsg[256];          /* sto_db_msg(): SQLite's message with the system's cause */
	int busy;                 /* the last failure was SQLITE_BUSY or SQLITE_LOCKED */
	volatile int *stop;       /* store_set_stop_flag() */
	struct {
		const char *sql;  /* a string literal, matched by address */
		sqlite3_stmt *st;
	} kept[STORE_KEPT_STMTS]; /* sto_prepare_kept(): the statements an import runs per fingerprint */
	int in_bench;
	int in_batch;     /* store_batch_begin .. store_batch_end: imports share its transaction */
	int lock_fd;      /* the file again, for the live-run locks (closed after SQLite's) */
	int64_t live_run; /* the run this process is writing, 0 when none */
	char report_digest[80];   /* store_report_policy(): "" any policy */
};

/*
 * A run's twelve leading columns as struct store_run_row holds them, for the statements that
 * list runs (store_read.c, store_report.c): STORE_RUN_COLS first in the SELECT (alias r), then
 * store_run_at() reads them back from a row; the strings live until the next step.
 */
#define STORE_RUN_COLS "r.id, r.uuid, r.status, r.profile, r.gpuvet_version, r.hostname, r.provider," \
	" r.instance_type, r.region, r.gpu_model, r.gpu_count, r.started_at"
struct store_run_row store_run_at(sqlite3_stmt *st);

/*
 * Migration 7 -> 8 (issue 49): a cluster run (`gpuvet cluster run`, common/cluster.h) and its parts,
 * written and read by store_cluster.c only.  A node names its ordinary run by uuid (run_uuid), not
 * by id, so a merge copies a cluster run whatever ids its nodes' runs got.  Figures not measured are
 * NULL (NAN in memory); states and finding kinds are their names (gv_*_name), not enum numbers.
 * IF NOT EXISTS: a store whose user_version was set back by hand (the tests' way to make an older
 * store from a new one) still migrates.
 */
#define STORE_CLUSTER_SCHEMA \
	"CREATE TABLE IF NOT EXISTS clusters (" \
	"  id INTEGER PRIMARY KEY, uuid TEXT NOT NULL UNIQUE, started_at TEXT NOT NULL," \
	"  engine TEXT, schedule TEXT, transport TEXT, nccl_net TEXT, profile TEXT," \
	"  nnodes INTEGER NOT NULL CHECK (nnodes > 0), nrounds INTEGER NOT NULL DEFAULT 0," \
	"  stated_gbps REAL, stated_source TEXT, pair_median_gbps REAL," \
	"  verdict INTEGER NOT NULL DEFAULT -1 CHECK (verdict IN (-1, 0, 1, 3)), policy TEXT, ar_why TEXT);" \
	"CREATE TABLE IF NOT EXISTS cluster_nodes (" \
	"  cluster_id INTEGER NOT NULL REFERENCES clusters(id) ON DELETE CASCADE," \
	"  rank INTEGER NOT NULL, state TEXT NOT NULL, host TEXT, addr TEXT, run_uuid TEXT," \
	"  provider TEXT, instance_type TEXT, gpu_model TEXT, ngpus INTEGER NOT NULL DEFAULT 0," \
	"  verdict INTEGER NOT NULL DEFAULT -1, why TEXT," \
	"  PRIMARY KEY (cluster_id, rank));" \
	"CREATE TABLE IF NOT EXISTS cluster_metrics (" \
	"  cluster_id INTEGER NOT NULL REFERENCES clusters(id) ON DELETE CASCADE," \
	"  rank INTEGER NOT NULL, seq INTEGER NOT NULL, name TEXT NOT NULL, value REAL," \
	"  higher_better INTEGER NOT NULL DEFAULT 1," \
	"  PRIMARY KEY (cluster_id, rank, seq));" \
	"CREATE TABLE IF NOT EXISTS cluster_pairs (" \
	"  cluster_id INTEGER NOT NULL REFERENCES clusters(id) ON DELETE CASCADE," \
	"  seq INTEGER NOT NULL, a INTEGER NOT NULL, b INTEGER NOT NULL, round INTEGER NOT NULL, state TEXT NOT NULL," \
	"  gbps_ab REAL, gbps_ba REAL, lat_us REAL, nccl_gbps_ab REAL, nccl_gbps_ba REAL, why TEXT," \
	"  PRIMARY KEY (cluster_id, seq));" \
	"CREATE TABLE IF NOT EXISTS cluster_allreduce (" \
	"  cluster_id INTEGER NOT NULL REFERENCES clusters(id) ON DELETE CASCADE," \
	"  seq INTEGER NOT NULL, bytes REAL, time_us REAL, algbw_gbps REAL, busbw_gbps REAL," \
	"  PRIMARY KEY (cluster_id, seq));" \
	"CREATE TABLE IF NOT EXISTS cluster_findings (" \
	"  cluster_id INTEGER NOT NULL REFERENCES clusters(id) ON DELETE CASCADE," \
	"  seq INTEGER NOT NULL, kind TEXT NOT NULL, rank INTEGER NOT NULL DEFAULT -1, peer INTEGER NOT NULL DEFAULT -1," \
	"  drain INTEGER NOT NULL DEFAULT 0 CHECK (drain IN (0, 1)), evidence TEXT," \
	"  PRIMARY KEY (cluster_id, seq));"
#define STORE_CLUSTER_VERSION 8   /* the first schema with the cluster tables */
#define STORE_CLUSTER_V2 10       /* clusters.authenticated, deadline_s, pair_healthy_gbps; cluster_nodes.clock_skew_s, link_gbps,
				     link_source; cluster_metrics.remeasured (#56) */
/*
 * Migration 9 -> 10 (store_cluster.c): each of those columns added unless the table has it already
 * (a store whose user_version was set back by hand has them; ALTER TABLE ADD COLUMN would fail).
 */
int sto_cluster_columns(struct store *s);

/* ---- store_util.c: below every store file; they all call down into it, it calls none of them ---- */
/* The live-run lock on run_id (F_WRLCK takes it, F_UNLCK drops it): fcntl's 0, or -1. */
int sto_live_lock(struct store *s, int64_t run_id, short type);
int sto_run_is_live(struct store *s, int64_t run_id);
/*
 * A run's row for the two loaders (store_load.c, store_load_run.c): STORE_RUN_HEAD_COLS stepped onto
 * *st (the caller finalizes it), STORE_NOTFOUND said when there is none.  And its status as a
 * fingerprint says it: a run marked running is live while its writer holds its lock, else incomplete.
 */
#define STORE_RUN_HEAD_COLS "id, uuid, status, profile, gpuvet_version, hostname, started_at, finished_at," \
	" provider, instance_type, region, gpu_model, gpu_count, inventory"
int sto_run_head(struct store *s, int64_t run_id, sqlite3_stmt **st);
const char *sto_run_status(struct store *s, int64_t run_id, const char *stored);
/* True when another process holds run_id's live lock (a run marked running is still being measured). */
int store_run_live(struct store *s, int64_t run_id);
void sto_set_err(struct store *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* SQLite's message of the last failure, with the system's cause (s->dbmsg); notes whether the store was busy. */
const char *sto_db_msg(struct store *s);
/* Records "database 'PATH': what: sqlite's message" as the store's error; returns STORE_ERR. */
int store_fail(struct store *s, const char *what);
int sto_exec_sql(struct store *s, const char *sql);
/* Binds text or NULL. */
void store_bind_text(sqlite3_stmt *st, int i, const char *v);
void sto_bind_kept_text(sqlite3_stmt *st, int i, const char *v);
void sto_bind_real(sqlite3_stmt *st, int i, double v);
/* Prepares sql on the store's connection; STORE_ERR (message recorded) on failure. */
int store_prepare(struct store *s, const char *sql, sqlite3_stmt **st);
/* Steps st (bound, then finalized here) into *ids[*n], its first column's ids; STORE_ERR naming what on failure. */
int store_step_ids(struct store *s, sqlite3_stmt *st, int64_t **ids, size_t *n, const char *what);
int sto_prepare_kept(struct store *s, const char *sql, sqlite3_stmt **st);
int sto_step_kept_err(struct store *s, sqlite3_stmt *st, const char *what);
int sto_step_kept(struct store *s, sqlite3_stmt *st, const char *what);
int sto_step_done(struct store *s, sqlite3_stmt *st, const char *what);
void sto_now_iso(char buf[32]);
/* The store's connection. */
sqlite3 *store_conn(struct store *s);
/* A text column as a malloc'd string, or NULL for SQL NULL. */
char *store_col_strdup(sqlite3_stmt *st, int i);

/* ---- store_pending.c ---- */
/* DB.pending, where benches are kept aside while the store is busy (store_pending.c); 0, or -1. */
int sto_pending_dir(struct store *s, char *dir, size_t len);

/* ---- store_write.c: rows written (an import's too, store_import.c) ---- */
int sto_insert_run(struct store *s, const char *uuid, const char *status, const char *profile,
		      const char *version, const char *hostname, const char *provider,
		      const char *itype, const char *region, const char *gpu_model, int gpu_count,
		      const char *started, const char *finished, const char *inventory_json, int64_t *run_id);
int sto_insert_gpu(struct store *s, int64_t run_id, long long idx, const char *name, const char *uuid,
		      const char *reference_model);
/* The gpuvet build that measured the run (run_builds, schema 9). */
int sto_insert_build(struct store *s, int64_t run_id, const char *commit, const char *built_at, int release);
void sto_pack_double(unsigned char *out, double d);
double sto_unpack_double(const unsigned char *p);
unsigned char *sto_series_blob(struct store *s, const char *series, size_t n);
int sto_put_series_blob(struct store *s, int64_t run_id, const char *bench, const char *series, int gpu,
			   unsigned char *blob, size_t n);
int sto_insert_bench(struct store *s, int64_t run_id, const char *bench, const char *status,
			const char *reason, double duration_s, const char *config_json);
int sto_insert_flag(struct store *s, int64_t run_id, const char *code, const char *severity,
		       const char *message, const char *evidence_json, const char *remediation);
/* One verdict row: digest "" when unknown (an old fingerprint's), imported 1 when it arrived by import or merge. */
struct sto_verdict {
	const char *verdict, *policy, *digest, *source, *detail_json, *at;
	int imported;
};
int sto_insert_verdict(struct store *s, int64_t run_id, const struct sto_verdict *v);

#endif
