/*
 * store_int.h - private to results/store*.c: what the store's read and
 * write files share beside the public API (store.h).  Nothing outside
 * results/ includes it, so the SQL stays in the store's files.
 */
#ifndef GPUVET_STORE_INT_H
#define GPUVET_STORE_INT_H

#include <sqlite3.h>

#include "results/store.h"

/* The store's connection. */
sqlite3 *store_conn(struct store *s);
/* True when another process holds run_id's live lock (a run marked running is still being measured). */
int store_run_live(struct store *s, int64_t run_id);
/* Records "database 'PATH': what: sqlite's message" as the store's error; returns STORE_ERR. */
int store_fail(struct store *s, const char *what);
/* Prepares sql on the store's connection; STORE_ERR (message recorded) on failure. */
int store_prepare(struct store *s, const char *sql, sqlite3_stmt **st);
/* Binds text or NULL. */
void store_bind_text(sqlite3_stmt *st, int i, const char *v);
/* A text column as a malloc'd string, or NULL for SQL NULL. */
char *store_col_strdup(sqlite3_stmt *st, int i);

#endif
