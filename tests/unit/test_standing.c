/*
 * test_standing.c - where a run stands (judge/standing.h), read from the typed
 * run: the newest verdict recorded here by the policy (not an imported one, not
 * another policy's), its detail parsed once; no GPU from the derived count with
 * the inventory's error or the gemm bench's reason; a preview leaves the run's
 * rows as they were (the judge folds duplicates to their worst, the caller's
 * run keeps both).
 */
#include "judge/standing.h"
#include "judge/policy.h"
#include "judge/derive.h"
#include "results/fprun.h"
#include "tests/unit/t.h"
#include "tests/unit/fixture_t.h"

#include <jansson.h>
#include <stdlib.h>

static json_t *clean(void)
{
	json_t *fp = t_load("tests/fixtures/flags/", "clean.json");
	if (!fp)
		return json_object();
	return fp;
}

static json_t *verdict(const char *word, const char *digest, const char *at, int imported)
{
	return json_pack("{s:s,s:s,s:s,s:s,s:s,s:b,s:{s:[],s:[],s:[],s:[]}}", "verdict", word, "policy", "p",
			 "policy_digest", digest, "policy_source", "built-in", "at", at, "imported", imported, "detail",
			 "failed", "unmeasurable", "passed", "tolerated");
}

/* The newest of this policy's own verdicts stands; imported and other policies' are history. */
static void test_the_newest_own_verdict_stands(void)
{
	struct policy *p = NULL;
	char err[256];
	struct standing st;
	CHECK(policy_load(NULL, &p, err, sizeof err) == 0);
	json_t *fp = clean(), *vs = json_object_get(fp, "verdicts");
	json_array_append_new(vs, verdict("reject", p->digest, "2026-11-22T00:00:00Z", 0));
	json_array_append_new(vs, verdict("accept", p->digest, "2026-11-23T00:00:00Z", 0));
	json_array_append_new(vs, verdict("reject", p->digest, "2026-11-24T00:00:00Z", 1));   /* imported */
	json_array_append_new(vs, verdict("reject", "0123abcd", "2026-11-25T00:00:00Z", 0));  /* another policy */
	struct fprun *r = derive_from_json(fp);
	CHECK(r && standing_of(p, r, &st) == 0);
	CHECK(st.kind == STANDING_ACCEPTED && st.other_verdicts == 2);
	CHECK(st.verdict && !strcmp(st.verdict->at, "2026-11-23T00:00:00Z"));
	CHECK(json_is_array(json_object_get(st.detail, "passed")));   /* the verdict's detail, parsed */
	CHECK(standing_verdict_is_of(&r->verdicts[1], p->digest) && !standing_verdict_is_of(&r->verdicts[2], p->digest) &&
	      !standing_verdict_is_of(&r->verdicts[3], p->digest) && !standing_verdict_is_of(&r->verdicts[0], NULL));
	standing_free(&st);
	fprun_free(r);
	json_decref(fp);
	policy_free(p);
}

/* No GPU in the inventory and no row of one: the inventory's error, else the gemm bench's reason. */
static void test_no_gpu_says_why(void)
{
	struct standing st;
	json_t *fp = clean(), *inv = json_object_get(fp, "inventory");
	json_object_set_new(inv, "gpus", json_array());
	json_object_del(json_object_get(fp, "run"), "gpu_count");
	json_object_set_new(fp, "metrics", json_array());
	json_object_set_new(fp, "samples", json_array());
	json_object_set_new(json_array_get(json_object_get(fp, "benches"), 0), "reason", json_string("no gpu visible: x"));
	struct fprun *r = derive_from_json(fp);
	CHECK(r && standing_of(NULL, r, &st) == 0);
	CHECK(st.kind == STANDING_NO_GPU);
	CHECK_STR(st.reason, "no gpu visible: x");
	standing_free(&st);
	fprun_free(r);
	json_object_set_new(inv, "gpu_error", json_string("nvidia driver not found"));
	r = derive_from_json(fp);
	CHECK(r && standing_of(NULL, r, &st) == 0);
	CHECK(st.kind == STANDING_NO_GPU);
	CHECK_STR(st.reason, "nvidia driver not found");
	standing_free(&st);
	fprun_free(r);
	json_decref(fp);
}

/* A preview judges the worst of two rows, and the caller's run still has both, the first found first. */
static void test_a_preview_leaves_the_rows_as_they_were(void)
{
	struct standing st;
	json_t *fp = clean();
	json_array_append_new(json_object_get(fp, "metrics"),
		json_pack("{s:s,s:s,s:i,s:f,s:s,s:{}}", "bench", "gemm", "name", "gemm.bf16.tflops", "gpu", 0, "value",
			  100.0, "unit", "TFLOP/s", "params"));
	struct fprun *r = derive_from_json(fp);
	CHECK(r != NULL);
	size_t n = r->nmetrics;
	CHECK(standing_of(NULL, r, &st) == 0);
	CHECK(st.kind == STANDING_WOULD_REJECT && st.verdict == NULL);
	CHECK(strstr(st.reason, "gemm.bf16.tflops") != NULL);
	CHECK(r->nmetrics == n);
	const struct fp_metric *m = fprun_metric(r, "gemm.bf16.tflops", 0);
	CHECK(m && m->value == 720.0);
	standing_free(&st);
	fprun_free(r);
	json_decref(fp);
}

TEST_MAIN(T(test_the_newest_own_verdict_stands), T(test_no_gpu_says_why), T(test_a_preview_leaves_the_rows_as_they_were))
