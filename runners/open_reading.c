/* open_reading.c - see cli.h: how the commands open the store, to read it or to write it. */
#include "runners/cli.h"
#include "pricing/catalog.h"
#include "results/store.h"
#include "results/store_pending.h"
#include "common/util.h"

#include <unistd.h>

static int opened(const char *path, struct store *s)
{
	gv_debug("store %s opened %s", path, store_is_readonly(s) ? "read-only" : "read-write");
	return 0;
}

int gv_store_open(const char *path, struct store **s)
{
	int rc = store_open(path, s);
	if (rc == STORE_OK)
		store_pending_replay(*s);   /* benches kept aside while it was busy are stored first */
	return rc;
}

int gv_open_reading(const struct gv_global *g, enum gv_read_open how, struct store **s)
{
	const char *path = gv_db_path(g);
	int exists = access(path, F_OK) == 0;
	if (how != GV_READ_RECORD && exists && store_open_readonly(path, s) == STORE_OK) {
		if (how == GV_READ_ROWS ||
		    (store_schema_version(*s) == STORE_SCHEMA_VERSION && catalog_shipped_current(store_db(*s)) == 1))
			return opened(path, *s);
		store_close(*s);
	}
	if ((exists || how == GV_READ_ROWS || how == GV_READ_PRICED) && gv_store_open(path, s) == STORE_OK)
		return opened(path, *s);
	char why[512];
	snprintf(why, sizeof why, "%s", store_open_error());
	/*
	 * A file that may only be read (a read-only mount, another user's store, an older schema that
	 * only a read-write open would migrate) still answers what only reads: read as it is, its prices
	 * as stored.  Its error, when there is none, is the read-write open's.
	 */
	if (exists && store_open_readonly(path, s) == STORE_OK) {
		gv_debug("store %s cannot be written: read as it is (schema %d)", path, store_schema_version(*s));
		return opened(path, *s);
	}
	gv_err("%s", exists || !*why ? why : store_open_error());
	return GV_EXIT_USAGE;
}
