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
 * CONTENTION needs two independent pieces of evidence (judge/flags_contention.c);
 * a single noisy number never raises it.  The hardware's health (ECC, XID,
 * NVLink, PCIe, firmware, vGPU/MIG) is judge/flags_health.c's, BELOW_FLOOR
 * judge/flags_links.c's, HOST_STARVED judge/flags_host.c's; this file keeps
 * the codes and remedies, throttling, decay, the references, the node and
 * corruption checks, and flags_compute() that calls every family in order.
 */
#include "judge/flags.h"
#include "judge/flags_int.h"
#include "benches/bench.h"
#include "results/fpq.h"
#include "platform/inv_parse.h"
#include "common/gpus.h"
#include "common/stats.h"
#include "common/util.h"

#include <limits.h>
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
	"XID", "CPU_STEAL", "BELOW_REFERENCE", "DATA_CORRUPTION", "NODE_OUTLIER", "ECC_DISABLED",
	"NVLINK_DEGRADED", "FIRMWARE_MISMATCH", "HOST_STARVED", "BELOW_FLOOR",
	NULL,  /* new codes go above, with a row in remedies[] below */
};

/*
 * What to do about each flag, one line; "%s" becomes "gpu N" (or "the gpus" for an
 * instance-wide flag).  The critical line where the warning one would be too mild.
 */
static const struct {
	const char *code, *warning, *critical;
} remedies[] = {
	{ "THROTTLE_THERMAL", "check the node's cooling (fans, inlet air, blocked airflow) before trusting %s with long jobs",
	  "drain the node and ask the provider to fix the cooling of %s or replace it" },
	{ "THROTTLE_POWER", "ask the provider why the power limit of %s is below the model's (nvidia-smi -q -d POWER)",
	  "ask the provider why the power limit of %s is below the model's (nvidia-smi -q -d POWER)" },
	{ "THROTTLE_HW", "ask the provider to check the board and power supply of %s",
	  "drain the node and ask the provider to check the power delivery of %s or replace it" },
	{ "CLOCK_DECAY", "rerun with a longer soak; if the clock keeps falling, ask the provider to check the cooling of %s",
	  "drain the node and ask the provider to check the cooling and power of %s" },
	{ "PERF_DECAY", "rerun with a longer soak; if throughput keeps falling, ask the provider to check %s",
	  "drain the node and ask the provider to check %s: it loses throughput under sustained load" },
	{ "CONTENTION", "rerun on an idle machine; if it repeats, ask the provider whether %s is shared (time-sliced vGPU)",
	  "return the instance or ask the provider for a dedicated gpu: another tenant shares %s" },
	{ "VGPU", "expect a share of a physical gpu on %s; rent a passthrough or bare-metal type for full speed",
	  "expect a share of a physical gpu on %s; rent a passthrough or bare-metal type for full speed" },
	{ "MIG", "disable MIG on %s (nvidia-smi -mig 0, needs a reset) or rent an instance without partitions",
	  "disable MIG on %s (nvidia-smi -mig 0, needs a reset) or rent an instance without partitions" },
	{ "PCIE_DOWNGRADE", "reseat or move %s, or ask the provider to check its riser and slot",
	  "drain the node and ask the provider to check the pcie slot and riser of %s" },
	{ "ECC_ERRORS", "watch the error count of %s; ask the provider to replace it if it grows",
	  "drain the node and ask the provider to replace %s (uncorrectable memory errors)" },
	{ "ROW_REMAP_PENDING", "reset %s (nvidia-smi -r) so the memory repair applies, then rerun",
	  "reset %s (nvidia-smi -r) so the memory repair applies; if remapping failed, ask the provider to replace it" },
	{ "XID", "look up the xid in NVIDIA's xid catalog and check the application on %s",
	  "drain the node and ask the provider to replace %s (hardware xid)" },
	{ "CPU_STEAL", "rent a larger or dedicated-host instance type: the hypervisor takes cpu time from %s's host",
	  "rent a dedicated-host instance type: the hypervisor takes much cpu time from %s's host" },
	{ "BELOW_REFERENCE", "rerun; if it repeats, compare with another instance of the type and report %s to the provider",
	  "rerun; if it repeats, compare with another instance of the type and report %s to the provider" },
	{ "DATA_CORRUPTION", "drain the node and ask the provider to replace %s: it computed a wrong result",
	  "drain the node and ask the provider to replace %s: it computed a wrong result" },
	{ "ECC_DISABLED", "enable ECC on %s (nvidia-smi -e 1, then a reboot) or ask the provider to; without it memory errors go unseen",
	  "enable ECC on %s (nvidia-smi -e 1, then a reboot) or ask the provider to; without it memory errors go unseen" },
	{ "NVLINK_DEGRADED", "watch the nvlink error counters of %s (nvidia-smi nvlink -e); ask the provider to check the link if they grow",
	  "drain the node and ask the provider to repair the nvlink of %s (links down)" },
	{ "FIRMWARE_MISMATCH", "ask the provider to flash one vbios version on %s",
	  "ask the provider to flash one vbios version on %s" },
	{ "NODE_OUTLIER", "rerun; if %s still trails the others, ask the provider to check or replace it",
	  "drain the node and ask the provider to check or replace %s: it trails the node's other gpus" },
	{ "BELOW_FLOOR", "ask the provider to check the pcie slot, riser and iommu settings of %s, or the nvlink, nvswitch and "
	  "fabric manager of the node (nvidia-smi topo -m, systemctl status nvidia-fabricmanager)",
	  "drain the node: %s exchange data at pcie or host-memory speed; ask the provider to repair nvlink/nvswitch "
	  "or the fabric manager (nvidia-smi nvlink -s, systemctl status nvidia-fabricmanager)" },
	{ "HOST_STARVED", "the host cannot feed %s: stage data in /dev/shm or on local nvme, decode on the gpu (DALI, nvJPEG), or rent a type with more cores or memory bandwidth per gpu",
	  "the host cannot feed %s: stage data in /dev/shm or on local nvme, decode on the gpu (DALI, nvJPEG), or rent a type with more cores or memory bandwidth per gpu" },
};

const char *flags_remediation(const char *code, const char *severity, int gpu, char *buf, size_t len)
{
	char who[32];
	if (gpu >= 0)
		snprintf(who, sizeof who, "gpu %d", gpu);
	else
		snprintf(who, sizeof who, "the gpus");
	if (severity && !strcmp(severity, "info")) {
		/* e.g. THROTTLE_POWER info: a GPU at its full power cap under load, as it should be */
		snprintf(buf, len, "nothing: information, not a fault");
		return buf;
	}
	for (size_t i = 0; code && i < sizeof remedies / sizeof remedies[0]; i++)
		if (!strcmp(remedies[i].code, code)) {
			const char *fmt = severity && !strcmp(severity, "critical") ? remedies[i].critical :
					  remedies[i].warning;
			snprintf(buf, len, fmt, who);
			return buf;
		}
	snprintf(buf, len, "see the flag's message and evidence");
	return buf;
}

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

unsigned flags_reason_kinds(unsigned long long mask)
{
	unsigned k = 0;
	if (mask & (reasons[R_SW_THERMAL].bit | reasons[R_HW_THERMAL].bit))
		k |= FLAG_REASON_THERMAL;
	if (mask & (reasons[R_HW_SLOWDOWN].bit | reasons[R_HW_POWER_BRAKE].bit))
		k |= FLAG_REASON_HW;
	if (mask & reasons[R_SW_POWER_CAP].bit)
		k |= FLAG_REASON_POWER;
	return k;
}

int flags_cap_is_throttling(double limit_w, double power_w, double tdp_w)
{
	if (tdp_w > 0 && limit_w > 0 && limit_w < FLAG_POWER_LIMIT_MIN_FRAC * tdp_w)
		return 1;
	return limit_w > 0 && power_w > 0 && power_w < FLAG_POWER_UNDER_CAP_FRAC * limit_w;
}

int flags_metric_is_measurement(const char *name, const json_t *params)
{
	json_t *r = json_object_get(params, "ranks");
	return !(name && !strncmp(name, "allreduce.", 10) && json_is_integer(r) && json_integer_value(r) < 2);
}

const char *flags_metric_not_applicable(const char *name, int gpus)
{
	if (name && !strncmp(name, "allreduce.", 10) && gpus < 2)
		return "fewer than 2 GPUs: an all-reduce measures no link";
	return NULL;
}


int flags_mask_of(const json_t *point, double *x, unsigned long long *mask)
{
	json_t *jx = json_array_get(point, 0), *jy = json_array_get(point, 1);
	if (!json_is_number(jx) || !json_is_number(jy))
		return -1;
	double y = json_number_value(jy);
	if (!flags_reading_valid("soak.clock_events.mask", y))
		return -1;
	*x = json_number_value(jx);
	*mask = (unsigned long long)y;
	return 0;
}



double flags_series_max(const json_t *pts)
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

int flags_soak_gpu_read(const json_t *fp, int gpu, struct soak_gpu *sg)
{
	json_t *pts = flags_series(fp, "soak.clock_events.mask", gpu);   /* the readings coverage counted */
	double x0 = 0, x1 = 0, x;
	unsigned long long mask;
	size_t i;
	json_t *p;
	memset(sg, 0, sizeof *sg);
	sg->gpu = gpu;
	json_array_foreach(pts, i, p)
		if (!flags_mask_of(p, &x, &mask))
			sg->n++;
	if (!sg->n) {
		json_decref(pts);
		return -1;
	}
	fpq_series_span(pts, &x0, &x1);
	sg->period = sg->n > 1 ? (x1 - x0) / (sg->n - 1) : 1.0;
	if (!(sg->period > 0.05 && sg->period < 60))
		sg->period = 1.0;
	sg->soak_s = sg->n * sg->period;
	json_array_foreach(pts, i, p) {
		if (flags_mask_of(p, &x, &mask))
			continue;
		for (int r = 0; r < R_COUNT; r++)
			if (mask & reasons[r].bit)
				sg->bit_s[r] += sg->period;
	}
	json_decref(pts);
	sg->thermal_viol_s = flags_series_max(fpq_series(fp, "soak.throttle.thermal_s", gpu));
	sg->power_viol_s = flags_series_max(fpq_series(fp, "soak.throttle.power_s", gpu));
	return 0;
}

/* ---- building flags ---- */

void flags_add(json_t *out, const char *code, const char *severity, json_t *evidence,
		     const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	/* a figure of the whole instance (gpu -1) is said as people say it */
	if (!strncmp(msg, "gpu -1: ", 8)) {
		size_t len = strlen(msg + 8);
		if (len > sizeof msg - 11)
			len = sizeof msg - 11;
		memmove(msg + 10, msg + 8, len);   /* the tail first, then the prefix over the old one */
		msg[10 + len] = '\0';
		memcpy(msg, "all gpus: ", 10);
	}
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
	double maxtemp = flags_series_max(fpq_series(fp, "soak.temp.c", sg->gpu));

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
		flags_add(out, "THROTTLE_THERMAL", sev, e,
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
			flags_add(out, "THROTTLE_POWER", "warning", e,
				 "gpu %d: power-capped %.0f s of %.0f s at a %.0f W limit, below the model's %.0f W",
				 sg->gpu, pc, sg->soak_s, limit, tdp);
		else
			flags_add(out, "THROTTLE_POWER", "info", e,
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
		flags_add(out, "THROTTLE_HW", sev, e,
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
	flags_add(out, code, drop >= FLAG_DECAY_CRIT_PCT ? "critical" : "warning", e,
		 "gpu %d: %s fell %.1f%% from the first to the last %.0f s of the soak (%.4g -> %.4g)",
		 gpu, what, drop, window, first, last);
}

static void decay_flags(const json_t *fp, int gpu, json_t *out)
{
	double first, last, w;
	json_t *clk = flags_series(fp, "soak.sm_clock.mhz", gpu), *tf = flags_series(fp, "soak.tflops", gpu);
	if (!decay_of(clk, &first, &last, &w)) {
		decay_flag(out, "CLOCK_DECAY", "SM clock (MHz)", gpu, first, last, w, "soak.sm_clock.mhz",
			   FLAG_CLOCK_DECAY_PCT);
	} else {
		double d;
		if (!fpq_metric_value(fp, "soak.sm_clock.drop_pct", gpu, &d) && d >= FLAG_CLOCK_DECAY_PCT)
			decay_flag(out, "CLOCK_DECAY", "SM clock (%)", gpu, 100, 100 - d, FLAG_DECAY_WINDOW_S,
				   "soak.sm_clock.drop_pct", FLAG_CLOCK_DECAY_PCT);
	}
	if (!decay_of(tf, &first, &last, &w)) {
		decay_flag(out, "PERF_DECAY", "throughput (TFLOP/s)", gpu, first, last, w, "soak.tflops",
			   FLAG_PERF_DECAY_PCT);
	} else if (!fpq_metric_value(fp, "soak.tflops.first_min", gpu, &first) &&
		   !fpq_metric_value(fp, "soak.tflops.last_min", gpu, &last) && first > 0) {
		decay_flag(out, "PERF_DECAY", "throughput (TFLOP/s)", gpu, first, last, FLAG_DECAY_WINDOW_S,
			   "soak.tflops.first_min/last_min", FLAG_PERF_DECAY_PCT);
	}
	json_decref(clk);
	json_decref(tf);
}

/* A throughput its bench declares against a hardware peak (benches' metric rows): a GEMM or a PCIe copy. */
static int measured_against_peak(const char *name)
{
	const struct metric_info *mi = metric_info_find(name);
	return mi && mi->peak != METRIC_PEAK_NONE && mi->peak != METRIC_PEAK_PERCENT;
}

/*
 * BELOW_REFERENCE, once per GPU and measured throughput: a GEMM or a pinned
 * copy under FLAG_REF_ACHIEVABLE_FRAC of the model's one reference
 * (common/gpus.h gpu_reference_metric), else a pinned copy under
 * FLAG_REF_LINK_MIN_PCT of the model's PCIe link.  The derived percentages
 * (gemm.*.pct_of_peak, memcpy.*.pct_of_link) restate the same measurement
 * and raise nothing of their own.
 */
static void below_reference_flags(const json_t *fp, json_t *out)
{
	const struct gpu_ref *ref = fpq_gpu_ref(fp);
	double link = ref ? gpu_pcie_link_gbps(ref->pcie_gen, ref->pcie_width) : 0;
	size_t i;
	json_t *m;
	if (!ref)
		return;
	json_array_foreach(json_object_get(fp, "metrics"), i, m) {
		const char *name = json_string_value(json_object_get(m, "name"));
		json_t *jv = json_object_get(m, "value"), *jg = json_object_get(m, "gpu");
		if (!name || !json_is_number(jv) || !json_is_integer(jg) || json_integer_value(jg) < 0 ||
		    !measured_against_peak(name))
			continue;
		double v = json_number_value(jv), ach = 0;
		const char *src = NULL;
		enum gpu_ref_kind kind;
		int gpu = (int)json_integer_value(jg);
		int copy = !strcmp(name, "memcpy.h2d.pinned.gbps") || !strcmp(name, "memcpy.d2h.pinned.gbps");
		double floor;
		if (!gpu_reference_floor(ref->key, name, &floor, NULL))
			continue;   /* a published floor judges it (BELOW_FLOOR, flags_links.c) */
		if (!gpu_reference_metric(ref->key, name, &ach, &kind, &src)) {
			if (v < FLAG_REF_ACHIEVABLE_FRAC * ach)
				flags_add(out, "BELOW_REFERENCE", "warning",
					 json_pack("{s:i,s:s,s:f,s:f,s:f,s:s,s:s,s:s,s:{s:f}}", "gpu", gpu, "metric", name,
						   "value", v, "reference_value", ach, "fraction_of_reference", v / ach,
						   "reference", ref->key, "reference_kind", gpu_ref_kind_name(kind),
						   "reference_source", src, "thresholds", "FLAG_REF_ACHIEVABLE_FRAC",
						   FLAG_REF_ACHIEVABLE_FRAC),
					 "gpu %d: %s is %.4g, %.0f%% of the %s reference (%.4g, %s)", gpu, name, v,
					 v / ach * 100.0, ref->key, ach, gpu_ref_kind_name(kind));
		} else if (copy && link > 0 && v / link * 100.0 < FLAG_REF_LINK_MIN_PCT) {
			double pct = v / link * 100.0;
			flags_add(out, "BELOW_REFERENCE", "warning",
				 json_pack("{s:i,s:s,s:f,s:f,s:f,s:s,s:{s:f}}", "gpu", gpu, "metric", name, "value", v,
					   "reference_gbps", link, "pct_of_reference", pct, "reference", ref->key,
					   "thresholds", "FLAG_REF_LINK_MIN_PCT", FLAG_REF_LINK_MIN_PCT),
				 "gpu %d: %s is %.1f GB/s, %.0f%% of the %s's pcie gen%d x%d (%.1f GB/s)", gpu, name, v,
				 pct, ref->key, ref->pcie_gen, ref->pcie_width, link);
		}
	}
}

/* ---- a GPU that trails its node (per-GPU gemm rows) ---- */

static void node_outlier_flags(const json_t *fp, json_t *out)
{
	json_t *by = json_object(), *worst = json_object(), *m, *row;
	const char *name;
	size_t i;
	/* name -> {"gpu": value} */
	json_array_foreach(json_object_get(fp, "metrics"), i, m) {
		const char *n = json_string_value(json_object_get(m, "name"));
		json_t *jv = json_object_get(m, "value"), *jg = json_object_get(m, "gpu");
		const struct metric_info *mi = metric_info_find(n);
		if (!mi || mi->peak != METRIC_PEAK_GEMM || !json_is_number(jv) ||
		    !json_is_integer(jg) || json_integer_value(jg) < 0 || !(json_number_value(jv) > 0))
			continue;
		char key[24];
		snprintf(key, sizeof key, "%lld", (long long)json_integer_value(jg));
		if (!json_object_get(by, n))
			json_object_set_new(by, n, json_object());
		json_object_set_new(json_object_get(by, n), key, json_real(json_number_value(jv)));
	}
	/* gpu -> the dtype where it trails the best most */
	json_object_foreach(by, name, row) {
		const char *k;
		json_t *jv;
		double best = 0;
		if (json_object_size(row) < 2)
			continue;
		json_object_foreach(row, k, jv)
			if (json_real_value(jv) > best)
				best = json_real_value(jv);
		json_object_foreach(row, k, jv) {
			double v = json_real_value(jv), deficit = 1 - v / best;
			json_t *prev = json_object_get(worst, k);
			if (deficit > FLAG_NODE_OUTLIER_FRAC &&
			    (!prev || deficit > json_real_value(json_object_get(prev, "deficit_frac"))))
				json_object_set_new(worst, k, json_pack("{s:s,s:f,s:f,s:f,s:i}", "metric", name, "value", v,
					"best", best, "deficit_frac", deficit, "gpus", (int)json_object_size(row)));
		}
	}
	const char *k;
	json_t *w;
	json_object_foreach(worst, k, w) {
		long gpu = strtol(k, NULL, 10);
		double d = json_real_value(json_object_get(w, "deficit_frac"));
		json_object_set_new(w, "gpu", json_integer(gpu));
		json_object_set_new(w, "thresholds", json_pack("{s:f,s:f}", "FLAG_NODE_OUTLIER_FRAC", FLAG_NODE_OUTLIER_FRAC,
							       "FLAG_NODE_OUTLIER_CRIT_FRAC", FLAG_NODE_OUTLIER_CRIT_FRAC));
		flags_add(out, "NODE_OUTLIER", d >= FLAG_NODE_OUTLIER_CRIT_FRAC ? "critical" : "warning", json_incref(w),
			 "gpu %ld: %s %.4g is %.1f%% below the best gpu of this instance (%.4g)", gpu,
			 json_string_value(json_object_get(w, "metric")), json_real_value(json_object_get(w, "value")),
			 d * 100.0, json_real_value(json_object_get(w, "best")));
	}
	json_decref(worst);
	json_decref(by);
}

/* ---- silent data corruption: a soak result that differs from the first one ---- */

static void sdc_flags(const json_t *fp, int ngpu, json_t *out)
{
	for (int g = 0; g < ngpu; g++) {
		double mm;
		if (fpq_metric_value(fp, "soak.sdc.mismatches", g, &mm) || mm < FLAG_SDC_MIN_MISMATCHES)
			continue;
		const json_t *par = json_object_get(fpq_metric(fp, "soak.sdc.mismatches", g), "params");
		const json_t *pts = fpq_series(fp, "soak.sdc.mismatch", g);
		json_t *its = json_array(), *p;
		double checked = 0, first = -1;
		size_t i;
		json_array_foreach(pts, i, p) {
			json_t *jy = json_array_get(p, 1);
			if (json_is_number(jy)) {
				json_array_append_new(its, json_integer((json_int_t)json_number_value(jy)));
				if (first < 0 || json_number_value(jy) < first)
					first = json_number_value(jy);
			}
		}
		if (fpq_num(par, &checked, "checked", NULL))
			checked = 0;
		if (first < 0 && fpq_num(par, &first, "first_iteration", NULL))
			first = -1;
		flags_add(out, "DATA_CORRUPTION", "critical",
			 json_pack("{s:i,s:f,s:f,s:f,s:o,s:{s:i}}", "gpu", g, "mismatches", mm, "checked", checked,
				   "first_iteration", first, "iterations", its, "thresholds", "FLAG_SDC_MIN_MISMATCHES",
				   FLAG_SDC_MIN_MISMATCHES),
			 "gpu %d: %.0f of %.0f soak results differed from the first one computed from the same inputs "
			 "(first at iteration %.0f)", g, mm, checked, first);
	}
}

json_t *flags_compute(const json_t *fp)
{
	json_t *out = json_array();
	int ngpu = fpq_gpu_count(fp);
	if (!json_is_object(fp))
		return out;
	for (int g = 0; g < ngpu; g++) {
		struct soak_gpu sg;
		if (!flags_soak_gpu_read(fp, g, &sg))
			throttle_flags(fp, &sg, out);
	}
	for (int g = 0; g < ngpu; g++)
		decay_flags(fp, g, out);
	flags_contention(fp, ngpu, out);
	flags_health(fp, ngpu, out);
	below_reference_flags(fp, out);
	flags_below_floor(fp, out);
	node_outlier_flags(fp, out);
	sdc_flags(fp, ngpu, out);
	flags_host_starved(fp, out);
	json_t *f;
	size_t i;
	json_array_foreach(out, i, f) {
		char buf[256];
		json_t *g = json_object_get(json_object_get(f, "evidence"), "gpu");
		json_object_set_new(f, "remediation", json_string(flags_remediation(
			json_string_value(json_object_get(f, "code")), json_string_value(json_object_get(f, "severity")),
			json_is_integer(g) ? (int)json_integer_value(g) : -1, buf, sizeof buf)));
	}
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
	/* a series present counts only when it covers the soak (flags_evidence.c) */
	if (!strncmp(code, "THROTTLE_", 9)) {
		if (soak_ok && flags_series_covered(fp, "soak.clock_events.mask"))
			return 1;
		*why = "needs the soak bench's clock-event samples on every gpu for 90% of its seconds";
	} else if (!strcmp(code, "CLOCK_DECAY")) {
		if (soak_ok && (flags_series_covered(fp, "soak.sm_clock.mhz") ||
				(!any_series(fp, "soak.sm_clock.mhz") && any_metric(fp, "soak.sm_clock.drop_pct", ""))))
			return 1;
		*why = "needs the soak bench's sm clock samples on every gpu for 90% of its seconds";
	} else if (!strcmp(code, "PERF_DECAY")) {
		if (soak_ok && (flags_series_covered(fp, "soak.tflops") ||
				(!any_series(fp, "soak.tflops") && any_metric(fp, "soak.tflops.first_min", ""))))
			return 1;
		*why = "needs the soak bench's throughput samples on every gpu for 90% of its seconds";
	} else if (!strcmp(code, "PCIE_DOWNGRADE")) {
		double a, b;
		if (soak_ok && flags_series_covered(fp, "soak.pcie.gen") && !flags_inv_pcie_max(flags_inv_gpu(fp, 0), &a, &b))
			return 1;
		*why = "needs pcie link samples under load (soak) on every gpu for 90% of its seconds and the inventory's "
		       "link maximum";
	} else if (!strcmp(code, "XID")) {
		if (soak_ok || json_is_array(json_object_get(json_object_get(json_object_get(fp, "inventory"),
									       "xid_history"), "events")))
			return 1;
		*why = "needs the soak bench (xid events are watched during it) or a readable kernel log";
	} else if (!strcmp(code, "CONTENTION")) {
		if (soak_ok || any_metric(fp, "gemm.", ".tflops"))
			return 1;
		*why = "needs the soak or gemm bench";
	} else if (!strcmp(code, "DATA_CORRUPTION")) {
		if (soak_ok && any_metric(fp, "soak.sdc.mismatches", ""))
			return 1;
		*why = "needs the soak bench's result comparison (soak.sdc.mismatches)";
	} else if (!strcmp(code, "NODE_OUTLIER")) {
		if (fpq_gpu_count(fp) < 2)
			*why = "needs an instance with two or more gpus";
		else if (any_metric(fp, "gemm.", ".tflops"))
			return 1;
		else
			*why = "needs the gemm bench's per-gpu rows";
	} else if (!strcmp(code, "CPU_STEAL")) {
		if (any_metric(fp, "host.cpu_steal.pct", ""))
			return 1;
		*why = "needs host.cpu_steal.pct";
	} else if (!strcmp(code, "BELOW_REFERENCE")) {
		if (any_metric(fp, "gemm.", ".pct_of_peak") || any_metric(fp, "memcpy.", ".pct_of_link"))
			return 1;
		*why = "needs gemm or memcpy metrics relative to the model's reference";
	} else if (!strcmp(code, "BELOW_FLOOR")) {
		return flags_floor_measurable(fp, why);
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
