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
#include "results/fpq.h"

#include <stdio.h>
#include <string.h>

static void add(json_t *out, const char *severity, json_t *ev, const char *msg)
{
	flags_add(out, "BELOW_FLOOR", severity, ev, "%s", msg);
}

static void h2d_floor(const json_t *fp, const char *key, json_t *out)
{
	double floor = 0;
	const char *src = NULL;
	size_t i;
	json_t *m;
	if (gpu_reference_floor(key, "memcpy.h2d.pinned.gbps", &floor, &src))
		return;
	json_array_foreach(json_object_get(fp, "metrics"), i, m) {
		const char *name = json_string_value(json_object_get(m, "name"));
		json_t *jv = json_object_get(m, "value"), *jg = json_object_get(m, "gpu");
		if (!name || strcmp(name, "memcpy.h2d.pinned.gbps") || !json_is_number(jv) || !json_is_integer(jg) ||
		    json_integer_value(jg) < 0 || !(json_number_value(jv) < floor))
			continue;
		char msg[256];
		int gpu = (int)json_integer_value(jg);
		double v = json_number_value(jv);
		snprintf(msg, sizeof msg, "gpu %d: pinned host-to-device copies run at %.1f GB/s, under the %s floor of %.0f GB/s",
			 gpu, v, key, floor);
		add(out, "warning",
		    json_pack("{s:i,s:s,s:f,s:f,s:s,s:s}", "gpu", gpu, "metric", "memcpy.h2d.pinned.gbps", "value", v,
			      "floor_gbps", floor, "reference", key, "reference_source", src),
		    msg);
	}
}

static void allreduce_floor(const json_t *fp, const char *key, json_t *out)
{
	const json_t *m = fpq_metric(fp, "allreduce.busbw.gbps", -1);
	const json_t *p = m ? json_object_get(m, "params") : NULL;
	double floor = 0, v = 0, ranks = 0, bytes = 0, mpi = 0;
	const char *src = NULL, *tp = json_string_value(json_object_get(p, "transport"));
	if (!m || gpu_reference_floor(key, "allreduce.busbw.gbps", &floor, &src) ||
	    fpq_num(m, &v, "value", NULL) || fpq_num(p, &ranks, "ranks", NULL) || fpq_num(p, &bytes, "bytes", NULL))
		return;
	if (!fpq_num(p, &mpi, "mpi", NULL) && mpi != 0)
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

void flags_below_floor(const json_t *fp, json_t *out)
{
	const struct gpu_ref *ref = fpq_gpu_ref(fp);
	if (!ref)
		return;
	h2d_floor(fp, ref->key, out);
	allreduce_floor(fp, ref->key, out);
}

static int any_row(const json_t *fp, const char *name)
{
	size_t i;
	json_t *m;
	json_array_foreach(json_object_get(fp, "metrics"), i, m)
		if (json_is_string(json_object_get(m, "name")) && !strcmp(json_string_value(json_object_get(m, "name")), name))
			return 1;
	return 0;
}

int flags_floor_measurable(const json_t *fp, const char **why)
{
	const struct gpu_ref *ref = fpq_gpu_ref(fp);
	double f;
	if (!ref || (gpu_reference_floor(ref->key, "memcpy.h2d.pinned.gbps", &f, NULL) &&
		     gpu_reference_floor(ref->key, "allreduce.busbw.gbps", &f, NULL))) {
		*why = "needs gpus of a model with a published floor (H100, H200, A100)";
		return 0;
	}
	if (any_row(fp, "memcpy.h2d.pinned.gbps") || any_row(fp, "allreduce.busbw.gbps"))
		return 1;
	*why = "needs memcpy.h2d.pinned.gbps or allreduce.busbw.gbps";
	return 0;
}
