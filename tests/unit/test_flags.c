/*
 * test_flags.c - flags_compute() on the synthetic fingerprints of
 * tests/fixtures/flags/ (built to the edge of each threshold by
 * make_fixtures.py; expected.json holds the known answers), plus the
 * measurability rules the acceptance gate relies on.
 */
#include "judge/flags.h"
#include "results/fprun.h"
#include "judge/flags_int.h"
#include "results/fpq.h"
#include "common/gpus.h"
#include "common/util.h"
#include "tests/unit/t.h"
#include "tests/unit/fixture_t.h"

#include <jansson.h>

#define FIXDIR "tests/fixtures/flags/"

static json_t *load(const char *file)
{
	return t_load(FIXDIR, file);
}


static void test_fixture_cases(void)
{
	json_t *man = load("expected.json");
	CHECK(man);
	size_t i, j, ncases = json_array_size(json_object_get(man, "cases"));
	json_t *c, *e;
	CHECK(ncases >= 50);
	json_array_foreach(json_object_get(man, "cases"), i, c) {
		const char *file = json_string_value(json_object_get(c, "file"));
		json_t *fp = load(file);
		CHECK(fp);
		if (!fp)
			continue;
		json_t *flags = flags_compute(fp);
		CHECK(json_is_array(flags));
		CHECK(flags_finish(flags) == 0);   /* every flag raised within its row of judge/flags_table.c */
		json_array_foreach(json_object_get(c, "expect"), j, e) {
			const char *code = json_string_value(json_object_get(e, "code"));
			int gpu = (int)json_integer_value(json_object_get(e, "gpu"));
			const json_t *f = t_find_flag(flags, code, gpu);
			if (!f) {
				fprintf(stderr, "%s: expected %s on gpu %d\n", file, code, gpu);
				char *d = json_dumps(flags, JSON_COMPACT);
				fprintf(stderr, "  flags: %s\n", d ? d : "?");
				free(d);
			}
			CHECK(f != NULL);
			if (f) {
				CHECK_STR(json_string_value(json_object_get(f, "severity")),
					  json_string_value(json_object_get(e, "severity")));
				CHECK(json_string_length(json_object_get(f, "message")) > 10);
				CHECK(json_is_object(json_object_get(f, "evidence")));
			}
		}
		json_array_foreach(json_object_get(c, "absent"), j, e) {
			const json_t *f = t_find_flag(flags, json_string_value(e), -2);
			if (f)
				fprintf(stderr, "%s: unexpected %s: %s\n", file, json_string_value(e),
					json_string_value(json_object_get(f, "message")));
			CHECK(f == NULL);
		}
		json_decref(flags);
		json_decref(fp);
	}
	json_decref(man);
}

/* Combined mask: each reason is read from its own bit, seconds counted per bit. */
static void test_combined_mask_evidence(void)
{
	json_t *fp = load("combined_all_throttles.json");
	CHECK(fp);
	json_t *flags = flags_compute(fp);
	const json_t *f = t_find_flag(flags, "THROTTLE_HW", 0);
	CHECK(f);
	json_t *rs = json_object_get(json_object_get(f, "evidence"), "reason_seconds");
	CHECK_NEAR(json_number_value(json_object_get(rs, "hw_power_brake")), 20, 1e-9);
	CHECK_NEAR(json_number_value(json_object_get(rs, "sw_power_cap")), 20, 1e-9);
	CHECK_NEAR(json_number_value(json_object_get(rs, "hw_thermal_slowdown")), 20, 1e-9);
	CHECK_NEAR(json_number_value(json_object_get(rs, "sync_boost")), 20, 1e-9);
	CHECK(json_object_get(rs, "hw_slowdown") == NULL);
	json_decref(flags);
	json_decref(fp);
}

static void test_decay_evidence_numbers(void)
{
	json_t *fp = load("clock_decay_25.1pct.json");
	CHECK(fp);
	json_t *flags = flags_compute(fp);
	const json_t *f = t_find_flag(flags, "CLOCK_DECAY", 0);
	CHECK(f);
	json_t *e = json_object_get(f, "evidence");
	CHECK_NEAR(json_number_value(json_object_get(e, "first")), 1980, 1e-6);
	CHECK_NEAR(json_number_value(json_object_get(e, "drop_pct")), 25.1, 1e-6);
	CHECK_NEAR(json_number_value(json_object_get(e, "window_s")), 60, 1e-9);
	json_decref(flags);
	json_decref(fp);
}

static void test_measurable(void)
{
	json_t *fp = load("clean.json");
	const char *why;
	CHECK(fp);
	for (int i = 0; flag_rows[i].code; i++) {
		if (!strcmp(flag_rows[i].code, "HOST_STARVED"))
			continue;  /* clean.json has no host bench; see test_host_starved.c */
		if (!strcmp(flag_rows[i].code, "NODE_OUTLIER")) {   /* one GPU: nothing to compare with */
			CHECK(flags_measurable(fp, flag_rows[i].code, &why) == 0 && strstr(why, "two or more"));
			continue;
		}
		int r = flags_measurable(fp, flag_rows[i].code, &why);
		if (r != 1)
			fprintf(stderr, "clean: %s not measurable: %s\n", flag_rows[i].code, why);
		CHECK(r == 1);
	}
	CHECK(flags_measurable(fp, "NOT_A_FLAG", &why) == -1);
	json_t *fp8 = load("clean_8gpu.json");
	CHECK(fp8 && flags_measurable(fp8, "NODE_OUTLIER", &why) == 1);
	json_decref(fp8);
	/* soak skipped: the soak-based codes become unmeasurable, the inventory-based ones stay */
	json_t *b;
	size_t i;
	json_array_foreach(json_object_get(fp, "benches"), i, b)
		if (!strcmp(json_string_value(json_object_get(b, "name")), "soak"))
			json_object_set_new(b, "status", json_string("skipped"));
	CHECK(flags_measurable(fp, "THROTTLE_THERMAL", &why) == 0 && why && strstr(why, "soak"));
	CHECK(flags_measurable(fp, "PCIE_DOWNGRADE", &why) == 0);
	CHECK(flags_measurable(fp, "ROW_REMAP_PENDING", &why) == 1);
	/* no GPU in the inventory */
	json_object_set_new(json_object_get(fp, "inventory"), "gpus", json_array());
	CHECK(flags_measurable(fp, "ECC_ERRORS", &why) == 0);
	json_decref(fp);
}

static void test_garbage_shapes(void)
{
	/* wrong types everywhere: no crash, no flags invented */
	const char *docs[] = {
		"null", "[]", "{}", "{\"metrics\":7,\"samples\":\"x\",\"inventory\":[]}",
		"{\"samples\":[{\"series\":\"soak.clock_events.mask\",\"gpu\":0,\"points\":[[0,-1],[1,1e300],[\"a\",2],[3]]}]}",
		"{\"inventory\":{\"gpus\":[{\"ecc\":\"yes\",\"remapped_rows\":{\"pending\":\"maybe\"},\"mig\":{}}]}}",
		"{\"run\":{\"gpu_count\":100000},\"metrics\":[{\"name\":\"gemm.bf16.tflops\",\"gpu\":0,\"params\":{\"spread\":\"x\"}}]}",
	};
	for (size_t i = 0; i < sizeof docs / sizeof docs[0]; i++) {
		json_t *fp = json_loads(docs[i], JSON_DECODE_ANY, NULL);
		CHECK(fp);
		json_t *flags = flags_compute(fp);
		CHECK(json_is_array(flags));
		CHECK(json_array_size(flags) == 0);
		json_decref(flags);
		json_decref(fp);
	}
}

/*
 * Numbers no real fingerprint holds, as an imported file may: no double is
 * converted to an int it does not fit (undefined behaviour, which make check
 * SAN=1 stops on; fuzz_flags found a GPU index of 1.1e18), and what they mean
 * is still said: a GPU index out of range is the GPU's place in the list, an
 * XID code out of range is unknown (so critical), a GPU out of range unknown.
 */
/* The one conversion of an untrusted number to an int (common/util.c), used by flags and the report. */
static void test_gv_to_int(void)
{
	CHECK(gv_to_int(3.9, -1) == 3 && gv_to_int(-3.9, -1) == -3 && gv_to_int(2147483647.0, -1) == 2147483647);
	CHECK(gv_to_int(-2147483648.0, 0) == -2147483647 - 1);
	CHECK(gv_to_int(2147483648.0, -1) == -1 && gv_to_int(-2147483649.0, 7) == 7);
	CHECK(gv_to_int(1.1e18, -1) == -1 && gv_to_int(1e300, 5) == 5 && gv_to_int(0.0 / 0.0, 9) == 9);
}

static void test_out_of_range_numbers(void)
{
	json_t *fp = load("clean.json");
	CHECK(fp);
	json_t *inv = json_object_get(fp, "inventory");
	json_t *g0 = json_array_get(json_object_get(inv, "gpus"), 0);
	json_object_set_new(g0, "index", json_real(1.1e18));
	json_object_set_new(g0, "virtualization_mode", json_real(1e300));
	json_object_set_new(json_object_get(g0, "ecc"), "volatile", json_pack("{s:f}", "uncorrected", 1.0));
	json_object_set_new(inv, "xid_history", json_pack("{s:[{s:f,s:f,s:f}]}", "events", "xid", 79.0, "gpu", -1e300,
							     "age_s", 5.0));
	json_array_append_new(json_object_get(fp, "samples"),
			      json_pack("{s:s,s:s,s:i,s:[[f,f]]}", "bench", "soak", "series", "soak.xid", "gpu", 0,
					"points", 1.0, 1e300));
	json_t *flags = flags_compute(fp);
	CHECK(json_is_array(flags));
	const json_t *ecc = t_find_flag(flags, "ECC_ERRORS", 0), *run_xid = t_find_flag(flags, "XID", 0),
		     *log_xid = t_find_flag(flags, "XID", -1);
	CHECK(ecc != NULL);
	CHECK(run_xid && !strcmp(json_string_value(json_object_get(run_xid, "severity")), "critical"));
	CHECK(run_xid && json_array_size(json_object_get(json_object_get(run_xid, "evidence"), "codes")) == 0);
	CHECK(log_xid && strstr(json_string_value(json_object_get(log_xid, "message")), "unknown gpu"));
	json_decref(flags);
	json_decref(fp);
}

/* A power cap under a limit the host lowered below the model's TDP is worth a warning. */
static void test_power_limit_below_tdp(void)
{
	json_t *fp = load("power_cap_5s.json");
	CHECK(fp);
	size_t i;
	json_t *s, *pt;
	json_array_foreach(json_object_get(fp, "samples"), i, s)
		if (!strcmp(json_string_value(json_object_get(s, "series")), "soak.power_limit.w")) {
			size_t j;
			json_array_foreach(json_object_get(s, "points"), j, pt)
				json_array_set_new(pt, 1, json_real(500.0));
		}
	json_t *flags = flags_compute(fp);
	const json_t *f = t_find_flag(flags, "THROTTLE_POWER", 0);
	CHECK(f);
	const struct gpu_ref *ref = gpu_ref_find("H100-SXM");
	/* 500 W < 0.90 x 700 W with the reference row; without it, no TDP to compare: info */
	CHECK_STR(json_string_value(json_object_get(f, "severity")),
		  ref && 500 < FLAG_POWER_LIMIT_MIN_FRAC * ref->tdp_w ? "warning" : "info");
	CHECK_NEAR(json_number_value(json_object_get(json_object_get(f, "evidence"), "power_limit_w")), 500, 1e-9);
	json_decref(flags);
	json_decref(fp);
}

/* A steady-timed run (batch_spread instead of spread) on each side of FLAG_CONTENTION_BATCH_SPREAD. */
static int contention_with_batch_spread(double bs)
{
	json_t *fp = load("spread_and_steal.json");
	size_t i;
	json_t *m;
	if (!fp)
		return -1;
	json_array_foreach(json_object_get(fp, "metrics"), i, m) {
		json_t *p = json_object_get(m, "params");
		if (json_is_object(p) && json_object_get(p, "spread")) {
			json_object_del(p, "spread");
			json_object_set_new(p, "batch_spread", json_real(bs));
		}
	}
	json_t *flags = flags_compute(fp);
	int hit = t_find_flag(flags, "CONTENTION", -2) != NULL;
	json_decref(flags);
	json_decref(fp);
	return hit;
}

static void test_steady_batch_spread(void)
{
	CHECK(contention_with_batch_spread(FLAG_CONTENTION_BATCH_SPREAD + 0.01) == 1);
	/* a clean H100's power-cap oscillation (0.125 at most) is not a signal */
	CHECK(contention_with_batch_spread(FLAG_CONTENTION_BATCH_SPREAD - 0.01) == 0);
	CHECK(contention_with_batch_spread(0.125) == 0);
}

static void test_severity_rank(void)
{
	CHECK(gv_severity_rank("info") < gv_severity_rank("warning"));
	CHECK(gv_severity_rank("warning") < gv_severity_rank("critical"));
	CHECK(gv_severity_rank("fatal") == -1);
	CHECK(flags_code_known("XID") && !flags_code_known("xid"));
}

/*
 * Issue 52: a flag cannot be added wrong.  Walking HACKING.md's recipe with a test-only flag: a row
 * without its measured function is refused by flags_def_check() (and a row that leaves the field out
 * does not compile: tests/test_flag_codes.py), a code outside the table is unknown to
 * flags_measurable() (-1: the policy refuses to let it pass as measured), and every real row is whole.
 */
static int test_only_measured(struct fprun *r, const char **why)
{
	if (fprun_bench(r, "test_only_evidence"))
		return 1;
	*why = "needs the test-only evidence";
	return 0;
}

static void test_flag_table(void)
{
	static const struct flag_def without = { "TEST_ONLY_FLAG", FLAG_SEV_WARNING, NULL, "watch %s", "drain %s" };
	static const struct flag_def with = { "TEST_ONLY_FLAG", FLAG_SEV_WARNING, test_only_measured, "watch %s",
					      "drain %s" };
	static const struct flag_def no_remedy = { "TEST_ONLY_FLAG", FLAG_SEV_WARNING, test_only_measured, "watch",
						   "drain %s" };
	const char *why = NULL;
	json_t *fp = json_object();
	CHECK(flags_def_check(&without) && strstr(flags_def_check(&without), "measured"));
	CHECK(flags_def_check(&no_remedy) && strstr(flags_def_check(&no_remedy), "what to do"));
	CHECK(flags_def_check(&with) == NULL);
	struct fprun *run = fprun_new();
	CHECK(with.measured(run, &why) == 0 && why);   /* its own function decides, not the GPU list */
	fprun_free(run);
	CHECK(flags_measurable(fp, "TEST_ONLY_FLAG", &why) == -1);   /* not in the table: unknown, never measured */
	int n = 0;
	for (int i = 0; flag_rows[i].code; i++, n++) {
		if (flags_def_check(&flag_rows[i]))
			fprintf(stderr, "row %s: %s\n", flag_rows[i].code, flags_def_check(&flag_rows[i]));
		CHECK(flags_def_check(&flag_rows[i]) == NULL);
		CHECK(flags_def_find(flag_rows[i].code) == &flag_rows[i]);   /* one row per code */
	}
	CHECK(n >= 21);
	/* a flag raised outside its row is counted (and kept): a severity the row does not declare, a code without one */
	json_t *out = json_array();
	flags_add(out, "PCIE_DOWNGRADE", "critical", json_pack("{s:i}", "gpu", 0), "gpu %d: ok", 0);
	CHECK(flags_finish(out) == 0);
	flags_add(out, "PCIE_DOWNGRADE", "warning", json_pack("{s:i}", "gpu", 0), "gpu %d: a warning it never raises", 0);
	flags_add(out, "TEST_ONLY_FLAG", "warning", json_pack("{s:i}", "gpu", -1), "gpu -1: no row");
	CHECK(flags_finish(out) == 2 && json_array_size(out) == 3);
	CHECK(!strcmp(json_string_value(json_object_get(json_array_get(out, 2), "message")), "all gpus: no row"));
	json_decref(out);
	/* the one severity order, and its names */
	for (int r = 0; r < 3; r++)
		CHECK(gv_severity_rank(gv_severity_name(r)) == r);
	json_decref(fp);
}

TEST_MAIN(T(test_flag_table), T(test_gv_to_int), T(test_fixture_cases), T(test_combined_mask_evidence), T(test_decay_evidence_numbers), T(test_measurable),
	  T(test_garbage_shapes), T(test_out_of_range_numbers), T(test_power_limit_below_tdp), T(test_steady_batch_spread), T(test_severity_rank))
