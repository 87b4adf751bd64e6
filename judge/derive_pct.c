/*
 * derive_pct.c - the derived percentages (derive.h, derive_int.h): each
 * computed from its rate and the run's evidence, the file's rows of it held
 * to that, then replaced by gpuvet's own rows, each naming its companion.
 * And the flags derive() adds on an import.
 */
#include "judge/derive.h"
#include "judge/derive_int.h"
#include "judge/flags.h"
#include "benches/bench.h"
#include "results/fprun.h"
#include "common/gpus.h"
#include "common/mindex.h"
#include "common/stats.h"
#include "common/util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DRV_KV 12

/*
 * The derived figures: a percentage and the rate it is of, one row per rule.  Every one is named
 * *.pct_of_* (results/run_digest.c leaves them out of a run's digest: a store holds gpuvet's).
 */
const struct derive_row derive_rows[] = {
	{ "gemm.*.pct_of_peak", "gemm.*.tflops", DERIVE_PCT_OF_PEAK },
	{ "memcpy.h2d.pct_of_link", "memcpy.h2d.pinned.gbps", DERIVE_PCT_OF_LINK },
	{ NULL, NULL, 0 },
};

const char *derive_companion(const char *name, char *buf, size_t size)
{
	for (const struct derive_row *d = derive_rows; name && d->name; d++) {
		if (!metric_name_matches(d->name, name))
			continue;
		const char *star = strchr(d->name, '*'), *ostar = strchr(d->of, '*');
		if (!star) {
			snprintf(buf, size, "%s", d->of);
		} else {   /* the word the '*' stands for, put in the rate's pattern */
			size_t pre = (size_t)(star - d->name), len = strcspn(name + pre, ".");
			snprintf(buf, size, "%.*s%.*s%s", (int)(ostar - d->of), d->of, (int)len, name + pre, ostar + 1);
		}
		return buf;
	}
	return NULL;
}


/* One derived row before it joins the run. */
struct drv {
	const char *name, *of, *why;   /* why: not derived (value NaN), in words */
	int gpu, src;                   /* src: the rate's row */
	double value;
	struct fp_kv kv[DRV_KV];
	uint32_t nkv;
};

struct drvs {
	struct drv *v;
	size_t n, cap;
	struct mindex x;
};

static void kv_num(struct drv *d, const char *key, double v)
{
	if (d->nkv < DRV_KV)
		d->kv[d->nkv++] = (struct fp_kv){ key, NULL, v, FPV_NUM, v == floor(v) && fabs(v) < 1e15 };
}

static void kv_str(struct drv *d, const char *key, const char *s)
{
	if (d->nkv < DRV_KV && s)
		d->kv[d->nkv++] = (struct fp_kv){ key, s, NAN, FPV_STR, 0 };
}

/* The row of (name, gpu), or a new one; a second rate of the same key keeps the lower (worse) figure. */
static struct drv *drv_at(struct drvs *ds, struct fprun *r, const char *name, int gpu, double value, int *fresh)
{
	size_t at;
	name = fprun_str(r, name);
	*fresh = 0;
	if (!mindex_find(&ds->x, name, gpu, &at)) {
		struct drv *d = &ds->v[at];
		if (!(value < d->value))
			return NULL;
		d->nkv = 0;
		return d;
	}
	if (ds->n == ds->cap)
		ds->v = gv_realloc(ds->v, (ds->cap = ds->cap ? 2 * ds->cap : 16) * sizeof *ds->v);
	struct drv *d = &ds->v[ds->n];
	memset(d, 0, sizeof *d);
	d->name = name;
	d->gpu = gpu;
	mindex_add(&ds->x, name, gpu, ds->n++);
	*fresh = 1;
	return d;
}

static void peak_rows(struct fprun *r, struct drvs *ds)
{
	for (size_t i = 0; r->d.model && i < r->nmetrics; i++) {
		const struct fp_metric *m = &r->metrics[i];
		char dt[16], name[64];
		double pct, peak, loaded = 0;
		if (!isfinite(m->value))
			continue;
		if (fp_obj_num(&m->params, "gpus", &loaded) || !(loaded > 0 && loaded < 1 << 20))
			loaded = 0;
		if (gpu_pct_of_peak(r->d.model, m->name, m->gpu, m->value, (int)loaded, r->d.ngpu, dt, &pct, &peak))
			continue;
		snprintf(name, sizeof name, "gemm.%s.pct_of_peak", dt);
		int fresh;
		struct drv *d = drv_at(ds, r, name, m->gpu, pct, &fresh);
		if (!d)
			continue;
		d->value = pct;
		d->src = (int)i;
		d->of = m->name;
		kv_str(d, "of", m->name);
		kv_num(d, "peak_tflops", peak);
		kv_str(d, "reference", r->d.model->key);
	}
}

static int width_ok(double w)
{
	return w == 1 || w == 2 || w == 4 || w == 8 || w == 12 || w == 16 || w == 32;
}

/*
 * The link gpu's copy trained at: the copy's own NVML reading under load (its pct_of_link row's gen
 * and width, a raw reading), within what the inventory says GPU and slot can do; else the link the
 * inventory found trained.  0 when neither is known.
 */
static double trained_link(struct fprun *r, int gpu, double *gen, double *width, int *own)
{
	const struct fp_metric *p = fprun_metric(r, "memcpy.h2d.pct_of_link", gpu);
	const struct fp_gpu *g = fprun_gpu(r, gpu);
	double ge = NAN, wi = NAN;
	if (p && !fp_obj_num(&p->params, "gen", &ge) && !fp_obj_num(&p->params, "width", &wi) &&
	    ge >= 1 && ge <= 6 && ge == floor(ge) && width_ok(wi) && (!g || !(ge > g->pcie_gen_max)) &&
	    (!g || !(wi > g->pcie_width_max))) {
		*gen = ge;
		*width = wi;
		*own = 1;
	} else if (g && g->pcie_gen >= 1 && g->pcie_gen <= 6 && width_ok(g->pcie_width)) {
		*own = 0;
		*gen = g->pcie_gen;
		*width = g->pcie_width;
	} else {
		return 0;
	}
	return gpu_pcie_link_gbps((int)*gen, (int)*width);
}

static void link_rows(struct fprun *r, struct drvs *ds)
{
	double *per = gv_malloc((r->nmetrics + 1) * sizeof *per);
	size_t nper = 0;
	for (int pass = 0; pass < 2; pass++)   /* the GPUs' rows, then the instance's (their median) */
		for (size_t i = 0; i < r->nmetrics; i++) {
			const struct fp_metric *m = &r->metrics[i];
			double gen = 0, width = 0, link, v;
			int fresh, own = 0;
			if (strcmp(m->name, "memcpy.h2d.pinned.gbps") || !isfinite(m->value) || (pass == 0) != (m->gpu >= 0))
				continue;
			link = trained_link(r, m->gpu >= 0 ? m->gpu : 0, &gen, &width, &own);
			if (!(link > 0))
				continue;
			v = m->gpu < 0 && nper ? gv_median(per, nper) : 100.0 * m->value / link;
			/* the inventory reads the link at idle, where a GPU may run it slower: a copy past it is left underived */
			if (!own && !(m->gpu < 0 && nper) && v > 100)
				continue;
			struct drv *d = drv_at(ds, r, "memcpy.h2d.pct_of_link", m->gpu, v, &fresh);
			if (!d)
				continue;
			if (m->gpu >= 0)
				per[nper++] = v;
			d->value = v;
			d->src = (int)i;
			d->of = m->name;
			kv_str(d, "of", m->name);
			kv_num(d, "gen", gen);
			kv_num(d, "width", width);
			kv_num(d, "link_gbps", link);
			kv_num(d, "achieved_gbps", m->value);
			if (m->gpu < 0 && nper)
				kv_str(d, "aggregate", "median");
		}
	free(per);
}

/* The derived row of a file's row, and whether the file's value is gpuvet's (beyond rounding). */
static int agrees(double file, double mine)
{
	return fabs(file - mine) <= DERIVE_REL_TOL * fmax(fabs(file), fabs(mine)) + DERIVE_ABS_TOL;
}

static int is_derived_name(const char *name)
{
	for (const struct derive_row *d = derive_rows; d->name; d++)
		if (metric_name_matches(d->name, name))
			return 1;
	return 0;
}

/* The file's rows of derived figures against gpuvet's: a key none of whose rows agrees is refused. */
static int check_file_rows(struct fprun *r, struct drvs *ds, char *err, size_t errlen)
{
	for (size_t i = 0; i < r->nmetrics; i++) {
		const struct fp_metric *m = &r->metrics[i];
		size_t at;
		if (!is_derived_name(m->name) || !isfinite(m->value) || mindex_find(&ds->x, m->name, m->gpu, &at) ||
		    agrees(m->value, ds->v[at].value))
			continue;
		int other = 0;   /* a figure an older gpuvet derived twice: one of its rows is right */
		for (size_t j = 0; j < r->nmetrics && !other; j++)
			other = j != i && r->metrics[j].gpu == m->gpu && !strcmp(r->metrics[j].name, m->name) &&
				isfinite(r->metrics[j].value) && agrees(r->metrics[j].value, ds->v[at].value);
		if (other)
			continue;
		const struct drv *d = &ds->v[at];
		char where[24] = "the instance";
		if (m->gpu >= 0)
			snprintf(where, sizeof where, "gpu %d", m->gpu);
		return gv_fp_refuse(err, errlen, "metrics[%zu] %s of %s is %.6g in the file; gpuvet derives %.6g from %s %.6g "
				    "(a derived figure is never taken from a file)", i, m->name, where, m->value, d->value,
				    d->of, r->metrics[d->src].value);
	}
	return 0;
}

/* The run's rows: every row but the file's derived ones, then gpuvet's. */
static void replace_rows(struct fprun *r, struct drvs *ds)
{
	size_t keep = 0;
	char cbuf[96];
	for (size_t i = 0; i < r->nmetrics; i++) {
		const struct fp_metric *m = &r->metrics[i];
		size_t at;
		/* a file's row gpuvet cannot derive (no model, no link) stays as not measured, never as it says */
		if (is_derived_name(m->name) && mindex_find(&ds->x, m->name, m->gpu, &at)) {
			int fresh;
			struct drv *d = drv_at(ds, r, m->name, m->gpu, NAN, &fresh);
			if (d && fresh) {
				d->value = NAN;
				d->src = -1;
				d->of = fprun_str(r, derive_companion(m->name, cbuf, sizeof cbuf));
				kv_str(d, "of", d->of);
				kv_str(d, "not_derived", r->d.model ? "no link known" : r->d.model_why);
			}
		}
		if (!is_derived_name(m->name))
			r->metrics[keep++] = *m;
	}
	r->nmetrics = keep;
	fprun_reindex(r);
	for (size_t k = 0; k < ds->n; k++) {
		const struct drv *d = &ds->v[k];
		struct fp_metric *m = fprun_add_metric(r, strncmp(d->name, "gemm.", 5) ? "memcpy" : "gemm", d->name, d->gpu,
						       d->value, "%");
		m->flags |= FPM_DERIVED;
		m->params = fprun_obj(r, d->kv, d->nkv);
		m->of = fprun_str(r, d->of);
	}
}

int derive_percentages(struct fprun *r, unsigned how, char *err, size_t errlen)
{
	struct drvs ds = { 0 };
	int rc = 0;
	peak_rows(r, &ds);
	link_rows(r, &ds);
	for (size_t k = 0; (how & DERIVE_REFUSE) && !rc && k < ds.n; k++) {
		char why[256];
		if (metric_bound_check(ds.v[k].name, ds.v[k].gpu, ds.v[k].value, r->d.ngpu, why, sizeof why))
			rc = gv_fp_refuse(err, errlen, "%s (derived from %s %.6g: the rate is beyond what its %s allows)", why,
					  ds.v[k].of, r->metrics[ds.v[k].src].value,
					  ds.v[k].name[0] == 'g' ? "model's peak" : "link");
	}
	if (!rc && (how & DERIVE_REFUSE))
		rc = check_file_rows(r, &ds, err, errlen);
	if (!rc)
		replace_rows(r, &ds);
	mindex_free(&ds.x);
	free(ds.v);
	return rc;
}

/* ---- the flags ---- */

void derive_flags(struct fprun *r)
{
	json_t *flags = flags_compute_run(r), *f;
	size_t i;
	const char *why;
	/* the file's flag of a code its evidence cannot judge (no soak, no inventory) stays: a claim against the run */
	for (size_t k = 0; k < r->nflags; k++)
		if (flags_measurable_run(r, r->flags[k].code, &why) == 0) {
			json_t *ev = r->flags[k].evidence ? json_loads(r->flags[k].evidence, 0, NULL) : NULL;
			json_array_append_new(flags, json_pack("{s:s,s:s?,s:s?,s:o,s:s?}", "code", r->flags[k].code,
							       "severity", r->flags[k].severity, "message", r->flags[k].message,
							       "evidence", ev ? ev : json_object(), "remediation",
							       r->flags[k].remediation));
		}
	fprun_clear_flags(r);
	json_array_foreach(flags, i, f) {
		char *ev = json_dumps(json_object_get(f, "evidence"), JSON_COMPACT | JSON_REAL_PRECISION(17));
		json_t *g = json_object_get(json_object_get(f, "evidence"), "gpu");
		fprun_add_flag(r, json_string_value(json_object_get(f, "code")), json_string_value(json_object_get(f, "severity")),
			       json_string_value(json_object_get(f, "message")), json_string_value(json_object_get(f, "remediation")),
			       ev ? ev : "{}", json_is_integer(g) ? (int)json_integer_value(g) : -1);
		free(ev);
	}
	json_decref(flags);
}
