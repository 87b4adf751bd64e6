/*
 * flags_health.c - the hardware's own health, read from the inventory and
 * the soak (see flags.h): VGPU, MIG, PCIE_DOWNGRADE, ECC_ERRORS,
 * ROW_REMAP_PENDING, ECC_DISABLED, NVLINK_DEGRADED, FIRMWARE_MISMATCH, XID,
 * and the host's CPU_STEAL.
 */
#include "judge/flags.h"
#include "judge/flags_int.h"
#include "results/fpq.h"
#include "platform/inv_parse.h"
#include "common/gpus.h"
#include "common/util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static int inv_is_mig(const json_t *g)
{
	double v;
	return !fpq_num(g, &v, "mig.current", "mig_mode.current", "mig.current_mode", "mig_mode", "mig.enabled",
			"mig", NULL) && v > 0;
}

static void pcie_flag(const json_t *fp, int gpu, json_t *out)
{
	double maxgen, maxw, gen, w, x0 = 0, x1 = 0;
	int n;
	if (flags_inv_pcie_max(flags_inv_gpu(fp, gpu), &maxgen, &maxw))
		return;
	json_t *gp = flags_series(fp, "soak.pcie.gen", gpu), *wp = flags_series(fp, "soak.pcie.width", gpu);
	if (fpq_series_span(gp, &x0, &x1) || fpq_series_median(gp, x0, x1, &gen, &n) ||
	    fpq_series_span(wp, &x0, &x1) || fpq_series_median(wp, x0, x1, &w, &n) || (gen >= maxgen && w >= maxw)) {
		json_decref(gp);
		json_decref(wp);
		return;
	}
	json_t *e = json_pack("{s:i,s:f,s:f,s:f,s:f,s:f,s:f}", "gpu", gpu, "gen_under_load", gen, "width_under_load", w,
			      "gen_max", maxgen, "width_max", maxw, "gen_seen_max", flags_series_max(gp),
			      "width_seen_max", flags_series_max(wp));
	flags_add(out, "PCIE_DOWNGRADE", "critical", e,
		 "gpu %d: pcie link under load gen%.0f x%.0f, below its maximum gen%.0f x%.0f",
		 gpu, gen, w, maxgen, maxw);
	json_decref(gp);
	json_decref(wp);
}

static void health_flags(const json_t *fp, json_t *out)
{
	size_t i;
	json_t *g;
	json_array_foreach(fpq_gpus(fp), i, g) {
		double idx, uv = 0, ua = 0, cv = 0, rp = 0, rf = 0, pp = 0;
		int gpu = !fpq_num(g, &idx, "index", NULL) ? gv_to_int(idx, (int)i) : (int)i;
		int huv = !fpq_num(g, &uv, "ecc.volatile.uncorrected", "ecc.volatile_uncorrected",
				   "ecc.uncorrected_volatile", NULL);
		int hua = !fpq_num(g, &ua, "ecc.aggregate.uncorrected", "ecc.aggregate_uncorrected",
				   "ecc.uncorrected_aggregate", NULL);
		int hcv = !fpq_num(g, &cv, "ecc.volatile.corrected", "ecc.volatile_corrected",
				   "ecc.corrected_volatile", NULL);
		const char *sev = huv && uv > 0 ? "critical" : hua && ua > 0 ? "warning" :
				  hcv && cv >= FLAG_ECC_CORRECTED_WARN ? "warning" : NULL;
		if (sev)
			flags_add(out, "ECC_ERRORS", sev,
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
			flags_add(out, "ROW_REMAP_PENDING", "critical",
				 json_pack("{s:i,s:f,s:f,s:f}", "gpu", gpu, "remap_pending", rp, "remap_failure", rf,
					   "retired_pages_pending", pp),
				 "gpu %d: %s", gpu,
				 hrf && rf > 0 ? "row remapping failed: the card needs service" :
				 "memory repair pending: a GPU reset is needed before the fix applies");

		if (flags_inv_is_vgpu(g))
			flags_add(out, "VGPU", "warning", json_pack("{s:i,s:s}", "gpu", gpu, "virtualization_mode",
				 fpq_str(g, "virtualization_mode", "virtualization.mode", "virtualization", NULL) ?
				 fpq_str(g, "virtualization_mode", "virtualization.mode", "virtualization", NULL) : "vgpu"),
				 "gpu %d: vgpu guest: a time-sliced or partitioned share of a physical gpu", gpu);
		if (inv_is_mig(g))
			flags_add(out, "MIG", "warning", json_pack("{s:i,s:b}", "gpu", gpu, "mig_enabled", 1),
				 "gpu %d: mig mode enabled: this instance sees a partition of the gpu", gpu);
	}
}

/* ---- passive health: ECC mode, NVLink, firmware, XIDs logged since boot ---- */

static void ecc_mode_flag(const json_t *g, int gpu, json_t *out)
{
	const char *cur = fpq_str(g, "ecc.current", NULL), *pend = fpq_str(g, "ecc.pending", NULL);
	if (!cur)
		return;   /* no ECC on this part, or unknown */
	if (!strcmp(cur, "disabled") || (pend && strcmp(pend, cur)))
		flags_add(out, "ECC_DISABLED", "warning", json_pack("{s:i,s:s,s:s?}", "gpu", gpu, "current", cur,
			 "pending", pend),
			 "gpu %d: ecc is %s%s%s", gpu, cur, pend && strcmp(pend, cur) ? ", pending " : "",
			 pend && strcmp(pend, cur) ? pend : "");
}

static void nvlink_flags(const json_t *fp, json_t *out)
{
	const json_t *gpus = fpq_gpus(fp), *g;
	double best = 0, v;
	size_t i;
	json_array_foreach(gpus, i, g)
		if (!fpq_num(g, &v, "nvlink.links_active", NULL) && v > best)
			best = v;
	json_array_foreach(gpus, i, g) {
		double idx, active, crc = 0, rec = 0, x;
		int gpu = !fpq_num(g, &idx, "index", NULL) ? gv_to_int(idx, (int)i) : (int)i;
		if (fpq_num(g, &active, "nvlink.links_active", NULL))
			continue;
		if (!fpq_num(g, &x, "nvlink.errors.crc_flit", NULL))
			crc += x;
		if (!fpq_num(g, &x, "nvlink.errors.crc_data", NULL))
			crc += x;
		if (!fpq_num(g, &x, "nvlink.errors.recovery", NULL))
			rec = x;
		/* links down only count where another GPU of the instance has them up (a lone GPU has no peers) */
		int down = json_array_size(gpus) > 1 && active < best;
		if (!down && !(crc > 0) && !(rec > 0))
			continue;
		flags_add(out, "NVLINK_DEGRADED", down ? "critical" : "warning",
			 json_pack("{s:i,s:f,s:f,s:f,s:f,s:O?}", "gpu", gpu, "links_active", active, "best_links_active", best,
				   "crc_errors", crc, "recovery_errors", rec, "errors",
				   json_object_get(json_object_get(g, "nvlink"), "errors")),
			 down ? "gpu %d: %.0f nvlink links active where the instance's other gpus have %.0f" :
				"gpu %d: nvlink errors since boot: %.0f crc, %.0f recoveries", gpu,
			 down ? active : crc, down ? best : rec);
	}
}

/* GPUs of one model on one instance should run the same VBIOS (the driver is one per node). */
static void firmware_flag(const json_t *fp, json_t *out)
{
	const json_t *gpus = fpq_gpus(fp), *g, *h;
	size_t i, j;
	json_array_foreach(gpus, i, g) {
		const char *n1 = fpq_str(g, "name", NULL), *v1 = fpq_str(g, "vbios", NULL);
		if (!n1 || !v1)
			continue;
		json_array_foreach(gpus, j, h) {
			const char *n2 = fpq_str(h, "name", NULL), *v2 = fpq_str(h, "vbios", NULL);
			if (j <= i || !n2 || !v2 || strcmp(n1, n2) || !strcmp(v1, v2))
				continue;
			json_t *all = json_object();
			const json_t *k;
			size_t q;
			json_array_foreach(gpus, q, k) {
				char key[24];
				snprintf(key, sizeof key, "%zu", q);
				json_object_set_new(all, key, json_string(fpq_str(k, "vbios", NULL) ? fpq_str(k, "vbios", NULL) : "?"));
			}
			flags_add(out, "FIRMWARE_MISMATCH", "warning",
				 json_pack("{s:i,s:s,s:o,s:s?}", "gpu", -1, "model", n1, "vbios", all, "driver",
					   fpq_str(json_object_get(fp, "inventory"), "driver.version", NULL)),
				 "gpus %zu and %zu (%s) run different vbios versions: %s and %s", i, j, n1, v1, v2);
			return;
		}
	}
}

/* Hardware-class XIDs the driver logged since boot (inventory.xid_history), one flag per GPU. */
static void xid_history_flags(const json_t *fp, json_t *out)
{
	const json_t *ev = json_object_get(json_object_get(json_object_get(fp, "inventory"), "xid_history"), "events");
	json_t *by = json_object(), *e;
	size_t i;
	json_array_foreach(ev, i, e) {
		double x, age = -1, g = -1;
		if (fpq_num(e, &x, "xid", NULL) || !inv_xid_is_hardware(gv_to_int(x, -1)))
			continue;
		if (fpq_num(e, &age, "age_s", NULL))
			age = -1;
		if (fpq_num(e, &g, "gpu", NULL))
			g = -1;
		char key[16];
		int gi = gv_to_int(g, -1);
		snprintf(key, sizeof key, "%d", gi);
		json_t *o = json_object_get(by, key);
		if (!o) {
			o = json_pack("{s:i,s:[],s:f}", "gpu", gi, "events", "newest_age_s", -1.0);
			json_object_set_new(by, key, o);
		}
		json_array_append_new(json_object_get(o, "events"), json_pack("{s:i,s:f}", "xid", gv_to_int(x, -1), "age_s", age));
		double newest = json_real_value(json_object_get(o, "newest_age_s"));
		if (age >= 0 && (newest < 0 || age < newest))
			json_object_set_new(o, "newest_age_s", json_real(age));
	}
	const char *k;
	json_t *o;
	json_object_foreach(by, k, o) {
		double newest = json_real_value(json_object_get(o, "newest_age_s"));
		int gpu = (int)json_integer_value(json_object_get(o, "gpu"));
		json_object_set_new(o, "source", json_string("kernel log since boot"));
		json_object_set_new(o, "thresholds", json_pack("{s:f}", "FLAG_XID_RECENT_S", FLAG_XID_RECENT_S));
		flags_add(out, "XID", newest < 0 || newest < FLAG_XID_RECENT_S ? "critical" : "warning", json_incref(o),
			 "%s%d: %zu hardware xid(s) in the kernel log since boot, the newest %.1f h ago",
			 gpu >= 0 ? "gpu " : "unknown gpu ", gpu, json_array_size(json_object_get(o, "events")),
			 newest >= 0 ? newest / 3600 : -1.0);
	}
	json_decref(by);
}

static void passive_health_flags(const json_t *fp, json_t *out)
{
	size_t i;
	json_t *g;
	json_array_foreach(fpq_gpus(fp), i, g) {
		double idx;
		ecc_mode_flag(g, !fpq_num(g, &idx, "index", NULL) ? gv_to_int(idx, (int)i) : (int)i, out);
	}
	nvlink_flags(fp, out);
	firmware_flag(fp, out);
	xid_history_flags(fp, out);
}

/* XIDs raised by the application rather than the hardware: those outside the hardware list. */
static int xid_is_app(int code)
{
	return !inv_xid_is_hardware(code);
}

static int xid_flag(const json_t *fp, int gpu, json_t *out)
{
	const json_t *pts = flags_raw_series(fp, "soak.xid", gpu);
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
			int c = gv_to_int(json_number_value(y), -1);
			if (c < 0) {      /* not an XID code: unknown, so the worst */
				hw = 1;
				continue;
			}
			json_array_append_new(codes, json_integer(c));
			if (!xid_is_app(c))
				hw = 1;
		}
	}
	if (!json_array_size(codes))
		hw = 1;  /* codes unknown: assume the worst */
	flags_add(out, "XID", hw ? "critical" : "warning",
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
	flags_add(out, "CPU_STEAL", st >= FLAG_STEAL_CRIT_PCT ? "critical" : "warning",
		 json_pack("{s:i,s:f,s:f,s:{s:f,s:f}}", "gpu", -1, "steal_pct", st, "max_per_second_pct",
			   flags_series_max(flags_raw_series(fp, "host.cpu_steal.pct", -1)), "thresholds",
			   "FLAG_STEAL_WARN_PCT", FLAG_STEAL_WARN_PCT, "FLAG_STEAL_CRIT_PCT", FLAG_STEAL_CRIT_PCT),
		 "hypervisor steal took %.1f%% of cpu time during the run", st);
}

void flags_health(const json_t *fp, int ngpu, json_t *out)
{
	health_flags(fp, out);
	passive_health_flags(fp, out);
	for (int g = 0; g < ngpu; g++)
		pcie_flag(fp, g, out);
	int any_xid = 0;
	for (int g = 0; g < ngpu; g++)
		any_xid |= xid_flag(fp, g, out);
	if (!any_xid)
		xid_flag(fp, -1, out);
	steal_flag(fp, out);
}
