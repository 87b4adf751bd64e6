/*
 * cmd_accept.c - `gpuvet accept [--policy FILE] [--run ID] [--json]`: the
 * acceptance gate (accept.h).  Exit 0 accept, 1 reject, 3 could not
 * measure what the policy requires, 2 usage or input error.
 */
#include "judge/accept.h"
#include "runners/accept_table.h"
#include "runners/cli.h"
#include "runners/opts.h"
#include "judge/policy.h"
#include "common/util.h"
#include "results/store.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const struct gv_opt accept_opts[] = {
	{ .name = "policy", .has_arg = required_argument, .val = 'p', .arg = "FILE",
	  .help = "YAML policy (docs/acceptance.md); default: the built-in one" },
	{ .name = "run", .has_arg = required_argument, .val = 'r', .arg = "ID",
	  .help = "run number or uuid prefix (default: the run stored last)" },
	{ .name = "json", .has_arg = no_argument, .val = 'j', .arg = NULL, .help = "the verdict as one JSON object" },
	{ .name = "show-policy", .has_arg = no_argument, .val = 's', .arg = NULL,
	  .help = "print the policy that would be applied and exit" },
	{ .name = "help", .has_arg = no_argument, .val = 'h', .arg = NULL, .help = "this text" },
	{ .name = NULL },
};

const struct gv_cmd_doc cmd_accept_doc = {
	.name = "accept",
	.synopsis = "accept [RUN] [--policy FILE] [--run ID|UUID] [--json] [--show-policy]",
	.about = "Gates a stored run (default: the one stored last, never the latest date a\n"
		"run carries) against an acceptance policy (the built-in one unless --policy,\n"
		"see --show-policy) and records the verdict with the run.\n"
		"Every failed rule is listed with the measured value, the threshold and where\n"
		"the threshold comes from (the policy, the GPU model's reference, the fleet),\n"
		"then every check as one table: result (PASS, FAIL, NOT MEASURED, TOLERATED),\n"
		"check, GPU, measured, needed, threshold source.",
	.opts = accept_opts,
	.more = "exit: 0 accept, 1 reject, 3 could not measure what the policy requires,\n"
		"      2 usage error, malformed policy, no such run, a verdict not recorded",
};

int cmd_accept(int argc, char **argv, const struct gv_global *g)
{
	struct option lopts[8];
	gv_opts_getopt(accept_opts, lopts, 8);
	const char *policy = NULL, *run = NULL;
	int json = 0, show = 0, c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", lopts, NULL)) != -1) {
		switch (c) {
		case 'p': policy = optarg; break;
		case 'r':
			if (run)
				return gv_usage_error("accept", "--run given twice ('%s' and '%s'): gate one run at a time",
						      run, optarg);
			run = optarg;
			break;
		case 'j': json = 1; break;
		case 's': show = 1; break;
		case 'h': gv_cmd_help(&cmd_accept_doc, stdout); return GV_EXIT_OK;
		default:
			return gv_usage_error("accept", "unknown option or missing value in '%s'", argv[optind - 1]);
		}
	}
	/* `gpuvet accept RUN` as `--run RUN`, as `results show RUN` takes it */
	if (optind < argc && !run)
		run = argv[optind++];
	if (optind < argc)
		return gv_usage_error("accept", "unexpected argument '%s'", argv[optind]);
	if (show) {
		struct policy *p;
		char err[512];
		int rc = policy_load(policy, &p, err, sizeof err);
		if (rc) {
			gv_err(rc == -2 ? "cannot read policy '%s': %s" : "policy '%s': %s", policy ? policy : "built-in", err);
			return GV_EXIT_USAGE;
		}
		policy_free(p);
		if (!policy) {
			fputs(policy_default_text(), stdout);
		} else {
			size_t len;
			char *t = gv_read_file(policy, &len);
			if (!t) {
				gv_err("cannot read policy '%s'", policy);
				return GV_EXIT_USAGE;
			}
			fwrite(t, 1, len, stdout);
			free(t);
		}
		return GV_EXIT_OK;
	}
	const char *path = gv_db_path(g);
	if (access(path, F_OK) != 0) {
		gv_err("no store at '%s': run 'gpuvet run' first", path);
		return GV_EXIT_USAGE;
	}
	struct store *s;
	if (gv_open_reading(g, GV_READ_RECORD, &s))
		return GV_EXIT_USAGE;
	int64_t run_id;
	int rc = run ? store_resolve_run(s, run, &run_id) : store_latest_run(s, &run_id);
	if (rc) {
		if (rc == STORE_NOTFOUND && !run)
			gv_err("no run in the store '%s': run 'gpuvet run' first", path);
		else
			gv_err("%s", store_errmsg(s));
		store_close(s);
		return GV_EXIT_USAGE;
	}
	accept_legacy_rebuild(s);   /* an upgraded store's baseline first (judge/accept_legacy.c) */
	/* a plain accept says which run it judges: the one stored last, never the latest date a run carries */
	json_t *verdict = NULL;   /* every check of the verdict just recorded, as a table: the run loaded once */
	rc = accept_run(s, run_id, policy, NULL, json, run ? NULL : "the run stored last in this store", stdout,
			json ? NULL : &verdict);
	if (verdict && rc != GV_EXIT_USAGE)
		accept_table_print(verdict, stdout);
	json_decref(verdict);
	store_close(s);
	if (fflush(stdout) != 0 && rc != GV_EXIT_USAGE) {
		gv_err("cannot write the verdict to stdout");
		return GV_EXIT_USAGE;
	}
	return rc;
}
