/*
 * report_scan.c - the facts of every run the full-store report counts
 * besides its columns (report_load.c load_all): whether it has a critical
 * flag, a warning or critical one, its latest verdict, and a finite BF16
 * headline.  Each is read by one sequential scan in run-id order
 * (store_each_report_fact) before the pass in started order, which looks
 * them up here: no seek per run into indexes larger than the page cache.
 * The flags are counted into the page's flag codes (report_agg.c) as they
 * go by.  Held in one byte per run id from the smallest to the largest
 * (gaps included), with the run's instance type (two bytes) and GPU model
 * (one) noted by the pass in started order, so the BF16 and soak medians
 * read the values sorted from metrics_head alone, never joined to the
 * runs: the report's one per-run state, 4 MB at a million runs.
 */
#include "reports/report_int.h"
#include "results/store.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum {
	FACT_CRIT = 1,       /* a critical flag */
	FACT_FLAGGED = 2,    /* a warning or critical flag */
	FACT_BF16 = 4,       /* a finite report_head[0] */
	FACT_VSHIFT = 3,     /* bits 3-4: the latest verdict, 0 none, 1 accept, 2 reject, 3 another */
};

/* Where run id's facts are: 0 when it is no run's (none in one snapshot, but never trusted). */
static int fact_slot(const struct rep_facts *f, int64_t id, size_t *i)
{
	if (f->ids) {   /* sparse: found among the ids */
		size_t a = 0, b = f->n;
		while (a < b) {
			size_t m = a + (b - a) / 2;
			if (f->ids[m] < id)
				a = m + 1;
			else
				b = m;
		}
		*i = a;
		return a < f->n && f->ids[a] == id;
	}
	if (id < f->lo || (uint64_t)id - (uint64_t)f->lo >= f->n)   /* unsigned: no overflow whatever the ids */
		return 0;
	*i = (size_t)((uint64_t)id - (uint64_t)f->lo);
	return 1;
}

static unsigned char *fact_at(struct rep_facts *f, int64_t id)
{
	size_t i;
	return fact_slot(f, id, &i) ? &f->b[i] : NULL;
}

static void note_sev(void *ud, const char *code, size_t len, int sev)
{
	(void)code;
	(void)len;
	if (sev <= 1)
		*(unsigned char *)ud |= (unsigned char)(sev == 0 ? FACT_CRIT | FACT_FLAGGED : FACT_FLAGGED);
}

struct scan {
	struct rep_facts *f;
	struct rep_agg *a;
	int64_t prev;   /* take_head: the last run seen, when seen */
	int seen;
};

static int take_flag(void *ud, int64_t run_id, const char *text, double value)
{
	struct scan *w = ud;
	unsigned char *b = fact_at(w->f, run_id);
	(void)value;
	if (!b || !text)
		return 0;
	rep_agg_add_flags(w->a, text, (uint64_t)run_id, run_id);
	rep_each_flag(text, note_sev, b);
	return 0;
}

static int take_verdict(void *ud, int64_t run_id, const char *text, double value)
{
	struct scan *w = ud;
	unsigned char *b = fact_at(w->f, run_id);
	unsigned v = !text ? 0 : !strcmp(text, "accept") ? 1 : !strcmp(text, "reject") ? 2 : 3;
	(void)value;
	if (b)
		*b = (unsigned char)((*b & ~(3u << FACT_VSHIFT)) | v << FACT_VSHIFT);
	return 0;
}

/* A run's first row, as the by-id subquery reads it (the index's first: NULL, then the least value). */
static int take_head(void *ud, int64_t run_id, const char *name, double value, const char *unit)
{
	struct scan *w = ud;
	unsigned char *b = w->seen && run_id == w->prev ? NULL : fact_at(w->f, run_id);
	(void)name;
	(void)unit;
	w->prev = run_id;
	w->seen = 1;
	if (b && isfinite(value))
		*b |= FACT_BF16;
	return 0;
}

struct id_list {
	int64_t *ids;
	size_t n, cap;
};

static int take_id(void *ud, int64_t id)
{
	struct id_list *l = ud;
	if (l->n == l->cap)
		l->ids = gv_realloc(l->ids, (l->cap = l->cap ? 2 * l->cap : 1024) * sizeof *l->ids);
	l->ids[l->n++] = id;
	return 0;
}

int rep_facts_load(struct rep_facts *f, struct store *s, struct rep_agg *a)
{
	struct scan w = { .f = f, .a = a };
	int64_t hi, count;
	memset(f, 0, sizeof *f);
	if (store_run_id_range(s, &f->lo, &hi, &count))
		return -1;
	if (hi < f->lo || count <= 0)
		return 0;
	f->n = (size_t)count;
	if ((uint64_t)hi - (uint64_t)f->lo < 4 * (uint64_t)count + (1u << 20)) {
		f->n = (size_t)((uint64_t)hi - (uint64_t)f->lo) + 1;   /* dense, as SQLite numbers runs: by id */
	} else {   /* ids set by hand far apart: listed (8 bytes a run more), found by bisection */
		struct id_list l = { 0 };
		if (store_each_run_id(s, take_id, &l)) {
			free(l.ids);
			return -1;
		}
		f->ids = l.ids;
		f->n = l.n;
	}
	f->b = gv_calloc(f->n, 1);
	f->sku = gv_calloc(f->n, sizeof *f->sku);
	f->model = gv_calloc(f->n, sizeof *f->model);
	if (store_each_report_fact(s, STORE_FACT_FLAG, NULL, take_flag, &w) ||
	    store_each_report_fact(s, STORE_FACT_VERDICT, NULL, take_verdict, &w) ||
	    store_each_headline(s, &report_head[0], 1, take_head, &w)) {
		rep_facts_free(f);
		return -1;
	}
	return 0;
}

void rep_facts_apply(const struct rep_facts *f, struct run_sum *r)
{
	static const char *const verdict[4] = { NULL, "accept", "reject", "unmeasurable" };
	unsigned b = 0;
	size_t i;
	if (fact_slot(f, r->id, &i))
		b = f->b[i];
	r->nflag[0] = (b & FACT_CRIT) != 0;
	r->nflag[1] = (b & FACT_FLAGGED) != 0;
	r->verdict = verdict[b >> FACT_VSHIFT & 3];
	r->head[0] = b & FACT_BF16 ? 0.0 : NAN;   /* only whether it is finite is counted */
}

/* One GPU count per model, so its values per GPU sort as its values; at most 255 models and 255 GPUs. */
static void note_model(struct rep_facts *f, struct rep_agg *a, size_t i, const char *model, int gpus)
{
	size_t k = 0;
	while (k < a->nmodels && strcmp(a->models[k], model))   /* counted by rep_agg_add: found */
		k++;
	if (k >= sizeof f->model_gc || gpus > 255 || (f->model_gc[k] && f->model_gc[k] != gpus)) {
		free(f->model);   /* the soak medians join the runs instead */
		f->model = NULL;
		return;
	}
	f->model_gc[k] = (unsigned char)gpus;
	f->model[i] = (uint8_t)(k + 1);
}

void rep_facts_note_run(struct rep_facts *f, struct rep_agg *a, const struct run_sum *r)
{
	size_t i, k;
	if (!fact_slot(f, r->id, &i))
		return;
	k = (size_t)(rep_agg_sku(a, r->sku, 0) - a->sku);
	if (f->sku && k >= UINT16_MAX) {   /* more types than two bytes name: the medians join the runs instead */
		free(f->sku);
		f->sku = NULL;
	}
	if (f->sku)
		f->sku[i] = (uint16_t)(k + 1);
	if (f->model && r->gpu_model && r->gpu_count > 0)
		note_model(f, a, i, r->gpu_model, r->gpu_count);
}

static int take_bf16(void *ud, int64_t run_id, const char *text, double value)
{
	struct scan *w = ud;
	size_t i, k;
	(void)text;
	if (!fact_slot(w->f, run_id, &i))
		return 0;
	k = w->f->sku[i];
	if (k && k <= w->a->nsku)
		rep_med_add(&w->a->sku[k - 1].bf16, value);
	return 0;
}

int rep_facts_bf16_medians(const struct rep_facts *f, struct store *s, struct rep_agg *a)
{
	struct scan w = { .f = (struct rep_facts *)f, .a = a };
	if (!f->sku)
		return 1;
	return store_each_report_fact(s, STORE_FACT_HEAD_SORTED, report_head[0], take_bf16, &w) ? -1 : 0;
}

struct soak_scan {
	const struct rep_facts *f;
	struct rep_agg *a;
	int gpus;   /* the sorted pass's: its models' GPU count */
};

/* The run's noted model (+ 1; 0: none). */
static size_t model_of(const struct rep_facts *f, int64_t run_id)
{
	size_t i;
	return fact_slot(f, run_id, &i) ? f->model[i] : 0;
}

static int soak_count(void *ud, int64_t run_id, const char *text, double value)
{
	struct soak_scan *w = ud;
	size_t k = model_of(w->f, run_id);
	(void)text;
	(void)value;
	if (k)
		rep_agg_soak(w->a, w->a->models[k - 1], 1)->med.n++;
	return 0;
}

static int soak_value(void *ud, int64_t run_id, const char *text, double value)
{
	struct soak_scan *w = ud;
	size_t k = model_of(w->f, run_id);
	struct rep_soak *m;
	(void)text;
	if (k && w->f->model_gc[k - 1] == w->gpus && (m = rep_agg_soak(w->a, w->a->models[k - 1], 0)))
		rep_med_add(&m->med, value / w->gpus);
	return 0;
}

/* Counted in id order; then per GPU count, its models' values sorted (a model has one count, so no merge). */
int rep_facts_soak_medians(const struct rep_facts *f, struct store *s, struct rep_agg *a, const char *name)
{
	struct soak_scan w = { f, a, 0 };
	unsigned char done[256] = { 0 };
	if (!f->model)
		return 1;
	if (store_each_report_fact(s, STORE_FACT_HEAD_FINITE, name, soak_count, &w))
		return -1;
	for (size_t k = 0; k < sizeof f->model_gc; k++) {
		if (!f->model_gc[k] || done[f->model_gc[k]])
			continue;
		done[w.gpus = f->model_gc[k]] = 1;
		if (store_each_report_fact(s, STORE_FACT_HEAD_SORTED, name, soak_value, &w))
			return -1;
	}
	return 0;
}

void rep_facts_free(struct rep_facts *f)
{
	free(f->b);
	free(f->ids);
	free(f->sku);
	free(f->model);
	memset(f, 0, sizeof *f);
}
