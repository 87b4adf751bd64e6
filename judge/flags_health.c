/*
 * flags_health.c - the hardware's own health, read from the inventory and
 * the soak (see flags.h): VGPU, MIG, PCIE_DOWNGRADE, ECC_ERRORS,
 * ROW_REMAP_PENDING, ECC_DISABLED, NVLINK_DEGRADED, FIRMWARE_MISMATCH, XID,
 * and the host's CPU_STEAL.
 */
#include "judge/flags.h"
#include "judge/flags_int.h"
#include "platform/inv_parse.h"
#include "common/gpus.h"
#include "common/util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static void pcie_flag(const struct fprun *r, int gpu, json_t *out)
{
	const struct fp_gpu *g = fprun_gpu(r, gpu);
	double gen, w, x0 = 0, x1 = 0;
	int n;
	if (!g || isnan(g->pcie_gen_max) || isnan(g->pcie_width_max))
		return;
	double maxgen = g->pcie_gen_max, maxw = g->pcie_width_max;
	struct fpts gp = flags_series(r, "soak.pcie.gen", gpu), wp = flags_series(r, "soak.pcie.width", gpu);
	if (flags_pts_span(&gp, &x0, &x1) || flags_pts_median(&gp, x0, x1, &gen, &n) ||
	    flags_pts_span(&wp, &x0, &x1) || flags_pts_median(&wp, x0, x1, &w, &n) || (gen >= maxgen && w >= maxw)) {
		flags_pts_free(&gp);
		flags_pts_free(&wp);
		return;
	}
	json_t *e = json_pack("{s:i,s:f,s:f,s:f,s:f,s:f,s:f}", "gpu", gpu, "gen_under_load", gen, "width_under_load", w,
			      "gen_max", maxgen, "width_max", maxw, "gen_seen_max", flags_pts_max(&gp),
			      "width_seen_max", flags_pts_max(&wp));
	flags_add(out, "PCIE_DOWNGRADE", "critical", e,
		 "gpu %d: pcie link under load gen%.0f x%.0f, below its maximum gen%.0f x%.0f",
		 gpu, gen, w, maxgen, maxw);
	flags_pts_free(&gp);
	flags_pts_free(&wp);
}

static double or0(double v)
{
	return isnan(v) ? 0 : v;
}

static void health_flags(const struct fprun *r, json_t *out)
{
	for (size_t i = 0; i < r->inv.ngpus; i++) {
		const struct fp_gpu *g = &r->inv.gpus[i];
		int gpu = g->index;
		double uv = or0(g->ecc_vol_unc), ua = or0(g->ecc_agg_unc), cv = or0(g->ecc_vol_cor);
		const char *sev = uv > 0 ? "critical" : ua > 0 ? "warning" : cv >= FLAG_ECC_CORRECTED_WARN ? "warning" : NULL;
		if (sev)
			flags_add(out, "ECC_ERRORS", sev,
				 json_pack("{s:i,s:f,s:f,s:f,s:{s:f}}", "gpu", gpu, "volatile_uncorrected", uv,
					   "aggregate_uncorrected", ua, "volatile_corrected", cv, "thresholds",
					   "FLAG_ECC_CORRECTED_WARN", FLAG_ECC_CORRECTED_WARN),
				 "gpu %d: ecc errors: %.0f uncorrected since boot, %.0f uncorrected lifetime, %.0f corrected since boot",
				 gpu, uv, ua, cv);
		double rp = or0(g->remap_pending), rf = or0(g->remap_failure), pp = or0(g->retired_pending);
		if (rp > 0 || rf > 0 || pp > 0)
			flags_add(out, "ROW_REMAP_PENDING", "critical",
				 json_pack("{s:i,s:f,s:f,s:f}", "gpu", gpu, "remap_pending", rp, "remap_failure", rf,
					   "retired_pages_pending", pp),
				 "gpu %d: %s", gpu,
				 rf > 0 ? "row remapping failed: the card needs service" :
				 "memory repair pending: a GPU reset is needed before the fix applies");
		if (g->vgpu)
			flags_add(out, "VGPU", "warning", json_pack("{s:i,s:s}", "gpu", gpu, "virtualization_mode",
				 g->virt_mode ? g->virt_mode : "vgpu"),
				 "gpu %d: vgpu guest: a time-sliced or partitioned share of a physical gpu", gpu);
		if (g->mig)
			flags_add(out, "MIG", "warning", json_pack("{s:i,s:b}", "gpu", gpu, "mig_enabled", 1),
				 "gpu %d: mig mode enabled: this instance sees a partition of the gpu", gpu);
	}
}

/* ---- passive health: ECC mode, NVLink, firmware, XIDs logged since boot ---- */

static void ecc_mode_flag(const struct fp_gpu *g, json_t *out)
{
	const char *cur = g->ecc_current, *pend = g->ecc_pending;
	if (!cur)
		return;   /* no ECC on this part, or unknown */
	if (!strcmp(cur, "disabled") || (pend && strcmp(pend, cur)))
		flags_add(out, "ECC_DISABLED", "warning", json_pack("{s:i,s:s,s:s?}", "gpu", g->index, "current", cur,
			 "pending", pend),
			 "gpu %d: ecc is %s%s%s", g->index, cur, pend && strcmp(pend, cur) ? ", pending " : "",
			 pend && strcmp(pend, cur) ? pend : "");
}

static void nvlink_flags(const struct fprun *r, json_t *out)
{
	double best = 0;
	for (size_t i = 0; i < r->inv.ngpus; i++)
		if (r->inv.gpus[i].nvlink_active > best)
			best = r->inv.gpus[i].nvlink_active;
	for (size_t i = 0; i < r->inv.ngpus; i++) {
		const struct fp_gpu *g = &r->inv.gpus[i];
		double active = g->nvlink_active, crc = or0(g->nvlink_crc_flit) + or0(g->nvlink_crc_data);
		double rec = or0(g->nvlink_recovery);
		if (isnan(active))
			continue;
		/* links down only count where another GPU of the instance has them up (a lone GPU has no peers) */
		int down = r->inv.ngpus > 1 && active < best;
		if (!down && !(crc > 0) && !(rec > 0))
			continue;
		json_t *errs = g->nvlink_errors ? json_loads(g->nvlink_errors, 0, NULL) : NULL;
		flags_add(out, "NVLINK_DEGRADED", down ? "critical" : "warning",
			 json_pack("{s:i,s:f,s:f,s:f,s:f,s:o?}", "gpu", g->index, "links_active", active, "best_links_active",
				   best, "crc_errors", crc, "recovery_errors", rec, "errors", errs),
			 down ? "gpu %d: %.0f nvlink links active where the instance's other gpus have %.0f" :
				"gpu %d: nvlink errors since boot: %.0f crc, %.0f recoveries", g->index,
			 down ? active : crc, down ? best : rec);
	}
}

/* GPUs of one model on one instance should run the same VBIOS (the driver is one per node). */
static void firmware_flag(const struct fprun *r, json_t *out)
{
	for (size_t i = 0; i < r->inv.ngpus; i++) {
		const char *n1 = r->inv.gpus[i].name, *v1 = r->inv.gpus[i].vbios;
		if (!n1 || !v1)
			continue;
		for (size_t j = i + 1; j < r->inv.ngpus; j++) {
			const char *n2 = r->inv.gpus[j].name, *v2 = r->inv.gpus[j].vbios;
			if (!n2 || !v2 || strcmp(n1, n2) || !strcmp(v1, v2))
				continue;
			json_t *all = json_object();
			for (size_t q = 0; q < r->inv.ngpus; q++) {
				char key[24];
				snprintf(key, sizeof key, "%zu", q);
				json_object_set_new(all, key, json_string(r->inv.gpus[q].vbios ? r->inv.gpus[q].vbios : "?"));
			}
			flags_add(out, "FIRMWARE_MISMATCH", "warning",
				 json_pack("{s:i,s:s,s:o,s:s?}", "gpu", -1, "model", n1, "vbios", all, "driver",
					   r->inv.driver_version),
				 "gpus %zu and %zu (%s) run different vbios versions: %s and %s", i, j, n1, v1, v2);
			return;
		}
	}
}

/* Hardware-class XIDs the driver logged since boot (inventory.xid_history), one flag per GPU. */
static void xid_history_flags(const struct fprun *r, json_t *out)
{
	json_t *by = json_object();
	for (size_t i = 0; i < r->inv.nxids; i++) {
		const struct fp_xid *e = &r->inv.xids[i];
		if (isnan(e->xid) || !inv_xid_is_hardware(gv_to_int(e->xid, -1)))
			continue;
		double age = isnan(e->age_s) ? -1 : e->age_s;
		char key[16];
		int gi = gv_to_int(isnan(e->gpu) ? -1 : e->gpu, -1);
		snprintf(key, sizeof key, "%d", gi);
		json_t *o = json_object_get(by, key);
		if (!o) {
			o = json_pack("{s:i,s:[],s:f}", "gpu", gi, "events", "newest_age_s", -1.0);
			json_object_set_new(by, key, o);
		}
		json_array_append_new(json_object_get(o, "events"), json_pack("{s:i,s:f}", "xid", gv_to_int(e->xid, -1),
									     "age_s", age));
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

static void passive_health_flags(const struct fprun *r, json_t *out)
{
	for (size_t i = 0; i < r->inv.ngpus; i++)
		ecc_mode_flag(&r->inv.gpus[i], out);
	nvlink_flags(r, out);
	firmware_flag(r, out);
	xid_history_flags(r, out);
}

/* XIDs raised by the application rather than the hardware: those outside the hardware list. */
static int xid_is_app(int code)
{
	return !inv_xid_is_hardware(code);
}

static int xid_flag(struct fprun *r, int gpu, json_t *out)
{
	struct fpts pts = flags_raw_series(r, "soak.xid", gpu);
	double count = 0;
	int hw = 0;
	if (fprun_value(r, "soak.xid.count", gpu, &count))
		count = 0;
	if ((double)pts.n > count)
		count = (double)pts.n;
	if (!(count > 0))
		return 0;
	json_t *codes = json_array();
	for (size_t i = 0; i < pts.n; i++) {
		double y = pts.xy[2 * i + 1];
		if (isnan(y))
			continue;
		int c = gv_to_int(y, -1);
		if (c < 0) {      /* not an XID code: unknown, so the worst */
			hw = 1;
			continue;
		}
		json_array_append_new(codes, json_integer(c));
		if (!xid_is_app(c))
			hw = 1;
	}
	if (!json_array_size(codes))
		hw = 1;  /* codes unknown: assume the worst */
	flags_add(out, "XID", hw ? "critical" : "warning",
		 json_pack("{s:i,s:f,s:o}", "gpu", gpu, "count", count, "codes", codes),
		 "gpu %d: %.0f xid event(s) during the run%s", gpu, count,
		 hw ? "" : " (application-class codes only)");
	return 1;
}

static void steal_flag(struct fprun *r, json_t *out)
{
	double st;
	struct fpts ser = flags_raw_series(r, "host.cpu_steal.pct", -1);
	if (fprun_value(r, "host.cpu_steal.pct", -1, &st) || st < FLAG_STEAL_WARN_PCT)
		return;
	flags_add(out, "CPU_STEAL", st >= FLAG_STEAL_CRIT_PCT ? "critical" : "warning",
		 json_pack("{s:i,s:f,s:f,s:{s:f,s:f}}", "gpu", -1, "steal_pct", st, "max_per_second_pct",
			   flags_pts_max(&ser), "thresholds",
			   "FLAG_STEAL_WARN_PCT", FLAG_STEAL_WARN_PCT, "FLAG_STEAL_CRIT_PCT", FLAG_STEAL_CRIT_PCT),
		 "hypervisor steal took %.1f%% of cpu time during the run", st);
}

void flags_health(struct fprun *r, int ngpu, json_t *out)
{
	health_flags(r, out);
	passive_health_flags(r, out);
	for (int g = 0; g < ngpu; g++)
		pcie_flag(r, g, out);
	int any_xid = 0;
	for (int g = 0; g < ngpu; g++)
		any_xid |= xid_flag(r, g, out);
	if (!any_xid)
		xid_flag(r, -1, out);
	steal_flag(r, out);
}
