/*
 * report_agg.c - what the report says about every run it covers, held in
 * state that does not grow with the store (see report_int.h, struct
 * rep_agg): the summary's counts, per instance type its runs, verdicts,
 * newest run and the middle of its BF16 values, per flag code its runs and
 * worst severity, the gpuvet versions, the GPU models, per model the middle
 * of its soak values; and which runs the page shows, chosen while the runs
 * go by (the detail's newest per type, the runs table's newest and
 * flagged), so only those are ever loaded whole.
 *
 * Runs are fed in the order the page lists them (started, then id) for the
 * choices; a median's values are fed once more in ascending order, from the
 * store's ordered scan or a sorted copy in memory, after the group's count
 * is known, and only the middle four are kept (enough for the median with
 * one run left out: the charts' "other runs").
 */
#include "reports/report_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- the middle of a group's sorted values ---- */

static size_t med_first(size_t n)
{
	return (n - 1) / 2 >= 1 ? (n - 1) / 2 - 1 : 0;
}

void rep_med_add(struct rep_med *m, double v)
{
	size_t at = m->seen++, w0;
	if (!m->n || at >= m->n)
		return;
	w0 = med_first(m->n);
	if (at >= w0 && at < w0 + 4)
		m->v[at - w0] = v;
}

/* v[i] of the sorted values (i within the kept middle) */
static double med_at(const struct rep_med *m, size_t i)
{
	return m->v[i - med_first(m->n)];
}

/* The median, as common/stats.c gv_median_inplace computes it; NaN for none. */
double rep_med_value(const struct rep_med *m)
{
	size_t n = m->n;
	if (!n || m->seen < n)
		return NAN;
	return n % 2 ? med_at(m, n / 2) : (med_at(m, n / 2 - 1) + med_at(m, n / 2)) / 2;
}

/* The median of the values but one that equals x (x one of them); NaN when none is left. */
double rep_med_without(const struct rep_med *m, double x)
{
	size_t n = m->n, k = n - 1, w0 = med_first(n), last = w0 + 3 < n - 1 ? w0 + 3 : n - 1, p;
	double w[2];
	if (n < 2 || m->seen < n)
		return NAN;
	/* p: where x sits among the sorted values (the first of the middle it equals, else before or after all) */
	if (x < med_at(m, w0))
		p = 0;
	else if (x > med_at(m, last))
		p = n;
	else
		for (p = w0; p <= last && med_at(m, p) != x; p++)
			;
	for (size_t j = 0; j < 2; j++) {
		size_t i = k % 2 ? k / 2 : k / 2 - 1 + j;   /* the index wanted in the list without x */
		w[j] = med_at(m, i < p ? i : i + 1);
	}
	return k % 2 ? w[0] : (w[0] + w[1]) / 2;
}

/* ---- instance types, found by their interned key ---- */

static size_t ptr_hash(const void *p, size_t cap)
{
	uint64_t h = (uint64_t)(uintptr_t)p * 11400714819323198485ULL;   /* 2^64 / golden ratio (Fibonacci hashing) */
	return (size_t)(h >> 32) & (cap - 1);
}

static void sku_rehash(struct rep_agg *a)
{
	free(a->sku_ix);
	a->sku_cap = a->sku_cap ? a->sku_cap * 2 : 64;
	a->sku_ix = gv_malloc(a->sku_cap * sizeof *a->sku_ix);
	for (size_t i = 0; i < a->sku_cap; i++)
		a->sku_ix[i] = SIZE_MAX;
	for (size_t k = 0; k < a->nsku; k++) {
		size_t i = ptr_hash(a->sku[k].key, a->sku_cap);
		while (a->sku_ix[i] != SIZE_MAX)
			i = (i + 1) & (a->sku_cap - 1);
		a->sku_ix[i] = k;
	}
}

/* The instance type of key (interned in a->strs); added when new and add is set, else NULL. */
struct rep_sku *rep_agg_sku(struct rep_agg *a, const char *key, int add)
{
	size_t i;
	if (a->sku_cap) {
		for (i = ptr_hash(key, a->sku_cap); a->sku_ix[i] != SIZE_MAX; i = (i + 1) & (a->sku_cap - 1))
			if (a->sku[a->sku_ix[i]].key == key)
				return &a->sku[a->sku_ix[i]];
	}
	if (!add)
		return NULL;
	if (2 * (a->nsku + 1) > a->sku_cap) {
		a->sku = gv_realloc(a->sku, (a->sku_cap ? a->sku_cap : 64) * sizeof *a->sku);
		sku_rehash(a);
	}
	struct rep_sku *s = &a->sku[a->nsku];
	memset(s, 0, sizeof *s);
	s->key = key;
	s->recent = gv_calloc((size_t)a->per_sku, sizeof *s->recent);
	for (i = ptr_hash(key, a->sku_cap); a->sku_ix[i] != SIZE_MAX; i = (i + 1) & (a->sku_cap - 1))
		;
	a->sku_ix[i] = a->nsku++;
	return s;
}

void rep_agg_init(struct rep_agg *a, struct rep_strs *strs, int per_sku, int detail_max)
{
	memset(a, 0, sizeof *a);
	a->strs = strs;
	a->per_sku = per_sku > 0 ? per_sku : REPORT_DETAIL_PER_SKU;
	a->detail_max = detail_max > 0 ? detail_max : REPORT_DETAIL_MAX;
}

void rep_agg_free(struct rep_agg *a)
{
	for (size_t k = 0; k < a->nsku; k++) {
		free(a->sku[k].recent);
		free(a->sku[k].started);
	}
	free(a->sku);
	free(a->sku_ix);
	free(a->models);
	free(a->soak);
	free(a->last);
	free(a->flagged);
	memset(a, 0, sizeof *a);
}

/* ---- counting a run ---- */

/* Each "CODE:severity" of a run's flag list into fn; the severity as rep_sev_index. */
void rep_each_flag(const char *p, void (*fn)(void *ud, const char *code, size_t len, int sev), void *ud)
{
	while (p && *p) {
		const char *sp = strchr(p, ' '), *colon;
		size_t len = sp ? (size_t)(sp - p) : strlen(p);
		int sev = 2;
		colon = memchr(p, ':', len);
		if (colon)
			sev = colon[1] == 'c' ? 0 : colon[1] == 'w' ? 1 : 2;
		fn(ud, p, colon ? (size_t)(colon - p) : len, sev);
		p = sp ? sp + 1 : NULL;
	}
}

struct flag_walk {
	struct rep_agg *a;
	uint64_t seq;
	int64_t detail_id;   /* > 0: only note this detailed run as the code's example */
	int64_t run_id;      /* the run counted */
};

static void count_flag(void *ud, const char *p, size_t len, int sev)
{
	struct flag_walk *w = ud;
	struct rep_agg *a = w->a;
	char code[48];
	size_t k, cl = len < sizeof code ? len : sizeof code - 1;
	memcpy(code, p, cl);
	code[cl] = 0;
	for (k = 0; k < a->nfc; k++)
		if (!strcmp(a->fc[k].code, code))
			break;
	if (w->detail_id) {
		if (k < a->nfc)
			a->fc[k].latest_detail = w->detail_id;
		return;
	}
	if (k == a->nfc && a->nfc < sizeof a->fc / sizeof a->fc[0]) {
		memset(&a->fc[k], 0, sizeof a->fc[k]);
		gv_strlcpy(a->fc[k].code, code, sizeof a->fc[k].code);
		a->fc[k].sev = sev;
		a->fc[k].last_seq = UINT64_MAX;
		a->nfc++;
	}
	if (k < a->nfc) {
		if (a->fc[k].last_seq != w->seq) {   /* each run once per code */
			a->fc[k].last_seq = w->seq;
			a->fc[k].runs++;
		}
		if (w->run_id > a->fc[k].example)
			a->fc[k].example = w->run_id;
		if (sev < a->fc[k].sev)
			a->fc[k].sev = sev;
	}
}

/*
 * A run's flags ("CODE:severity ...") into the flag codes' runs and worst
 * severity; run_key names the run (distinct per run, so each counts once
 * per code): its place in the page's order from rep_agg_add, its id from
 * the full-store pass (report_scan.c), which reads the flags in id order.
 */
void rep_agg_add_flags(struct rep_agg *a, const char *flags, uint64_t run_key, int64_t run_id)
{
	struct flag_walk fw = { a, run_key, 0, run_id };
	rep_each_flag(flags, count_flag, &fw);
}

static int cmp_type(const void *x, const void *y)
{
	const struct rep_sku *a = *(const struct rep_sku *const *)x, *b = *(const struct rep_sku *const *)y;
	int c = strcmp(a->provider ? a->provider : "", b->provider ? b->provider : "");
	return c ? c : strcmp(a->itype ? a->itype : "", b->itype ? b->itype : "");
}

size_t rep_agg_types(const struct rep_agg *a)
{
	const struct rep_sku **v = gv_malloc((a->nsku ? a->nsku : 1) * sizeof *v);
	size_t n = 0, types = 0;
	for (size_t k = 0; k < a->nsku; k++)
		if (a->sku[k].runs)
			v[n++] = &a->sku[k];
	qsort(v, n, sizeof *v, cmp_type);   /* a type's regions side by side: each type counted once */
	for (size_t k = 0; k < n; k++)
		types += k == 0 || cmp_type(&v[k - 1], &v[k]) != 0;
	free(v);
	return types;
}

/* cur again when s equals it (the runs of a type mostly share their columns: no hash), else s interned. */
static const char *intern_same(struct rep_agg *a, const char *cur, const char *s)
{
	return cur && s && !strcmp(cur, s) ? cur : rep_strs_get(a->strs, s);
}

static void count_version(struct rep_agg *a, const char *version)
{
	const char *v = version ? version : "unknown";
	int k;
	for (k = 0; k < a->nv; k++)   /* by text: a few versions, and no hash per run */
		if (!strcmp(a->vers[k], v))
			break;
	v = k < a->nv ? a->vers[k] : rep_strs_get(a->strs, v);
	if (k == a->nv && a->nv < 16) {
		a->vers[a->nv] = v;
		a->vcount[a->nv++] = 0;
	}
	if (k < a->nv)
		a->vcount[k]++;
}

static void count_model(struct rep_agg *a, const char *model)
{
	const char *m;
	if (!model)
		return;
	for (size_t k = 0; k < a->nmodels; k++)   /* by text: a few models, and no hash per run */
		if (!strcmp(a->models[k], model))
			return;
	m = rep_strs_get(a->strs, model);
	a->models = gv_realloc(a->models, (a->nmodels + 1) * sizeof *a->models);
	a->models[a->nmodels++] = m;
}

/* Whether x is newer than y: later started, then the higher id (rep_cmp_newest). */
static int newer(const char *xs, int64_t xid, const char *ys, int64_t yid)
{
	int c = strcmp(xs ? xs : "", ys ? ys : "");
	return c ? c > 0 : xid > yid;
}

/* Counts r (r->sku interned in a->strs), in the order the page lists runs; seq: its place in that order. */
void rep_agg_add(struct rep_agg *a, const struct run_sum *r, uint64_t seq)
{
	struct rep_sku *s = rep_agg_sku(a, r->sku, 1);
	const char *v = r->verdict;

	int vi = !v ? 3 : !strcmp(v, "accept") ? 0 : !strcmp(v, "reject") ? 1 : 2;
	a->runs++;
	a->verd[vi]++;
	if (r->id > a->verd_example[vi])
		a->verd_example[vi] = r->id;
	a->incomplete += r->status && strcmp(r->status, "complete") != 0;
	a->synthetic += r->host && strstr(r->host, "synthetic") != NULL;
	for (size_t h = 0; h < N_HEAD; h++)
		a->head_present[h] |= isfinite(r->head[h]) != 0;
	rep_agg_add_flags(a, r->flags, seq, r->id);
	count_version(a, r->version);
	count_model(a, r->gpu_model);

	s->runs++;
	s->acc += v && !strcmp(v, "accept");
	s->rej += v && !strcmp(v, "reject");
	s->crit += r->nflag[0] > 0;
	s->bf16.n += isfinite(r->head[0]) != 0;
	if (s->runs == 1 || newer(r->started, r->id, s->started, s->newest_id)) {
		size_t len = strlen(r->started ? r->started : "") + 1;
		if (len > s->started_cap)
			s->started = gv_realloc(s->started, s->started_cap = len);
		memcpy(s->started, r->started ? r->started : "", len);
		s->has_started = r->started != NULL;
		s->newest_id = r->id;
		s->provider = intern_same(a, s->provider, r->provider);
		s->itype = intern_same(a, s->itype, r->itype);
		s->region = intern_same(a, s->region, r->region);
		s->gpu_model = intern_same(a, s->gpu_model, r->gpu_model);
		s->gpu_count = r->gpu_count;
	}
}

/* The runs that have detail (in the page's order) name each flag code's example: the last of them. */
void rep_agg_note_detail(struct rep_agg *a, const struct run_sum *runs, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (runs[i].detail) {
			struct flag_walk fw = { a, 0, runs[i].id, 0 };
			rep_each_flag(runs[i].flags, count_flag, &fw);
		}
}

/* ---- the medians' values ---- */

/* GPU model's soak entry (interned model); added when add is set. */
struct rep_soak *rep_agg_soak(struct rep_agg *a, const char *model, int add)
{
	const char *m = rep_strs_get(a->strs, model);
	for (size_t k = 0; k < a->nsoak; k++)
		if (a->soak[k].model == m)
			return &a->soak[k];
	if (!add)
		return NULL;
	a->soak = gv_realloc(a->soak, (a->nsoak + 1) * sizeof *a->soak);
	memset(&a->soak[a->nsoak], 0, sizeof a->soak[0]);
	a->soak[a->nsoak].model = m;
	return &a->soak[a->nsoak++];
}

/* A run's soak figure per GPU for the fleet median (report_head[5], an instance sum), or NaN. */
static double run_soak(const struct run_sum *r)
{
	if (!r->gpu_model || r->gpu_count <= 0 || !isfinite(r->head[5]))
		return NAN;
	return r->head[5] / r->gpu_count;
}

struct med_val {
	size_t group;   /* an index: the groups' array may move while they are found */
	double v;
};

static int cmp_med_val(const void *x, const void *y)
{
	double a = ((const struct med_val *)x)->v, b = ((const struct med_val *)y)->v;
	return (a > b) - (a < b);
}

/*
 * The medians from runs held in memory (the report of given fingerprints,
 * or of the runs asked for with --run; every run counted by rep_agg_add):
 * the BF16 values by instance type, and, when soak is set, the soak values
 * by model (the fleet is these runs).
 */
void rep_agg_medians_mem(struct rep_agg *a, const struct run_sum *runs, size_t n, int soak)
{
	struct med_val *mv = gv_malloc((n ? n : 1) * sizeof *mv);
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		struct rep_sku *s = rep_agg_sku(a, runs[i].sku, 0);
		if (s && isfinite(runs[i].head[0]))
			mv[k++] = (struct med_val){ (size_t)(s - a->sku), runs[i].head[0] };
	}
	qsort(mv, k, sizeof *mv, cmp_med_val);
	for (size_t i = 0; i < k; i++)
		rep_med_add(&a->sku[mv[i].group].bf16, mv[i].v);
	k = 0;
	for (size_t i = 0; soak && i < n; i++) {
		if (!isfinite(run_soak(&runs[i])))
			continue;
		mv[k] = (struct med_val){ (size_t)(rep_agg_soak(a, runs[i].gpu_model, 1) - a->soak), run_soak(&runs[i]) };
		a->soak[mv[k++].group].med.n++;
	}
	qsort(mv, k, sizeof *mv, cmp_med_val);
	for (size_t i = 0; i < k; i++)
		rep_med_add(&a->soak[mv[i].group].med, mv[i].v);
	free(mv);
}

/* The median per GPU of soak.tflops.last_min over the fleet's other runs of r's GPU model; NaN when none. */
double rep_agg_fleet_soak(const struct rep_agg *a, const struct run_sum *r, size_t *nruns)
{
	const struct rep_soak *s = NULL;
	double x = run_soak(r);
	*nruns = 0;
	for (size_t k = 0; r->gpu_model && k < a->nsoak && !s; k++)
		if (!strcmp(a->soak[k].model, r->gpu_model))
			s = &a->soak[k];
	if (!s)
		return NAN;
	if (!isfinite(x)) {   /* r is not one of them */
		*nruns = s->med.n;
		return rep_med_value(&s->med);
	}
	*nruns = s->med.n - 1;
	return rep_med_without(&s->med, x);
}
