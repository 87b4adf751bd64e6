/*
 * fprun_json.c - the typed run written out (fprun.h): as a fingerprint
 * document of jansson's, the shape store_load_fingerprint() gives (for the
 * readers that still take one: the report, `cost`, `run --json`), and an
 * object's members as compact JSON text (what the store keeps).
 */
#include "results/fprun.h"
#include "results/store.h"
#include "common/util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static json_t *str_or_null(const char *s)
{
	return s ? json_string(s) : json_null();
}

static json_t *num_or_null(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

/* A JSON text read back (ours: written by jansson or jtree), or null. */
static json_t *text_json(const char *s)
{
	json_t *j = s ? json_loads(s, JSON_DECODE_ANY, NULL) : NULL;
	return j ? j : json_null();
}

static json_t *kv_json(const struct fp_kv *k)
{
	switch (k->type) {
	case FPV_FALSE: return json_false();
	case FPV_TRUE: return json_true();
	case FPV_NUM:
		if (k->is_int && fabs(k->num) < 9.2e18)
			return json_integer((json_int_t)k->num);
		return num_or_null(k->num);
	case FPV_STR: return json_string(k->str);
	case FPV_JSON: return text_json(k->str);
	default: return json_null();
	}
}

json_t *fprun_obj_json(const struct fp_obj *o)
{
	if (!o->present)
		return json_null();
	json_t *j = json_object();
	for (uint32_t i = 0; i < o->n; i++)
		json_object_set_new(j, o->kv[i].key, kv_json(&o->kv[i]));
	return j;
}

char *fprun_obj_text(const struct fp_obj *o)
{
	if (!o->present)
		return NULL;
	json_t *j = fprun_obj_json(o);
	char *s = json_dumps(j, JSON_COMPACT | JSON_REAL_PRECISION(17));
	json_decref(j);
	return s;
}

static json_t *head_json(const struct fp_head *h)
{
	json_t *run = json_object();
	if (h->id > 0)
		json_object_set_new(run, "id", json_integer(h->id));
	json_object_set_new(run, "uuid", str_or_null(h->uuid));
	json_object_set_new(run, "status", str_or_null(h->status));
	json_object_set_new(run, "profile", str_or_null(h->profile));
	json_object_set_new(run, "gpuvet_version", str_or_null(h->version));
	json_object_set_new(run, "hostname", str_or_null(h->hostname));
	json_object_set_new(run, "started_at", str_or_null(h->started_at));
	json_object_set_new(run, "finished_at", str_or_null(h->finished_at));
	json_object_set_new(run, "provider", str_or_null(h->provider));
	json_object_set_new(run, "instance_type", str_or_null(h->instance_type));
	json_object_set_new(run, "region", str_or_null(h->region));
	json_object_set_new(run, "gpu_model", str_or_null(h->gpu_model));
	json_object_set_new(run, "gpu_count", h->gpu_count >= 0 ? json_integer(h->gpu_count) : json_null());
	if (h->has_build)
		json_object_set_new(run, "gpuvet_build", json_pack("{s:o,s:o,s:b}", "commit", str_or_null(h->build_commit),
								     "built_at", str_or_null(h->build_at), "release",
								     h->build_release));
	return run;
}

static json_t *metric_row(const struct fp_metric *m);

static json_t *rows_json(const struct fprun *r)
{
	json_t *a = json_array();
	for (size_t i = 0; i < r->nmetrics; i++)
		json_array_append_new(a, metric_row(&r->metrics[i]));
	return a;
}

static json_t *series_json(const struct fprun *r)
{
	json_t *a = json_array();
	for (size_t i = 0; i < r->nseries; i++) {
		const struct fp_series *s = &r->series[i];
		json_t *pts = json_array();
		for (size_t j = 0; j < s->n; j++)
			json_array_append_new(pts, json_pack("[oo]", num_or_null(s->xy[2 * j]), num_or_null(s->xy[2 * j + 1])));
		json_array_append_new(a, json_pack("{s:s,s:s,s:i,s:o}", "bench", s->bench, "series", s->name, "gpu", s->gpu,
						   "points", pts));
	}
	return a;
}

/* A bench's config; derived, its timing class is gpuvet's (derive()), whatever the file said. */
static json_t *config_json(const struct fprun *r, const struct fp_bench *b)
{
	json_t *c = fprun_obj_json(&b->config);
	if (!r->d.done)
		return c;
	if (json_is_object(c))
		json_object_del(c, "timing");
	if (b->timing) {
		if (!json_is_object(c)) {
			json_decref(c);
			c = json_object();
		}
		json_object_set_new(c, "timing", json_string(b->timing));
	}
	return c;
}

static json_t *benches_json(const struct fprun *r)
{
	json_t *a = json_array();
	for (size_t i = 0; i < r->nbenches; i++) {
		const struct fp_bench *b = &r->benches[i];
		json_array_append_new(a, json_pack("{s:o,s:o,s:o,s:o,s:o}", "name", str_or_null(b->name), "status",
						   str_or_null(b->status), "reason", str_or_null(b->reason), "duration_s",
						   num_or_null(b->duration_s), "config", config_json(r, b)));
	}
	return a;
}

static json_t *flags_verdicts_json(const struct fprun *r, json_t *fp)
{
	json_t *fl = json_array(), *vd = json_array();
	for (size_t i = 0; i < r->nflags; i++) {
		const struct fp_flag *f = &r->flags[i];
		json_array_append_new(fl, json_pack("{s:o,s:o,s:o,s:o,s:o}", "code", str_or_null(f->code), "severity",
						    str_or_null(f->severity), "message", str_or_null(f->message), "evidence",
						    text_json(f->evidence), "remediation", str_or_null(f->remediation)));
	}
	for (size_t i = 0; i < r->nverdicts; i++) {
		const struct fp_verdict *v = &r->verdicts[i];
		json_array_append_new(vd, json_pack("{s:o,s:o,s:o,s:o,s:o,s:o,s:b}", "verdict", str_or_null(v->verdict),
						    "policy", str_or_null(v->policy), "at", str_or_null(v->at), "detail",
						    text_json(v->detail), "policy_digest", str_or_null(v->digest),
						    "policy_source", str_or_null(v->source), "imported", v->imported));
	}
	json_object_set_new(fp, "flags", fl);
	json_object_set_new(fp, "verdicts", vd);
	return fp;
}

json_t *fprun_to_json(const struct fprun *r)
{
	json_t *fp = json_object(), *inv = text_json(r->inv.text);
	json_object_set_new(fp, "schema", json_string(FINGERPRINT_SCHEMA));
	json_object_set_new(fp, "run", head_json(&r->run));
	json_object_set_new(fp, "inventory", json_is_object(inv) ? inv : (json_decref(inv), json_object()));
	json_object_set_new(fp, "benches", benches_json(r));
	json_object_set_new(fp, "metrics", rows_json(r));
	json_object_set_new(fp, "samples", series_json(r));
	return flags_verdicts_json(r, fp);
}

/* One row of a list, compact, on a line of its own; the reference is taken. */
static int write_row(FILE *f, json_t *row, int first)
{
	int rc = fputs(first ? "\n    " : ",\n    ", f) < 0 || json_dumpf(row, f, JSON_COMPACT | JSON_ENSURE_ASCII |
								   JSON_REAL_PRECISION(17)) < 0;
	json_decref(row);
	return rc;
}

static int write_list_end(FILE *f, size_t n)
{
	return fputs(n ? "\n  ]" : "]", f) < 0;
}

static json_t *metric_row(const struct fp_metric *m)
{
	json_t *o = json_pack("{s:s,s:s,s:i,s:o,s:o}", "bench", m->bench, "name", m->name, "gpu", m->gpu, "value",
			      num_or_null(m->value), "unit", str_or_null(m->unit));
	json_object_set_new(o, "params", m->params.present ? fprun_obj_json(&m->params) : json_object());
	return o;
}

int fprun_write(const struct fprun *r, FILE *f)
{
	json_t *head = head_json(&r->run), *inv = text_json(r->inv.text), *b = benches_json(r);
	int rc = fputs("{\n  \"schema\": \"" FINGERPRINT_SCHEMA "\",\n  \"run\": ", f) < 0 ||
		 json_dumpf(head, f, JSON_COMPACT | JSON_ENSURE_ASCII) < 0 || fputs(",\n  \"inventory\": ", f) < 0 ||
		 json_dumpf(inv, f, JSON_COMPACT | JSON_ENSURE_ASCII | JSON_ENCODE_ANY) < 0 ||
		 fputs(",\n  \"benches\": ", f) < 0 || json_dumpf(b, f, JSON_COMPACT | JSON_ENSURE_ASCII) < 0 ||
		 fputs(",\n  \"metrics\": [", f) < 0;
	json_decref(head);
	json_decref(inv);
	json_decref(b);
	/* a row at a time: the document is never whole in memory (a run of a million metrics) */
	for (size_t i = 0; !rc && i < r->nmetrics; i++)
		rc = write_row(f, metric_row(&r->metrics[i]), i == 0);
	rc = rc || write_list_end(f, r->nmetrics) || fputs(",\n  \"samples\": [", f) < 0;
	for (size_t i = 0; !rc && i < r->nseries; i++) {
		const struct fp_series *s = &r->series[i];
		json_t *pts = json_array();
		for (size_t j = 0; j < s->n; j++)
			json_array_append_new(pts, json_pack("[oo]", num_or_null(s->xy[2 * j]), num_or_null(s->xy[2 * j + 1])));
		rc = write_row(f, json_pack("{s:s,s:s,s:i,s:o}", "bench", s->bench, "series", s->name, "gpu", s->gpu, "points",
					    pts), i == 0);
	}
	json_t *fv = json_object();
	flags_verdicts_json(r, fv);
	rc = rc || write_list_end(f, r->nseries) || fputs(",\n  \"flags\": ", f) < 0 ||
	     json_dumpf(json_object_get(fv, "flags"), f, JSON_COMPACT | JSON_ENSURE_ASCII) < 0 ||
	     fputs(",\n  \"verdicts\": ", f) < 0 ||
	     json_dumpf(json_object_get(fv, "verdicts"), f, JSON_COMPACT | JSON_ENSURE_ASCII) < 0 || fputs("\n}\n", f) < 0;
	json_decref(fv);
	return rc ? -1 : 0;
}
