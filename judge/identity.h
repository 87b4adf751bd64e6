/*
 * identity.h - is a run what its name says?  The one check of a provider,
 * instance type (SKU) and region against the price catalog, and of the
 * run's measured GPUs against the SKU's catalog row: `gpuvet run` (names
 * given or read from instance metadata), `results tag` and `results import`
 * all go through it (docs/acceptance.md, "Identity").
 *
 * A machine the catalog does not know is stored as custom (--custom): its
 * provider is "custom" or "custom:NAME", shown as such everywhere, and the
 * ranking keeps custom rows apart from catalogued ones.
 */
#ifndef GPUVET_JUDGE_IDENTITY_H
#define GPUVET_JUDGE_IDENTITY_H

#include <stddef.h>

typedef struct sqlite3 sqlite3;  /* the store's connection, for the price catalog (pricing/catalog.h) */

#define IDENTITY_CUSTOM "custom"

/* Is this provider name a custom (uncatalogued) machine's? */
int identity_is_custom(const char *provider);
/* The provider a --custom run is stored under: "custom", or "custom:NAME" (out holds 96 bytes). */
void identity_custom_provider(const char *name, char out[96]);

struct identity {
	const char *provider, *sku, *region;  /* the run's name after the change; NULL or "unknown": not named */
	const char *gpu_model;                /* measured: the reference key (common/gpus.h), NULL unknown */
	int gpu_count;                        /* measured GPUs */
	const char *origin;                   /* where the name came from, for the message ("instance metadata") */
};

/* Caches each provider's instance types and regions over many checks (an import of 10k runs). */
struct identity_checker;
struct identity_checker *identity_checker_new(sqlite3 *db);
void identity_checker_free(struct identity_checker *c);

/*
 * 0 when the name holds: unnamed, custom, or a catalogued provider, SKU and
 * region whose GPU model and count are what the run measured.  -1 with one
 * line in err naming what is wrong and both sides ("unknown SKU p5.4xlarg
 * for aws; did you mean p5.4xlarge?", "aws p5en.48xlarge has 8 x H200, the
 * run measured 1 x H100-SXM").  -2 on a read error (err says it).
 */
int identity_check(struct identity_checker *c, const struct identity *id, char *err, size_t errlen);

#endif
