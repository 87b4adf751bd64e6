/*
 * policy_int.h - what policy.c shares with the files that judge a part of
 * a policy: its flags (policy_flags.c: reject_flags, fail-closed critical
 * flags, tolerate_flags) and its metric rules' evidence (policy_rules.c),
 * and the YAML helpers of the parsers (policy_util.c, below every part).
 */
#ifndef GPUVET_POLICY_INT_H
#define GPUVET_POLICY_INT_H

#include "judge/policy.h"

#include <jansson.h>
#include <yaml.h>

/* The parser's state, shared with the files that parse a section (policy_cluster.c). */
struct pctx {
	yaml_document_t *doc;
	char *err;
	size_t errlen;
	int builtin;          /* the text is the built-in policy's, byte for byte */
};

/* ---- policy_util.c: the parsers' YAML helpers (policy.c, policy_cluster.c) ---- */
/* A scalar node's text, NULL for any other node. */
const char *policy_scalar(const yaml_node_t *n);
/* Writes "line N: what" (N of node n, 1 when NULL) to c->err; returns -1. */
int policy_perr(struct pctx *c, const yaml_node_t *n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* A key given twice in one mapping is refused (-1 with the error), not silently the last one. */
int policy_dup_keys(struct pctx *c, yaml_node_t *map);
/* A mapping pair's key and value nodes; the key's text, NULL when it is not a plain scalar. */
const char *policy_pair_kv(struct pctx *c, yaml_node_pair_t *pair, yaml_node_t **k, yaml_node_t **v);
/* A plain decimal number (-1 with the error naming key otherwise). */
int policy_get_number(struct pctx *c, const yaml_node_t *n, const char *key, double *out);
/* The `cluster:` section (policy_cluster.c): fills p->cluster; -1 with the error. */
int policy_parse_cluster(struct pctx *c, yaml_node_t *k, yaml_node_t *v, struct policy *p);

/*
 * The policy's flags against the run's: each reject_flags entry (failed,
 * passed or unmeasurable), then every critical flag not named there, which
 * fails unless tolerate_flags names its code (then listed in res
 * "tolerated" with the policy's reason).  Appends to res's lists.
 */
struct fprun;
void policy_eval_flags(const struct policy *p, struct fprun *r, const json_t *run_flags, json_t *res);

/*
 * Which of a rule's alternatives the run is judged on, and whether it can
 * be: the first alternative, or a later one only when the GPU model has no
 * path for the earlier one (a GEMM dtype without a peak in common/gpus.c).
 * Returns the metric row (value a finite number) with *name set; NULL when
 * the rule cannot be judged on this run, with *why set and *failed 1 when
 * the metric's bench failed (a failed check, not a missing figure).
 */
struct fp_metric;
const struct fp_metric *policy_rule_metric(const struct policy_rule *r, int gpu, struct fprun *fp, const char **name,
					   char *why, size_t whylen, int *failed);

/*
 * Each metric of r that has more than one row (same name and gpu, whatever
 * bench) folded in place into its first row at its worst value
 * (judge/metric_dups.c); how many were folded.
 */
size_t policy_fold_duplicates(struct fprun *r);

#endif
