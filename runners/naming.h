/*
 * naming.h - what a command says a run was on (--provider, --sku,
 * --region, --custom), applied the same way by `results tag`, `results
 * import` and `run`, and checked against the catalog by judge/identity.h.
 */
#ifndef GPUVET_NAMING_H
#define GPUVET_NAMING_H

#include "results/store.h"
#include "runners/cli.h"

struct identity_checker;

struct naming {
	const char *provider, *sku, *region;   /* NULL: keep what the run says */
	int custom;                            /* --custom: an uncatalogued machine, stored as such */
	struct identity_checker *idc;          /* naming_open .. naming_close */
	char custom_provider[96];
};

/* Checks the strings (printable, bounded); exit code 0 or GV_EXIT_USAGE, said on stderr. */
static inline int naming_check_args(const char *cmd, const struct naming *nm)
{
	int rc = gv_check_identity(cmd, "--provider", nm->provider);
	if (!rc)
		rc = gv_check_identity(cmd, "--sku", nm->sku);
	return rc ? rc : gv_check_identity(cmd, "--region", nm->region);
}
int naming_any(const struct naming *nm);
/* Loads the shipped price catalog when the store lacks it (outside any transaction); 0, or -1 said on stderr. */
int naming_open(struct naming *nm, struct store *s);
void naming_close(struct naming *nm);

/*
 * The run's name after nm is applied to what it says (provider, sku,
 * region), checked against the catalog with its measured GPUs.  *provider
 * gets the provider to store (--custom's form).  0 holds; -1 refused and
 * -2 a read error, each with one line in err.
 */
int naming_apply(struct naming *nm, const char *provider, const char *sku, const char *region,
		 const char *gpu_model, int gpu_count, const char *origin, const char **provider_out, char *err,
		 size_t errlen);

#endif
