/*
 * store_pending.h - a finished bench kept aside while the store was busy.
 *
 * When another process holds the store's write lock for longer than a
 * bench's commit can wait and the user stops the wait, the harness writes
 * the bench's rows to DB.pending/<run uuid>.<bench>.json (DB: the store's
 * path; written to a temporary, synced, renamed), and the next command that
 * opens the store for writing stores them (store_open calls
 * store_pending_replay) and removes the file.  So a measurement is never
 * dropped for a busy store.
 */
#ifndef GPUVET_STORE_PENDING_H
#define GPUVET_STORE_PENDING_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

struct store;
struct bench_outcome;

/* Keeps the bench aside; 0 with the file's path in where, or -1 with the reason in where. */
int store_pending_keep(struct store *s, int64_t run_id, const char *bench, const json_t *rows,
		       const struct bench_outcome *o, char *where, size_t len);
/*
 * Stores every bench kept aside for this store and removes its file; what
 * it stored, and what it could not, is said on stderr.  The number stored.
 */
int store_pending_replay(struct store *s);

#endif
