/*
 * store_report.c - what the report reads (reports/report_load.c), in
 * statements whose memory does not grow with the store: every run with its
 * summary in one streamed pass, in started order (the runs from runs_list,
 * each run's benches, flags, latest verdict and headline values from
 * covering indexes beside it), or only the runs asked for; and one headline
 * metric's values in ascending order, sorted by SQLite (which spills to a
 * temporary file past its cache), for the medians.
 */
#include "results/store.h"
#include "results/store_int.h"
#include "common/util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Columns 0-11 the run's (struct store_run_row); then benches, flags, verdict, policy, at, tolerated, the headline values. */
static char *report_run_sql(struct store *s, size_t nnames, int by_id)
{
	int v = store_schema_version(s);
	const char *imported = v >= 6 ? " AND imported = 0" : "";
	const char *head_ix = v >= 3 ? " INDEXED BY metrics_head" : "";
	char *heads = gv_strdup(""), *sql;
	for (size_t i = 0; i < nnames; i++) {
		char *h = gv_asprintf("%s, (SELECT value FROM metrics%s WHERE name = ?%zu AND gpu = -1 AND run_id = r.id)",
				      heads, head_ix, i + 2);
		free(heads);
		heads = h;
	}
	sql = gv_asprintf(
		"SELECT " STORE_RUN_COLS ","
		" %s,"
		" (SELECT group_concat(c, ' ') FROM (SELECT f.code || ':' || f.severity AS c FROM flags f"
		"  WHERE f.run_id = r.id ORDER BY f.id)),"
		" v.verdict, v.policy, v.at, %s%s"
		" FROM runs r LEFT JOIN verdicts v ON v.id = (SELECT id FROM verdicts WHERE run_id = r.id%s"
		"  ORDER BY at DESC, id DESC LIMIT 1)"
		" %s",
		/* the benches only for the runs shown: the page counts none */
		by_id ? "(SELECT printf('%d %d %d', sum(b.status = 'ok'), sum(b.status = 'skipped'),"
			" sum(b.status NOT IN ('ok', 'skipped'))) FROM benches b WHERE b.run_id = r.id AND b.name <> 'harness')"
		      : "NULL",
		/* an accept at the run's verdict time that tolerated a critical flag (the last stored): only for the runs shown */
		by_id && v >= 6 ? "(SELECT json_extract(t.detail, '$.tolerated[0].flag') FROM verdicts t WHERE t.run_id = r.id"
				  " AND t.imported = 0 AND t.verdict = 'accept' AND t.at = v.at AND json_valid(t.detail)"
				  " AND json_array_length(t.detail, '$.tolerated') > 0 ORDER BY t.id DESC LIMIT 1)" : "NULL",
		heads, imported, by_id ? "WHERE r.id = ?1" : "ORDER BY r.started_at, r.id");
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
		.tolerated = (const char *)sqlite3_column_text(st, 17),
		.head = head,
		.nhead = nnames,
	};
	bench_counts((const char *)sqlite3_column_text(st, 12), &r);
	for (size_t i = 0; i < nnames; i++)
		head[i] = sqlite3_column_type(st, 18 + (int)i) == SQLITE_NULL ? NAN : sqlite3_column_double(st, 18 + (int)i);
	return fn(ud, &r);
}

int store_each_report_run(struct store *s, const int64_t *ids, size_t nids, const char *const *names, size_t nnames,
			  store_report_run_fn fn, void *ud)
{
	sqlite3_stmt *st;
	char *sql = report_run_sql(s, nnames, ids != NULL);
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
