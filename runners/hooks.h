/*
 * hooks.h - what `gpuvet run` does after the benches: compute and store the
 * flags, write the report, apply the acceptance policy.  One place that
 * ties the run to flags.c, reports/ and policy.c.
 */
#ifndef GPUVET_HOOKS_H
#define GPUVET_HOOKS_H

#include <stdint.h>
#include <stdio.h>
#include <jansson.h>

struct store;

/*
 * Computes the run's flags from its fingerprint and stores them (replacing
 * any); returns them (new reference, NULL when the run could not be read)
 * for hooks_accept, so a run's flags are computed once.  *failed is 1 when
 * they could not be stored (message printed): the run's exit code says it.
 */
json_t *hooks_after_run(struct store *s, int64_t run_id, int *failed);
/* Writes the HTML report of the store to path; 0 or -1 (message printed). */
int hooks_report(struct store *s, int64_t run_id, const char *path);
/* Gates the run; returns the exit code (0 accept, 1 reject, 3 unmeasurable, 2 error). */
int hooks_accept(struct store *s, int64_t run_id, const char *policy_path, const json_t *flags, FILE *out);

#endif
