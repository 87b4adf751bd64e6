/*
 * metric_dups.c - one rule for a metric with more than one row (policy_int.h
 * policy_worst_of_duplicates): the judge takes its worst row.  A fingerprint
 * may hold two rows of one name and gpu (an import, or a harness that
 * derived a figure twice), under one bench or, in a store written before
 * imports checked which bench owns a metric (benches/metric_bounds.c), under
 * two: they are folded across the whole run, whatever bench each names;
 * reading whichever came first would let a second, better row hide a bad
 * one, or a first good one hide a second bad one.  The
 * worst is the lowest value, or the highest for a metric its bench declares
 * lower-is-better (benches/bench.h METRIC_LOWER_IS_BETTER: error counts,
 * latencies); a null among them makes the metric null (not measured).
 * Rows are sorted by key once (n log n: an import may hold many rows).
 */
#include "judge/policy_int.h"
#include "benches/bench.h"
#include "common/util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct key {
	const char *name;
	json_int_t gpu;
	size_t idx;
};

static int cmp_str(const char *a, const char *b)
{
	return strcmp(a ? a : "", b ? b : "");
}

static int cmp_key(const void *pa, const void *pb)
{
	const struct key *a = pa, *b = pb;
	int c = cmp_str(a->name, b->name);
	if (!c)
		c = (a->gpu > b->gpu) - (a->gpu < b->gpu);
	return c ? c : (a->idx > b->idx) - (a->idx < b->idx);
}

/* The row's value as a double; NaN for null or anything not a finite number. */
static double value_of(const json_t *m)
{
	json_t *v = json_object_get(m, "value");
	return json_is_number(v) && isfinite(json_number_value(v)) ? json_number_value(v) : NAN;
}

static double worse(const char *name, double a, double b)
{
	const struct metric_info *mi = name ? metric_info_find(name) : NULL;
	if (isnan(a) || isnan(b))
		return NAN;
	return mi && (mi->flags & METRIC_LOWER_IS_BETTER) ? fmax(a, b) : fmin(a, b);
}

json_t *policy_worst_of_duplicates(const json_t *fp, size_t *nresolved)
{
	const json_t *ms = json_object_get(fp, "metrics");
	size_t n = json_array_size(ms), i = 0;
	*nresolved = 0;
	if (n < 2)
		return json_incref((json_t *)fp);
	struct key *k = gv_malloc(n * sizeof *k);
	for (i = 0; i < n; i++) {
		const json_t *m = json_array_get(ms, i), *g = json_object_get(m, "gpu");
		k[i] = (struct key){ json_string_value(json_object_get(m, "name")), g ? json_integer_value(g) : -1, i };
	}
	qsort(k, n, sizeof *k, cmp_key);
	/* keep[i]: the row that stands for row i's key at position i (its first), NULL for a folded one */
	json_t **keep = gv_calloc(n, sizeof *keep);
	for (size_t a = 0; a < n;) {
		size_t b = a + 1;
		double v = value_of(json_array_get(ms, k[a].idx));
		while (b < n && !cmp_str(k[b].name, k[a].name) && k[b].gpu == k[a].gpu)
			v = worse(k[a].name, v, value_of(json_array_get(ms, k[b++].idx)));
		json_t *first = json_array_get(ms, k[a].idx);
		if (b - a > 1) {
			first = json_copy(first);
			json_object_set_new(first, "value", isnan(v) ? json_null() : json_real(v));
			(*nresolved)++;
		} else {
			json_incref(first);
		}
		keep[k[a].idx] = first;
		a = b;
	}
	free(k);
	json_t *out;
	if (!*nresolved) {
		out = json_incref((json_t *)fp);
		for (i = 0; i < n; i++)
			json_decref(keep[i]);
	} else {
		json_t *rows = json_array();
		out = json_copy((json_t *)fp);   /* shallow: only the metrics list is new */
		for (i = 0; i < n; i++)
			if (keep[i])
				json_array_append_new(rows, keep[i]);
		json_object_set_new(out, "metrics", rows);
	}
	free(keep);
	return out;
}
