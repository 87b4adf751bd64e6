/*
 * cmd_accept.c - `gpuvet accept [--policy FILE] [--run ID] [--json]`: the
 * acceptance gate (accept.h).  Exit 0 accept, 1 reject, 3 could not
 * measure what the policy requires, 2 usage or input error.
 */
#include "judge/accept.h"
#include "runners/cli.h"
#include "judge/policy.h"
#include "common/util.h"
#include "results/store.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void accept_usage(FILE *f)
{
	fprintf(f, "usage: gpuvet accept [RUN] [--policy FILE] [--run ID|UUID] [--json] [--show-policy]\n\n"
		   "Gates a stored run (default: the latest) against an acceptance policy (default:\n"
		   "the built-in one, see --show-policy) and records the verdict with the run.\n"
		   "Every failed rule is listed with the measured value, the threshold and where\n"
		   "the threshold comes from (the policy, the GPU model's reference, the fleet).\n\n"
		   "  --policy FILE   YAML policy (docs/acceptance.md)\n"
		   "  --run ID        run number or uuid prefix\n"
		   "  --json          the verdict as one JSON object\n"
		   "  --show-policy   print the policy that would be applied and exit\n\n"
		   "exit: 0 accept, 1 reject, 3 could not measure what the policy requires,\n"
		   "      2 usage error, malformed policy, no such run\n");
}

int cmd_accept(int argc, char **argv, const struct gv_global *g)
{
	static const struct option lopts[] = {
		{ "policy", required_argument, NULL, 'p' },
		{ "run", required_argument, NULL, 'r' },
		{ "json", no_argument, NULL, 'j' },
		{ "show-policy", no_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
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
		case 'h': accept_usage(stdout); return GV_EXIT_OK;
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
	if (gv_store_open(path, &s)) {
		gv_err("%s", store_open_error());
		return GV_EXIT_USAGE;
	}
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
	rc = accept_run(s, run_id, policy, NULL, json, stdout);
	store_close(s);
	if (fflush(stdout) != 0 && rc != GV_EXIT_USAGE) {
		gv_err("cannot write the verdict to stdout");
		return GV_EXIT_USAGE;
	}
	return rc;
}
