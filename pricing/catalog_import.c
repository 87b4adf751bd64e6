/* catalog_import.c - a user's price file: one price per key, the latest import wins (catalog_import.h). */
#include "pricing/catalog_import.h"
#include "common/gpus.h"
#include "common/ident.h"
#include "common/util.h"
#include "results/store.h"

#include <ctype.h>
#include <math.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define WARN_NAMED 5   /* price warnings said one by one; the rest are counted */

struct import_checks {
	sqlite3 *db;
	const char *name;
	sqlite3_stmt *del, *cat, *other, *gpus, *types;
	char types_of[32];   /* the provider whose catalogued types are in types[] (asked once per provider) */
	char **type;
	size_t ntypes;
	char *warned_types;  /* the unknown types said, "\n"-separated: each once */
	char source[128];  /* the last row's source, and whether other imports are stored beside it */
	int others;
	uint64_t *hash;    /* open addressing: a key's 64-bit hash (0: empty) ... */
	long *line;        /* ... and the line that gave it */
	size_t n, cap;     /* cap a power of two, at least twice n */
	long warned;
};

struct import_checks *import_checks_new(sqlite3 *db, const char *name)
{
	struct import_checks *k = gv_calloc(1, sizeof *k);
	k->db = db;
	k->name = name;
	if (sqlite3_prepare_v2(db, "DELETE FROM prices WHERE provider = ?1 AND instance_type = ?2 AND region = ?3 AND"
			       " zone = ?4 AND market = ?5 AND term = ?6 AND source LIKE 'import:%' AND source <> ?7",
			       -1, &k->del, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db, "SELECT EXISTS (SELECT 1 FROM prices WHERE source LIKE 'import:%' AND source <> ?1)",
			       -1, &k->other, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db, "SELECT price, unit FROM prices WHERE provider = ?1 AND instance_type = ?2 AND"
			       " market = ?3 AND currency = ?4 AND source LIKE 'catalog:%' AND (region = ?5 OR region = '')"
			       " ORDER BY region DESC, price LIMIT 1", -1, &k->cat, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db, "SELECT gpu_model, gpu_count FROM prices WHERE provider = ?1 AND instance_type = ?2"
			       " AND source LIKE 'catalog:%' AND gpu_model <> '' AND gpu_count IS NOT NULL LIMIT 1",
			       -1, &k->gpus, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db, "SELECT DISTINCT instance_type FROM prices WHERE provider = ?1 AND source LIKE 'catalog:%'",
			       -1, &k->types, NULL) != SQLITE_OK) {
		import_checks_free(k);
		return NULL;
	}
	return k;
}

void import_checks_free(struct import_checks *k)
{
	if (!k)
		return;
	if (k->warned > WARN_NAMED)
		gv_err("prices '%s': %ld more price(s) over %gx off the shipped catalog's", k->name,
		       k->warned - WARN_NAMED, PRICE_WARN_RATIO);
	sqlite3_finalize(k->del);
	sqlite3_finalize(k->cat);
	sqlite3_finalize(k->other);
	sqlite3_finalize(k->gpus);
	sqlite3_finalize(k->types);
	for (size_t i = 0; i < k->ntypes; i++)
		free(k->type[i]);
	free(k->type);
	free(k->warned_types);
	free(k->hash);
	free(k->line);
	free(k);
}

static void bind_key(sqlite3_stmt *st, const struct price_rec *r)
{
	sqlite3_bind_text(st, 1, r->provider, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, r->instance_type, -1, SQLITE_STATIC);
}

static uint64_t key_hash(const struct price_rec *r)
{
	const char *parts[] = { r->provider, r->instance_type, r->region, r->zone, r->market, r->term, r->source };
	uint64_t h = 1469598103934665603ull;   /* FNV-1a, a 0x1f between the fields */
	for (size_t i = 0; i < sizeof parts / sizeof *parts; i++) {
		for (const unsigned char *c = (const unsigned char *)parts[i]; *c; c++)
			h = (h ^ *c) * 1099511628211ull;
		h = (h ^ 0x1f) * 1099511628211ull;
	}
	return h ? h : 1;
}

/* The slot of h: where it is, or the empty one where it goes. */
static size_t slot_of(const struct import_checks *k, uint64_t h)
{
	size_t i = (size_t)h & (k->cap - 1);
	while (k->hash[i] && k->hash[i] != h)
		i = (i + 1) & (k->cap - 1);
	return i;
}

static void grow(struct import_checks *k)
{
	uint64_t *oh = k->hash;
	long *ol = k->line;
	size_t oc = k->cap;
	k->cap = oc ? 2 * oc : 1024;
	k->hash = gv_calloc(k->cap, sizeof *k->hash);
	k->line = gv_calloc(k->cap, sizeof *k->line);
	for (size_t i = 0; i < oc; i++)
		if (oh[i]) {
			size_t j = slot_of(k, oh[i]);
			k->hash[j] = oh[i];
			k->line[j] = ol[i];
		}
	free(oh);
	free(ol);
}

/* The shipped catalog's instance types of r's provider (none for a provider it does not ship). */
static void load_types(struct import_checks *k, const char *provider)
{
	if (!strcmp(k->types_of, provider))
		return;
	snprintf(k->types_of, sizeof k->types_of, "%s", provider);
	for (size_t i = 0; i < k->ntypes; i++)
		free(k->type[i]);
	k->ntypes = 0;
	sqlite3_reset(k->types);
	sqlite3_bind_text(k->types, 1, provider, -1, SQLITE_STATIC);
	while (sqlite3_step(k->types) == SQLITE_ROW) {
		k->type = gv_realloc(k->type, (k->ntypes + 1) * sizeof *k->type);
		k->type[k->ntypes++] = gv_strdup((const char *)sqlite3_column_text(k->types, 0));
	}
}

/*
 * A type the shipped catalog of a provider it ships does not know is said, once, by name, with the
 * nearest one it knows and the letters that differ (an I for an l, a 0 for an O): a typo would
 * otherwise price a type no run is named after.
 */
static void warn_unknown_type(struct import_checks *k, const struct price_rec *r, long line)
{
	char shown[96], key[160];
	load_types(k, r->provider);
	for (size_t i = 0; i < k->ntypes; i++)
		if (!strcmp(k->type[i], r->instance_type))
			return;
	snprintf(key, sizeof key, "\n%s\n", r->instance_type);
	if (!k->ntypes || (k->warned_types && strstr(k->warned_types, key)))
		return;
	char *w = gv_asprintf("%s%s", k->warned_types ? k->warned_types : "\n", key + 1);
	free(k->warned_types);
	k->warned_types = w;
	ident_escape(r->instance_type, shown, sizeof shown);
	const char *near = gv_closest(r->instance_type, (const char *const *)k->type, k->ntypes);
	char diff[96] = "";
	if (near && strlen(near) == strlen(r->instance_type))
		for (size_t i = 0, n = 0; near[i] && n + 16 < sizeof diff; i++)
			if (near[i] != r->instance_type[i])
				n += (size_t)snprintf(diff + n, sizeof diff - n, "%s'%c' for '%c'", n ? ", " : "; ",
						      isprint((unsigned char)r->instance_type[i]) ? r->instance_type[i] : '?', near[i]);
	gv_err("prices '%s' line %ld: %s %s is no instance type of the shipped %s catalog%s%s%s%s: check the name", k->name,
	       line, r->provider, shown, r->provider, near ? " (did you mean " : "", near ? near : "", diff, near ? "?)" : "");
}

/* The catalog's model in the file's words: its key, or a leading part of it ("A100" of A100-40-SXM, "h100"). */
static int same_family(const char *mine, const char *cat)
{
	size_t n = strlen(mine);
	if (gpu_same_model(mine, cat) || !strcasecmp(mine, cat))
		return 1;
	return n && !strncasecmp(mine, cat, n) && cat[n] == '-';
}

/*
 * A type the shipped catalog knows keeps its GPUs: a row that names another model or count is
 * refused with both (a price never re-declares what `results tag` and the identity check hold a
 * run to: aws p5.4xlarge is 1 x H100-SXM, never 8 x H200).
 */
static int catalog_gpus(struct import_checks *k, const struct price_rec *r, char *err, size_t errlen)
{
	sqlite3_reset(k->gpus);
	bind_key(k->gpus, r);
	if (sqlite3_step(k->gpus) != SQLITE_ROW)
		return 0;
	const char *model = (const char *)sqlite3_column_text(k->gpus, 0);
	double count = sqlite3_column_double(k->gpus, 1);
	if ((r->gpu_model[0] && !same_family(r->gpu_model, model)) || (!isnan(r->gpu_count) && r->gpu_count != count)) {
		char shown[96], given[160];
		ident_escape(r->instance_type, shown, sizeof shown);
		ident_escape(r->gpu_model[0] ? r->gpu_model : model, given, sizeof given);
		snprintf(err, errlen, "%s %s is %g x %s in the shipped catalog; the file says %g x %s: a price cannot "
			 "re-declare a catalogued type's gpus (leave gpu_model and gpu_count empty)", r->provider, shown,
			 count, model, isnan(r->gpu_count) ? count : r->gpu_count, given);
		return -1;
	}
	return 0;
}

int import_checks_row(struct import_checks *k, const struct price_rec *r, long line, char *err, size_t errlen)
{
	char why[160];
	if (catalog_gpus(k, r, err, errlen))
		return -1;
	warn_unknown_type(k, r, line);
	if (price_date_check(r->captured_at, PRICE_DATE_NOW, why, sizeof why)) {
		snprintf(err, errlen, "captured_at %s", why);
		return -1;
	}
	if (price_rec_hourly(r) < PRICE_MIN_HOURLY) {
		snprintf(err, errlen, "price %g per %s is not believable (under %g per hour)", r->price, r->unit,
			 PRICE_MIN_HOURLY);
		return -1;
	}
	if (2 * (k->n + 1) > k->cap)
		grow(k);
	uint64_t h = key_hash(r);
	size_t i = slot_of(k, h);
	if (k->hash[i]) {
		char shown[96];
		ident_escape(r->instance_type, shown, sizeof shown);
		snprintf(err, errlen, "%s %s %s%s%s is priced twice, at lines %ld and %ld: one price per key "
			 "(provider, instance_type, region, zone, market, term, source)", r->provider, shown, r->market,
			 r->region[0] ? " in " : "", r->region, k->line[i], line);
		return -1;
	}
	k->hash[i] = h;
	k->line[i] = line;
	k->n++;
	return 0;
}


void import_checks_complete(struct import_checks *k, struct price_rec *r)
{
	if (r->gpu_model[0] && !isnan(r->gpu_count))
		return;
	sqlite3_reset(k->gpus);
	bind_key(k->gpus, r);
	if (sqlite3_step(k->gpus) != SQLITE_ROW)
		return;
	if (!r->gpu_model[0])
		snprintf(r->gpu_model, sizeof r->gpu_model, "%s", (const char *)sqlite3_column_text(k->gpus, 0));
	if (isnan(r->gpu_count))
		r->gpu_count = sqlite3_column_double(k->gpus, 1);
}

/* The shipped catalog's price of the row's type in MARKET (its region's lowest zone for spot): 1 found. */
static int catalog_price(struct import_checks *k, const struct price_rec *r, const char *market)
{
	sqlite3_reset(k->cat);
	bind_key(k->cat, r);
	sqlite3_bind_text(k->cat, 3, market, -1, SQLITE_STATIC);
	sqlite3_bind_text(k->cat, 4, r->currency, -1, SQLITE_STATIC);
	sqlite3_bind_text(k->cat, 5, r->region, -1, SQLITE_STATIC);
	return sqlite3_step(k->cat) == SQLITE_ROW;
}

/*
 * Warns when the row is over PRICE_WARN_RATIO off the shipped catalog's price in its market; a spot
 * price the catalog has no spot price for is held to its on-demand one (spot is below on-demand,
 * never by 10x).
 */
static void compare_with_catalog(struct import_checks *k, const struct price_rec *r, long line)
{
	const char *market = r->market;
	if (!catalog_price(k, r, market)) {
		if (strcmp(r->market, "spot") || !catalog_price(k, r, "on_demand"))
			return;
		market = "on_demand";
	}
	struct price_rec c = *r;
	c.price = sqlite3_column_double(k->cat, 0);
	snprintf(c.unit, sizeof c.unit, "%s", (const char *)sqlite3_column_text(k->cat, 1));
	double mine = price_rec_hourly(r), theirs = price_rec_hourly(&c);
	if (!(theirs > 0) || (mine <= theirs * PRICE_WARN_RATIO && mine * PRICE_WARN_RATIO >= theirs))
		return;
	if (++k->warned <= WARN_NAMED) {
		char shown[96];
		ident_escape(r->instance_type, shown, sizeof shown);
		int held = strcmp(market, r->market) != 0;   /* a spot price held to the on-demand one */
		gv_err("prices '%s' line %ld: %s %s%s at %.4g %s/hour is %.0fx %s the shipped catalog's %s%.4g: check "
		       "the file", k->name, line, r->provider, shown, held ? " spot" : "", mine, r->currency,
		       mine > theirs ? mine / theirs : theirs / mine, mine > theirs ? "above" : "below",
		       held ? "on-demand " : "", theirs);
	}
}

/* Whether any other import's prices are stored (asked once per source: most files have one). */
static int other_imports(struct import_checks *k, const struct price_rec *r)
{
	if (strcmp(k->source, r->source)) {
		snprintf(k->source, sizeof k->source, "%s", r->source);
		sqlite3_reset(k->other);
		sqlite3_bind_text(k->other, 1, r->source, -1, SQLITE_STATIC);
		k->others = sqlite3_step(k->other) != SQLITE_ROW || sqlite3_column_int(k->other, 0);
	}
	return k->others;
}

int import_checks_stored(struct import_checks *k, const struct price_rec *r, long line, char *err, size_t errlen)
{
	if (!other_imports(k, r)) {
		compare_with_catalog(k, r, line);
		return 0;
	}
	sqlite3_reset(k->del);
	bind_key(k->del, r);
	sqlite3_bind_text(k->del, 3, r->region, -1, SQLITE_STATIC);
	sqlite3_bind_text(k->del, 4, r->zone, -1, SQLITE_STATIC);
	sqlite3_bind_text(k->del, 5, r->market, -1, SQLITE_STATIC);
	sqlite3_bind_text(k->del, 6, r->term, -1, SQLITE_STATIC);
	sqlite3_bind_text(k->del, 7, r->source, -1, SQLITE_STATIC);
	if (sqlite3_step(k->del) != SQLITE_DONE) {
		char msg[256];
		snprintf(err, errlen, "line %ld: cannot replace an earlier import of the price: %s", line,
			 store_sqlite_msg(k->db, msg, sizeof msg));
		return -1;
	}
	compare_with_catalog(k, r, line);
	return 0;
}
