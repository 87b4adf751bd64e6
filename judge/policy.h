/*
 * policy.h - acceptance policies: a YAML file (libyaml) of thresholds per
 * metric and flags that reject, evaluated against a fingerprint.  Format
 * and the built-in default: judge/policies/default.yaml and docs/acceptance.md
 * "Acceptance".  Parsing and evaluation are pure (no store): the caller
 * passes the fleet (fingerprints of other runs) when the policy asks for
 * fleet-relative thresholds.
 */
#ifndef GPUVET_POLICY_H
#define GPUVET_POLICY_H

#include <jansson.h>
#include <stddef.h>

#define POLICY_MAX_RULES       256
#define POLICY_MAX_ALTS        8    /* metric alternatives per rule */
#define POLICY_FLEET_MIN_RUNS  3    /* default fleet_min_runs */
#define POLICY_MAX_BYTES       (1 << 20)
#define POLICY_MAX_DEPTH       32      /* nesting of lists and mappings */

/* Outcome; the values are gpuvet's exit codes. */
enum policy_verdict { POLICY_ACCEPT = 0, POLICY_REJECT = 1, POLICY_UNMEASURABLE = 3 };

#define POLICY_GPU_EACH (-2)

struct policy_rule {
	int line;
	char *metrics[POLICY_MAX_ALTS];   /* the first present in the run is judged */
	int nmetrics;
	int gpu;                          /* -1 instance (default), POLICY_GPU_EACH, or an index */
	int optional;                     /* a missing metric is noted, not unmeasurable */
	int has_min, has_max, has_ref_min, has_fleet_min, has_fleet_max;
	double min, max, ref_min, fleet_min, fleet_max;
};

struct policy_flag {
	int line;
	char *code;
	int min_severity;                 /* gv_severity_rank() */
};

/* A critical flag the policy lets through, and why (tolerate_flags). */
struct policy_tolerate {
	int line;
	char *code;
	char *reason;
};

#define POLICY_DIGEST_LEN 72              /* "sha256:" + 64 hex digits + NUL */
#define POLICY_BUILTIN_NAME "default"     /* reserved: only the built-in text may carry it */

#include "judge/policy_cluster.h"   /* struct policy_cluster: the `cluster:` section's fabric rules */

struct policy {
	char *name;                       /* for display; the verdict's key is digest */
	char *source;                     /* file path, or "built-in" */
	char digest[POLICY_DIGEST_LEN];   /* sha256 of the policy's text, "sha256:<hex>" */
	int fleet_min_runs;
	struct policy_rule *rules;
	size_t nrules;
	struct policy_flag *flags;
	size_t nflags;
	struct policy_tolerate *tolerated;
	size_t ntolerated;
	struct policy_cluster cluster;    /* the fabric rules (line 0: the built-in default's) */
};

/*
 * Parses policy text.  On error returns -1 and writes "line N: what" (N
 * counted from 1) to err; the caller names the file.
 */
int policy_parse(const char *text, size_t len, const char *source, struct policy **out, char *err,
		 size_t errlen);
/* Reads and parses a file (path NULL: the built-in default); err as above, or the I/O error. */
int policy_load(const char *path, struct policy **out, char *err, size_t errlen);
void policy_free(struct policy *p);
/* The built-in default policy's text (same as judge/policies/default.yaml). */
const char *policy_default_text(void);
/* True when a rule has a fleet-relative threshold. */
int policy_needs_fleet(const struct policy *p);

/*
 * True when other's run is in fp's fleet: same SKU (the GPU model its devices
 * resolve to, fpq_gpu_ref, never a label;
 * GPU count, instance type when both know it), a different run, accepted
 * here (not an imported verdict) by the policy whose text has this digest,
 * and never rejected or left unmeasured by it.
 */
int policy_same_fleet(const json_t *fp, const json_t *other, const char *digest);
struct fprun;
int policy_same_fleet_run(const struct fprun *fp, const struct fprun *other, const char *digest);
/* The digest of a policy's text, "sha256:<64 hex>", into out[POLICY_DIGEST_LEN]. */
void policy_digest_of(const char *text, size_t len, char out[POLICY_DIGEST_LEN]);

/*
 * Judges fp.  fleet: an array of fingerprints (already filtered with
 * policy_same_fleet, or not: it is filtered again), or NULL.  *result gets
 * a new object: {"verdict","policy","source","run":{...},"failed":[...],
 * "unmeasurable":[...],"passed":[...],"notes":[...]}; each check carries
 * rule line, metric, gpu, value, unit, op, threshold and source.
 */
enum policy_verdict policy_evaluate(const struct policy *p, const json_t *fp, const json_t *fleet,
				    json_t **result);
/*
 * Same, with the run's flags as flags_compute() made them for this run
 * (so a run's flags are computed once: the harness computes, stores and
 * passes them); NULL: computed here from fp (a stored run may carry flags
 * of an older binary or of an import).  fp's stored flags count too.
 */
enum policy_verdict policy_evaluate_flags(const struct policy *p, const json_t *fp, const json_t *fleet,
					  const json_t *run_flags, json_t **result);

/*
 * Judges the typed run r (results/fprun.h) that derive() has derived, against
 * the fleet's runs (derived too; filtered here): what policy_evaluate_flags
 * does on a document, reading fields.  r's duplicate rows are folded to their
 * worst in place (judge/metric_dups.c).  policy_eval.c.
 */
enum policy_verdict policy_evaluate_run(const struct policy *p, struct fprun *r, struct fprun *const *fleet,
					size_t nfleet, const json_t *run_flags, json_t **result);

const char *policy_verdict_name(enum policy_verdict v);

#endif
