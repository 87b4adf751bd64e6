/*
 * standing.h - where a run stands under one policy, in the words a person
 * reads first (the report's headline, `gpuvet run`'s summary): a verdict
 * word only where that policy's verdict was recorded here for the run;
 * otherwise what is true (no GPU measured, or the policy's verdict as a
 * preview, not recorded).  Decides nothing new: the verdict is the stored
 * one, the preview policy_evaluate_flags()'s (without a fleet baseline).
 */
#ifndef GPUVET_STANDING_H
#define GPUVET_STANDING_H

#include <jansson.h>
#include <stddef.h>

struct policy;

enum standing_kind {
	STANDING_NO_GPU,          /* the run measured no GPU: nothing a GPU policy could judge */
	STANDING_ACCEPTED,        /* accepted here by this policy (a recorded, not imported, verdict) */
	STANDING_REJECTED,
	STANDING_UNMEASURABLE,
	STANDING_WOULD_ACCEPT,    /* not gated by this policy: its verdict, previewed, not recorded */
	STANDING_WOULD_REJECT,
	STANDING_WOULD_UNMEASURABLE,
};

struct standing {
	enum standing_kind kind;
	json_t *verdict;          /* the recorded verdict it stands on (borrowed from fp), or NULL */
	json_t *detail;           /* the checks: the verdict's detail or the preview's result (a reference) */
	int other_verdicts;       /* verdicts of fp not by this policy here (other policy, imported, no digest) */
	char reason[768];         /* accept_reason_sentence() of detail, or why no GPU was measured */
};

/* Where fp stands under p (p NULL: the built-in policy).  0, or -1 when the built-in policy cannot load. */
int standing_of(const struct policy *p, const json_t *fp, struct standing *out);
void standing_free(struct standing *st);
/* True for a verdict recorded here by the policy with this digest (not imported, digest known). */
int standing_verdict_is_of(const json_t *verdict, const char *digest);
/* "accepted", "rejected", "unmeasurable", "would be accepted" (a preview), ...: README "Words and units" */
const char *standing_words(enum standing_kind k);

#endif
