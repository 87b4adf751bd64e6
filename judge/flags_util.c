/*
 * flags_util.c - what the flag files share, below all of them (flags_int.h):
 * the clock-event reasons bit by bit, one GPU's soak samples, the
 * inventory's GPU objects, and flags_add(), the one way a rule raises a
 * flag.  It calls nothing of judge/flags*.c but the readings
 * (flags_evidence.c); the families (flags_health.c, flags_contention.c,
 * flags_links.c, flags_host.c) call down to it, the table of codes
 * (flags_table.c) calls down to them, and flags.c's flags_compute() sits on
 * top: no circle.
 */
#include "judge/flags.h"
#include "judge/flags_int.h"
#include "results/fpq.h"
#include "common/util.h"

#include <math.h>
#include <nvml.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

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
	sg->thermal_viol_s = flags_series_max(flags_raw_series(fp, "soak.throttle.thermal_s", gpu));
	sg->power_viol_s = flags_series_max(flags_raw_series(fp, "soak.throttle.power_s", gpu));
	return 0;
}

const char *flags_reason_name(int r)
{
	return r >= 0 && r < R_COUNT ? reasons[r].name : "?";
}

/* ---- the inventory's GPUs ---- */

const json_t *flags_inv_gpu(const json_t *fp, int gpu)
{
	size_t i;
	json_t *g;
	double idx;
	json_array_foreach(fpq_gpus(fp), i, g)
		if (!fpq_num(g, &idx, "index", NULL) && idx == (double)gpu)
			return g;
	return gpu >= 0 ? json_array_get(fpq_gpus(fp), (size_t)gpu) : NULL;
}

int flags_inv_pcie_max(const json_t *g, double *gen, double *width)
{
	if (fpq_num(g, gen, "pcie.max_gen", "pcie.gen_max", "pcie.link_gen_max", "pcie.max_link_gen",
		    "pcie_gen_max", "pcie_max_gen", NULL))
		return -1;
	if (fpq_num(g, width, "pcie.max_width", "pcie.width_max", "pcie.link_width_max", "pcie.max_link_width",
		    "pcie_width_max", "pcie_max_width", NULL))
		return -1;
	return 0;
}

int flags_inv_is_vgpu(const json_t *g)
{
	const char *s = fpq_str(g, "virtualization_mode", "virtualization.mode", "virtualization", NULL);
	double v;
	if (s)
		return strcasestr(s, "vgpu") && !strcasestr(s, "host");
	/* nvmlGpuVirtualizationMode_t: NVML_GPU_VIRTUALIZATION_MODE_VGPU = 2 */
	return !fpq_num(g, &v, "virtualization_mode", "virtualization.mode", NULL) && v == 2;
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

int flags_any_series(const json_t *fp, const char *series)
{
	int n = fpq_gpu_count(fp);
	for (int g = -1; g < n; g++)
		if (json_array_size(flags_raw_series(fp, series, g)))
			return 1;
	return 0;
}

int flags_any_metric(const json_t *fp, const char *prefix, const char *suffix)
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
