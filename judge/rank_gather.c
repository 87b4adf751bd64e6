/*
 * rank_gather.c - what a ranking reads of the stored runs, read once: every
 * run's SKU entry (one per profile), its flags, and for each metric gathered
 * its instance-level values (into the run's entry, for the medians) and a
 * bit on the run saying it has the metric.  Three kinds of streamed
 * statement, each in run order: the runs (covering runs_list), the flags
 * (covering flags_run), each metric (covering metrics_head, one name at a
 * time: no sort).
 *
 * What depends on which metrics a ranking asks for (each SKU's runs and flag
 * codes, the runs left out for a critical flag, why nothing ranks) is
 * counted afterwards from the runs' bits (rank_gather_count), so the report
 * gathers its rankings' metrics once and counts each ranking from them
 * (rank_gather_copy, judge/rank.c rank_compute_gathered) instead of reading
 * the store once per ranking.
 *
 * State: 24 bytes per run (struct runent), 8 per gathered value kept (the
 * medians are exact), one copy of each distinct set of flags.
 */
#include "judge/rank_int.h"
#include "judge/flags.h"
#include "results/store.h"
#include "common/util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * The SKU entry of a run of this profile: its own, else the priced entry no
 * run has claimed yet, else a new entry with the price of the SKU's others
 * (profiles are never mixed in one median).
 */
static struct sku *sku_for_run(struct ctx *c, const char *provider, const char *itype, const char *profile)
{
	long base = -1;
	for (long i = rank_index_first(c, provider, itype); i >= 0; i = c->s[i].next_same) {
		struct sku *k = &c->s[i];
		if (k->profile && !strcmp(k->profile, profile))
			return k;
		if (base < 0 || !k->profile)
			base = (long)i;
	}
	if (base >= 0 && !c->s[base].profile) {
		c->s[base].profile = gv_strdup(profile);
		return &c->s[base];
	}
	rank_index_room(c);
	struct sku *k = &c->s[c->n++];
	memset(k, 0, sizeof *k);
	if (base >= 0) {
		const struct sku *b = &c->s[base];
		*k = (struct sku){ .priced = b->priced, .prio = b->prio, .gpus = b->gpus, .gpu_mem_gib = b->gpu_mem_gib,
				   .usd_h = b->usd_h, .fx_rate = b->fx_rate, .other_priced = b->other_priced,
				   .other_prio = b->other_prio, .other_usd_h = b->other_usd_h };
		memcpy(k->currency, b->currency, sizeof k->currency);
		memcpy(k->fx_date, b->fx_date, sizeof k->fx_date);
		memcpy(k->zone, b->zone, sizeof k->zone);
		k->region = b->region ? gv_strdup(b->region) : NULL;
		k->gpu_model = b->gpu_model ? gv_strdup(b->gpu_model) : NULL;
		k->source = b->source ? gv_strdup(b->source) : NULL;
		k->captured = b->captured ? gv_strdup(b->captured) : NULL;
	} else {
		k->gpus = k->gpu_mem_gib = k->usd_h = k->fx_rate = k->other_usd_h = NAN;
	}
	k->run_gpus = NAN;
	k->provider = gv_strdup(provider);
	k->itype = gv_strdup(itype);
	k->profile = gv_strdup(profile);
	rank_index_add(c, c->n - 1);
	return k;
}

static struct mvals *sku_metric(struct sku *k, const char *name)
{
	for (size_t i = 0; i < k->nm; i++)
		if (!strcmp(k->m[i].name, name))
			return &k->m[i];
	k->m = gv_realloc(k->m, (k->nm + 1) * sizeof *k->m);
	k->m[k->nm] = (struct mvals){ .name = gv_strdup(name) };
	return &k->m[k->nm++];
}

static void add_value(struct sku *k, const char *name, double v)
{
	struct mvals *m = sku_metric(k, name);
	if (m->n == m->cap) {   /* a value per run: the one per-run figure a ranking holds, 8 bytes */
		m->cap = m->cap ? m->cap * 2 : 16;
		m->v = gv_realloc(m->v, m->cap * sizeof *m->v);
	}
	m->v[m->n++] = v;
}

/*
 * A run of k tagged with region: counted, and k priced where most of its runs ran (the first region to reach
 * the most), so a type measured in two regions is never labelled with one of them unsaid (rank_rows.c lists each).
 */
static void count_region(struct sku *k, const char *region)
{
	int i = 0, best = 0;
	while (i < k->nrr && strncmp(k->rr[i].name, region, sizeof k->rr[i].name - 1))   /* a long name: its head */
		i++;
	if (i == k->nrr && k->nrr == RANK_RUN_REGIONS) {
		k->rr_more++;
		return;
	}
	if (i == k->nrr) {
		gv_strlcpy(k->rr[i].name, region, sizeof k->rr[i].name);
		k->nrr++;
	}
	k->rr[i].runs++;
	for (int j = 0; j < k->nrr; j++)
		if (k->run_region && !strncmp(k->rr[j].name, k->run_region, sizeof k->rr[j].name - 1))
			best = k->rr[j].runs;
	if (!k->run_region || k->rr[i].runs > best) {
		free(k->run_region);
		k->run_region = gv_strdup(region);
	}
}

/* Every run names its SKU entry (one per profile), its GPU count and model; a run keeps its SKU's index. */
static int take_run(void *ud, const struct store_run_row *r)
{
	struct ctx *c = ud;
	if (c->nruns == c->capruns) {
		c->capruns = c->capruns ? c->capruns * 2 : 1024;
		c->runs = gv_realloc(c->runs, c->capruns * sizeof *c->runs);
	}
	struct runent *e = &c->runs[c->nruns++];
	*e = (struct runent){ .id = r->id, .sku = -1 };
	if (!r->provider || !r->instance_type)
		return 0;
	if (c->o->region && (!r->region || strcmp(r->region, c->o->region))) {
		e->named = 1;
		return 0;
	}
	/* rows come by provider and type: the last run's SKU is most often this one's */
	const char *prof = r->profile ? r->profile : "unknown";
	struct sku *k = c->last_sku >= 0 ? &c->s[c->last_sku] : NULL;
	if (!k || strcmp(k->provider, r->provider) || strcmp(k->itype, r->instance_type) || !k->profile ||
	    strcmp(k->profile, prof))
		k = sku_for_run(c, r->provider, r->instance_type, prof);
	e->sku = c->last_sku = (int)(k - c->s);
	if (r->gpu_count > 0)
		k->run_gpus = (double)r->gpu_count;
	if (!k->run_gpu_model && r->gpu_model)
		k->run_gpu_model = gv_strdup(r->gpu_model);
	if (r->region && *r->region)
		count_region(k, r->region);
	return 0;
}

static void sift_down(struct runent *a, size_t i, size_t n)
{
	for (size_t c; (c = 2 * i + 1) < n; i = c) {
		if (c + 1 < n && a[c + 1].id > a[c].id)
			c++;
		if (a[i].id >= a[c].id)
			return;
		struct runent t = a[i];
		a[i] = a[c];
		a[c] = t;
	}
}

/* By id, in place: qsort's merge sort takes a copy of the array (24 MB more at 1M runs). */
static void sort_runs(struct runent *a, size_t n)
{
	for (size_t i = n / 2; i-- > 0;)
		sift_down(a, i, n);
	for (size_t end = n; end > 1; end--) {
		struct runent t = a[0];
		a[0] = a[end - 1];
		a[end - 1] = t;
		sift_down(a, 0, end - 1);
	}
}

/* A stream in run order meets the runs (sorted by id) at *at: the run with this id, or NULL. */
static struct runent *run_at(struct ctx *c, size_t *at, int64_t id)
{
	while (*at < c->nruns && c->runs[*at].id < id)
		++*at;
	return *at < c->nruns && c->runs[*at].id == id ? &c->runs[*at] : NULL;
}

/* ---- the runs' flags: each distinct set kept once ---- */

static void fset_rehash(struct ctx *c)
{
	free(c->fset_ix);
	c->fset_cap = c->fset_cap ? c->fset_cap * 2 : 64;
	c->fset_ix = gv_calloc(c->fset_cap, sizeof *c->fset_ix);
	for (size_t k = 0; k < c->nfsets; k++) {
		size_t i = gv_hash_str(c->fsets[k]) & (c->fset_cap - 1);
		while (c->fset_ix[i])
			i = (i + 1) & (c->fset_cap - 1);
		c->fset_ix[i] = (uint32_t)k + 1;
	}
}

/* 1 + the index of flags in c->fsets, added when new */
static uint32_t fset_get(struct ctx *c, const char *flags)
{
	size_t i;
	if (2 * (c->nfsets + 1) > c->fset_cap) {
		c->fsets = gv_realloc(c->fsets, (c->fset_cap ? c->fset_cap : 64) * sizeof *c->fsets);
		fset_rehash(c);
	}
	for (i = gv_hash_str(flags) & (c->fset_cap - 1); c->fset_ix[i]; i = (i + 1) & (c->fset_cap - 1))
		if (!strcmp(c->fsets[c->fset_ix[i] - 1], flags))
			return c->fset_ix[i];
	c->fsets[c->nfsets] = gv_strdup(flags);
	c->fset_ix[i] = (uint32_t)++c->nfsets;
	return c->fset_ix[i];
}

struct flags_walk {
	struct ctx *c;
	size_t at;
};

static int take_flags(void *ud, int64_t run, const char *flags)
{
	struct flags_walk *w = ud;
	struct runent *e = run_at(w->c, &w->at, run);
	if (!e || e->sku < 0 || !flags || !*flags)
		return 0;
	e->fset = fset_get(w->c, flags);
	e->critical = !strncmp(flags, "critical ", 9) || strstr(flags, "\tcritical ") != NULL;
	return 0;
}

/* ---- the metrics ---- */

struct metric_walk {
	struct ctx *c;
	size_t at;
	long gm;        /* the metric of a one-name stream; -1: every one, found by name */
};

static size_t gm_add(struct ctx *c, const char *name)
{
	c->gm = gv_realloc(c->gm, (c->ngm + 1) * sizeof *c->gm);
	c->gm[c->ngm] = (struct gmetric){ .name = gv_strdup(name), .rankable = rank_rankable(name) };
	return c->ngm++;
}

static size_t gm_find(struct ctx *c, const char *name)
{
	for (size_t i = 0; i < c->ngm; i++)
		if (!strcmp(c->gm[i].name, name))
			return i;
	return gm_add(c, name);
}

static uint16_t gm_bit(size_t i)
{
	return (uint16_t)(1u << (i < RANK_GATHER_BITS - 1 ? i : RANK_GATHER_BITS - 1));
}

/*
 * A metric row: a run without a SKU is counted once (why nothing ranks); a
 * rankable row of a run with a critical flag leaves it out (unless
 * include_flagged); an all-reduce of one GPU measures no link (absent, not
 * 0: flags_metric_not_applicable); a finite value is one for the median.
 */
static int take_value(void *ud, int64_t run, const char *name, double v, const char *unit)
{
	struct metric_walk *w = ud;
	struct ctx *c = w->c;
	struct runent *e = name ? run_at(c, &w->at, run) : NULL;
	if (!e)
		return 0;
	size_t mi = w->gm >= 0 ? (size_t)w->gm : gm_find(c, name);
	struct gmetric *g = &c->gm[mi];
	uint16_t bit = gm_bit(mi);
	if (e->sku < 0) {
		if (!(e->rrow & bit))
			*(e->named ? &g->elsewhere : &g->unnamed) += 1;
		e->rrow |= bit;
		return 0;
	}
	if (!g->rankable)
		return 0;
	e->rrow |= bit;
	struct sku *k = &c->s[e->sku];
	/* the count matters only under 2, and a double is never converted to an int it may not fit */
	if ((e->critical && !c->o->include_flagged) || flags_metric_not_applicable(name, k->run_gpus < 2 ? 1 : 2))
		return 0;
	e->has |= bit;
	if (!isfinite(v))
		return 0;
	add_value(k, g->name, v);
	if (unit && *unit && !g->unit)
		g->unit = gv_strdup(unit);
	return 0;
}

int rank_gather_runs(struct ctx *c, const char *const *names, size_t n)
{
	struct flags_walk fw = { .c = c };
	c->last_sku = -1;
	if (store_each_run_sku(c->s_store, take_run, c))
		goto fail;
	sort_runs(c->runs, c->nruns);
	if (store_each_run_flags(c->s_store, take_flags, &fw))
		goto fail;
	for (size_t i = 0; i < (n ? n : 1); i++) {
		struct metric_walk w = { .c = c, .gm = n ? (long)gm_find(c, names[i]) : -1 };
		if (store_each_headline(c->s_store, n ? &names[i] : NULL, n ? 1 : 0, take_value, &w))
			goto fail;
	}
	rank_index_profiled(c);   /* the entries runs made, for the estimates */
	return 0;
fail:
	snprintf(c->err, c->errlen, "%s", store_errmsg(c->s_store));
	return -1;
}

/* ---- a ranking's counts ---- */

static void take_code(struct sku *k, const char *code)
{
	for (size_t i = 0; i < k->nflags; i++)
		if (!strcmp(k->flags[i], code))
			return;
	k->flags = gv_realloc(k->flags, (k->nflags + 1) * sizeof *k->flags);
	k->flags[k->nflags++] = gv_strdup(code);
}

/*
 * Each code of a flag set ("severity code" joined by tabs) to k's codes and/or the codes array;
 * an info flag is no finding and is left out.
 */
static void each_code(const char *set, struct sku *k, json_t *codes)
{
	char buf[128];
	for (const char *p = set, *tab; p && *p; p = tab ? tab + 1 : NULL) {
		tab = strchr(p, '\t');
		size_t len = tab ? (size_t)(tab - p) : strlen(p);
		const char *code = memchr(p, ' ', len);
		if (!code || ++code >= p + len || !strncmp(p, "info ", 5))
			continue;   /* an info flag is no finding (THROTTLE_POWER: at its cap under full load): not listed */
		size_t cl = (size_t)(p + len - code);
		char *heap = cl >= sizeof buf ? gv_malloc(cl + 1) : NULL, *s = heap ? heap : buf;
		memcpy(s, code, cl);
		s[cl] = 0;
		if (k)
			take_code(k, s);
		if (codes)
			json_array_append_new(codes, json_string(s));
		free(heap);
	}
}

/* The mask of the gathered metrics names[0..n) (every one for none: score.all). */
static uint16_t asked_mask(const struct ctx *c, const char *const *names, size_t n)
{
	uint16_t m = 0;
	if (!n)
		return UINT16_MAX;
	for (size_t q = 0; q < n; q++)
		for (size_t i = 0; i < c->ngm; i++)
			if (!strcmp(c->gm[i].name, names[q]))
				m |= gm_bit(i);
	return m;
}

static void left_out_run(struct ctx *c, const struct runent *e)
{
	c->left_out++;
	if (json_array_size(c->left) >= c->left_max)
		return;
	const struct sku *k = &c->s[e->sku];
	json_t *codes = json_array();
	each_code(e->fset ? c->fsets[e->fset - 1] : NULL, NULL, codes);
	json_array_append_new(c->left, json_pack("{s:I,s:s,s:s,s:s?,s:o}", "run", (json_int_t)e->id, "provider",
						 k->provider, "instance_type", k->itype, "profile", k->profile,
						 "flags", codes));
}

void rank_gather_count(struct ctx *c, const char *const *names, size_t n, int extra)
{
	/* MEMBW_METRIC read for its column only: a run does not count as having what was asked for it */
	uint16_t asked = asked_mask(c, names, extra && n ? n - 1 : n);
	/* a SKU takes a flag set's codes once: a bit per (entry, set) when that is small, else take_code's own check */
	size_t nbits = c->n * c->nfsets;
	unsigned char *seen = nbits && nbits <= (64u << 20) ? gv_calloc(nbits / 8 + 1, 1) : NULL;
	for (size_t r = 0; r < c->nruns; r++) {
		const struct runent *e = &c->runs[r];
		if (e->sku < 0)
			continue;
		if (e->critical && !c->o->include_flagged) {
			if (e->rrow & asked)
				left_out_run(c, e);
			continue;
		}
		if (!(e->has & asked))
			continue;
		c->s[e->sku].nhave++;
		if (!e->fset)
			continue;
		size_t bit = (size_t)e->sku * c->nfsets + e->fset - 1;
		if (seen && (seen[bit / 8] >> (bit % 8) & 1))
			continue;
		if (seen)
			seen[bit / 8] |= (unsigned char)(1u << (bit % 8));
		each_code(c->fsets[e->fset - 1], &c->s[e->sku], NULL);
	}
	free(seen);
	for (size_t i = 0; i < c->ngm; i++)
		if (c->metric && !strcmp(c->gm[i].name, c->metric)) {
			c->unnamed_with = c->gm[i].unnamed;
			c->elsewhere_with = c->gm[i].elsewhere;
		}
}

long rank_gather_ids(const struct ctx *c, const char *metric, const char *provider, const char *itype,
		     const char *profile, int64_t **ids)
{
	size_t mi, n = 0, cap = 0;
	long k;
	*ids = NULL;
	for (mi = 0; mi < c->ngm && strcmp(c->gm[mi].name, metric); mi++)
		;
	if (mi == c->ngm || mi >= RANK_GATHER_BITS - 1 || !provider || !itype || !profile)
		return mi == c->ngm || mi >= RANK_GATHER_BITS - 1 ? -1 : 0;
	for (k = rank_index_first(c, provider, itype); k >= 0; k = c->s[k].next_same)
		if (c->s[k].profile && !strcmp(c->s[k].profile, profile))
			break;
	uint16_t bit = gm_bit(mi);
	for (size_t r = 0; k >= 0 && r < c->nruns; r++) {
		const struct runent *e = &c->runs[r];
		if (e->sku != k || !(e->has & bit) || (e->critical && !c->o->include_flagged))
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 64;
			*ids = gv_realloc(*ids, cap * sizeof **ids);
		}
		(*ids)[n++] = e->id;
	}
	return (long)n;
}

/* ---- a ranking over another's gather ---- */

static char *dup_or_null(const char *s)
{
	return s ? gv_strdup(s) : NULL;
}

void rank_gather_copy(struct ctx *c, const struct ctx *g, const char *const *names, size_t n)
{
	c->runs = g->runs;
	c->nruns = g->nruns;
	c->gm = g->gm;
	c->ngm = g->ngm;
	c->fsets = g->fsets;
	c->nfsets = g->nfsets;
	c->gathered_elsewhere = 1;
	for (size_t i = 0; i < g->n; i++) {
		const struct sku *b = &g->s[i];
		rank_index_room(c);
		struct sku *k = &c->s[c->n++];
		*k = *b;   /* the scalars; every owned pointer copied or cleared below */
		k->provider = gv_strdup(b->provider);
		k->itype = gv_strdup(b->itype);
		k->profile = dup_or_null(b->profile);
		k->region = dup_or_null(b->region);
		k->gpu_model = dup_or_null(b->gpu_model);
		k->source = dup_or_null(b->source);
		k->captured = dup_or_null(b->captured);
		k->run_region = dup_or_null(b->run_region);
		k->run_gpu_model = dup_or_null(b->run_gpu_model);
		k->m = NULL;
		k->nm = 0;
		k->flags = NULL;
		k->nflags = 0;
		k->beside = NULL;
		k->nbeside = 0;
		k->components = k->missing = k->not_applicable = NULL;
		for (size_t j = 0; j < b->nm; j++)
			for (size_t q = 0; q < (n ? n : 1); q++)
				if (!n || !strcmp(b->m[j].name, names[q])) {
					struct mvals *m = sku_metric(k, b->m[j].name);
					m->v = gv_malloc((b->m[j].n ? b->m[j].n : 1) * sizeof *m->v);
					memcpy(m->v, b->m[j].v, b->m[j].n * sizeof *m->v);
					m->n = m->cap = b->m[j].n;
					break;
				}
		rank_index_add(c, c->n - 1);
	}
	rank_index_profiled(c);
}

void rank_gather_free(struct ctx *c)
{
	if (!c->gathered_elsewhere) {
		free(c->runs);
		for (size_t i = 0; i < c->ngm; i++) {
			free(c->gm[i].name);
			free(c->gm[i].unit);
		}
		free(c->gm);
		for (size_t i = 0; i < c->nfsets; i++)
			free(c->fsets[i]);
		free(c->fsets);
	}
	free(c->fset_ix);
	c->runs = NULL;
	c->gm = NULL;
	c->fsets = NULL;
	c->fset_ix = NULL;
	c->nruns = c->ngm = c->nfsets = 0;
}
