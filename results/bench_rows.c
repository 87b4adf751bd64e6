/* bench_rows.c - one finished bench into the store (bench_rows.h). */
#include "results/bench_rows.h"
#include "results/store.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static double num_or_nan(const json_t *v)
{
	return json_is_number(v) ? json_number_value(v) : 0.0 / 0.0;
}

/* The points one series has received, before they are written as one row. */
struct series_buf {
	const char *series;      /* borrowed from the rows */
	int gpu;
	double *xy;
	size_t n, cap;
};

struct bench_prepared {
	const json_t *rows;       /* the metric rows are read from here, in order */
	struct series_buf *bufs;  /* one per (series, gpu), in order of first sight */
	size_t nbufs, cap;
	size_t *slot;             /* open-addressing hash of (series, gpu): index + 1, 0 empty */
	size_t nslots;            /* a power of two, at least twice nbufs */
};

static uint64_t key_hash(const char *series, int gpu)
{
	uint64_t h = 1469598103934665603ull ^ (uint64_t)(unsigned)gpu;   /* FNV-1a */
	for (const unsigned char *c = (const unsigned char *)series; *c; c++)
		h = (h ^ *c) * 1099511628211ull;
	return h;
}

static size_t *find_slot(struct bench_prepared *p, const char *series, int gpu)
{
	size_t i = (size_t)key_hash(series, gpu) & (p->nslots - 1);
	while (p->slot[i]) {
		const struct series_buf *b = &p->bufs[p->slot[i] - 1];
		if (b->gpu == gpu && !strcmp(b->series, series))
			break;
		i = (i + 1) & (p->nslots - 1);
	}
	return &p->slot[i];
}

/* Doubles the hash when it is half full; -1 out of memory. */
static int grow_slots(struct bench_prepared *p)
{
	if (2 * (p->nbufs + 1) <= p->nslots)
		return 0;
	size_t n = p->nslots ? 2 * p->nslots : 64;
	size_t *old = p->slot, oldn = p->nslots;
	if (!(p->slot = calloc(n, sizeof *p->slot))) {
		p->slot = old;
		return -1;
	}
	p->nslots = n;
	for (size_t i = 0; i < oldn; i++)
		if (old[i])
			*find_slot(p, p->bufs[old[i] - 1].series, p->bufs[old[i] - 1].gpu) = old[i];
	free(old);
	return 0;
}

/* Adds a sample row's point to its series' buffer (created on first sight); -1 out of memory. */
static int buffer_point(struct bench_prepared *p, const json_t *o)
{
	const char *series = json_string_value(json_object_get(o, "series"));
	int gpu = (int)json_integer_value(json_object_get(o, "gpu"));
	if (!series)
		return 0;
	if (grow_slots(p))
		return -1;
	size_t *slot = find_slot(p, series, gpu);
	if (!*slot) {
		if (p->nbufs == p->cap) {
			size_t cap = p->cap ? 2 * p->cap : 16;
			struct series_buf *grown = realloc(p->bufs, cap * sizeof *grown);
			if (!grown)
				return -1;
			p->bufs = grown;
			p->cap = cap;
		}
		p->bufs[p->nbufs] = (struct series_buf){ .series = series, .gpu = gpu };
		*slot = ++p->nbufs;
	}
	struct series_buf *b = &p->bufs[*slot - 1];
	if (b->n == b->cap) {
		size_t cap = b->cap ? 2 * b->cap : 64;
		double *xy = realloc(b->xy, 2 * cap * sizeof *xy);
		if (!xy)
			return -1;
		b->xy = xy;
		b->cap = cap;
	}
	b->xy[2 * b->n] = num_or_nan(json_object_get(o, "x"));
	b->xy[2 * b->n + 1] = num_or_nan(json_object_get(o, "y"));
	b->n++;
	return 0;
}

static int row_is(const json_t *o, const char *t)
{
	const char *k = json_string_value(json_object_get(o, "t"));
	return k && !strcmp(k, t);
}

void bench_rows_free(struct bench_prepared *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->nbufs; i++)
		free(p->bufs[i].xy);
	free(p->bufs);
	free(p->slot);
	free(p);
}

struct bench_prepared *bench_rows_prepare(const json_t *rows)
{
	struct bench_prepared *p = calloc(1, sizeof *p);
	size_t i;
	json_t *o;
	if (!p)
		return NULL;
	p->rows = rows;
	json_array_foreach(rows, i, o)
		if (row_is(o, "sample") && buffer_point(p, o)) {
			bench_rows_free(p);
			return NULL;
		}
	return p;
}

/* The metric rows, then one store row per series. */
static int put_rows(struct store *s, int64_t run_id, const char *bench, const struct bench_prepared *p)
{
	size_t i;
	json_t *m;
	int rc = 0;
	json_array_foreach(p->rows, i, m) {
		if (!row_is(m, "metric"))
			continue;
		json_t *pa = json_object_get(m, "params");
		char *params = pa ? json_dumps(pa, JSON_COMPACT) : NULL;
		rc = store_put_metric(s, run_id, bench, json_string_value(json_object_get(m, "name")),
				      (int)json_integer_value(json_object_get(m, "gpu")), num_or_nan(json_object_get(m, "value")),
				      json_string_value(json_object_get(m, "unit")), params);
		free(params);
		if (rc)
			return rc;
	}
	for (i = 0; i < p->nbufs && !rc; i++)
		rc = store_put_series(s, run_id, bench, p->bufs[i].series, p->bufs[i].gpu, p->bufs[i].xy, p->bufs[i].n);
	return rc;
}

int bench_rows_put(struct store *s, int64_t run_id, const char *bench, const struct bench_prepared *p,
		   const struct bench_outcome *o, int (*gate)(struct store *s, void *arg), void *arg)
{
	int rc = store_bench_begin(s, run_id, bench);
	if (rc)
		return rc;
	if ((gate && (rc = gate(s, arg))) || (rc = put_rows(s, run_id, bench, p))) {
		store_bench_abort(s);
		return rc;
	}
	return store_bench_end(s, run_id, bench, o->status, o->reason, o->duration_s, o->config);
}

int store_put_bench_rows(struct store *s, int64_t run_id, const char *bench, const json_t *rows,
			 const struct bench_outcome *o)
{
	struct bench_prepared *p = bench_rows_prepare(rows);
	if (!p)
		return STORE_ERR;
	int rc = bench_rows_put(s, run_id, bench, p, o, NULL, NULL);
	bench_rows_free(p);
	return rc;
}
