/*
 * fx.h - currency conversion through stored rates, each with its own date
 * and source (table fx_rates).  USD is the base: usd_per_unit is what one
 * unit of the currency is worth in US dollars on captured_at.
 *
 * gpuvet ships one published, dated rate per currency its shipped catalogs
 * quote (pricing/catalog/fx.csv, its source in pricing/catalog/README.md);
 * it is stored with a source starting "shipped:" on first use.  A rate the
 * user stores (`gpuvet prices fx CUR RATE --date D --source S`) replaces it
 * and is never overwritten by a shipped one.
 */
#ifndef GPUVET_FX_H
#define GPUVET_FX_H

#include <stddef.h>

typedef struct sqlite3 sqlite3;

/* Stores (or replaces) a rate.  0, or -1 with err. */
int fx_set(sqlite3 *db, const char *currency, double usd_per_unit, const char *captured_at,
	   const char *source, char *err, size_t errlen);
/* 1.0 for USD; 0 on success, -1 when no rate is stored.  captured_at may be NULL. */
int fx_usd_per_unit(sqlite3 *db, const char *currency, double *usd_per_unit, char *captured_at,
		    size_t captured_size);

/* Calls fn for every stored rate, by currency; non-zero from fn stops.  0, or -1 with err. */
typedef int (*fx_rate_fn)(void *ud, const char *currency, double usd_per_unit, const char *captured_at,
			  const char *source);
int fx_each(sqlite3 *db, fx_rate_fn fn, void *ud, char *err, size_t errlen);

/* Stores a shipped rate unless the user stored one for that currency.  0, or -1 with err. */
int fx_set_shipped(sqlite3 *db, const char *currency, double usd_per_unit, const char *captured_at,
		   const char *source, char *err, size_t errlen);
#define FX_SHIPPED_PREFIX "shipped:"

/*
 * Parses a rate file in gpuvet's format (header: currency, usd_per_unit,
 * captured_at, source; '#' comments), calling fn for every valid row.
 * 0, or -1 with "rates 'NAME' line N: what" in err.  fx_csv.c.
 */
int fx_parse_csv(const char *name, const void *buf, size_t len, fx_rate_fn fn, void *ud, long *rows,
		 char *err, size_t errlen);
/* Is d a YYYY-MM-DD date (month 1-12, day 1-31)? */
int fx_date_valid(const char *d);

/* fx.h's functions live in pricing/catalog_query.c (the rates are catalog data) and fx_csv.c. */
#endif
