/*
 * accept.h - the acceptance gate on a stored run: policy (policy.h) +
 * flags (flags.h) + fleet baseline from the store; the verdict is stored
 * with the run (store_put_verdict) and printed for a person or, with json,
 * as one JSON object.  Used by `gpuvet accept` and `gpuvet run --accept`.
 */
#ifndef GPUVET_ACCEPT_H
#define GPUVET_ACCEPT_H

#include <stdint.h>
#include <stdio.h>

struct store;

#include <jansson.h>

/*
 * Gates run_id with the policy file at policy_path (NULL: built-in
 * default).  run_flags: the flags the harness has just computed for the
 * run, or NULL to have the policy compute them.  Returns the exit code: 0 accept, 1 reject, 3 could not
 * measure what the policy requires, 2 bad policy or store error (one line
 * on stderr naming the file and line), including a verdict printed but not
 * recorded in the store.  picked: why this run (a plain `gpuvet accept`:
 * "the run stored last in this store"), said on the text output's first
 * line, or NULL.  *verdict, when not NULL, gets the recorded verdict's detail (a new reference,
 * NULL when none was recorded): the run and the policy are read once.
 */
int accept_run(struct store *s, int64_t run_id, const char *policy_path, const json_t *run_flags, int json,
	       const char *picked, FILE *out, json_t **verdict);

struct policy;
/*
 * The same on a policy and a fingerprint the caller already holds (`gpuvet
 * run`: each parsed or loaded once): the verdict is recorded in the store
 * and appended to fp's "verdicts" as a fingerprint loaded afterwards would
 * hold it.  The exit code as accept_run's.
 */
int accept_judge(struct store *s, int64_t run_id, const struct policy *p, json_t *fp, const json_t *run_flags,
		 int json, FILE *out);

/*
 * The same on the typed run (results/fprun.h) the caller loaded and derived
 * (judge/derive.h): what accept_run and accept_judge call.  *verdict, when not
 * NULL, gets the verdict's object once recorded (a new reference).
 */
struct fprun;
int accept_judge_run(struct store *s, int64_t run_id, const struct policy *p, struct fprun *r, const json_t *run_flags,
		     int json, FILE *out, json_t **verdict);

/*
 * After an upgrade from a store whose verdicts name no policy text (schema
 * 5 or older): judges again, with the built-in policy, every run an earlier
 * built-in judged and this one has not, in the order the store took them,
 * and says so once on stderr (accept_legacy.c).  Does nothing when there
 * are none; 0, or -1 when the built-in policy cannot be read.
 */
int accept_legacy_rebuild(struct store *s);

/*
 * A stored verdict's reason in one sentence, for the first line a person
 * reads (the CLI and the report's first screen): what failed first and
 * against what, or what could not be measured and why (one cause, however
 * many requirements it left unmeasured), or how many checks passed.  Writes
 * buf (plain text; the caller escapes it for its medium) and returns it.
 */
const char *accept_reason_sentence(const json_t *detail, const char *verdict, char *buf, size_t size);

#endif
