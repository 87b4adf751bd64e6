/*
 * test_gate.c - the acceptance gate fails closed (issue 34): every flag code
 * the judge can raise rejects in its critical form under the default policy
 * (a new code can never be silently tolerated); a tolerated flag needs a
 * reason and is named in the verdict; the built-in's name is reserved and a
 * verdict is keyed by the policy text's digest; a rule is never judged on an
 * alternative past a failed bench or a null value; the fleet baseline holds
 * only runs accepted here by the same policy text; a gpu_count that
 * disagrees with the inventory is not measured; two rows of one metric are
 * judged at the worst.
 */
#include "judge/policy.h"
#include "judge/flags.h"
#include "tests/unit/t.h"
#include "tests/unit/fixture_t.h"

#include <jansson.h>
#include <stdlib.h>

static json_t *clean(void)
{
	json_t *fp = t_load("tests/fixtures/flags/", "clean.json");
	if (!fp)
		return json_object();
	/* what the default policy also needs: the memcpy rows, at good values */
	json_array_append_new(json_object_get(fp, "benches"),
		json_pack("{s:s,s:s,s:n,s:f,s:{}}", "name", "memcpy", "status", "ok", "reason", "duration_s", 5.0, "config"));
	json_array_append_new(json_object_get(fp, "metrics"),
		json_pack("{s:s,s:s,s:i,s:f,s:s,s:{}}", "bench", "memcpy", "name", "memcpy.h2d.pinned.gbps", "gpu", -1,
			  "value", 55.0, "unit", "GB/s", "params"));
	json_array_append_new(json_object_get(fp, "metrics"),
		json_pack("{s:s,s:s,s:i,s:f,s:s,s:{}}", "bench", "memcpy", "name", "memcpy.h2d.pct_of_link", "gpu", -1,
			  "value", 87.0, "unit", "%", "params"));
	return fp;
}

static struct policy *parse(const char *text, char *err, size_t errlen)
{
	struct policy *p = NULL;
	if (policy_parse(text, strlen(text), "p.yaml", &p, err, errlen))
		return NULL;
	return p;
}

static int listed(const json_t *res, const char *list, const char *key, const char *what)
{
	size_t i;
	json_t *e;
	json_array_foreach(json_object_get(res, list), i, e) {
		const char *v = json_string_value(json_object_get(e, key));
		if (v && !strcmp(v, what))
			return 1;
	}
	return 0;
}

static json_t *one_flag(const char *code, const char *severity)
{
	return json_pack("[{s:s,s:s,s:s,s:{s:i}}]", "code", code, "severity", severity, "message", "synthetic",
			 "evidence", "gpu", 0);
}

/* Every code the judge can raise, in its critical form: the default policy rejects, naming it. */
static void test_every_flag_code_rejects_when_critical(void)
{
	struct policy *p = NULL;
	char err[256];
	CHECK(policy_load(NULL, &p, err, sizeof err) == 0);
	json_t *fp = clean(), *res, *none = json_array();
	CHECK(policy_evaluate_flags(p, fp, NULL, none, &res) == POLICY_ACCEPT);   /* the baseline accepts */
	json_decref(res);
	int n = 0;
	for (int i = 0; flag_rows[i].code; i++, n++) {
		json_t *fl = one_flag(flag_rows[i].code, "critical");
		enum policy_verdict v = policy_evaluate_flags(p, fp, NULL, fl, &res);
		if (v != POLICY_REJECT || !listed(res, "failed", "flag", flag_rows[i].code))
			fprintf(stderr, "critical %s: verdict %s, want reject\n", flag_rows[i].code, policy_verdict_name(v));
		CHECK(v == POLICY_REJECT);
		CHECK(listed(res, "failed", "flag", flag_rows[i].code));
		CHECK(json_array_size(json_object_get(res, "tolerated")) == 0);
		json_decref(res);
		json_decref(fl);
	}
	CHECK(n >= 21);   /* the rows of judge/flags_table.c flag_rows[] (21 as of issue 34) */
	/* the default tolerates nothing */
	CHECK(p->ntolerated == 0);
	/* a stored critical flag of a code this binary does not know (an import) rejects too */
	json_object_set_new(fp, "flags", one_flag("FROM_THE_FUTURE", "critical"));
	CHECK(policy_evaluate_flags(p, fp, NULL, none, &res) == POLICY_REJECT);
	CHECK(listed(res, "failed", "flag", "FROM_THE_FUTURE"));
	json_decref(res);
	json_decref(none);
	json_decref(fp);
	policy_free(p);
}

static void test_tolerated_flag_needs_a_reason_and_is_named(void)
{
	char err[256];
	struct policy *p = parse("name: lab\nrules: [{metric: gemm.bf16.tflops, gpu: each, min: 100}]\n"
				 "tolerate_flags: [{code: CPU_STEAL, reason: a shared lab host}]\n", err, sizeof err);
	CHECK(p != NULL);
	if (!p)
		return;
	json_t *fp = clean(), *res, *fl = one_flag("CPU_STEAL", "critical");
	CHECK(policy_evaluate_flags(p, fp, NULL, fl, &res) == POLICY_ACCEPT);
	CHECK(listed(res, "tolerated", "flag", "CPU_STEAL"));
	CHECK(listed(res, "tolerated", "reason", "a shared lab host"));
	json_decref(res);
	json_decref(fl);
	/* another critical flag still rejects under the same policy */
	fl = one_flag("DATA_CORRUPTION", "critical");
	CHECK(policy_evaluate_flags(p, fp, NULL, fl, &res) == POLICY_REJECT);
	json_decref(res);
	json_decref(fl);
	json_decref(fp);
	policy_free(p);
	CHECK(!parse("rules: [{metric: gemm.bf16.tflops, min: 1}]\ntolerate_flags: [{code: CPU_STEAL}]\n", err, sizeof err));
	CHECK(strstr(err, "line 2") && strstr(err, "reason"));
	CHECK(!parse("rules: [{metric: gemm.bf16.tflops, min: 1}]\ntolerate_flags: [CPU_STEAL]\n", err, sizeof err));
	CHECK(!parse("rules: [{metric: gemm.bf16.tflops, min: 1}]\ntolerate_flags: [{code: NOPE, reason: why not}]\n",
		     err, sizeof err));
	CHECK(strstr(err, "unknown flag 'NOPE'"));
	CHECK(!parse("reject_flags: [XID]\ntolerate_flags: [{code: XID, reason: always fine}]\n", err, sizeof err));
	CHECK(strstr(err, "both in reject_flags"));
}

static void test_builtin_name_is_reserved_and_verdicts_keyed_by_digest(void)
{
	char err[256], d[POLICY_DIGEST_LEN];
	struct policy *p = NULL, *q;
	const char *t = policy_default_text();
	CHECK(policy_load(NULL, &p, err, sizeof err) == 0);
	policy_digest_of(t, strlen(t), d);
	CHECK_STR(p->digest, d);
	CHECK(!strncmp(p->digest, "sha256:", 7) && strlen(p->digest) == 71);
	/* a byte-identical copy is the built-in (same digest, so the same verdict) */
	CHECK((q = parse(t, err, sizeof err)) != NULL);
	if (q)
		CHECK_STR(q->digest, p->digest);
	policy_free(q);
	/* an edited copy that kept the name is refused, naming the line */
	char *edited = malloc(strlen(t) + 64);
	snprintf(edited, strlen(t) + 64, "%s  - metric: gemm.bf16.tflops\n", t);
	char *cut = strstr(edited, "reject_flags:");
	if (cut)
		memcpy(cut, "# ject_flag:", 12);   /* no longer the built-in's text */
	CHECK(!parse(edited, err, sizeof err));
	CHECK(strstr(err, "'name' default is the built-in policy's"));
	free(edited);
	CHECK(!parse("name: default\nrules: [{metric: gemm.bf16.tflops, min: 100}]\n", err, sizeof err));
	CHECK(strstr(err, "line 1"));
	/* two policies of the same name but other text have other digests */
	struct policy *a = parse("name: smoke\nrules: [{metric: gemm.bf16.tflops, min: 100}]\n", err, sizeof err);
	struct policy *b = parse("name: smoke\nrules: [{metric: gemm.bf16.tflops, min: 101}]\n", err, sizeof err);
	CHECK(a && b && strcmp(a->digest, b->digest));
	policy_free(a);
	policy_free(b);
	policy_free(p);
}

static json_t *metric_row(json_t *fp, const char *name, int gpu)
{
	size_t i;
	json_t *m;
	json_array_foreach(json_object_get(fp, "metrics"), i, m)
		if (!strcmp(json_string_value(json_object_get(m, "name")), name) &&
		    json_integer_value(json_object_get(m, "gpu")) == gpu)
			return m;
	return NULL;
}

/* clean.json's bf16 rows renamed fp16 (as if only fp16 was reported), the gemm bench's status as given. */
static json_t *fp16_only(const char *gemm_status)
{
	json_t *fp = clean(), *m;
	size_t i;
	json_array_foreach(json_object_get(fp, "metrics"), i, m)
		if (!strcmp(json_string_value(json_object_get(m, "name")), "gemm.bf16.tflops"))
			json_object_set_new(m, "name", json_string("gemm.fp16.tflops"));
	json_array_foreach(json_object_get(fp, "benches"), i, m)
		if (!strcmp(json_string_value(json_object_get(m, "name")), "gemm")) {
			json_object_set_new(m, "status", json_string(gemm_status));
			json_object_set_new(m, "reason", json_string("bf16 result differs from the reference"));
		}
	return fp;
}

static void test_no_fallback_past_a_failure(void)
{
	struct policy *p = NULL;
	char err[256];
	json_t *res, *none = json_array();
	CHECK(policy_load(NULL, &p, err, sizeof err) == 0);
	/* H100 has BF16: a failed gemm bench is a failed check, never judged on the FP16 rows left behind */
	json_t *fp = fp16_only("failed");
	CHECK(policy_evaluate_flags(p, fp, NULL, none, &res) == POLICY_REJECT);
	CHECK(listed(res, "failed", "kind", "bench") && listed(res, "failed", "metric", "gemm.bf16.tflops"));
	CHECK(!listed(res, "passed", "metric", "gemm.fp16.tflops"));
	json_decref(res);
	json_decref(fp);
	/* a timed-out bench: not measured */
	fp = fp16_only("timed_out");
	CHECK(policy_evaluate_flags(p, fp, NULL, none, &res) == POLICY_UNMEASURABLE);
	json_decref(res);
	json_decref(fp);
	/* bench ok but BF16 missing on a model that has it: not measured, not judged on FP16 */
	fp = fp16_only("ok");
	CHECK(policy_evaluate_flags(p, fp, NULL, none, &res) == POLICY_UNMEASURABLE);
	CHECK(listed(res, "unmeasurable", "metric", "gemm.bf16.tflops"));
	json_decref(res);
	json_decref(fp);
	/* a null value is not a measurement, and no alternative stands in for it */
	fp = clean();
	json_object_set_new(metric_row(fp, "gemm.bf16.tflops", 0), "value", json_null());
	CHECK(policy_evaluate_flags(p, fp, NULL, none, &res) == POLICY_UNMEASURABLE);
	CHECK(strstr(json_string_value(json_object_get(json_array_get(json_object_get(res, "unmeasurable"), 0),
							"reason")), "null"));
	json_decref(res);
	json_decref(fp);
	json_decref(none);
	policy_free(p);
}

static json_t *member(const char *uuid, double tflops, const char *digest, int imported, const char *verdict)
{
	json_t *fp = clean();
	json_object_set_new(metric_row(fp, "gemm.bf16.tflops", 0), "value", json_real(tflops));
	json_object_set_new(json_object_get(fp, "run"), "uuid", json_string(uuid));
	json_array_append_new(json_object_get(fp, "verdicts"),
		json_pack("{s:s,s:s,s:s,s:{},s:s,s:b}", "verdict", verdict, "policy", "default", "at",
			  "2026-11-21T00:00:00Z", "detail", "policy_digest", digest, "imported", imported));
	return fp;
}

static void test_fleet_is_the_runs_this_policy_accepted_here(void)
{
	struct policy *p = NULL;
	char err[256];
	CHECK(policy_load(NULL, &p, err, sizeof err) == 0);
	json_t *fleet = json_array(), *res;
	/* poison: five low runs accepted by another policy text, or imported with this one's digest */
	for (int i = 0; i < 3; i++) {
		char u[8];
		snprintf(u, sizeof u, "o%d", i);
		json_array_append_new(fleet, member(u, 600, "sha256:other", 0, "accept"));
		snprintf(u, sizeof u, "i%d", i);
		json_array_append_new(fleet, member(u, 600, p->digest, 1, "accept"));
	}
	json_t *fp = clean();
	json_object_set_new(metric_row(fp, "gemm.bf16.tflops", 0), "value", json_real(660));
	CHECK(policy_evaluate(p, fp, fleet, &res) == POLICY_ACCEPT);
	CHECK(json_array_size(json_object_get(res, "fleet")) == 0);   /* no baseline: fewer than 3 runs */
	json_decref(res);
	/* three runs accepted here by this policy: the baseline, named run by run */
	json_array_append_new(fleet, member("a", 740, p->digest, 0, "accept"));
	json_array_append_new(fleet, member("b", 750, p->digest, 0, "accept"));
	json_array_append_new(fleet, member("c", 760, p->digest, 0, "accept"));
	json_array_append_new(fleet, member("r", 100, p->digest, 0, "reject"));
	CHECK(policy_evaluate(p, fp, fleet, &res) == POLICY_REJECT);   /* 660 < 0.9 x 750 */
	json_t *fs = json_array_get(json_object_get(res, "fleet"), 0);
	CHECK(json_integer_value(json_object_get(fs, "runs")) == 3);
	CHECK(json_array_size(json_object_get(fs, "baseline_runs")) == 3);
	CHECK(listed(fs, "baseline_runs", "uuid", "a") && !listed(fs, "baseline_runs", "uuid", "o0") &&
	      !listed(fs, "baseline_runs", "uuid", "i0") && !listed(fs, "baseline_runs", "uuid", "r"));
	json_decref(res);
	json_decref(fp);
	json_decref(fleet);
	policy_free(p);
}

/* Two rows of one metric: the worst is judged, whichever comes first (judge/metric_dups.c). */
static void test_duplicate_rows_are_judged_at_their_worst(void)
{
	struct policy *p = NULL;
	char err[256];
	CHECK(policy_load(NULL, &p, err, sizeof err) == 0);
	json_t *none = json_array(), *res;
	for (int order = 0; order < 2; order++) {
		json_t *fp = clean(), *bad = json_copy(metric_row(fp, "gemm.bf16.tflops", 0));
		json_object_set_new(bad, "value", json_real(300));   /* under 0.75 x the H100's reference */
		if (order)
			json_array_insert_new(json_object_get(fp, "metrics"), 0, bad);
		else
			json_array_append_new(json_object_get(fp, "metrics"), bad);
		CHECK(policy_evaluate_flags(p, fp, NULL, none, &res) == POLICY_REJECT);
		CHECK(listed(res, "failed", "metric", "gemm.bf16.tflops"));
		json_decref(res);
		/* a lower-is-better count: the highest row (5 mismatches) raises DATA_CORRUPTION */
		json_t *sdc = json_copy(metric_row(fp, "soak.sdc.mismatches", 0));
		json_object_set_new(sdc, "value", json_real(5));
		json_array_append_new(json_object_get(fp, "metrics"), sdc);
		CHECK(policy_evaluate(p, fp, NULL, &res) == POLICY_REJECT);
		CHECK(listed(res, "failed", "flag", "DATA_CORRUPTION"));
		json_decref(res);
		json_decref(fp);
	}
	/* a null beside a number: not measured */
	json_t *fp = clean(), *nul = json_copy(metric_row(fp, "gemm.bf16.tflops", 0));
	json_object_set_new(nul, "value", json_null());
	json_array_append_new(json_object_get(fp, "metrics"), nul);
	CHECK(policy_evaluate_flags(p, fp, NULL, none, &res) == POLICY_UNMEASURABLE);
	json_decref(res);
	json_decref(fp);
	json_decref(none);
	policy_free(p);
}

static void test_gpu_count_must_match_the_inventory(void)
{
	struct policy *p = NULL;
	char err[256];
	CHECK(policy_load(NULL, &p, err, sizeof err) == 0);
	json_t *fp = clean(), *res, *none = json_array();
	json_object_set_new(json_object_get(fp, "run"), "gpu_count", json_integer(8));
	CHECK(policy_evaluate_flags(p, fp, NULL, none, &res) == POLICY_UNMEASURABLE);
	CHECK(listed(res, "unmeasurable", "metric", "run.gpu_count"));
	json_decref(res);
	json_decref(none);
	json_decref(fp);
	policy_free(p);
}

/*
 * Issue 52: a better row of the same metric and GPU under another bench, first, hides nothing: the
 * rows are folded across the whole run (a stored run from before imports checked bench ownership).
 */
static void test_duplicates_under_other_benches_are_folded_too(void)
{
	struct policy *p = NULL;
	char err[256];
	CHECK(policy_load(NULL, &p, err, sizeof err) == 0);
	json_t *none = json_array(), *res, *fp = clean();
	json_object_set_new(metric_row(fp, "gemm.bf16.tflops", 0), "value", json_real(300));
	json_t *good = json_copy(metric_row(fp, "gemm.bf16.tflops", 0));
	json_object_set_new(good, "value", json_real(800));
	json_object_set_new(good, "bench", json_string("aaa"));
	json_array_insert_new(json_object_get(fp, "metrics"), 0, good);
	CHECK(policy_evaluate_flags(p, fp, NULL, none, &res) == POLICY_REJECT);
	CHECK(listed(res, "failed", "metric", "gemm.bf16.tflops"));
	json_decref(res);
	json_decref(fp);
	json_decref(none);
	policy_free(p);
}

TEST_MAIN(T(test_every_flag_code_rejects_when_critical), T(test_tolerated_flag_needs_a_reason_and_is_named),
	  T(test_builtin_name_is_reserved_and_verdicts_keyed_by_digest), T(test_no_fallback_past_a_failure),
	  T(test_fleet_is_the_runs_this_policy_accepted_here), T(test_gpu_count_must_match_the_inventory),
	  T(test_duplicate_rows_are_judged_at_their_worst), T(test_duplicates_under_other_benches_are_folded_too))
