/*
 * cmd_prices.c - `gpuvet prices list|update|import|fx|sources`.
 *
 * The catalogs shipped in the binary (pricing/catalog/NAME.csv) are loaded
 * into the store on first use, and again when a newer gpuvet ships other
 * numbers; `prices update --offline` reloads them explicitly.  Fetched and
 * imported prices live beside them under their own source names.
 */
#include "pricing/catalog.h"
#include "common/gpus.h"
#include "pricing/fetch.h"
#include "pricing/fx.h"
#include "results/store.h"
#include "runners/cli.h"
#include "runners/opts.h"
#include "common/util.h"

#include <getopt.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

/* ---- the option tables (runners/opts.h): --help, the man page, docs/options.md ---- */

static const struct gv_opt help_only[] = {
	{ .name = "help", .has_arg = no_argument, .val = 'h', .arg = NULL, .help = "this text" },
	{ .name = NULL },
};

const struct gv_cmd_doc cmd_prices_doc = {
	.name = "prices",
	.synopsis = "prices list|update|import|fx|sources|cheapest [OPTIONS]  ('gpuvet prices SUBCOMMAND --help')",
	.about = "The price catalog.  The list prices shipped with gpuvet are loaded into the\n"
		"store on first use; `update` refreshes them from the providers, `import` adds\n"
		"your own (negotiated) prices, `fx` the exchange rates other currencies need,\n"
		"`sources` says where every price came from and when, `cheapest` where a GPU\n"
		"can be rented for least.",
	.opts = help_only,
	.more = "exit codes: 0 ok, 2 usage, input or fetch error (previous prices kept)",
};

static const struct gv_opt list_opts[] = {
	{ .name = "provider", .has_arg = required_argument, .val = 'p', .arg = "P",
	  .help = "only this provider (aws, lambda, alibaba, custom:NAME, ...)" },
	{ .name = "gpu", .has_arg = required_argument, .val = 'g', .arg = "GPU[:COUNT]",
	  .help = "only this GPU model (H100), and GPU count (H100:8)" },
	{ .name = "market", .has_arg = required_argument, .val = 'm', .arg = "M",
	  .help = "on_demand, spot or reserved (reserved lists the stored rows)" },
	{ .name = "region", .has_arg = required_argument, .val = 'r', .arg = "R", .help = "only this region" },
	{ .name = "sort", .has_arg = required_argument, .val = 's', .arg = "gpu|name|price|gpu-price",
	  .help = "the order (default gpu)" },
	GV_OPT_ROW_MAX_AGE('a'),
	{ .name = "all-regions", .has_arg = no_argument, .val = 'A', .arg = NULL,
	  .help = "every region of each type (default: its cheapest region for on-demand and for spot)" },
	{ .name = "records", .has_arg = no_argument, .val = 'R', .arg = NULL,
	  .help = "the stored rows one by one (reserved terms too)" },
	{ .name = "json", .has_arg = no_argument, .val = 'j', .arg = NULL, .help = "as JSON for scripts (every region)" },
	{ .name = "help", .has_arg = no_argument, .val = 'h', .arg = NULL, .help = "this text" },
	{ .name = NULL },
};

const struct gv_cmd_doc cmd_prices_list_doc = {
	.name = "prices list",
	.synopsis = "prices list [--provider P] [--gpu GPU[:COUNT]] [--market M] [--region R]\n"
		"                          [--sort gpu|name|price|gpu-price] [--max-age DAYS] [--all-regions]\n"
		"                          [--records] [--json]",
	.about = "One row per instance type in its cheapest region for on-demand, and in its\n"
		"cheapest for spot where that is another (--all-regions, --region R: every\n"
		"region's row; --json: every region): GPUs, GPU memory, vCPUs, RAM, on-demand\n"
		"and spot prices side by side in US dollars per hour (a price without a rate\n"
		"stays in its currency, marked *), US dollars per GPU-hour (marked (spot) where\n"
		"the type has no on-demand price) and the date the price was\n"
		"captured; prices captured over 90 days ago are warned about, --max-age leaves\n"
		"older ones out.  --market spot: each region's lowest and median zone.  A price\n"
		"outside its GPU model's plausible band (as `gpuvet rank` flags) is marked !.",
	.opts = list_opts,
	.more = NULL,
};

static const struct gv_opt update_opts[] = {
	{ .name = "provider", .has_arg = required_argument, .val = 'p', .arg = "aws|lambda|alibaba",
	  .help = "refresh only this provider" },
	{ .name = "region", .has_arg = required_argument, .val = 'r', .arg = "R",
	  .help = "aws: the region's price list (default us-east-1)" },
	{ .name = "types", .has_arg = required_argument, .val = 't', .arg = "T,..",
	  .help = "alibaba: these instance types too" },
	{ .name = "offline", .has_arg = no_argument, .val = 'o', .arg = NULL, .help = "reload the shipped catalogs only" },
	{ .name = "help", .has_arg = no_argument, .val = 'h', .arg = NULL, .help = "this text" },
	{ .name = NULL },
};

const struct gv_cmd_doc cmd_prices_update_doc = {
	.name = "prices update",
	.synopsis = "prices update [--provider aws|lambda|alibaba] [--region R] [--types T,..] [--offline]",
	.about = "Refreshes the prices from the providers:\n"
		"  aws      the public bulk price list of the region (default us-east-1), streamed;\n"
		"           spot prices from DescribeSpotPriceHistory when AWS credentials are set\n"
		"  lambda   the instance-types API (LAMBDA_API_KEY)\n"
		"  alibaba  DescribePrice for each Alibaba type in the store and each of --types,\n"
		"           and their preemptible prices per zone (DescribeSpotPriceHistory)\n"
		"           (ALIBABA_CLOUD_ACCESS_KEY_ID/_SECRET; without credentials import a CSV)\n"
		"Without --provider, every provider that can be reached is refreshed (aws always,\n"
		"lambda and alibaba when their credentials are set).  A failed refresh keeps the\n"
		"previous prices.",
	.opts = update_opts,
	.more = NULL,
};

const struct gv_cmd_doc cmd_prices_import_doc = {
	.name = "prices import",
	.synopsis = "prices import FILE",
	.about = "Reads a CSV in gpuvet's format (header names: provider, instance_type, market,\n"
		"price, unit, currency; optional region, zone, gpu_model, gpu_count,\n"
		"gpu_memory_gib, vcpus, memory_gib, term, upfront, source, source_version,\n"
		"captured_at), e.g. negotiated prices; it replaces earlier rows of the same source\n"
		"(default import:FILENAME).",
	.opts = help_only,
	.more = NULL,
};

static const struct gv_opt fx_opts[] = {
	{ .name = "date", .has_arg = required_argument, .val = 'd', .arg = "YYYY-MM-DD",
	  .help = "the date the rate holds for (with a rate)" },
	{ .name = "source", .has_arg = required_argument, .val = 's', .arg = "TEXT",
	  .help = "where the rate comes from (with a rate)" },
	{ .name = "json", .has_arg = no_argument, .val = 'j', .arg = NULL, .help = "the rates as JSON" },
	{ .name = "help", .has_arg = no_argument, .val = 'h', .arg = NULL, .help = "this text" },
	{ .name = NULL },
};

const struct gv_cmd_doc cmd_prices_fx_doc = {
	.name = "prices fx",
	.synopsis = "prices fx [CURRENCY USD_PER_UNIT --date YYYY-MM-DD --source TEXT] [--json]",
	.about = "Lists or stores exchange rates (US dollars per unit, with their date); prices\n"
		"in other currencies are converted with them.  gpuvet ships a dated ECB\n"
		"reference rate for CNY (the Alibaba catalog); a rate you store replaces it.",
	.opts = fx_opts,
	.more = NULL,
};

static const struct gv_opt sources_opts[] = {
	{ .name = "json", .has_arg = no_argument, .val = 'j', .arg = NULL, .help = "as JSON for scripts" },
	{ .name = "help", .has_arg = no_argument, .val = 'h', .arg = NULL, .help = "this text" },
	{ .name = NULL },
};

const struct gv_cmd_doc cmd_prices_sources_doc = {
	.name = "prices sources",
	.synopsis = "prices sources [--json]",
	.about = "Where every stored price came from: the source, its provider, when its prices\n"
		"were captured and loaded, the status of the last refresh and its message\n"
		"(credentials redacted), and how many rows it holds.",
	.opts = sources_opts,
	.more = NULL,
};

static int open_store(const struct gv_global *g, struct store **s)
{
	if (gv_store_open(gv_db_path(g), s) != STORE_OK) {
		gv_err("%s", store_open_error());
		return -1;
	}
	return 0;
}

static int ensure_shipped(struct store *s)
{
	char err[512];
	if (gv_prices_ready(s, err, sizeof err) < 0) {
		gv_err("%s", err);
		return -1;
	}
	return 0;
}

/* ---- list ---- */

static json_t *num_or_null(double v)
{
	return isnan(v) ? json_null() : json_real(v);
}

static json_t *str_or_null(const char *v)
{
	return v && *v ? json_string(v) : json_null();
}

/* A listing for scripts: indented JSON with full precision on stdout. */
static void print_json(const json_t *v)
{
	char *s = json_dumps(v, JSON_INDENT(2) | JSON_REAL_PRECISION(12));
	if (s)
		puts(s);
	free(s);
}

/* A listing: text rows printed as they come, or a JSON array printed at the end. */
struct listing {
	int json, n;
	json_t *arr;
};

/* Ends a listing: the error (exit 2), or the JSON array; empty: said on stderr in text mode. */
static int end_listing(struct listing *l, int rc, const char *err, const char *empty)
{
	if (rc < 0) {
		gv_err("%s", err);
		json_decref(l->arr);
		return GV_EXIT_USAGE;
	}
	if (l->json)
		print_json(l->arr);
	else if (!l->n && empty)
		fprintf(stderr, "gpuvet: %s\n", empty);
	json_decref(l->arr);
	return GV_EXIT_OK;
}

/* ---- --gpu MODEL: a model the reference table or some stored price names ---- */

struct model_seen {
	const struct gpu_want *w;
	int found;
};

static int model_row(void *ud, const struct price_row *r)
{
	struct model_seen *m = ud;
	struct gpu_want any = *m->w;
	any.count = NAN;
	m->found = r->rec.gpu_model[0] && price_gpu_matches(&any, r->rec.gpu_model, NAN);
	return m->found; /* stops the walk at the first */
}

/* 1 when some reference model or stored price matches the wanted model (its count aside); known lists the models. */
static int gpu_model_known(sqlite3 *db, const struct gpu_want *w, char *known, size_t size)
{
	struct gpu_want any = *w;
	struct model_seen m = { .w = w };
	char err[256];
	any.count = NAN;
	known[0] = '\0';
	for (size_t i = 0; i < gpu_refs_count; i++) {
		size_t len = strlen(known);
		snprintf(known + len, size - len, "%s%s", len ? ", " : "", gpu_refs[i].key);
		if (price_gpu_matches(&any, gpu_refs[i].key, NAN))
			m.found = 1;
	}
	if (!m.found)
		catalog_prices(db, &(struct price_filter){ 0 }, PRICE_ORDER_STORED, model_row, &m, err, sizeof err);
	return m.found;
}

/* ---- list: offers (on-demand and spot side by side) or --records ---- */

struct list_ctx {
	struct listing lo;
	int records, have_gpu, max_age;
	struct gpu_want gpu;
	time_t now;
	struct price_offers offers;
	struct stale { char provider[32], source[128], captured_at[32]; long age; } *stale;
	size_t nstale;
	char no_rate[64];   /* currencies shown without a rate, "CNY XYZ" */
	char converted[64]; /* currencies shown converted through a stored rate */
	int spot_layout;    /* --market spot: the zones of each region, lowest and median */
	const struct price_zone *median; /* the offer being shown: its median spot zone, NULL none */
	size_t zones;       /* and how many zones its spot price has */
	int spot_records;   /* --records listed a spot row */
	struct price_band_set bands;   /* each market's plausible band per GPU model, loaded once (catalog_band.c) */
	int band_failed;    /* the bands could not be read: the listing ends with band_err */
	char band_err[256];
};

/* Is usd_per_gpu_hour outside the plausible band of model in market (h)?  A read error ends the listing. */
static int outside_band(struct list_ctx *c, const char *market, const char *model, double usd_per_gpu_hour,
			struct price_band_hit *h)
{
	int r = price_band_set_check(&c->bands, market, model, usd_per_gpu_hour, h, c->band_err, sizeof c->band_err);
	c->band_failed |= r < 0;
	return r > 0;
}

static int side_outside(struct list_ctx *c, const struct price_offer *f, const struct price_side *s,
			struct price_band_hit *h)
{
	return outside_band(c, s == &f->spot ? "spot" : "on_demand", f->gpu_model, price_offer_per_gpu(f, s), h);
}

/* Remembers a shown price's source when it is older than PRICE_STALE_DAYS (its oldest date). */
static long note_age(struct list_ctx *c, const char *provider, const char *source, const char *captured_at)
{
	long age = price_source_age_days(source, captured_at, c->now);   /* a copy date is no age: -1 */
	if (age < 0 || age <= c->max_age)
		return age;
	for (size_t i = 0; i < c->nstale; i++)
		if (!strcmp(c->stale[i].source, source)) {
			if (age > c->stale[i].age) {
				c->stale[i].age = age;
				gv_strlcpy(c->stale[i].captured_at, captured_at, sizeof c->stale[i].captured_at);
			}
			return age;
		}
	c->stale = gv_realloc(c->stale, (c->nstale + 1) * sizeof *c->stale);
	struct stale *st = &c->stale[c->nstale++];
	gv_strlcpy(st->source, source, sizeof st->source);
	gv_strlcpy(st->captured_at, captured_at, sizeof st->captured_at);
	st->age = age;
	gv_strlcpy(st->provider, provider, sizeof st->provider);
	return age;
}

static void note_currency(char *set, size_t size, const char *currency)
{
	size_t len = strlen(set);
	if (!strstr(set, currency) && len + 5 < size)
		snprintf(set + len, size - len, "%s%s", len ? " " : "", currency);
}

static void note_no_rate(struct list_ctx *c, const char *currency)
{
	note_currency(c->no_rate, sizeof c->no_rate, currency);
}

static int record_row(struct list_ctx *c, const struct price_row *row)
{
	const struct price_rec *r = &row->rec;
	long age = note_age(c, r->provider, r->source, r->captured_at);
	struct price_band_hit band;
	int outside = outside_band(c, r->market, r->gpu_model, row->usd_per_hour / r->gpu_count, &band);
	c->spot_records |= !strcmp(r->market, "spot");
	if (isnan(row->usd_per_hour))
		note_no_rate(c, r->currency);
	if (c->lo.json) {
		json_t *o = json_object();
		json_object_set_new(o, "provider", json_string(r->provider));
		json_object_set_new(o, "instance_type", json_string(r->instance_type));
		json_object_set_new(o, "region", json_string(r->region));
		json_object_set_new(o, "zone", json_string(r->zone));
		json_object_set_new(o, "gpu_model", str_or_null(r->gpu_model));
		json_object_set_new(o, "gpu_count", num_or_null(r->gpu_count));
		json_object_set_new(o, "gpu_memory_gib", num_or_null(r->gpu_memory_gib));
		json_object_set_new(o, "vcpus", r->vcpus < 0 ? json_null() : json_integer(r->vcpus));
		json_object_set_new(o, "memory_gib", num_or_null(r->memory_gib));
		json_object_set_new(o, "market", json_string(r->market));
		json_object_set_new(o, "interruptible", json_boolean(!strcmp(r->market, "spot")));
		json_object_set_new(o, "term", json_string(r->term));
		json_object_set_new(o, "upfront", num_or_null(r->upfront));
		json_object_set_new(o, "price", json_real(r->price));
		json_object_set_new(o, "unit", json_string(r->unit));
		json_object_set_new(o, "price_per_hour", json_real(row->hourly));
		json_object_set_new(o, "currency", json_string(r->currency));
		json_object_set_new(o, "usd_per_hour", num_or_null(row->usd_per_hour));
		json_object_set_new(o, "outside_band", gv_band_json(&band, outside));
		json_object_set_new(o, "source", json_string(r->source));
		json_object_set_new(o, "source_version", str_or_null(r->source_version));
		json_object_set_new(o, "captured_at", json_string(r->captured_at));
		json_object_set_new(o, "age_days", age < 0 ? json_null() : json_integer(age));
		json_array_append_new(c->lo.arr, o);
	} else {
		char gpus[40] = "-", captured[11], *g = NULL;
		if (!isnan(r->gpu_count))
			g = gv_asprintf("%gx %s", r->gpu_count, r->gpu_model);
		else if (r->gpu_model[0])
			g = gv_strdup(r->gpu_model);
		if (g)
			gv_strlcpy(gpus, g, sizeof gpus);
		free(g);
		gv_strlcpy(captured, r->captured_at, sizeof captured);
		printf("%-9s %-24s %-15s %-16s %-9s %11.4f%c %-4s %-11s %s\n", r->provider, r->instance_type,
		       r->zone[0] ? r->zone : r->region[0] ? r->region : "(any)", gpus, r->market, row->hourly,
		       outside ? '!' : ' ', r->currency, captured, r->source);
	}
	return c->band_failed;   /* a read error stops the walk */
}

static int list_row(void *ud, const struct price_row *row)
{
	struct list_ctx *c = ud;
	if (!c->records) { /* filtered as offers: a spot row may not repeat the GPU its type has */
		price_offers_add(&c->offers, row);
		return 0;
	}
	if (c->have_gpu && !price_gpu_matches(&c->gpu, row->rec.gpu_model, row->rec.gpu_count))
		return 0;
	c->lo.n++;
	return record_row(c, row);
}

static json_t *side_json(struct list_ctx *c, const struct price_offer *f, const struct price_side *s)
{
	if (!s->have)
		return json_null();
	long age = price_source_age_days(s->source, s->captured_at, c->now);
	json_t *o = json_object();
	json_object_set_new(o, "price_per_hour", json_real(s->hourly));
	json_object_set_new(o, "currency", json_string(s->currency));
	json_object_set_new(o, "usd_per_hour", num_or_null(s->usd_per_hour));
	json_object_set_new(o, "usd_per_gpu_hour", num_or_null(price_offer_per_gpu(f, s)));
	struct price_band_hit band;
	int outside = side_outside(c, f, s, &band);
	json_object_set_new(o, "outside_band", gv_band_json(&band, outside));
	if (strcmp(s->currency, "USD"))
		json_object_set_new(o, "fx", isnan(s->usd_per_unit) ? json_null() :
			json_pack("{s:f,s:s}", "usd_per_unit", s->usd_per_unit, "captured_at", s->fx_captured_at));
	json_object_set_new(o, "no_usd", isnan(s->usd_per_hour) ?
		json_sprintf("no %s rate stored (gpuvet prices fx %s RATE --date D --source S)", s->currency,
			     s->currency) : json_null());
	json_object_set_new(o, "zone", str_or_null(s->zone));
	if (s == &f->spot) { /* the region's lowest zone; a spot instance may be reclaimed */
		json_object_set_new(o, "interruptible", json_true());
		json_object_set_new(o, "zones", json_integer((json_int_t)c->zones));
		json_object_set_new(o, "median_usd_per_hour", c->median ? num_or_null(c->median->usd) : json_null());
		json_object_set_new(o, "median_zone", c->median ? str_or_null(c->median->zone) : json_null());
	} else {
		json_object_set_new(o, "interruptible", json_false());
	}
	json_object_set_new(o, "source", json_string(s->source));
	json_object_set_new(o, "captured_at", json_string(s->captured_at));
	json_object_set_new(o, "age_days", age < 0 ? json_null() : json_integer(age));
	json_object_set_new(o, "stale", json_boolean(age > c->max_age));
	return o;
}

/* A price cell: USD with 4 decimals, the native currency marked '*' without a rate, '-' none; returns the
 * mark of the column beside it, '!' for a price outside its model's plausible band, else ' '. */
static char price_cell(struct list_ctx *c, const struct price_offer *f, const struct price_side *s, char *buf,
		       size_t size)
{
	struct price_band_hit band;
	if (!s->have)
		snprintf(buf, size, "-");
	else if (isnan(s->usd_per_hour)) {
		snprintf(buf, size, "%.4f %s*", s->hourly, s->currency);
		note_no_rate(c, s->currency);
	} else {
		snprintf(buf, size, "%.4f", s->usd_per_hour);
		if (strcmp(s->currency, "USD"))
			note_currency(c->converted, sizeof c->converted, s->currency);
	}
	return side_outside(c, f, s, &band) ? '!' : ' ';
}

static void offer_text(struct list_ctx *c, const struct price_offer *f)
{
	char gpus[96] = "-", mem[40] = "-", vcpu[24] = "-", ram[40] = "-", od[48], spot[48], pg[40] = "-";
	if (!isnan(f->gpu_count))
		snprintf(gpus, sizeof gpus, "%gx %s", f->gpu_count, f->gpu_model[0] ? f->gpu_model : "?");
	else if (f->gpu_model[0])
		snprintf(gpus, sizeof gpus, "%s", f->gpu_model);
	if (!isnan(f->gpu_memory_gib))
		snprintf(mem, sizeof mem, "%g GiB", f->gpu_memory_gib);
	if (f->vcpus >= 0)
		snprintf(vcpu, sizeof vcpu, "%ld", f->vcpus);
	if (!isnan(f->memory_gib))
		snprintf(ram, sizeof ram, "%g GiB", f->memory_gib);
	char od_mark = price_cell(c, f, &f->od, od, sizeof od), spot_mark = price_cell(c, f, &f->spot, spot, sizeof spot);
	double per_gpu = price_offer_per_gpu(f, f->od.have ? &f->od : &f->spot);
	if (!isnan(per_gpu))   /* a spot price where there is no on-demand one says so */
		snprintf(pg, sizeof pg, "%.4f%s", per_gpu, f->od.have ? "" : " (spot)");
	const struct price_side *when = f->od.have ? &f->od : &f->spot;
	char captured[11];
	gv_strlcpy(captured, when->captured_at, sizeof captured);
	printf("%-8s %-26s %-15s %-17s %8s %5s %9s %14s%c %14s%c %16s  %s\n", f->provider, f->instance_type,
	       f->region[0] ? f->region : "(any)", gpus, mem, vcpu, ram, od, od_mark, spot, spot_mark, pg, captured);
}

/* --market spot: a row per region with its lowest and its median zone (spot is interruptible) */
static void spot_text(struct list_ctx *c, const struct price_offer *f)
{
	char gpus[96] = "-", low[48], med[48] = "-", pg[40] = "-", captured[11];
	if (!isnan(f->gpu_count))
		snprintf(gpus, sizeof gpus, "%gx %s", f->gpu_count, f->gpu_model[0] ? f->gpu_model : "?");
	char mark = price_cell(c, f, &f->spot, low, sizeof low);
	if (c->median && !isnan(c->median->usd))
		snprintf(med, sizeof med, "%.4f", c->median->usd);
	double per_gpu = price_offer_per_gpu(f, &f->spot);
	if (!isnan(per_gpu))
		snprintf(pg, sizeof pg, "%.4f", per_gpu);
	gv_strlcpy(captured, f->spot.captured_at, sizeof captured);
	printf("%-8s %-20s %-15s %-15s %11s%c %-14s %12s %-14s %5zu %9s  %s\n", f->provider, f->instance_type,
	       f->region[0] ? f->region : "(any)", gpus, low, mark, f->spot.zone[0] ? f->spot.zone : "-", med,
	       c->median && c->median->zone[0] ? c->median->zone : "-", c->zones, pg, captured);
}

static void offer_json(struct list_ctx *c, const struct price_offer *f)
{
	json_t *o = json_object();
	json_object_set_new(o, "provider", json_string(f->provider));
	json_object_set_new(o, "instance_type", json_string(f->instance_type));
	json_object_set_new(o, "region", json_string(f->region));
	json_object_set_new(o, "gpu_model", str_or_null(f->gpu_model));
	json_object_set_new(o, "gpu_count", num_or_null(f->gpu_count));
	json_object_set_new(o, "gpu_memory_gib", num_or_null(f->gpu_memory_gib));
	json_object_set_new(o, "vcpus", f->vcpus < 0 ? json_null() : json_integer(f->vcpus));
	json_object_set_new(o, "memory_gib", num_or_null(f->memory_gib));
	json_object_set_new(o, "usd_per_gpu_hour", num_or_null(price_offer_per_gpu(f, f->od.have ? &f->od : &f->spot)));
	json_object_set_new(o, "on_demand", side_json(c, f, &f->od));
	json_object_set_new(o, "spot", side_json(c, f, &f->spot));
	json_array_append_new(c->lo.arr, o);
}

/* After the listing, on stderr: stale sources, currencies without a rate, rates used, no spot. */
static void list_notes(struct list_ctx *c, sqlite3 *db, int any_spot, const char *market)
{
	for (size_t i = 0; i < c->nstale; i++)
		fprintf(stderr, "gpuvet: warning: %s prices (%s) were captured on %.10s, %ld days ago (older than %d"
			" days): they may have changed; refresh with `gpuvet prices update`, import newer ones, or leave"
			" them out with --max-age DAYS\n", c->stale[i].provider, c->stale[i].source,
			c->stale[i].captured_at, c->stale[i].age, c->max_age);
	if (!c->lo.json)
		gv_band_lines(&c->bands);
	if (c->no_rate[0])
		fprintf(stderr, "gpuvet: no USD rate stored for %s: those prices are shown in their currency"
			" (marked *); store one with `gpuvet prices fx CUR RATE --date D --source S`\n", c->no_rate);
	if (!c->records && !any_spot && c->lo.n && (!market || !strcmp(market, "spot")))
		fprintf(stderr, "gpuvet: no spot price among these: gpuvet ships AWS's per zone (lambda sells none);"
			" `gpuvet prices update --provider aws` with AWS credentials fetches current ones,"
			" `gpuvet prices import FILE` adds others\n");
	if (c->records && c->spot_records && !c->lo.json)
		fprintf(stderr, "gpuvet: spot prices are interruptible (the provider may reclaim the instance at short"
			" notice)\n");
	if (!c->records && any_spot && !c->lo.json)
		fprintf(stderr, "gpuvet: spot prices are interruptible (the provider may reclaim the instance at short"
			" notice); %s\n", c->spot_layout ? "LOWEST is the region's cheapest zone, MEDIAN its middle one" :
			"SPOT $/h is the region's cheapest zone (--market spot lists the median zone too)");
	char cur[4], date[32];
	for (const char *p = c->converted; strlen(p) >= 3; p += p[3] ? 4 : 3) {
		double rate;
		gv_strlcpy(cur, p, sizeof cur);
		if (fx_usd_per_unit(db, cur, &rate, date, sizeof date) == 0)
			fprintf(stderr, "gpuvet: %s prices converted to USD at %.7g USD per %s of %s (`gpuvet prices fx`"
				" lists the rate's source)\n", cur, rate, cur, date);
	}
}

static int list_usage(const char *fmt, const char *arg)
{
	return gv_usage_error("prices list", fmt, arg);
}

static int list_offers(struct list_ctx *c, const char *sort)
{
	enum offer_sort by = OFFER_SORT_GPU;
	if (sort && !strcmp(sort, "name"))
		by = OFFER_SORT_NAME;
	else if (sort && !strcmp(sort, "price"))
		by = OFFER_SORT_PRICE;
	else if (sort && !strcmp(sort, "gpu-price"))
		by = OFFER_SORT_GPU_PRICE;
	price_offers_sort(&c->offers, by);
	int any_spot = 0;
	if (!c->lo.json && c->spot_layout)
		printf("%-8s %-20s %-15s %-15s %12s %-14s %12s %-14s %5s %9s  %s\n", "PROVIDER", "INSTANCE TYPE",
		       "REGION", "GPUS", "LOWEST $/h", "LOWEST ZONE", "MEDIAN $/h", "MEDIAN ZONE", "ZONES", "$/GPU-h",
		       "CAPTURED");
	else if (!c->lo.json)
		printf("%-8s %-26s %-15s %-17s %8s %5s %9s %15s %15s %16s  %s\n", "PROVIDER", "INSTANCE TYPE",
		       "REGION", "GPUS", "GPU MEM", "VCPU", "RAM", "ON-DEMAND $/h", "SPOT $/h", "$/GPU-h",
		       "CAPTURED");
	for (size_t i = 0; i < c->offers.n; i++) {
		struct price_offer *f = &c->offers.v[i];
		if (c->have_gpu && !price_gpu_matches(&c->gpu, f->gpu_model, f->gpu_count))
			continue;
		c->lo.n++;
		c->median = f->spot.have ? price_zones_median(&f->spot_zones) : NULL;
		c->zones = f->spot.have ? f->spot_zones.n : 0;
		any_spot |= f->spot.have;
		if (f->od.have)
			note_age(c, f->provider, f->od.source, f->od.captured_at);
		if (f->spot.have)
			note_age(c, f->provider, f->spot.source, f->spot.captured_at);
		if (c->lo.json)
			offer_json(c, f);
		else if (c->spot_layout)
			spot_text(c, f);
		else
			offer_text(c, f);
	}
	return any_spot;
}

static int cmd_list(int argc, char **argv, struct store *s)
{
	sqlite3 *db = store_db(s);
	struct option opts[16];
	gv_opts_getopt(list_opts, opts, 16);
	const char *provider = NULL, *gpu = NULL, *market = NULL, *region = NULL, *sort = NULL;
	struct list_ctx c = { .max_age = PRICE_STALE_DAYS, .now = time(NULL) };
	int opt, all_regions = 0;
	int max_age = 0;
	char err[512], known[256];
	optind = 1;
	while ((opt = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (opt) {
		case 'p': provider = optarg; break;
		case 'g': gpu = optarg; break;
		case 'm': market = optarg; break;
		case 'r': region = optarg; break;
		case 's': sort = optarg; break;
		case 'R': c.records = 1; break;
		case 'A': all_regions = 1; break;
		case 'j': c.lo.json = 1; break;
		case 'a':
			if (gv_opt_max_age("prices list", optarg, &max_age))
				return GV_EXIT_USAGE;
			break;
		case 'h': gv_cmd_help(&cmd_prices_list_doc, stdout); return GV_EXIT_OK;
		default: return list_usage("unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind < argc)
		return list_usage("unexpected argument '%s'", argv[optind]);
	if (market && strcmp(market, "on_demand") && strcmp(market, "spot") && strcmp(market, "reserved"))
		return list_usage("market must be on_demand, spot or reserved, not '%s'", market);
	if (sort && strcmp(sort, "gpu") && strcmp(sort, "name") && strcmp(sort, "price") && strcmp(sort, "gpu-price"))
		return list_usage("sort must be gpu, name, price or gpu-price, not '%s'", sort);
	if (gpu && price_gpu_want_parse(gpu, &c.gpu, err, sizeof err) < 0)
		return list_usage("%s", err);
	c.have_gpu = gpu != NULL;
	c.spot_layout = market && !strcmp(market, "spot");
	if (market && !strcmp(market, "reserved"))
		c.records = 1; /* reserved terms have no on-demand/spot pair: listed as stored */
	if (ensure_shipped(s) < 0)
		return GV_EXIT_USAGE;
	int known_rc = provider ? catalog_provider_known(db, provider, known, sizeof known) : 1;
	if (known_rc == 0)
		return gv_usage_error("prices list", "unknown provider '%s' (known: %s)", provider, known);
	if (gpu && !gpu_model_known(db, &c.gpu, known, sizeof known))
		return gv_usage_error("prices list", "unknown GPU model '%s' (known: %s)", c.gpu.model, known);

	struct price_filter f = { .provider = provider, .market = market, .region = region,
				  .max_age_days = max_age };
	c.bands = (struct price_band_set){ .db = db, .max_age_days = max_age };   /* over the prices it may list */
	c.lo.arr = json_array();
	if (!c.lo.json && c.records)
		printf("%-9s %-24s %-15s %-16s %-9s %12s %-4s %-11s %s\n", "PROVIDER", "INSTANCE TYPE", "REGION/ZONE",
		       "GPUS", "MARKET", "PRICE/HOUR", "CUR", "CAPTURED", "SOURCE");
	int rc = catalog_prices(db, &f, c.records ? PRICE_ORDER_LIST : PRICE_ORDER_STORED, list_row, &c, err,
				sizeof err);
	size_t left = 0;   /* a person's screen: each type once, in its cheapest regions (sky show-gpus) */
	if (rc == 0 && !c.records && !c.lo.json && !region && !all_regions)
		left = price_offers_cheapest_regions(&c.offers);
	int any_spot = rc == 0 && !c.records ? list_offers(&c, sort) : 0;
	if (c.band_failed) {
		rc = -1;
		gv_strlcpy(err, c.band_err, sizeof err);
	}
	if (left && !gv_quiet)
		fprintf(stderr, "gpuvet: each instance type in its cheapest region for on-demand and for spot; %zu other "
			"region row(s) not listed (--all-regions lists every one, --region R one region's)\n", left);
	rc = end_listing(&c.lo, rc, err, "no prices match");
	if (rc == GV_EXIT_OK)
		list_notes(&c, db, any_spot, market);
	price_offers_free(&c.offers);
	price_band_set_free(&c.bands);
	free(c.stale);
	return rc;
}

/* ---- update ---- */

static int env_set(const char *name)
{
	const char *v = getenv(name);
	return v && *v;
}

static int cmd_update(int argc, char **argv, struct store *s)
{
	sqlite3 *db = store_db(s);
	struct option opts[8];
	gv_opts_getopt(update_opts, opts, 8);
	const char *provider = NULL, *region = NULL, *types = NULL;
	int offline = 0, c, failed = 0;
	char err[1024];
	optind = 1;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'p': provider = optarg; break;
		case 'r': region = optarg; break;
		case 'o': offline = 1; break;
		case 't': types = optarg; break;
		case 'h': gv_cmd_help(&cmd_prices_update_doc, stdout); return GV_EXIT_OK;
		default: return gv_opt_refused("prices update", argc, argv, opts);
		}
	}
	if (optind < argc)
		return gv_usage_error("prices update", "unexpected argument '%s'", argv[optind]);
	if (provider && strcmp(provider, "aws") && strcmp(provider, "lambda") && strcmp(provider, "alibaba"))
		return gv_usage_error("prices update", "provider must be aws, lambda or alibaba, not '%s'", provider);
	if (offline) {
		int loaded = 0;
		if (catalog_ensure_shipped(db, 1, &loaded, err, sizeof err) < 0) {
			gv_err("%s", err);
			return GV_EXIT_USAGE;
		}
		if (!gv_quiet)
			printf("loaded %d shipped catalogs\n", loaded);
		return GV_EXIT_OK;
	}
	if (ensure_shipped(s) < 0)
		return GV_EXIT_USAGE;
	int all = !provider;
	long rows = 0;
	if (all || !strcmp(provider, "aws")) {
		if (fetch_aws(db, region, &rows, err, sizeof err) < 0) {
			gv_err("aws: %s", err);
			failed = 1;
		} else if (!gv_quiet) {
			printf("aws: %ld prices from the bulk price list of %s\n", rows, region ? region : "us-east-1");
		}
		if (env_set("AWS_ACCESS_KEY_ID") && env_set("AWS_SECRET_ACCESS_KEY")) {
			if (fetch_aws_spot(db, region, &rows, err, sizeof err) < 0) {
				gv_err("aws spot: %s", err);
				failed = 1;
			} else if (!gv_quiet) {
				printf("aws spot: %ld prices (type and zone) from DescribeSpotPriceHistory\n", rows);
			}
		} else if (!gv_quiet) {
			printf("aws spot: skipped (no AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY)\n");
		}
	}
	if (!all || env_set("LAMBDA_API_KEY")) {
		if (all || !strcmp(provider, "lambda")) {
			if (fetch_lambda(db, &rows, err, sizeof err) < 0) {
				gv_err("lambda: %s", err);
				failed = 1;
			} else if (!gv_quiet) {
				printf("lambda: %ld prices from the instance-types api\n", rows);
			}
		}
	} else if (!gv_quiet) {
		printf("lambda: skipped (no LAMBDA_API_KEY)\n");
	}
	if (!all || (env_set("ALIBABA_CLOUD_ACCESS_KEY_ID") && env_set("ALIBABA_CLOUD_ACCESS_KEY_SECRET"))) {
		if (all || !strcmp(provider, "alibaba")) {
			if (fetch_alibaba(db, region, types, &rows, err, sizeof err) < 0) {
				gv_err("alibaba: %s", err);
				failed = 1;
			} else {
				if (!gv_quiet)
					printf("alibaba: %ld prices from DescribePrice\n", rows);
				/* spot once on-demand answered: a credential or network error is said once */
				if (fetch_alibaba_spot(db, region, types, &rows, err, sizeof err) < 0) {
					gv_err("alibaba spot: %s", err);
					failed = 1;
				} else if (!gv_quiet) {
					printf("alibaba spot: %ld prices (type and zone) from DescribeSpotPriceHistory\n",
					       rows);
				}
			}
		}
	} else if (!gv_quiet) {
		printf("alibaba: skipped (no ALIBABA_CLOUD_ACCESS_KEY_ID/_SECRET; import a CSV instead)\n");
	}
	return failed ? GV_EXIT_USAGE : GV_EXIT_OK;
}

/* ---- import ---- */

static int cmd_import(int argc, char **argv, struct store *s)
{
	sqlite3 *db = store_db(s);
	char err[1024];
	long rows = 0;
	if (argc != 2)
		return gv_usage_error("prices import", "expects one FILE");
	/* shipped catalogs first, so a later first-use load cannot shadow the import */
	if (ensure_shipped(s) < 0)
		return GV_EXIT_USAGE;
	if (catalog_import_file(db, argv[1], NULL, &rows, err, sizeof err) < 0) {
		gv_err("%s", err);
		return GV_EXIT_USAGE;
	}
	if (!gv_quiet)
		printf("imported %ld prices from '%s'\n", rows, argv[1]);
	return GV_EXIT_OK;
}

/* ---- fx ---- */

static int fx_row(void *ud, const char *currency, double usd_per_unit, const char *captured_at, const char *source)
{
	struct listing *fo = ud;
	if (fo->json)
		json_array_append_new(fo->arr, json_pack("{s:s,s:f,s:s,s:s}", "currency", currency, "usd_per_unit",
							 usd_per_unit, "captured_at", captured_at, "source", source));
	else
		printf("%-4s %14.6f  %-20s %s\n", currency, usd_per_unit, captured_at, source);
	return 0;
}

static int cmd_fx(int argc, char **argv, struct store *s)
{
	sqlite3 *db = store_db(s);
	struct option opts[8];
	gv_opts_getopt(fx_opts, opts, 8);
	const char *date = NULL, *source = NULL;
	int json = 0, c;
	char err[256];
	optind = 1;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'd': date = optarg; break;
		case 's': source = optarg; break;
		case 'j': json = 1; break;
		case 'h': gv_cmd_help(&cmd_prices_fx_doc, stdout); return GV_EXIT_OK;
		default: return gv_opt_refused("prices fx", argc, argv, opts);
		}
	}
	int rest = argc - optind;
	if (rest == 2) {
		double rate;
		if (gv_parse_double(argv[optind + 1], &rate) < 0)
			return gv_usage_error("prices fx", "rate '%s' is not a number", argv[optind + 1]);
		if (!date || !source)
			return gv_usage_error("prices fx", "a rate needs --date and --source (where it comes from)");
		char why[160];
		if (price_date_check(date, PRICE_DATE_ONLY | PRICE_DATE_NOW, why, sizeof why))
			return gv_usage_error("prices fx", "--date %s", why);
		if (fx_set(db, argv[optind], rate, date, source, err, sizeof err) < 0) {
			gv_err("%s", err);
			return GV_EXIT_USAGE;
		}
		return GV_EXIT_OK;
	}
	if (rest != 0)
		return gv_usage_error("prices fx", "expects CURRENCY USD_PER_UNIT, or nothing to list");
	if (ensure_shipped(s) < 0) /* the shipped rates are listed too */
		return GV_EXIT_USAGE;
	struct listing fo = { .json = json, .arr = json_array() };
	if (!json)
		printf("%-4s %14s  %-20s %s\n", "CUR", "USD PER UNIT", "CAPTURED", "SOURCE");
	return end_listing(&fo, fx_each(db, fx_row, &fo, err, sizeof err), err, NULL);
}

/* ---- sources ---- */

static const char *or_empty(const char *s)
{
	return s ? s : "";
}

static int source_row(void *ud, const struct price_source *ps)
{
	struct listing *so = ud;
	if (so->json) {
		json_t *o = json_object();
		json_object_set_new(o, "source", json_string(or_empty(ps->source)));
		json_object_set_new(o, "provider", json_string(or_empty(ps->provider)));
		json_object_set_new(o, "fetched_at", json_string(or_empty(ps->fetched_at)));
		json_object_set_new(o, "captured_at", ps->captured_at ? json_string(ps->captured_at) : json_null());
		/* false: captured_at is the day an undated snapshot was copied (pricing/catalog/README.md) */
		json_object_set_new(o, "source_date_known", json_boolean(price_source_dated(ps->source)));
		json_object_set_new(o, "status", json_string(or_empty(ps->status)));
		json_object_set_new(o, "message", json_string(or_empty(ps->message)));
		json_object_set_new(o, "rows", json_integer(ps->rows));
		json_array_append_new(so->arr, o);
	} else {
		char when[96];
		printf("%-18s %-8s %-38s %-20s %-7s %7ld  %s\n", or_empty(ps->source), or_empty(ps->provider),
		       price_date_words(ps->source, ps->captured_at, when, sizeof when), or_empty(ps->fetched_at),
		       or_empty(ps->status), ps->rows, or_empty(ps->message));
	}
	return 0;
}

static int cmd_sources(int argc, char **argv, struct store *s)
{
	sqlite3 *db = store_db(s);
	int json = argc > 1 && !strcmp(argv[1], "--json");
	if (argc > 1 + json)
		return gv_usage_error("prices sources", "unexpected argument '%s'", argv[1 + json]);
	if (ensure_shipped(s) < 0)
		return GV_EXIT_USAGE;
	struct listing so = { .json = json, .arr = json_array() };
	char err[512];
	if (!json)
		printf("%-18s %-8s %-38s %-20s %-7s %7s  %s\n", "SOURCE", "PROVIDER", "PRICES' DATE", "LOADED", "STATUS",
		       "ROWS", "MESSAGE");
	return end_listing(&so, catalog_sources(db, source_row, &so, err, sizeof err), err, NULL);
}

/* The subcommands: a row each, with the table that documents it. */
static const struct {
	const char *name;
	int (*fn)(int, char **, struct store *);
	const struct gv_cmd_doc *doc;
} subs[] = {
	{ "list", cmd_list, &cmd_prices_list_doc },       { "update", cmd_update, &cmd_prices_update_doc },
	{ "import", cmd_import, &cmd_prices_import_doc }, { "fx", cmd_fx, &cmd_prices_fx_doc },
	{ "sources", cmd_sources, &cmd_prices_sources_doc },
	{ "cheapest", cmd_prices_cheapest, &cmd_prices_cheapest_doc },
};

int cmd_prices(int argc, char **argv, const struct gv_global *g)
{
	if (argc < 2) {
		gv_cmd_help(&cmd_prices_doc, stderr);
		return GV_EXIT_USAGE;
	}
	const char *sub = argv[1];
	if (!strcmp(sub, "--help") || !strcmp(sub, "-h") || !strcmp(sub, "help")) {
		gv_cmd_help(&cmd_prices_doc, stdout);
		return GV_EXIT_OK;
	}
	size_t k = 0;
	while (k < sizeof subs / sizeof subs[0] && strcmp(subs[k].name, sub))
		k++;
	if (k == sizeof subs / sizeof subs[0])
		return gv_usage_error("prices", "unknown subcommand '%s' (list, update, import, fx, sources, cheapest)", sub);
	for (int i = 2; i < argc; i++)
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			gv_cmd_help(subs[k].doc, stdout);
			return GV_EXIT_OK;
		}
	struct store *s;
	int reads = !strcmp(sub, "list") || !strcmp(sub, "sources") || !strcmp(sub, "cheapest");
	if (reads ? gv_open_reading(g, GV_READ_PRICED, &s) != 0 : open_store(g, &s) < 0)
		return GV_EXIT_USAGE;
	int rc = subs[k].fn(argc - 1, argv + 1, s);
	store_close(s);
	return rc;
}
