/*
 * identity.c - a run's name checked against the price catalog (identity.h).
 *
 * The rules, in order:
 *   1. no provider (or "unknown") and no SKU: not named, nothing to check;
 *      a SKU or region without a provider is refused;
 *   2. a custom provider ("custom", "custom:NAME"): stored as the user says;
 *   3. the provider must be one gpuvet fetches or the store holds prices of;
 *   4. the SKU, when given, must be one of the provider's stored instance
 *      types (the nearest name is suggested);
 *   5. the region, when given, must be one the provider is known in
 *      (pricing catalog_regions; any, for a provider priced everywhere);
 *   6. the SKU's catalog GPU model and count must be what the run measured:
 *      the same reference model (common/gpus.h, so A100 40 GB is not 80 GB)
 *      and the same count.  A run that measured no GPU cannot carry a GPU
 *      SKU; a GPU the reference table does not know is judged by count.
 */
#include "judge/identity.h"
#include "pricing/catalog.h"
#include "common/gpus.h"
#include "common/util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

struct prov {
	char *name;
	struct catalog_sku *skus;
	size_t nskus;
	char **regions;
	size_t nregions;
	int anywhere;
};

struct identity_checker {
	sqlite3 *db;
	struct prov *p;
	size_t n;
};

int identity_is_custom(const char *provider)
{
	return provider && (!strcmp(provider, IDENTITY_CUSTOM) ||
			    !strncmp(provider, IDENTITY_CUSTOM ":", sizeof IDENTITY_CUSTOM));
}

void identity_custom_provider(const char *name, char out[96])
{
	if (!name || !*name || identity_is_custom(name))
		snprintf(out, 96, "%s", name && *name ? name : IDENTITY_CUSTOM);
	else
		snprintf(out, 96, "%s:%s", IDENTITY_CUSTOM, name);
}

struct identity_checker *identity_checker_new(sqlite3 *db)
{
	struct identity_checker *c = gv_calloc(1, sizeof *c);
	c->db = db;
	return c;
}

void identity_checker_free(struct identity_checker *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->n; i++) {
		free(c->p[i].name);
		catalog_skus_free(c->p[i].skus, c->p[i].nskus);
		catalog_regions_free(c->p[i].regions, c->p[i].nregions);
	}
	free(c->p);
	free(c);
}

static struct prov *provider_of(struct identity_checker *c, const char *name, char *err, size_t errlen)
{
	for (size_t i = 0; i < c->n; i++)
		if (!strcmp(c->p[i].name, name))
			return &c->p[i];
	struct prov p = { .name = gv_strdup(name) };
	if (catalog_skus(c->db, name, &p.skus, &p.nskus, err, errlen) ||
	    catalog_regions(c->db, name, &p.regions, &p.nregions, &p.anywhere, err, errlen)) {
		catalog_skus_free(p.skus, p.nskus);
		free(p.name);
		return NULL;
	}
	c->p = gv_realloc(c->p, (c->n + 1) * sizeof *c->p);
	c->p[c->n] = p;
	return &c->p[c->n++];
}

static int named(const char *s)
{
	return s && *s && strcmp(s, "unknown");
}

static int unknown_sku(const struct prov *p, const struct identity *id, char *err, size_t errlen)
{
	const char **names = gv_malloc((p->nskus ? p->nskus : 1) * sizeof *names);
	for (size_t i = 0; i < p->nskus; i++)
		names[i] = p->skus[i].instance_type;
	const char *near = gv_closest(id->sku, names, p->nskus);
	char from[128] = "";
	if (id->origin)
		snprintf(from, sizeof from, " (from %s)", id->origin);
	if (near)
		snprintf(err, errlen, "unknown instance type %s for %s%s; did you mean %s?", id->sku, id->provider, from, near);
	else
		snprintf(err, errlen, "unknown instance type %s for %s%s; to store a machine the catalog does not know, add --custom",
			 id->sku, id->provider, from);
	free(names);
	return -1;
}

static int unknown_region(const struct prov *p, const struct identity *id, char *err, size_t errlen)
{
	const char *near = gv_closest(id->region, (const char *const *)p->regions, p->nregions);
	snprintf(err, errlen, "unknown region %s for %s%s%s%s", id->region, id->provider,
		 near ? "; did you mean " : " (see gpuvet prices list --provider ", near ? near : id->provider,
		 near ? "?" : ")");
	return -1;
}

/* Rule 6: the SKU's GPUs against the run's. */
static int gpus_match(const struct catalog_sku *k, const struct identity *id, char *err, size_t errlen)
{
	int want = !isnan(k->gpu_count) && k->gpu_count > 0 ? (int)lround(k->gpu_count) : 0;
	const char *wm = k->gpu_model;
	if (!want && !wm)
		return 0; /* the catalog says nothing of its GPUs */
	int model_ok = !wm || !id->gpu_model || gpu_same_model(wm, id->gpu_model);
	if (id->gpu_count <= 0)
		snprintf(err, errlen, "%s %s has %d x %s, the run measured no GPU", id->provider, id->sku, want,
			 wm ? wm : "GPU");
	else if (!model_ok || (want && id->gpu_count != want))
		snprintf(err, errlen, "%s %s has %d x %s, the run measured %d x %s", id->provider, id->sku, want,
			 wm ? wm : "GPU", id->gpu_count, id->gpu_model ? id->gpu_model : "an unknown GPU");
	else
		return 0;
	return -1;
}

int identity_check(struct identity_checker *c, const struct identity *id, char *err, size_t errlen)
{
	char known[512];
	if (!named(id->provider)) {
		if (named(id->sku) || named(id->region)) {
			snprintf(err, errlen, "%s %s needs its provider (--provider)", named(id->sku) ? "an instance type" : "a region",
				 named(id->sku) ? id->sku : id->region);
			return -1;
		}
		return 0;
	}
	if (identity_is_custom(id->provider))
		return 0;
	int k = catalog_provider_known(c->db, id->provider, known, sizeof known);
	if (k < 0) {
		snprintf(err, errlen, "cannot read the price catalog's providers");
		return -2;
	}
	if (!k) {
		snprintf(err, errlen, "unknown provider %s (%s); to store a machine the catalog does not know, add --custom",
			 id->provider, known);
		return -1;
	}
	struct prov *p = provider_of(c, id->provider, err, errlen);
	if (!p)
		return -2;
	if (named(id->region) && !p->anywhere) {
		size_t i;
		for (i = 0; i < p->nregions && strcmp(p->regions[i], id->region); i++)
			;
		if (i == p->nregions)
			return unknown_region(p, id, err, errlen);
	}
	if (!named(id->sku))
		return 0;
	for (size_t i = 0; i < p->nskus; i++)
		if (!strcmp(p->skus[i].instance_type, id->sku))
			return gpus_match(&p->skus[i], id, err, errlen);
	return unknown_sku(p, id, err, errlen);
}
