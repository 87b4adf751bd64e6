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
 * throttling, decay, the references, the node and corruption checks, and
 * flags_compute() that calls every family in order and has every flag
 * raised checked against its row of the table (judge/flags_table.c: code,
 * severities, what to do, whether its evidence was measured).  It sits on top
 * of judge/flags*.c: the families and the table call down, never up to it.
 */
#include "judge/flags.h"
#include "judge/flags_int.h"
#include "benches/bench.h"
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


static json_t *bits_evidence(const struct soak_gpu *sg)
{
	json_t *o = json_object();
	for (int r = 0; r < R_COUNT; r++)
		if (sg->bit_s[r] > 0)
			json_object_set_new(o, flags_reason_name(r), json_real(sg->bit_s[r]));
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

static void throttle_flags(const struct fprun *r, const struct soak_gpu *sg, json_t *out)
{
	const struct gpu_ref *ref = r->d.model;
	struct fpts temp = flags_raw_series(r, "soak.temp.c", sg->gpu);
	double maxtemp = flags_pts_max(&temp);

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
		struct fpts lp = flags_raw_series(r, "soak.power_limit.w", sg->gpu);
		struct fpts pp = flags_raw_series(r, "soak.power.w", sg->gpu);
		if (flags_pts_span(&lp, &x0, &x1) || flags_pts_median(&lp, x0, x1, &limit, &n))
			limit = 0;
		if (flags_pts_span(&pp, &x0, &x1) || flags_pts_median(&pp, x0, x1, &power, &n))
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

static int decay_of(const struct fpts *pts, double *first, double *last, double *window)
{
	double x0 = 0, x1 = 0;
	int n1, n2;
	if (flags_pts_span(pts, &x0, &x1))
		return -1;
	double dur = x1 - x0, w = FLAG_DECAY_WINDOW_S;
	if (dur < FLAG_DECAY_MIN_SOAK_S)
		return -1;
	if (dur < 2 * w)
		w = dur / 3;
	if (flags_pts_median(pts, x0, x0 + w - 1e-9, first, &n1) ||
	    flags_pts_median(pts, x1 - w + 1e-9, x1, last, &n2) || !(*first > 0))
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

static void decay_flags(struct fprun *r, int gpu, json_t *out)
{
	double first, last, w;
	struct fpts clk = flags_series(r, "soak.sm_clock.mhz", gpu), tf = flags_series(r, "soak.tflops", gpu);
	if (!decay_of(&clk, &first, &last, &w)) {
		decay_flag(out, "CLOCK_DECAY", "SM clock (MHz)", gpu, first, last, w, "soak.sm_clock.mhz",
			   FLAG_CLOCK_DECAY_PCT);
	} else {
		double d;
		if (!fprun_value(r, "soak.sm_clock.drop_pct", gpu, &d) && d >= FLAG_CLOCK_DECAY_PCT)
			decay_flag(out, "CLOCK_DECAY", "SM clock (%)", gpu, 100, 100 - d, FLAG_DECAY_WINDOW_S,
				   "soak.sm_clock.drop_pct", FLAG_CLOCK_DECAY_PCT);
	}
	if (!decay_of(&tf, &first, &last, &w)) {
		decay_flag(out, "PERF_DECAY", "throughput (TFLOP/s)", gpu, first, last, w, "soak.tflops",
			   FLAG_PERF_DECAY_PCT);
	} else if (!fprun_value(r, "soak.tflops.first_min", gpu, &first) &&
		   !fprun_value(r, "soak.tflops.last_min", gpu, &last) && first > 0) {
		decay_flag(out, "PERF_DECAY", "throughput (TFLOP/s)", gpu, first, last, FLAG_DECAY_WINDOW_S,
			   "soak.tflops.first_min/last_min", FLAG_PERF_DECAY_PCT);
	}
	flags_pts_free(&clk);
	flags_pts_free(&tf);
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
static void below_reference_flags(const struct fprun *r, json_t *out)
{
	const struct gpu_ref *ref = r->d.model;
	double link = ref ? gpu_pcie_link_gbps(ref->pcie_gen, ref->pcie_width) : 0;
	if (!ref)
		return;
	for (size_t i = 0; i < r->nmetrics; i++) {
		const struct fp_metric *m = &r->metrics[i];
		const char *name = m->name;
		if (!isfinite(m->value) || m->gpu < 0 || !measured_against_peak(name))
			continue;
		double v = m->value, ach = 0;
		const char *src = NULL;
		enum gpu_ref_kind kind;
		int gpu = m->gpu;
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

static void node_outlier_flags(const struct fprun *r, json_t *out)
{
	json_t *by = json_object(), *worst = json_object(), *row;
	const char *name;
	/* name -> {"gpu": value}: the evidence it says, built as a JSON object once */
	for (size_t i = 0; i < r->nmetrics; i++) {
		const struct fp_metric *m = &r->metrics[i];
		const struct metric_info *mi = metric_info_find(m->name);
		if (!mi || mi->peak != METRIC_PEAK_GEMM || !isfinite(m->value) || m->gpu < 0 || !(m->value > 0))
			continue;
		char key[24];
		snprintf(key, sizeof key, "%d", m->gpu);
		if (!json_object_get(by, m->name))
			json_object_set_new(by, m->name, json_object());
		json_object_set_new(json_object_get(by, m->name), key, json_real(m->value));
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

static void sdc_flags(struct fprun *r, int ngpu, json_t *out)
{
	for (int g = 0; g < ngpu; g++) {
		double mm;
		if (fprun_value(r, "soak.sdc.mismatches", g, &mm) || mm < FLAG_SDC_MIN_MISMATCHES)
			continue;
		const struct fp_obj *par = &fprun_metric(r, "soak.sdc.mismatches", g)->params;
		struct fpts pts = flags_raw_series(r, "soak.sdc.mismatch", g);
		json_t *its = json_array();
		double checked = 0, first = -1;
		for (size_t i = 0; i < pts.n; i++) {
			double y = pts.xy[2 * i + 1];
			if (isfinite(y)) {
				json_array_append_new(its, json_integer((json_int_t)y));
				if (first < 0 || y < first)
					first = y;
			}
		}
		if (fp_obj_num(par, "checked", &checked))
			checked = 0;
		if (first < 0 && fp_obj_num(par, "first_iteration", &first))
			first = -1;
		flags_add(out, "DATA_CORRUPTION", "critical",
			 json_pack("{s:i,s:f,s:f,s:f,s:o,s:{s:i}}", "gpu", g, "mismatches", mm, "checked", checked,
				   "first_iteration", first, "iterations", its, "thresholds", "FLAG_SDC_MIN_MISMATCHES",
				   FLAG_SDC_MIN_MISMATCHES),
			 "gpu %d: %.0f of %.0f soak results differed from the first one computed from the same inputs "
			 "(first at iteration %.0f)", g, mm, checked, first);
	}
}

json_t *flags_compute_run(struct fprun *r)
{
	json_t *out = json_array();
	int ngpu = r->d.ngpu;
	for (int g = 0; g < ngpu; g++) {
		struct soak_gpu sg;
		if (!flags_soak_gpu_read(r, g, &sg))
			throttle_flags(r, &sg, out);
	}
	for (int g = 0; g < ngpu; g++)
		decay_flags(r, g, out);
	flags_contention(r, ngpu, out);
	flags_health(r, ngpu, out);
	below_reference_flags(r, out);
	flags_below_floor(r, out);
	node_outlier_flags(r, out);
	sdc_flags(r, ngpu, out);
	flags_host_starved(r, out);
	flags_finish(out);
	return out;
}
