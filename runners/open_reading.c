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
	if (exists && store_open_readonly(path, s) == STORE_OK) {
		if (how == GV_READ_ROWS ||
		    (store_schema_version(*s) == STORE_SCHEMA_VERSION && catalog_shipped_current(store_db(*s)) == 1))
			return opened(path, *s);
		store_close(*s);
	}
	if ((exists || how != GV_READ_REPORT) && gv_store_open(path, s) == STORE_OK)
		return opened(path, *s);
	/* a report of a file only readable (its error, when there is none, is that it does not exist) */
	if (how == GV_READ_REPORT && store_open_readonly(path, s) == STORE_OK)
		return opened(path, *s);
	gv_err("%s", store_open_error());
	return GV_EXIT_USAGE;
}
