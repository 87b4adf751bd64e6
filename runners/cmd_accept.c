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
#include "judge/derive.h"
#include "results/fprun.h"
#include "common/util.h"
#include "results/store.h"
#include "pricing/catalog.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const struct gv_opt accept_opts[] = {
	{ .name = "policy", .has_arg = required_argument, .val = 'p', .arg = "FILE",
	  .help = "YAML policy (docs/acceptance.md); default: the built-in one" },
	{ .name = "run", .has_arg = required_argument, .val = 'r', .arg = "ID",
	  .help = "run number or uuid prefix (default: the run stored last)" },
	{ .name = "all", .has_arg = no_argument, .val = 'a', .arg = NULL,
	  .help = "every run this policy has not judged yet, oldest first, in one process: a line each, then the counts" },
	{ .name = "since", .has_arg = required_argument, .val = 'S', .arg = "DATE",
	  .help = "as --all, for the runs started on or after DATE (YYYY-MM-DD[THH:MM:SSZ])" },
	{ .name = "json", .has_arg = no_argument, .val = 'j', .arg = NULL,
	  .help = "the verdict as one JSON object (--all, --since: an array of them)" },
	{ .name = "show-policy", .has_arg = no_argument, .val = 's', .arg = NULL,
	  .help = "print the policy that would be applied and exit" },
	{ .name = "help", .has_arg = no_argument, .val = 'h', .arg = NULL, .help = "this text" },
	{ .name = NULL },
};

const struct gv_cmd_doc cmd_accept_doc = {
	.name = "accept",
	.synopsis = "accept [RUN] [--policy FILE] [--run ID|UUID | --all | --since DATE] [--json] [--show-policy]",
	.about = "Gates a stored run (default: the one stored last, never the latest date a\n"
		"run carries) against an acceptance policy (the built-in one unless --policy,\n"
		"see --show-policy) and records the verdict with the run.\n"
		"Every failed rule is listed with the measured value, the threshold and where\n"
		"the threshold comes from (the policy, the GPU model's reference, the fleet),\n"
		"then every check as one table: result (PASS, FAIL, NOT MEASURED, TOLERATED),\n"
		"check, GPU, measured, needed, threshold source.",
	.opts = accept_opts,
	.more = "exit: 0 accept, 1 reject, 3 unmeasurable: could not measure what the policy requires,\n"
		"      2 usage error, malformed policy, no such run, a verdict not recorded;\n"
		"      --all, --since: 1 when any run was rejected, else 3 when any was unmeasurable, else 0",
};

/* "run 12 (b095eb88) on host vm, aws p5.4xlarge: REJECT: why", from the verdict just recorded */
static void one_line(int64_t id, const struct fprun *r, const json_t *res)
{
	const struct fp_head *run = &r->run;
	const char *verdict = res ? json_string_value(json_object_get(res, "verdict")) : NULL;
	char why[768] = "", line[1280];
	if (res)
		accept_reason_sentence(res, verdict ? verdict : "", why, sizeof why);
	snprintf(line, sizeof line, "run %lld (%.8s) on host %s%s%s%s%s: %s: %s", (long long)id,
		 run->uuid ? run->uuid : "?", run->hostname && *run->hostname ? run->hostname : "(unnamed)",
		 run->provider && *run->provider ? ", " : "", run->provider ? run->provider : "",
		 run->instance_type && *run->instance_type ? " " : "", run->instance_type ? run->instance_type : "",
		 !verdict ? "NOT RECORDED" : !strcmp(verdict, "accept") ? "ACCEPT" : !strcmp(verdict, "reject") ? "REJECT" :
		 "UNMEASURABLE", why);
	gv_table_line(line, 0);   /* 160 columns: `accept RUN` has the whole of it */
}

/* One run of accept_many: loaded and derived as `accept RUN` does, judged by p; its exit code. */
static int accept_one(struct store *s, int64_t id, const struct policy *p, int json, int first)
{
	struct fprun *r;
	json_t *res = NULL;
	if (derive_load_run(s, id, STORE_RUN_ALL, &r)) {   /* judged on what gpuvet derives, as accept RUN */
		gv_err("run %lld: %s", (long long)id, store_errmsg(s));
		return GV_EXIT_USAGE;
	}
	FILE *sink = json ? stdout : fopen("/dev/null", "w");
	if (json)
		fputs(first ? "\n" : ",\n", stdout);
	int v = sink ? accept_judge_run(s, id, p, r, NULL, json, sink, &res) : GV_EXIT_USAGE;
	if (sink && !json)
		fclose(sink);
	if (!json)
		one_line(id, r, res);
	json_decref(res);
	fprun_free(r);
	return v;
}

/*
 * --all, --since: every run the policy has not judged yet (since: started on or after it), oldest first, so each
 * one's fleet baseline holds the runs accepted before it, as it would have judging them one by one; one policy
 * read once, one process.  The exit code the worst: 1 any reject, else 3 any unmeasurable, else 0; 2 on an error.
 */
static int accept_many(struct store *s, const char *path, const char *since, int json)
{
	struct policy *p;
	char err[512];
	int64_t *ids = NULL;
	size_t n = 0, count[4] = { 0 };
	int rc = policy_load(path, &p, err, sizeof err), worst = GV_EXIT_OK;
	if (rc) {
		gv_err(rc == -2 ? "cannot read policy '%s': %s" : "policy '%s': %s", path ? path : "built-in", err);
		return GV_EXIT_USAGE;
	}
	if (store_unjudged_runs(s, p->digest, since, &ids, &n)) {
		gv_err("%s", store_errmsg(s));
		policy_free(p);
		return GV_EXIT_USAGE;
	}
	if (json)
		fputs("[", stdout);
	for (size_t i = 0; i < n; i++) {
		int v = accept_one(s, ids[i], p, json, i == 0);
		count[v == GV_EXIT_OK ? 0 : v == GV_EXIT_REJECT ? 1 : v == GV_EXIT_UNMEASURABLE ? 2 : 3]++;
		if (v == GV_EXIT_USAGE || (worst != GV_EXIT_USAGE && (v == GV_EXIT_REJECT ||
									(v == GV_EXIT_UNMEASURABLE && worst == GV_EXIT_OK))))
			worst = v;
	}
	if (json)
		fputs(n ? "\n]\n" : "]\n", stdout);
	else
		printf("%zu run(s) not yet judged by policy %s%s%s: %zu accepted, %zu rejected, %zu unmeasurable%s\n", n,
		       p->name, since ? ", started since " : "", since ? since : "", count[0], count[1], count[2],
		       count[3] ? " (some verdicts not recorded: see above)" : "");
	free(ids);
	policy_free(p);
	return worst;
}

int cmd_accept(int argc, char **argv, const struct gv_global *g)
{
	struct option lopts[10];
	gv_opts_getopt(accept_opts, lopts, 10);
	const char *policy = NULL, *run = NULL, *since = NULL;
	int json = 0, show = 0, all = 0, c;
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
		case 'a': all = 1; break;
		case 'S': since = optarg; break;
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
	if ((all || since) && run)
		return gv_usage_error("accept", "a run and --all or --since: choose one");
	char why[96];
	if (since && price_date_check(since, 0, why, sizeof why))
		return gv_usage_error("accept", "--since must be a date, YYYY-MM-DD[THH:MM:SSZ], not '%s': %s", since, why);
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
	if (all || since) {
		accept_legacy_rebuild(s);
		int many = accept_many(s, policy, since, json);
		store_close(s);
		return fflush(stdout) != 0 ? GV_EXIT_USAGE : many;
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
