/* standing.c - see standing.h: a run's verdict word under one policy, earned or previewed. */
#include "judge/standing.h"
#include "judge/accept.h"
#include "judge/policy.h"
#include "results/fpq.h"

#include <stdio.h>
#include <string.h>

static const char *jstr(const json_t *o, const char *k)
{
	const char *v = json_string_value(json_object_get(o, k));
	return v ? v : "";
}

int standing_verdict_is_of(const json_t *v, const char *digest)
{
	const char *d = jstr(v, "policy_digest");
	return digest && *d && !strcmp(d, digest) && !json_is_true(json_object_get(v, "imported"));
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
static json_t *own_verdict(const json_t *fp, const char *digest, int *others)
{
	json_t *vs = json_object_get(fp, "verdicts"), *last = NULL, *v;
	size_t i;
	*others = 0;
	json_array_foreach(vs, i, v) {
		if (!standing_verdict_is_of(v, digest))
			++*others;
		else if (!last || strcmp(jstr(v, "at"), jstr(last, "at")) >= 0)
			last = v;
	}
	return last;
}

/* Why the run measured no GPU: the inventory's error, else the first GPU bench's skip reason. */
static void no_gpu_reason(const json_t *fp, char *buf, size_t size)
{
	const char *e = jstr(json_object_get(fp, "inventory"), "gpu_error");
	const json_t *b;
	size_t i;
	if (!*e)
		json_array_foreach(json_object_get(fp, "benches"), i, b)
			if (!strcmp(jstr(b, "name"), "gemm") && *jstr(b, "reason")) {
				e = jstr(b, "reason");
				break;
			}
	snprintf(buf, size, "%s", *e ? e : "no GPU visible");
}

static int measured_no_gpu(const json_t *fp)
{
	return fpq_gpu_count(fp) == 0 && !json_array_size(fpq_gpus(fp));
}

int standing_of(const struct policy *p, const json_t *fp, struct standing *out)
{
	struct policy *builtin = NULL;
	char err[256];
	memset(out, 0, sizeof *out);
	if (!p) {
		if (policy_load(NULL, &builtin, err, sizeof err))
			return -1;
		p = builtin;
	}
	out->verdict = own_verdict(fp, p->digest, &out->other_verdicts);
	if (measured_no_gpu(fp)) {   /* before any verdict: none of a GPU policy's words fits a run without one */
		out->kind = STANDING_NO_GPU;
		no_gpu_reason(fp, out->reason, sizeof out->reason);
	} else if (out->verdict) {
		const char *v = jstr(out->verdict, "verdict");
		out->kind = !strcmp(v, "accept") ? STANDING_ACCEPTED : !strcmp(v, "reject") ? STANDING_REJECTED :
			    STANDING_UNMEASURABLE;
		out->detail = json_incref(json_object_get(out->verdict, "detail"));
		accept_reason_sentence(out->detail, v, out->reason, sizeof out->reason);
	} else {
		enum policy_verdict pv = policy_evaluate_flags(p, fp, NULL, NULL, &out->detail);
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
