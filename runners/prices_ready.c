/* prices_ready.c - see cli.h: the one place the shipped price catalogs are loaded. */
#include "runners/cli.h"
#include "pricing/catalog.h"
#include "results/store.h"

#include <unistd.h>

int gv_prices_ready(struct store *s, char *err, size_t errlen)
{
	if (store_is_readonly(s))
		return 0;
	return catalog_ensure_shipped(store_db(s), 0, NULL, err, errlen);
}

int gv_open_for_prices(const char *path, struct store **s)
{
	if (access(path, F_OK) == 0 && store_open_readonly(path, s) == STORE_OK) {
		if (store_schema_version(*s) == STORE_SCHEMA_VERSION && catalog_shipped_current(store_db(*s)) == 1)
			return STORE_OK;
		store_close(*s);
	}
	return store_open(path, s);
}
