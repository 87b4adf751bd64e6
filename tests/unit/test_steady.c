/*
 * test_steady.c - the settling rule and the measuring window (benches/steady.c),
 * replayed on the real settling curves of an H100 and an H200
 * (tests/fixtures/gpu/{h100,h200}-2026-11-22/settle-from-idle.json: PyTorch 8192^3 products from an
 * idle GPU, batches of 5 timed with CUDA events for 6 s, NVML every 50 ms),
 * and on synthetic traces either side of each rule.
 */
#include "benches/steady.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/t.h"

static double power_limit_w(const char *smi_path)
{
	FILE *f = fopen(smi_path, "r");
	char line[256];
	double w = NAN;
	if (!f)
		return NAN;
	while (fgets(line, sizeof line, f))
		if (strstr(line, "Current Power Limit") && sscanf(strchr(line, ':') + 1, "%lf", &w) == 1)
			break;
	fclose(f);
	return w;
}

struct replay {
	struct steady_summary quick, standard, first10;
	double reference;   /* median of the batches 2-6 s after the start */
};

/* Feeds the capture in time order as the GPU loop would and settles as the rule says. */
static void replay_one(json_t *series, double cap_w, const struct steady_cfg *c, struct steady_summary *out)
{
	struct steady_trace tr;
	json_t *b = json_object_get(series, "batches_tflops"), *nv = json_object_get(series, "nvml");
	size_t inv = 0;
	memset(&tr, 0, sizeof tr);
	memset(out, 0, sizeof *out);
	out->how = STEADY_WARMING;
	double settle = NAN;
	for (size_t i = 0; i < json_array_size(b); i++) {
		double t = json_number_value(json_array_get(json_array_get(b, i), 0));
		for (; inv < json_array_size(nv); inv++) {
			json_t *r = json_array_get(nv, inv);
			double tn = json_number_value(json_array_get(r, 0));
			if (tn > t)
				break;
			struct gpu_reading s = { tn, json_number_value(json_array_get(r, 1)),
					       json_number_value(json_array_get(r, 2)), cap_w,
					       json_number_value(json_array_get(r, 3)),
					       (unsigned long long)json_integer_value(json_array_get(r, 4)), 1 };
			steady_trace_add_nv(&tr, &s);
		}
		steady_trace_add_batch(&tr, t, json_number_value(json_array_get(json_array_get(b, i), 1)));
		if (isnan(settle)) {
			enum steady_verdict v = steady_settled(&tr, c, t);
			if (v != STEADY_WARMING) {
				settle = t;
				out->how = v;
			}
		}
	}
	CHECK(isfinite(settle));
	steady_summarize(&tr, settle, settle + c->window_s, out);
	steady_trace_free(&tr);
}

static void replay_file(const char *dir)
{
	char path[256];
	snprintf(path, sizeof path, "tests/fixtures/gpu/%s/nvidia-smi-q.txt", dir);
	double cap = power_limit_w(path);
	CHECK_NEAR(cap, 700, 1e-9);
	snprintf(path, sizeof path, "tests/fixtures/gpu/%s/settle-from-idle.json", dir);
	json_error_t je;
	json_t *root = json_load_file(path, 0, &je);
	CHECK(root != NULL);
	if (!root)
		return;
	const char *dt;
	json_t *series;
	int n = 0;
	json_object_foreach(root, dt, series) {
		struct steady_cfg q = steady_cfg_for(PROFILE_QUICK), s = steady_cfg_for(PROFILE_STANDARD);
		struct steady_summary sq, ss;
		replay_one(series, cap, &q, &sq);
		replay_one(series, cap, &s, &ss);
		/* the settled state: batches 2-6 s after the start */
		struct steady_trace all;
		struct steady_summary ref;
		json_t *b = json_object_get(series, "batches_tflops");
		memset(&all, 0, sizeof all);
		memset(&ref, 0, sizeof ref);
		for (size_t i = 0; i < json_array_size(b); i++)
			steady_trace_add_batch(&all, json_number_value(json_array_get(json_array_get(b, i), 0)),
					       json_number_value(json_array_get(json_array_get(b, i), 1)));
		steady_summarize(&all, 2.0, 6.0, &ref);
		/* what 3 warm-ups and 10 timed products (the old method) gave: 2 batches of 5 after 1 */
		struct steady_summary old;
		memset(&old, 0, sizeof old);
		steady_summarize(&all, 0.0, all.b[2].t, &old);
		steady_trace_free(&all);

		fprintf(stderr, "%s %s: settled at %.2f s (%s), quick %.1f, standard %.1f, settled %.1f, burst %.1f\n",
			dir, dt, sq.settle_s, steady_verdict_name(sq.how), sq.rate, ss.rate, ref.rate, sq.burst);
		CHECK(sq.how == STEADY_CAPPED);              /* every series reaches the 700 W cap */
		CHECK(sq.settle_s >= 0.75 && sq.settle_s <= 2.0);
		/* a 1 s window within 1.5 % of the settled rate, 2 s within 1 %, quick and standard within 2 % */
		CHECK(fabs(sq.rate - ref.rate) <= 0.015 * ref.rate);
		CHECK(fabs(ss.rate - ref.rate) <= 0.01 * ref.rate);
		CHECK(fabs(sq.rate - ss.rate) <= 0.02 * ss.rate);
		CHECK(sq.batches >= 30);
		CHECK(sq.sm_mhz > 1000 && sq.sm_mhz < 1980);   /* capped: below the 1980 MHz boost */
		CHECK(sq.power_w >= 0.9 * cap);
		CHECK_NEAR(sq.cap_w, cap, 1e-9);
		CHECK(sq.reasons & STEADY_REASON_POWER_CAP);
		/* the burst is what the old method measured: well above the settled figure */
		CHECK(sq.burst > 1.03 * ref.rate);
		CHECK(old.rate > 1.03 * ref.rate);
		n++;
	}
	CHECK(n == 4);
	json_decref(root);
}

static void test_settles_on_real_h100(void) { replay_file("h100-2026-11-22"); }
static void test_settles_on_real_h200(void) { replay_file("h200-2026-11-22"); }

/* A synthetic trace at dt steps: throughput f(t), clock g(t), power p(t) (NAN: no NVML). */
static enum steady_verdict settle_synth(const struct steady_cfg *c, double (*f)(double), double (*g)(double),
				       double (*p)(double), unsigned long long reasons, double *at)
{
	struct steady_trace tr;
	memset(&tr, 0, sizeof tr);
	enum steady_verdict v = STEADY_WARMING;
	for (double t = 0.02; t < 10 && v == STEADY_WARMING; t += 0.02) {
		if (g) {
			struct gpu_reading s = { t, g(t), p ? p(t) : NAN, p ? 700 : NAN, 50, reasons, 1 };
			steady_trace_add_nv(&tr, &s);
		}
		steady_trace_add_batch(&tr, t, f(t));
		v = steady_settled(&tr, c, t);
		*at = t;
	}
	steady_trace_free(&tr);
	return v;
}

static double flat(double t) { (void)t; return 50.0; }
static double boost(double t) { (void)t; return 1980.0; }
static double ramp_clock(double t) { return t < 1.5 ? 1980 - 200 * t : 1680; }
static double low_power(double t) { (void)t; return 400.0; }
static double noisy(double t) { return 50.0 * (1 + 0.05 * sin(t * 40)); }
static double slow_rise(double t) { return 50.0 + 10 * t; }

static void test_uncapped_gpu_settles_on_stable_clocks(void)
{
	struct steady_cfg c = steady_cfg_for(PROFILE_QUICK);
	double at = 0;
	/* fp32 on an H100: far from the cap, clocks at boost: settled right after min_warm */
	CHECK(settle_synth(&c, flat, boost, low_power, 0, &at) == STEADY_STABLE);
	CHECK(at >= c.min_warm_s && at < c.min_warm_s + 0.05);
	/* clocks still falling: not before they stop */
	CHECK(settle_synth(&c, flat, ramp_clock, low_power, 0, &at) == STEADY_STABLE);
	CHECK(at >= 1.5 + c.stable_win_s - 0.05);
	/* a power-cap reason without the power at the cap: not settled by the clock rule */
	CHECK(settle_synth(&c, flat, boost, low_power, STEADY_REASON_POWER_CAP, &at) == STEADY_TIMEOUT);
	CHECK_NEAR(at, c.max_warm_s, 0.021);
}

static void test_without_nvml_throughput_over_whole_seconds(void)
{
	struct steady_cfg c = steady_cfg_for(PROFILE_STANDARD);
	double at = 0;
	CHECK(settle_synth(&c, flat, NULL, NULL, 0, &at) == STEADY_STABLE_NO_NVML);
	CHECK(at >= 2.0 && at < 2.05);
	/* 5 % ripple faster than a second averages out within each second */
	CHECK(settle_synth(&c, noisy, NULL, NULL, 0, &at) == STEADY_STABLE_NO_NVML);
	/* still rising 10/s against 50: never within 1 %, stopped at max_warm */
	CHECK(settle_synth(&c, slow_rise, NULL, NULL, 0, &at) == STEADY_TIMEOUT);
	CHECK_NEAR(at, c.max_warm_s, 0.021);
}

static void test_cap_rule_needs_hold(void)
{
	struct steady_cfg c = steady_cfg_for(PROFILE_QUICK);
	struct steady_trace tr;
	memset(&tr, 0, sizeof tr);
	/* one reading at the cap is not enough; readings over hold_s are */
	struct gpu_reading below = { 0.6, 1500, 600, 700, 50, 4, 1 }, capped = { 0.7, 1400, 690, 700, 50, 4, 1 };
	steady_trace_add_nv(&tr, &below);
	steady_trace_add_nv(&tr, &capped);
	CHECK(steady_settled(&tr, &c, 0.7) == STEADY_WARMING);
	for (double t = 0.75; t <= 0.96; t += 0.05) {
		capped.t = t;
		steady_trace_add_nv(&tr, &capped);
	}
	CHECK(steady_settled(&tr, &c, 0.96) == STEADY_CAPPED);
	/* 0.95 x 700 = 665 W is the edge */
	capped.t = 1.0;
	capped.power_w = 664.9;
	steady_trace_add_nv(&tr, &capped);
	CHECK(steady_settled(&tr, &c, 1.0) == STEADY_WARMING);
	CHECK(steady_settled(&tr, &c, 0.2) == STEADY_WARMING);   /* before min_warm */
	steady_trace_free(&tr);
}

static void test_window_summary_and_params(void)
{
	struct steady_trace tr;
	struct steady_summary s;
	char buf[1024], wrapped[1100];
	memset(&tr, 0, sizeof tr);
	memset(&s, 0, sizeof s);
	steady_trace_add_batch(&tr, 0.05, 900);   /* burst */
	for (int i = 1; i <= 100; i++)
		steady_trace_add_batch(&tr, 1.0 + i * 0.01, 600 + i);   /* 601..700 in (1, 2] */
	steady_trace_add_batch(&tr, 2.5, 10);       /* after the window */
	struct gpu_reading a = { 1.2, 1400, 690, 700, 60, 0x4, 1 }, b = { 1.8, 1500, 700, 700, 64, 0x20, 1 },
			 out = { 3.0, 100, 100, 700, 99, 0x40, 1 };
	steady_trace_add_nv(&tr, &a);
	steady_trace_add_nv(&tr, &b);
	steady_trace_add_nv(&tr, &out);
	s.how = STEADY_CAPPED;
	steady_summarize(&tr, 1.0, 2.0, &s);
	CHECK(s.batches == 100);
	CHECK_NEAR(s.median, 650.5, 1e-9);
	{
		double inv = 0;
		for (int i = 601; i <= 700; i++)
			inv += 1.0 / i;
		CHECK_NEAR(s.rate, 100 / inv, 1e-9);
		CHECK(s.rate < s.mean);
	}
	CHECK_NEAR(s.min, 601, 0);
	CHECK_NEAR(s.max, 700, 0);
	CHECK_NEAR(s.burst, 900, 0);
	CHECK_NEAR(s.sm_mhz, 1450, 1e-9);
	CHECK_NEAR(s.power_w, 695, 1e-9);
	CHECK_NEAR(s.temp_max_c, 64, 0);
	CHECK(s.reasons == 0x24);
	CHECK(s.how == STEADY_CAPPED);
	CHECK(steady_params(buf, sizeof buf, &s) > 0);
	snprintf(wrapped, sizeof wrapped, "{%s}", buf);
	json_error_t je;
	json_t *j = json_loads(wrapped, 0, &je);
	CHECK(j != NULL);
	CHECK_STR(json_string_value(json_object_get(j, "settled_by")), "power_cap");
	CHECK_NEAR(json_number_value(json_object_get(j, "power_cap_w")), 700, 1e-9);
	CHECK_NEAR(json_number_value(json_object_get(j, "window_s")), 1.0, 1e-9);
	CHECK(json_array_size(json_object_get(j, "clock_event_reasons")) == 2);
	CHECK_STR(json_string_value(json_array_get(json_object_get(j, "clock_event_reasons"), 1)), "sw_thermal");
	json_decref(j);
	CHECK(steady_params(buf, 40, &s) == -1);
	/* nothing known from NVML: nulls, still valid JSON */
	steady_trace_free(&tr);
	steady_trace_add_batch(&tr, 1.5, 5);
	steady_summarize(&tr, 1.0, 2.0, &s);
	CHECK(steady_params(buf, sizeof buf, &s) > 0);
	snprintf(wrapped, sizeof wrapped, "{%s}", buf);
	j = json_loads(wrapped, 0, &je);
	CHECK(j && json_is_null(json_object_get(j, "sm_clock_mhz")) && json_is_null(json_object_get(j, "burst")));
	json_decref(j);
	steady_trace_free(&tr);
}

static void test_profiles_measure_the_same_state(void)
{
	struct steady_cfg q = steady_cfg_for(PROFILE_QUICK), s = steady_cfg_for(PROFILE_STANDARD),
			  f = steady_cfg_for(PROFILE_FULL);
	/* the same settling rule; windows are whole power-cap periods (about 1 s) */
	CHECK(q.min_warm_s == s.min_warm_s && q.cap_frac == s.cap_frac && q.hold_s == f.hold_s);
	CHECK(q.window_s == 1.0 && s.window_s == 2.0 && f.window_s == 4.0);
	CHECK(q.max_warm_s <= s.max_warm_s);
}

TEST_MAIN(T(test_settles_on_real_h100), T(test_settles_on_real_h200), T(test_uncapped_gpu_settles_on_stable_clocks),
	  T(test_without_nvml_throughput_over_whole_seconds), T(test_cap_rule_needs_hold),
	  T(test_window_summary_and_params), T(test_profiles_measure_the_same_state))
