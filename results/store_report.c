/*
 * store_report.c - what the report reads (reports/report_load.c), in
 * statements whose memory does not grow with the store: every run in one
 * streamed pass in started order (its columns from runs_list only), and
 * each run's flags, latest verdict and BF16 headline beside it, each from
 * one sequential scan of its covering index in run-id order (a seek per run
 * into indexes larger than the page cache was most of a 1M-run report);
 * only the runs asked for with their whole summary; and one headline
 * metric's values in ascending order, sorted by SQLite (which spills to a
 * temporary file past its cache), for the medians; and how many machines
 * the runs were made on (store_report_machines).
 */
#include "results/store.h"
#include "results/store_int.h"
#include "common/util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int store_report_policy(struct store *s, const char *digest)
{
	size_t n = digest ? strlen(digest) : 0;
	if (digest && (n != 71 || strncmp(digest, "sha256:", 7) || strspn(digest + 7, "0123456789abcdef") != 64)) {
		sto_set_err(s, "a policy digest is sha256: and 64 hex digits, not '%.80s'", digest);
		return STORE_ERR;
	}
	snprintf(s->report_digest, sizeof s->report_digest, "%s", digest ? digest : "");
	return STORE_OK;
}

/* " AND ..." of the verdicts the report reads: judged here, by its one policy once it has one. */
static const char *verdict_where(struct store *s, int v, char *buf, size_t size)
{
	if (v < 6)   /* no digest before schema 6: no verdict is of a known policy */
		return s->report_digest[0] ? " AND 0" : "";
	snprintf(buf, size, " AND imported = 0%s%s%s", s->report_digest[0] ? " AND policy_digest = '" : "",
		 s->report_digest, s->report_digest[0] ? "'" : "");
	return buf;
}

/*
 * Columns 0-11 the run's (struct store_run_row); then benches, flags, verdict, policy, at, the headline
 * values: of the run ?1 (by_id), else of every run in started order, its columns only (the rest NULL).
 */
static char *report_run_sql(struct store *s, size_t nnames, int by_id)
{
	int v = store_schema_version(s);
	const char *head_ix = v >= 3 ? " INDEXED BY metrics_head" : "";
	char *heads, *sql, vw[128];
	if (!by_id)   /* the rest is read in run-id order (store_each_report_fact), never a seek per run */
		return gv_asprintf("SELECT " STORE_RUN_COLS ", NULL, NULL, NULL, NULL, NULL FROM runs r%s"
				   " ORDER BY r.started_at, r.id", v >= 4 ? " INDEXED BY runs_list" : "");
	heads = gv_strdup("");
	for (size_t i = 0; i < nnames; i++) {
		char *h = gv_asprintf("%s, (SELECT value FROM metrics%s WHERE name = ?%zu AND gpu = -1 AND run_id = r.id)",
				      heads, head_ix, i + 2);
		free(heads);
		heads = h;
	}
	sql = gv_asprintf(
		"SELECT " STORE_RUN_COLS ","
		" (SELECT printf('%%d %%d %%d', sum(b.status = 'ok'), sum(b.status = 'skipped'),"
		"  sum(b.status NOT IN ('ok', 'skipped'))) FROM benches b WHERE b.run_id = r.id AND b.name <> 'harness'),"
		" (SELECT group_concat(c, ' ') FROM (SELECT f.code || ':' || f.severity AS c FROM flags f"
		"  WHERE f.run_id = r.id ORDER BY f.id)),"
		" v.verdict, v.policy, v.at%s"
		" FROM runs r LEFT JOIN verdicts v ON v.id = (SELECT id FROM verdicts WHERE run_id = r.id%s"
		"  ORDER BY at DESC, id DESC LIMIT 1)"
		" WHERE r.id = ?1",
		heads, verdict_where(s, v, vw, sizeof vw));
	free(heads);
	return sql;
}

static void bench_counts(const char *s, struct store_report_run *r)
{
	if (!s || sscanf(s, "%d %d %d", &r->benches_ok, &r->benches_skipped, &r->benches_failed) != 3)
		r->benches_ok = r->benches_skipped = r->benches_failed = 0;
}

static int report_row(sqlite3_stmt *st, size_t nnames, double *head, store_report_run_fn fn, void *ud)
{
	struct store_report_run r = {
		.run = store_run_at(st),
		.flags = (const char *)sqlite3_column_text(st, 13),
		.verdict = (const char *)sqlite3_column_text(st, 14),
		.policy = (const char *)sqlite3_column_text(st, 15),
		.verdict_at = (const char *)sqlite3_column_text(st, 16),
		.head = head,
		.nhead = nnames,
	};
	bench_counts((const char *)sqlite3_column_text(st, 12), &r);
	for (size_t i = 0; i < nnames; i++)
		head[i] = sqlite3_column_type(st, 17 + (int)i) == SQLITE_NULL ? NAN : sqlite3_column_double(st, 17 + (int)i);
	return fn(ud, &r);
}

int store_each_report_run(struct store *s, const int64_t *ids, size_t nids, const char *const *names, size_t nnames,
			  store_report_run_fn fn, void *ud)
{
	sqlite3_stmt *st;
	char *sql;
	if (!ids)
		nnames = 0;
	sql = report_run_sql(s, nnames, ids != NULL);
	double *head = gv_malloc((nnames ? nnames : 1) * sizeof *head);
	int rc = store_prepare(s, sql, &st), stop = 0;
	free(sql);
	if (rc) {
		free(head);
		return STORE_ERR;
	}
	for (size_t i = 0; i < nnames; i++)
		sqlite3_bind_text(st, (int)i + 2, names[i], -1, SQLITE_STATIC);
	rc = SQLITE_DONE;
	for (size_t k = 0; !stop && (ids ? k < nids : k == 0); k++) {
		if (ids) {
			sqlite3_reset(st);
			sqlite3_bind_int64(st, 1, ids[k]);
		}
		while (!stop && (rc = sqlite3_step(st)) == SQLITE_ROW)
			stop = report_row(st, nnames, head, fn, ud);
		if (rc != SQLITE_ROW && rc != SQLITE_DONE)
			break;
	}
	sqlite3_finalize(st);
	free(head);
	return rc == SQLITE_ROW || rc == SQLITE_DONE ? STORE_OK : store_fail(s, "reading runs");
}

/* Column 1, or with a column 3 "col1:col3" (NULL if either is), as SQL's || would make it (not made by SQLite: 0.3 s at 1M flags). */
static const char *fact_text(sqlite3_stmt *st, char *buf, size_t size, char **big)
{
	const char *a = (const char *)sqlite3_column_text(st, 1), *b;
	size_t la, lb;
	if (sqlite3_column_count(st) < 4 || !a)
		return a;
	if (!(b = (const char *)sqlite3_column_text(st, 3)))
		return NULL;
	la = strlen(a);
	lb = strlen(b);
	if (la + lb + 2 > size) {
		free(*big);
		buf = *big = gv_malloc(la + lb + 2);
	}
	memcpy(buf, a, la);
	buf[la] = ':';
	memcpy(buf + la + 1, b, lb + 1);
	return buf;
}

/* Rows of (run id, text, value) in run-id order into fn; with once, each run's first row only. */
static int each_fact(struct store *s, const char *sql, const char *name, int once, store_run_fact_fn fn, void *ud)
{
	sqlite3_stmt *st;
	int64_t prev = 0;
	int rc = store_prepare(s, sql, &st), seen = 0;
	char buf[256], *big = NULL;
	if (rc)
		return STORE_ERR;
	if (name)
		sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t id = sqlite3_column_int64(st, 0);
		if (once && seen && id == prev)
			continue;
		seen = 1;
		prev = id;
		if (fn(ud, id, fact_text(st, buf, sizeof buf, &big),
		       sqlite3_column_type(st, 2) == SQLITE_NULL ? NAN : sqlite3_column_double(st, 2)))
			break;
	}
	free(big);
	sqlite3_finalize(st);
	return rc == SQLITE_ROW || rc == SQLITE_DONE ? STORE_OK : store_fail(s, "reading runs");
}

int store_each_report_fact(struct store *s, enum store_report_fact which, const char *name, store_run_fact_fn fn,
			   void *ud)
{
	int v = store_schema_version(s), rc;
	char *sql, vw[128];
	if (which == STORE_FACT_FLAG)   /* the order within a run is the index's: only the set counts */
		sql = gv_asprintf("SELECT run_id, code, NULL, severity FROM flags%s ORDER BY run_id",
				  v >= 3 ? " INDEXED BY flags_run" : "");
	else if (which == STORE_FACT_VERDICT)   /* as store_each_report_run's: the latest judged here */
		sql = gv_asprintf("SELECT run_id, verdict, NULL FROM verdicts WHERE 1%s ORDER BY run_id, at DESC, id DESC",
				  verdict_where(s, v, vw, sizeof vw));
	else   /* sorted by SQLite, spilling past its cache, or in the index's order */
		sql = gv_asprintf("SELECT run_id, NULL, value FROM metrics%s WHERE name = ?1 AND gpu = -1"
				  " AND value IS NOT NULL AND abs(value) <= 1.7976931348623157e308 ORDER BY %s",
				  v >= 3 ? " INDEXED BY metrics_head" : "", which == STORE_FACT_HEAD_SORTED ? "value" : "run_id");
	rc = each_fact(s, sql, which >= STORE_FACT_HEAD_SORTED ? name : NULL, which == STORE_FACT_VERDICT, fn, ud);
	free(sql);
	return rc;
}

/* The machines' keys, each kept once ("g" and a GPU 0 UUID, "h" and provider/hostname): open addressing, a power of
 * two. */
struct keyset {
	char **slot;
	size_t n, cap;
};

static void keyset_add(struct keyset *k, char kind, const char *a, const char *b)
{
	char buf[512], *key = buf;
	if ((size_t)snprintf(buf, sizeof buf, "%c%s/%s", kind, a ? a : "", b ? b : "") >= sizeof buf)
		key = gv_asprintf("%c%s/%s", kind, a ? a : "", b ? b : "");
	if (2 * (k->n + 1) > k->cap) {
		size_t cap = k->cap ? 2 * k->cap : 1024;
		char **slot = gv_calloc(cap, sizeof *slot);
		for (size_t i = 0; i < k->cap; i++)
			if (k->slot[i]) {
				size_t h = gv_hash_str(k->slot[i]) & (cap - 1);
				while (slot[h])
					h = (h + 1) & (cap - 1);
				slot[h] = k->slot[i];
			}
		free(k->slot);
		k->slot = slot;
		k->cap = cap;
	}
	size_t h = gv_hash_str(key) & (k->cap - 1);
	while (k->slot[h] && strcmp(k->slot[h], key))
		h = (h + 1) & (k->cap - 1);
	if (!k->slot[h]) {
		k->slot[h] = key == buf ? gv_strdup(key) : key;
		k->n++;
	} else if (key != buf) {
		free(key);
	}
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return x < y ? -1 : x > y;
}

/*
 * The runs that have a GPU 0 UUID, asked of every run: a bit per run id where the ids are SQLite's own, dense from 1
 * (128 KiB for a million runs), else their sorted list (8 bytes each).
 */
struct idset {
	unsigned char *bit;     /* ids 0 to max; NULL: the list */
	int64_t max;
	int64_t *id;
	size_t n, cap;
	int sorted;
};

static void idset_add(struct idset *k, int64_t id)
{
	if (k->bit && id >= 0 && id <= k->max) {
		k->bit[id / 8] |= (unsigned char)(1u << (id % 8));
		return;
	}
	if (k->n == k->cap) {
		k->cap = k->cap ? 2 * k->cap : 1024;
		k->id = gv_realloc(k->id, k->cap * sizeof *k->id);
	}
	k->sorted &= !k->n || k->id[k->n - 1] <= id;
	k->id[k->n++] = id;
}

static int idset_has(struct idset *k, int64_t id)
{
	if (k->bit && id >= 0 && id <= k->max && (k->bit[id / 8] >> (id % 8) & 1))
		return 1;
	if (!k->sorted)
		qsort(k->id, k->n, sizeof *k->id, cmp_i64);
	k->sorted = 1;
	return k->n && bsearch(&id, k->id, k->n, sizeof *k->id, cmp_i64);
}

/* The bits when the run ids are dense: from 0 up to the largest, at most 64 ids a run (no larger than the list). */
static int idset_init(struct store *s, struct idset *k)
{
	sqlite3_stmt *st;
	int64_t v[2] = { 0, 0 };
	const char *sql[2] = { "SELECT max(id) FROM runs", "SELECT count(*) FROM runs" };
	*k = (struct idset){ .sorted = 1 };
	for (int i = 0; i < 2; i++) {
		if (store_prepare(s, sql[i], &st))
			return STORE_ERR;
		int rc = sqlite3_step(st);
		v[i] = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
		sqlite3_finalize(st);
		if (rc != SQLITE_ROW)
			return store_fail(s, "counting the machines");
	}
	if (v[0] >= 0 && v[1] > 0 && v[0] / 64 <= v[1]) {
		k->max = v[0];
		k->bit = gv_calloc((size_t)(v[0] / 8 + 1), 1);
	}
	return STORE_OK;
}

/*
 * A machine is its GPU 0's UUID, else (a run without one) its provider and hostname.  Two streamed reads, never a
 * seek per run (a LEFT JOIN of each run to its GPU 0 took twice as long at 1M runs) nor a subquery probed per run
 * (NOT IN built and probed a b-tree of every run, 1.5 s): the GPU 0 rows in table order, their runs kept (struct
 * idset); then every run from runs_list (covering: never a run's inventory), looked up there.  Memory: a bit per
 * run id and one copy of each machine's key, so it grows with the fleet's machines, not its runs.
 */
int store_report_machines(struct store *s, int64_t *n)
{
	sqlite3_stmt *st = NULL;
	struct keyset k = { 0 };
	struct idset with;
	int rc = idset_init(s, &with);
	if (!rc)
		rc = store_prepare(s, "SELECT run_id, uuid FROM gpus WHERE idx = 0 AND uuid <> ''", &st);
	while (!rc && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		idset_add(&with, sqlite3_column_int64(st, 0));
		keyset_add(&k, 'g', (const char *)sqlite3_column_text(st, 1), "");
		rc = 0;
	}
	sqlite3_finalize(st);
	st = NULL;
	if (rc == SQLITE_DONE)
		rc = store_prepare(s, store_schema_version(s) >= 4 ? "SELECT id, provider, hostname FROM runs INDEXED BY "
				   "runs_list" : "SELECT id, provider, hostname FROM runs", &st);
	while (!rc && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (!idset_has(&with, sqlite3_column_int64(st, 0)))
			keyset_add(&k, 'h', (const char *)sqlite3_column_text(st, 1),
				   (const char *)sqlite3_column_text(st, 2));
		rc = 0;
	}
	sqlite3_finalize(st);
	*n = (int64_t)k.n;
	for (size_t i = 0; i < k.cap; i++)
		free(k.slot[i]);
	free(k.slot);
	free(with.bit);
	free(with.id);
	return rc == SQLITE_DONE ? STORE_OK : store_fail(s, "counting the machines");
}

int store_run_id_range(struct store *s, int64_t *lo, int64_t *hi, int64_t *count)
{
	sqlite3_stmt *st;
	int rc = store_prepare(s, "SELECT min(id), max(id), count(*) FROM runs", &st);
	if (rc)
		return STORE_ERR;
	*lo = 0;
	*hi = -1;
	*count = 0;
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL) {
		*lo = sqlite3_column_int64(st, 0);
		*hi = sqlite3_column_int64(st, 1);
		*count = sqlite3_column_int64(st, 2);
	}
	sqlite3_finalize(st);
	return rc == SQLITE_ROW || rc == SQLITE_DONE ? STORE_OK : store_fail(s, "reading runs");
}

int store_each_run_id(struct store *s, store_id_fn fn, void *ud)
{
	sqlite3_stmt *st;
	/* a covering index and SQLite's sorter: the table's own order reads every run's row (kilobytes each) */
	int rc = store_prepare(s, store_schema_version(s) >= 4 ? "SELECT id FROM runs INDEXED BY runs_list ORDER BY id"
							      : "SELECT id FROM runs ORDER BY id", &st);
	if (rc)
		return STORE_ERR;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW && !fn(ud, sqlite3_column_int64(st, 0)))
		;
	sqlite3_finalize(st);
	return rc == SQLITE_ROW || rc == SQLITE_DONE ? STORE_OK : store_fail(s, "reading runs");
}

int store_each_headline_value(struct store *s, const char *name, int per_gpu, int sorted, store_value_fn fn, void *ud)
{
	sqlite3_stmt *st;
	int rc, v = store_schema_version(s);
	/*
	 * The runs' columns from runs_list (covering), each run's value from metrics_head: never a row
	 * of the runs table (inventories of kilobytes); finite values only (NULL is a NaN stored).
	 */
	char *sql = gv_asprintf(
		"SELECT r.provider, r.instance_type, r.region, r.gpu_model, r.gpu_count, m.value"
		" FROM runs r%s CROSS JOIN metrics m%s ON m.name = ?1 AND m.gpu = -1 AND m.run_id = r.id"
		" WHERE m.value IS NOT NULL AND abs(m.value) <= 1.7976931348623157e308%s%s",
		v >= 4 ? " INDEXED BY runs_list" : "", v >= 3 ? " INDEXED BY metrics_head" : "",
		per_gpu ? " AND r.gpu_model IS NOT NULL AND r.gpu_count > 0" : "",
		!sorted ? "" : per_gpu ? " ORDER BY m.value / r.gpu_count" : " ORDER BY m.value");
	rc = store_prepare(s, sql, &st);
	free(sql);
	if (rc)
		return STORE_ERR;
	sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct store_value_row r = {
			.provider = (const char *)sqlite3_column_text(st, 0),
			.instance_type = (const char *)sqlite3_column_text(st, 1),
			.region = (const char *)sqlite3_column_text(st, 2),
			.gpu_model = (const char *)sqlite3_column_text(st, 3),
			.gpu_count = sqlite3_column_int(st, 4),
			.value = sqlite3_column_double(st, 5),
		};
		if (fn(ud, &r))
			break;
	}
	sqlite3_finalize(st);
	return rc == SQLITE_ROW || rc == SQLITE_DONE ? STORE_OK : store_fail(s, "reading metrics");
}

int store_headline_present(struct store *s, const char *name)
{
	sqlite3_stmt *st;
	int rc;
	char *sql = gv_asprintf("SELECT 1 FROM metrics%s WHERE name = ?1 AND gpu = -1 AND value IS NOT NULL"
				" AND abs(value) <= 1.7976931348623157e308 LIMIT 1",
				store_schema_version(s) >= 3 ? " INDEXED BY metrics_head" : "");
	rc = store_prepare(s, sql, &st);
	free(sql);
	if (rc)
		return -1;
	sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	if (rc == SQLITE_ROW || rc == SQLITE_DONE)
		return rc == SQLITE_ROW;
	store_fail(s, "reading metrics");
	return -1;
}
