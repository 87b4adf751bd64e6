/*
 * policy_json.c - a policy judged on fingerprint documents (policy.h
 * policy_evaluate, policy_evaluate_flags, policy_same_fleet): each decoded
 * once into the typed run (results/fprun_decode.c) and derived
 * (judge/derive.h), then judged as policy_evaluate_run judges a stored run.
 * For the readers that hold documents (the tests, the fuzz targets, a
 * preview of a run in hand); `gpuvet accept` loads the typed run itself.
 */
#include "judge/policy.h"
#include "judge/derive.h"
#include "results/fprun.h"
#include "common/util.h"

#include <stdlib.h>


int policy_same_fleet(const json_t *fp, const json_t *other, const char *digest)
{
	struct fprun *a = derive_from_json(fp), *b = fp == other ? a : derive_from_json(other);
	int same = a && b && fp != other && policy_same_fleet_run(a, b, digest);
	fprun_free(a);
	if (b != a)
		fprun_free(b);
	return same;
}

enum policy_verdict policy_evaluate_flags(const struct policy *p, const json_t *fp, const json_t *fleet,
					  const json_t *run_flags, json_t **result)
{
	struct fprun *r = derive_from_json(fp);
	size_t n = json_array_size(fleet), k = 0, i;
	struct fprun **runs = gv_calloc(n ? n : 1, sizeof *runs);
	json_t *o;
	json_array_foreach(fleet, i, o)
		if ((runs[k] = derive_from_json(o)))
			k++;
	if (!r)
		r = fprun_new();   /* not a fingerprint: judged as a run of nothing (no gpu visible) */
	enum policy_verdict v = policy_evaluate_run(p, r, runs, k, run_flags, result);
	for (i = 0; i < k; i++)
		fprun_free(runs[i]);
	free(runs);
	fprun_free(r);
	return v;
}

enum policy_verdict policy_evaluate(const struct policy *p, const json_t *fp, const json_t *fleet, json_t **result)
{
	return policy_evaluate_flags(p, fp, fleet, NULL, result);
}
