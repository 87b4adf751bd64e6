/*
 * import_rows.c - a parsed fingerprint checked and turned into the rows an
 * import writes (results/import_rows.h); no store is touched, so any thread
 * may build them.
 */
#include "results/import_rows.h"
#include "results/fp_check.h"
#include "results/fprun.h"
#include "common/severity.h"
#include "common/util.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *jstr(const struct jtree *t, uint32_t o, const char *k)
{
	return jt_str(t, jt_get(t, o, k));
}

static int valid_status(const char *s, const char *const *allowed)
{
	if (!s)
		return 0;
	for (; *allowed; allowed++)
		if (!strcmp(s, *allowed))
			return 1;
	return 0;
}

/* A number as double; NaN for absent or null (stored as NULL). -1 when neither number nor null. */
static int jnum(const struct jtree *t, uint32_t v, double *out)
{
	if (jt_number(t, v, out))
		return 0;
	if (jt_type(t, v) == JT_ABSENT || jt_type(t, v) == JT_NULL) {
		*out = 0.0 / 0.0;
		return 0;
	}
	return -1;
}

/* An optional GPU index (fp_check bounded it); -1 when absent. */
static int jgpu(const struct jtree *t, uint32_t o)
{
	uint32_t g = jt_get(t, o, "gpu");
	return g ? (int)jt_int(t, g) : -1;
}

static int refuse(struct store_import_rows *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int refuse(struct store_import_rows *r, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(r->err, sizeof r->err, fmt, ap);
	va_end(ap);
	r->late = 1;
	return -1;
}

/* The run's row and its GPUs (fp_check has passed: nothing here can be refused). */
static void run_rows(struct store_import_rows *r, const struct jtree *t, uint32_t fp)
{
	uint32_t run = jt_get(t, fp, "run"), inv = jt_get(t, fp, "inventory"), g;
	const char *status = jstr(t, run, "status");
	r->uuid = jstr(t, run, "uuid");
	r->status = status && !strcmp(status, "complete") ? "complete" : "incomplete";
	r->profile = jstr(t, run, "profile");
	r->version = jstr(t, run, "gpuvet_version");
	r->hostname = jstr(t, run, "hostname");
	r->provider = jstr(t, run, "provider");
	r->itype = jstr(t, run, "instance_type");
	r->region = jstr(t, run, "region");
	r->gpu_model = jstr(t, run, "gpu_model");
	r->gpu_count = (int)jt_int(t, jt_get(t, run, "gpu_count"));
	uint32_t b = jt_get(t, run, "gpuvet_build");
	if (jt_type(t, b) == JT_OBJ) {
		r->has_build = 1;
		r->build_commit = jstr(t, b, "commit");
		r->built_at = jstr(t, b, "built_at");
		r->build_release = jt_type(t, jt_get(t, b, "release")) == JT_TRUE;
	}
	/* times as instants in UTC, so that runs order right whatever offset their writers used */
	r->started = jstr(t, run, "started_at");
	r->finished = jstr(t, run, "finished_at");
	if (r->started && !fp_iso8601_utc(r->started, r->started_utc, sizeof r->started_utc))
		r->started = r->started_utc;
	if (r->finished && !fp_iso8601_utc(r->finished, r->finished_utc, sizeof r->finished_utc))
		r->finished = r->finished_utc;
	r->inventory = jt_text(t, inv);
	uint32_t gpus = jt_get(t, inv, "gpus");
	size_t i;
	r->gpus = gv_calloc(jt_size(t, gpus) + 1, sizeof *r->gpus);
	jt_foreach(t, gpus, i, g) {
		uint32_t ix = jt_get(t, g, "index");
		struct ir_gpu *o = &r->gpus[r->ngpus++];
		o->idx = jt_is_int(t, ix) ? jt_int(t, ix) : (long long)i;
		o->name = jstr(t, g, "name");
		o->uuid = jstr(t, g, "uuid");
		o->reference_model = jstr(t, g, "reference_model");
	}
}

static int bench_rows(struct store_import_rows *r, const struct jtree *t, uint32_t fp)
{
	static const char *const bench_st[] = { "ok", "skipped", "failed", "timed_out", NULL };
	uint32_t a = jt_get(t, fp, "benches"), e;
	size_t i;
	r->benches = gv_calloc(jt_size(t, a) + 1, sizeof *r->benches);
	jt_foreach(t, a, i, e) {
		struct ir_bench *o = &r->benches[i];
		o->name = jstr(t, e, "name");
		o->status = jstr(t, e, "status");
		if (!o->name || !valid_status(o->status, bench_st) || jnum(t, jt_get(t, e, "duration_s"), &o->duration_s))
			return refuse(r, "fingerprint: benches[%zu] needs name, status (ok|skipped|failed|timed_out)", i);
		o->reason = jstr(t, e, "reason");
		o->config = jt_text(t, jt_get(t, e, "config"));
		r->nbenches++;
	}
	return 0;
}

static int metric_rows(struct store_import_rows *r, const struct jtree *t, uint32_t fp)
{
	uint32_t a = jt_get(t, fp, "metrics"), e;
	size_t i;
	r->metrics = gv_calloc(jt_size(t, a) + 1, sizeof *r->metrics);
	jt_foreach(t, a, i, e) {
		struct ir_metric *o = &r->metrics[i];
		const char *bench = jstr(t, e, "bench");
		o->name = jstr(t, e, "name");
		if (!o->name || jnum(t, jt_get(t, e, "value"), &o->value))
			return refuse(r, "fingerprint: metrics[%zu] needs a name and a numeric value", i);
		o->bench = bench ? bench : "";
		o->gpu = jgpu(t, e);
		o->unit = jstr(t, e, "unit");
		/* with a derived run the rows written are its own (derived_rows): these only checked */
		o->params = r->run ? NULL : jt_text(t, jt_get(t, e, "params"));
		r->nmetrics++;
	}
	return 0;
}

/* A series' points packed straight from the text's numbers. */
static int pack_points(struct store_import_rows *r, const struct jtree *t, uint32_t pts, size_t i,
		       struct ir_series *o)
{
	size_t j;
	uint32_t p;
	o->n = jt_size(t, pts);
	if (o->n > (size_t)INT_MAX / STORE_POINT_BYTES)
		return refuse(r, "series '%s': too many points (%zu)", o->series, o->n);
	o->blob = malloc(o->n * STORE_POINT_BYTES + 1);
	if (!o->blob)
		return refuse(r, "out of memory for series '%s'", o->series);
	jt_foreach(t, pts, j, p) {
		uint32_t px = jt_first(t, p), py = px ? jt_next(t, p, px) : 0;
		double x, y;
		if (jt_size(t, p) != 2 || jnum(t, px, &x) || jnum(t, py, &y))
			return refuse(r, "fingerprint: samples[%zu].points[%zu] is not [x, y]", i, j);
		sto_pack_double(o->blob + STORE_POINT_BYTES * j, x);
		sto_pack_double(o->blob + STORE_POINT_BYTES * j + 8, y);
	}
	return 0;
}

static int series_rows(struct store_import_rows *r, const struct jtree *t, uint32_t fp)
{
	uint32_t a = jt_get(t, fp, "samples"), e;
	size_t i;
	r->series = gv_calloc(jt_size(t, a) + 1, sizeof *r->series);
	jt_foreach(t, a, i, e) {
		struct ir_series *o = &r->series[r->nseries++];   /* counted first: a half-packed blob is freed */
		uint32_t pts = jt_get(t, e, "points");
		const char *bench = jstr(t, e, "bench");
		o->series = jstr(t, e, "series");
		if (!o->series || jt_type(t, pts) != JT_ARR)
			return refuse(r, "fingerprint: samples[%zu] needs a series and points", i);
		o->bench = bench ? bench : "";
		o->gpu = jgpu(t, e);
		if (pack_points(r, t, pts, i, o))
			return -1;
	}
	return 0;
}

/* The rows of the run as derive() left it: its metrics (gpuvet's derived ones among them) and its flags. */
static void derived_rows(struct store_import_rows *r)
{
	struct fprun *d = r->run;
	r->metrics = gv_calloc(d->nmetrics + 1, sizeof *r->metrics);
	for (size_t i = 0; i < d->nmetrics; i++, r->nmetrics++) {
		const struct fp_metric *m = &d->metrics[i];
		/* a row's params written as they were read; a derived row's as derive() made them */
		r->metrics[i] = (struct ir_metric){ m->bench, m->name, m->unit, m->gpu, m->value,
						    m->params_text ? gv_strdup(m->params_text) : fprun_obj_text(&m->params) };
	}
	r->flags = gv_calloc(d->nflags + 1, sizeof *r->flags);
	for (size_t i = 0; i < d->nflags; i++, r->nflags++) {
		const struct fp_flag *f = &d->flags[i];
		r->flags[i] = (struct ir_flag){ f->code, f->severity, f->message, f->remediation,
						gv_strdup(f->evidence ? f->evidence : "{}") };
	}
}

static void free_metrics(struct store_import_rows *r)
{
	for (size_t i = 0; i < r->nmetrics; i++)
		free(r->metrics[i].params);
	free(r->metrics);
	r->metrics = NULL;
	r->nmetrics = 0;
}

static void free_flags(struct store_import_rows *r)
{
	for (size_t i = 0; i < r->nflags; i++)
		free(r->flags[i].evidence);
	free(r->flags);
	r->flags = NULL;
	r->nflags = 0;
}

static store_derive_fn derive_hook;

void store_set_derive(store_derive_fn fn)
{
	derive_hook = fn;
}

static int flag_rows(struct store_import_rows *r, const struct jtree *t, uint32_t fp)
{
	uint32_t a = jt_get(t, fp, "flags"), e;
	size_t i;
	r->flags = gv_calloc(jt_size(t, a) + 1, sizeof *r->flags);
	jt_foreach(t, a, i, e) {
		struct ir_flag *o = &r->flags[i];
		o->code = jstr(t, e, "code");
		o->severity = jstr(t, e, "severity");
		if (!o->code || gv_severity_rank(o->severity) < 0)
			return refuse(r, "fingerprint: flags[%zu] needs a code and a severity (critical|warning|info)", i);
		o->message = jstr(t, e, "message");
		o->remediation = jstr(t, e, "remediation");
		o->evidence = r->run ? NULL : jt_text(t, jt_get(t, e, "evidence"));
		r->nflags++;
	}
	return 0;
}

static int verdict_rows(struct store_import_rows *r, const struct jtree *t, uint32_t fp)
{
	static const char *const verd[] = { "accept", "reject", "unmeasurable", NULL };
	uint32_t a = jt_get(t, fp, "verdicts"), e;
	size_t i;
	r->verdicts = gv_calloc(jt_size(t, a) + 1, sizeof *r->verdicts);
	jt_foreach(t, a, i, e) {
		struct ir_verdict *o = &r->verdicts[i];
		const char *v = jstr(t, e, "verdict"), *pol = jstr(t, e, "policy"), *at = jstr(t, e, "at");
		if (!valid_status(v, verd) || !pol || !at)
			return refuse(r, "fingerprint: verdicts[%zu] needs verdict, policy and at", i);
		o->detail = jt_text(t, jt_get(t, e, "detail"));
		/* judged elsewhere: kept as history, marked imported, counting for nothing (docs/acceptance.md) */
		o->v = (struct sto_verdict){ v, pol, jstr(t, e, "policy_digest"), jstr(t, e, "policy_source"), o->detail,
					     at, 1 };
		r->nverdicts++;
	}
	return 0;
}

struct store_import_rows *store_import_prepare(const struct jtree *t)
{
	const uint32_t fp = 1;   /* the root */
	struct store_import_rows *r = gv_calloc(1, sizeof *r);
	const char *schema = jstr(t, fp, "schema");
	if (!schema || strcmp(schema, FINGERPRINT_SCHEMA)) {
		snprintf(r->err, sizeof r->err, "not a gpuvet fingerprint (schema '%s' expected)", FINGERPRINT_SCHEMA);
		r->early = 1;
		return r;
	}
	if (fp_check(t, fp, r->err, sizeof r->err)) {
		r->early = 1;
		return r;
	}
	if (derive_hook) {   /* decoded once; what can be derived is gpuvet's, a file that says otherwise refused */
		r->run = fprun_decode(t, fp);
		if (derive_hook(r->run, r->err, sizeof r->err)) {
			r->early = 1;
			return r;
		}
	}
	run_rows(r, t, fp);
	/* the first element refused, in the order the writes met them */
	if (bench_rows(r, t, fp) || metric_rows(r, t, fp) || series_rows(r, t, fp) || flag_rows(r, t, fp))
		return r;
	if (r->run) {   /* the rows derive() left: the file's checked above, gpuvet's written */
		free_metrics(r);
		free_flags(r);
		derived_rows(r);
	}
	verdict_rows(r, t, fp);
	return r;
}

void store_import_rows_free(struct store_import_rows *r)
{
	if (!r)
		return;
	fprun_free(r->run);
	free(r->inventory);
	free(r->gpus);
	for (size_t i = 0; i < r->nbenches; i++)
		free(r->benches[i].config);
	free(r->benches);
	for (size_t i = 0; i < r->nmetrics; i++)
		free(r->metrics[i].params);
	free(r->metrics);
	for (size_t i = 0; i < r->nseries; i++)
		free(r->series[i].blob);
	free(r->series);
	for (size_t i = 0; i < r->nflags; i++)
		free(r->flags[i].evidence);
	free(r->flags);
	for (size_t i = 0; i < r->nverdicts; i++)
		free(r->verdicts[i].detail);
	free(r->verdicts);
	free(r);
}
