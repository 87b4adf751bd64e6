/*
 * fprun.c - the typed run's memory and its lookups (fprun.h): an arena that
 * holds every text once (interned) and the small arrays of parameters, a
 * metric index built once by (name, gpu), and the rows appended.
 */
#include "results/fprun.h"
#include "common/util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define ARENA_CHUNK (64 * 1024)

struct chunk {
	struct chunk *next;
	size_t used, cap;
	max_align_t data[];
};

struct fp_arena {
	struct chunk *head;
	const char **slot;   /* interned texts: open addressing by hash */
	size_t nslots, nused;
};

static void *arena_get(struct fp_arena *a, size_t n)
{
	n = (n + sizeof(max_align_t) - 1) / sizeof(max_align_t) * sizeof(max_align_t);
	if (!a->head || a->head->cap - a->head->used < n) {
		size_t cap = n > ARENA_CHUNK ? n : ARENA_CHUNK;
		struct chunk *c = gv_malloc(sizeof *c + cap);
		c->next = a->head;
		c->used = 0;
		c->cap = cap;
		a->head = c;
	}
	void *p = (char *)a->head->data + a->head->used;
	a->head->used += n;
	return p;
}

struct fprun *fprun_new(void)
{
	struct fprun *r = gv_calloc(1, sizeof *r);
	r->arena = gv_calloc(1, sizeof *r->arena);
	r->run.gpu_count = -1;
	return r;
}

void fprun_free(struct fprun *r)
{
	if (!r)
		return;
	for (struct chunk *c = r->arena->head, *n; c; c = n) {
		n = c->next;
		free(c);
	}
	free(r->arena->slot);
	free(r->arena);
	for (size_t i = 0; i < r->nseries; i++)
		free(r->series[i].xy);
	free(r->series);
	free(r->metrics);
	free(r->benches);
	free(r->inv.gpus);
	free(r->inv.xids);
	free(r->flags);
	free(r->verdicts);
	mindex_free(&r->mx);
	free(r);
}

void *fprun_alloc(struct fprun *r, size_t n)
{
	void *p = arena_get(r->arena, n ? n : 1);
	memset(p, 0, n ? n : 1);
	return p;
}

const char *fprun_copy(struct fprun *r, const char *s)
{
	if (!s)
		return NULL;
	size_t n = strlen(s) + 1;
	char *c = arena_get(r->arena, n);
	memcpy(c, s, n);
	return c;
}

static void intern_grow(struct fp_arena *a)
{
	const char **old = a->slot;
	size_t on = a->nslots;
	a->nslots = on ? 2 * on : 256;
	a->slot = gv_calloc(a->nslots, sizeof *a->slot);
	for (size_t i = 0; i < on; i++)
		if (old[i]) {
			size_t j = (size_t)gv_hash_str(old[i]) & (a->nslots - 1);
			while (a->slot[j])
				j = (j + 1) & (a->nslots - 1);
			a->slot[j] = old[i];
		}
	free(old);
}

const char *fprun_str(struct fprun *r, const char *s)
{
	struct fp_arena *a = r->arena;
	if (!s)
		return NULL;
	if (2 * (a->nused + 1) > a->nslots)
		intern_grow(a);
	size_t j = (size_t)gv_hash_str(s) & (a->nslots - 1);
	while (a->slot[j]) {
		if (!strcmp(a->slot[j], s))
			return a->slot[j];
		j = (j + 1) & (a->nslots - 1);
	}
	size_t n = strlen(s) + 1;
	char *c = arena_get(a, n);
	memcpy(c, s, n);
	a->slot[j] = c;
	a->nused++;
	return c;
}

struct fp_obj fprun_obj(struct fprun *r, const struct fp_kv *kv, uint32_t n)
{
	struct fp_obj o = { NULL, n, 1 };
	if (n) {
		struct fp_kv *c = arena_get(r->arena, n * sizeof *c);
		for (uint32_t i = 0; i < n; i++) {
			c[i] = kv[i];
			c[i].key = fprun_str(r, kv[i].key);
			c[i].str = fprun_str(r, kv[i].str);
		}
		o.kv = c;
	}
	return o;
}

struct fp_metric *fprun_add_metric(struct fprun *r, const char *bench, const char *name, int gpu, double value,
				   const char *unit)
{
	if (r->nmetrics == r->capmetrics)
		r->metrics = gv_realloc(r->metrics, (r->capmetrics = r->capmetrics ? 2 * r->capmetrics : 64) *
					sizeof *r->metrics);
	struct fp_metric *m = &r->metrics[r->nmetrics++];
	memset(m, 0, sizeof *m);
	m->bench = fprun_str(r, bench ? bench : "");
	m->name = fprun_str(r, name ? name : "");
	m->unit = fprun_str(r, unit);
	m->gpu = gpu;
	m->value = value;
	return m;
}

void fprun_add_flag(struct fprun *r, const char *code, const char *severity, const char *message,
		    const char *remediation, const char *evidence, int gpu)
{
	if (r->nflags == r->capflags)
		r->flags = gv_realloc(r->flags, (r->capflags = r->capflags ? 2 * r->capflags : 16) * sizeof *r->flags);
	r->flags[r->nflags++] = (struct fp_flag){ fprun_str(r, code), fprun_str(r, severity), fprun_str(r, message),
						  fprun_str(r, remediation), fprun_str(r, evidence), gpu };
}

void fprun_reindex(struct fprun *r)
{
	r->mx_n = (size_t)-1;
}

void fprun_clear_flags(struct fprun *r)
{
	r->nflags = 0;
}

void fprun_add_verdict(struct fprun *r, const struct fp_verdict *v)
{
	if (r->nverdicts == r->capverdicts)
		r->verdicts = gv_realloc(r->verdicts, (r->capverdicts = r->capverdicts ? 2 * r->capverdicts : 8) *
					 sizeof *r->verdicts);
	r->verdicts[r->nverdicts++] = (struct fp_verdict){ fprun_str(r, v->verdict), fprun_str(r, v->policy),
		fprun_str(r, v->at), fprun_str(r, v->digest), fprun_str(r, v->source), fprun_str(r, v->detail),
		v->imported };
}

/* ---- lookups ---- */

const struct fp_metric *fprun_metric(struct fprun *r, const char *name, int gpu)
{
	size_t at;
	if (!name)
		return NULL;
	if (r->mx_n != r->nmetrics) {   /* rows were added since: the index again, once */
		mindex_free(&r->mx);
		for (size_t i = 0; i < r->nmetrics; i++)
			mindex_add(&r->mx, r->metrics[i].name, r->metrics[i].gpu, i);
		r->mx_n = r->nmetrics;
	}
	return mindex_find(&r->mx, name, gpu, &at) ? NULL : &r->metrics[at];
}

int fprun_value(struct fprun *r, const char *name, int gpu, double *v)
{
	const struct fp_metric *m = fprun_metric(r, name, gpu);
	if (!m || isnan(m->value))
		return -1;
	*v = m->value;
	return 0;
}

const struct fp_series *fprun_series(const struct fprun *r, const char *bench, const char *name, int gpu)
{
	for (size_t i = 0; name && i < r->nseries; i++) {
		const struct fp_series *s = &r->series[i];
		if (s->gpu == gpu && !strcmp(s->name, name) && (!bench || !strcmp(s->bench, bench)))
			return s;
	}
	return NULL;
}

const struct fp_bench *fprun_bench(const struct fprun *r, const char *name)
{
	for (size_t i = 0; name && i < r->nbenches; i++)
		if (r->benches[i].name && !strcmp(r->benches[i].name, name))
			return &r->benches[i];
	return NULL;
}

const struct fp_gpu *fprun_gpu(const struct fprun *r, int index)
{
	for (size_t i = 0; i < r->inv.ngpus; i++)
		if (r->inv.gpus[i].index == index)
			return &r->inv.gpus[i];
	return index >= 0 && (size_t)index < r->inv.ngpus ? &r->inv.gpus[index] : NULL;
}

const struct fp_kv *fp_obj_get(const struct fp_obj *o, const char *key)
{
	for (uint32_t i = 0; o && key && i < o->n; i++)
		if (!strcmp(o->kv[i].key, key))
			return &o->kv[i];
	return NULL;
}

int fp_obj_num(const struct fp_obj *o, const char *key, double *v)
{
	static const char *const yes[] = { "enabled", "yes", "true", "on" };
	static const char *const no[] = { "disabled", "no", "false", "off", "none" };
	const struct fp_kv *k = fp_obj_get(o, key);
	if (!k)
		return -1;
	if (k->type == FPV_NUM || k->type == FPV_TRUE || k->type == FPV_FALSE) {
		*v = k->num;
		return 0;
	}
	if (k->type != FPV_STR)
		return -1;
	for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++)
		if (!strcasecmp(k->str, yes[i])) {
			*v = 1;
			return 0;
		}
	for (size_t i = 0; i < sizeof no / sizeof no[0]; i++)
		if (!strcasecmp(k->str, no[i])) {
			*v = 0;
			return 0;
		}
	return gv_parse_double(k->str, v);
}

const char *fp_obj_str(const struct fp_obj *o, const char *key)
{
	const struct fp_kv *k = fp_obj_get(o, key);
	return k && k->type == FPV_STR ? k->str : NULL;
}
