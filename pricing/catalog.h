/*
 * catalog.h - the price record, gpuvet's price CSV format and the prices
 * in the store.
 *
 * One record per price point (struct price_rec).  A price CSV has a header
 * row and is read BY COLUMN NAME (any order, unknown columns ignored):
 *
 *   required: provider, instance_type, market, price, unit, currency
 *   optional: region, zone, gpu_model, gpu_count, gpu_memory_gib, vcpus,
 *             memory_gib, term, upfront, source, source_version, captured_at
 *
 * Rows whose first field starts with '#' are comments.  Every row is
 * validated (market on_demand|spot|reserved, unit hour|month, price a
 * non-negative number, currency three capital letters, numbers numeric...)
 * and the first bad one stops the load with
 * "catalog 'x.csv' line N: <what>"; the store is then left as it was.
 *
 * Loading replaces, in ONE transaction, every stored row of each source the
 * file names (a failed or truncated load keeps the previous prices) and
 * records the outcome in price_sources.
 */
#ifndef GPUVET_CATALOG_H
#define GPUVET_CATALOG_H

#include <stddef.h>
#include <time.h>

/* The store's SQLite connection (store_db()); only the catalog's own files query it. */
typedef struct sqlite3 sqlite3;

struct price_rec {
	char provider[32];
	char instance_type[96];
	char region[64];
	char zone[64];
	char gpu_model[64];      /* reference key (common/gpus.h) where known, else the provider's name; "" unknown */
	double gpu_count;        /* 1..PRICE_MAX_GPUS (a GPU share is not priced here); NAN unknown */
	double gpu_memory_gib;   /* per GPU; NAN unknown */
	long vcpus;              /* -1 unknown */
	double memory_gib;       /* NAN unknown */
	char market[16];         /* on_demand, spot, reserved */
	char term[32];           /* reserved term ("1yr", "3yr"...), "" otherwise */
	double upfront;          /* NAN none */
	double price;            /* > 0, at most PRICE_MAX_HOURLY per hour */
	char unit[8];            /* hour, month */
	char currency[4];        /* ISO 4217 */
	char source[128];        /* "catalog:aws", "aws-bulk:us-east-1", "import:deal.csv" ... */
	char source_version[64];
	char captured_at[32];    /* ISO 8601 date or UTC time */
};

/* Clears r to "unknown" everywhere. */
void price_rec_init(struct price_rec *r);
/* NULL when valid, else what is wrong (static text or into buf). */
const char *price_rec_check(const struct price_rec *r, char *buf, size_t size);
/*
 * The one check of a price's or a rate's date: YYYY-MM-DD (PRICE_DATE_ONLY), or that followed by
 * 'T' or ' ' and HH:MM[:SS[.fff]] with an optional Z or +HH:MM; a real calendar date and time, in
 * 2000 or later, and with PRICE_DATE_NOW (what a user gives: an import, a rate) not over a day
 * ahead of this machine's clock (a shipped catalog is not held to a clock that may be wrong).
 * NULL, or why not (in buf).
 */
#define PRICE_DATE_ONLY 1
#define PRICE_DATE_NOW 2
const char *price_date_check(const char *s, int how, char *buf, size_t size);

/*
 * What price_rec_check believes: a price above 0 and at most this per hour
 * (the dearest real GPU instance is about $100/h), and when the GPU count is
 * known, a count from 1 to PRICE_MAX_GPUS.
 */
#define PRICE_MAX_HOURLY 1e6
#define PRICE_MAX_GPUS 64
/* Price per hour in the record's currency (months are 730 hours, AWS's convention). */
double price_rec_hourly(const struct price_rec *r);

/* ---- parsing gpuvet's CSV format (streaming) ---- */

struct catalog_parser;
/* Called for every valid row; non-zero stops with the message set by catalog_parser_fail(). */
typedef int (*catalog_row_fn)(void *ud, const struct price_rec *r, long line);

/* name: shown in errors ("x.csv"); default_source: used when the file has no source column/value. */
struct catalog_parser *catalog_parser_new(const char *name, const char *default_source,
					  const char *default_captured_at, catalog_row_fn fn, void *ud);
void catalog_parser_free(struct catalog_parser *p);
int catalog_parser_feed(struct catalog_parser *p, const void *buf, size_t len);
int catalog_parser_finish(struct catalog_parser *p);
/* "catalog 'x.csv' line N: what" */
const char *catalog_parser_error(const struct catalog_parser *p);
void catalog_parser_fail(struct catalog_parser *p, long line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
long catalog_parser_rows(const struct catalog_parser *p);

/* ---- the store ---- */

/*
 * A load: one transaction that replaces, source by source, the rows of
 * every source it receives.  begin .. put* .. commit (or abort).
 */
struct catalog_load;
int catalog_load_begin(sqlite3 *db, struct catalog_load **out, char *err, size_t errlen);
/* Rejects unknown currencies (neither USD nor in fx_rates), except while loading
 * the shipped catalogs, which keep their source's currency (fx.csv ships its rate). */
int catalog_load_put(struct catalog_load *l, const struct price_rec *r, char *err, size_t errlen);
/* Records each source in price_sources (status ok, rows) and commits. */
int catalog_load_commit(struct catalog_load *l, const char *provider, const char *message,
			char *err, size_t errlen);
/* Rolls back and frees. */
void catalog_load_abort(struct catalog_load *l);
long catalog_load_rows(const struct catalog_load *l);

/* Records a failed refresh of a source without touching its prices. */
void catalog_note_failure(sqlite3 *db, const char *source, const char *provider, const char *message);

/* Parses a whole file in gpuvet's format into the store (one transaction). 0 or -1 with err. */
int catalog_import_file(sqlite3 *db, const char *path, const char *default_source, long *rows,
			char *err, size_t errlen);
int catalog_import_buffer(sqlite3 *db, const char *name, const void *buf, size_t len,
			  const char *default_source, const char *message, long *rows,
			  char *err, size_t errlen);

/* ---- reading the stored prices (catalog_query.c) ---- */

/* A stored price with what is derived from it, computed once here. */
struct price_row {
	struct price_rec rec;
	double hourly;        /* price per hour in rec.currency (price_rec_hourly: a month is 730 h) */
	double usd_per_hour;  /* hourly x the stored rate of rec.currency (USD: 1); NAN when no rate is stored */
	double usd_per_unit;  /* that rate (USD: 1; NAN none) */
	char fx_captured_at[32]; /* the rate's date ("" for USD or none) */
};
/* NULL fields match everything; region also matches prices that hold in every region (""). */
struct price_filter {
	const char *provider, *market, *region;
	const char *gpu;      /* case-insensitive substring of gpu_model */
	const char *instance_type; /* exactly this type */
	int max_age_days;     /* > 0: only prices captured at most this many whole days ago (price_age_days) */
};
enum price_order {
	PRICE_ORDER_STORED,   /* as stored */
	PRICE_ORDER_LIST,     /* provider, gpu_model, gpu_count, instance_type, region, market, source */
	PRICE_ORDER_SKU,      /* provider, instance_type, region, market, zone, term */
	PRICE_ORDER_TYPE,     /* provider, instance_type, then as stored: a type's rows together, in their
			         PRICE_ORDER_STORED order (the (provider, instance_type) index, no sort) */
};
/* Called for every row; non-zero stops the walk (not an error). */
typedef int (*price_row_fn)(void *ud, const struct price_row *r);
int catalog_prices(sqlite3 *db, const struct price_filter *f, enum price_order order, price_row_fn fn, void *ud,
		   char *err, size_t errlen);

/*
 * The report's price list, bounded whatever the catalog's size
 * (catalog_cheapest.c): the n cheapest prices in USD per hour of each GPU
 * model and market (a model "" groups the prices that name none), by model,
 * market, then price; a price without a stored rate after the rated ones.
 * fn gets each row, and with the last row of its group, the group's count.
 */
#define PRICE_CHEAPEST_PER_MODEL 10
struct price_group {
	long total;             /* the group's rows in the store */
	long shown;             /* of them listed: min(total, n) */
	long rest;              /* total - shown: summarised, not listed */
	double rest_min_usd_h;  /* the rest's cheapest and dearest USD price per hour; NAN when none has a rate */
	double rest_max_usd_h;
	long unrated;           /* rows of the group whose currency has no stored rate */
};
typedef int (*price_cheapest_fn)(void *ud, const struct price_row *r, const struct price_group *last);
/* max_age_days > 0: prices captured longer ago are neither listed nor counted (price_filter). */
int catalog_cheapest_per_model(sqlite3 *db, int n, int max_age_days, price_cheapest_fn fn, void *ud, char *err,
			       size_t errlen);

/* One instance type a provider's stored prices know, with what the rows say of it (MAX over its rows). */
struct catalog_sku {
	char *instance_type;
	char *gpu_model;      /* NULL unknown */
	double gpu_count;     /* NAN unknown */
	long vcpus;           /* -1 unknown */
	double memory_gib;    /* NAN unknown */
};
/* The provider's instance types, by name; *out malloc'd (catalog_skus_free). 0 or -1 with err. */
int catalog_skus(sqlite3 *db, const char *provider, struct catalog_sku **out, size_t *n, char *err, size_t errlen);
void catalog_skus_free(struct catalog_sku *k, size_t n);

/*
 * 1 when provider has a fetcher (aws, lambda, alibaba) or stored prices, 0 not,
 * -1 on a read error; known gets the known providers, "a, b, c".
 */
int catalog_provider_known(sqlite3 *db, const char *provider, char *known, size_t known_size);

/*
 * The regions a provider is known in: those of its stored prices, and for
 * aws every public region (a run may be in a region whose prices are not
 * stored).  *anywhere = 1 when some price of the provider holds in every
 * region ("" region: Lambda's).  *out malloc'd (catalog_regions_free); 0 or -1 with err.
 */
int catalog_regions(sqlite3 *db, const char *provider, char ***out, size_t *n, int *anywhere, char *err,
		    size_t errlen);
void catalog_regions_free(char **r, size_t n);

/* One row of price_sources (fields NULL when not recorded). */
struct price_source {
	const char *source, *provider, *fetched_at, *status, *message;
	const char *captured_at;   /* the newest captured_at of its stored prices: when the prices were taken */
	long rows;
};
typedef int (*price_source_fn)(void *ud, const struct price_source *s);
int catalog_sources(sqlite3 *db, price_source_fn fn, void *ud, char *err, size_t errlen);

/* May prices be written (the store was not opened read-only)? */
int catalog_writable(sqlite3 *db);

/* ---- what `gpuvet prices list` shows (catalog_list.c) ---- */

/* Compares names with digit runs as numbers, case-insensitively: p4d.24xlarge < p5.48xlarge, g5.2xlarge < g5.12xlarge. */
int natural_cmp(const char *a, const char *b);

/* `--gpu MODEL[:COUNT]`: a model name (H100 finds H100-SXM and H100-PCIE, A10 not A100) and a GPU count. */
struct gpu_want {
	char model[64];
	double count;   /* NAN: any */
};
int price_gpu_want_parse(const char *s, struct gpu_want *w, char *err, size_t errlen);
int price_gpu_matches(const struct gpu_want *w, const char *gpu_model, double gpu_count);

/* A price captured longer ago than this is warned about where it is used (list, rank, report). */
#define PRICE_STALE_DAYS 90

/* Whole days from captured_at (YYYY-MM-DD...) to now; -1 when it is not a date. */
long price_age_days(const char *captured_at, time_t now);
/*
 * What a price's date is (catalog_data.c): 1 when source's captured_at is the source's own date (a fetch, an
 * import, a dated snapshot), 0 when it is only the day gpuvet copied an undated snapshot (catalog:aws,
 * catalog:lambda: pricing/catalog/README.md).  The words for it, "captured 2024-12-30" or "copied 2026-11-25,
 * source date unknown" ("date unknown" without one), into buf; and its age in days from the source's own date,
 * -1 when that is unknown (so no staleness is claimed from a copy date).
 */
int price_source_dated(const char *source);
const char *price_date_words(const char *source, const char *captured_at, char *buf, size_t n);
long price_source_age_days(const char *source, const char *captured_at, time_t now);

/* One market's price of an offer: the winning source's cheapest row (imports > fetched > shipped). */
struct price_side {
	int have;
	double hourly;        /* in currency */
	double usd_per_hour;  /* NAN: no rate stored for currency */
	double usd_per_unit;
	char currency[4], source[128], captured_at[32], zone[64], fx_captured_at[32];
};
/*
 * A GPU model's plausible price per GPU-hour in one market (catalog_band.c, issue 58 item 8): the median of the
 * stored prices of the model in the market (USD-rated, GPU count known), and the band from a third of it to 3x
 * it; a model with fewer than PRICE_BAND_MIN_PRICES prices has no band.  price_band_check: 1 with the note when
 * usd_per_gpu_hour is outside (a spot price is never flagged high: at or under its on-demand is the cap), else 0.
 */
#define PRICE_BAND_FACTOR 3.0
#define PRICE_BAND_MIN_PRICES 5
struct price_bands;
struct price_bands *price_bands_load(sqlite3 *db, const char *market, int max_age_days, char *err, size_t errlen);
int price_band_check(const struct price_bands *b, const char *model, double usd_per_gpu_hour, char *note, size_t n);
void price_bands_free(struct price_bands *b);
/* A price outside its model's band: the band in USD per GPU-hour, the stored prices it is the median of, the note. */
struct price_band_hit {
	char model[64], market[16];
	double low, high, median;
	size_t prices;
	char note[320];       /* price_band_check's */
};
/* price_band_check with the band's figures: 1 with h filled when outside, else 0. */
int price_band_test(const struct price_bands *b, const char *model, double usd_per_gpu_hour, struct price_band_hit *h);
/* "the plausible band of H100 on-demand prices ($0.9-8.1: a third to 3x the median of 12 stored)": the notes' words. */
const char *price_band_words(const struct price_band_hit *h, char *buf, size_t n);
/*
 * A listing's bands (`prices list`, `prices cheapest`): each market's (on_demand, spot) loaded once, on its first
 * price, over the prices captured within max_age_days (0: all); and each (model, market) found outside, once,
 * for the line under the table.  Zero-initialise with db and max_age_days set; price_band_set_free after.
 */
struct price_band_set {
	sqlite3 *db;
	int max_age_days;
	struct price_bands *od, *spot;
	struct price_band_hit *flagged;
	size_t nflagged;
};
/* 1 with h when usd_per_gpu_hour is outside the band of model in market, 0 inside, no band or another market;
 * -1 when the prices cannot be read (err). */
int price_band_set_check(struct price_band_set *s, const char *market, const char *model, double usd_per_gpu_hour,
			 struct price_band_hit *h, char *err, size_t errlen);
void price_band_set_free(struct price_band_set *s);

/* ---- a spot price's zones, and one type's price in a market and region (catalog_choose.c) ---- */

/* Which source wins a price: import: 2 > fetched 1 > shipped catalog: 0. */
int price_source_priority(const char *source);

/* The zones of one region priced by its winning source (spot: the lowest and the median zone). */
struct price_zone {
	double usd;        /* USD per hour */
	char zone[64];
};
struct price_zones {
	struct price_zone *v;
	size_t n;
	int prio;          /* the source priority the zones are of */
};
/* Keeps the row's zone when its source is the region's best so far (a better one starts over). */
void price_zones_add(struct price_zones *z, const struct price_row *r);
/* The median zone (the lower middle of an even count; zones without a USD price are not counted); NULL none. */
const struct price_zone *price_zones_median(struct price_zones *z);
void price_zones_free(struct price_zones *z);

/*
 * THE choice of one instance type's price in one market (what `rank`, and
 * `cost`, price a type at): in each region the winning source (imports >
 * fetched > shipped), then its cheapest row in USD: for spot the region's
 * lowest zone.  With region: that region's price (a price with no region
 * holds everywhere); when it has none, the cheapest other region's, with
 * elsewhere = 1 and note "priced at R2; no price in R" (spot: "no spot
 * price in R").  Without region: the cheapest region.  found = 0 when the
 * type has no price in the market at all.
 */
struct price_choice {
	int found, elsewhere;
	struct price_row row;          /* the chosen row: its region, zone, source, captured_at, USD price */
	size_t zones;                  /* spot: the zones of its region that the winning source prices */
	double median_usd_per_hour;    /* spot: the median zone's price; NAN otherwise */
	char median_zone[64];
	char note[192];                /* "" unless elsewhere */
};
/* max_age_days > 0: prices captured longer ago are not considered (price_filter). */
int catalog_choose_price(sqlite3 *db, const char *provider, const char *instance_type, const char *market,
			 const char *region, int max_age_days, struct price_choice *out, char *err, size_t errlen);

/* One instance type in one region, on-demand and spot side by side. */
struct price_offer {
	char provider[32], instance_type[96], region[64], gpu_model[64];
	double gpu_count, gpu_memory_gib, memory_gib;  /* NAN unknown */
	long vcpus;                                    /* -1 unknown */
	struct price_side od, spot;
	struct price_zones spot_zones;                 /* spot: the region's zones (lowest and median) */
};
struct price_offers {
	struct price_offer *v;
	size_t n, cap;
};
/* Adds an on-demand or spot row to its offer (1); a reserved row is left out (0). */
int price_offers_add(struct price_offers *o, const struct price_row *r);
/* USD per GPU-hour of a side; NAN when no rate or no GPU count. */
double price_offer_per_gpu(const struct price_offer *f, const struct price_side *s);
enum offer_sort {
	OFFER_SORT_GPU,       /* provider, GPU model, GPU count, instance type, region */
	OFFER_SORT_NAME,      /* instance type, provider, region */
	OFFER_SORT_PRICE,     /* USD per hour (on-demand, else spot), unknown last */
	OFFER_SORT_GPU_PRICE, /* USD per GPU-hour */
};
void price_offers_sort(struct price_offers *o, enum offer_sort by);
void price_offers_free(struct price_offers *o);
/*
 * Keeps each instance type's cheapest region for on-demand and its cheapest for spot (one row
 * when the same region is both), as `sky show-gpus` lists a type once; returns how many region
 * rows it left out.  The order is by name afterwards: sort again as wanted.
 */
size_t price_offers_cheapest_regions(struct price_offers *o);

/* ---- the catalogs shipped inside the binary (pricing/catalog/NAME.csv) ---- */

struct catalog_shipped {
	const char *name;      /* "aws" */
	const char *file;      /* "aws.csv" */
	const char *data;      /* embedded at build time (common/embed.h) */
	const char *end;
	int undated;           /* 1: its captured_at is the day gpuvet copied the rows, the snapshot's own date unknown */
};
extern const struct catalog_shipped catalog_shipped[];
extern const size_t catalog_shipped_count;
/* pricing/catalog/fx.csv: the shipped exchange rates (fx.h) */
extern const struct catalog_shipped catalog_shipped_fx;

/*
 * Loads each shipped catalog, and the shipped exchange rates (a user's rate
 * is kept), that the store does not hold at this version yet (first use,
 * or a newer binary).  force: reload all.  Returns 0 or -1 with err.
 */
int catalog_ensure_shipped(sqlite3 *db, int force, int *loaded, char *err, size_t errlen);
/* 1 when every shipped catalog and the shipped rates are already stored as shipped (a read, nothing written). */
int catalog_shipped_current(sqlite3 *db);

#endif
