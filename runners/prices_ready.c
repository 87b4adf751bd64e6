/* prices_ready.c - see cli.h: the one place the shipped price catalogs are loaded
 * (runners/open_reading.c: how the commands that read the store open it). */
#include "runners/cli.h"
#include "pricing/catalog.h"
#include "results/store.h"
#include "common/util.h"

int gv_prices_ready(struct store *s, char *err, size_t errlen)
{
	if (store_is_readonly(s)) {
		if (catalog_shipped_current(store_db(s)) != 1)
			gv_err("note: the store can only be read and holds an older copy of the shipped prices, or "
			       "none: prices as stored (open it read-write once to load this version's)");
		return 0;
	}
	return catalog_ensure_shipped(store_db(s), 0, NULL, err, errlen);
}
