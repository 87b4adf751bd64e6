/*
 * metric_dups.c - one rule for a metric with more than one row (policy_int.h
 * policy_fold_duplicates): the judge takes its worst row.  A fingerprint
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
#include "results/fprun.h"
#include "benches/bench.h"
#include "common/util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct key {
	const char *name;
	int gpu;
	size_t idx;
};

static int cmp_key(const void *pa, const void *pb)
{
	const struct key *a = pa, *b = pb;
	int c = strcmp(a->name, b->name);
	if (!c)
		c = (a->gpu > b->gpu) - (a->gpu < b->gpu);
	return c ? c : (a->idx > b->idx) - (a->idx < b->idx);
}

static double worse(const char *name, double a, double b)
{
	const struct metric_info *mi = name ? metric_info_find(name) : NULL;
	if (isnan(a) || isnan(b))
		return NAN;
	return mi && (mi->flags & METRIC_LOWER_IS_BETTER) ? fmax(a, b) : fmin(a, b);
}

size_t policy_fold_duplicates(struct fprun *r)
{
	size_t n = r->nmetrics, nresolved = 0;
	if (n < 2)
		return 0;
	struct key *k = gv_malloc(n * sizeof *k);
	for (size_t i = 0; i < n; i++)
		k[i] = (struct key){ r->metrics[i].name, r->metrics[i].gpu, i };
	qsort(k, n, sizeof *k, cmp_key);
	unsigned char *drop = gv_calloc(n, 1);
	for (size_t a = 0; a < n;) {
		size_t b = a + 1;
		double v = isfinite(r->metrics[k[a].idx].value) ? r->metrics[k[a].idx].value : NAN;
		while (b < n && !strcmp(k[b].name, k[a].name) && k[b].gpu == k[a].gpu) {
			double w = r->metrics[k[b].idx].value;
			v = worse(k[a].name, v, isfinite(w) ? w : NAN);
			drop[k[b++].idx] = 1;
		}
		if (b - a > 1) {   /* the key's first row stands for all of them, at their worst */
			r->metrics[k[a].idx].value = v;
			nresolved++;
		}
		a = b;
	}
	free(k);
	if (nresolved) {
		size_t keep = 0;
		for (size_t i = 0; i < n; i++)
			if (!drop[i])
				r->metrics[keep++] = r->metrics[i];
		r->nmetrics = keep;
		fprun_reindex(r);
	}
	free(drop);
	return nresolved;
}
