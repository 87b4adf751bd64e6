/*
 * unpriced.h - the catalog's instance types that have no price in the asked
 * market, said instead of dropped (issue 48 item 8), one rule for `cost` and
 * `rank`: aws p5e.48xlarge has a spot price only in the shipped catalog, so
 * under --estimates an on-demand table lists it with why, never leaves it out
 * unsaid.  Whether such a type could be estimated is the caller's (cost: its
 * GPU's reference; rank: its estimate of the metric asked for).
 */
#ifndef GPUVET_UNPRICED_H
#define GPUVET_UNPRICED_H

#include "pricing/catalog.h"

#include <stddef.h>

/* Why a type has no price in market (region NULL: any), in the words rank and cost list it with; into why. */
void unpriced_why(const char *market, const char *region, const char *provider, char *why, size_t n);

/* A type without a price in the walk's market: its first row (another market's) and why; non-zero stops the walk. */
typedef int (*unpriced_type_fn)(void *ud, const struct price_rec *first, const char *why);

/*
 * One pass over the catalog's prices of every market, ordered by type
 * (PRICE_ORDER_TYPE; f's region and max age kept, f->market the one asked
 * for): each row of f->market to row_fn (NULL: none), in the order
 * catalog_prices gives them with f as it is, and each type without a row in
 * f->market to type_fn once its rows have passed, with why: unpriced_why and
 * the markets it has a price in ("; the catalog has a spot price only
 * (--market spot)").  0 (a callback's stop too), or -1 with err set.
 */
int unpriced_walk(sqlite3 *db, const struct price_filter *f, price_row_fn row_fn, unpriced_type_fn type_fn, void *ud,
		  char *err, size_t errlen);

#endif
