/* naming.c - a run's name as a command gives it, checked once (naming.h). */
#include "runners/naming.h"
#include "runners/cli.h"
#include "judge/identity.h"
#include "common/util.h"
#include "common/ident.h"

#include <stdio.h>
#include <string.h>

int naming_any(const struct naming *nm)
{
	return nm->provider || nm->sku || nm->region || nm->custom;
}

int naming_open(struct naming *nm, struct store *s)
{
	char err[256];
	/* the shipped catalog is what a name is checked against: loaded on first use */
	if (gv_prices_ready(s, err, sizeof err)) {
		gv_err("%s", err);
		return -1;
	}
	nm->idc = identity_checker_new(store_db(s));
	return 0;
}

void naming_close(struct naming *nm)
{
	identity_checker_free(nm->idc);
	nm->idc = NULL;
}

int naming_apply(struct naming *nm, const char *provider, const char *sku, const char *region,
		 const char *gpu_model, int gpu_count, const char *origin, const char **provider_out, char *err,
		 size_t errlen)
{
	struct identity id = {
		.provider = nm->provider ? nm->provider : provider,
		.sku = nm->sku ? nm->sku : sku,
		.region = nm->region ? nm->region : region,
		.gpu_model = gpu_model,
		.gpu_count = gpu_count,
		.origin = origin,
	};
	if (nm->custom) {
		/* "unknown" is what a run without metadata says: a custom machine without a name is "custom" */
		const char *p = id.provider && strcmp(id.provider, "unknown") ? id.provider : NULL;
		identity_custom_provider(p, nm->custom_provider);
		*provider_out = nm->custom_provider;
		return 0;
	}
	*provider_out = id.provider;
	int rc = identity_check(nm->idc, &id, err, errlen);
	if (rc) {
		/* names from a file or instance metadata reach a terminal: escaped (common/ident.h) */
		char shown[2048];
		ident_escape(err, shown, sizeof shown);
		snprintf(err, errlen, "%s", shown);
	}
	return rc;
}
