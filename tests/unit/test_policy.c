/*
 * test_policy.c - policy parsing (every malformed policy names its line)
 * and evaluation with known answers: the default policy on the synthetic
 * fingerprints of tests/fixtures/flags/, each rejecting rule alone,
 * missing metrics, fleet baselines.
 */
#include "judge/policy.h"
#include "judge/derive.h"
#include "results/fpq.h"
#include "common/gpus.h"
#include "tests/unit/t.h"
#include "tests/unit/fixture_t.h"

#include <jansson.h>
#include <stdlib.h>

#define FIXDIR "tests/fixtures/flags/"

static json_t *load(const char *file)
{
	return t_load(FIXDIR, file);
}

static void set_metric(json_t *fp, const char *name, int gpu, double v)
{
	size_t i;
	json_t *m;
	json_array_foreach(json_object_get(fp, "metrics"), i, m)
		if (!strcmp(json_string_value(json_object_get(m, "name")), name) &&
		    json_integer_value(json_object_get(m, "gpu")) == gpu) {
			json_object_set_new(m, "value", json_real(v));
			return;
		}
	json_array_append_new(json_object_get(fp, "metrics"),
		json_pack("{s:s,s:s,s:i,s:f,s:s,s:{}}", "bench", "memcpy", "name", name, "gpu", gpu, "value", v,
			  "unit", "x", "params"));
}

/* A fixture with what the default policy also needs (memcpy) at good values. */
static json_t *good(const char *file)
{
	json_t *fp = load(file);
	if (!fp)
		return NULL;
	json_array_append_new(json_object_get(fp, "benches"),
		json_pack("{s:s,s:s,s:n,s:f,s:{}}", "name", "memcpy", "status", "ok", "reason", "duration_s", 5.0, "config"));
	set_metric(fp, "memcpy.h2d.pinned.gbps", -1, 55.0);
	set_metric(fp, "memcpy.h2d.pct_of_link", -1, 87.0);
	return fp;
}

static struct policy *builtin(void)
{
	struct policy *p = NULL;
	char err[256];
	int rc = policy_load(NULL, &p, err, sizeof err);
	if (rc)
		fprintf(stderr, "default policy: %s\n", err);
	CHECK(rc == 0 && p);
	return p;
}

static enum policy_verdict eval(const struct policy *p, const json_t *fp, const json_t *fleet, json_t **res)
{
	json_t *r = NULL;
	enum policy_verdict v = policy_evaluate(p, fp, fleet, &r);
	CHECK(r);
	CHECK_STR(json_string_value(json_object_get(r, "verdict")), policy_verdict_name(v));
	if (res)
		*res = r;
	else
		json_decref(r);
	return v;
}

static int has_failed(const json_t *res, const char *what)
{
	size_t i;
	json_t *f;
	json_array_foreach(json_object_get(res, "failed"), i, f) {
		const char *fl = json_string_value(json_object_get(f, "flag"));
		const char *m = json_string_value(json_object_get(f, "metric"));
		if ((fl && !strcmp(fl, what)) || (m && !strcmp(m, what)))
			return 1;
	}
	return 0;
}

static int has_note(const json_t *res, const char *words)
{
	size_t i;
	json_t *n;
	json_array_foreach(json_object_get(res, "notes"), i, n)
		if (strstr(json_string_value(n), words))
			return 1;
	return 0;
}

static void test_default_parses(void)
{
	struct policy *p = builtin();
	if (!p)
		return;
	CHECK_STR(p->name, "default");
	CHECK_STR(p->source, "built-in");
	CHECK(p->nrules == 3);
	CHECK(p->nflags == 9);
	CHECK_STR(p->flags[8].code, "BELOW_FLOOR");
	CHECK(p->fleet_min_runs == 3);
	CHECK(p->rules[0].nmetrics == 2 && !strcmp(p->rules[0].metrics[1], "gemm.fp16.tflops"));
	CHECK(p->rules[0].gpu == POLICY_GPU_EACH && !p->rules[0].has_min);
	CHECK(p->rules[0].has_ref_min && p->rules[0].ref_min == 0.75 && p->rules[0].has_fleet_min);
	CHECK(policy_needs_fleet(p));
	policy_free(p);
}

static void test_every_metric_kind_is_known(void)
{
	/* the benches' rows, pattern rows, the harness's own metric, the host bench's */
	static const char *const ok[] = { "gemm.bf16.tflops", "gemm.fp8.pct_of_peak", "gemm.bf16.best_shape.tflops",
					  "memcpy.h2d.pct_of_link", "allreduce.busbw.gbps", "soak.throttle_s",
					  "nvme.randread.p99_us", "objstore.get.gbps", "host.cpu_steal.pct",
					  "host.decode.images_per_s_per_gpu" };
	for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
		char text[160], err[256] = "";
		struct policy *p = NULL;
		snprintf(text, sizeof text, "rules:\n  - metric: %s\n    min: 0\n", ok[i]);
		int rc = policy_parse(text, strlen(text), "t.yaml", &p, err, sizeof err);
		if (rc)
			fprintf(stderr, "%s: %s\n", ok[i], err);
		CHECK(rc == 0);
		policy_free(p);
	}
}

static void test_malformed_names_line(void)
{
	static const struct { const char *text; int line; const char *words; } cases[] = {
		{ "rules:\n  - metric: gemm.bf16.tflops\n    min: [1\n", 4, "" },                          /* yaml syntax */
		{ "name: x\nrules:\n  - metric: gemm.bf16.tflops\n    mni: 3\n", 4, "unknown rule key 'mni'" },
		{ "rules:\n  - metric: gemm.bf16.tflops\n    min: lots\n", 3, "must be a plain decimal number" },
		{ "reject_flags:\n  - THROTTLE_THERMAL\n  - THROTTLE_COSMIC\n", 3, "unknown flag 'THROTTLE_COSMIC'" },
		{ "reject_flags:\n  - {code: XID, severity: fatal}\n", 2, "severity must be" },
		{ "rules:\n  - metric: nvme.seqread.gbps\n    min_fraction_of_reference: 0.5\n", 2, "no reference" },
		{ "rules:\n  - metric: gemm.bf16.tflops\n", 2, "no threshold" },
		{ "rules:\n  - min: 3\n", 2, "without 'metric'" },
		{ "rules:\n  - metric: Gemm.BF16\n    min: 1\n", 2, "not a metric name" },
		{ "rules:\n  - metric: gemm.bf16.tflops\n    min: 5\n    max: 1\n", 2, "above max" },
		{ "rules: 7\n", 1, "must be a list" },
		{ "- 1\n- 2\n", 1, "a policy is a mapping" },
		{ "", 1, "empty policy" },
		{ "# only a comment\n", 1, "empty policy" },
		{ "name: x\n", 1, "neither rules nor reject_flags" },
		{ "name: x\nfleet_min_runs: 0\nrules:\n  - metric: gemm.bf16.tflops\n    min: 1\n", 2, "fleet_min_runs" },
		{ "rules:\n  - metric: gemm.bf16.tflops\n    min: 1\n    gpu: all\n", 4, "'gpu' must be" },
		{ "rules:\n  - metric: gemm.bf16.tflops\n    min: nan\n", 3, "must be a plain decimal number" },
		{ "rules:\n  - metric: gemm.bf16.tflops\n    min_fraction_of_fleet: -1\n", 3, "must be in" },
		{ "colour: blue\n", 1, "unknown key 'colour'" },
		{ "rules:\n  - metric: gemm.bf16.tflops\n    min: 1\n    optional: maybe\n", 4, "true or false" },
		{ "\t- bad\n", 1, "" },
		/* a typo in a metric name is an input error naming the name and its line, not "cannot measure" */
		{ "name: x\nrules:\n  - metric: gemm.bf16.tflop\n    min: 1\n", 3, "unknown metric 'gemm.bf16.tflop'" },
		{ "rules:\n  - metric: [gemm.bf16.pct_of_peak,\n        gemm.fp16.pct_of_peek]\n    min: 40\n", 3,
		  "unknown metric 'gemm.fp16.pct_of_peek'" },
		{ "rules:\n  - metric: a.b\n    min: 1\n", 2, "unknown metric 'a.b'" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct policy *p = (struct policy *)1;
		char err[256] = "", want[32];
		int rc = policy_parse(cases[i].text, strlen(cases[i].text), "t.yaml", &p, err, sizeof err);
		snprintf(want, sizeof want, "line %d: ", cases[i].line);
		if (rc != -1 || strncmp(err, want, strlen(want)) || !strstr(err, cases[i].words))
			fprintf(stderr, "case %zu: rc %d err '%s', want '%s...%s'\n", i, rc, err, want, cases[i].words);
		CHECK(rc == -1);
		CHECK(p == NULL);
		CHECK(!strncmp(err, want, strlen(want)));
		CHECK(strstr(err, cases[i].words) != NULL);
	}
}

static void test_custom_policy_forms(void)
{
	const char *text =
		"name: strict-h100\n"
		"fleet_min_runs: 2\n"
		"rules:\n"
		"  - metric: gemm.bf16.tflops\n"
		"    gpu: each\n"
		"    min: 600\n"
		"  - metric: soak.throttle_s\n"
		"    max: 0\n"
		"    optional: true\n"
		"reject_flags: [CPU_STEAL, {code: THROTTLE_POWER, severity: info}]\n";
	struct policy *p = NULL;
	char err[256];
	CHECK(policy_parse(text, strlen(text), "strict.yaml", &p, err, sizeof err) == 0);
	if (!p)
		return;
	CHECK_STR(p->name, "strict-h100");
	CHECK(p->rules[0].gpu == POLICY_GPU_EACH && p->rules[1].optional && p->nflags == 2);
	CHECK(p->flags[1].min_severity == 0 && p->flags[0].min_severity == 1);
	CHECK(!policy_needs_fleet(p));

	/* power cap at info level now rejects; the missing optional metric is a note */
	json_t *fp = good("power_cap_5s.json"), *res;
	CHECK(eval(p, fp, NULL, &res) == POLICY_REJECT);
	CHECK(has_failed(res, "THROTTLE_POWER"));
	CHECK(json_array_size(json_object_get(res, "notes")) == 1);
	json_decref(res);
	/* gpu: each: one GPU under 600 rejects, with its index */
	set_metric(fp, "gemm.bf16.tflops", 0, 599.0);
	json_t *flags = json_object_get(fp, "flags");
	(void)flags;
	CHECK(eval(p, fp, NULL, &res) == POLICY_REJECT);
	size_t i;
	json_t *f;
	int found = 0;
	json_array_foreach(json_object_get(res, "failed"), i, f)
		if (json_object_get(f, "metric") && json_integer_value(json_object_get(f, "gpu")) == 0 &&
		    json_number_value(json_object_get(f, "threshold")) == 600 &&
		    json_number_value(json_object_get(f, "value")) == 599)
			found = 1;
	CHECK(found);
	json_decref(res);
	json_decref(fp);
	policy_free(p);
}

static void test_default_accepts_clean(void)
{
	struct policy *p = builtin();
	json_t *fp = good("clean.json"), *res;
	CHECK(eval(p, fp, NULL, &res) == POLICY_ACCEPT);
	CHECK(json_array_size(json_object_get(res, "failed")) == 0);
	CHECK(json_array_size(json_object_get(res, "unmeasurable")) == 0);
	/* 3 absolute/reference/... checks + 8 flags passed at least */
	CHECK(json_array_size(json_object_get(res, "passed")) >= 10);
	json_decref(res);
	json_decref(fp);
	fp = good("clean_8gpu.json");
	CHECK(eval(p, fp, NULL, NULL) == POLICY_ACCEPT);
	json_decref(fp);
	policy_free(p);
}

/* Each rejecting rule of the default policy, alone. */
static void test_default_each_rule_alone(void)
{
	static const struct { const char *file; const char *fails; } rej[] = {
		{ "thermal_sw_3s.json", "THROTTLE_THERMAL" },
		{ "thermal_hw_1s.json", "THROTTLE_THERMAL" },
		{ "hw_slowdown_1s.json", "THROTTLE_HW" },
		{ "hw_power_brake_1s.json", "THROTTLE_HW" },
		{ "remap_pending.json", "ROW_REMAP_PENDING" },
		{ "retired_pages_pending.json", "ROW_REMAP_PENDING" },
		{ "ecc_uncorrected_1.json", "ECC_ERRORS" },
		{ "pcie_gen4_of_5.json", "PCIE_DOWNGRADE" },
		{ "pcie_x8_of_16.json", "PCIE_DOWNGRADE" },
		{ "xid_79.json", "XID" },
		/* not in reject_flags, but critical: every critical flag rejects (fail closed, issue 34) */
		{ "clock_decay_25.1pct.json", "CLOCK_DECAY" },
		{ "steal_20.json", "CPU_STEAL" },
		{ "foreign_and_dips.json", "CONTENTION" },
	};
	static const char *const ok[] = {
		"thermal_sw_2s.json", "power_cap_5s.json", "board_limit_5s.json", "ecc_aggregate_uncorrected.json",
		"ecc_corrected_100.json", "xid_13_app.json", "perf_decay_10.1pct.json", "foreign_only.json",
		"spread_and_steal.json", "vgpu.json", "mig.json", "sync_boost_idle.json",
		"pcie_one_low_sample.json",
	};
	struct policy *p = builtin();
	for (size_t i = 0; i < sizeof rej / sizeof rej[0]; i++) {
		json_t *fp = good(rej[i].file), *res;
		enum policy_verdict v = eval(p, fp, NULL, &res);
		if (rej[i].fails) {
			if (v != POLICY_REJECT || !has_failed(res, rej[i].fails))
				fprintf(stderr, "%s: verdict %s, want reject by %s\n", rej[i].file, policy_verdict_name(v),
					rej[i].fails);
			CHECK(v == POLICY_REJECT);
			CHECK(has_failed(res, rej[i].fails));
			CHECK(json_array_size(json_object_get(res, "failed")) == 1);
		} else {
			CHECK(v == POLICY_ACCEPT);
		}
		json_decref(res);
		json_decref(fp);
	}
	for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
		json_t *fp = good(ok[i]);
		enum policy_verdict v = eval(p, fp, NULL, NULL);
		if (v != POLICY_ACCEPT)
			fprintf(stderr, "%s: verdict %s, want accept\n", ok[i], policy_verdict_name(v));
		CHECK(v == POLICY_ACCEPT);
		json_decref(fp);
	}
	/* metric rules alone, at the edge: 0.75 of the H100's one reference (common/gpus.c), 0.1 under and on it */
	double href = 0;
	CHECK(gpu_reference_gemm("H100-SXM", GPU_BF16, &href, NULL, NULL) == 0);
	const struct { const char *metric; int gpu; double v; int rejects; } edge[] = {
		{ "gemm.bf16.tflops", 0, 0.75 * href - 0.1, 1 }, { "gemm.bf16.tflops", 0, 0.75 * href, 0 },
		{ "memcpy.h2d.pct_of_link", -1, 69.9, 1 }, { "memcpy.h2d.pct_of_link", -1, 70.0 + 1e-9, 0 },
	};
	for (size_t i = 0; i < sizeof edge / sizeof edge[0]; i++) {
		json_t *fp = good("clean.json"), *res;
		if (strstr(edge[i].metric, ".pct_of_")) {   /* gpuvet's own figure (judge/derive.h): the copy rate that makes it */
			double link = gpu_pcie_link_gbps(5, 16);
			set_metric(fp, "memcpy.h2d.pinned.gbps", 0, edge[i].v / 100 * link);
			set_metric(fp, "memcpy.h2d.pinned.gbps", -1, edge[i].v / 100 * link);
		} else {
			set_metric(fp, edge[i].metric, edge[i].gpu, edge[i].v);
		}
		enum policy_verdict v = eval(p, fp, NULL, &res);
		CHECK(v == (edge[i].rejects ? POLICY_REJECT : POLICY_ACCEPT));
		if (edge[i].rejects) {
			json_t *f = json_array_get(json_object_get(res, "failed"), 0);
			CHECK_STR(json_string_value(json_object_get(f, "metric")), edge[i].metric);
			CHECK_NEAR(json_number_value(json_object_get(f, "value")), edge[i].v, 1e-9);
			CHECK_STR(json_string_value(json_object_get(f, "op")), ">=");
			CHECK(strstr(json_string_value(json_object_get(f, "source")), "policy default, rule "));
			CHECK(json_integer_value(json_object_get(f, "gpu")) == edge[i].gpu);
		}
		json_decref(res);
		json_decref(fp);
	}
	policy_free(p);
}

static void test_fp16_alternative(void)
{
	/* a model without BF16 (the T4: common/gpus.c has no bf16 peak for it): the FP16 alternative is judged */
	struct policy *p = builtin();
	json_t *fp = good("clean.json"), *res;
	size_t i;
	json_t *m;
	json_object_set_new(json_object_get(fp, "run"), "gpu_model", json_string("T4"));
	json_array_foreach(json_object_get(json_object_get(fp, "inventory"), "gpus"), i, m) {   /* what a T4 shows */
		json_object_set_new(m, "name", json_string("Tesla T4"));
		json_object_set_new(m, "memory_bytes", json_integer(16106127360));
	}
	json_array_foreach(json_object_get(fp, "metrics"), i, m)
		if (!strcmp(json_string_value(json_object_get(m, "name")), "gemm.bf16.tflops"))
			json_object_set_new(m, "name", json_string("gemm.fp16.tflops"));
	set_metric(fp, "gemm.fp16.tflops", 0, 10.0);   /* < 0.75 x the T4's fp16 reference */
	CHECK(eval(p, fp, NULL, &res) == POLICY_REJECT);
	CHECK(has_failed(res, "gemm.fp16.tflops"));
	json_decref(res);
	json_decref(fp);
	policy_free(p);
}

static void test_unmeasurable(void)
{
	struct policy *p = builtin();
	/* memcpy never ran: neither its bench nor its rows */
	json_t *fp = load("clean.json"), *res;
	json_t *benches = json_object_get(fp, "benches"), *ms = json_object_get(fp, "metrics");
	for (size_t k = json_array_size(benches); k-- > 0;)
		if (!strcmp(json_string_value(json_object_get(json_array_get(benches, k), "name")), "memcpy"))
			json_array_remove(benches, k);
	for (size_t k = json_array_size(ms); k-- > 0;)
		if (!strcmp(json_string_value(json_object_get(json_array_get(ms, k), "bench")), "memcpy"))
			json_array_remove(ms, k);
	CHECK(eval(p, fp, NULL, &res) == POLICY_UNMEASURABLE);
	json_t *u = json_array_get(json_object_get(res, "unmeasurable"), 0);
	CHECK(u && strstr(json_string_value(json_object_get(u, "reason")), "memcpy did not run"));
	json_decref(res);
	json_decref(fp);
	/* soak skipped: throttle flags cannot be judged */
	fp = good("clean.json");
	size_t i;
	json_t *b;
	json_array_foreach(json_object_get(fp, "benches"), i, b)
		if (!strcmp(json_string_value(json_object_get(b, "name")), "soak")) {
			json_object_set_new(b, "status", json_string("skipped"));
			json_object_set_new(b, "reason", json_string("no gpu"));
		}
	CHECK(eval(p, fp, NULL, &res) == POLICY_UNMEASURABLE);
	int thermal = 0;
	json_array_foreach(json_object_get(res, "unmeasurable"), i, b)
		if (json_object_get(b, "flag") && !strcmp(json_string_value(json_object_get(b, "flag")), "THROTTLE_THERMAL"))
			thermal = 1;
	CHECK(thermal);
	json_decref(res);
	/* a reject dominates: measured failure + unmeasurable = reject (a copy at 10 % of its link: judge/derive.h) */
	set_metric(fp, "memcpy.h2d.pinned.gbps", 0, 6.3);
	set_metric(fp, "memcpy.h2d.pinned.gbps", -1, 6.3);
	CHECK(eval(p, fp, NULL, NULL) == POLICY_REJECT);
	json_decref(fp);
	/* no GPU at all */
	fp = json_pack("{s:s,s:{s:[],s:s},s:[],s:[],s:[]}", "schema", "gpuvet.fingerprint/1", "inventory", "gpus",
		       "gpu_error", "no nvidia driver: libnvidia-ml.so.1 not found", "benches", "metrics", "samples");
	CHECK(eval(p, fp, NULL, &res) == POLICY_UNMEASURABLE);
	u = json_array_get(json_object_get(res, "unmeasurable"), 0);
	CHECK(u && strstr(json_string_value(json_object_get(u, "reason")), "no nvidia driver"));
	json_decref(res);
	json_decref(fp);
	policy_free(p);
}

/* A fleet member of the clean H100 fixture whose GPU 0 measured tflops of BF16 GEMM. */
static json_t *fleet_member(double tflops, const char *uuid, const char *verdict)
{
	json_t *fp = good("clean.json");
	set_metric(fp, "gemm.bf16.tflops", 0, tflops);
	json_object_set_new(json_object_get(fp, "run"), "uuid", json_string(uuid));
	char digest[POLICY_DIGEST_LEN];
	policy_digest_of(policy_default_text(), strlen(policy_default_text()), digest);
	json_array_append_new(json_object_get(fp, "verdicts"),
		json_pack("{s:s,s:s,s:s,s:{},s:s,s:b}", "verdict", verdict, "policy", "default", "at", "2026-11-21T00:00:00Z",
			  "detail", "policy_digest", digest, "imported", 0));
	return fp;
}

static void test_fleet_baseline(void)
{
	struct policy *p = builtin();
	json_t *fleet = json_array(), *res;
	json_array_append_new(fleet, fleet_member(740, "a", "accept"));
	json_array_append_new(fleet, fleet_member(750, "b", "accept"));
	json_array_append_new(fleet, fleet_member(200, "c", "reject"));   /* rejected: not in the baseline */
	json_t *fp = good("clean.json");
	set_metric(fp, "gemm.bf16.tflops", 0, 600);
	/* two accepted runs: fewer than fleet_min_runs, the fleet threshold is noted, not applied */
	CHECK(eval(p, fp, fleet, &res) == POLICY_ACCEPT);
	CHECK(json_array_size(json_object_get(res, "notes")) >= 1);
	json_decref(res);
	json_array_append_new(fleet, fleet_member(760, "d", "accept"));
	/* median 750 x 0.90 = 675 */
	set_metric(fp, "gemm.bf16.tflops", 0, 674.9);
	CHECK(eval(p, fp, fleet, &res) == POLICY_REJECT);
	json_t *f = json_array_get(json_object_get(res, "failed"), 0);
	CHECK_STR(json_string_value(json_object_get(f, "kind")), "fleet");
	CHECK_NEAR(json_number_value(json_object_get(f, "threshold")), 675, 1e-9);
	CHECK(strstr(json_string_value(json_object_get(f, "source")), "median 750 of 3 accepted run(s)"));
	json_decref(res);
	set_metric(fp, "gemm.bf16.tflops", 0, 675);
	CHECK(eval(p, fp, fleet, &res) == POLICY_ACCEPT);
	/* the fleet's run-to-run spread is measured and kept with the verdict: (760-740)/750 */
	json_t *fs = json_array_get(json_object_get(res, "fleet"), 0);
	CHECK(fs && json_integer_value(json_object_get(fs, "runs")) == 3);
	CHECK_NEAR(json_number_value(json_object_get(fs, "spread")), 2.0 / 75, 1e-9);
	CHECK(!has_note(res, "noise may reject"));   /* 10% margin > 3 x 2.7% */
	json_decref(res);
	/* a noisy fleet: the policy's margin is flagged as too tight */
	json_array_append_new(fleet, fleet_member(620, "e", "accept"));
	json_array_append_new(fleet, fleet_member(800, "f", "accept"));
	CHECK(eval(p, fp, fleet, &res) == POLICY_ACCEPT);
	CHECK(has_note(res, "noise may reject"));
	json_decref(res);
	/* another SKU is not the fleet */
	json_object_set_new(json_object_get(fp, "run"), "instance_type", json_string("p5e.48xlarge"));
	set_metric(fp, "gemm.bf16.tflops", 0, 600);   /* above the reference floor, under the other fleet */
	CHECK(eval(p, fp, fleet, NULL) == POLICY_ACCEPT);
	/* the run itself (same uuid) never counts */
	CHECK(!policy_same_fleet(json_array_get(fleet, 0), json_array_get(fleet, 0), p->digest));
	json_decref(fp);
	json_decref(fleet);
	policy_free(p);
}

/*
 * fp (taken) with its gemm rows carrying the evidence of how they were timed (judge/derive.c
 * timing_rows: "settled_by" of the steady window, "median_ms" of the burst loop; NULL: none), then
 * derived as the judge reads a stored run (derive_load): its config's "timing" is gpuvet's.
 */
static json_t *timed(json_t *fp, const char *evidence)
{
	size_t i;
	json_t *m;
	json_array_foreach(json_object_get(fp, "metrics"), i, m) {
		if (strncmp(json_string_value(json_object_get(m, "name")), "gemm.", 5))
			continue;
		if (!json_is_object(json_object_get(m, "params")))
			json_object_set_new(m, "params", json_object());
		json_object_del(json_object_get(m, "params"), "settled_by");
		json_object_del(json_object_get(m, "params"), "median_ms");
		if (evidence)
			json_object_set_new(json_object_get(m, "params"), evidence, json_string("x"));
	}
	json_t *d = derive_json(fp);
	json_decref(fp);
	return d;
}

/* P1 (issue 57): the class is the rows', not the config's; a run whose rows show none is judged against every run. */
static void test_fleet_never_mixes_timings(void)
{
	struct policy *p = builtin();
	json_t *fleet = json_array(), *res;
	const char *uuids[] = { "a", "b", "c" };
	for (int i = 0; i < 3; i++)
		json_array_append_new(fleet, timed(fleet_member(750, uuids[i], "accept"), "median_ms"));   /* burst-timed */
	json_t *fp = good("clean.json");
	set_metric(fp, "gemm.bf16.tflops", 0, 600);
	fp = timed(fp, "settled_by");
	/* 5 % under burst-timed runs is what steady timing measures on a capped GPU: not a fault */
	CHECK(eval(p, fp, fleet, &res) == POLICY_ACCEPT);
	size_t fi;
	json_t *f;
	json_array_foreach(json_object_get(res, "fleet"), fi, f)   /* the gemm rule found no baseline */
		CHECK(strncmp(json_string_value(json_object_get(f, "metric")), "gemm.", 5));
	json_decref(res);
	/* against steady-timed runs the fleet rule applies again: 750 x 0.90 = 675 */
	json_t *steady = json_array();
	for (int i = 0; i < 3; i++)
		json_array_append_new(steady, timed(fleet_member(750, uuids[i], "accept"), "settled_by"));
	CHECK(eval(p, fp, steady, &res) == POLICY_REJECT);
	CHECK_STR(json_string_value(json_object_get(json_array_get(json_object_get(res, "failed"), 0), "kind")), "fleet");
	json_decref(res);
	/* the evidence stripped (and no config claim): still judged against the fleet, never out of it */
	json_t *bare = good("clean.json");
	set_metric(bare, "gemm.bf16.tflops", 0, 600);
	bare = timed(bare, NULL);
	CHECK(eval(p, bare, steady, &res) == POLICY_REJECT);
	json_decref(res);
	json_decref(bare);
	json_decref(steady);
	json_decref(fp);
	json_decref(fleet);
	policy_free(p);
}

static void test_default_text_matches_file(void)
{
	size_t len;
	char *f = NULL;
	FILE *fh = fopen("judge/policies/default.yaml", "rb");
	CHECK(fh);
	if (!fh)
		return;
	char buf[16384];
	len = fread(buf, 1, sizeof buf - 1, fh);
	fclose(fh);
	buf[len] = 0;
	f = buf;
	CHECK_STR(policy_default_text(), f);
}

/* Thresholds relative to the model's reference (common/gpus.h). */
static void test_reference_threshold(void)
{
	const char *text = "name: ref\nrules:\n  - metric: gemm.bf16.tflops\n    gpu: each\n"
			   "    min_fraction_of_reference: 0.75\n  - metric: memcpy.h2d.pinned.gbps\n"
			   "    min_fraction_of_reference: 0.8\n";
	struct policy *p = NULL;
	char err[256];
	CHECK(policy_parse(text, strlen(text), "ref.yaml", &p, err, sizeof err) == 0);
	if (!p)
		return;
	json_t *fp = good("clean.json"), *res;
	const struct gpu_ref *ref = gpu_ref_find("H100-SXM");
	enum policy_verdict v = eval(p, fp, NULL, &res);
	if (!ref) {
		/* no reference row for the model: the threshold is noted as not applied, never invented */
		CHECK(v == POLICY_ACCEPT);
		CHECK(has_note(res, "no reference for gemm.bf16.tflops on gpu model 'H100-SXM'"));
	} else {
		/*
		 * The threshold is the model's one reference (the achieved figure, not the datasheet peak):
		 * 720 TFLOP/s >= 0.75 x the reference passes; the same GPU at 500 is rejected, with the
		 * reference, its kind and the fraction named.  55 GB/s >= 0.8 x the gen5 x16 link: pass.
		 */
		double link = gpu_pcie_link_gbps(ref->pcie_gen, ref->pcie_width), rv;
		CHECK(gpu_reference_metric("H100-SXM", "gemm.bf16.tflops", &rv, NULL, NULL) == 0);
		CHECK(v == POLICY_ACCEPT);
		CHECK((55 >= 0.8 * link) == !has_failed(res, "memcpy.h2d.pinned.gbps"));
		json_decref(res);
		set_metric(fp, "gemm.bf16.tflops", 0, 500);
		v = eval(p, fp, NULL, &res);
		CHECK(v == POLICY_REJECT);
		json_t *f = json_array_get(json_object_get(res, "failed"), 0);
		CHECK_STR(json_string_value(json_object_get(f, "kind")), "reference");
		CHECK_NEAR(json_number_value(json_object_get(f, "threshold")), 0.75 * rv, 1e-6);
		char want[96];
		snprintf(want, sizeof want, "H100-SXM reference %.4g TFLOP/s (measured)", rv);
		CHECK(strstr(json_string_value(json_object_get(f, "source")), want));
	}
	json_decref(res);
	json_decref(fp);
	policy_free(p);
}

/* The harness passes the flags it computed: the policy judges those and does not compute its own. */
static void test_run_flags_are_used(void)
{
	const char *text = "name: flags-only\nreject_flags: [{code: THROTTLE_POWER, severity: info}]\n";
	struct policy *p = NULL;
	char err[256];
	CHECK(policy_parse(text, strlen(text), "f.yaml", &p, err, sizeof err) == 0);
	if (!p)
		return;
	json_t *fp = good("power_cap_5s.json"), *res = NULL, *none = json_array();
	json_object_set_new(fp, "flags", json_array());
	/* computed here from fp: the power cap rejects */
	CHECK(eval(p, fp, NULL, NULL) == POLICY_REJECT);
	/* given the run's (here: empty) flags, nothing is recomputed */
	CHECK(policy_evaluate_flags(p, fp, NULL, none, &res) == POLICY_ACCEPT);
	json_decref(res);
	/* and the given flags are judged */
	json_array_append_new(none, json_pack("{s:s,s:s,s:s,s:{}}", "code", "THROTTLE_POWER", "severity", "warning",
					      "message", "m", "evidence"));
	CHECK(policy_evaluate_flags(p, fp, NULL, none, &res) == POLICY_REJECT);
	CHECK(has_failed(res, "THROTTLE_POWER"));
	json_decref(res);
	json_decref(none);
	json_decref(fp);
	policy_free(p);
}

TEST_MAIN(T(test_run_flags_are_used), T(test_reference_threshold), T(test_default_parses), T(test_malformed_names_line), T(test_every_metric_kind_is_known), T(test_custom_policy_forms),
	  T(test_default_accepts_clean), T(test_default_each_rule_alone), T(test_fp16_alternative),
	  T(test_unmeasurable), T(test_fleet_baseline), T(test_fleet_never_mixes_timings), T(test_default_text_matches_file))
