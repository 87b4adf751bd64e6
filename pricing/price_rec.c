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
#include <time.h>

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

/* N digits at s as a number, or -1. */
static int digits(const char *s, int n)
{
	int v = 0;
	for (int i = 0; i < n; i++) {
		if (!isdigit((unsigned char)s[i]))
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	return v;
}

/* The time part after the date ("12:30", "12:30:05.5Z", "12:30:05+08:00"): 0 when it is one. */
static int time_part(const char *t)
{
	int h = digits(t, 2), mi = t[2] == ':' ? digits(t + 3, 2) : -1, sec = 0;
	if (h < 0 || h > 23 || mi < 0 || mi > 59)
		return -1;
	t += 5;
	if (*t == ':') {
		if ((sec = digits(t + 1, 2)) < 0 || sec > 60)
			return -1;
		t += 3;
		if (*t == '.' && isdigit((unsigned char)t[1]))
			for (t++; isdigit((unsigned char)*t); t++)
				;
	}
	if (*t == 'Z')
		t++;
	else if (*t == '+' || *t == '-') {
		int oh = digits(t + 1, 2), om = t[3] == ':' ? digits(t + 4, 2) : -1;
		if (oh < 0 || oh > 23 || om < 0 || om > 59)
			return -1;
		t += 6;
	}
	return *t ? -1 : 0;
}

const char *price_date_check(const char *s, int how, char *buf, size_t size)
{
	int date_only = how & PRICE_DATE_ONLY;
	static const int mdays[] = { 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
	int y = s ? digits(s, 4) : -1, m = y >= 0 && s[4] == '-' ? digits(s + 5, 2) : -1;
	int d = m >= 0 && s[7] == '-' ? digits(s + 8, 2) : -1;
	int leap = y % 4 == 0 && (y % 100 != 0 || y % 400 == 0);
	const char *form = date_only ? "YYYY-MM-DD" : "YYYY-MM-DD or an ISO 8601 time";
	if (d < 0 || m < 1 || m > 12 || d < 1 || d > mdays[m - 1] - (m == 2 && !leap) ||
	    (s[10] && (date_only || (s[10] != 'T' && s[10] != ' ') || time_part(s + 11)))) {
		snprintf(buf, size, "'%s' is not a date (%s)", s ? s : "", form);
		return buf;
	}
	if (y < 2000 || y > 2999) {
		snprintf(buf, size, "'%s' is %s", s, y < 2000 ? "before 2000: no cloud GPU price or rate is that old" :
			 "in the future");
		return buf;
	}
	struct tm tm = { .tm_year = y - 1900, .tm_mon = m - 1, .tm_mday = d };
	time_t at = timegm(&tm), now = time(NULL);
	if ((how & PRICE_DATE_NOW) && at != (time_t)-1 && now != (time_t)-1 && at > now + 86400) {
		snprintf(buf, size, "'%s' is in the future (over a day ahead of this machine's clock)", s);
		return buf;
	}
	return NULL;
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
		/* to ten digits: 1000001 is not said as "1e+06 ... over 1e+06" (issue 57) */
		snprintf(buf, size, "price %.10g per %s is not believable (over %.10g per hour)", r->price, r->unit,
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
	char why[160];
	if (price_date_check(r->captured_at, 0, why, sizeof why)) {
		snprintf(buf, size, "captured_at %s", why);
		return buf;
	}
	return NULL;
}

