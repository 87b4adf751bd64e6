/*
 * catalog_import.h - what a user's price file (`prices import`) must pass
 * beyond each row's own checks (price_rec_check), and what its import does
 * to earlier imports:
 *   - a captured_at over a day ahead of this machine's clock is refused
 *     (price_date_check, PRICE_DATE_NOW);
 *   - a price under PRICE_MIN_HOURLY an hour is refused (1e-300 USD/h topped
 *     rank at 7e302 per dollar);
 *   - a key (provider, instance type, region, zone, market, term, source)
 *     given twice in one file is refused, naming both lines: the store holds
 *     one price per key, so "imported 2 prices" would have stored one;
 *   - the latest import of a key wins: rows of that key from earlier imports
 *     (other import:* sources) are removed in the same transaction, so a
 *     corrected file replaces a wrong one whatever either is named;
 *   - a price more than PRICE_WARN_RATIO times above or below the shipped
 *     catalog's for the same instance type and market (same currency) is
 *     warned about (the first few named, the rest counted); a spot price
 *     with no shipped spot price of its type and region is held to the
 *     on-demand one;
 *   - a row without gpu_model or gpu_count takes them from the shipped
 *     catalog's rows of its type, so every command reads it as one row
 *     (rank, prices list and prices cheapest alike).
 * Only catalog.c's import of a file uses it; fetchers and shipped catalogs
 * do not.
 */
#ifndef GPUVET_CATALOG_IMPORT_H
#define GPUVET_CATALOG_IMPORT_H

#include "pricing/catalog.h"

#define PRICE_WARN_RATIO 10.0
/* the cheapest GPU instance (a spot T4) is about $0.10/h: a thousandth of a unit an hour is a typo */
#define PRICE_MIN_HOURLY 1e-3

struct import_checks;
struct import_checks *import_checks_new(sqlite3 *db, const char *name);
/* Before the row is stored: 0, or -1 with err (a price under the floor, a key given at an earlier line). */
int import_checks_row(struct import_checks *k, const struct price_rec *r, long line, char *err, size_t errlen);
/* Before the row is checked and stored: a missing gpu_model or gpu_count from the catalog's rows of its type. */
void import_checks_complete(struct import_checks *k, struct price_rec *r);
/* After the row is stored: earlier imports of its key removed, its price compared. 0, or -1 with err. */
int import_checks_stored(struct import_checks *k, const struct price_rec *r, long line, char *err, size_t errlen);
/* Says how many price warnings were left unsaid, and frees. */
void import_checks_free(struct import_checks *k);

#endif
