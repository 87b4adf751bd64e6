/*
 * fp_rows.c - a fingerprint's rows agree with each other and with the
 * machine they describe (fp_check.h fp_check_rows).  Refused at import and
 * merge (exit 2), nothing stored:
 *
 *  - run.gpu_count equal to the inventory's GPUs when both are given, since
 *    the GPUs judged one by one are counted from the inventory and the fleet
 *    and the price from gpu_count;
 *  - the GPU model is evidence, never a label: each inventory GPU's NVML
 *    name held to its memory and PCI device id (common/gpu_evidence.h, as
 *    `gpuvet run` resolves it; a name its memory or device id contradicts is
 *    refused: "NVIDIA L4" with 80 GB is no L4); run.gpu_model and each
 *    GPU's reference_model, when given, must be that key, spelled as the
 *    table spells it; a label naming a model no device of the inventory
 *    shows is refused (an L4 label on an H100 would be judged against an
 *    L4's reference); a fingerprint that lists no GPU keeps its label (a
 *    hand-made run for the price list), which the judge never reads
 *    (results/fpq.c fpq_gpu_ref: no device, no model);
 *  - the run started neither more than a day ahead of this machine's clock
 *    (FP_MAX_FUTURE_S) nor before its GPU model was announced (gpu_ref
 *    .released): either is a wrong clock or a forged date.
 *
 * Two rows of one metric are not refused (gpuvet's own captures hold some:
 * a figure derived twice), the judge takes the worst (judge/metric_dups.c).
 */
#include "results/fp_check.h"
#include "common/gpus.h"
#include "common/gpu_evidence.h"
#include "common/ident.h"

#include "common/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

static fp_bench_check_fn bench_check;

void fp_check_set_bench_check(fp_bench_check_fn fn)
{
	bench_check = fn;
}

int fp_check_benches(const struct jtree *t, uint32_t fp, char *err, size_t errlen)
{
	return bench_check ? bench_check(t, fp, err, errlen) : 0;
}

static long pci_device(const struct jtree *t, uint32_t g)
{
	uint32_t v = jt_get(t, g, "pci_device_id");
	return gpu_pci_device_id(jt_str(t, v), jt_is_int(t, v) ? jt_int(t, v) : -1);
}

int fp_device_model(const struct jtree *t, uint32_t gpu, const struct gpu_ref **ref, char *why, size_t whylen)
{
	const char *vm = jt_str(t, jt_get(t, gpu, "virtualization_mode"));
	double bytes = 0;
	if (!jt_number(t, jt_get(t, gpu, "memory_bytes"), &bytes))
		bytes = 0;
	return (int)gpu_resolve_device(jt_str(t, jt_get(t, gpu, "name")), bytes, pci_device(t, gpu),
				       vm && strcasestr(vm, "vgpu") && !strcasestr(vm, "host"), ref, why, whylen);
}

/* Whether a label names a model of the reference table, in any spelling. */
static const struct gpu_ref *label_model(const char *label)
{
	for (size_t i = 0; label && i < gpu_refs_count; i++)
		if (!strcasecmp(gpu_refs[i].key, label))
			return &gpu_refs[i];
	return label ? gpu_ref_match(label, 0) : NULL;
}

static int check_model(const struct jtree *t, uint32_t fp, const struct gpu_ref **model, char *err, size_t errlen)
{
	uint32_t gpus = jt_get(t, jt_get(t, fp, "inventory"), "gpus"), g;
	const char *declared = jt_str(t, jt_get(t, jt_get(t, fp, "run"), "gpu_model"));
	size_t i;
	int named = 0;
	*model = NULL;
	jt_foreach(t, gpus, i, g) {
		const struct gpu_ref *r;
		char why[256], a[4 * 40 + 8], b[4 * 60 + 8];   /* texts of the inventory, never printed raw */
		int ev = fp_device_model(t, g, &r, why, sizeof why);
		const char *rm = jt_str(t, jt_get(t, g, "reference_model")), *dev = jt_str(t, jt_get(t, g, "name"));
		named |= dev != NULL;
		if (ev == GPU_EV_MISMATCH) {
			char w[4 * 200 + 8];
			ident_escape(why, w, 200);
			return gv_fp_refuse(err, errlen, "inventory.gpus[%zu]: %s: a name that disagrees with its device is refused",
					    i, w);
		}
		if (i == 0)
			*model = r;
		if (rm && (!r || strcmp(rm, r->key))) {
			ident_escape(rm, a, 40);
			ident_escape(dev ? dev : "no name", b, 60);
			return gv_fp_refuse(err, errlen, "inventory.gpus[%zu].reference_model '%s' disagrees with its device "
				      "('%s': %s)", i, a, b, r ? r->key : "no reference model");
		}
	}
	if (!declared)
		return 0;
	if (*model && strcmp(declared, (*model)->key))
		return gv_fp_refuse(err, errlen, "run.gpu_model '%.40s' disagrees with the inventory's gpu 0 (%s)", declared,
			      (*model)->key);
	if (!*model && named && label_model(declared))
		return gv_fp_refuse(err, errlen, "run.gpu_model '%.40s' names a model no gpu of the inventory shows (its devices "
			      "match no reference model)", declared);
	return 0;   /* an inventory without gpus: the label is kept for the price list, never judged on (fpq_gpu_ref) */
}

int fp_check_time(const char *field, const char *s, const struct gpu_ref *model, char *err, size_t errlen)
{
	char now[48], when[48];
	time_t limit = time(NULL) + FP_MAX_FUTURE_S;
	struct tm u;
	if (!s || fp_iso8601_utc(s, when, sizeof when) || !gmtime_r(&limit, &u))
		return 0;
	strftime(now, sizeof now, "%Y-%m-%dT%H:%M:%S", &u);
	if (strncmp(when, now, 19) > 0)
		snprintf(err, errlen, "%s %.19sZ is more than a day ahead of this machine's clock (a wrong clock or a "
			 "forged date; docs/acceptance.md)", field, when);
	else if (model && model->released && strncmp(when, model->released, 7) < 0)
		snprintf(err, errlen, "%s %.19sZ is before the %s was announced (%s; a wrong clock or a forged date)", field,
			 when, model->key, model->released);
	else
		return 0;
	return -1;
}

/* started_at (and finished_at) within the machine's clock and the model's life. */
static int check_times(const struct jtree *t, uint32_t fp, const struct gpu_ref *model, char *err, size_t errlen)
{
	static const char *const keys[] = { "run.started_at", "run.finished_at" };
	char why[320];
	for (size_t k = 0; k < 2; k++)
		if (fp_check_time(keys[k], jt_str(t, jt_get(t, jt_get(t, fp, "run"), keys[k] + 4)), model, why, sizeof why))
			return gv_fp_refuse(err, errlen, "%s", why);
	return 0;
}

int fp_check_rows(const struct jtree *t, uint32_t fp, char *err, size_t errlen)
{
	uint32_t gc = jt_get(t, jt_get(t, fp, "run"), "gpu_count");
	size_t ninv = jt_size(t, jt_get(t, jt_get(t, fp, "inventory"), "gpus"));
	const struct gpu_ref *model;
	if (ninv && gc && jt_is_int(t, gc) && jt_int(t, gc) != (long long)ninv) {
		snprintf(err, errlen, "run.gpu_count %lld disagrees with the inventory's %zu gpu(s)", jt_int(t, gc), ninv);
		return -1;
	}
	if (check_model(t, fp, &model, err, errlen) || check_times(t, fp, model, err, errlen))
		return -1;
	return fp_check_benches(t, fp, err, errlen);
}
