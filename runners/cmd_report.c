/*
 * cmd_report.c - `gpuvet report [-o FILE] [--run ID]...`: the self-contained
 * HTML report (reports/html.h) of the store's runs.
 */
#include "runners/cli.h"
#include "runners/opts.h"
#include "common/util.h"
#include "reports/html.h"
#include "judge/cost.h"
#include "judge/flags.h"
#include "judge/policy.h"
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
	{ .name = "job", .has_arg = required_argument, .val = 'j', .arg = "MODEL:TASK:TOKENS[:SEQ]",
	  .help = "add what the job costs on each type (llama-3.1-8b:train:2e9; gpuvet cost, docs/cost.md)" },
	{ .name = "no-estimates", .has_arg = no_argument, .val = 'E', .arg = NULL,
	  .help = "leave reference-table estimates out of the ranking" },
	{ .name = "max-age", .has_arg = required_argument, .val = 'a', .arg = "DAYS",
	  .help = "leave out prices captured longer ago, in the rankings, the price list and the job's cost "
		  "(those over 90 days are warned about)" },
	{ .name = "policy", .has_arg = required_argument, .val = 'p', .arg = "FILE",
	  .help = "judge every run on the page by this policy (docs/acceptance.md); default: the built-in one" },
	{ .name = "help", .has_arg = no_argument, .val = 'h', .arg = NULL, .help = "this text", .short_name = 'h' },
	{ .name = NULL },
};

#define STR_(x) #x
#define STR(x) STR_(x)
const struct gv_cmd_doc cmd_report_doc = {
	.name = "report",
	.synopsis = "report [-o FILE] [--run ID]... [--job MODEL:TASK:TOKENS[:SEQ]] [--no-estimates] [--max-age DAYS]\n"
		    "       [--policy FILE]",
	.about = "Writes one self-contained HTML file (no external resources, opens offline):\n"
		"summary, ranking by performance per dollar, charts, per-run detail, provenance.",
	.opts = report_opts,
	.more = "With every run, the newest " STR(REPORT_DETAIL_PER_SKU) " runs of each instance type (at most "
		STR(REPORT_DETAIL_MAX) " in all) get\nfull detail; every run has a row in the runs table. Rankings use the "
		"whole store.",
};

struct report_args {
	const char *out, *job, *policy;
	const char **run_args;   /* argc entries */
	size_t n_run;
	int no_est;
	int max_age;
};

/* The command line into a; -1 when it was answered (help: *rc 0) or refused (*rc the usage error). */
static int report_parse(int argc, char **argv, struct report_args *a, int *rc)
{
	struct option opts[12];
	char shorts[16] = ":";   /* ':' first: a missing value is told apart from an unknown option */
	int c;
	gv_opts_getopt(report_opts, opts, 12);
	gv_opts_short(report_opts, shorts + 1, sizeof shorts - 1);
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, shorts, opts, NULL)) != -1) {
		switch (c) {
		case 'o': a->out = optarg; break;
		case 'r': a->run_args[a->n_run++] = optarg; break;
		case 'E': a->no_est = 1; break;
		case 'j': a->job = optarg; break;
		case 'p': a->policy = optarg; break;
		case 'a':
			if (gv_opt_max_age("report", optarg, &a->max_age))
				return *rc = GV_EXIT_USAGE, -1;
			break;
		case 'h':
			gv_cmd_help(&cmd_report_doc, stdout);
			return *rc = GV_EXIT_OK, -1;
		default:
			return *rc = gv_opt_refused("report", argc, argv, opts), -1;
		}
	}
	if (optind < argc)
		return *rc = gv_usage_error("report", "unexpected argument '%s'", argv[optind]), -1;
	if (!*a->out)
		return *rc = gv_usage_error("report", "empty output file name"), -1;
	return 0;
}

int cmd_report(int argc, char **argv, const struct gv_global *g)
{
	struct report_args ra = { .out = REPORT_DEFAULT_FILE, .run_args = gv_calloc((size_t)argc, sizeof *ra.run_args) };
	const char **run_args = ra.run_args;
	int rc = GV_EXIT_OK;
	struct cost_opts co = { 0 };
	json_t *cost = NULL;
	struct store *s = NULL;
	int64_t *ids = NULL;
	char err[512];

	if (report_parse(argc, argv, &ra, &rc)) {
		free(run_args);
		return rc;
	}
	struct policy *pol = NULL;
	if (ra.policy) {   /* read before the store: a policy that cannot be read is said first */
		int prc = policy_load(ra.policy, &pol, err, sizeof err);
		if (prc) {
			gv_err(prc == -2 ? "cannot read policy '%s': %s" : "policy '%s': %s", ra.policy, err);
			free(run_args);
			return GV_EXIT_USAGE;
		}
	}
	if (ra.job && cost_job_parse(ra.job, &co.job, err, sizeof err)) {
		policy_free(pol);
		free(run_args);
		return gv_usage_error("report", "%s", err);
	}
	if (gv_open_reading(g, GV_READ_REPORT, &s)) {
		policy_free(pol);
		free(run_args);
		return GV_EXIT_USAGE;
	}
	ids = gv_calloc(ra.n_run ? ra.n_run : 1, sizeof *ids);
	for (size_t i = 0; i < ra.n_run; i++) {
		if (store_resolve_run(s, run_args[i], &ids[i])) {
			gv_err("report: %s", store_errmsg(s));
			rc = GV_EXIT_USAGE;
			goto done;
		}
	}
	if (gv_prices_ready(s, err, sizeof err) < 0)
		gv_debug("report: %s", err);
	if (ra.job) {
		/* the job's rows as `gpuvet cost --estimates` gives them; what stops it is said in its section */
		co.include_estimates = !ra.no_est;
		co.max_age_days = ra.max_age;
		if (cost_compute(s, &co, &cost, err, sizeof err) < 0)
			cost = json_pack("{s:s}", "error", err);
	}
	{
		struct report_opts o = { .run_ids = ids, .n_run_ids = ra.n_run, .no_estimates = ra.no_est,
					 .remedy = flags_remediation, .cost = cost, .max_age_days = ra.max_age,
					 .policy = pol };
		int wr = strcmp(ra.out, "-") ? report_write_file(s, &o, ra.out, err, sizeof err)
					  : report_write(s, &o, stdout, err, sizeof err);
		if (wr == 0 && !strcmp(ra.out, "-") && fflush(stdout)) {
			snprintf(err, sizeof err, "cannot write the report to stdout");
			wr = -1;
		}
		if (wr) {
			gv_err("report: %s", err);
			rc = GV_EXIT_USAGE;
			goto done;
		}
		if (strcmp(ra.out, "-") && !gv_quiet) {
			struct stat sb;
			if (stat(ra.out, &sb) == 0)
				printf("wrote %s (%.0f KiB)\n", ra.out, (double)sb.st_size / 1024.0);
		}
	}
done:
	policy_free(pol);
	json_decref(cost);
	free(ids);
	free(run_args);
	store_close(s);
	return rc;
}
