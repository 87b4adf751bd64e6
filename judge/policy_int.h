/*
 * policy_int.h - what policy.c shares with the files that judge a part of
 * a policy: its flags (policy_flags.c: reject_flags, fail-closed critical
 * flags, tolerate_flags) and its metric rules' evidence (policy_rules.c).
 */
#ifndef GPUVET_POLICY_INT_H
#define GPUVET_POLICY_INT_H

#include "judge/policy.h"

#include <jansson.h>

/*
 * The policy's flags against the run's: each reject_flags entry (failed,
 * passed or unmeasurable), then every critical flag not named there, which
 * fails unless tolerate_flags names its code (then listed in res
 * "tolerated" with the policy's reason).  Appends to res's lists.
 */
void policy_eval_flags(const struct policy *p, const json_t *fp, const json_t *run_flags, json_t *res);

/*
 * Which of a rule's alternatives the run is judged on, and whether it can
 * be: the first alternative, or a later one only when the GPU model has no
 * path for the earlier one (a GEMM dtype without a peak in common/gpus.c).
 * Returns the metric row (value a finite number) with *name set; NULL when
 * the rule cannot be judged on this run, with *why set and *failed 1 when
 * the metric's bench failed (a failed check, not a missing figure).
 */
const json_t *policy_rule_metric(const struct policy_rule *r, int gpu, const json_t *fp, const char **name,
				 char *why, size_t whylen, int *failed);

/*
 * fp with each metric that has more than one row (same bench, name, gpu)
 * folded into one row at its worst value (judge/metric_dups.c); a new
 * reference, fp itself when it has none.  *nresolved: how many were folded.
 */
json_t *policy_worst_of_duplicates(const json_t *fp, size_t *nresolved);

#endif
