/*
 * catalog_cheapest.c - the cheapest prices of each GPU model and market,
 * and a count and price range of the rest (catalog.h
 * catalog_cheapest_per_model): what the report's price section lists,
 * bounded whatever the catalog's size.
 *
 * One query: a window over the prices partitioned by GPU model and market,
 * ordered by the price in US dollars per hour (price_rec_hourly's 730 h
 * month, times the stored rate; a price without a rate last), numbers the
 * rows; only the first n come back, each with its group's row count and
 * the rest's range (the (n+1)-th and the dearest USD price).  SQLite sorts
 * and spills to its temporary store, so gpuvet's memory stays that of n
 * rows, not of the table.
 */
#include "pricing/catalog.h"
#include "pricing/catalog_int.h"
#include "common/util.h"

#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double num_or_nan(sqlite3_stmt *st, int i)
{
	return sqlite3_column_type(st, i) == SQLITE_NULL ? NAN : sqlite3_column_double(st, i);
}

/* The connection's page cache setting (PRAGMA cache_size), 0 when it cannot be read. */
static long cache_size(sqlite3 *db)
{
	sqlite3_stmt *st;
	long v = 0;
	if (sqlite3_prepare_v2(db, "PRAGMA cache_size", -1, &st, NULL) != SQLITE_OK)
		return 0;
	if (sqlite3_step(st) == SQLITE_ROW)
		v = (long)sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

static void set_cache_size(sqlite3 *db, long v)
{
	char sql[64];
	snprintf(sql, sizeof sql, "PRAGMA cache_size = %ld", v);
	sqlite3_exec(db, sql, NULL, NULL, NULL);
}

static int cheapest_walk(sqlite3 *db, int n, int max_age_days, price_cheapest_fn fn, void *ud, char *err,
			 size_t errlen);

/*
 * The window sorts the whole table: SQLite's sorter keeps up to the page cache's size in memory
 * before it spills, and the scan fills the cache, so the read runs under a 2 MiB cache (a 1.1 M-row
 * table: 67 MiB of the report's peak under the report's 16 MiB, docs/lab/price-scale.md), then
 * the connection's own setting comes back.
 */
int catalog_cheapest_per_model(sqlite3 *db, int n, int max_age_days, price_cheapest_fn fn, void *ud, char *err,
			       size_t errlen)
{
	long was = cache_size(db);
	if (was)
		set_cache_size(db, -2048);
	int rc = cheapest_walk(db, n, max_age_days, fn, ud, err, errlen);
	if (was)
		set_cache_size(db, was);
	return rc;
}

static int cheapest_walk(sqlite3 *db, int n, int max_age_days, price_cheapest_fn fn, void *ud, char *err,
			 size_t errlen)
{
	if (n < 1)
		n = 1;
	/* the window's order is total (every key column), so the rows shown are the same on every run */
	char *sql = gv_asprintf(
		"SELECT * FROM (SELECT " CATALOG_PRICE_COLUMNS ","
		" ROW_NUMBER() OVER w AS rn, COUNT(*) OVER wall AS total,"
		" NTH_VALUE(usd_h, %d) OVER wall AS rest_min, MAX(usd_h) OVER wall AS rest_max,"
		" COUNT(usd_h) OVER wall AS rated, gm"
		" FROM (SELECT p.*, coalesce(p.gpu_model, '') AS gm,"
		"  p.price / (CASE p.unit WHEN 'month' THEN 730.0 ELSE 1.0 END)"
		"  * (CASE p.currency WHEN 'USD' THEN 1.0 ELSE f.usd_per_unit END) AS usd_h,"
		"  f.usd_per_unit AS fx_rate, f.captured_at AS fx_at"
		"  FROM prices p LEFT JOIN fx_rates f ON f.currency = p.currency WHERE %s) AS p"
		" LEFT JOIN fx_rates fx ON fx.currency = p.currency"
		" WINDOW w AS (PARTITION BY gm, p.market ORDER BY usd_h IS NULL, usd_h, p.provider, p.instance_type,"
		"  p.region, p.zone, p.term, p.source),"
		" wall AS (w ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING))"
		" WHERE rn <= %d ORDER BY gm, market, rn", n + 1, max_age_days > 0 ? CATALOG_AGE_DAYS_SQL " <= ?1" : "1", n);
	sqlite3_stmt *st;
	int rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
	free(sql);
	if (rc != SQLITE_OK) {
		snprintf(err, errlen, "cannot read prices: %s", sqlite3_errmsg(db));
		return -1;
	}
	if (max_age_days > 0)
		sqlite3_bind_int(st, 1, max_age_days);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct price_row r;
		struct price_group g = { 0 };
		catalog_row_from(st, &r);
		long rn = (long)sqlite3_column_int64(st, 20);
		g.total = (long)sqlite3_column_int64(st, 21);
		g.shown = g.total < n ? g.total : n;
		g.rest = g.total - g.shown;
		g.rest_min_usd_h = g.rest ? num_or_nan(st, 22) : NAN;
		g.rest_max_usd_h = g.rest ? num_or_nan(st, 23) : NAN;
		g.unrated = g.total - (long)sqlite3_column_int64(st, 24);
		if (fn(ud, &r, rn == g.shown ? &g : NULL))
			break;
	}
	sqlite3_finalize(st);
	if (rc == SQLITE_ROW || rc == SQLITE_DONE)
		return 0;
	snprintf(err, errlen, "cannot read prices: %s", sqlite3_errmsg(db));
	return -1;
}
