/*
 * flags_links.c - BELOW_FLOOR: a link measured under its model's published
 * floor (see flags.h), where the machine is broken rather than slow.
 *
 *   pinned H2D   memcpy.h2d.pinned.gbps of each GPU < the model's floor
 *                (>= 48 GB/s H100/H200 on PCIe gen5 x16, >= 21 A100 on gen4):
 *                a slot, riser or IOMMU setting costs every data load.
 *   all-reduce   allreduce.busbw.gbps of a one-node communicator of exactly
 *                FLAG_FLOOR_NODE_GPUS GPUs, swept to FLAG_FLOOR_MIN_BYTES or
 *                more, < the model's 8-GPU node floor (at 16 GB: H100 ~460,
 *                H200 ~431, A100 ~228 GB/s): NVLink, NVSwitch or the fabric
 *                manager is down, or NCCL fell back to PCIe or host memory.
 *                The message names the transport NCCL chose (params.transport).
 *                Under FLAG_FLOOR_CRIT_FRAC of the floor it is critical:
 *                the node trains at PCIe speed.
 *
 * Smaller sweeps stay unjudged: at 1 GiB (quick profile) a healthy node's
 * busbw is still climbing toward its plateau, and the floors are for 16 GB.
 * Other GPU counts have no published floor.  The floors are the one table's
 * (common/gpus.c gpu_reference_floor); a metric with a floor is judged here
 * only, not again as BELOW_REFERENCE.
 */
#include "judge/flags.h"
#include "judge/flags_int.h"
#include "common/gpus.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static void add(json_t *out, const char *severity, json_t *ev, const char *msg)
{
	flags_add(out, "BELOW_FLOOR", severity, ev, "%s", msg);
}

static void h2d_floor(const struct fprun *r, const char *key, json_t *out)
{
	double floor = 0;
	const char *src = NULL;
	if (gpu_reference_floor(key, "memcpy.h2d.pinned.gbps", &floor, &src))
		return;
	for (size_t i = 0; i < r->nmetrics; i++) {
		const struct fp_metric *m = &r->metrics[i];
		if (strcmp(m->name, "memcpy.h2d.pinned.gbps") || !isfinite(m->value) || m->gpu < 0 || !(m->value < floor))
			continue;
		char msg[256];
		snprintf(msg, sizeof msg, "gpu %d: pinned host-to-device copies run at %.1f GB/s, under the %s floor of %.0f GB/s",
			 m->gpu, m->value, key, floor);
		add(out, "warning",
		    json_pack("{s:i,s:s,s:f,s:f,s:s,s:s}", "gpu", m->gpu, "metric", "memcpy.h2d.pinned.gbps", "value",
			      m->value, "floor_gbps", floor, "reference", key, "reference_source", src),
		    msg);
	}
}

static void allreduce_floor(struct fprun *r, const char *key, json_t *out)
{
	const struct fp_metric *m = fprun_metric(r, "allreduce.busbw.gbps", -1);
	const struct fp_obj *p = m ? &m->params : NULL;
	double floor = 0, v = m ? m->value : NAN, ranks = 0, bytes = 0, mpi = 0;
	const char *src = NULL, *tp = p ? fp_obj_str(p, "transport") : NULL;
	if (!m || gpu_reference_floor(key, "allreduce.busbw.gbps", &floor, &src) || !isfinite(v) ||
	    fp_obj_num(p, "ranks", &ranks) || fp_obj_num(p, "bytes", &bytes))
		return;
	if (!fp_obj_num(p, "mpi", &mpi) && mpi != 0)
		return;   /* across nodes: the network's floor, not the node's */
	if (ranks != FLAG_FLOOR_NODE_GPUS || bytes < FLAG_FLOOR_MIN_BYTES || !(v < floor))
		return;
	char msg[384];
	int crit = v < FLAG_FLOOR_CRIT_FRAC * floor;
	snprintf(msg, sizeof msg,
		 "all gpus: all-reduce busbw is %.0f GB/s at %.0f GiB over %d %s, under the node floor of %.0f GB/s%s%s%s",
		 v, bytes / 1073741824.0, (int)ranks, key, floor, tp ? " (NCCL chose " : "", tp ? tp : "", tp ? ")" : "");
	json_t *ev = json_pack("{s:i,s:s,s:f,s:f,s:i,s:f,s:s,s:s,s:{s:i,s:f,s:f}}", "gpu", -1, "metric",
			       "allreduce.busbw.gbps", "value", v, "floor_gbps", floor, "ranks", (int)ranks, "bytes", bytes,
			       "reference", key, "reference_source", src, "thresholds", "FLAG_FLOOR_NODE_GPUS",
			       FLAG_FLOOR_NODE_GPUS, "FLAG_FLOOR_MIN_BYTES", FLAG_FLOOR_MIN_BYTES, "FLAG_FLOOR_CRIT_FRAC",
			       FLAG_FLOOR_CRIT_FRAC);
	if (tp)
		json_object_set_new(ev, "transport", json_string(tp));
	add(out, crit ? "critical" : "warning", ev, msg);
}

void flags_below_floor(struct fprun *r, json_t *out)
{
	const struct gpu_ref *ref = r->d.model;
	if (!ref)
		return;
	h2d_floor(r, ref->key, out);
	allreduce_floor(r, ref->key, out);
}

static int any_row(const struct fprun *r, const char *name)
{
	for (size_t i = 0; i < r->nmetrics; i++)
		if (!strcmp(r->metrics[i].name, name))
			return 1;
	return 0;
}

int flags_floor_measurable(struct fprun *r, const char **why)
{
	const struct gpu_ref *ref = r->d.model;
	double f;
	if (!ref || (gpu_reference_floor(ref->key, "memcpy.h2d.pinned.gbps", &f, NULL) &&
		     gpu_reference_floor(ref->key, "allreduce.busbw.gbps", &f, NULL))) {
		*why = "needs gpus of a model with a published floor (H100, H200, A100)";
		return 0;
	}
	if (any_row(r, "memcpy.h2d.pinned.gbps") || any_row(r, "allreduce.busbw.gbps"))
		return 1;
	*why = "needs memcpy.h2d.pinned.gbps or allreduce.busbw.gbps";
	return 0;
}
