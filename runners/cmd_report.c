/*
 * cmd_report.c - `gpuvet report [-o FILE] [--run ID]...`: the self-contained
 * HTML report (reports/html.h) of the store's runs.
 */
#include "runners/cli.h"
#include "runners/opts.h"
#include "common/util.h"
#include "reports/html.h"
#include "judge/flags.h"
#include "results/store.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const struct gv_opt report_opts[] = {
	{ .name = "output", .has_arg = required_argument, .val = 'o', .arg = "FILE",
	  .help = "where to write (default " REPORT_DEFAULT_FILE "; '-' for stdout); " "written to a temporary file beside it and renamed, never left half written",
	  .short_name = 'o' },
	{ .name = "run", .has_arg = required_argument, .val = 'r', .arg = "ID",
	  .help = "report this run (number or uuid prefix) in full detail; repeat for " "several (default: every run in the store)" },
	{ .name = "no-estimates", .has_arg = no_argument, .val = 'E', .arg = NULL,
	  .help = "leave reference-table estimates out of the ranking" },
	{ .name = "help", .has_arg = no_argument, .val = 'h', .arg = NULL, .help = "this text", .short_name = 'h' },
	{ .name = NULL },
};

#define STR_(x) #x
#define STR(x) STR_(x)
const struct gv_cmd_doc cmd_report_doc = {
	.name = "report",
	.synopsis = "report [-o FILE] [--run ID]... [--no-estimates]",
	.about = "Writes one self-contained HTML file (no external resources, opens offline):\n"
		"summary, ranking by performance per dollar, charts, per-run detail, provenance.",
	.opts = report_opts,
	.more = "With every run, the newest " STR(REPORT_DETAIL_PER_SKU) " runs of each instance type (at most "
		STR(REPORT_DETAIL_MAX) " in all) get\nfull detail; every run has a row in the runs table. Rankings use the "
		"whole store.",
};

int cmd_report(int argc, char **argv, const struct gv_global *g)
{
	struct option opts[8];
	char shorts[16] = ":";   /* ':' first: a missing value is told apart from an unknown option */
	gv_opts_getopt(report_opts, opts, 8);
	gv_opts_short(report_opts, shorts + 1, sizeof shorts - 1);
	const char *out = REPORT_DEFAULT_FILE;
	const char **run_args = gv_calloc((size_t)argc, sizeof *run_args);
	size_t n_run = 0;
	int c, rc = GV_EXIT_OK, no_est = 0;
	struct store *s = NULL;
	int64_t *ids = NULL;
	char err[512];

	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, shorts, opts, NULL)) != -1) {
		switch (c) {
		case 'o': out = optarg; break;
		case 'r': run_args[n_run++] = optarg; break;
		case 'E': no_est = 1; break;
		case 'h':
			gv_cmd_help(&cmd_report_doc, stdout);
			free(run_args);
			return GV_EXIT_OK;
		case ':':
			free(run_args);
			return gv_usage_error("report", "option '%s' needs a value", argv[optind - 1]);
		default:
			free(run_args);
			return gv_usage_error("report", "unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind < argc) {
		rc = gv_usage_error("report", "unexpected argument '%s'", argv[optind]);
		free(run_args);
		return rc;
	}
	if (!*out) {
		free(run_args);
		return gv_usage_error("report", "empty output file name");
	}
	if (gv_open_reading(g, GV_READ_REPORT, &s)) {
		free(run_args);
		return GV_EXIT_USAGE;
	}
	ids = gv_calloc(n_run ? n_run : 1, sizeof *ids);
	for (size_t i = 0; i < n_run; i++) {
		if (store_resolve_run(s, run_args[i], &ids[i])) {
			gv_err("report: %s", store_errmsg(s));
			rc = GV_EXIT_USAGE;
			goto done;
		}
	}
	if (gv_prices_ready(s, err, sizeof err) < 0)
		gv_debug("report: %s", err);
	{
		struct report_opts o = { .run_ids = ids, .n_run_ids = n_run, .no_estimates = no_est,
					 .remedy = flags_remediation };
		int wr = strcmp(out, "-") ? report_write_file(s, &o, out, err, sizeof err)
					  : report_write(s, &o, stdout, err, sizeof err);
		if (wr == 0 && !strcmp(out, "-") && fflush(stdout)) {
			snprintf(err, sizeof err, "cannot write the report to stdout");
			wr = -1;
		}
		if (wr) {
			gv_err("report: %s", err);
			rc = GV_EXIT_USAGE;
			goto done;
		}
		if (strcmp(out, "-") && !gv_quiet) {
			struct stat sb;
			if (stat(out, &sb) == 0)
				printf("wrote %s (%.0f KiB)\n", out, (double)sb.st_size / 1024.0);
		}
	}
done:
	free(ids);
	free(run_args);
	store_close(s);
	return rc;
}
