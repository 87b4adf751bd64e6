/*
 * cmd_prices_cheapest.c - `gpuvet prices cheapest --gpu MODEL [--count N]
 * [--market on_demand|spot]`: where a GPU can be rented for least.
 *
 * One row per provider, instance type and region that has the GPU (and
 * exactly N of them with --count), priced per GPU-hour in US dollars (spot:
 * the region's lowest zone, interruptible), cheapest first, with the GPU's
 * GEMM throughput beside it: what `gpuvet rank` values the type at (the
 * median of its stored runs, else the measured or reference estimate of the
 * model: judge/rank.c), per dollar of that row's price.  A price outside its
 * GPU model's plausible band in the market (pricing/catalog_band.c) is marked
 * '!' ("outside_band" in the JSON) and its band said once under the table.
 */
#include "pricing/catalog.h"
#include "common/gpus.h"
#include "judge/rank.h"
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

#define CHEAPEST_METRIC "gemm.bf16.tflops"

static const struct gv_opt cheapest_opts[] = {
	{ .name = "gpu", .has_arg = required_argument, .val = 'g', .arg = "GPU", .help = "the GPU (H100, A100, L4...): --model is the LLM of gpuvet cost" },
	{ .name = "count", .has_arg = required_argument, .val = 'c', .arg = "N",
	  .help = "only instance types with exactly N of them" },
	{ .name = "market", .has_arg = required_argument, .val = 'm', .arg = "M",
	  .help = "on_demand (default) or spot (interruptible)" },
	{ .name = "provider", .has_arg = required_argument, .val = 'p', .arg = "P", .help = "only this provider" },
	{ .name = "region", .has_arg = required_argument, .val = 'r', .arg = "R", .help = "only this region" },
	{ .name = "limit", .has_arg = required_argument, .val = 'l', .arg = "N", .help = "at most N rows (default 20)" },
	{ .name = "max-age", .has_arg = required_argument, .val = 'a', .arg = "DAYS",
	  .help = "leave out prices captured longer ago" },
	{ .name = "json", .has_arg = no_argument, .val = 'j', .arg = NULL, .help = "as JSON for scripts" },
	{ .name = "help", .has_arg = no_argument, .val = 'h', .arg = NULL, .help = "this text" },
	{ .name = NULL },
};

const struct gv_cmd_doc cmd_prices_cheapest_doc = {
	.name = "prices cheapest",
	.synopsis = "prices cheapest --gpu GPU [--count N] [--market on_demand|spot] [--provider P]\n"
		"                          [--region R] [--limit N] [--max-age DAYS] [--json]",
	.about = "Where a GPU can be rented for least: one row per provider, instance type and\n"
		"region, cheapest US dollars per GPU-hour first (spot: the region's lowest zone,\n"
		"interruptible), with BF16 GEMM TFLOP/s per GPU as `gpuvet rank` values the type\n"
		"(measured, else estimated from the model's runs or its reference) per dollar.\n"
		"A price outside its GPU model's plausible band (as `rank` flags) is marked !.",
	.opts = cheapest_opts,
	.more = NULL,
};

struct cheapest {
	struct price_offers offers;
	struct gpu_want gpu;
	const char *market;
	struct price_band_set bands;   /* the market's plausible band per GPU model, loaded once */
};

static int take_offer(void *ud, const struct price_row *r)
{
	price_offers_add(&((struct cheapest *)ud)->offers, r);
	return 0;
}

/* The per-GPU GEMM value rank gives the type (its first row: measured before estimates), or NAN. */
static double rank_value(json_t *rank, const struct price_offer *f, const char **basis)
{
	size_t i;
	json_t *row;
	json_array_foreach(json_object_get(rank, "rows"), i, row) {
		const char *p = json_string_value(json_object_get(row, "provider"));
		const char *t = json_string_value(json_object_get(row, "instance_type"));
		if (!p || !t || strcmp(p, f->provider) || strcmp(t, f->instance_type))
			continue;
		*basis = json_is_true(json_object_get(row, "estimate")) ?
			json_string_value(json_object_get(row, "estimate_basis")) : "measured";
		return json_number_value(json_object_get(row, "value"));
	}
	*basis = NULL;
	return NAN;
}

static void print_row(const struct price_offer *f, const struct price_side *s, double per_gpu, double tflops,
		      const char *basis, int outside)
{
	char tf[32] = "-", tpd[32] = "-", captured[11];
	if (isfinite(tflops)) {
		snprintf(tf, sizeof tf, "%.0f", tflops);
		snprintf(tpd, sizeof tpd, "%.1f", tflops / per_gpu);
	}
	gv_strlcpy(captured, s->captured_at, sizeof captured);
	/* the basis in short: this type's runs, its model's runs, or the model's reference (and its kind) */
	const char *shown = !basis ? "-" : !strcmp(basis, "measured") ? "runs of this type" :
		!strncmp(basis, "measured:", 9) ? "runs of the model" : basis;
	int len = (int)(strchr(shown, ':') ? (size_t)(strchr(shown, ':') - shown) : strlen(shown));
	printf("%-8s %-22s %-15s %-14s %4g %10.4f%c %10.4f %8s %11s  %-10s %.*s\n", f->provider, f->instance_type,
	       f->region[0] ? f->region : "(any)", s->zone[0] ? s->zone : "-", f->gpu_count, per_gpu,
	       outside ? '!' : ' ', s->usd_per_hour, tf, tpd, captured, len, shown);
}

static json_t *row_json(const struct price_offer *f, const struct price_side *s, double per_gpu, double tflops,
			const char *basis, const char *market, json_t *outside_band)
{
	json_t *o = json_pack("{s:s,s:s,s:s,s:s,s:f,s:s,s:f,s:f,s:s,s:s,s:s,s:b}", "provider", f->provider,
			      "instance_type", f->instance_type, "region", f->region, "gpu_model", f->gpu_model,
			      "gpu_count", f->gpu_count, "market", market, "usd_per_gpu_hour", per_gpu, "usd_per_hour",
			      s->usd_per_hour, "currency", s->currency, "source", s->source, "captured_at",
			      s->captured_at, "interruptible", !strcmp(market, "spot"));
	json_object_set_new(o, "outside_band", outside_band);
	json_object_set_new(o, "zone", s->zone[0] ? json_string(s->zone) : json_null());
	json_object_set_new(o, "tflops_per_gpu", isfinite(tflops) ? json_real(tflops) : json_null());
	json_object_set_new(o, "tflops_per_usd_gpu_hour", isfinite(tflops) ? json_real(tflops / per_gpu) : json_null());
	json_object_set_new(o, "throughput_basis", basis ? json_string(basis) : json_null());
	return o;
}

static int side_cmp_market;

static int by_gpu_price(const void *pa, const void *pb)
{
	const struct price_offer *a = pa, *b = pb;
	double x = price_offer_per_gpu(a, side_cmp_market ? &a->spot : &a->od);
	double y = price_offer_per_gpu(b, side_cmp_market ? &b->spot : &b->od);
	if (isnan(x) || isnan(y))
		return isnan(x) - isnan(y);
	if (x != y)
		return x < y ? -1 : 1;
	int c = natural_cmp(a->instance_type, b->instance_type);
	return c ? c : natural_cmp(a->region, b->region);
}

/* The rows, cheapest per GPU-hour first: a JSON array or a table; how many were shown, or -1 when the bands
 * cannot be read (err). */
static long show(struct cheapest *ch, json_t *rank, long limit, json_t *arr, char *err, size_t errlen)
{
	long n = 0;
	side_cmp_market = !strcmp(ch->market, "spot");
	if (ch->offers.n)
		qsort(ch->offers.v, ch->offers.n, sizeof *ch->offers.v, by_gpu_price);
	if (!arr)
		printf("%-8s %-22s %-15s %-14s %4s %10s  %10s %8s %11s  %-10s %s\n", "PROVIDER", "INSTANCE TYPE", "REGION",
		       "ZONE", "GPUS", "$/GPU-h", "$/h", "TFLOP/s", "PER $/GPU-h", "CAPTURED", "TFLOP/s BASIS");
	for (size_t i = 0; i < ch->offers.n && n < limit; i++) {
		const struct price_offer *f = &ch->offers.v[i];
		const struct price_side *s = side_cmp_market ? &f->spot : &f->od;
		double per_gpu = price_offer_per_gpu(f, s);
		if (!s->have || isnan(per_gpu) || !price_gpu_matches(&ch->gpu, f->gpu_model, f->gpu_count))
			continue;
		const char *basis;
		double tflops = rank_value(rank, f, &basis);
		struct price_band_hit band;
		int outside = price_band_set_check(&ch->bands, ch->market, f->gpu_model, per_gpu, &band, err, errlen);
		if (outside < 0)
			return -1;
		if (arr)
			json_array_append_new(arr, row_json(f, s, per_gpu, tflops, basis, ch->market,
							    gv_band_json(&band, outside)));
		else
			print_row(f, s, per_gpu, tflops, basis, outside);
		n++;
	}
	return n;
}

/* The ranking's per-GPU GEMM value of every priced type (measured, else estimated): NULL on error. */
static json_t *values(struct store *s, const struct cheapest *ch, char *err, size_t errlen)
{
	struct rank_opts ro = { .metric = CHEAPEST_METRIC, .market = ch->market, .per = "gpu", .include_estimates = 1 };
	json_t *r = NULL;
	return rank_compute(s, &ro, &r, err, errlen) < 0 ? NULL : r;
}

/* Does the reference table or some stored price name the model (its count aside)? */
static int model_known(const struct cheapest *ch)
{
	struct gpu_want any = ch->gpu;
	any.count = NAN;
	for (size_t i = 0; i < gpu_refs_count; i++)
		if (price_gpu_matches(&any, gpu_refs[i].key, NAN))
			return 1;
	for (size_t i = 0; i < ch->offers.n; i++)
		if (price_gpu_matches(&any, ch->offers.v[i].gpu_model, NAN))
			return 1;
	return 0;
}

int cmd_prices_cheapest(int argc, char **argv, struct store *s)
{
	struct option opts[12];
	gv_opts_getopt(cheapest_opts, opts, 12);
	struct cheapest ch = { .market = "on_demand" };
	struct price_filter f = { 0 };
	const char *gpu = NULL;
	long count = 0, limit = 20;
	int json = 0, c;
	char err[512];
	optind = 1;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'g': gpu = optarg; break;
		case 'm': ch.market = optarg; break;
		case 'p': f.provider = optarg; break;
		case 'r': f.region = optarg; break;
		case 'j': json = 1; break;
		case 'c':
			if (gv_parse_long(optarg, 1, PRICE_MAX_GPUS, &count) < 0)
				return gv_usage_error("prices cheapest", "--count '%s' is not from 1 to %d", optarg, PRICE_MAX_GPUS);
			break;
		case 'l':
			if (gv_parse_long(optarg, 1, 100000, &limit) < 0)
				return gv_usage_error("prices cheapest", "--limit '%s' is not a number of rows", optarg);
			break;
		case 'a':
			if (gv_opt_max_age("prices cheapest", optarg, &f.max_age_days))
				return GV_EXIT_USAGE;
			break;
		case 'h': gv_cmd_help(&cmd_prices_cheapest_doc, stdout); return GV_EXIT_OK;
		default: return gv_opt_refused("prices cheapest", argc, argv, opts);
		}
	}
	if (optind < argc)
		return gv_usage_error("prices cheapest", "unexpected argument '%s'", argv[optind]);
	if (!gpu || strchr(gpu, ':') || price_gpu_want_parse(gpu, &ch.gpu, err, sizeof err) < 0)
		return gv_usage_error("prices cheapest", "needs --gpu GPU (e.g. --gpu H100 --count 8)%s", "");
	if (count)
		ch.gpu.count = (double)count;
	if (strcmp(ch.market, "on_demand") && strcmp(ch.market, "spot"))
		return gv_usage_error("prices cheapest", "--market must be on_demand or spot, not '%s'", ch.market);
	if (gv_prices_ready(s, err, sizeof err) < 0) {
		gv_err("%s", err);
		return GV_EXIT_USAGE;
	}
	f.market = ch.market;
	json_t *rank = NULL;
	if (catalog_prices(store_db(s), &f, PRICE_ORDER_STORED, take_offer, &ch, err, sizeof err) < 0 ||
	    !(rank = values(s, &ch, err, sizeof err))) {
		gv_err("%s", err);
		price_offers_free(&ch.offers);
		return GV_EXIT_USAGE;
	}
	if (!model_known(&ch)) {
		json_decref(rank);
		price_offers_free(&ch.offers);
		return gv_usage_error("prices cheapest", "unknown GPU model '%s' (gpuvet prices list --gpu names the known)",
				      ch.gpu.model);
	}
	json_t *arr = json ? json_array() : NULL;
	ch.bands = (struct price_band_set){ .db = store_db(s), .max_age_days = f.max_age_days };
	long n = show(&ch, rank, limit, arr, err, sizeof err);
	if (n < 0) {
		gv_err("%s", err);
		json_decref(arr);
	} else if (arr) {
		char *t = json_dumps(arr, JSON_INDENT(2) | JSON_REAL_PRECISION(12));
		if (t)
			puts(t);
		free(t);
		json_decref(arr);
	} else if (!n) {
		fprintf(stderr, "gpuvet: no %s price for %s%s (gpuvet prices list lists what is stored)\n", ch.market,
			ch.gpu.model, count ? " at that count" : "");
	} else {
		gv_band_lines(&ch.bands);
		if (!strcmp(ch.market, "spot"))
			fprintf(stderr, "gpuvet: spot prices are interruptible (the provider may reclaim the instance at"
				" short notice); each is the region's lowest zone\n");
	}
	json_decref(rank);
	price_offers_free(&ch.offers);
	price_band_set_free(&ch.bands);
	return n < 0 ? GV_EXIT_USAGE : GV_EXIT_OK;
}
