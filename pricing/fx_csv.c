/*
 * fx_csv.c - the shipped exchange-rate file (pricing/catalog/fx.csv): a
 * header row naming currency, usd_per_unit, captured_at and source (any
 * order, unknown columns ignored), '#' comment lines, one rate a row.  Read
 * with csvrows like the price catalogs; every row is checked as `prices fx`
 * checks a rate the user types.
 */
#include "pricing/fx.h"
#include "pricing/catalog.h"
#include "pricing/csvrows.h"
#include "common/util.h"
#include "common/ident.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { F_CURRENCY, F_RATE, F_DATE, F_SOURCE, F_COUNT };
static const char *const fx_cols[F_COUNT] = { "currency", "usd_per_unit", "captured_at", "source" };

struct fx_parse {
	struct csvrows *rows;
	const char *name;
	fx_rate_fn fn;
	void *ud;
	int map[F_COUNT];
	size_t nheader;
	int have_header, failed;
	long nrows;
	char *err;
	size_t errlen;
};

static int fail(struct fx_parse *p, long line, const char *what, const char *value)
{
	if (!p->failed)
		snprintf(p->err, p->errlen, "rates '%s' line %ld: %s%s%s%s", p->name, line, what,
			 value ? " '" : "", value ? value : "", value ? "'" : "");
	p->failed = 1;
	return -1;
}

int fx_date_valid(const char *d)
{
	char why[160];
	return !price_date_check(d, PRICE_DATE_ONLY, why, sizeof why);
}

static int fx_header(struct fx_parse *p, char **f, const size_t *lens, size_t n, long line)
{
	for (int c = 0; c < F_COUNT; c++)
		p->map[c] = -1;
	for (size_t i = 0; i < n; i++)
		for (int c = 0; c < F_COUNT; c++)
			if (lens[i] == strlen(fx_cols[c]) && !strcmp(f[i], fx_cols[c])) {
				if (p->map[c] >= 0)
					return fail(p, line, "column appears twice:", fx_cols[c]);
				p->map[c] = (int)i;
			}
	for (int c = 0; c < F_COUNT; c++)
		if (p->map[c] < 0)
			return fail(p, line, "missing column", fx_cols[c]);
	p->nheader = n;
	p->have_header = 1;
	return 0;
}

static int fx_data(struct fx_parse *p, char **f, const size_t *lens, size_t n, long line)
{
	if (n != p->nheader)
		return fail(p, line, "not as many fields as the header", NULL);
	for (size_t i = 0; i < n; i++)
		if (strlen(f[i]) != lens[i] || !ident_utf8_valid(f[i], lens[i]))
			return fail(p, line, "a field is not valid utf-8 text", NULL);
	const char *cur = f[p->map[F_CURRENCY]], *rate_s = f[p->map[F_RATE]];
	const char *date = f[p->map[F_DATE]], *source = f[p->map[F_SOURCE]];
	double rate;
	if (strlen(cur) != 3 || !isupper((unsigned char)cur[0]) || !isupper((unsigned char)cur[1]) ||
	    !isupper((unsigned char)cur[2]) || !strcmp(cur, "USD"))
		return fail(p, line, "currency is not an ISO 4217 code other than USD:", cur);
	if (strspn(rate_s, "0123456789.eE+-") != strlen(rate_s) || gv_parse_double(rate_s, &rate) < 0 ||
	    !isfinite(rate) || rate <= 0)
		return fail(p, line, "usd_per_unit is not a positive decimal number:", rate_s);
	char why[160], msg[200];
	if (price_date_check(date, PRICE_DATE_ONLY, why, sizeof why)) {
		snprintf(msg, sizeof msg, "captured_at %s", why);
		return fail(p, line, msg, NULL);
	}
	if (!source[0])
		return fail(p, line, "missing source", NULL);
	p->nrows++;
	if (p->fn(p->ud, cur, rate, date, source))
		return fail(p, line, "rejected", NULL);
	return 0;
}

static int fx_on_row(void *ud, char **f, const size_t *lens, size_t n, long line)
{
	struct fx_parse *p = ud;
	if (p->failed)
		return -1;
	if (n == 0 || (n == 1 && lens[0] == 0) || f[0][0] == '#')
		return 0;
	return p->have_header ? fx_data(p, f, lens, n, line) : fx_header(p, f, lens, n, line);
}

int fx_parse_csv(const char *name, const void *buf, size_t len, fx_rate_fn fn, void *ud, long *rows,
		 char *err, size_t errlen)
{
	struct fx_parse p = { .name = name, .fn = fn, .ud = ud, .err = err, .errlen = errlen };
	err[0] = '\0';
	p.rows = csvrows_new(fx_on_row, &p);
	if (!p.rows) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	int rc = csvrows_step(p.rows, buf, len, &p.failed, err, errlen, "rates", name);
	if (rc == 0)
		rc = csvrows_step(p.rows, NULL, 0, &p.failed, err, errlen, "rates", name);
	if (rc == 0 && !p.have_header) {
		snprintf(err, errlen, "rates '%s': empty file, no header row", name);
		rc = -1;
	}
	csvrows_free(p.rows);
	if (rows)
		*rows = p.nrows;
	return rc < 0 || p.failed ? -1 : 0;
}
