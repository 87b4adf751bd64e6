/*
 * report_pick.c - which runs the page shows (the size rule of html.h),
 * chosen while the runs go by in the page's order (started, then id), in
 * state of a few entries per instance type and REPORT_ROWS_MAX rows: the
 * detail's newest runs of each type (and the charts' newest of those), the
 * runs table's detailed, newest flagged and newest runs.  Only the runs
 * chosen are then loaded whole (report_load.c).
 */
#include "reports/report_int.h"

#include <stdlib.h>
#include <string.h>

static void ring_put(struct rep_pick_ent *ring, size_t cap, size_t *fed, struct rep_pick_ent e)
{
	ring[(*fed)++ % cap] = e;
}

/*
 * A run of the instance type sku (interned), in the page's order; ref names
 * it to the caller (its index, or its id); forced: asked for with --run
 * (always detailed); flagged: a critical or warning flag.
 */
void rep_pick_add(struct rep_agg *a, const char *sku, size_t ref, uint64_t seq, int forced, int flagged)
{
	struct rep_sku *s = rep_agg_sku(a, sku, 1);
	struct rep_pick_ent e = { ref, seq, forced, 0, 0, 0 };
	if (!a->last) {
		a->last = gv_malloc(REPORT_ROWS_MAX * sizeof *a->last);
		a->flagged = gv_malloc(REPORT_ROWS_MAX * sizeof *a->flagged);
	}
	ring_put(s->recent, (size_t)a->per_sku, &s->nrecent, e);
	ring_put(a->last, REPORT_ROWS_MAX, &a->nlast, e);
	if (flagged)
		ring_put(a->flagged, REPORT_ROWS_MAX, &a->nflagged, e);
	a->forced += forced != 0;
	a->picked++;
}

static int cmp_seq_desc(const void *x, const void *y)
{
	uint64_t a = ((const struct rep_pick_ent *)x)->seq, b = ((const struct rep_pick_ent *)y)->seq;
	return (a < b) - (a > b);
}

/* The entries of a ring, newest first. */
static size_t ring_newest(const struct rep_pick_ent *ring, size_t cap, size_t fed, struct rep_pick_ent *out)
{
	size_t n = fed < cap ? fed : cap;
	for (size_t i = 0; i < n; i++)
		out[i] = ring[(fed - 1 - i) % cap];
	return n;
}

static struct rep_pick_ent *find_ent(struct rep_pick_ent *v, size_t n, uint64_t seq)
{
	for (size_t i = 0; i < n; i++)
		if (v[i].seq == seq)
			return &v[i];
	return NULL;
}

/*
 * The detailed runs: the newest per_sku of each type that were not asked
 * for, newest first, while forced and these stay under detail_max; charts
 * for the newest of them in each type.  Appended to out (n entries).
 */
static size_t pick_detail(struct rep_agg *a, struct rep_pick_ent *out, size_t n)
{
	size_t nc = 0, first = n;
	struct rep_pick_ent *cand = gv_malloc((a->nsku * (size_t)a->per_sku + 1) * sizeof *cand);
	for (size_t k = 0; k < a->nsku; k++) {
		struct rep_sku *s = &a->sku[k];
		size_t m = ring_newest(s->recent, (size_t)a->per_sku, s->nrecent, cand + nc);
		for (size_t i = 0, at = nc; i < m; i++, at++)
			if (!cand[at].forced)
				cand[nc++] = cand[at];
	}
	qsort(cand, nc, sizeof *cand, cmp_seq_desc);
	for (size_t i = 0; i < nc && a->forced + i < (size_t)a->detail_max; i++) {
		out[n] = cand[i];
		out[n++].detail = 1;
	}
	for (size_t k = 0; k < a->nsku; k++) {
		struct rep_sku *s = &a->sku[k];
		struct rep_pick_ent *recent = cand, *best = NULL;
		size_t m = ring_newest(s->recent, (size_t)a->per_sku, s->nrecent, recent);
		for (size_t i = 0; i < m && !best; i++)
			if (!recent[i].forced)
				best = find_ent(out + first, n - first, recent[i].seq);
		if (best)
			best->charts = 1;
	}
	free(cand);
	return n;
}

/*
 * The runs table's rows past the detailed ones when the runs are more than
 * REPORT_ROWS_MAX: the newest with a critical or warning flag (half of the
 * room left), then the newest of the rest, up to REPORT_ROWS_MAX in all.
 */
static size_t pick_rows(struct rep_agg *a, struct rep_pick_ent *out, size_t n)
{
	struct rep_pick_ent *v = gv_malloc(REPORT_ROWS_MAX * sizeof *v);
	size_t listed = n, room = n < REPORT_ROWS_MAX ? (REPORT_ROWS_MAX - n) / 2 : 0, detailed = n, m;

	m = ring_newest(a->flagged, REPORT_ROWS_MAX, a->nflagged, v);
	for (size_t i = 0; i < m && room; i++)
		if (!find_ent(out, detailed, v[i].seq)) {
			out[n++] = v[i];
			listed++;
			room--;
		}
	m = ring_newest(a->last, REPORT_ROWS_MAX, a->nlast, v);
	for (size_t i = 0; i < m && listed < REPORT_ROWS_MAX; i++)
		if (!find_ent(out, n, v[i].seq)) {
			out[n++] = v[i];
			listed++;
		}
	free(v);
	return n;
}

static int cmp_seq(const void *x, const void *y)
{
	return -cmp_seq_desc(x, y);
}

/*
 * The runs chosen, in the page's order: the detailed (detail, charts set)
 * and, with rows set, the runs table's other rows; every run when they are
 * REPORT_ROWS_MAX or fewer.  Returns how many, in *out (to free).
 */
size_t rep_pick(struct rep_agg *a, int rows, struct rep_pick_ent **out)
{
	size_t n = 0, cap = (size_t)a->detail_max + a->forced + (rows ? 2 * REPORT_ROWS_MAX : 0) + 1;
	*out = gv_calloc(cap, sizeof **out);
	n = pick_detail(a, *out, 0);
	if (rows && a->picked <= REPORT_ROWS_MAX) {
		struct rep_pick_ent *v = gv_malloc(REPORT_ROWS_MAX * sizeof *v);
		size_t m = ring_newest(a->last, REPORT_ROWS_MAX, a->nlast, v);
		for (size_t i = 0; i < m; i++)
			if (!find_ent(*out, n, v[i].seq))
				(*out)[n++] = v[i];
		free(v);
	} else if (rows) {
		n = pick_rows(a, *out, n);
	}
	qsort(*out, n, sizeof **out, cmp_seq);
	return n;
}

/* The page's order of run indices: newest first (qsort_r with the run array as argument). */
int rep_cmp_newest(const void *a, const void *b, void *base)
{
	const struct run_sum *runs = base;
	const struct run_sum *x = &runs[*(const size_t *)a], *y = &runs[*(const size_t *)b];
	int c = strcmp(y->started ? y->started : "", x->started ? x->started : "");
	if (c)
		return c;
	return (y->id > x->id) - (y->id < x->id);
}

/* The size rule over runs held in memory: sets each run's detail and charts (a run with detail set is forced). */
void report_pick_detail(struct rep_agg *a, struct run_sum *runs, size_t n)
{
	size_t *idx = gv_malloc((n ? n : 1) * sizeof *idx), np;
	struct rep_pick_ent *p;
	for (size_t i = 0; i < n; i++) {
		idx[i] = i;
		runs[i].forced = runs[i].detail != 0;
		runs[i].charts = runs[i].forced;
	}
	qsort_r(idx, n, sizeof *idx, rep_cmp_newest, runs);
	for (size_t i = n; i-- > 0;)   /* oldest first: the page's order */
		rep_pick_add(a, runs[idx[i]].sku, idx[i], n - 1 - i, runs[idx[i]].forced, 0);
	np = rep_pick(a, 0, &p);
	for (size_t i = 0; i < np; i++) {
		runs[p[i].ref].detail = 1;
		runs[p[i].ref].charts |= p[i].charts;
	}
	free(p);
	free(idx);
}
