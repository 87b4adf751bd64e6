/*
 * cmd_rank.c - `gpuvet rank`: instance types ordered by a metric per dollar.
 * The computation is reports/rank.c (shared with the HTML report); this
 * file parses options and prints the table or the JSON.
 */
#include "reports/rank.h"
#include "results/store.h"
#include "runners/cli.h"
#include "common/util.h"

#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *f)
{
	fprintf(f,
		"usage: gpuvet rank [--metric NAME] [--market on_demand|spot|reserved] [--region R]\n"
		"                   [--per instance|gpu] [--estimates] [--json]\n\n"
		"Instance types ordered by a measured metric per dollar-hour.  Stored runs are\n"
		"joined to prices by provider and instance type (and region with --region); the\n"
		"value is the median over the runs of the type, with the run count and the flags\n"
		"the runs raised.\n\n"
		"  --metric NAME  a throughput metric (default gemm.bf16.tflops; any .tflops,\n"
		"                 .gbps, .kiops or .images_per_s metric), or a composite score:\n"
		"                   score.training  gemm.bf16.tflops + allreduce.busbw.gbps\n"
		"                   score.data      nvme.seqread/seqwrite.gbps, nvme.randread.kiops,\n"
		"                                   objstore.get/put.gbps\n"
		"                   score.all       every throughput metric measured\n"
		"                 (each component divided by the best type's value, equal weights,\n"
		"                 a missing component counts 0)\n"
		"  --market M     on_demand (default), spot or reserved prices\n"
		"  --region R     only prices and runs of region R (default: the cheapest region)\n"
		"  --per gpu      value per GPU over price per GPU-hour (default: per instance)\n"
		"  --estimates    also list priced types never measured, from the reference GPU\n"
		"                 table (peak x GPU count, GEMM metrics only), marked as estimates\n"
		"  --json         the ranking as JSON for scripts\n");
}

static double num(json_t *o, const char *k)
{
	return json_number_value(json_object_get(o, k));
}

static const char *str(json_t *o, const char *k)
{
	const char *s = json_string_value(json_object_get(o, k));
	return s ? s : "";
}

static void print_table(json_t *r)
{
	json_t *rows = json_object_get(r, "rows");
	const char *metric = str(r, "metric"), *unit = str(r, "unit");
	int per_gpu = !strcmp(str(r, "per"), "gpu");
	char vhead[96], phead[32];
	snprintf(vhead, sizeof vhead, "%s (%s%s)", metric, unit, per_gpu ? " per GPU" : "");
	snprintf(phead, sizeof phead, "USD/%s", per_gpu ? "GPU-H" : "HOUR");
	printf("%-4s %-8s %-24s %-12s %-16s %10s %14s %14s %5s  %s\n", "RANK", "PROVIDER", "INSTANCE TYPE",
	       "REGION", "GPUS", phead, "VALUE", "PER USD/H", "RUNS", "FLAGS");
	size_t i;
	json_t *row;
	json_array_foreach(rows, i, row) {
		char gpus[40] = "-", runs[16], flags[256] = "";
		size_t fl = 0, j;
		json_t *f;
		if (json_is_number(json_object_get(row, "gpu_count")))
			snprintf(gpus, sizeof gpus, "%gx %s", num(row, "gpu_count"), str(row, "gpu_model"));
		if (json_is_true(json_object_get(row, "estimate")))
			snprintf(runs, sizeof runs, "est.");
		else
			snprintf(runs, sizeof runs, "%lld", (long long)json_integer_value(json_object_get(row, "runs")));
		json_array_foreach(json_object_get(row, "flags"), j, f) {
			int w = snprintf(flags + fl, sizeof flags - fl, "%s%s", j ? "," : "", json_string_value(f));
			if (w < 0 || (size_t)w >= sizeof flags - fl)
				break;
			fl += (size_t)w;
		}
		const char *region = str(row, "region");
		printf("%-4lld %-8s %-24s %-12s %-16s %10.4f %14.4g %14.4g %5s  %s\n",
		       (long long)json_integer_value(json_object_get(row, "rank")), str(row, "provider"),
		       str(row, "instance_type"), region[0] ? region : "(any)", gpus, num(row, "price_per_hour"),
		       num(row, "value"), num(row, "value_per_dollar"), runs, flags[0] ? flags : "-");
	}
	if (!json_array_size(rows))
		printf("(no instance type has both a %s price and a value for %s)\n", str(r, "market"), metric);
	printf("\nVALUE: %s; PER USD/H: value per US dollar per %s (%s prices)",
	       vhead, per_gpu ? "GPU-hour" : "instance-hour", str(r, "market"));
	if (json_array_size(rows) && json_object_get(json_array_get(rows, 0), "components"))
		printf("; score = weighted mean of components normalised to the best type");
	printf("\nest. = estimate from the reference GPU table (peak x GPU count), not measured\n");
	size_t nu = json_array_size(json_object_get(r, "unpriced"));
	if (nu)
		printf("%zu measured instance type(s) have no %s price and are not ranked (gpuvet prices import FILE)\n",
		       nu, str(r, "market"));
}

int cmd_rank(int argc, char **argv, const struct gv_global *g)
{
	static const struct option opts[] = {
		{ "metric", required_argument, NULL, 'm' }, { "market", required_argument, NULL, 'k' },
		{ "region", required_argument, NULL, 'r' }, { "per", required_argument, NULL, 'p' },
		{ "estimates", no_argument, NULL, 'e' },    { "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },         { NULL, 0, NULL, 0 },
	};
	struct rank_opts o = { 0 };
	int json = 0, c;
	char err[512];
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'm': o.metric = optarg; break;
		case 'k': o.market = optarg; break;
		case 'r': o.region = optarg; break;
		case 'p': o.per = optarg; break;
		case 'e': o.include_estimates = 1; break;
		case 'j': json = 1; break;
		case 'h': usage(stdout); return GV_EXIT_OK;
		default: return gv_usage_error("rank", "unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind < argc)
		return gv_usage_error("rank", "unexpected argument '%s'", argv[optind]);
	if (o.per && strcmp(o.per, "instance") && strcmp(o.per, "gpu"))
		return gv_usage_error("rank", "--per must be instance or gpu, not '%s'", o.per);
	if (o.market && strcmp(o.market, "on_demand") && strcmp(o.market, "spot") && strcmp(o.market, "reserved"))
		return gv_usage_error("rank", "--market must be on_demand, spot or reserved, not '%s'", o.market);

	struct store *s;
	if (store_open(gv_db_path(g), &s) != STORE_OK) {
		gv_err("%s", store_open_error());
		return GV_EXIT_USAGE;
	}
	json_t *r = NULL;
	int rc = gv_prices_ready(s, err, sizeof err);
	if (rc == 0)
		rc = rank_compute(s, &o, &r, err, sizeof err);
	store_close(s);
	if (rc < 0) {
		gv_err("rank: %s", err);
		return GV_EXIT_USAGE;
	}
	if (json) {
		char *t = json_dumps(r, JSON_INDENT(2) | JSON_REAL_PRECISION(12));
		if (t)
			puts(t);
		free(t);
	} else {
		print_table(r);
	}
	json_decref(r);
	return GV_EXIT_OK;
}
