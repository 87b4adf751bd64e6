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
#include "common/stats.h"
#include "common/util.h"

#include <math.h>
#include <nvml.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
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

int flags_metric_is_measurement_ranks(const char *name, int ranks_given, long long ranks)
{
	return !(name && !strncmp(name, "allreduce.", 10) && ranks_given && ranks < 2);
}

int flags_metric_is_measurement(const char *name, const json_t *params)
{
	json_t *r = json_object_get(params, "ranks");
	return flags_metric_is_measurement_ranks(name, json_is_integer(r), json_is_integer(r) ? json_integer_value(r) : 0);
}

const char *flags_metric_not_applicable(const char *name, int gpus)
{
	if (name && !strncmp(name, "allreduce.", 10) && gpus < 2)
		return "fewer than 2 GPUs: an all-reduce measures no link";
	return NULL;
}


int flags_mask_of(const struct fpts *p, size_t i, double *x, unsigned long long *mask)
{
	double y = p->xy[2 * i + 1];
	if (!isfinite(p->xy[2 * i]) || !flags_reading_valid("soak.clock_events.mask", y))
		return -1;
	*x = p->xy[2 * i];
	*mask = (unsigned long long)y;
	return 0;
}

int flags_pts_span(const struct fpts *p, double *x0, double *x1)
{
	int any = 0;
	for (size_t i = 0; i < p->n; i++) {
		double x = p->xy[2 * i];
		if (isnan(x) || isnan(p->xy[2 * i + 1]))
			continue;
		if (!any || x < *x0)
			*x0 = x;
		if (!any || x > *x1)
			*x1 = x;
		any = 1;
	}
	return any ? 0 : -1;
}

int flags_pts_median(const struct fpts *p, double x0, double x1, double *median, int *n)
{
	size_t k = 0;
	*n = 0;
	if (!p->n)
		return -1;
	double *v = gv_malloc(p->n * sizeof *v);
	for (size_t i = 0; i < p->n; i++) {
		double x = p->xy[2 * i], y = p->xy[2 * i + 1];
		if (!isnan(x) && !isnan(y) && x >= x0 && x <= x1)
			v[k++] = y;
	}
	*n = (int)k;
	if (k)
		*median = gv_median_inplace(v, k);
	free(v);
	return k ? 0 : -1;
}

double flags_pts_max(const struct fpts *p)
{
	double m = -1;
	for (size_t i = 0; i < p->n; i++)
		if (p->xy[2 * i + 1] > m)
			m = p->xy[2 * i + 1];
	return m;
}

int flags_soak_gpu_read(const struct fprun *r, int gpu, struct soak_gpu *sg)
{
	struct fpts pts = flags_series(r, "soak.clock_events.mask", gpu);   /* the readings coverage counted */
	double x0 = 0, x1 = 0, x;
	unsigned long long mask;
	memset(sg, 0, sizeof *sg);
	sg->gpu = gpu;
	for (size_t i = 0; i < pts.n; i++)
		if (!flags_mask_of(&pts, i, &x, &mask))
			sg->n++;
	if (!sg->n) {
		flags_pts_free(&pts);
		return -1;
	}
	flags_pts_span(&pts, &x0, &x1);
	sg->period = sg->n > 1 ? (x1 - x0) / (sg->n - 1) : 1.0;
	if (!(sg->period > 0.05 && sg->period < 60))
		sg->period = 1.0;
	sg->soak_s = sg->n * sg->period;
	for (size_t i = 0; i < pts.n; i++) {
		if (flags_mask_of(&pts, i, &x, &mask))
			continue;
		for (int k = 0; k < R_COUNT; k++)
			if (mask & reasons[k].bit)
				sg->bit_s[k] += sg->period;
	}
	flags_pts_free(&pts);
	struct fpts th = flags_raw_series(r, "soak.throttle.thermal_s", gpu), pw = flags_raw_series(r, "soak.throttle.power_s", gpu);
	sg->thermal_viol_s = flags_pts_max(&th);
	sg->power_viol_s = flags_pts_max(&pw);
	return 0;
}

const char *flags_reason_name(int r)
{
	return r >= 0 && r < R_COUNT ? reasons[r].name : "?";
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

int flags_any_series(const struct fprun *r, const char *series)
{
	for (int g = -1; g < r->d.ngpu; g++)
		if (flags_raw_series(r, series, g).n)
			return 1;
	return 0;
}

int flags_any_metric(const struct fprun *r, const char *prefix, const char *suffix)
{
	size_t lp = strlen(prefix), ls = strlen(suffix);
	for (size_t i = 0; i < r->nmetrics; i++) {
		const char *n = r->metrics[i].name;
		size_t ln = strlen(n);
		if (ln >= lp + ls && !strncmp(n, prefix, lp) && !strcmp(n + ln - ls, suffix))
			return 1;
	}
	return 0;
}

int flags_soak_ok(const struct fprun *r)
{
	const struct fp_bench *b = fprun_bench(r, "soak");
	return b && b->status && !strcmp(b->status, "ok");
}
