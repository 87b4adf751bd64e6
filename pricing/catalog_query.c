/*
 * catalog_query.c - the catalog's reads of the stored prices, exchange
 * rates and price sources (catalog.h, fx.h), so that rankings, the report,
 * `gpuvet prices` and the fetchers never write SQL.  The hourly price in US
 * dollars is computed here, once: price_rec_hourly() (months are 730 h)
 * times the stored rate of the row's currency.
 */
#include "pricing/catalog.h"
#include "pricing/fx.h"
#include "pricing/catalog_int.h"
#include "common/util.h"

#include <ctype.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int read_err(sqlite3 *db, const char *what, char *err, size_t errlen)
{
	snprintf(err, errlen, "cannot read %s: %s", what, sqlite3_errmsg(db));
	return -1;
}

static const char *col(sqlite3_stmt *st, int i)
{
	const unsigned char *t = sqlite3_column_text(st, i);
	return t ? (const char *)t : "";
}

static double col_num(sqlite3_stmt *st, int i)
{
	return sqlite3_column_type(st, i) == SQLITE_NULL ? NAN : sqlite3_column_double(st, i);
}

/* ---- exchange rates (fx.h) ---- */

static int iso_code(const char *c)
{
	return strlen(c) == 3 && isupper((unsigned char)c[0]) && isupper((unsigned char)c[1]) &&
	       isupper((unsigned char)c[2]);
}

/*
 * What a rate may be, in US dollars per unit: a stated range per currency a GPU cloud quotes in
 * (about a quarter to four times its 2024 rate, ECB reference rates), else one no currency leaves
 * (a Kuwaiti dinar is 3.3, a Vietnamese dong 0.00004).  A rate outside it is refused: it is most
 * often one given the wrong way round (units per dollar), or a typo that would rank a provider
 * first at nothing an hour.
 */
static const struct fx_range {
	const char *cur;
	double lo, hi;
} fx_ranges[] = {
	{ "CNY", 0.035, 0.55 }, { "EUR", 0.5, 2.5 },    { "GBP", 0.6, 3.0 },    { "JPY", 0.002, 0.025 },
	{ "INR", 0.003, 0.05 }, { "KRW", 0.0002, 0.003 }, { "SGD", 0.3, 2.0 },  { "AUD", 0.25, 1.6 },
	{ "CAD", 0.3, 1.8 },    { "CHF", 0.5, 3.0 },    { "HKD", 0.05, 0.5 },   { "BRL", 0.04, 0.7 },
	{ NULL, 1e-6, 10.0 },
};

/* 0 when RATE is within CUR's range, else -1 with err naming the range. */
static int fx_plausible(const char *cur, double rate, char *err, size_t errlen)
{
	const struct fx_range *r = fx_ranges;
	while (r->cur && strcmp(r->cur, cur))
		r++;
	if (rate >= r->lo && rate <= r->hi)
		return 0;
	snprintf(err, errlen, "rate %g US dollars per %s is outside %g to %g, what gpuvet believes of %s: give "
		 "US dollars per unit (not units per dollar)", rate, cur, r->lo, r->hi,
		 r->cur ? cur : "any currency");
	return -1;
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
	if (fx_plausible(currency, usd_per_unit, err, errlen))
		return -1;
	if (!strncmp(source, FX_SHIPPED_PREFIX, strlen(FX_SHIPPED_PREFIX))) {
		snprintf(err, errlen, "source '%s': '%s' is kept for the rates gpuvet ships", source, FX_SHIPPED_PREFIX);
		return -1;
	}
	double old;
	char old_at[32];
	if (!fx_usd_per_unit(db, currency, &old, old_at, sizeof old_at) && old > 0 &&
	    (usd_per_unit / old >= 10 || old / usd_per_unit >= 10))
		gv_err("warning: the %s rate %g is %.0fx %s the stored %g (of %s): every %s price changes as much",
		       currency, usd_per_unit, usd_per_unit > old ? usd_per_unit / old : old / usd_per_unit,
		       usd_per_unit > old ? "above" : "below", old, old_at, currency);
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

int fx_set_shipped(sqlite3 *db, const char *currency, double usd_per_unit, const char *captured_at,
		   const char *source, char *err, size_t errlen)
{
	sqlite3_stmt *st;
	if (!iso_code(currency) || !strcmp(currency, "USD") || !isfinite(usd_per_unit) || usd_per_unit <= 0 ||
	    strncmp(source, FX_SHIPPED_PREFIX, strlen(FX_SHIPPED_PREFIX))) {
		snprintf(err, errlen, "shipped rate for '%s' is not valid", currency);
		return -1;
	}
	/* the user's own rate (any other source) wins: the WHERE leaves it alone */
	if (sqlite3_prepare_v2(db,
			       "INSERT INTO fx_rates (currency, usd_per_unit, captured_at, source)"
			       " VALUES (?1, ?2, ?3, ?4) ON CONFLICT (currency) DO UPDATE SET"
			       " usd_per_unit = excluded.usd_per_unit, captured_at = excluded.captured_at,"
			       " source = excluded.source WHERE substr(fx_rates.source, 1, ?5) = ?6",
			       -1, &st, NULL) != SQLITE_OK) {
		snprintf(err, errlen, "cannot store the shipped rate: %s", sqlite3_errmsg(db));
		return -1;
	}
	sqlite3_bind_text(st, 1, currency, -1, SQLITE_TRANSIENT);
	sqlite3_bind_double(st, 2, usd_per_unit);
	sqlite3_bind_text(st, 3, captured_at, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 4, source, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int(st, 5, (int)strlen(FX_SHIPPED_PREFIX));
	sqlite3_bind_text(st, 6, FX_SHIPPED_PREFIX, -1, SQLITE_STATIC);
	int rc = sqlite3_step(st) == SQLITE_DONE ? 0 : -1;
	if (rc < 0)
		snprintf(err, errlen, "cannot store the shipped rate: %s", sqlite3_errmsg(db));
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

int fx_each(sqlite3 *db, fx_rate_fn fn, void *ud, char *err, size_t errlen)
{
	sqlite3_stmt *st;
	int rc;
	if (sqlite3_prepare_v2(db, "SELECT currency, usd_per_unit, captured_at, source FROM fx_rates ORDER BY currency",
			       -1, &st, NULL) != SQLITE_OK)
		return read_err(db, "exchange rates", err, errlen);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		if (fn(ud, col(st, 0), sqlite3_column_double(st, 1), col(st, 2), col(st, 3)))
			break;
	sqlite3_finalize(st);
	return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : read_err(db, "exchange rates", err, errlen);
}

/* ---- prices ---- */

/* Columns 0..19 of a statement that selects as catalog_prices does (catalog_int.h). */
void catalog_row_from(sqlite3_stmt *st, struct price_row *r)
{
	struct price_rec *p = &r->rec;
	price_rec_init(p);
	gv_strlcpy(p->provider, col(st, 0), sizeof p->provider);
	gv_strlcpy(p->instance_type, col(st, 1), sizeof p->instance_type);
	gv_strlcpy(p->region, col(st, 2), sizeof p->region);
	gv_strlcpy(p->zone, col(st, 3), sizeof p->zone);
	gv_strlcpy(p->gpu_model, col(st, 4), sizeof p->gpu_model);
	p->gpu_count = col_num(st, 5);
	p->gpu_memory_gib = col_num(st, 6);
	p->vcpus = sqlite3_column_type(st, 7) == SQLITE_NULL ? -1 : (long)sqlite3_column_int64(st, 7);
	p->memory_gib = col_num(st, 8);
	gv_strlcpy(p->market, col(st, 9), sizeof p->market);
	gv_strlcpy(p->term, col(st, 10), sizeof p->term);
	p->upfront = col_num(st, 11);
	p->price = sqlite3_column_double(st, 12);
	gv_strlcpy(p->unit, col(st, 13), sizeof p->unit);
	gv_strlcpy(p->currency, col(st, 14), sizeof p->currency);
	gv_strlcpy(p->source, col(st, 15), sizeof p->source);
	gv_strlcpy(p->source_version, col(st, 16), sizeof p->source_version);
	gv_strlcpy(p->captured_at, col(st, 17), sizeof p->captured_at);
	r->hourly = price_rec_hourly(p);
	/* USD's rate is 1 (fx.h); another currency's is the stored one, or none */
	double rate = !strcmp(p->currency, "USD") ? 1.0 : col_num(st, 18);
	r->usd_per_hour = r->hourly * rate;
	r->usd_per_unit = rate;
	gv_strlcpy(r->fx_captured_at, !strcmp(p->currency, "USD") ? "" : col(st, 19), sizeof r->fx_captured_at);
}

int catalog_prices(sqlite3 *db, const struct price_filter *f, enum price_order order, price_row_fn fn, void *ud,
		   char *err, size_t errlen)
{
	static const char *const orders[] = {
		[PRICE_ORDER_STORED] = "p.id",
		[PRICE_ORDER_LIST] = "p.provider, p.gpu_model, p.gpu_count, p.instance_type, p.region, p.market, p.source",
		[PRICE_ORDER_SKU] = "p.provider, p.instance_type, p.region, p.market, p.zone, p.term",
		[PRICE_ORDER_TYPE] = "p.provider, p.instance_type, p.id",
	};
	char *sql = gv_asprintf(
		"SELECT " CATALOG_PRICE_COLUMNS " FROM prices p"
		" LEFT JOIN fx_rates fx ON fx.currency = p.currency"
		" WHERE %s%s%s%s%s%s ORDER BY %s",
		/* only the filters given: "?1 IS NULL OR p.provider = ?1" would keep SQLite off the
		   (provider, instance_type) index, a whole-table scan for each type rank prices */
		f && f->provider ? "p.provider = ?1 AND " : "", f && f->market ? "p.market = ?2 AND " : "",
		f && f->region ? "(p.region = ?3 OR p.region = '') AND " : "",
		f && f->gpu ? "instr(lower(p.gpu_model), lower(?4)) > 0 AND " : "",
		f && f->instance_type ? "p.instance_type = ?5 AND " : "",
		f && f->max_age_days > 0 ? CATALOG_AGE_DAYS_SQL " <= ?6" : "1", orders[order]);
	sqlite3_stmt *st;
	int rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
	free(sql);
	if (rc != SQLITE_OK)
		return read_err(db, "prices", err, errlen);
	const char *bind[5] = { f ? f->provider : NULL, f ? f->market : NULL, f ? f->region : NULL, f ? f->gpu : NULL,
				f ? f->instance_type : NULL };
	for (int i = 0; i < 5; i++)
		if (bind[i])
			sqlite3_bind_text(st, i + 1, bind[i], -1, SQLITE_TRANSIENT);
	if (f && f->max_age_days > 0)
		sqlite3_bind_int(st, 6, f->max_age_days);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct price_row r;
		catalog_row_from(st, &r);
		if (fn(ud, &r))
			break;
	}
	sqlite3_finalize(st);
	return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : read_err(db, "prices", err, errlen);
}

int catalog_skus(sqlite3 *db, const char *provider, struct catalog_sku **out, size_t *n, char *err, size_t errlen)
{
	sqlite3_stmt *st;
	int rc;
	*out = NULL;
	*n = 0;
	if (sqlite3_prepare_v2(db,
			       "SELECT instance_type, MAX(gpu_model), MAX(gpu_count), MAX(vcpus), MAX(memory_gib)"
			       " FROM prices WHERE provider = ?1 GROUP BY instance_type ORDER BY instance_type",
			       -1, &st, NULL) != SQLITE_OK) {
		snprintf(err, errlen, "cannot read %s instance types: %s", provider, sqlite3_errmsg(db));
		return -1;
	}
	sqlite3_bind_text(st, 1, provider, -1, SQLITE_TRANSIENT);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		*out = gv_realloc(*out, (*n + 1) * sizeof **out);
		struct catalog_sku *k = &(*out)[(*n)++];
		k->instance_type = gv_strdup(col(st, 0));
		k->gpu_model = sqlite3_column_type(st, 1) == SQLITE_NULL ? NULL : gv_strdup(col(st, 1));
		k->gpu_count = col_num(st, 2);
		k->vcpus = sqlite3_column_type(st, 3) == SQLITE_NULL ? -1 : (long)sqlite3_column_int64(st, 3);
		k->memory_gib = col_num(st, 4);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		snprintf(err, errlen, "cannot read %s instance types: %s", provider, sqlite3_errmsg(db));
		catalog_skus_free(*out, *n);
		*out = NULL;
		*n = 0;
		return -1;
	}
	return 0;
}

void catalog_skus_free(struct catalog_sku *k, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(k[i].instance_type);
		free(k[i].gpu_model);
	}
	free(k);
}

int catalog_provider_known(sqlite3 *db, const char *provider, char *known, size_t known_size)
{
	static const char *const fetchable[] = { "alibaba", "aws", "lambda" };
	sqlite3_stmt *st;
	int found = 0;
	known[0] = '\0';
	for (size_t i = 0; i < sizeof fetchable / sizeof fetchable[0]; i++)
		found |= !strcmp(provider, fetchable[i]);
	/* the fetchers' providers and every provider an import added, in name order */
	if (sqlite3_prepare_v2(db,
			       "SELECT provider FROM prices UNION SELECT 'alibaba' UNION SELECT 'aws'"
			       " UNION SELECT 'lambda' ORDER BY 1",
			       -1, &st, NULL) != SQLITE_OK)
		return -1;
	while (sqlite3_step(st) == SQLITE_ROW) {
		const char *p = col(st, 0);
		found |= !strcmp(p, provider);
		size_t len = strlen(known);
		snprintf(known + len, known_size - len, "%s%s", len ? ", " : "", p);
	}
	sqlite3_finalize(st);
	return found;
}

int catalog_sources(sqlite3 *db, price_source_fn fn, void *ud, char *err, size_t errlen)
{
	sqlite3_stmt *st;
	int rc;
	/* the date its file gave: of its prices, or for the shipped rates of theirs (fx.csv) */
	if (sqlite3_prepare_v2(db, "SELECT source, provider, fetched_at, status, message, rows,"
				   " COALESCE((SELECT MAX(captured_at) FROM prices p WHERE p.source = s.source),"
				   " CASE WHEN s.source = 'catalog:fx' THEN (SELECT MAX(captured_at) FROM fx_rates"
				   " WHERE source LIKE '" FX_SHIPPED_PREFIX "%') END)"
				   " FROM price_sources s ORDER BY source", -1, &st, NULL) != SQLITE_OK)
		return read_err(db, "price sources", err, errlen);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct price_source s = {
			.source = (const char *)sqlite3_column_text(st, 0),
			.provider = (const char *)sqlite3_column_text(st, 1),
			.fetched_at = (const char *)sqlite3_column_text(st, 2),
			.status = (const char *)sqlite3_column_text(st, 3),
			.message = (const char *)sqlite3_column_text(st, 4),
			.rows = (long)sqlite3_column_int64(st, 5),
			.captured_at = (const char *)sqlite3_column_text(st, 6),
		};
		if (fn(ud, &s))
			break;
	}
	sqlite3_finalize(st);
	return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : read_err(db, "price sources", err, errlen);
}

int catalog_writable(sqlite3 *db)
{
	return !sqlite3_db_readonly(db, "main");
}

/*
 * AWS's public commercial and GovCloud regions (the EC2 "Regions and Zones"
 * list, 2026): a run on aws is in one of them whether or not the store holds
 * its prices.  Other providers' regions come from their prices alone.
 */
static const char *const aws_regions[] = {
	"af-south-1", "ap-east-1", "ap-east-2", "ap-northeast-1", "ap-northeast-2", "ap-northeast-3", "ap-south-1",
	"ap-south-2", "ap-southeast-1", "ap-southeast-2", "ap-southeast-3", "ap-southeast-4", "ap-southeast-5",
	"ap-southeast-6", "ap-southeast-7", "ca-central-1", "ca-west-1", "eu-central-1", "eu-central-2", "eu-north-1",
	"eu-south-1", "eu-south-2", "eu-west-1", "eu-west-2", "eu-west-3", "il-central-1", "me-central-1",
	"me-south-1", "mx-central-1", "sa-east-1", "us-east-1", "us-east-2", "us-west-1", "us-west-2",
	"us-gov-east-1", "us-gov-west-1",
};

static void region_add(char ***out, size_t *n, const char *r)
{
	for (size_t i = 0; i < *n; i++)
		if (!strcmp((*out)[i], r))
			return;
	*out = gv_realloc(*out, (*n + 1) * sizeof **out);
	(*out)[(*n)++] = gv_strdup(r);
}

int catalog_regions(sqlite3 *db, const char *provider, char ***out, size_t *n, int *anywhere, char *err,
		    size_t errlen)
{
	sqlite3_stmt *st;
	int rc;
	*out = NULL;
	*n = 0;
	*anywhere = 0;
	if (sqlite3_prepare_v2(db, "SELECT DISTINCT region FROM prices WHERE provider = ?1 ORDER BY region", -1, &st,
			       NULL) != SQLITE_OK)
		return read_err(db, "regions", err, errlen);
	sqlite3_bind_text(st, 1, provider, -1, SQLITE_TRANSIENT);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (!col(st, 0)[0])
			*anywhere = 1;
		else
			region_add(out, n, col(st, 0));
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		catalog_regions_free(*out, *n);
		*out = NULL;
		*n = 0;
		return read_err(db, "regions", err, errlen);
	}
	if (!strcmp(provider, "aws"))
		for (size_t i = 0; i < sizeof aws_regions / sizeof aws_regions[0]; i++)
			region_add(out, n, aws_regions[i]);
	return 0;
}

void catalog_regions_free(char **r, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(r[i]);
	free(r);
}
