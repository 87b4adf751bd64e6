/*
 * fprun_decode.c - the one reader of a fingerprint's text into the typed run
 * (fprun.h): from the strict JSON reader's tree (common/jtree.h), once.  A
 * field of another type than the schema's reads as absent (fp_check refuses
 * such a file before it is stored; a run of the store is ours).  The
 * inventory's fields are read once here under every name gpuvet's inventory
 * has used for them (pcie.gen_max or pcie_max_gen, ...), so no reader after
 * this knows the spellings.
 */
#include "results/fprun.h"
#include "results/fprun_int.h"
#include "common/gpu_evidence.h"
#include "common/util.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---- the tree's values ---- */

static const char *tstr(struct fprun *r, const struct jtree *t, uint32_t o, const char *key)
{
	return fprun_str(r, jt_str(t, jt_get(t, o, key)));
}

static double tnum(const struct jtree *t, uint32_t v)
{
	double d;
	return jt_number(t, v, &d) ? d : NAN;
}

/* A value's compact JSON text, interned; NULL for absent or null. */
static const char *ttext(struct fprun *r, const struct jtree *t, uint32_t v)
{
	char *s = jt_text(t, v);
	const char *c = fprun_str(r, s);
	free(s);
	return c;
}

/* The node at a dotted path ("pcie.gen_max") under o; 0 when absent. */
static uint32_t tpath(const struct jtree *t, uint32_t o, const char *path)
{
	char key[64];
	while (o && *path) {
		size_t n = strcspn(path, ".");
		if (n >= sizeof key)
			return 0;
		memcpy(key, path, n);
		key[n] = '\0';
		o = jt_get(t, o, key);
		path += n + (path[n] == '.');
	}
	return o;
}

/* A value read as a number the way the inventory's readers always have (fprun.h fp_obj_num). */
static int tvalue_num(const struct jtree *t, uint32_t v, double *out)
{
	static const char *const yes[] = { "enabled", "yes", "true", "on" };
	static const char *const no[] = { "disabled", "no", "false", "off", "none" };
	const char *s = jt_str(t, v);
	if (jt_number(t, v, out))
		return 0;
	if (jt_type(t, v) == JT_TRUE || jt_type(t, v) == JT_FALSE) {
		*out = jt_type(t, v) == JT_TRUE;
		return 0;
	}
	if (!s)
		return -1;
	for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++)
		if (!strcasecmp(s, yes[i]))
			return *out = 1, 0;
	for (size_t i = 0; i < sizeof no / sizeof no[0]; i++)
		if (!strcasecmp(s, no[i]))
			return *out = 0, 0;
	return gv_parse_double(s, out);
}

/* The first of the dotted paths (NULL-ended) that reads as a number; NaN when none does. */
static double tnum_any(const struct jtree *t, uint32_t o, ...)
{
	va_list ap;
	const char *p;
	double v = NAN, x;
	va_start(ap, o);
	while ((p = va_arg(ap, const char *)))
		if (!tvalue_num(t, tpath(t, o, p), &x)) {
			v = x;
			break;
		}
	va_end(ap);
	return v;
}

static const char *tstr_any(struct fprun *r, const struct jtree *t, uint32_t o, ...)
{
	va_list ap;
	const char *p, *s = NULL;
	va_start(ap, o);
	while (!s && (p = va_arg(ap, const char *)))
		s = jt_str(t, tpath(t, o, p));
	va_end(ap);
	return fprun_str(r, s);
}

struct fp_obj fprun_decode_obj(struct fprun *r, const struct jtree *t, uint32_t o)
{
	struct fp_obj none = { NULL, 0, 0 };
	if (jt_type(t, o) != JT_OBJ)
		return none;
	uint32_t n = t->nodes[o].n, k = o + 1;
	struct fp_kv *kv = fprun_alloc(r, (n ? n : 1) * sizeof *kv);
	for (uint32_t m = 0; m < n; m++, k = t->nodes[k + 1].end) {
		uint32_t v = k + 1;
		struct fp_kv *e = &kv[m];
		e->key = fprun_str(r, t->strs + t->nodes[k].u.s);
		e->num = NAN;
		switch (jt_type(t, v)) {
		case JT_NULL: e->type = FPV_NULL; break;
		case JT_FALSE: e->type = FPV_FALSE; e->num = 0; break;
		case JT_TRUE: e->type = FPV_TRUE; e->num = 1; break;
		case JT_INT: e->type = FPV_NUM; e->is_int = 1; e->num = (double)jt_int(t, v); break;
		case JT_REAL: e->type = FPV_NUM; e->num = t->nodes[v].u.d; break;
		case JT_STR: e->type = FPV_STR; e->str = fprun_str(r, jt_str(t, v)); break;
		default: e->type = FPV_JSON; e->str = ttext(r, t, v); break;
		}
	}
	return (struct fp_obj){ kv, n, 1 };
}

/* ---- the parts ---- */

static void decode_head(struct fprun *r, const struct jtree *t, uint32_t run)
{
	struct fp_head *h = &r->run;
	uint32_t gc = jt_get(t, run, "gpu_count"), id = jt_get(t, run, "id");
	h->id = jt_is_int(t, id) ? jt_int(t, id) : 0;
	h->uuid = tstr(r, t, run, "uuid");
	h->status = tstr(r, t, run, "status");
	h->profile = tstr(r, t, run, "profile");
	h->version = tstr(r, t, run, "gpuvet_version");
	h->hostname = tstr(r, t, run, "hostname");
	h->started_at = tstr(r, t, run, "started_at");
	h->finished_at = tstr(r, t, run, "finished_at");
	h->provider = tstr(r, t, run, "provider");
	h->instance_type = tstr(r, t, run, "instance_type");
	h->region = tstr(r, t, run, "region");
	h->gpu_model = tstr(r, t, run, "gpu_model");
	h->gpu_count = jt_is_int(t, gc) && jt_int(t, gc) >= 0 && jt_int(t, gc) <= 1 << 20 ? (int)jt_int(t, gc) : -1;
	uint32_t b = jt_get(t, run, "gpuvet_build");   /* checked at import (fp_check.c): an object or null */
	if (jt_type(t, b) == JT_OBJ) {
		h->has_build = 1;
		h->build_commit = tstr(r, t, b, "commit");
		h->build_at = tstr(r, t, b, "built_at");
		h->build_release = jt_type(t, jt_get(t, b, "release")) == JT_TRUE;
	}
}

static long pci_device(const struct jtree *t, uint32_t g)
{
	uint32_t v = jt_get(t, g, "pci_device_id");
	return gpu_pci_device_id(jt_str(t, v), jt_is_int(t, v) ? jt_int(t, v) : -1);
}

static void decode_gpu_health(struct fp_gpu *o, const struct jtree *t, uint32_t g)
{
	o->ecc_vol_unc = tnum_any(t, g, "ecc.volatile.uncorrected", "ecc.volatile_uncorrected", "ecc.uncorrected_volatile",
				  NULL);
	o->ecc_agg_unc = tnum_any(t, g, "ecc.aggregate.uncorrected", "ecc.aggregate_uncorrected",
				  "ecc.uncorrected_aggregate", NULL);
	o->ecc_vol_cor = tnum_any(t, g, "ecc.volatile.corrected", "ecc.volatile_corrected", "ecc.corrected_volatile", NULL);
	o->remap_pending = tnum_any(t, g, "remapped_rows.pending", "row_remap.pending", "remapped_rows_pending", NULL);
	o->remap_failure = tnum_any(t, g, "remapped_rows.failure", "row_remap.failure", "remapped_rows_failure", NULL);
	o->retired_pending = tnum_any(t, g, "retired_pages.pending", "retired_pages_pending", "page_retirement.pending",
				      NULL);
	o->nvlink_active = tnum_any(t, g, "nvlink.links_active", NULL);
	o->nvlink_crc_flit = tnum_any(t, g, "nvlink.errors.crc_flit", NULL);
	o->nvlink_crc_data = tnum_any(t, g, "nvlink.errors.crc_data", NULL);
	o->nvlink_recovery = tnum_any(t, g, "nvlink.errors.recovery", NULL);
	double mig = tnum_any(t, g, "mig.current", "mig_mode.current", "mig.current_mode", "mig_mode", "mig.enabled", "mig",
			      NULL);
	o->mig = mig > 0;
}

static void decode_gpu(struct fprun *r, struct fp_gpu *o, const struct jtree *t, uint32_t g, size_t i)
{
	uint32_t ix = jt_get(t, g, "index");
	double idx = tnum_any(t, g, "index", NULL);
	o->index = jt_type(t, ix) != JT_ABSENT && idx >= -1 && idx < 1 << 20 && idx == floor(idx) ? (int)idx : (int)i;
	o->name = tstr(r, t, g, "name");
	o->uuid = tstr(r, t, g, "uuid");
	o->vbios = tstr(r, t, g, "vbios");
	o->reference_model = tstr(r, t, g, "reference_model");
	o->memory_bytes = tnum_any(t, g, "memory_bytes", NULL);
	o->pci_device_id = pci_device(t, g);
	o->pcie_gen_max = tnum_any(t, g, "pcie.max_gen", "pcie.gen_max", "pcie.link_gen_max", "pcie.max_link_gen",
				   "pcie_gen_max", "pcie_max_gen", NULL);
	o->pcie_width_max = tnum_any(t, g, "pcie.max_width", "pcie.width_max", "pcie.link_width_max",
				     "pcie.max_link_width", "pcie_width_max", "pcie_max_width", NULL);
	o->pcie_gen = tnum_any(t, g, "pcie.gen_current", "pcie.current_gen", NULL);
	o->pcie_width = tnum_any(t, g, "pcie.width_current", "pcie.current_width", NULL);
	o->max_sm_mhz = tnum_any(t, g, "max_clocks_mhz.sm", NULL);
	o->virt_mode = tstr_any(r, t, g, "virtualization_mode", "virtualization.mode", "virtualization", NULL);
	/* nvmlGpuVirtualizationMode_t: NVML_GPU_VIRTUALIZATION_MODE_VGPU = 2 */
	o->vgpu = o->virt_mode ? strcasestr(o->virt_mode, "vgpu") && !strcasestr(o->virt_mode, "host")
			       : tnum_any(t, g, "virtualization_mode", "virtualization.mode", NULL) == 2;
	o->ecc_current = tstr_any(r, t, g, "ecc.current", NULL);
	o->ecc_pending = tstr_any(r, t, g, "ecc.pending", NULL);
	o->nvlink_errors = ttext(r, t, tpath(t, g, "nvlink.errors"));
	decode_gpu_health(o, t, g);
}

void fprun_decode_inventory(struct fprun *r, const struct jtree *t, uint32_t inv)
{
	struct fp_inventory *v = &r->inv;
	uint32_t gpus = jt_get(t, inv, "gpus"), ev = tpath(t, inv, "xid_history.events"), e;
	size_t i;
	v->text = jt_type(t, inv) == JT_OBJ ? ttext(r, t, inv) : fprun_str(r, "{}");
	v->gpu_error = tstr(r, t, inv, "gpu_error");
	v->driver_version = tstr_any(r, t, inv, "driver.version", NULL);
	v->gpus = gv_calloc(jt_size(t, gpus) + 1, sizeof *v->gpus);
	jt_foreach(t, gpus, i, e)
		if (jt_type(t, e) == JT_OBJ)
			decode_gpu(r, &v->gpus[v->ngpus++], t, e, i);
	v->has_xid_history = jt_type(t, ev) == JT_ARR;
	v->xids = gv_calloc(jt_size(t, ev) + 1, sizeof *v->xids);
	jt_foreach(t, ev, i, e)
		v->xids[v->nxids++] = (struct fp_xid){ tnum_any(t, e, "xid", NULL), tnum_any(t, e, "age_s", NULL),
						       tnum_any(t, e, "gpu", NULL) };
}

static int tgpu(const struct jtree *t, uint32_t o)
{
	uint32_t g = jt_get(t, o, "gpu");
	return jt_is_int(t, g) && jt_int(t, g) >= -1 && jt_int(t, g) < 1 << 20 ? (int)jt_int(t, g) : -1;
}

static void decode_benches(struct fprun *r, const struct jtree *t, uint32_t a)
{
	uint32_t e;
	size_t i;
	r->benches = gv_calloc(jt_size(t, a) + 1, sizeof *r->benches);
	jt_foreach(t, a, i, e) {
		struct fp_bench *b = &r->benches[r->nbenches++];
		b->name = tstr(r, t, e, "name");
		b->status = tstr(r, t, e, "status");
		b->reason = tstr(r, t, e, "reason");
		b->duration_s = tnum(t, jt_get(t, e, "duration_s"));
		b->config = fprun_decode_obj(r, t, jt_get(t, e, "config"));
	}
}

static void decode_metrics(struct fprun *r, const struct jtree *t, uint32_t a)
{
	uint32_t e;
	size_t i;
	r->metrics = gv_malloc((jt_size(t, a) + 1) * sizeof *r->metrics);
	r->capmetrics = jt_size(t, a) + 1;
	jt_foreach(t, a, i, e) {
		struct fp_metric *m = fprun_add_metric(r, jt_str(t, jt_get(t, e, "bench")), jt_str(t, jt_get(t, e, "name")),
						       tgpu(t, e), tnum(t, jt_get(t, e, "value")),
						       jt_str(t, jt_get(t, e, "unit")));
		uint32_t pm = jt_get(t, e, "params");
		char *text = jt_text(t, pm);
		m->params = fprun_decode_obj(r, t, pm);
		m->params_text = fprun_copy(r, text);
		free(text);
		m->of = fp_obj_str(&m->params, "of");
	}
}

static void decode_series(struct fprun *r, const struct jtree *t, uint32_t a)
{
	uint32_t e, p;
	size_t i, j;
	r->series = gv_calloc(jt_size(t, a) + 1, sizeof *r->series);
	jt_foreach(t, a, i, e) {
		uint32_t pts = jt_get(t, e, "points");
		struct fp_series *s = &r->series[r->nseries++];
		s->bench = fprun_str(r, jt_str(t, jt_get(t, e, "bench")) ? jt_str(t, jt_get(t, e, "bench")) : "");
		s->name = fprun_str(r, jt_str(t, jt_get(t, e, "series")) ? jt_str(t, jt_get(t, e, "series")) : "");
		s->gpu = tgpu(t, e);
		s->xy = gv_malloc((2 * jt_size(t, pts) + 1) * sizeof *s->xy);
		jt_foreach(t, pts, j, p) {
			uint32_t px = jt_first(t, p), py = px ? jt_next(t, p, px) : 0;
			s->xy[2 * s->n] = tnum(t, px);
			s->xy[2 * s->n + 1] = tnum(t, py);
			s->n++;
		}
	}
}

static void decode_flags(struct fprun *r, const struct jtree *t, uint32_t a)
{
	uint32_t e;
	size_t i;
	jt_foreach(t, a, i, e)
		fprun_add_flag(r, jt_str(t, jt_get(t, e, "code")), jt_str(t, jt_get(t, e, "severity")),
			       jt_str(t, jt_get(t, e, "message")), jt_str(t, jt_get(t, e, "remediation")),
			       ttext(r, t, jt_get(t, e, "evidence")), tgpu(t, jt_get(t, e, "evidence")));
}

static void decode_verdicts(struct fprun *r, const struct jtree *t, uint32_t a)
{
	uint32_t e;
	size_t i;
	jt_foreach(t, a, i, e) {
		struct fp_verdict v = { jt_str(t, jt_get(t, e, "verdict")), jt_str(t, jt_get(t, e, "policy")),
					jt_str(t, jt_get(t, e, "at")), jt_str(t, jt_get(t, e, "policy_digest")),
					jt_str(t, jt_get(t, e, "policy_source")), ttext(r, t, jt_get(t, e, "detail")),
					jt_type(t, jt_get(t, e, "imported")) == JT_TRUE };
		fprun_add_verdict(r, &v);
	}
}

struct fprun *fprun_decode(const struct jtree *t, uint32_t fp)
{
	struct fprun *r = fprun_new();
	decode_head(r, t, jt_get(t, fp, "run"));
	fprun_decode_inventory(r, t, jt_get(t, fp, "inventory"));
	decode_benches(r, t, jt_get(t, fp, "benches"));
	decode_metrics(r, t, jt_get(t, fp, "metrics"));
	decode_series(r, t, jt_get(t, fp, "samples"));
	decode_flags(r, t, jt_get(t, fp, "flags"));
	decode_verdicts(r, t, jt_get(t, fp, "verdicts"));
	return r;
}

struct fp_obj fprun_decode_obj_text(struct fprun *r, const char *text)
{
	struct fp_obj o = { NULL, 0, 0 };
	struct jtree t;
	if (!text || text[0] != '{')
		return o;
	if (!jt_parse(&t, text, strlen(text)))
		o = fprun_decode_obj(r, &t, 1);
	jt_free(&t);
	return o;
}

struct fprun *fprun_from_json(const json_t *fp)
{
	char *text = json_is_object(fp) ? json_dumps(fp, JSON_COMPACT | JSON_REAL_PRECISION(17)) : NULL;
	struct jtree t;
	struct fprun *r = NULL;
	if (text && !jt_parse(&t, text, strlen(text)))
		r = fprun_decode(&t, 1);
	if (text)
		jt_free(&t);
	free(text);
	return r;
}
