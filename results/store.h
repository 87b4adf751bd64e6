/*
 * store.h - the SQLite store of runs, metrics, samples, flags, verdicts
 * and prices.
 *
 * One opaque handle, integer result codes (as SQLite itself), every
 * failure explained in store_errmsg().  The schema is versioned with
 * PRAGMA user_version and migrated forward on open; a database that is
 * not a gpuvet store, or that is newer than this binary, is refused and
 * left untouched.  WAL journal, busy timeout.  One transaction per
 * finished bench (store_bench_begin .. store_bench_end), so a crash keeps
 * what was measured.
 *
 * The exchange format between modules is the fingerprint: a JSON document
 * (jansson json_t) built by store_load_fingerprint() and accepted by
 * store_import_fingerprint(), or read from text by common/jtree.c and
 * accepted by store_import_tree().  Its shape is documented in README.md
 * ("Fingerprint").
 */
#ifndef GPUVET_STORE_H
#define GPUVET_STORE_H

#include <stdint.h>
#include <jansson.h>

#include "common/jtree.h"
#include "common/version.h"

enum store_rc {
	STORE_OK = 0,
	STORE_ERR = 1,        /* I/O, SQLite error, constraint */
	STORE_NOTGPUVET = 2,  /* the file is not a gpuvet database */
	STORE_TOONEW = 3,     /* schema newer than this binary */
	STORE_NOTFOUND = 4,   /* no such run */
	STORE_DUP = 5,        /* run UUID already present (import/merge) */
	STORE_CORRUPT = 6,    /* PRAGMA quick_check failed on open: refused, untouched */
};

#define STORE_SCHEMA_VERSION 10  /* 2: flags.remediation; 3: metrics_head index; 4: runs_list, benches_list;
                                    5: series (a blob of points per series) replaces samples;
                                    6: verdicts keyed by policy digest, imported ones marked;
                                    7: metrics_name dropped (no read uses it);
                                    8: cluster runs (clusters, cluster_nodes, _metrics, _pairs,
                                       _allreduce, _findings);
                                    9: run_builds (the gpuvet build that measured a run)
                                    10: a cluster run's authentication and deadline, a node's clock
                                       skew and NIC rate, a figure measured again (#56) */
#define STORE_POINT_BYTES 16     /* a stored point: x then y, little-endian IEEE-754 binary64 */
#define STORE_READ_MIN_VERSION 2 /* the oldest schema read read-only without migrating (3 and 4 add only
                                    indexes; a store before 5 has its samples read a row per point) */
#define FINGERPRINT_SCHEMA "gpuvet.fingerprint/1"

struct store;

/* Default path: $GPUVET_DB, else $XDG_DATA_HOME/gpuvet/gpuvet.db, else ~/.local/share/gpuvet/gpuvet.db. */
const char *store_default_path(void);

/* Opens (creating directories and the file when absent) and migrates. */
int store_open(const char *path, struct store **out);
/* Opens an existing store read-only; STORE_ERR when absent. */
int store_open_readonly(const char *path, struct store **out);
/* The schema version the store was opened at (a read-only open may be older than STORE_SCHEMA_VERSION). */
int store_schema_version(struct store *s);
void store_close(struct store *s);
/* Last error, one lowercase line; valid until the next call on s. For a failed open, s may be NULL: see store_open_error(). */
const char *store_errmsg(const struct store *s);
const char *store_open_error(void);
/* The sqlite3 * handle, for modules that own their own queries (pricing, reports). */
void *store_db(struct store *s);
/*
 * The last SQLite error of a connection (a sqlite3 *) with the system's
 * cause when the disk failed: "disk I/O error (Input/output error)",
 * "database or disk is full (No space left on device)".  Into buf; returns it.
 */
const char *store_sqlite_msg(void *db, char *buf, size_t len);

/* ---- writing a run ---- */

struct run_info {
	const char *uuid;           /* NULL: generated */
	const char *profile;        /* quick / standard / full */
	const char *gpuvet_version;
	const char *hostname;
	const char *provider;       /* aws / lambda / alibaba / unknown */
	const char *instance_type;
	const char *region;
	const char *gpu_model;      /* reference model key, e.g. "H100-SXM", or NULL */
	int gpu_count;
	json_t *inventory;          /* borrowed; stored as JSON text */
	const struct gv_build *build;   /* the gpuvet build measuring it (run.gpuvet_build); NULL: none */
};

/* Inserts the run (status "running") and its GPUs; commits. */
int store_begin_run(struct store *s, const struct run_info *ri, int64_t *run_id);

/* Opens the transaction of one bench. */
int store_bench_begin(struct store *s, int64_t run_id, const char *bench);
int store_put_metric(struct store *s, int64_t run_id, const char *bench, const char *name,
		     int gpu, double value, const char *unit, const char *params_json);
/* n points of a series, xy = {x0, y0, x1, y1, ...}; appended to what the run already has of it.
 * NaN stands for a missing value (JSON null). */
int store_put_series(struct store *s, int64_t run_id, const char *bench, const char *series, int gpu,
		     const double *xy, size_t n);
/* Records the bench row and commits: status "ok", "skipped", "failed", "timed_out". */
int store_bench_end(struct store *s, int64_t run_id, const char *bench, const char *status,
		    const char *reason, double duration_s, const char *config_json);

/* Whether the last failure was another process holding the store's lock past the busy timeout. */
int store_is_busy(const struct store *s);
/*
 * While *stop is non-zero (a signal handler's flag), waiting for a busy
 * store gives up at once instead of after the busy timeout.  NULL: never.
 */
void store_set_stop_flag(struct store *s, volatile int *stop);

/* Rolls back an open bench transaction (after a failed put). */
void store_bench_abort(struct store *s);

/* severity: a name of common/severity.h; evidence: JSON object text; remediation: one line
 * or NULL. Own transaction. */
int store_put_flag(struct store *s, int64_t run_id, const char *code, const char *severity,
		   const char *message, const char *evidence_json, const char *remediation);
/* Removes the run's flags (recomputation). */
int store_clear_flags(struct store *s, int64_t run_id);
/*
 * verdict: "accept", "reject", "unmeasurable"; policy: its name (display);
 * digest: the policy text's ("sha256:..."), the verdict's key; source: its
 * file or "built-in"; detail: JSON object text.  Replaces any earlier verdict
 * judged here by the same policy text.
 */
int store_put_verdict(struct store *s, int64_t run_id, const char *verdict, const char *policy,
		      const char *digest, const char *source, const char *detail_json);
/* status: "complete" (or "incomplete"); sets finished_at. */
int store_finish_run(struct store *s, int64_t run_id, const char *status);
/*
 * Names what a stored run was on, after the fact (`gpuvet results tag`, `results import
 * --provider/--sku/--region`): each non-NULL field replaces the stored one.  The caller
 * checks the strings (common/ident.h).  STORE_OK, or STORE_ERR when the run does not exist.
 */
int store_tag_run(struct store *s, int64_t run_id, const char *provider, const char *instance_type,
		  const char *region);

/* ---- reading ---- */

/* Latest run id (by started_at, then id); STORE_NOTFOUND when empty. */
int store_latest_run(struct store *s, int64_t *run_id);
/* Accepts a numeric id or a UUID (or unique UUID prefix). */
int store_resolve_run(struct store *s, const char *id_or_uuid, int64_t *run_id);
/* All run ids, oldest first; *ids is malloc'd. */
int store_list_runs(struct store *s, int64_t **ids, size_t *n);
/*
 * The runs without a verdict of the policy with this digest judged here (an imported one is history), started
 * at or after since (an ISO 8601 prefix; NULL: any), oldest first: what `accept --all` and `--since` gate.
 * *ids malloc'd.  A store_rc.
 */
int store_unjudged_runs(struct store *s, const char *digest, const char *since, int64_t **ids, size_t *n);
/*
 * The reasons runs were rejected by the policy with this digest (judged here): each first failed check (a flag
 * code or a metric) with how many rejections it decided and the newest such run, most first; fn non-zero stops.
 * A store_rc (a store older than schema 6 has no digests: none).
 */
typedef int (*store_reason_fn)(void *ud, const char *reason, int64_t runs, int64_t newest_run);
int store_reject_reasons(struct store *s, const char *digest, store_reason_fn fn, void *ud);
/* The whole fingerprint of one run (new reference). */
int store_load_fingerprint(struct store *s, int64_t run_id, json_t **out);
/*
 * One run as the typed run (results/fprun.h), read from its rows without a
 * JSON tree (store_load_run.c); parts leaves out what the caller does not
 * read.  *out is fprun_free()d by the caller.
 */
#define STORE_RUN_ALL       0u
#define STORE_RUN_NO_SERIES 0x1u   /* a fleet baseline's runs: their figures, not their series */
#define STORE_RUN_NO_FLAGS  0x2u
struct fprun;
int store_load_run(struct store *s, int64_t run_id, unsigned parts, struct fprun **out);

/* ---- reading for acceptance, rankings and the report (store_read.c) ---- */

/*
 * Runs other than run_id accepted here (not by import) by the policy of
 * this digest, with the same GPU model and count (and instance type when
 * both know it), oldest id first; *ids is malloc'd.
 */
int store_fleet_candidates(struct store *s, int64_t run_id, const char *digest, const char *gpu_model, int gpu_count,
			   const char *instance_type, int64_t **ids, size_t *n);

/*
 * Verdicts of an earlier schema (store_legacy.c): before 6 a verdict carried
 * its policy's name and no digest of its text (kept with digest '').  The
 * runs holding one by the policy named `policy`, not imported, and none
 * judged here by the policy of `digest`: ids in the order stored; *ids is
 * malloc'd.
 */
int store_legacy_verdict_runs(struct store *s, const char *policy, const char *digest, int64_t **ids, size_t *n);
/* How many runs of gpu_model x gpu_count such a verdict of `policy` accepted and `digest` has not judged. */
int store_legacy_accepts(struct store *s, const char *policy, const char *digest, const char *gpu_model,
			 int gpu_count, long long *n);

/*
 * Walks over stored rows: fn is called for each (its strings valid during
 * the call only, NULL for SQL NULL); non-zero from fn stops the walk, which
 * is not an error.  Each returns STORE_OK or STORE_ERR (store_errmsg).
 */
struct store_run_row {
	int64_t id;
	const char *uuid, *status, *profile, *gpuvet_version, *hostname;
	const char *provider, *instance_type, *region, *gpu_model, *started_at;
	int gpu_count;
};
typedef int (*store_run_fn)(void *ud, const struct store_run_row *r);
/* Every run's id, provider, instance_type, region, gpu_model, gpu_count and profile (the rest NULL), in no set order. */
int store_each_run_sku(struct store *s, store_run_fn fn, void *ud);
/* Instance-level metric rows (gpu -1) named in names[0..n) (n == 0: all), in run order (within a run, any order); NAN for no value. */
typedef int (*store_metric_fn)(void *ud, int64_t run_id, const char *name, double value, const char *unit);
int store_each_headline(struct store *s, const char *const *names, size_t n, store_metric_fn fn, void *ud);
/*
 * Each run that has flags, in run order: its flags as "severity code"
 * joined by tabs, ordered by severity then code (a ranking reads them beside
 * store_each_headline's rows, both in run order, and keeps none).
 */
typedef int (*store_run_flags_fn)(void *ud, int64_t run, const char *flags);
int store_each_run_flags(struct store *s, store_run_flags_fn fn, void *ud);
/*
 * The report's runs (results/store_report.c): the runs ids[0..nids) in that
 * order, each with its summary, head[i] the instance-level value of names[i]
 * (i < nhead), NaN for none; or (ids NULL) every run in started order with
 * its columns only (the rest NULL, no head: see store_each_report_fact).
 */
struct store_report_run {
	struct store_run_row run;
	const char *flags;        /* "CODE:severity ..." as raised, NULL for none */
	int benches_ok, benches_skipped, benches_failed;   /* benches but the harness */
	const char *verdict, *policy, *verdict_at;   /* the latest judged here (not imported), or NULL */
	const double *head;
	size_t nhead;
};
typedef int (*store_report_run_fn)(void *ud, const struct store_report_run *r);
int store_each_report_run(struct store *s, const int64_t *ids, size_t nids, const char *const *names, size_t nnames,
			  store_report_run_fn fn, void *ud);
/*
 * The facts of every run the report counts besides its columns, each from
 * one sequential scan in run-id order: FLAG, every flag as "CODE:severity"
 * (in no set order within a run); VERDICT, the run's latest verdict judged
 * here, once per run; HEAD_SORTED, the finite instance-level values of name
 * in ascending order; HEAD_FINITE, the same in run-id order (each value in
 * run order, NaN for none: store_each_headline).  And the smallest and
 * largest run id (lo > hi: no run).
 */
enum store_report_fact {
	STORE_FACT_FLAG, STORE_FACT_VERDICT, STORE_FACT_HEAD_SORTED, STORE_FACT_HEAD_FINITE
};
typedef int (*store_run_fact_fn)(void *ud, int64_t run_id, const char *text, double value);
int store_each_report_fact(struct store *s, enum store_report_fact which, const char *name, store_run_fact_fn fn,
			   void *ud);
/*
 * The one policy the report's verdicts are by (its digest, "sha256:<64 hex>"): from here on,
 * store_each_report_run and STORE_FACT_VERDICT give each run's latest verdict of that policy
 * judged here, and none for a run it never judged; NULL: of any policy (as before).  0, or
 * STORE_ERR for a malformed digest.
 */
int store_report_policy(struct store *s, const char *digest);
/*
 * How many machines the store's runs were made on (the report's fleet headline): a machine is its
 * first GPU's UUID (gpus.uuid, idx 0) where the run has one, else its provider and hostname
 * together.  Bounded memory at any store size.
 */
int store_report_machines(struct store *s, int64_t *n);
int store_run_id_range(struct store *s, int64_t *lo, int64_t *hi, int64_t *count);
/* Every run's id, ascending. */
typedef int (*store_id_fn)(void *ud, int64_t id);
int store_each_run_id(struct store *s, store_id_fn fn, void *ud);
/*
 * One instance-level metric's finite values with their run's columns, in
 * ascending order of the value (per_gpu: of value / gpu_count, runs with a
 * GPU model and GPUs only) when sorted is set, else in no set order.
 */
struct store_value_row {
	const char *provider, *instance_type, *region, *gpu_model;
	int gpu_count;
	double value;
};
typedef int (*store_value_fn)(void *ud, const struct store_value_row *r);
int store_each_headline_value(struct store *s, const char *name, int per_gpu, int sorted, store_value_fn fn, void *ud);
/* Whether some run has a finite instance-level value of name: 1, 0, or -1 on error. */
int store_headline_present(struct store *s, const char *name);

/*
 * `results list` and `results export --format csv` (issue 17): exactly the
 * rows they print, one statement over the store rather than a fingerprint
 * per run.  status is as a fingerprint says it (a run marked running whose
 * writer is gone is "incomplete").  Runs by started_at then id, as
 * store_list_runs; run_id > 0 takes that run only.
 */
struct store_list_row {
	struct store_run_row run;
	const char *finished_at;
	int benches_ok, benches;   /* benches but the harness, and those that were ok */
	int flags;
	const char *verdict;       /* the latest verdict judged here (not imported), any policy; NULL none */
	const char *raised;        /* its critical and warning flag codes, worst first, comma-joined; NULL none */
};
typedef int (*store_list_fn)(void *ud, const struct store_list_row *r);
int store_each_list_row(struct store *s, store_list_fn fn, void *ud);
/* A metric row with its run's columns (run.hostname, profile, gpuvet_version are NULL here). */
struct store_metric_row {
	struct store_run_row run;
	const char *bench, *name, *unit;
	int gpu, has_value;
	double value;
	const char *params;        /* stored JSON text or NULL */
	size_t params_len;
};
typedef int (*store_metric_row_fn)(void *ud, const struct store_metric_row *r);
int store_each_metric_row(struct store *s, int64_t run_id, store_metric_row_fn fn, void *ud);

/* Opened read-only (no catalog loading, no writes)? */
int store_is_readonly(struct store *s);
/* The database file, or NULL for an in-memory store. */
const char *store_file(struct store *s);
/* Many passes over the same tables ahead: a page cache of mib MiB (no memory map: resident size stays bounded). */
int store_read_cache(struct store *s, int mib);
/* One read snapshot around many queries: returns whether a transaction was begun; end with store_read_end(). */
int store_read_begin(struct store *s);
void store_read_end(struct store *s, int began);

/* ---- moving runs between stores ---- */

/* Inserts a fingerprint as a new run; STORE_DUP when its UUID exists. */
int store_import_fingerprint(struct store *s, json_t *fp, int64_t *run_id);
/* The same from a parsed text (its root, node 1): what `results import` and an S3 merge read. */
int store_import_tree(struct store *s, const struct jtree *t, int64_t *run_id);
/*
 * store_import_tree in two halves, so that the first runs beside the writes (`results import`
 * prepares in its parse-ahead thread): store_import_prepare checks the fingerprint and builds
 * its rows, touching no store (any thread; never NULL); store_import_prepared writes them, as
 * store_import_tree would have, and takes them (freed there).  t lives until then.
 */
struct store_import_rows;
struct store_import_rows *store_import_prepare(const struct jtree *t);
/*
 * What the layer above derives from every fingerprint imported (judge/derive.h derive_import:
 * the percentages, the timing class, the flags), handed over once by the program (runners/main.c,
 * the fuzz targets, the unit tests that import) as the bench checks are (fp_check.h): called by
 * store_import_prepare on the run decoded once (results/fprun.h), in whichever thread prepares it;
 * its refusal (-1 with err) refuses the import; the rows written are the run as it leaves it.
 * Unset, nothing is derived (the store's own tests).
 */
typedef int (*store_derive_fn)(struct fprun *r, char *err, size_t errlen);
void store_set_derive(store_derive_fn fn);
int store_import_prepared(struct store *s, const struct jtree *t, struct store_import_rows *r, int64_t *run_id);
void store_import_rows_free(struct store_import_rows *r);
/*
 * Batched imports: between store_batch_begin and store_batch_end every
 * store_import_* shares one write transaction (one commit, one WAL sync, for
 * many runs).  store_batch_mark .. _unmark(keep) brackets a part that is
 * kept or undone whole (a file, a source store, an object) while the batch
 * goes on.  An import that fails inside a batch (anything but STORE_DUP,
 * which writes nothing) may leave part of its run: the caller undoes the
 * part it is in.  (A savepoint per fingerprint did that itself, but its
 * journal was most of an import's writes: 209 of 231 pwrites per run.)
 * store_batch_end(s, 0) undoes the whole batch.
 */
int store_batch_begin(struct store *s);
int store_batch_mark(struct store *s);
int store_batch_unmark(struct store *s, int keep);
int store_batch_end(struct store *s, int commit);
/*
 * Copies every run of the store at path that s lacks; counts what was added and skipped.  after,
 * when not NULL, is called with each run added, inside the caller's batch (the layer above derives
 * the run's flags from its values there, never trusting the other store's); non-zero stops the merge.
 */
typedef int (*store_added_fn)(struct store *s, int64_t run_id);
int store_merge(struct store *s, const char *path, store_added_fn after, int *added, int *skipped, int *live);

/* ---- cluster runs (store_cluster.c, issue 49; common/cluster.h) ---- */

struct gv_cluster;
/*
 * Stores a cluster run whole, in one transaction (a savepoint inside a batch): the run, its nodes
 * with their metrics, its pairs, all-reduce points and findings.  c->uuid must be set.  STORE_OK;
 * STORE_DUP when this cluster run is stored already (the same document under its uuid: left as it
 * is, nothing written); STORE_ERR with the reason, nothing written (another cluster run under a
 * stored uuid included: one uuid, one cluster run).
 */
int store_put_cluster(struct store *s, const struct gv_cluster *c);
/*
 * A stored cluster run: id is its number, its uuid or a unique prefix of it (4+ characters), or
 * NULL for the one stored last.  0 with *c (gv_cluster_free), 1 when there is none (no cluster run
 * stored, or none of that id, or the prefix is ambiguous: store_errmsg says which), -1 on error.
 */
int store_load_cluster(struct store *s, const char *id, struct gv_cluster **c);
/* One stored cluster run's row, for lists (strings valid during the call). */
struct store_cluster_row {
	int64_t id;
	const char *uuid, *started_at, *engine;
	int nnodes, verdict, drain;   /* drain: how many findings name a node to drain */
};
typedef int (*store_cluster_fn)(void *ud, const struct store_cluster_row *r);
/* Every stored cluster run, oldest first (none on a store older than schema 8); fn non-zero stops. */
int store_each_cluster(struct store *s, store_cluster_fn fn, void *ud);
/*
 * Copies every cluster run of the store at path that s lacks (by uuid), each whole, inside the
 * caller's batch if one is open; counts what was added and what was there already.  `results merge`
 * calls it after store_merge (the nodes' runs come with that one).
 */
int store_merge_clusters(struct store *s, const char *path, int *added, int *skipped);

#endif
