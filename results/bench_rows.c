/* bench_rows.c - one finished bench into the store (bench_rows.h). */
#include "results/bench_rows.h"
#include "results/store.h"

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

/* Adds a sample row's point to its series' buffer (created on first sight); -1 out of memory. */
static int buffer_point(struct series_buf **bufs, size_t *nbufs, const json_t *o)
{
	const char *series = json_string_value(json_object_get(o, "series"));
	int gpu = (int)json_integer_value(json_object_get(o, "gpu"));
	size_t k = 0;
	if (!series)
		return 0;
	while (k < *nbufs && ((*bufs)[k].gpu != gpu || strcmp((*bufs)[k].series, series)))
		k++;
	if (k == *nbufs) {
		struct series_buf *grown = realloc(*bufs, (k + 1) * sizeof *grown);
		if (!grown)
			return -1;
		*bufs = grown;
		grown[k] = (struct series_buf){ .series = series, .gpu = gpu };
		(*nbufs)++;
	}
	struct series_buf *b = &(*bufs)[k];
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

/* The sample rows, one store row per series. */
static int put_samples(struct store *s, int64_t run_id, const char *bench, const json_t *rows)
{
	struct series_buf *bufs = NULL;
	size_t nbufs = 0, i;
	json_t *o;
	int rc = 0;
	json_array_foreach(rows, i, o)
		if (row_is(o, "sample") && (rc = buffer_point(&bufs, &nbufs, o)))
			break;
	for (i = 0; i < nbufs; i++) {
		if (!rc)
			rc = store_put_series(s, run_id, bench, bufs[i].series, bufs[i].gpu, bufs[i].xy, bufs[i].n);
		free(bufs[i].xy);
	}
	free(bufs);
	return rc ? STORE_ERR : STORE_OK;
}

int store_put_bench_rows(struct store *s, int64_t run_id, const char *bench, const json_t *rows,
			 const struct bench_outcome *o)
{
	size_t i;
	json_t *m;
	int rc = store_bench_begin(s, run_id, bench);
	if (rc)
		return rc;
	json_array_foreach(rows, i, m) {
		if (!row_is(m, "metric"))
			continue;
		json_t *p = json_object_get(m, "params");
		char *params = p ? json_dumps(p, JSON_COMPACT) : NULL;
		rc = store_put_metric(s, run_id, bench, json_string_value(json_object_get(m, "name")),
				      (int)json_integer_value(json_object_get(m, "gpu")), num_or_nan(json_object_get(m, "value")),
				      json_string_value(json_object_get(m, "unit")), params);
		free(params);
		if (rc) {
			store_bench_abort(s);
			return rc;
		}
	}
	if ((rc = put_samples(s, run_id, bench, rows))) {
		store_bench_abort(s);
		return rc;
	}
	return store_bench_end(s, run_id, bench, o->status, o->reason, o->duration_s, o->config);
}
