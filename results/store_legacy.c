/*
 * store_legacy.c - the verdicts an older gpuvet stored (results/store.h,
 * "verdicts of an earlier schema"): before schema 6 a verdict was keyed by
 * its policy's name and carried no digest of the policy's text; migration
 * keeps them with digest '' (history).  The judge reads here which runs the
 * built-in policy of an earlier version judged and this one has not, to
 * judge them again (judge/accept.c), and how many accepts of a policy a
 * fleet baseline lost that way.
 */
#include "results/store.h"
#include "results/store_int.h"
#include "common/util.h"

#include <stdlib.h>

int store_legacy_verdict_runs(struct store *s, const char *policy, const char *digest, int64_t **ids, size_t *n)
{
	sqlite3_stmt *st;
	*n = 0;
	*ids = NULL;
	/* by id: the order this store took them in, never a date a fingerprint carries */
	if (store_prepare(s,
		"SELECT DISTINCT v.run_id FROM verdicts v WHERE v.policy_digest = '' AND v.imported = 0 AND v.policy = ?1 "
		"AND NOT EXISTS (SELECT 1 FROM verdicts w WHERE w.run_id = v.run_id AND w.policy_digest = ?2 "
		"AND w.imported = 0) ORDER BY v.run_id", &st))
		return STORE_ERR;
	store_bind_text(st, 1, policy);
	store_bind_text(st, 2, digest);
	return store_step_ids(s, st, ids, n, "finding the verdicts of an earlier schema");
}

int store_legacy_accepts(struct store *s, const char *policy, const char *digest, const char *gpu_model,
			 int gpu_count, long long *n)
{
	sqlite3_stmt *st;
	*n = 0;
	if (store_prepare(s,
		"SELECT count(DISTINCT r.id) FROM runs r JOIN verdicts v ON v.run_id = r.id AND v.policy_digest = '' "
		"AND v.imported = 0 AND v.verdict = 'accept' AND v.policy = ?1 "
		"WHERE r.gpu_model = ?3 AND r.gpu_count = ?4 AND NOT EXISTS (SELECT 1 FROM verdicts w "
		"WHERE w.run_id = r.id AND w.policy_digest = ?2 AND w.imported = 0)", &st))
		return STORE_ERR;
	store_bind_text(st, 1, policy);
	store_bind_text(st, 2, digest);
	sqlite3_bind_text(st, 3, gpu_model ? gpu_model : "", -1, SQLITE_TRANSIENT);
	sqlite3_bind_int(st, 4, gpu_count);
	int rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		*n = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return rc == SQLITE_ROW ? STORE_OK : store_fail(s, "counting the accepts of an earlier schema");
}
