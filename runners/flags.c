/*
 * flags.c - named findings computed from a fingerprint; see flags.h.
 *
 * Throttling is decoded bit by bit from NVML's clock-event-reason mask
 * (soak.clock_events.mask, one sample per second): a second counts for
 * every reason whose bit is set, whatever else is set with it, so a
 * combined mask (power cap | HW slowdown) raises both flags.  Seconds are
 * samples x sampling period; NVML's cumulative violation counters
 * (soak.throttle.thermal_s / power_s) are read as a second witness.
 *
 * CONTENTION needs two independent pieces of evidence (see
 * contention_flags()); a single noisy number never raises it.
 */
#include "runners/flags.h"
#include "runners/fpq.h"
#include "pricing/gpus.h"
#include "runners/util.h"

#include <math.h>
#include <nvml.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

const char *const flags_codes[] = {
	"THROTTLE_THERMAL", "THROTTLE_POWER", "THROTTLE_HW", "CLOCK_DECAY", "PERF_DECAY",
	"CONTENTION", "VGPU", "MIG", "PCIE_DOWNGRADE", "ECC_ERRORS", "ROW_REMAP_PENDING",
	"XID", "CPU_STEAL", "BELOW_REFERENCE", "HOST_STARVED", NULL,
};

int flags_code_known(const char *code)
{
	for (int i = 0; flags_codes[i]; i++)
		if (!strcmp(flags_codes[i], code))
			return 1;
	return 0;
}

int flags_severity_rank(const char *s)
{
	if (!s)
		return -1;
	if (!strcmp(s, "info"))
		return 0;
	if (!strcmp(s, "warning"))
		return 1;
	if (!strcmp(s, "critical"))
		return 2;
	return -1;
}

/* ---- clock-event reasons, bit by bit (nvml.h constants) ---- */

enum reason {
	R_GPU_IDLE, R_APP_CLOCKS, R_SW_POWER_CAP, R_HW_SLOWDOWN, R_SYNC_BOOST, R_SW_THERMAL,
	R_HW_THERMAL, R_HW_POWER_BRAKE, R_DISPLAY_CLOCK, R_BOARD_LIMIT, R_RELIABILITY, R_COUNT
};

static const struct {
	unsigned long long bit;
	const char *name;
} reasons[R_COUNT] = {
	[R_GPU_IDLE] = { nvmlClocksEventReasonGpuIdle, "gpu_idle" },
	[R_APP_CLOCKS] = { nvmlClocksEventReasonApplicationsClocksSetting, "applications_clocks" },
	[R_SW_POWER_CAP] = { nvmlClocksEventReasonSwPowerCap, "sw_power_cap" },
	[R_HW_SLOWDOWN] = { nvmlClocksThrottleReasonHwSlowdown, "hw_slowdown" },
	[R_SYNC_BOOST] = { nvmlClocksEventReasonSyncBoost, "sync_boost" },
	[R_SW_THERMAL] = { nvmlClocksEventReasonSwThermalSlowdown, "sw_thermal_slowdown" },
	[R_HW_THERMAL] = { nvmlClocksThrottleReasonHwThermalSlowdown, "hw_thermal_slowdown" },
	[R_HW_POWER_BRAKE] = { nvmlClocksThrottleReasonHwPowerBrakeSlowdown, "hw_power_brake" },
	[R_DISPLAY_CLOCK] = { nvmlClocksEventReasonDisplayClockSetting, "display_clock_setting" },
	[R_BOARD_LIMIT] = { nvmlClocksEventReasonBoardLimit, "board_limit" },
	[R_RELIABILITY] = { nvmlClocksEventReasonReliability, "reliability" },
};

/* Reasons that slow a GPU for a cause other than the load itself. */
#define SLOWDOWN_BITS (nvmlClocksEventReasonSwThermalSlowdown | nvmlClocksThrottleReasonHwThermalSlowdown | \
		       nvmlClocksThrottleReasonHwSlowdown | nvmlClocksThrottleReasonHwPowerBrakeSlowdown)

static int mask_of(const json_t *point, double *x, unsigned long long *mask)
{
	json_t *jx = json_array_get(point, 0), *jy = json_array_get(point, 1);
	if (!json_is_number(jx) || !json_is_number(jy))
		return -1;
	double y = json_number_value(jy);
	if (!(y >= 0 && y < 9007199254740992.0))
		return -1;
	*x = json_number_value(jx);
	*mask = (unsigned long long)y;
	return 0;
}

/* What the soak samples of one GPU say. */
struct soak_gpu {
	int gpu;
	int n;                   /* mask samples */
	double period, soak_s;   /* seconds per sample, soak length */
	double bit_s[R_COUNT];   /* seconds each reason was active */
	double thermal_viol_s, power_viol_s;  /* NVML counters, -1 when absent */
};

static double series_max(const json_t *pts)
{
	size_t i;
	json_t *p;
	double m = -1;
	json_array_foreach(pts, i, p) {
		json_t *y = json_array_get(p, 1);
		if (json_is_number(y) && json_number_value(y) > m)
			m = json_number_value(y);
	}
	return m;
}

static int soak_gpu_read(const json_t *fp, int gpu, struct soak_gpu *sg)
{
	const json_t *pts = fpq_series(fp, "soak.clock_events.mask", gpu);
	double x0 = 0, x1 = 0, x;
	unsigned long long mask;
	size_t i;
	json_t *p;
	memset(sg, 0, sizeof *sg);
	sg->gpu = gpu;
	json_array_foreach(pts, i, p)
		if (!mask_of(p, &x, &mask))
			sg->n++;
	if (!sg->n)
		return -1;
	fpq_series_span(pts, &x0, &x1);
	sg->period = sg->n > 1 ? (x1 - x0) / (sg->n - 1) : 1.0;
	if (!(sg->period > 0.05 && sg->period < 60))
		sg->period = 1.0;
	sg->soak_s = sg->n * sg->period;
	json_array_foreach(pts, i, p) {
		if (mask_of(p, &x, &mask))
			continue;
		for (int r = 0; r < R_COUNT; r++)
			if (mask & reasons[r].bit)
				sg->bit_s[r] += sg->period;
	}
	sg->thermal_viol_s = series_max(fpq_series(fp, "soak.throttle.thermal_s", gpu));
	sg->power_viol_s = series_max(fpq_series(fp, "soak.throttle.power_s", gpu));
	return 0;
}

/* ---- building flags ---- */

static void add_flag(json_t *out, const char *code, const char *severity, json_t *evidence,
		     const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static void add_flag(json_t *out, const char *code, const char *severity, json_t *evidence,
		     const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	json_array_append_new(out, json_pack("{s:s,s:s,s:s,s:o}", "code", code, "severity", severity,
					     "message", msg, "evidence", evidence));
}

static json_t *bits_evidence(const struct soak_gpu *sg)
{
	json_t *o = json_object();
	for (int r = 0; r < R_COUNT; r++)
		if (sg->bit_s[r] > 0)
			json_object_set_new(o, reasons[r].name, json_real(sg->bit_s[r]));
	return o;
}

static json_t *soak_evidence(const struct soak_gpu *sg)
{
	json_t *e = json_pack("{s:i,s:f,s:i,s:o}", "gpu", sg->gpu, "soak_s", sg->soak_s, "samples", sg->n,
			      "reason_seconds", bits_evidence(sg));
	if (sg->thermal_viol_s >= 0)
		json_object_set_new(e, "nvml_thermal_violation_s", json_real(sg->thermal_viol_s));
	if (sg->power_viol_s >= 0)
		json_object_set_new(e, "nvml_power_violation_s", json_real(sg->power_viol_s));
	return e;
}

static void throttle_flags(const json_t *fp, const struct soak_gpu *sg, json_t *out)
{
	const struct gpu_ref *ref = fpq_gpu_ref(fp);
	double maxtemp = series_max(fpq_series(fp, "soak.temp.c", sg->gpu));

	/* THROTTLE_THERMAL: HW thermal at all, or SW thermal beyond a transient. */
	double hw = sg->bit_s[R_HW_THERMAL], sw = sg->bit_s[R_SW_THERMAL];
	double swv = sw > sg->thermal_viol_s ? sw : sg->thermal_viol_s;
	const char *sev = NULL;
	if (hw >= FLAG_HW_MIN_S)
		sev = "critical";
	else if (swv >= FLAG_THERMAL_MIN_S)
		sev = swv >= FLAG_THERMAL_SW_CRIT_FRAC * sg->soak_s ? "critical" : "warning";
	if (sev) {
		json_t *e = soak_evidence(sg);
		json_object_set_new(e, "max_temp_c", json_real(maxtemp));
		json_object_set_new(e, "thresholds", json_pack("{s:f,s:f,s:f}", "FLAG_HW_MIN_S", FLAG_HW_MIN_S,
			"FLAG_THERMAL_MIN_S", FLAG_THERMAL_MIN_S, "FLAG_THERMAL_SW_CRIT_FRAC", FLAG_THERMAL_SW_CRIT_FRAC));
		add_flag(out, "THROTTLE_THERMAL", sev, e,
			 "gpu %d: thermal slowdown (hw %.0f s, sw %.0f s) during a %.0f s soak, max %.0f C",
			 sg->gpu, hw, swv, sg->soak_s, maxtemp);
	}

	/* THROTTLE_POWER: the power cap; worth more than info only when the limit is below the model's TDP. */
	double pc = sg->bit_s[R_SW_POWER_CAP];
	if (sg->power_viol_s > pc)
		pc = sg->power_viol_s;
	if (pc >= FLAG_POWER_MIN_S) {
		double limit = 0, power = 0, x0 = 0, x1 = 0;
		int n;
		const json_t *lp = fpq_series(fp, "soak.power_limit.w", sg->gpu);
		const json_t *pp = fpq_series(fp, "soak.power.w", sg->gpu);
		if (fpq_series_span(lp, &x0, &x1) || fpq_series_median(lp, x0, x1, &limit, &n))
			limit = 0;
		if (fpq_series_span(pp, &x0, &x1) || fpq_series_median(pp, x0, x1, &power, &n))
			power = 0;
		double tdp = ref ? ref->tdp_w : 0;
		int capped = tdp > 0 && limit > 0 && limit < FLAG_POWER_LIMIT_MIN_FRAC * tdp;
		json_t *e = soak_evidence(sg);
		json_object_set_new(e, "power_limit_w", json_real(limit));
		json_object_set_new(e, "median_power_w", json_real(power));
		json_object_set_new(e, "reference_tdp_w", json_real(tdp));
		json_object_set_new(e, "thresholds", json_pack("{s:f,s:f}", "FLAG_POWER_MIN_S", FLAG_POWER_MIN_S,
			"FLAG_POWER_LIMIT_MIN_FRAC", FLAG_POWER_LIMIT_MIN_FRAC));
		if (capped)
			add_flag(out, "THROTTLE_POWER", "warning", e,
				 "gpu %d: power-capped %.0f s of %.0f s at a %.0f W limit, below the model's %.0f W",
				 sg->gpu, pc, sg->soak_s, limit, tdp);
		else
			add_flag(out, "THROTTLE_POWER", "info", e,
				 "gpu %d: at its power limit (%.0f W) %.0f s of %.0f s, normal under full load",
				 sg->gpu, limit, pc, sg->soak_s);
	}

	/* THROTTLE_HW: HW slowdown / power brake are faults; board limit / reliability are policy. */
	double hs = sg->bit_s[R_HW_SLOWDOWN], pb = sg->bit_s[R_HW_POWER_BRAKE];
	double bl = sg->bit_s[R_BOARD_LIMIT], rl = sg->bit_s[R_RELIABILITY];
	sev = NULL;
	if (hs >= FLAG_HW_MIN_S || pb >= FLAG_HW_MIN_S)
		sev = "critical";
	else if (bl >= FLAG_HW_MIN_S || rl >= FLAG_HW_MIN_S)
		sev = "warning";
	if (sev) {
		json_t *e = soak_evidence(sg);
		json_object_set_new(e, "thresholds", json_pack("{s:f}", "FLAG_HW_MIN_S", FLAG_HW_MIN_S));
		add_flag(out, "THROTTLE_HW", sev, e,
			 "gpu %d: hardware slowdown %.0f s, power brake %.0f s, board limit %.0f s, reliability %.0f s of %.0f s",
			 sg->gpu, hs, pb, bl, rl, sg->soak_s);
	}
}

/* ---- decay: last window against first ---- */

static int decay_of(const json_t *pts, double *first, double *last, double *window)
{
	double x0 = 0, x1 = 0;
	int n1, n2;
	if (fpq_series_span(pts, &x0, &x1))
		return -1;
	double dur = x1 - x0, w = FLAG_DECAY_WINDOW_S;
	if (dur < FLAG_DECAY_MIN_SOAK_S)
		return -1;
	if (dur < 2 * w)
		w = dur / 3;
	if (fpq_series_median(pts, x0, x0 + w - 1e-9, first, &n1) ||
	    fpq_series_median(pts, x1 - w + 1e-9, x1, last, &n2) || !(*first > 0))
		return -1;
	*window = w;
	return 0;
}

static void decay_flag(json_t *out, const char *code, const char *what, int gpu, double first, double last,
		       double window, const char *source, double warn_pct)
{
	double drop = (first - last) / first * 100.0;
	if (!(drop >= warn_pct))
		return;
	json_t *e = json_pack("{s:i,s:f,s:f,s:f,s:s,s:f,s:{s:f,s:f}}", "gpu", gpu, "first", first, "last", last,
			      "drop_pct", drop, "source", source, "window_s", window, "thresholds",
			      "warn_pct", warn_pct, "FLAG_DECAY_CRIT_PCT", FLAG_DECAY_CRIT_PCT);
	add_flag(out, code, drop >= FLAG_DECAY_CRIT_PCT ? "critical" : "warning", e,
		 "gpu %d: %s fell %.1f%% from the first to the last %.0f s of the soak (%.4g -> %.4g)",
		 gpu, what, drop, window, first, last);
}

static void decay_flags(const json_t *fp, int gpu, json_t *out)
{
	double first, last, w;
	if (!decay_of(fpq_series(fp, "soak.sm_clock.mhz", gpu), &first, &last, &w)) {
		decay_flag(out, "CLOCK_DECAY", "SM clock (MHz)", gpu, first, last, w, "soak.sm_clock.mhz",
			   FLAG_CLOCK_DECAY_PCT);
	} else {
		double d;
		if (!fpq_metric_value(fp, "soak.sm_clock.drop_pct", gpu, &d) && d >= FLAG_CLOCK_DECAY_PCT)
			decay_flag(out, "CLOCK_DECAY", "SM clock (%)", gpu, 100, 100 - d, FLAG_DECAY_WINDOW_S,
				   "soak.sm_clock.drop_pct", FLAG_CLOCK_DECAY_PCT);
	}
	if (!decay_of(fpq_series(fp, "soak.tflops", gpu), &first, &last, &w)) {
		decay_flag(out, "PERF_DECAY", "throughput (TFLOP/s)", gpu, first, last, w, "soak.tflops",
			   FLAG_PERF_DECAY_PCT);
	} else if (!fpq_metric_value(fp, "soak.tflops.first_min", gpu, &first) &&
		   !fpq_metric_value(fp, "soak.tflops.last_min", gpu, &last) && first > 0) {
		decay_flag(out, "PERF_DECAY", "throughput (TFLOP/s)", gpu, first, last, FLAG_DECAY_WINDOW_S,
			   "soak.tflops.first_min/last_min", FLAG_PERF_DECAY_PCT);
	}
}

/* ---- inventory ---- */

static const json_t *inv_gpu(const json_t *fp, int gpu)
{
	size_t i;
	json_t *g;
	double idx;
	json_array_foreach(fpq_gpus(fp), i, g)
		if (!fpq_num(g, &idx, "index", NULL) && (int)idx == gpu)
			return g;
	return gpu >= 0 ? json_array_get(fpq_gpus(fp), (size_t)gpu) : NULL;
}

static int inv_pcie_max(const json_t *g, double *gen, double *width)
{
	if (fpq_num(g, gen, "pcie.max_gen", "pcie.gen_max", "pcie.link_gen_max", "pcie.max_link_gen",
		    "pcie_gen_max", "pcie_max_gen", NULL))
		return -1;
	if (fpq_num(g, width, "pcie.max_width", "pcie.width_max", "pcie.link_width_max", "pcie.max_link_width",
		    "pcie_width_max", "pcie_max_width", NULL))
		return -1;
	return 0;
}

static int inv_is_vgpu(const json_t *g)
{
	const char *s = fpq_str(g, "virtualization_mode", "virtualization.mode", "virtualization", NULL);
	double v;
	if (s)
		return strcasestr(s, "vgpu") && !strcasestr(s, "host");
	/* nvmlGpuVirtualizationMode_t: NVML_GPU_VIRTUALIZATION_MODE_VGPU = 2 */
	return !fpq_num(g, &v, "virtualization_mode", "virtualization.mode", NULL) && (int)v == 2;
}

static int inv_is_mig(const json_t *g)
{
	double v;
	return !fpq_num(g, &v, "mig.current", "mig_mode.current", "mig.current_mode", "mig_mode", "mig.enabled",
			"mig", NULL) && v > 0;
}

static void pcie_flag(const json_t *fp, int gpu, json_t *out)
{
	const json_t *gp = fpq_series(fp, "soak.pcie.gen", gpu), *wp = fpq_series(fp, "soak.pcie.width", gpu);
	double maxgen, maxw, gen, w, x0 = 0, x1 = 0;
	int n;
	if (inv_pcie_max(inv_gpu(fp, gpu), &maxgen, &maxw))
		return;
	if (fpq_series_span(gp, &x0, &x1) || fpq_series_median(gp, x0, x1, &gen, &n))
		return;
	if (fpq_series_span(wp, &x0, &x1) || fpq_series_median(wp, x0, x1, &w, &n))
		return;
	if (gen >= maxgen && w >= maxw)
		return;
	json_t *e = json_pack("{s:i,s:f,s:f,s:f,s:f,s:f,s:f}", "gpu", gpu, "gen_under_load", gen, "width_under_load", w,
			      "gen_max", maxgen, "width_max", maxw, "gen_seen_max", series_max(gp),
			      "width_seen_max", series_max(wp));
	add_flag(out, "PCIE_DOWNGRADE", "critical", e,
		 "gpu %d: pcie link under load gen%.0f x%.0f, below its maximum gen%.0f x%.0f",
		 gpu, gen, w, maxgen, maxw);
}

static void health_flags(const json_t *fp, json_t *out)
{
	size_t i;
	json_t *g;
	json_array_foreach(fpq_gpus(fp), i, g) {
		double idx, uv = 0, ua = 0, cv = 0, rp = 0, rf = 0, pp = 0;
		int gpu = !fpq_num(g, &idx, "index", NULL) ? (int)idx : (int)i;
		int huv = !fpq_num(g, &uv, "ecc.volatile.uncorrected", "ecc.volatile_uncorrected",
				   "ecc.uncorrected_volatile", NULL);
		int hua = !fpq_num(g, &ua, "ecc.aggregate.uncorrected", "ecc.aggregate_uncorrected",
				   "ecc.uncorrected_aggregate", NULL);
		int hcv = !fpq_num(g, &cv, "ecc.volatile.corrected", "ecc.volatile_corrected",
				   "ecc.corrected_volatile", NULL);
		const char *sev = huv && uv > 0 ? "critical" : hua && ua > 0 ? "warning" :
				  hcv && cv >= FLAG_ECC_CORRECTED_WARN ? "warning" : NULL;
		if (sev)
			add_flag(out, "ECC_ERRORS", sev,
				 json_pack("{s:i,s:f,s:f,s:f,s:{s:f}}", "gpu", gpu, "volatile_uncorrected", uv,
					   "aggregate_uncorrected", ua, "volatile_corrected", cv, "thresholds",
					   "FLAG_ECC_CORRECTED_WARN", FLAG_ECC_CORRECTED_WARN),
				 "gpu %d: ecc errors: %.0f uncorrected since boot, %.0f uncorrected lifetime, %.0f corrected since boot",
				 gpu, uv, ua, cv);

		int hrp = !fpq_num(g, &rp, "remapped_rows.pending", "row_remap.pending", "remapped_rows_pending", NULL);
		int hrf = !fpq_num(g, &rf, "remapped_rows.failure", "row_remap.failure", "remapped_rows_failure", NULL);
		int hpp = !fpq_num(g, &pp, "retired_pages.pending", "retired_pages_pending", "page_retirement.pending",
				   NULL);
		if ((hrp && rp > 0) || (hrf && rf > 0) || (hpp && pp > 0))
			add_flag(out, "ROW_REMAP_PENDING", "critical",
				 json_pack("{s:i,s:f,s:f,s:f}", "gpu", gpu, "remap_pending", rp, "remap_failure", rf,
					   "retired_pages_pending", pp),
				 "gpu %d: %s", gpu,
				 hrf && rf > 0 ? "row remapping failed: the card needs service" :
				 "memory repair pending: a GPU reset is needed before the fix applies");

		if (inv_is_vgpu(g))
			add_flag(out, "VGPU", "warning", json_pack("{s:i,s:s}", "gpu", gpu, "virtualization_mode",
				 fpq_str(g, "virtualization_mode", "virtualization.mode", "virtualization", NULL) ?
				 fpq_str(g, "virtualization_mode", "virtualization.mode", "virtualization", NULL) : "vgpu"),
				 "gpu %d: vgpu guest: a time-sliced or partitioned share of a physical gpu", gpu);
		if (inv_is_mig(g))
			add_flag(out, "MIG", "warning", json_pack("{s:i,s:b}", "gpu", gpu, "mig_enabled", 1),
				 "gpu %d: mig mode enabled: this instance sees a partition of the gpu", gpu);
	}
}

/* XIDs commonly raised by the application rather than the hardware. */
static int xid_is_app(int code)
{
	return code == 13 || code == 31 || code == 43 || code == 45;
}

static int xid_flag(const json_t *fp, int gpu, json_t *out)
{
	const json_t *pts = fpq_series(fp, "soak.xid", gpu);
	double count = 0;
	int hw = 0;
	size_t i;
	json_t *p;
	if (fpq_metric_value(fp, "soak.xid.count", gpu, &count))
		count = 0;
	if ((double)json_array_size(pts) > count)
		count = (double)json_array_size(pts);
	if (!(count > 0))
		return 0;
	json_t *codes = json_array();
	json_array_foreach(pts, i, p) {
		json_t *y = json_array_get(p, 1);
		if (json_is_number(y)) {
			int c = (int)json_number_value(y);
			json_array_append_new(codes, json_integer(c));
			if (!xid_is_app(c))
				hw = 1;
		}
	}
	if (!json_array_size(codes))
		hw = 1;  /* codes unknown: assume the worst */
	add_flag(out, "XID", hw ? "critical" : "warning",
		 json_pack("{s:i,s:f,s:o}", "gpu", gpu, "count", count, "codes", codes),
		 "gpu %d: %.0f xid event(s) during the run%s", gpu, count,
		 hw ? "" : " (application-class codes only)");
	return 1;
}

static void steal_flag(const json_t *fp, json_t *out)
{
	double st;
	if (fpq_metric_value(fp, "host.cpu_steal.pct", -1, &st) || st < FLAG_STEAL_WARN_PCT)
		return;
	add_flag(out, "CPU_STEAL", st >= FLAG_STEAL_CRIT_PCT ? "critical" : "warning",
		 json_pack("{s:i,s:f,s:f,s:{s:f,s:f}}", "gpu", -1, "steal_pct", st, "max_per_second_pct",
			   series_max(fpq_series(fp, "host.cpu_steal.pct", -1)), "thresholds",
			   "FLAG_STEAL_WARN_PCT", FLAG_STEAL_WARN_PCT, "FLAG_STEAL_CRIT_PCT", FLAG_STEAL_CRIT_PCT),
		 "hypervisor steal took %.1f%% of cpu time during the run", st);
}

static void below_reference_flags(const json_t *fp, json_t *out)
{
	const struct gpu_ref *ref = fpq_gpu_ref(fp);
	double link = ref ? pcie_link_gbps(ref->pcie_gen, ref->pcie_width) : 0;
	size_t i;
	json_t *m;
	json_array_foreach(json_object_get(fp, "metrics"), i, m) {
		const char *name = json_string_value(json_object_get(m, "name"));
		json_t *jv = json_object_get(m, "value"), *jg = json_object_get(m, "gpu");
		if (!name || !json_is_number(jv) || !json_is_integer(jg))
			continue;
		double v = json_number_value(jv);
		int gpu = (int)json_integer_value(jg);
		size_t len = strlen(name);
		if (!strncmp(name, "gemm.", 5) && len > 17 && !strcmp(name + len - 12, ".pct_of_peak")) {
			if (v < FLAG_REF_GEMM_MIN_PCT)
				add_flag(out, "BELOW_REFERENCE", "warning",
					 json_pack("{s:i,s:s,s:f,s:s,s:{s:f}}", "gpu", gpu, "metric", name, "value", v,
						   "reference", ref ? ref->key : "run's gpu model", "thresholds",
						   "FLAG_REF_GEMM_MIN_PCT", FLAG_REF_GEMM_MIN_PCT),
					 "gpu %d: %s is %.1f%% of the model's peak, under %.0f%%", gpu, name, v,
					 FLAG_REF_GEMM_MIN_PCT);
		} else if (!strcmp(name, "memcpy.h2d.pct_of_link") || !strcmp(name, "memcpy.d2h.pct_of_link")) {
			if (v < FLAG_REF_LINK_MIN_PCT)
				add_flag(out, "BELOW_REFERENCE", "warning",
					 json_pack("{s:i,s:s,s:f,s:{s:f}}", "gpu", gpu, "metric", name, "value", v,
						   "thresholds", "FLAG_REF_LINK_MIN_PCT", FLAG_REF_LINK_MIN_PCT),
					 "gpu %d: %s is %.1f%% of the pcie link rate, under %.0f%%", gpu, name, v,
					 FLAG_REF_LINK_MIN_PCT);
		} else if (link > 0 && (!strcmp(name, "memcpy.h2d.pinned.gbps") ||
					!strcmp(name, "memcpy.d2h.pinned.gbps"))) {
			double pct = v / link * 100.0;
			if (pct < FLAG_REF_LINK_MIN_PCT)
				add_flag(out, "BELOW_REFERENCE", "warning",
					 json_pack("{s:i,s:s,s:f,s:f,s:f,s:s,s:{s:f}}", "gpu", gpu, "metric", name,
						   "value", v, "reference_gbps", link, "pct_of_reference", pct,
						   "reference", ref->key, "thresholds", "FLAG_REF_LINK_MIN_PCT",
						   FLAG_REF_LINK_MIN_PCT),
					 "gpu %d: %s is %.1f GB/s, %.0f%% of the %s's pcie gen%d x%d (%.1f GB/s)",
					 gpu, name, v, pct, ref->key, ref->pcie_gen, ref->pcie_width, link);
		}
	}
}

/* ---- contention ---- */

/*
 * Signals, each judged on its own series:
 *   foreign   another compute process held the GPU during the soak (soak.foreign_procs.count)
 *   spread    a gemm metric's repetition spread > FLAG_CONTENTION_SPREAD
 *   dips      >= FLAG_DIP_MIN_EPISODES separate seconds-long dips of soak.tflops below
 *             (1 - FLAG_DIP_FRAC) x median, at most FLAG_DIP_MAX_THROTTLED of them throttled
 *   low       soak.tflops median < FLAG_CONTENTION_LOW_FRAC x the model's BF16 peak while
 *             no thermal/HW slowdown was active (clocks were free, SMs were not)
 *   steal     host.cpu_steal.pct >= FLAG_CONTENTION_STEAL_PCT
 *   vgpu      the GPU is a vGPU guest
 * Rule: foreign + any other signal: critical; foreign alone: warning (a process holds the GPU,
 * no symptom seen); without foreign, two or more other signals: warning; else nothing.
 */
struct xm {
	double x;
	unsigned long long mask;
};

static int cmp_xm(const void *a, const void *b)
{
	double x = ((const struct xm *)a)->x, y = ((const struct xm *)b)->x;
	return (x > y) - (x < y);
}

/* Whether a slowdown reason was active in the sample nearest x (within half a second). */
static int slowed_at(const struct xm *v, size_t n, double x)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (v[mid].x < x - 0.5)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i < n && v[i].x <= x + 0.5; i++)
		if (fabs(v[i].x - x) < 0.5 && (v[i].mask & SLOWDOWN_BITS))
			return 1;
	return 0;
}

static void dips_signal(const json_t *fp, int gpu, json_t *signals)
{
	const json_t *pts = fpq_series(fp, "soak.tflops", gpu), *mpts = fpq_series(fp, "soak.clock_events.mask", gpu);
	double x0 = 0, x1 = 0, med;
	int n;
	if (fpq_series_span(pts, &x0, &x1) || fpq_series_median(pts, x0, x1, &med, &n) || n < 10 || !(med > 0))
		return;
	size_t nm = 0, i;
	json_t *p;
	struct xm *masks = gv_malloc((json_array_size(mpts) + 1) * sizeof *masks);
	json_array_foreach(mpts, i, p)
		if (!mask_of(p, &masks[nm].x, &masks[nm].mask))
			nm++;
	qsort(masks, nm, sizeof *masks, cmp_xm);
	int episodes = 0, in_dip = 0, dip_s = 0, throttled = 0;
	double first_start = 0, last_start = 0;
	json_array_foreach(pts, i, p) {
		json_t *jx = json_array_get(p, 0), *jy = json_array_get(p, 1);
		if (!json_is_number(jx) || !json_is_number(jy))
			continue;
		double x = json_number_value(jx);
		int dip = json_number_value(jy) < (1 - FLAG_DIP_FRAC) * med;
		if (dip) {
			dip_s++;
			if (!in_dip) {
				if (!episodes)
					first_start = x;
				last_start = x;
				episodes++;
			}
			throttled += slowed_at(masks, nm, x);
		}
		in_dip = dip;
	}
	free(masks);
	if (episodes >= FLAG_DIP_MIN_EPISODES && throttled <= FLAG_DIP_MAX_THROTTLED * dip_s)
		json_array_append_new(signals, json_pack("{s:s,s:i,s:i,s:i,s:i,s:f,s:f}", "signal", "dips", "gpu", gpu,
			"episodes", episodes, "dip_seconds", dip_s, "throttled_dip_seconds", throttled,
			"median_tflops", med, "mean_interval_s",
			episodes > 1 ? (last_start - first_start) / (episodes - 1) : 0.0));
}

static void low_signal(const json_t *fp, int gpu, const struct soak_gpu *sg, json_t *signals)
{
	const struct gpu_ref *ref = fpq_gpu_ref(fp);
	const json_t *pts = fpq_series(fp, "soak.tflops", gpu);
	double x0 = 0, x1 = 0, med, slow = 0;
	int n;
	if (!ref || fpq_series_span(pts, &x0, &x1) || fpq_series_median(pts, x0, x1, &med, &n))
		return;
	/* the soak's dtype (params of its first-window metric), else BF16, else FP16 */
	const char *dts = json_string_value(json_object_get(json_object_get(fpq_metric(fp, "soak.tflops.first_min", gpu),
									       "params"), "dtype"));
	int dt = dts ? gpu_dtype_from_name(dts) : -1;
	double peak = dt >= 0 && ref->peak_tflops[dt] > 0 ? ref->peak_tflops[dt] :
		      ref->peak_tflops[GPU_BF16] > 0 ? ref->peak_tflops[GPU_BF16] : ref->peak_tflops[GPU_FP16];
	if (!(peak > 0))
		return;
	if (sg)
		slow = sg->bit_s[R_SW_THERMAL] + sg->bit_s[R_HW_THERMAL] + sg->bit_s[R_HW_SLOWDOWN] +
		       sg->bit_s[R_HW_POWER_BRAKE];
	if (med < FLAG_CONTENTION_LOW_FRAC * peak && slow < FLAG_HW_MIN_S)
		json_array_append_new(signals, json_pack("{s:s,s:i,s:f,s:f,s:f}", "signal", "low", "gpu", gpu,
			"median_tflops", med, "peak_tflops", peak, "slowdown_s", slow));
}

static void contention_flags(const json_t *fp, int ngpu, json_t *out)
{
	json_t *signals = json_array();
	int foreign = 0, others = 0;
	size_t i;
	json_t *m;
	for (int g = -1; g < ngpu; g++) {
		double f;
		if (!fpq_metric_value(fp, "soak.foreign_procs.count", g, &f) && f > 0) {
			json_array_append_new(signals, json_pack("{s:s,s:i,s:f}", "signal", "foreign", "gpu", g,
								 "processes", f));
			foreign = 1;
		}
	}
	json_array_foreach(json_object_get(fp, "metrics"), i, m) {
		const char *name = json_string_value(json_object_get(m, "name"));
		double sp;
		json_t *pm = json_object_get(m, "params");
		/* burst-timed runs (before steady timing) carry "spread"; steady ones "batch_spread" */
		int hit = !fpq_num(pm, &sp, "spread", NULL) ? sp > FLAG_CONTENTION_SPREAD
			  : !fpq_num(pm, &sp, "batch_spread", NULL) && sp > FLAG_CONTENTION_BATCH_SPREAD;
		if (name && !strncmp(name, "gemm.", 5) && hit) {
			json_t *jg = json_object_get(m, "gpu");
			json_array_append_new(signals, json_pack("{s:s,s:I,s:s,s:f}", "signal", "spread", "gpu",
				json_is_integer(jg) ? json_integer_value(jg) : -1, "metric", name, "spread", sp));
		}
	}
	for (int g = 0; g < ngpu; g++) {
		struct soak_gpu sg;
		int have = !soak_gpu_read(fp, g, &sg);
		dips_signal(fp, g, signals);
		low_signal(fp, g, have ? &sg : NULL, signals);
	}
	double st;
	if (!fpq_metric_value(fp, "host.cpu_steal.pct", -1, &st) && st >= FLAG_CONTENTION_STEAL_PCT)
		json_array_append_new(signals, json_pack("{s:s,s:i,s:f}", "signal", "steal", "gpu", -1, "steal_pct", st));
	json_t *g;
	json_array_foreach(fpq_gpus(fp), i, g)
		if (inv_is_vgpu(g)) {
			json_array_append_new(signals, json_pack("{s:s,s:I}", "signal", "vgpu", "gpu", (json_int_t)i));
			break;
		}
	/* count kinds of signal, not instances: eight GPUs with spread are one piece of evidence */
	const char *kinds[] = { "spread", "dips", "low", "steal", "vgpu" };
	for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
		json_t *s;
		json_array_foreach(signals, i, s)
			if (!strcmp(json_string_value(json_object_get(s, "signal")), kinds[k])) {
				others++;
				break;
			}
	}
	const char *sev = foreign ? (others ? "critical" : "warning") : others >= 2 ? "warning" : NULL;
	if (!sev) {
		json_decref(signals);
		return;
	}
	json_t *e = json_pack("{s:i,s:o,s:{s:f,s:f,s:i,s:f,s:f,s:f}}", "gpu", -1, "signals", signals, "thresholds",
		"FLAG_CONTENTION_SPREAD", FLAG_CONTENTION_SPREAD, "FLAG_DIP_FRAC", FLAG_DIP_FRAC,
		"FLAG_DIP_MIN_EPISODES", FLAG_DIP_MIN_EPISODES, "FLAG_DIP_MAX_THROTTLED", FLAG_DIP_MAX_THROTTLED,
		"FLAG_CONTENTION_STEAL_PCT", FLAG_CONTENTION_STEAL_PCT, "FLAG_CONTENTION_LOW_FRAC",
		FLAG_CONTENTION_LOW_FRAC);
	add_flag(out, "CONTENTION", sev, e, "%s (%d other kind(s) of evidence)",
		 foreign ? "other compute processes used the gpu during the run" :
			   "the gpu behaved as if shared", others);
}

json_t *flags_compute(const json_t *fp)
{
	json_t *out = json_array();
	int ngpu = fpq_gpu_count(fp);
	if (!json_is_object(fp))
		return out;
	for (int g = 0; g < ngpu; g++) {
		struct soak_gpu sg;
		if (!soak_gpu_read(fp, g, &sg))
			throttle_flags(fp, &sg, out);
	}
	for (int g = 0; g < ngpu; g++)
		decay_flags(fp, g, out);
	contention_flags(fp, ngpu, out);
	health_flags(fp, out);
	for (int g = 0; g < ngpu; g++)
		pcie_flag(fp, g, out);
	int any_xid = 0;
	for (int g = 0; g < ngpu; g++)
		any_xid |= xid_flag(fp, g, out);
	if (!any_xid)
		xid_flag(fp, -1, out);
	steal_flag(fp, out);
	below_reference_flags(fp, out);
	flags_host_starved(fp, out);
	return out;
}

/* ---- what each code needs ---- */

static int any_series(const json_t *fp, const char *series)
{
	int n = fpq_gpu_count(fp);
	for (int g = -1; g < n; g++)
		if (json_array_size(fpq_series(fp, series, g)))
			return 1;
	return 0;
}

static int any_metric(const json_t *fp, const char *prefix, const char *suffix)
{
	size_t i, lp = strlen(prefix), ls = strlen(suffix);
	json_t *m;
	json_array_foreach(json_object_get(fp, "metrics"), i, m) {
		const char *n = json_string_value(json_object_get(m, "name"));
		size_t ln = n ? strlen(n) : 0;
		if (n && ln >= lp + ls && !strncmp(n, prefix, lp) && !strcmp(n + ln - ls, suffix))
			return 1;
	}
	return 0;
}

int flags_measurable(const json_t *fp, const char *code, const char **why)
{
	const char *soak = fpq_bench_status(fp, "soak", NULL);
	int soak_ok = soak && !strcmp(soak, "ok");
	*why = NULL;
	if (!flags_code_known(code))
		return -1;
	if (!strncmp(code, "THROTTLE_", 9)) {
		if (soak_ok && any_series(fp, "soak.clock_events.mask"))
			return 1;
		*why = "needs the soak bench's clock-event samples";
	} else if (!strcmp(code, "CLOCK_DECAY")) {
		if (soak_ok && (any_series(fp, "soak.sm_clock.mhz") || any_metric(fp, "soak.sm_clock.drop_pct", "")))
			return 1;
		*why = "needs the soak bench's sm clock samples";
	} else if (!strcmp(code, "PERF_DECAY")) {
		if (soak_ok && (any_series(fp, "soak.tflops") || any_metric(fp, "soak.tflops.first_min", "")))
			return 1;
		*why = "needs the soak bench's throughput samples";
	} else if (!strcmp(code, "PCIE_DOWNGRADE")) {
		double a, b;
		if (soak_ok && any_series(fp, "soak.pcie.gen") && !inv_pcie_max(inv_gpu(fp, 0), &a, &b))
			return 1;
		*why = "needs pcie link samples under load (soak) and the inventory's link maximum";
	} else if (!strcmp(code, "XID")) {
		if (soak_ok)
			return 1;
		*why = "needs the soak bench (xid events are watched during it)";
	} else if (!strcmp(code, "CONTENTION")) {
		if (soak_ok || any_metric(fp, "gemm.", ".tflops"))
			return 1;
		*why = "needs the soak or gemm bench";
	} else if (!strcmp(code, "CPU_STEAL")) {
		if (any_metric(fp, "host.cpu_steal.pct", ""))
			return 1;
		*why = "needs host.cpu_steal.pct";
	} else if (!strcmp(code, "BELOW_REFERENCE")) {
		if (any_metric(fp, "gemm.", ".pct_of_peak") || any_metric(fp, "memcpy.", ".pct_of_link"))
			return 1;
		*why = "needs gemm or memcpy metrics relative to the model's reference";
	} else if (!strcmp(code, "HOST_STARVED")) {
		if ((any_metric(fp, "host.decode.images_per_s", "") || any_metric(fp, "host.membw.triad.gbps", "")) &&
		    fpq_gpu_count(fp) > 0 && flags_host_need_ips(fpq_gpu_ref(fp)) > 0)
			return 1;
		*why = "needs the host bench and gpus of a model in the reference table";
	} else {  /* ECC_ERRORS, ROW_REMAP_PENDING, VGPU, MIG: the inventory's GPUs */
		if (json_array_size(fpq_gpus(fp)))
			return 1;
		*why = "needs gpus in the inventory";
	}
	return 0;
}
