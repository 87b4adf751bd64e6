/* standing.c - see standing.h: a run's verdict word under one policy, earned or previewed. */
#include "judge/standing.h"
#include "judge/accept.h"
#include "judge/policy.h"
#include "results/fprun.h"
#include "common/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *orempty(const char *s)
{
	return s ? s : "";
}

int standing_verdict_is_of(const struct fp_verdict *v, const char *digest)
{
	const char *d = orempty(v->digest);
	return digest && *d && !strcmp(d, digest) && !v->imported;
}

const char *standing_words(enum standing_kind k)
{
	switch (k) {
	case STANDING_NO_GPU: return "no GPU measured";
	case STANDING_ACCEPTED: return "accepted";
	case STANDING_REJECTED: return "rejected";
	case STANDING_UNMEASURABLE: return "unmeasurable";
	case STANDING_WOULD_ACCEPT: return "would be accepted";
	case STANDING_WOULD_REJECT: return "would be rejected";
	case STANDING_WOULD_UNMEASURABLE: return "would be unmeasurable";
	}
	return "?";
}

/* The newest verdict of the policy with this digest recorded here, or NULL (verdicts are oldest first). */
static const struct fp_verdict *own_verdict(const struct fprun *r, const char *digest, int *others)
{
	const struct fp_verdict *last = NULL;
	*others = 0;
	for (size_t i = 0; i < r->nverdicts; i++) {
		const struct fp_verdict *v = &r->verdicts[i];
		if (!standing_verdict_is_of(v, digest))
			++*others;
		else if (!last || strcmp(orempty(v->at), orempty(last->at)) >= 0)
			last = v;
	}
	return last;
}

/* Why the run measured no GPU: the inventory's error, else the gemm bench's skip reason. */
static void no_gpu_reason(const struct fprun *r, char *buf, size_t size)
{
	const char *e = orempty(r->inv.gpu_error);
	for (size_t i = 0; !*e && i < r->nbenches; i++)
		if (r->benches[i].name && !strcmp(r->benches[i].name, "gemm") && r->benches[i].reason &&
		    *r->benches[i].reason)
			e = r->benches[i].reason;
	snprintf(buf, size, "%s", *e ? e : "no GPU visible");
}

/*
 * The policy's verdict on r as a preview.  policy_evaluate_run() folds r's duplicate rows in
 * place; the caller's run is put back as it was (a preview changes nothing the caller reads next).
 */
static enum policy_verdict preview(const struct policy *p, struct fprun *r, json_t **detail)
{
	size_t n = r->nmetrics;
	struct fp_metric *saved = n ? gv_malloc(n * sizeof *saved) : NULL;
	if (n)
		memcpy(saved, r->metrics, n * sizeof *saved);
	enum policy_verdict v = policy_evaluate_run(p, r, NULL, 0, NULL, detail);
	if (r->nmetrics != n) {   /* rows were folded: the first of each stands for all, the rest dropped */
		memcpy(r->metrics, saved, n * sizeof *saved);
		r->nmetrics = n;
		fprun_reindex(r);
	}
	free(saved);
	return v;
}

int standing_of(const struct policy *p, struct fprun *r, struct standing *out)
{
	struct policy *builtin = NULL;
	char err[256];
	memset(out, 0, sizeof *out);
	if (!p) {
		if (policy_load(NULL, &builtin, err, sizeof err))
			return -1;
		p = builtin;
	}
	out->verdict = own_verdict(r, p->digest, &out->other_verdicts);
	if (out->verdict)   /* the verdict's checks, parsed once (the judge's own object) */
		out->detail = json_loads(orempty(out->verdict->detail), JSON_DECODE_ANY, NULL);
	if (r->d.ngpu == 0 && r->inv.ngpus == 0) {   /* before any verdict: no GPU policy's word fits a run without one */
		out->kind = STANDING_NO_GPU;
		no_gpu_reason(r, out->reason, sizeof out->reason);
	} else if (out->verdict) {
		const char *v = orempty(out->verdict->verdict);
		out->kind = !strcmp(v, "accept") ? STANDING_ACCEPTED : !strcmp(v, "reject") ? STANDING_REJECTED :
			    STANDING_UNMEASURABLE;
		accept_reason_sentence(out->detail, v, out->reason, sizeof out->reason);
	} else {
		enum policy_verdict pv = preview(p, r, &out->detail);
		out->kind = pv == POLICY_ACCEPT ? STANDING_WOULD_ACCEPT : pv == POLICY_REJECT ? STANDING_WOULD_REJECT :
			    STANDING_WOULD_UNMEASURABLE;
		accept_reason_sentence(out->detail, policy_verdict_name(pv), out->reason, sizeof out->reason);
	}
	policy_free(builtin);
	return 0;
}

void standing_free(struct standing *st)
{
	json_decref(st->detail);
	st->detail = NULL;
}
