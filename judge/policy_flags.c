/*
 * policy_flags.c - a policy's flags (policy_int.h): reject_flags as
 * written, then fail closed.  A critical flag is a machine that must not be
 * put into service (docs/flags.md), so every critical flag rejects, whatever
 * its code and whichever family raised it (a code added later included),
 * unless the policy names it under tolerate_flags with a reason; a tolerated
 * one is listed in the verdict ("tolerated"), so the CLI and the report can
 * say the machine was accepted despite it.
 */
#include "judge/policy_int.h"
#include "judge/flags.h"
#include "results/fprun.h"
#include "common/crypto.h"

#include <stdio.h>
#include <string.h>

void policy_digest_of(const char *text, size_t len, char out[POLICY_DIGEST_LEN])
{
	uint8_t d[32];
	gv_sha256(text, len, d);
	memcpy(out, "sha256:", 7);
	for (int i = 0; i < 32; i++)
		snprintf(out + 7 + 2 * i, 3, "%02x", d[i]);
}

static int str_eq(const char *a, const char *b)
{
	return a && b && !strcmp(a, b);
}

static const char *fstr(const json_t *f, const char *k)
{
	return json_string_value(json_object_get(f, k));
}

static int flag_gpu(const json_t *f)
{
	json_t *g = json_object_get(json_object_get(f, "evidence"), "gpu");
	return json_is_integer(g) && json_integer_value(g) >= -1 && json_integer_value(g) < 4096 ?
	       (int)json_integer_value(g) : -1;
}

/* A failed check for flag f, with the threshold's source. */
static json_t *flag_failure(const json_t *f, int line, const char *src)
{
	char rbuf[256];
	const char *code = fstr(f, "code"), *sev = fstr(f, "severity"), *rem = fstr(f, "remediation");
	int gi = flag_gpu(f);
	if (!rem)
		rem = flags_remediation(code, sev, gi, rbuf, sizeof rbuf);
	return json_pack("{s:i,s:s,s:s,s:O?,s:I,s:s,s:s,s:O?,s:s}", "rule_line", line, "flag", code, "severity",
			 sev ? sev : "critical",
			 "message", json_object_get(f, "message"), "gpu", (json_int_t)gi, "kind", "flag", "source", src,
			 "evidence", json_object_get(f, "evidence"), "remediation", rem);
}

static void reject_flags(const struct policy *p, const json_t *const lists[2], struct fprun *fp, json_t *res)
{
	for (size_t i = 0; i < p->nflags; i++) {
		const struct policy_flag *pf = &p->flags[i];
		int hit = 0;
		char src[160];
		snprintf(src, sizeof src, "policy %s, reject_flags %s at %s or worse", p->name, pf->code,
			 gv_severity_name(pf->min_severity));
		for (int l = 0; l < 2 && !hit; l++) {
			size_t j;
			json_t *f;
			json_array_foreach(lists[l], j, f) {
				if (!str_eq(fstr(f, "code"), pf->code) ||
				    gv_severity_rank(fstr(f, "severity")) < pf->min_severity)
					continue;
				json_array_append_new(json_object_get(res, "failed"), flag_failure(f, pf->line, src));
				hit = 1;
			}
		}
		if (hit)
			continue;
		const char *why;
		if (flags_measurable_run(fp, pf->code, &why) == 1)
			json_array_append_new(json_object_get(res, "passed"),
				json_pack("{s:i,s:s,s:s,s:s}", "rule_line", pf->line, "flag", pf->code, "kind", "flag",
					  "source", src));
		else
			json_array_append_new(json_object_get(res, "unmeasurable"),
				json_pack("{s:i,s:s,s:s}", "rule_line", pf->line, "flag", pf->code, "reason", why));
	}
}

/* Whether res's list already holds this code on this GPU (a reject_flags entry caught it, or both lists had it). */
static int listed(const json_t *res, const char *list, const char *code, int gpu)
{
	size_t i;
	json_t *e;
	json_array_foreach(json_object_get(res, list), i, e)
		if (str_eq(fstr(e, "flag"), code) && json_integer_value(json_object_get(e, "gpu")) == gpu)
			return 1;
	return 0;
}

static const struct policy_tolerate *tolerated(const struct policy *p, const char *code)
{
	for (size_t i = 0; i < p->ntolerated; i++)
		if (str_eq(p->tolerated[i].code, code))
			return &p->tolerated[i];
	return NULL;
}

/* Every critical flag, known code or not, computed or stored: a failure unless tolerated. */
static void fail_closed(const struct policy *p, const json_t *const lists[2], json_t *res)
{
	for (int l = 0; l < 2; l++) {
		size_t j;
		json_t *f;
		json_array_foreach(lists[l], j, f) {
			const char *code = fstr(f, "code"), *sev = fstr(f, "severity");
			int gpu = flag_gpu(f);
			if (!code || (gv_severity_rank(sev) < GV_SEV_CRITICAL && gv_severity_rank(sev) >= 0) ||
			    listed(res, "failed", code, gpu) || listed(res, "tolerated", code, gpu))
				continue;   /* below critical; an unknown severity counts as critical */
			const struct policy_tolerate *t = tolerated(p, code);
			char src[256];
			if (t) {
				json_array_append_new(json_object_get(res, "tolerated"),
					json_pack("{s:i,s:s,s:s,s:O?,s:I,s:s,s:s}", "rule_line", t->line, "flag", code,
						  "severity", sev ? sev : "?", "message", json_object_get(f, "message"),
						  "gpu", (json_int_t)gpu, "reason", t->reason, "policy", p->name));
				continue;
			}
			snprintf(src, sizeof src, "policy %s: every critical flag rejects unless tolerate_flags names it "
				 "(fail closed, docs/acceptance.md)", p->name);
			json_array_append_new(json_object_get(res, "failed"), flag_failure(f, 0, src));
		}
	}
}

/* The run's stored flags (an import's derived ones and its claims) as the flags' JSON shape. */
static json_t *stored_flags(const struct fprun *r)
{
	json_t *a = json_array();
	for (size_t i = 0; i < r->nflags; i++) {
		const struct fp_flag *f = &r->flags[i];
		json_t *ev = f->evidence ? json_loads(f->evidence, 0, NULL) : NULL;
		json_array_append_new(a, json_pack("{s:s?,s:s?,s:s?,s:o,s:s?}", "code", f->code, "severity", f->severity,
						   "message", f->message, "evidence", ev ? ev : json_object(), "remediation",
						   f->remediation));
	}
	return a;
}

void policy_eval_flags(const struct policy *p, struct fprun *fp, const json_t *run_flags, json_t *res)
{
	json_t *computed = run_flags ? json_incref((json_t *)run_flags) : flags_compute_run(fp);
	json_t *stored = stored_flags(fp);
	const json_t *lists[2] = { computed, stored };
	reject_flags(p, lists, fp, res);
	fail_closed(p, lists, res);
	json_decref(computed);
	json_decref(stored);
}
