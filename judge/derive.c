/*
 * derive.c - the one derivation (derive.h): the GPU model and count, the
 * timing class of each bench, the percentages of a peak or a link, and (on
 * an import and after a run) the flags, from a run's evidence.
 */
#include "judge/derive.h"
#include "judge/derive_int.h"
#include "judge/flags.h"
#include "benches/bench.h"
#include "results/fprun.h"
#include "results/store.h"
#include "common/gpu_evidence.h"
#include "common/gpus.h"
#include "common/util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * How a bench's rows show they were timed: a parameter only that loop
 * writes (benches/gemm.cu: steady_params()' "settled_by" for the steady
 * window of benches/steady.h; the burst loop's "median_ms" before it).  A
 * bench's config echo ("timing") is a claim, held to this.
 */
static const struct {
	const char *bench, *class, *evidence;
} timing_rows[] = {
	{ "gemm", "steady", "settled_by" },
	{ "gemm", "burst", "median_ms" },
};

/* ---- the model and the count ---- */

static void derive_model(struct fprun *r)
{
	struct fp_derived *d = &r->d;
	const struct fp_gpu *g0 = r->inv.ngpus ? &r->inv.gpus[0] : NULL;
	d->model = NULL;
	d->model_why[0] = '\0';
	if (!g0) {
		d->model_state = FP_MODEL_NONE;
		snprintf(d->model_why, sizeof d->model_why, "the inventory lists no gpu");
	} else {
		char why[160];
		enum gpu_evidence ev = gpu_resolve_device(g0->name, g0->memory_bytes, g0->pci_device_id, g0->vgpu, &d->model,
							 why, sizeof why);
		d->model_state = ev == GPU_EV_RESOLVED ? FP_MODEL_RESOLVED : FP_MODEL_UNKNOWN;
		if (ev != GPU_EV_RESOLVED)
			snprintf(d->model_why, sizeof d->model_why, "gpu 0 resolves to no model gpuvet knows: %s", why);
	}
	/* the one count: the inventory's gpus, else the run's, else the highest gpu index of a row + 1 */
	int n = (int)r->inv.ngpus;
	if (!n && r->run.gpu_count > 0 && r->run.gpu_count < 4096)
		n = r->run.gpu_count;
	for (size_t i = 0; !r->inv.ngpus && r->run.gpu_count <= 0 && i < r->nmetrics; i++)
		if (r->metrics[i].gpu >= n && r->metrics[i].gpu < 4096)
			n = r->metrics[i].gpu + 1;
	for (size_t i = 0; !r->inv.ngpus && r->run.gpu_count <= 0 && i < r->nseries; i++)
		if (r->series[i].gpu >= n && r->series[i].gpu < 4096)
			n = r->series[i].gpu + 1;
	d->ngpu = n;
}

/* ---- the timing class of each bench ---- */

static const char *timing_of(struct fprun *r, const char *bench)
{
	const char *cls = NULL;
	for (size_t i = 0; i < r->nmetrics; i++) {
		const struct fp_metric *m = &r->metrics[i];
		if (strcmp(m->bench, bench))
			continue;
		for (size_t k = 0; k < sizeof timing_rows / sizeof timing_rows[0]; k++) {
			if (strcmp(timing_rows[k].bench, bench) || !fp_obj_get(&m->params, timing_rows[k].evidence))
				continue;
			if (cls && strcmp(cls, timing_rows[k].class))
				return NULL;   /* rows of both: no one class */
			cls = timing_rows[k].class;
		}
	}
	return cls;
}

static int derive_timing(struct fprun *r, unsigned how, char *err, size_t errlen)
{
	for (size_t i = 0; i < r->nbenches; i++) {
		struct fp_bench *b = &r->benches[i];
		const char *said = fp_obj_str(&b->config, "timing");
		b->timing = b->name ? timing_of(r, b->name) : NULL;
		if ((how & DERIVE_REFUSE) && said && b->timing && strcmp(said, b->timing))
			return gv_fp_refuse(err, errlen, "benches[%zu] '%.40s': config.timing is '%.20s' in the file; gpuvet derives "
				       "'%s' from its rows' parameters (a derived figure is never taken from a file)", i, b->name,
				       said, b->timing);
	}
	return 0;
}

int derive(struct fprun *r, unsigned how, char *err, size_t errlen)
{
	derive_model(r);
	if (derive_timing(r, how, err, errlen) || derive_percentages(r, how, err, errlen))
		return -1;
	r->d.done = 1;
	if (how & DERIVE_FLAGS)
		derive_flags(r);
	return 0;
}

int derive_import(struct fprun *r, char *err, size_t errlen)
{
	return derive(r, DERIVE_REFUSE | DERIVE_FLAGS, err, errlen);
}

int derive_load_run(struct store *s, int64_t run_id, unsigned parts, struct fprun **out)
{
	char err[8];
	if (store_load_run(s, run_id, parts, out))
		return -1;
	derive(*out, 0, err, sizeof err);   /* without DERIVE_REFUSE it cannot fail */
	return 0;
}

json_t *derive_load(struct store *s, int64_t run_id, unsigned parts)
{
	struct fprun *r;
	if (derive_load_run(s, run_id, parts, &r))
		return NULL;
	json_t *fp = fprun_to_json(r);
	fprun_free(r);
	return fp;
}

struct fprun *derive_from_json(const json_t *fp)
{
	struct fprun *r = fprun_from_json(fp);
	char err[8];
	if (r)
		derive(r, 0, err, sizeof err);
	return r;
}

json_t *derive_json(const json_t *fp)
{
	struct fprun *r = derive_from_json(fp);
	if (!r)
		return NULL;
	json_t *out = fprun_to_json(r);
	fprun_free(r);
	return out;
}
