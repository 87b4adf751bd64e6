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

struct policy;

/*
 * Computes the run's flags from its fingerprint fp and stores them
 * (replacing any, in one transaction), then sets them in fp as the store
 * holds them; returns them (new reference) for hooks_accept, so a run's
 * flags are computed once.  *failed is 1 when they could not be stored
 * (message printed): the run's exit code says it.
 */
json_t *hooks_after_run(struct store *s, int64_t run_id, json_t *fp, int *failed);
/*
 * An imported run judged as a measured one: its flags computed from its
 * stored fingerprint as run computes them, replacing the file's flags of
 * every code its evidence can judge (never trusted; a flag of a code it
 * cannot judge, without the soak or the inventory it needs, is kept: a claim
 * against the run), inside the caller's batch; 0, or -1 with the store's
 * message (the caller undoes its part).
 */
int hooks_imported_flags(struct store *s, int64_t run_id);
/* Writes the HTML report of the store to path, the run in detail from fp, every verdict by p (NULL: the
 * built-in policy; run --accept POLICY's); 0 or -1 (message printed). */
int hooks_report(struct store *s, int64_t run_id, json_t *fp, const char *path, const struct policy *p);
/* Gates the run with the policy parsed before it ran; the exit code (0 accept, 1 reject, 3 unmeasurable, 2 error). */
int hooks_accept(struct store *s, int64_t run_id, const struct policy *p, json_t *fp, const json_t *flags, FILE *out);

#endif
