/* fx.c - see fx.h */
#include "pricing/fx.h"
#include "runners/util.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

static int iso_code(const char *c)
{
	return strlen(c) == 3 && isupper((unsigned char)c[0]) && isupper((unsigned char)c[1]) &&
	       isupper((unsigned char)c[2]);
}

int fx_set(sqlite3 *db, const char *currency, double usd_per_unit, const char *captured_at,
	   const char *source, char *err, size_t errlen)
{
	sqlite3_stmt *st;
	if (!iso_code(currency)) {
		snprintf(err, errlen, "currency '%s' is not an ISO 4217 code such as CNY", currency);
		return -1;
	}
	if (!strcmp(currency, "USD")) {
		snprintf(err, errlen, "USD is the base currency, its rate is 1");
		return -1;
	}
	if (!isfinite(usd_per_unit) || usd_per_unit <= 0) {
		snprintf(err, errlen, "rate %g is not a positive number", usd_per_unit);
		return -1;
	}
	if (sqlite3_prepare_v2(db,
			       "INSERT INTO fx_rates (currency, usd_per_unit, captured_at, source)"
			       " VALUES (?1, ?2, ?3, ?4) ON CONFLICT (currency) DO UPDATE SET"
			       " usd_per_unit = excluded.usd_per_unit, captured_at = excluded.captured_at,"
			       " source = excluded.source",
			       -1, &st, NULL) != SQLITE_OK) {
		snprintf(err, errlen, "cannot store the rate: %s", sqlite3_errmsg(db));
		return -1;
	}
	sqlite3_bind_text(st, 1, currency, -1, SQLITE_TRANSIENT);
	sqlite3_bind_double(st, 2, usd_per_unit);
	sqlite3_bind_text(st, 3, captured_at, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 4, source, -1, SQLITE_TRANSIENT);
	int rc = sqlite3_step(st) == SQLITE_DONE ? 0 : -1;
	if (rc < 0)
		snprintf(err, errlen, "cannot store the rate: %s", sqlite3_errmsg(db));
	sqlite3_finalize(st);
	return rc;
}

int fx_usd_per_unit(sqlite3 *db, const char *currency, double *usd_per_unit, char *captured_at,
		    size_t captured_size)
{
	sqlite3_stmt *st;
	if (!strcmp(currency, "USD")) {
		*usd_per_unit = 1.0;
		if (captured_at && captured_size)
			captured_at[0] = '\0';
		return 0;
	}
	if (sqlite3_prepare_v2(db, "SELECT usd_per_unit, captured_at FROM fx_rates WHERE currency = ?1",
			       -1, &st, NULL) != SQLITE_OK)
		return -1;
	sqlite3_bind_text(st, 1, currency, -1, SQLITE_TRANSIENT);
	int rc = -1;
	if (sqlite3_step(st) == SQLITE_ROW) {
		*usd_per_unit = sqlite3_column_double(st, 0);
		if (captured_at && captured_size) {
			const unsigned char *d = sqlite3_column_text(st, 1);
			gv_strlcpy(captured_at, d ? (const char *)d : "", captured_size);
		}
		rc = 0;
	}
	sqlite3_finalize(st);
	return rc;
}
