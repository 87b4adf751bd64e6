/*
 * test_flags_real.c - flags_compute() on the real H100/H200 captures of
 * tests/fixtures/gpu/ (README there: device, driver, command of each
 * file), edited here in memory, never on disk:
 *
 *   - CONTENTION from performance alone: with the `foreign` evidence
 *     removed (soak.foreign_procs.count dropped, as on a time-sliced vGPU
 *     where NVML cannot list the other VM's processes), the 3 loaded and
 *     4 light-tenant H100 runs and the H200 25 %-duty run are flagged, the
 *     3 clean runs, the 300 s soak and the quick/standard profiles are not;
 *   - NODE_OUTLIER on 8-GPU fingerprints made by replicating the H100
 *     per-GPU gemm rows and lowering one GPU;
 *   - DATA_CORRUPTION from the mismatches the soak reports;
 *   - passive health (ECC mode, NVLink links and errors, VBIOS, hardware
 *     XIDs logged since boot) on the edited inventory;
 *   - the achievable reference table and every flag's remediation.
 */
#include "judge/flags.h"
#include "results/fpq.h"
#include "common/gpus.h"
#include "tests/unit/t.h"
#include "tests/unit/fixture_t.h"

#include <jansson.h>
#include <stdlib.h>

#define GPUDIR "tests/fixtures/gpu/"

static json_t *load(const char *file)
{
	return t_load(GPUDIR, file);
}

/* Drops every metric named name (all GPUs); returns how many went. */
static int drop_metric(json_t *fp, const char *name)
{
	json_t *ms = json_object_get(fp, "metrics");
	int n = 0;
	for (size_t i = json_array_size(ms); i-- > 0;)
		if (!strcmp(json_string_value(json_object_get(json_array_get(ms, i), "name")), name)) {
			json_array_remove(ms, i);
			n++;
		}
	return n;
}


static int has_signal(const json_t *flag, const char *signal)
{
	size_t i;
	json_t *s;
	json_array_foreach(json_object_get(json_object_get(flag, "evidence"), "signals"), i, s)
		if (!strcmp(json_string_value(json_object_get(s, "signal")), signal))
			return 1;
	return 0;
}

static const char *const shared_runs[] = {
	"h100-2026-11-22/contention/loaded-1.json", "h100-2026-11-22/contention/loaded-2.json",
	"h100-2026-11-22/contention/loaded-3.json", "h100-2026-11-22/light-tenant/duty0.25-1.json",
	"h100-2026-11-22/light-tenant/duty0.25-2.json", "h100-2026-11-22/light-tenant/duty0.5-1.json",
	"h100-2026-11-22/light-tenant/duty0.5-2.json", "h200-2026-11-22/duty0.25.json",
};
static const char *const clean_runs[] = {
	"h100-2026-11-22/contention/clean-1.json", "h100-2026-11-22/contention/clean-2.json",
	"h100-2026-11-22/contention/clean-3.json", "h100-2026-11-22/soak-300s.json",
	"h100-2026-11-22/quick-profile.json", "h100-2026-11-22/standard-profile.json",
	"h200-2026-11-22/quick-profile.json", "h200-2026-11-22/standard-profile.json",
};

/* The item of issue 13 exactly: shared runs flagged without `foreign`, clean runs not. */
static void test_contention_without_foreign(void)
{
	for (size_t i = 0; i < sizeof shared_runs / sizeof shared_runs[0]; i++) {
		json_t *fp = load(shared_runs[i]);
		CHECK(fp);
		if (!fp)
			continue;
		/* the capture did see the other process: the edit removes real evidence */
		CHECK(drop_metric(fp, "soak.foreign_procs.count") == 2);
		json_t *flags = flags_compute(fp);
		const json_t *f = t_find_flag(flags, "CONTENTION", -1);
		if (!f)
			fprintf(stderr, "%s: no CONTENTION without foreign\n", shared_runs[i]);
		CHECK(f);
		CHECK(f && !has_signal(f, "foreign"));
		/* judged from performance: the efficiency against the model's reference and a second kind */
		CHECK(f && has_signal(f, "efficiency"));
		CHECK(f && json_array_size(json_object_get(json_object_get(f, "evidence"), "kinds")) >= 2);
		CHECK(f && !strcmp(json_string_value(json_object_get(f, "severity")), "critical"));
		json_decref(flags);
		json_decref(fp);
	}
	for (size_t i = 0; i < sizeof clean_runs / sizeof clean_runs[0]; i++) {
		json_t *fp = load(clean_runs[i]);
		CHECK(fp);
		if (!fp)
			continue;
		drop_metric(fp, "soak.foreign_procs.count");
		json_t *flags = flags_compute(fp);
		if (t_find_flag(flags, "CONTENTION", -2) || t_find_flag(flags, "BELOW_REFERENCE", -2))
			fprintf(stderr, "%s: flagged: %s\n", clean_runs[i], json_dumps(flags, JSON_COMPACT));
		CHECK(!t_find_flag(flags, "CONTENTION", -2));
		CHECK(!t_find_flag(flags, "BELOW_REFERENCE", -2));
		CHECK(!t_find_flag(flags, "NODE_OUTLIER", -2) && !t_find_flag(flags, "DATA_CORRUPTION", -2));
		json_decref(flags);
		json_decref(fp);
	}
}

/* With `foreign` kept the captures stay critical; the test switch hides it as a vGPU would. */
static void test_contention_with_foreign_and_switch(void)
{
	json_t *fp = load("h100-2026-11-22/light-tenant/duty0.25-1.json");
	CHECK(fp);
	json_t *flags = flags_compute(fp);
	const json_t *f = t_find_flag(flags, "CONTENTION", -1);
	CHECK(f && has_signal(f, "foreign") && has_signal(f, "jitter"));
	CHECK(f && !strcmp(json_string_value(json_object_get(f, "severity")), "critical"));
	json_decref(flags);
	setenv("GPUVET_TEST_HIDE_FOREIGN", "1", 1);
	flags = flags_compute(fp);
	f = t_find_flag(flags, "CONTENTION", -1);
	CHECK(f && !has_signal(f, "foreign") && has_signal(f, "efficiency"));
	CHECK(f && json_is_true(json_object_get(json_object_get(f, "evidence"), "foreign_hidden")));
	unsetenv("GPUVET_TEST_HIDE_FOREIGN");
	json_decref(flags);
	json_decref(fp);
}

/* Sets every point of a soak series of gpu 0 to y * factor. */
static void scale_series(json_t *fp, const char *series, double factor)
{
	size_t i, j;
	json_t *s, *p;
	json_array_foreach(json_object_get(fp, "samples"), i, s) {
		if (strcmp(json_string_value(json_object_get(s, "series")), series) ||
		    json_integer_value(json_object_get(s, "gpu")) != 0)
			continue;
		json_array_foreach(json_object_get(s, "points"), j, p)
			json_array_set_new(p, 1, json_real(json_number_value(json_array_get(p, 1)) * factor));
	}
}

/*
 * Efficiency alone is one number: never CONTENTION.  A clean 300 s soak scaled to 85 % of its
 * throughput (at the same power and clock) adds the efficiency signal; with the clean run's small
 * gemm spreads and no steal, nothing else: no flag.  With steal at its threshold: critical.
 */
/*
 * A steady-timed gemm bf16 row as gemm writes it (benches/gemm.cu: 8192^3, the window's power and
 * clock in params), appended for GPU 0.
 */
static void add_window(json_t *fp, double tflops, double power_w, double mhz)
{
	json_array_append_new(json_object_get(fp, "metrics"),
		json_pack("{s:s,s:s,s:i,s:f,s:s,s:{s:i,s:i,s:i,s:s,s:f,s:f,s:f}}", "bench", "gemm", "name",
			  "gemm.bf16.tflops", "gpu", 0, "value", tflops, "unit", "TFLOP/s", "params", "m", 8192, "n",
			  8192, "k", 8192, "timing", "steady", "power_w", power_w, "sm_clock_mhz", mhz, "window_s", 1.0));
}

/* Drops the burst-timed gemm rows, whose spread was the second kind of evidence before steady timing. */
static void drop_burst_gemm(json_t *fp)
{
	json_t *ms = json_object_get(fp, "metrics");
	for (size_t i = json_array_size(ms); i-- > 0;) {
		const char *n = json_string_value(json_object_get(json_array_get(ms, i), "name"));
		if (n && !strncmp(n, "gemm.", 5))
			json_array_remove(ms, i);
	}
}

static void test_even_tenant_seen_twice(void)
{
	/*
	 * loaded-1: a tenant running all the time.  Without the foreign list and without burst
	 * spread, the soak's efficiency is one kind; the gemm window's (the settled H100 figure of
	 * settle-from-idle.json, 684 TFLOP/s at 698 W and about 1400 MHz, halved by the tenant)
	 * is the second, from another bench at another time.
	 */
	json_t *fp = load("h100-2026-11-22/contention/loaded-1.json");
	CHECK(fp);
	if (!fp)
		return;
	drop_metric(fp, "soak.foreign_procs.count");
	drop_burst_gemm(fp);
	json_t *flags = flags_compute(fp);
	const json_t *f = t_find_flag(flags, "CONTENTION", -1);
	CHECK(!f || has_signal(f, "jitter") || has_signal(f, "dips"));   /* without the window: only if unsteady */
	json_decref(flags);
	add_window(fp, 342.0, 698.0, 1400.0);
	flags = flags_compute(fp);
	f = t_find_flag(flags, "CONTENTION", -1);
	CHECK(f && has_signal(f, "window") && has_signal(f, "efficiency"));
	CHECK(f && !strcmp(json_string_value(json_object_get(f, "severity")), "critical"));
	json_decref(flags);
	json_decref(fp);
	/* a clean run's settled window (684 TFLOP/s at 698 W, 1400 MHz) is no signal; nor a burst row */
	fp = load("h100-2026-11-22/contention/clean-1.json");
	CHECK(fp);
	if (!fp)
		return;
	drop_burst_gemm(fp);
	add_window(fp, 684.0, 698.0, 1400.0);
	flags = flags_compute(fp);
	CHECK(!t_find_flag(flags, "CONTENTION", -2));
	json_decref(flags);
	json_decref(fp);
}

static void test_window_threshold_edges(void)
{
	const struct gpu_reference *a = gpu_reference_find("H100-SXM");
	CHECK(a);
	if (!a)
		return;
	/* per watt and per MHz both just under / just over FLAG_CONTENTION_EFF_FRAC of the soak reference */
	for (int side = 0; side < 2; side++) {
		double f = side ? FLAG_CONTENTION_EFF_FRAC * 1.01 : FLAG_CONTENTION_EFF_FRAC * 0.99, w = 700, mhz = 1400;
		double tf = f * a->soak_tflops_per_w * w;
		if (tf / mhz >= FLAG_CONTENTION_EFF_FRAC * a->soak_tflops_per_mhz && !side)
			mhz = tf / (f * a->soak_tflops_per_mhz);            /* keep both ratios at f */
		json_t *fp = load("h100-2026-11-22/soak-300s.json");
		CHECK(fp);
		if (!fp)
			return;
		add_window(fp, tf, w, mhz);
		const json_t *st = fpq_metric(fp, "host.cpu_steal.pct", -1);
		json_object_set_new((json_t *)st, "value", json_real(FLAG_CONTENTION_STEAL_PCT));   /* a second kind */
		json_t *flags = flags_compute(fp);
		const json_t *c = t_find_flag(flags, "CONTENTION", -1);
		CHECK(side ? !(c && has_signal(c, "window")) : (c && has_signal(c, "window")));
		json_decref(flags);
		json_decref(fp);
	}
}

static void test_efficiency_needs_company(void)
{
	json_t *fp = load("h100-2026-11-22/soak-300s.json");
	CHECK(fp);
	scale_series(fp, "soak.tflops", 0.85);
	json_t *flags = flags_compute(fp);
	CHECK(!t_find_flag(flags, "CONTENTION", -2));
	json_decref(flags);
	const json_t *st = fpq_metric(fp, "host.cpu_steal.pct", -1);
	CHECK(st);
	json_object_set_new((json_t *)st, "value", json_real(FLAG_CONTENTION_STEAL_PCT));
	flags = flags_compute(fp);
	const json_t *f = t_find_flag(flags, "CONTENTION", -1);
	CHECK(f && has_signal(f, "efficiency") && has_signal(f, "steal"));
	CHECK(f && !strcmp(json_string_value(json_object_get(f, "severity")), "critical"));
	json_decref(flags);
	json_decref(fp);
}

/* A power cap (clock and power down together, work per watt and per MHz unchanged) is not contention. */
static void test_power_capped_gpu_is_not_shared(void)
{
	json_t *fp = load("h100-2026-11-22/soak-300s.json");
	CHECK(fp);
	scale_series(fp, "soak.tflops", 0.70);
	scale_series(fp, "soak.power.w", 0.70);
	scale_series(fp, "soak.sm_clock.mhz", 0.70);
	const json_t *st = fpq_metric(fp, "host.cpu_steal.pct", -1);
	json_object_set_new((json_t *)st, "value", json_real(3.0));
	json_t *flags = flags_compute(fp);
	CHECK(!t_find_flag(flags, "CONTENTION", -2));
	json_decref(flags);
	json_decref(fp);
}

/* An 8-GPU fingerprint from the H100 standard profile: gpu 0's gemm rows copied to gpus 1-7. */
static json_t *eight_gpus(double gpu3_factor)
{
	json_t *fp = load("h100-2026-11-22/standard-profile.json");
	if (!fp)
		return NULL;
	json_t *ms = json_object_get(fp, "metrics"), *gpus = json_object_get(json_object_get(fp, "inventory"), "gpus");
	size_t n = json_array_size(ms);
	for (size_t i = 0; i < n; i++) {
		json_t *m = json_array_get(ms, i);
		const char *name = json_string_value(json_object_get(m, "name"));
		if (strncmp(name, "gemm.", 5) || json_integer_value(json_object_get(m, "gpu")) != 0)
			continue;
		for (int g = 1; g < 8; g++) {
			json_t *c = json_deep_copy(m);
			json_object_set_new(c, "gpu", json_integer(g));
			if (g == 3 && strstr(name, ".tflops"))
				json_object_set_new(c, "value", json_real(json_number_value(json_object_get(m, "value")) *
									   gpu3_factor));
			json_array_append_new(ms, c);
		}
	}
	json_t *g0 = json_array_get(gpus, 0);
	for (int g = 1; g < 8; g++) {
		json_t *c = json_deep_copy(g0);
		json_object_set_new(c, "index", json_integer(g));
		json_array_append_new(gpus, c);
	}
	json_object_set_new(json_object_get(fp, "run"), "gpu_count", json_integer(8));
	return fp;
}

static void test_node_outlier(void)
{
	static const struct { double factor; const char *sev; } cases[] = {
		{ 1.0, NULL }, { 0.905, NULL }, { 0.895, "warning" }, { 0.76, "warning" }, { 0.74, "critical" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		json_t *fp = eight_gpus(cases[i].factor);
		CHECK(fp);
		if (!fp)
			continue;
		const char *why;
		CHECK(flags_measurable(fp, "NODE_OUTLIER", &why) == 1);
		json_t *flags = flags_compute(fp);
		const json_t *f = t_find_flag(flags, "NODE_OUTLIER", 3);
		int others = 0;
		for (int g = 0; g < 8; g++)
			others += g != 3 && t_find_flag(flags, "NODE_OUTLIER", g) != NULL;
		CHECK(others == 0);
		if (!cases[i].sev) {
			CHECK(!f);
		} else {
			CHECK(f && !strcmp(json_string_value(json_object_get(f, "severity")), cases[i].sev));
			CHECK(f && strstr(json_string_value(json_object_get(f, "remediation")), "gpu 3"));
			CHECK_NEAR(f ? json_number_value(json_object_get(json_object_get(f, "evidence"), "deficit_frac")) : 0,
				   1 - cases[i].factor, 1e-9);
		}
		json_decref(flags);
		json_decref(fp);
	}
	/* one GPU: nothing to compare with */
	json_t *fp = load("h100-2026-11-22/standard-profile.json");
	const char *why;
	CHECK(fp && flags_measurable(fp, "NODE_OUTLIER", &why) == 0 && strstr(why, "two or more"));
	json_decref(fp);
}

static json_t *gpu_of(json_t *fp, int i)
{
	return json_array_get(json_object_get(json_object_get(fp, "inventory"), "gpus"), (size_t)i);
}

static const char *sev_of(const json_t *f)
{
	return f ? json_string_value(json_object_get(f, "severity")) : "";
}

/* Passive health read from the inventory of the real standard-profile fingerprint, edited. */
static void test_passive_health(void)
{
	/* the capture as it is: ECC on, no nvlink (one GPU in a VM), one vbios, no xid history */
	json_t *fp = load("h100-2026-11-22/standard-profile.json");
	json_t *flags = flags_compute(fp);
	CHECK(!t_find_flag(flags, "ECC_DISABLED", -2) && !t_find_flag(flags, "NVLINK_DEGRADED", -2) &&
	      !t_find_flag(flags, "FIRMWARE_MISMATCH", -2) && !t_find_flag(flags, "XID", -2));
	json_decref(flags);
	/* ECC off, then an ECC change waiting for a reboot */
	json_object_set_new(json_object_get(gpu_of(fp, 0), "ecc"), "current", json_string("disabled"));
	flags = flags_compute(fp);
	CHECK_STR(sev_of(t_find_flag(flags, "ECC_DISABLED", 0)), "warning");
	json_decref(flags);
	json_object_set_new(json_object_get(gpu_of(fp, 0), "ecc"), "current", json_string("enabled"));
	json_object_set_new(json_object_get(gpu_of(fp, 0), "ecc"), "pending", json_string("disabled"));
	flags = flags_compute(fp);
	CHECK(t_find_flag(flags, "ECC_DISABLED", 0));
	json_decref(flags);
	json_object_set_new(json_object_get(gpu_of(fp, 0), "ecc"), "pending", json_string("enabled"));
	/* a lone GPU with its links down has no peers: no flag */
	json_object_set_new(gpu_of(fp, 0), "nvlink", json_pack("{s:i,s:i}", "links", 18, "links_active", 0));
	flags = flags_compute(fp);
	CHECK(!t_find_flag(flags, "NVLINK_DEGRADED", -2));
	json_decref(flags);
	/* XIDs are measurable from the kernel log alone, without the soak */
	const char *why;
	json_t *nosoak = json_deep_copy(fp);
	json_array_clear(json_object_get(nosoak, "benches"));
	CHECK(flags_measurable(nosoak, "XID", &why) == 0 && strstr(why, "kernel log"));
	json_object_set_new(json_object_get(nosoak, "inventory"), "xid_history",
			    json_pack("{s:s,s:[],s:n}", "source", "/dev/kmsg", "events", "error"));
	CHECK(flags_measurable(nosoak, "XID", &why) == 1);
	json_decref(nosoak);
	/* XIDs from the kernel log: hardware class within a day critical, older warning, app class none */
	static const struct { int xid; double age; const char *sev; } xs[] = {
		{ 79, 3600, "critical" }, { 79, 2 * 86400.0, "warning" }, { 13, 60, NULL }, { 48, -1, "critical" },
		{ 31, 10, NULL }, { 125, 86399, "critical" }, { 126, 10, NULL },
	};
	for (size_t i = 0; i < sizeof xs / sizeof xs[0]; i++) {
		json_t *ev = json_pack("{s:i,s:s,s:i}", "xid", xs[i].xid, "pci", "0000:00:06", "gpu", 0);
		if (xs[i].age >= 0)
			json_object_set_new(ev, "age_s", json_real(xs[i].age));
		else
			json_object_set_new(ev, "age_s", json_null());
		json_object_set_new(json_object_get(fp, "inventory"), "xid_history",
				    json_pack("{s:s,s:[o],s:n}", "source", "/dev/kmsg", "events", ev, "error"));
		flags = flags_compute(fp);
		const json_t *f = t_find_flag(flags, "XID", 0);
		if (!xs[i].sev)
			CHECK(!f);
		else
			CHECK_STR(sev_of(f), xs[i].sev);
		json_decref(flags);
	}
	json_decref(fp);

	/* eight GPUs: one with two links down, one with CRC errors, one with another vbios */
	fp = eight_gpus(1.0);
	for (int g = 0; g < 8; g++)
		json_object_set_new(gpu_of(fp, g), "nvlink", json_pack("{s:i,s:i,s:{s:i,s:i,s:i,s:i}}", "links", 18,
			"links_active", g == 5 ? 16 : 18, "errors", "replay", 4, "recovery", 0, "crc_flit", g == 2 ? 3 : 0,
			"crc_data", 0));
	json_object_set_new(gpu_of(fp, 6), "vbios", json_string("96.00.DA.00.0D"));
	flags = flags_compute(fp);
	CHECK_STR(sev_of(t_find_flag(flags, "NVLINK_DEGRADED", 5)), "critical");
	CHECK_STR(sev_of(t_find_flag(flags, "NVLINK_DEGRADED", 2)), "warning");
	CHECK(!t_find_flag(flags, "NVLINK_DEGRADED", 0));   /* replay errors alone are routine */
	const json_t *fw = t_find_flag(flags, "FIRMWARE_MISMATCH", -1);
	CHECK_STR(sev_of(fw), "warning");
	CHECK(fw && strstr(json_string_value(json_object_get(fw, "message")), "96.00.DA.00.0D"));
	json_decref(flags);
	json_decref(fp);
}

/* DATA_CORRUPTION from what the soak reports: soak.sdc.mismatches and the soak.sdc.mismatch series. */
static void test_data_corruption(void)
{
	for (int mism = 0; mism <= 2; mism++) {
		json_t *fp = load("h100-2026-11-22/soak-300s.json");
		CHECK(fp);
		if (!fp)
			continue;
		json_array_append_new(json_object_get(fp, "metrics"),
			json_pack("{s:s,s:s,s:i,s:f,s:s,s:{s:i,s:i}}", "bench", "soak", "name", "soak.sdc.mismatches",
				  "gpu", 0, "value", (double)mism, "unit", "count", "params", "checked", 187000,
				  "first_iteration", mism ? 91234 : -1));
		json_t *pts = json_array();
		for (int k = 0; k < mism; k++)
			json_array_append_new(pts, json_pack("[f,f]", 142.0 + k, 91234.0 + 17 * k));
		json_array_append_new(json_object_get(fp, "samples"),
			json_pack("{s:s,s:s,s:i,s:o}", "bench", "soak", "series", "soak.sdc.mismatch", "gpu", 0,
				  "points", pts));
		const char *why;
		CHECK(flags_measurable(fp, "DATA_CORRUPTION", &why) == 1);
		json_t *flags = flags_compute(fp);
		const json_t *f = t_find_flag(flags, "DATA_CORRUPTION", 0);
		if (!mism) {
			CHECK(!f);
		} else {
			CHECK(f && !strcmp(json_string_value(json_object_get(f, "severity")), "critical"));
			json_t *e = f ? json_object_get(f, "evidence") : NULL;
			CHECK_NEAR(json_number_value(json_object_get(e, "first_iteration")), 91234, 1e-9);
			CHECK(json_array_size(json_object_get(e, "iterations")) == (size_t)mism);
			CHECK(f && strstr(json_string_value(json_object_get(f, "message")), "iteration 91234"));
		}
		json_decref(flags);
		json_decref(fp);
	}
	json_t *fp = load("h100-2026-11-22/soak-300s.json");
	const char *why;
	CHECK(fp && flags_measurable(fp, "DATA_CORRUPTION", &why) == 0);
	json_decref(fp);
}

/*
 * BELOW_REFERENCE against the one reference: the H200's bf16 under a tenant (once per GPU and metric:
 * gemm.bf16.pct_of_peak restates the same measurement and raises nothing), and an edited H100.
 */
static void test_below_achievable(void)
{
	json_t *fp = load("h200-2026-11-22/duty0.25.json");
	CHECK(fp);
	json_t *flags = flags_compute(fp);
	size_t i;
	json_t *f;
	int hit = 0, below = 0;
	json_array_foreach(flags, i, f) {
		json_t *e = json_object_get(f, "evidence");
		if (strcmp(json_string_value(json_object_get(f, "code")), "BELOW_REFERENCE"))
			continue;
		below++;
		if (!strcmp(json_string_value(json_object_get(e, "metric")), "gemm.bf16.tflops")) {
			hit = 1;
			double ref;
			CHECK(gpu_reference_gemm("H200", GPU_BF16, &ref, NULL, NULL) == 0);
			CHECK_NEAR(json_number_value(json_object_get(e, "reference_value")), ref, 1e-9);
			CHECK(!strcmp(json_string_value(json_object_get(e, "reference_kind")), "measured"));
		}
	}
	CHECK(hit);
	CHECK(below == 1);
	json_decref(flags);
	json_decref(fp);
	/*
	 * edge: pinned h2d has a published floor (48 GB/s for an H100), so the floor judges it on
	 * either side of 48, as BELOW_FLOOR, and the 80 %-of-reference rule never does
	 */
	double floor;
	CHECK(gpu_reference_floor("H100-SXM", "memcpy.h2d.pinned.gbps", &floor, NULL) == 0 && floor == 48);
	for (int side = 0; side < 2; side++) {
		fp = load("h100-2026-11-22/standard-profile.json");
		const json_t *m = fpq_metric(fp, "memcpy.h2d.pinned.gbps", 0);
		CHECK(m);
		json_object_set_new((json_t *)m, "value", json_real(floor * (side ? 0.999 : 1.001)));
		flags = flags_compute(fp);
		int hit_floor = 0, hit_ref = 0;
		json_array_foreach(flags, i, f) {
			const char *code = json_string_value(json_object_get(f, "code"));
			const char *metric = json_string_value(json_object_get(json_object_get(f, "evidence"), "metric"));
			int h2d = metric && !strcmp(metric, "memcpy.h2d.pinned.gbps");
			hit_floor |= !strcmp(code, "BELOW_FLOOR") && h2d;
			hit_ref |= !strcmp(code, "BELOW_REFERENCE") && h2d;
		}
		CHECK(hit_floor == side);
		CHECK(hit_ref == 0);
		json_decref(flags);
		json_decref(fp);
	}
}

/*
 * A clean capture never reads as below its reference: every gemm.<dtype>.tflops row (each GPU and the
 * instance) of every clean capture, the burst-timed ones of 2026-11-22 (above the median reference) and
 * the steady-state ones the references are the median of (tests/unit/test_references.c), sits at or
 * over FLAG_REF_ACHIEVABLE_FRAC of its model's reference, so none raises BELOW_REFERENCE.
 */
static void test_clean_captures_above_the_reference_line(void)
{
	static const char *const clean[] = {
		"h100-2026-11-22/quick-profile.json", "h100-2026-11-22/standard-profile.json",
		"h100-2026-11-22/peer-run-fingerprint.json", "h100-2026-11-22/contention/clean-1.json",
		"h100-2026-11-22/contention/clean-2.json", "h100-2026-11-22/contention/clean-3.json",
		"h200-2026-11-22/quick-profile.json", "h200-2026-11-22/standard-profile.json",
		"h100-2026-11-25/fidelity-1/quick-5.json", "h100-2026-11-25/fidelity-1/standard.json",
		"h200-2026-11-28/peer/fingerprint-1.json", "h200-2026-11-28/jobcost/fingerprint-1.json",
		"h200-2026-11-28/quick/fingerprint.json",
	};
	int rows = 0;
	for (size_t f = 0; f < sizeof clean / sizeof clean[0]; f++) {
		json_t *fp = load(clean[f]), *m;
		const struct gpu_ref *ref = fp ? fpq_gpu_ref(fp) : NULL;
		size_t i;
		CHECK(ref != NULL);
		json_array_foreach(json_object_get(fp, "metrics"), i, m) {
			const char *name = json_string_value(json_object_get(m, "name"));
			double v = json_number_value(json_object_get(m, "value")), r;
			if (!ref || !name || strncmp(name, "gemm.", 5) || strcmp(name + strlen(name) - 7, ".tflops") ||
			    strstr(name, "best_shape"))
				continue;
			int per_gpu = json_integer_value(json_object_get(m, "gpu")) >= 0 || fpq_gpu_count(fp) == 1;
			if (!per_gpu || gpu_reference_metric(ref->key, name, &r, NULL, NULL))
				continue;
			rows++;
			if (!(v >= FLAG_REF_ACHIEVABLE_FRAC * r))
				fprintf(stderr, "%s: %s %.1f under %.2f x the %s reference %.1f\n", clean[f], name, v,
					FLAG_REF_ACHIEVABLE_FRAC, ref->key, r);
			CHECK(v >= FLAG_REF_ACHIEVABLE_FRAC * r);
		}
		json_t *flags = flags_compute(fp);
		CHECK(!t_find_flag(flags, "BELOW_REFERENCE", -2));
		json_decref(flags);
		json_decref(fp);
	}
	CHECK(rows >= 13 * 5);
}

static void test_achievable_table(void)
{
	double v;
	const char *src = NULL;
	enum gpu_ref_kind kind;
	for (size_t i = 0; i < gpu_references_count; i++) {
		const struct gpu_reference *a = &gpu_references[i];
		const struct gpu_ref *r = gpu_ref_find(a->key);
		CHECK(r);   /* every row names a model of the peak table */
		CHECK(a->source && strlen(a->source) > 20);
		for (int d = 0; r && d < GPU_DTYPE_COUNT; d++)
			CHECK(a->given_tflops[d] <= r->peak_tflops[d]);   /* achieved never above peak */
	}
	CHECK(gpu_reference_metric("H100-SXM", "gemm.bf16.tflops", &v, &kind, &src) == 0);
	CHECK(v == gpu_reference_find("H100-SXM")->given_tflops[GPU_BF16]);   /* its captures' median: test_references.c */
	CHECK(kind == GPU_REF_MEASURED);
	CHECK(src && strstr(src, "h100-2026-11-25") && strstr(src, "median"));
	CHECK(gpu_reference_metric("H100-SXM", "gemm.bf16.pct_of_peak", &v, NULL, NULL) == -1);
	CHECK(gpu_reference_metric("H100-SXM", "gemm.xx.tflops", &v, NULL, NULL) == -1);
	CHECK(gpu_reference_metric("A100-80-SXM", "gemm.bf16.tflops", &v, &kind, NULL) == 0 && kind == GPU_REF_SUSTAINED);
	CHECK(gpu_reference_metric("A100-80-SXM", "memcpy.h2d.pinned.gbps", &v, NULL, NULL) == -1); /* not measured */
	CHECK(gpu_reference_metric("H200", "soak.tflops", &v, NULL, NULL) == 0 && v > 600);
	CHECK(gpu_reference_metric(NULL, "soak.tflops", &v, NULL, NULL) == -1);
}

/* Every code has a remediation of its own, and every computed flag carries one. */
static void test_remediation(void)
{
	char buf[256], fallback[256];
	flags_remediation("NOT_A_FLAG", "warning", 0, fallback, sizeof fallback);
	for (int i = 0; flag_rows[i].code; i++) {
		CHECK(strcmp(flags_remediation(flag_rows[i].code, "warning", 3, buf, sizeof buf), fallback));
		CHECK(strstr(buf, "gpu 3"));
		CHECK(strcmp(flags_remediation(flag_rows[i].code, "critical", -1, buf, sizeof buf), fallback));
		CHECK(strstr(buf, "the gpus"));
	}
	flags_remediation("DATA_CORRUPTION", "critical", 3, buf, sizeof buf);
	CHECK_STR(buf, "drain the node and ask the provider to replace gpu 3: it computed a wrong result");
	/* an info flag asks nothing of anyone (the clean H100 at its power cap raises THROTTLE_POWER info) */
	CHECK_STR(flags_remediation("THROTTLE_POWER", "info", 0, buf, sizeof buf), "nothing: information, not a fault");
	json_t *fp = load("h100-2026-11-22/contention/loaded-1.json");
	json_t *flags = flags_compute(fp);
	size_t i;
	json_t *f;
	CHECK(json_array_size(flags) >= 2);
	json_array_foreach(flags, i, f)
		CHECK(json_is_string(json_object_get(f, "remediation")));
	json_decref(flags);
	json_decref(fp);
}

TEST_MAIN(T(test_contention_without_foreign), T(test_even_tenant_seen_twice), T(test_window_threshold_edges), T(test_contention_with_foreign_and_switch),
	  T(test_efficiency_needs_company), T(test_power_capped_gpu_is_not_shared), T(test_node_outlier),
	  T(test_data_corruption), T(test_passive_health), T(test_below_achievable), T(test_achievable_table), T(test_clean_captures_above_the_reference_line),
	  T(test_remediation))
