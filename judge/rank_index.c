/*
 * rank_index.c - the ranking's SKU entries found by provider and instance
 * type in constant time (rank_int.h): an open-addressing hash table of
 * indices into ctx.s (never pointers: ctx.s is realloc'd as it grows),
 * holding each type's first entry; a type's other entries (one per profile
 * of its runs) are chained through sku.next_same.  A linear scan here made
 * a ranking over a 1.1 M-type price table quadratic.
 */
#include "judge/rank_int.h"
#include "common/util.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static uint64_t hash2(const char *a, const char *b)
{
	uint64_t h = 1469598103934665603ULL;   /* FNV-1a over "a\0b" */
	for (const unsigned char *p = (const unsigned char *)a; *p; p++)
		h = (h ^ *p) * 1099511628211ULL;
	h = (h ^ 0xff) * 1099511628211ULL;
	for (const unsigned char *p = (const unsigned char *)b; *p; p++)
		h = (h ^ *p) * 1099511628211ULL;
	return h;
}

static int same_type(const struct sku *k, const char *provider, const char *itype)
{
	return !strcmp(k->provider, provider) && !strcmp(k->itype, itype);
}

/* The bucket of (provider, itype): its entry, or the empty one where it would go. */
static size_t slot(const struct ctx *c, const char *provider, const char *itype)
{
	size_t mask = c->hcap - 1, i = (size_t)hash2(provider, itype) & mask;
	while (c->hidx[i] >= 0 && !same_type(&c->s[c->hidx[i]], provider, itype))
		i = (i + 1) & mask;
	return i;
}

long rank_index_first(const struct ctx *c, const char *provider, const char *itype)
{
	if (!c->hcap)
		return -1;
	return c->hidx[slot(c, provider, itype)];
}

static void grow(struct ctx *c)
{
	size_t cap = c->hcap ? c->hcap * 2 : 1024;
	int32_t *old = c->hidx;
	size_t oldcap = c->hcap;
	c->hidx = gv_malloc(cap * sizeof *c->hidx);
	memset(c->hidx, 0xff, cap * sizeof *c->hidx);   /* -1: empty */
	c->hcap = cap;
	for (size_t i = 0; i < oldcap; i++)
		if (old[i] >= 0)
			c->hidx[slot(c, c->s[old[i]].provider, c->s[old[i]].itype)] = old[i];
	free(old);
}

void rank_index_add(struct ctx *c, size_t idx)
{
	struct sku *k = &c->s[idx];
	k->next_same = -1;
	if ((c->hused + 1) * 2 > c->hcap)
		grow(c);
	size_t i = slot(c, k->provider, k->itype);
	if (c->hidx[i] < 0) {
		c->hidx[i] = (int32_t)idx;
		c->hused++;
		return;
	}
	/* the type's last entry points to the new one: entries stay in the order they were made */
	long j = c->hidx[i];
	while (c->s[j].next_same >= 0)
		j = c->s[j].next_same;
	c->s[j].next_same = (int32_t)idx;
}

void rank_index_free(struct ctx *c)
{
	free(c->hidx);
	c->hidx = NULL;
	c->hcap = c->hused = 0;
}

void rank_index_profiled(struct ctx *c)
{
	c->profiled = gv_malloc((c->n ? c->n : 1) * sizeof *c->profiled);
	c->nprofiled = 0;
	for (size_t i = 0; i < c->n; i++)
		if (c->s[i].profile)
			c->profiled[c->nprofiled++] = i;
}

void rank_index_room(struct ctx *c)
{
	/* doubling: one entry more at a time was a copy (or a page-table move) of the whole array per type */
	if (c->n < c->cap_s)
		return;
	c->cap_s = c->cap_s ? c->cap_s * 2 : 64;
	c->s = gv_realloc(c->s, c->cap_s * sizeof *c->s);
}

void rank_sku_init(struct sku *k, const char *provider, const char *itype)
{
	memset(k, 0, sizeof *k);
	k->provider = gv_strdup(provider);
	k->itype = gv_strdup(itype);
	k->gpus = NAN;
	k->gpu_mem_gib = NAN;
	k->run_gpus = NAN;
	k->fx_rate = NAN;
	k->other_usd_h = NAN;
}

void rank_sku_free(struct sku *k)
{
	free(k->provider);
	free(k->itype);
	free(k->profile);
	free(k->region);
	free(k->gpu_model);
	free(k->source);
	free(k->captured);
	free(k->run_region);
	free(k->run_gpu_model);
	free(k->beside);
	for (size_t i = 0; i < k->nm; i++) {
		free(k->m[i].name);
		free(k->m[i].v);
	}
	free(k->m);
	for (size_t i = 0; i < k->nflags; i++)
		free(k->flags[i]);
	free(k->flags);
	json_decref(k->components);
	json_decref(k->missing);
	json_decref(k->not_applicable);
}

struct sku *rank_sku_get(struct ctx *c, const char *provider, const char *itype, int create)
{
	long first = rank_index_first(c, provider, itype);
	if (first >= 0)
		return &c->s[first];
	if (!create)
		return NULL;
	rank_index_room(c);
	struct sku *k = &c->s[c->n++];
	rank_sku_init(k, provider, itype);
	rank_index_add(c, c->n - 1);
	return k;
}
