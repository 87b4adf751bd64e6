/*
 * store_cluster_schema.c - the cluster tables' migration 8 -> 9 (issue 56; store_int.h
 * sto_cluster_columns): each new column added unless its table has it already, so a store whose
 * user_version was set back by hand migrates as one that never had them.  Called by store.c's
 * migration; below store_cluster.c, which reads and writes the columns.
 */
#include "results/store_int.h"

#include <sqlite3.h>
#include <stdio.h>
#include <string.h>

/* 1 when table has column (PRAGMA table_info), 0 when not, -1 on error. */
static int has_column(struct store *s, const char *table, const char *column)
{
	sqlite3_stmt *st;
	char sql[96];
	snprintf(sql, sizeof sql, "PRAGMA table_info(%s)", table);
	if (store_prepare(s, sql, &st))
		return -1;
	int rc, found = 0;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		found |= !strcmp((const char *)sqlite3_column_text(st, 1), column);
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? found : (store_fail(s, "reading a cluster table's columns"), -1);
}

int sto_cluster_columns(struct store *s)
{
	static const char *const cols[][3] = {
		{ "clusters", "authenticated", "INTEGER NOT NULL DEFAULT 0 CHECK (authenticated IN (0, 1))" },
		{ "clusters", "deadline_s", "REAL" },
		{ "clusters", "pair_healthy_gbps", "REAL" },
		{ "cluster_nodes", "clock_skew_s", "REAL" },
		{ "cluster_nodes", "link_gbps", "REAL" },
		{ "cluster_nodes", "link_source", "TEXT" },
		{ "cluster_metrics", "remeasured", "REAL" },
	};
	for (size_t i = 0; i < sizeof cols / sizeof cols[0]; i++) {
		int there = has_column(s, cols[i][0], cols[i][1]);
		char sql[192];
		if (there < 0)
			return STORE_ERR;
		snprintf(sql, sizeof sql, "ALTER TABLE %s ADD COLUMN %s %s", cols[i][0], cols[i][1], cols[i][2]);
		if (!there && sto_exec_sql(s, sql))
			return STORE_ERR;
	}
	return STORE_OK;
}
