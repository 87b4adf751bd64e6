/*
 * fx.h - currency conversion through stored rates, each with its own date
 * and source (table fx_rates).  USD is the base: usd_per_unit is what one
 * unit of the currency is worth in US dollars on captured_at.  Rates are
 * set by the user (`gpuvet prices fx CUR RATE --date D --source S`); gpuvet
 * ships none, so nothing is converted with a number nobody checked.
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

/* fx.h's functions live in pricing/catalog_query.c: the rates are catalog data. */
#endif
