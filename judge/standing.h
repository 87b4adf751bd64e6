/*
 * standing.h - where a run stands under one policy, in the words a person
 * reads first (the report's headline, `gpuvet run`'s summary): a verdict
 * word only where that policy's verdict was recorded here for the run;
 * otherwise what is true (no GPU measured, or the policy's verdict as a
 * preview, not recorded).  Decides nothing new: the verdict is the stored
 * one, the preview policy_evaluate_run()'s (without a fleet baseline).  It
 * reads the typed run (results/fprun.h) that derive() has derived: the GPU
 * count is the derived one, the verdicts the run's rows.
 */
#ifndef GPUVET_STANDING_H
#define GPUVET_STANDING_H

#include <jansson.h>
#include <stddef.h>

struct policy;
struct fprun;
struct fp_verdict;

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
	const struct fp_verdict *verdict;   /* the recorded verdict it stands on (borrowed from the run), or NULL */
	json_t *detail;           /* the checks (the judge's own object): the verdict's detail, parsed once, or the
				     preview's result; owned */
	int other_verdicts;       /* the run's verdicts not by this policy here (other policy, imported, no digest) */
	char reason[768];         /* accept_reason_sentence() of detail, or why no GPU was measured */
};

/*
 * Where the derived run r stands under p (p NULL: the built-in policy).  0, or -1 when the built-in
 * policy cannot load.  r is read, not changed (the preview's folding of duplicate rows is undone).
 */
int standing_of(const struct policy *p, struct fprun *r, struct standing *out);
void standing_free(struct standing *st);
/* True for a verdict recorded here by the policy with this digest (not imported, digest known). */
int standing_verdict_is_of(const struct fp_verdict *verdict, const char *digest);
/* "accepted", "rejected", "unmeasurable", "would be accepted" (a preview), ...: README "Words and units" */
const char *standing_words(enum standing_kind k);

#endif
