/*
 * cmd_rank.c - `gpuvet rank`: instance types ordered by a metric per dollar.
 * The computation is judge/rank.c (shared with the HTML report); this
 * file parses options and prints the table or the JSON.
 */
#include "judge/rank.h"
#include "pricing/catalog.h"
#include "results/store.h"
#include "runners/cli.h"
#include "runners/opts.h"
#include "common/ident.h"
#include "common/util.h"

#include <getopt.h>
#include <math.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct gv_opt rank_opts[] = {
	{ .name = "metric", .has_arg = required_argument, .val = 'm', .arg = "NAME",
	  .help = "a throughput metric (default gemm.bf16.tflops; any .tflops, .gbps, " ".kiops or .images_per_s metric), or a score: score.training, score.data, score.all" },
	GV_OPT_ROW_MARKET('k'),
	GV_OPT_ROW_REGION('r'),
	{ .name = "per", .has_arg = required_argument, .val = 'p', .arg = "instance|gpu",
	  .help = "value per instance-hour (default) or per GPU over the price per " "GPU-hour" },
	{ .name = "estimates", .has_arg = no_argument, .val = 'e', .arg = NULL,
	  .help = "also list priced types never measured, ranked with the measured ones by value per dollar, marked: "
		  "the median per-GPU value of stored runs of the same model x GPU count, else the model's reference; "
	  "those without a price in the market are listed under the table with why" },
	GV_OPT_ROW_INCLUDE_FLAGGED('f'),
	GV_OPT_ROW_MAX_AGE('a'),
	{ .name = "wide", .has_arg = no_argument, .val = 'w', .arg = NULL,
	  .help = "every column (min-max) and whole cells; by default lines stop at 160 columns" },
	{ .name = "json", .has_arg = no_argument, .val = 'j', .arg = NULL, .help = "the ranking as JSON for scripts" },
	{ .name = "help", .has_arg = no_argument, .val = 'h', .arg = NULL, .help = "this text" },
	{ .name = NULL },
};

const struct gv_cmd_doc cmd_rank_doc = {
	.name = "rank",
	.synopsis = "rank [--metric NAME] [--market on_demand|spot|reserved] [--region R]\n"
		"                   [--per instance|gpu] [--estimates] [--include-flagged] [--max-age DAYS] [--wide] [--json]",
	.about = "Instance types ordered by a measured metric per dollar-hour.  Stored runs are\n"
		"joined to prices by provider and instance type (and region with --region); one\n"
		"row per type, its value the median over the runs of its most sustained profile\n"
		"(standard, full, then quick; the others under it, labelled), with the run count,\n"
		"the spread, the flags the runs raised and its basis: sustained, burst or estimate.  Runs with a critical flag (CONTENTION, ...) are\n"
		"left out and counted; prices are in US dollars (other currencies through their\n"
		"stored, dated rate; a type whose price has no rate is listed apart with why).\n"
		"Where a type has both, on-demand and spot value per dollar are shown side by side.\n"
		"A measured type is priced in its runs' region, or says where it was priced instead;\n"
		"spot is each region's lowest zone, and interruptible.",
	.opts = rank_opts,
	.more = "A score is the weighted mean of its components over fixed units (1000 TFLOP/s,\n"
		"400 GB/s busbw, ...): the same number in rank --json and the report (docs/ranking.md).",
};

static double num(json_t *o, const char *k)
{
	return json_number_value(json_object_get(o, k));
}

/*
 * A string of the ranking as a terminal may show it: stored names and units come from imported
 * fingerprints and price files, so their control characters are escaped (common/ident.h).  A
 * ring of buffers: up to 16 may be in use in one printf.
 */
static const char *str(json_t *o, const char *k)
{
	static char ring[16][1024];
	static unsigned next;
	const char *s = json_string_value(json_object_get(o, k));
	char *b = ring[next++ % 16];
	ident_escape(s ? s : "", b, sizeof ring[0]);
	return b;
}

static void fmt_num(char *buf, size_t size, json_t *v, const char *fmt)
{
	if (json_is_number(v))
		snprintf(buf, size, fmt, json_number_value(v));
	else
		snprintf(buf, size, "-");
}

/* Four significant digits, and whole numbers from 1000 up: never an exponent a person must decode. */
static void human(char *buf, size_t size, double v)
{
	if (!isfinite(v))
		snprintf(buf, size, "-");
	else if (fabs(v) >= 1000)
		snprintf(buf, size, "%.0f", v);
	else
		snprintf(buf, size, "%.4g", v);
}

/* The type's other profiles, under its row and labelled: "also quick (burst): 4 runs, 722.1, 105 per $/h". */
static void print_other_profiles(json_t *row)
{
	size_t i;
	json_t *o;
	json_array_foreach(json_object_get(row, "other_profiles"), i, o) {
		char val[32], vpd[48];
		human(val, sizeof val, num(o, "value"));
		human(vpd, sizeof vpd, num(o, "value_per_dollar"));
		if (!json_is_number(json_object_get(o, "value_per_dollar")))   /* no price: its value, never "0 per $/h" */
			snprintf(vpd, sizeof vpd, "no price, so no value per $/h");
		else
			snprintf(vpd + strlen(vpd), sizeof vpd - strlen(vpd), " per $/h");
		printf("     also %s (%s): %lld run(s), value %s, %s, not ranked\n", str(o, "profile"),
		       str(o, "basis"), (long long)json_integer_value(json_object_get(o, "runs")), val, vpd);
	}
}

/* A type measured in more than one region: every region under its row, with its runs ("runs in us-west-2 (6), ..."). */
static void print_run_regions(json_t *row)
{
	json_t *rr = json_object_get(row, "run_regions"), *e;
	size_t i;
	char line[1024];
	size_t n = 0;
	if (json_array_size(rr) < 2)
		return;
	n += (size_t)snprintf(line, sizeof line, "     runs in");
	json_array_foreach(rr, i, e)
		if (n < sizeof line)
			n += (size_t)snprintf(line + n, sizeof line - n, "%s %s (%lld)", i ? "," : "",
					      json_is_string(json_object_get(e, "region")) ? str(e, "region") : "other regions",
					      (long long)json_integer_value(json_object_get(e, "runs")));
	if (n < sizeof line)
		snprintf(line + n, sizeof line - n, "; priced in %s", str(row, "region")[0] ? str(row, "region") : "(any)");
	gv_table_line(line, 0);
}

/*
 * The price a row used, as a number into the list of price sources printed under the table
 * ("[1] import:deal.csv, captured 2026-11-01"): a column of a few characters, however long the
 * source's name.  srcs holds each distinct (source, captured_at), in order of first use.
 */
static size_t source_number(json_t *srcs, json_t *row)
{
	const char *src = json_string_value(json_object_get(row, "price_source"));
	const char *at = json_string_value(json_object_get(row, "price_captured_at"));
	size_t i;
	json_t *e;
	if (!src || !*src)
		return 0;
	at = at ? at : "";
	json_array_foreach(srcs, i, e)
		if (!strcmp(json_string_value(json_array_get(e, 0)), src) &&
		    !strcmp(json_string_value(json_array_get(e, 1)), at))
			return i + 1;
	json_array_append_new(srcs, json_pack("[ss]", src, at));
	return json_array_size(srcs);
}

/* Under the table: each price source the rows used, with its capture date. */
static void print_sources(json_t *srcs)
{
	size_t i;
	json_t *e;
	if (!json_array_size(srcs))
		return;
	printf("SRC: where each row's price comes from:\n");
	json_array_foreach(srcs, i, e) {
		char src[1024];
		ident_escape(json_string_value(json_array_get(e, 0)), src, sizeof src);
		char words[96];
		printf("  [%zu] %s, %s\n", i + 1, src,
		       price_date_words(json_string_value(json_array_get(e, 0)), json_string_value(json_array_get(e, 1)),
					words, sizeof words));
	}
}

struct rank_view {
	int spot_cols, ranking_spot, wide;
};

static void print_row(json_t *row, const struct rank_view *v, json_t *srcs)
{
	char gpus[40] = "-", runs[16], flags[256] = "", sp[24], spv[24], spread[40] = "-", line[1024];
	size_t fl = 0, j, n;
	json_t *f;
	if (json_is_number(json_object_get(row, "gpu_count")))
		snprintf(gpus, sizeof gpus, "%.0fx %s", num(row, "gpu_count"), str(row, "gpu_model"));
	int est = json_is_true(json_object_get(row, "estimate"));
	if (est)
		snprintf(runs, sizeof runs, "est.");
	else
		snprintf(runs, sizeof runs, "%lld", (long long)json_integer_value(json_object_get(row, "runs")));
	json_t *sd = json_object_get(row, "spread");
	if (json_is_object(sd) && json_integer_value(json_object_get(row, "runs")) > 1)
		snprintf(spread, sizeof spread, "%.4g-%.4g", num(sd, "min"), num(sd, "max"));
	json_array_foreach(json_object_get(row, "flags"), j, f) {
		char code[64];
		ident_escape(json_string_value(f) ? json_string_value(f) : "", code, sizeof code);
		int w = snprintf(flags + fl, sizeof flags - fl, "%s%s", j ? "," : "", code);
		if (w < 0 || (size_t)w >= sizeof flags - fl)
			break;
		fl += (size_t)w;
	}
	if (est && v->wide)
		snprintf(flags, sizeof flags, "(%s)", str(row, "estimate_basis"));
	else if (est)   /* its basis in short: the per-GPU figure and where it comes from (--wide: in full) */
		snprintf(flags, sizeof flags, "(%s %.4g/GPU, %s)",
			 !strcmp(str(row, "estimate_source"), "runs") ? "runs" : "ref.",
			 num(row, "value") / (num(row, "gpu_count") > 0 ? num(row, "gpu_count") : 1),
			 json_is_string(json_object_get(row, "reference_kind")) ? str(row, "reference_kind") : str(row, "basis"));
	const char *region = str(row, "region"), *prof = json_is_string(json_object_get(row, "profile")) ?
							     str(row, "profile") : NULL;
	char val[32], vpd[32], src[24] = "-";
	human(val, sizeof val, num(row, "value"));
	human(vpd, sizeof vpd, num(row, "value_per_dollar"));
	size_t sn = source_number(srcs, row);
	if (sn)   /* a spot price whose date is unknown (an undated snapshot's): marked, said under the table */
		snprintf(src, sizeof src, "[%zu]%s", sn, v->ranking_spot && json_is_false(json_object_get(row,
			 "price_date_known")) ? "?" : "");
	n = (size_t)snprintf(line, sizeof line, "%-4lld %-8s %-23s %-12s %-13s ",
			     (long long)json_integer_value(json_object_get(row, "rank")), str(row, "provider"),
			     str(row, "instance_type"), region[0] ? region : "(any)", gpus);
	n += (size_t)snprintf(line + n, sizeof line - n, "%-8s ", prof ? prof : "-");
	n += (size_t)snprintf(line + n, sizeof line - n, "%-9s %8.4f %-4s %7s %8s", str(row, "basis"),
			      num(row, "price_per_hour"), src, val, vpd);
	if (v->spot_cols) {
		/* the other market's figures: spot when ranking on-demand, on-demand when ranking spot */
		const char *pk = v->ranking_spot ? "on_demand_price_per_hour" : "spot_price_per_hour";
		const char *vk = v->ranking_spot ? "value_per_dollar_on_demand" : "value_per_dollar_spot";
		fmt_num(sp, sizeof sp, json_object_get(row, pk), "%.4f");
		fmt_num(spv, sizeof spv, json_object_get(row, vk), "%.4g");
		n += (size_t)snprintf(line + n, sizeof line - n, " %9s %12s", sp, spv);
	}
	n += (size_t)snprintf(line + n, sizeof line - n, " %4s", runs);
	if (v->wide && n < sizeof line)
		n += (size_t)snprintf(line + n, sizeof line - n, " %-15s", spread);
	if (n < sizeof line)
		snprintf(line + n, sizeof line - n, " %s", flags[0] ? flags : "-");
	gv_table_line(line, v->wide);
	print_run_regions(row);
	print_other_profiles(row);
	if (json_is_string(json_object_get(row, "price_note"))) /* not priced where it ran: said under the row */
		printf("     ^ %s\n", str(row, "price_note"));
	if (json_is_string(json_object_get(row, "spot_dearer_note")))   /* spot dearer than on-demand: named */
		printf("     ^ %s\n", str(row, "spot_dearer_note"));
	if (json_is_string(json_object_get(row, "price_band_note"))) {   /* an outlier price: named */
		char *l = gv_asprintf("     ^ %s", str(row, "price_band_note"));
		gv_table_wrap(l, 7);
		free(l);
	}
}

/*
 * The types the table leaves out for want of a price: the measured ones with their value, then (--estimates)
 * the catalog's types that could be estimated but have no price in the market, a provider's with one why on
 * one line, as `cost` lists them (gv_print_unpriced).
 */
static void print_unpriced(json_t *r, const char *market)
{
	json_t *unpriced = json_object_get(r, "unpriced"), *row;
	size_t i, nmeas = 0;
	json_array_foreach(unpriced, i, row)
		nmeas += !json_is_true(json_object_get(row, "estimate"));
	if (nmeas)
		printf("%zu measured instance type(s) not ranked:\n", nmeas);
	json_array_foreach(unpriced, i, row) {
		if (json_is_true(json_object_get(row, "estimate")))
			continue;
		printf("  %s %s", str(row, "provider"), str(row, "instance_type"));
		if (json_is_string(json_object_get(row, "profile")))
			printf(" (%s, %s)", str(row, "profile"), str(row, "basis"));
		if (json_is_number(json_object_get(row, "value"))) {
			char val[32];
			human(val, sizeof val, num(row, "value"));
			printf(": value %s, no price: %s\n", val, str(row, "why"));
		} else {
			printf(": %s\n", str(row, "why"));
		}
		print_other_profiles(row);
	}
	if (json_array_size(unpriced) > nmeas)
		printf("%zu instance type(s) could be estimated but have no %s price (--json lists each, with its value):\n",
		       json_array_size(unpriced) - nmeas, market);
	for (i = 0; i < json_array_size(unpriced);) {
		if (json_is_true(json_object_get(json_array_get(unpriced, i), "estimate")))
			i = gv_print_unpriced(unpriced, i);
		else
			i++;
	}
}

static void print_table(json_t *r, int wide)
{
	json_t *rows = json_object_get(r, "rows");
	/* copied: str()'s ring of buffers is reused by the rows printed before these are */
	char metric[256], unit[64], market[32];
	gv_strlcpy(metric, str(r, "metric"), sizeof metric);
	gv_strlcpy(unit, str(r, "unit"), sizeof unit);
	gv_strlcpy(market, str(r, "market"), sizeof market);
	int per_gpu = !strcmp(str(r, "per"), "gpu"), spot_cols = 0, any_est = 0, ranking_spot = !strcmp(market, "spot");
	char vhead[400], phead[32];
	size_t i;
	json_t *row;
	json_array_foreach(rows, i, row) {
		spot_cols |= json_is_number(json_object_get(row, ranking_spot ? "on_demand_price_per_hour" : "spot_price_per_hour"));
		any_est |= json_is_true(json_object_get(row, "estimate"));
	}
	struct rank_view v = { spot_cols, ranking_spot, wide };
	snprintf(vhead, sizeof vhead, "%s (%s%s)", metric, unit, per_gpu ? " per GPU" : "");
	snprintf(phead, sizeof phead, "%s", per_gpu ? "$/GPU-h" : "$/h");
	char head[512];
	size_t n = (size_t)snprintf(head, sizeof head, "%-4s %-8s %-23s %-12s %-13s ", "RANK", "PROVIDER",
				    "INSTANCE TYPE", "REGION", "GPUS");
	n += (size_t)snprintf(head + n, sizeof head - n, "%-8s ", "PROFILE");
	n += (size_t)snprintf(head + n, sizeof head - n, "%-9s %8s %-4s %7s %8s", "BASIS", phead, "SRC", "VALUE",
			      per_gpu ? "PER $/GPU-h" : "PER $/h");
	if (v.spot_cols)
		n += (size_t)snprintf(head + n, sizeof head - n, " %9s %12s", ranking_spot ? "OD $/h" : "SPOT $/h",
				      ranking_spot ? "PER OD $/h" : "PER SPOT $/h");
	n += (size_t)snprintf(head + n, sizeof head - n, " %4s", "RUNS");
	if (v.wide)
		n += (size_t)snprintf(head + n, sizeof head - n, " %-15s", "MIN-MAX");
	snprintf(head + n, sizeof head - n, " %s", "FLAGS / BASIS");
	gv_table_line(head, 1);
	json_t *srcs = json_array();
	json_array_foreach(rows, i, row)
		print_row(row, &v, srcs);
	if (!json_array_size(rows))
		printf("(no instance type has both a %s price and a value for %s)\n", market, metric);
	printf("\n");
	print_sources(srcs);
	json_decref(srcs);
	char *note = gv_asprintf("VALUE: %s, the median of the runs of the type's most sustained profile\n%s: value "
				 "per US dollar per %s (%s prices%s)%s", vhead, per_gpu ? "PER $/GPU-h" : "PER $/h",
				 per_gpu ? "GPU-hour" : "instance-hour", market,
				 ranking_spot ? ": " RANK_SPOT_NOTE : "",
				 json_array_size(rows) && json_object_get(json_array_get(rows, 0), "components") ?
				 "; score = weighted mean of the components over fixed units (docs/ranking.md)" : "");
	gv_table_note(note);
	free(note);
	gv_table_note("BASIS: sustained = standard or full runs (timed after the GPU settled at its power limit); burst = "
		"quick runs (not shown to equal the sustained figure); estimate = never measured on the type; one row per "
		"type, its other profiles under it (docs/ranking.md)");
	if (any_est)
		printf("est. = estimate, not measured: ranked with the measured types by value per dollar, its basis in "
		       "brackets (--wide: in full)\n");
	json_int_t left = json_integer_value(json_object_get(r, "runs_left_out"));
	if (left)
		printf("%lld run(s) with critical flags left out (--include-flagged to count them)\n", (long long)left);
	print_unpriced(r, market);
	json_t *unranked = json_object_get(r, "unranked");
	if (json_array_size(unranked))
		printf("%zu priced instance type(s) without an estimate:\n", json_array_size(unranked));
	for (i = 0; i < json_array_size(unranked);)   /* a provider's types with one why: one line */
		i = gv_print_unpriced(unranked, i);
}

int cmd_rank(int argc, char **argv, const struct gv_global *g)
{
	struct option opts[14];
	gv_opts_getopt(rank_opts, opts, 14);
	struct rank_opts o = { 0 };
	int json = 0, wide = 0, c;
	char err[512];
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'm': o.metric = optarg; break;
		case 'k': o.market = optarg; break;
		case 'r': o.region = optarg; break;
		case 'p': o.per = optarg; break;
		case 'e': o.include_estimates = 1; break;
		case 'f': o.include_flagged = 1; break;
		case 'a':
			if (gv_opt_max_age("rank", optarg, &o.max_age_days))
				return GV_EXIT_USAGE;
			break;
		case 'j': json = 1; break;
		case 'w': wide = 1; break;
		case 'h': gv_cmd_help(&cmd_rank_doc, stdout); return GV_EXIT_OK;
		default: return gv_opt_refused("rank", argc, argv, opts);
		}
	}
	if (optind < argc)
		return gv_usage_error("rank", "unexpected argument '%s'", argv[optind]);
	if (o.per && strcmp(o.per, "instance") && strcmp(o.per, "gpu"))
		return gv_usage_error("rank", "--per must be instance or gpu, not '%s'", o.per);
	if (o.market && strcmp(o.market, "on_demand") && strcmp(o.market, "spot") && strcmp(o.market, "reserved"))
		return gv_usage_error("rank", "--market must be on_demand, spot or reserved, not '%s'", o.market);

	struct store *s;
	if (gv_open_reading(g, GV_READ_PRICED, &s))
		return GV_EXIT_USAGE;
	json_t *r = NULL;
	int rc = gv_prices_ready(s, err, sizeof err);
	if (rc == 0)
		rc = rank_compute(s, &o, &r, err, sizeof err);
	store_close(s);
	if (rc < 0) {
		gv_err("rank: %s", err);
		return GV_EXIT_USAGE;
	}
	size_t i;
	json_t *st;
	if (o.market && !strcmp(o.market, "spot") && !json)   /* spot prices change hourly: a copy date is no age */
		json_array_foreach(json_object_get(r, "undated_prices"), i, st)
			fprintf(stderr, "gpuvet: note: %s spot prices used here (%s) are of unknown age (marked ?): copied on %s "
				"from a snapshot whose own date is unknown, and spot prices change every few hours; `gpuvet "
				"prices update` fetches current ones\n", str(st, "provider"), str(st, "source"),
				str(st, "copied_at"));
	json_array_foreach(json_object_get(r, "stale_prices"), i, st) /* once per provider and date */
		fprintf(stderr, "gpuvet: warning: %s prices used here (%s) were captured on %s, %lld days ago (older than"
			" %d days): refresh with `gpuvet prices update`, import newer ones, or leave them out with"
			" --max-age DAYS\n", str(st, "provider"), str(st, "source"), str(st, "captured_at"),
			(long long)json_integer_value(json_object_get(st, "age_days")), PRICE_STALE_DAYS);
	if (json) {
		char *t = json_dumps(r, JSON_INDENT(2) | JSON_REAL_PRECISION(12));
		if (t)
			puts(t);
		free(t);
	} else {
		print_table(r, wide);
	}
	json_decref(r);
	return GV_EXIT_OK;
}
