/*
 * price_rec.c - the price record (catalog.h struct price_rec): its defaults,
 * its hourly price and its checks.  Its own file so the catalog's writes
 * (catalog.c) and reads (catalog_query.c) both depend on it and not on each
 * other's files.
 */
#include "pricing/catalog.h"
#include "common/util.h"
#include "common/ident.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

/* ---- the record ---- */

void price_rec_init(struct price_rec *r)
{
	memset(r, 0, sizeof *r);
	r->gpu_count = NAN;
	r->gpu_memory_gib = NAN;
	r->vcpus = -1;
	r->memory_gib = NAN;
	r->upfront = NAN;
	r->price = NAN;
}

double price_rec_hourly(const struct price_rec *r)
{
	return strcmp(r->unit, "month") ? r->price : r->price / 730.0;
}

static int is_iso_date(const char *s)
{
	/* YYYY-MM-DD, optionally followed by 'T' or ' ' and a time */
	for (int i = 0; i < 10; i++) {
		if (i == 4 || i == 7) {
			if (s[i] != '-')
				return 0;
		} else if (!isdigit((unsigned char)s[i])) {
			return 0;
		}
	}
	return s[10] == '\0' || s[10] == 'T' || s[10] == ' ';
}

static int opt_nonneg(double v) { return isnan(v) || (isfinite(v) && v >= 0); }

const char *price_rec_check(const struct price_rec *r, char *buf, size_t size)
{
	if (!r->provider[0])
		return "missing provider";
	/* a custom machine's negotiated price (judge/identity.h): "custom:NAME" */
	const char *name = !strncmp(r->provider, "custom:", 7) && r->provider[7] ? r->provider + 7 : r->provider;
	for (const char *p = name; *p; p++)
		if (!(islower((unsigned char)*p) || isdigit((unsigned char)*p) || *p == '-' || *p == '_')) {
			snprintf(buf, size, "provider '%s' must be lowercase letters, digits, '-' or '_' (a custom machine's: custom:NAME)",
				 r->provider);
			return buf;
		}
	if (!r->instance_type[0])
		return "missing instance_type";
	const char *bad = ident_check(r->instance_type);
	if (bad) {
		char shown[96];
		ident_escape(r->instance_type, shown, sizeof shown);
		snprintf(buf, size, "instance_type '%s' %s", shown, bad);
		return buf;
	}
	const char *texts[] = { r->region, r->zone, r->gpu_model, r->term, r->source, r->source_version };
	for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++)
		if (!ident_utf8_valid(texts[i], strlen(texts[i])))
			return "a text field is not valid utf-8";
	if (strcmp(r->market, "on_demand") && strcmp(r->market, "spot") && strcmp(r->market, "reserved")) {
		snprintf(buf, size, "unknown market '%s' (on_demand, spot or reserved)", r->market);
		return buf;
	}
	if (strcmp(r->unit, "hour") && strcmp(r->unit, "month")) {
		snprintf(buf, size, "unknown unit '%s' (hour or month)", r->unit);
		return buf;
	}
	if (isnan(r->price))
		return "missing price";
	if (!isfinite(r->price) || r->price <= 0) {
		snprintf(buf, size, "price %g is not a positive number", r->price);
		return buf;
	}
	if (price_rec_hourly(r) > PRICE_MAX_HOURLY) {
		snprintf(buf, size, "price %g per %s is not believable (over %g per hour)", r->price, r->unit,
			 PRICE_MAX_HOURLY);
		return buf;
	}
	if (strlen(r->currency) != 3 || !isupper((unsigned char)r->currency[0]) ||
	    !isupper((unsigned char)r->currency[1]) || !isupper((unsigned char)r->currency[2])) {
		snprintf(buf, size, "currency '%s' is not an ISO 4217 code such as USD", r->currency);
		return buf;
	}
	if (!isnan(r->gpu_count) && !(r->gpu_count >= 1 && r->gpu_count <= PRICE_MAX_GPUS)) {
		snprintf(buf, size, "gpu_count %g is not from 1 to %d", r->gpu_count, PRICE_MAX_GPUS);
		return buf;
	}
	if (!opt_nonneg(r->gpu_memory_gib))
		return "gpu_memory_gib is negative";
	if (!opt_nonneg(r->memory_gib))
		return "memory_gib is negative";
	if (!opt_nonneg(r->upfront))
		return "upfront is negative";
	if (r->vcpus < -1)
		return "vcpus is negative";
	if (!r->source[0])
		return "missing source";
	if (!is_iso_date(r->captured_at)) {
		snprintf(buf, size, "captured_at '%s' is not a date (YYYY-MM-DD or ISO 8601 time)",
			 r->captured_at);
		return buf;
	}
	return NULL;
}

