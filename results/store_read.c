/*
 * store_read.c - the store's read functions for the modules above it
 * (acceptance's fleet, rankings, the report): rows with their derived
 * values computed here once, so no other folder writes SQL.
 */
#include "results/store.h"
#include "results/store_int.h"
#include "common/util.h"

#include <stdlib.h>
#include <string.h>

int store_fleet_candidates(struct store *s, int64_t run_id, const char *gpu_model, int gpu_count,
			   const char *instance_type, int64_t **ids, size_t *n)
{
	sqlite3_stmt *st;
	size_t cap = 16;
	*n = 0;
	*ids = NULL;
	if (store_prepare(s,
		"SELECT DISTINCT r.id FROM runs r JOIN verdicts v ON v.run_id = r.id AND v.verdict = 'accept' "
		"WHERE r.gpu_model = ?1 AND r.gpu_count = ?2 AND r.id <> ?3 "
		"AND (?4 IS NULL OR r.instance_type IS NULL OR r.instance_type = ?4) ORDER BY r.id", &st))
		return STORE_ERR;
	sqlite3_bind_text(st, 1, gpu_model ? gpu_model : "", -1, SQLITE_TRANSIENT);
	sqlite3_bind_int(st, 2, gpu_count);
	sqlite3_bind_int64(st, 3, run_id);
	store_bind_text(st, 4, instance_type);
	*ids = gv_malloc(cap * sizeof **ids);
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (*n == cap)
			*ids = gv_realloc(*ids, (cap *= 2) * sizeof **ids);
		(*ids)[(*n)++] = sqlite3_column_int64(st, 0);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		free(*ids);
		*ids = NULL;
		*n = 0;
		return store_fail(s, "finding the fleet's accepted runs");
	}
	return STORE_OK;
}
