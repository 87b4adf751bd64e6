/*
 * catalog_int.h - what the catalog's own files (pricing/catalog*.c) share;
 * not for use outside them.
 */
#ifndef GPUVET_CATALOG_INT_H
#define GPUVET_CATALOG_INT_H

#include "pricing/catalog.h"

typedef struct sqlite3_stmt sqlite3_stmt;   /* the statement, as sqlite3.h names it */

/*
 * The columns every price read selects, in this order, from prices p LEFT
 * JOIN fx_rates fx (catalog_query.c catalog_prices): a row's 20 first columns.
 */
/* A price row's age in whole days since its capture date (price_age_days), for max_age_days filters (alias p). */
#define CATALOG_AGE_DAYS_SQL "CAST(julianday('now') - julianday(substr(p.captured_at, 1, 10)) AS INTEGER)"

#define CATALOG_PRICE_COLUMNS \
	"p.provider, p.instance_type, p.region, p.zone, p.gpu_model, p.gpu_count, p.gpu_memory_gib," \
	" p.vcpus, p.memory_gib, p.market, p.term, p.upfront, p.price, p.unit, p.currency, p.source," \
	" p.source_version, p.captured_at, fx.usd_per_unit, fx.captured_at"

/* A price_row from those columns (with the USD price computed once, as everywhere). */
void catalog_row_from(sqlite3_stmt *st, struct price_row *r);

#endif
