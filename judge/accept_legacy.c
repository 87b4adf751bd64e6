/*
 * accept_legacy.c - an upgrade keeps the gate's memory (accept.h
 * accept_legacy_rebuild).  A store of schema 5 or older keyed its verdicts
 * by the policy's name; migration keeps them as history with no digest, so
 * none of them counts for a fleet baseline of this version's policies.  Left
 * so, the built-in policy's fleet floor would hold nothing after an upgrade,
 * and the first runs judged again would become the baseline, the ones the
 * earlier version rejected included.
 *
 * So the first judging command after the upgrade judges again, with this
 * version's built-in policy, every run the earlier built-in ("default")
 * judged, in the order the store took them (never by a date a fingerprint
 * carries), and says so once on stderr; a run the earlier built-in rejected
 * or could not measure stays out of the built-in's fleet baseline whatever
 * it is judged now (judge/policy.c accepted()).  A file policy's verdicts
 * cannot be judged again (its earlier text is unknown): `accept` says the
 * baseline was lost instead of the routine "fewer than N" (accept.c).
 */
#include "judge/accept.h"
#include "judge/policy.h"
#include "results/store.h"
#include "common/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int accept_legacy_rebuild(struct store *s)
{
	struct policy *p;
	char err[512];
	int64_t *ids = NULL;
	size_t n = 0, counts[4] = { 0 };
	if (policy_load(NULL, &p, err, sizeof err))
		return -1;
	if (store_legacy_verdict_runs(s, POLICY_BUILTIN_NAME, p->digest, &ids, &n) || !n) {
		policy_free(p);
		free(ids);
		return 0;
	}
	FILE *quiet = fopen("/dev/null", "w");
	for (size_t i = 0; quiet && i < n; i++) {
		json_t *fp;
		if (store_load_fingerprint(s, ids[i], &fp)) {
			counts[2]++;
			continue;
		}
		int rc = accept_judge(s, ids[i], p, fp, NULL, 1, quiet);
		counts[rc == 0 ? 0 : rc == 1 ? 1 : rc == 3 ? 3 : 2]++;
		json_decref(fp);
	}
	if (quiet)
		fclose(quiet);
	fprintf(stderr, "gpuvet: this store was upgraded from a schema whose verdicts name no policy text: the %zu "
		"run(s) an earlier gpuvet's built-in policy judged were judged again by this one (%.19s), in the order "
		"the store took them, so its fleet baseline is rebuilt: %zu accepted, %zu rejected, %zu not measured%s; "
		"a run the earlier built-in rejected stays out of the baseline\n", n, p->digest, counts[0], counts[1],
		counts[3], counts[2] ? ", some not judged (see the errors above)" : "");
	policy_free(p);
	free(ids);
	return 0;
}
