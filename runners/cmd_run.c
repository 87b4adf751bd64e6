/*
 * cmd_run.c - `gpuvet run`: options as data (one table gives parsing,
 * validation, --help and the echo of the configuration), then the harness.
 */
#include "runners/cost_line.h"
#include "runners/cli.h"
#include "runners/opts.h"
#include "platform/blockdev.h"
#include "judge/policy.h"
#include "runners/hooks.h"
#include "runners/run.h"
#include "runners/naming.h"
#include "common/outfile.h"
#include "runners/summary.h"
#include "common/util.h"
#include "results/store.h"
#include "judge/derive.h"
#include "results/fprun.h"

#include <errno.h>
#include <getopt.h>
#include <sys/stat.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct run_args {
	struct bench_config cfg;
	struct inventory_opts inv;
	const char *profile;
	const char *bench;
	const char *report;
	const char *accept_policy;
	const char *job;
	struct cost_job cjob;   /* job, parsed before any bench runs */
	int accept;
	int json;
	int custom;
	int help;
};

#define A(f) offsetof(struct run_args, f)
static const struct gv_opt run_options[] = {
	{ .name = "profile", .has_arg = required_argument, .arg = "quick|standard|full",
	  .help = "how long and how deep (default quick)",
	  .type = GV_OPT_STR, .off = A(profile) },
	{ .name = "bench", .has_arg = required_argument, .arg = "a,b",
	  .help = "only these benches (default: all of the profile)",
	  .type = GV_OPT_STR, .off = A(bench) },
	{ .name = "json", .has_arg = no_argument, .arg = NULL,
	  .help = "print the fingerprint as JSON on stdout",
	  .type = GV_OPT_FLAG, .off = A(json) },
	{ .name = "report", .has_arg = required_argument, .arg = "FILE",
	  .help = "write the HTML report at the end",
	  .type = GV_OPT_STR, .off = A(report) },
	{ .name = "job", .has_arg = required_argument, .arg = "MODEL:TASK:TOKENS[:SEQ]",
	  .help = "print what the job costs on this machine at the end (llama-3.1-8b:train:2e9; docs/cost.md)",
	  .type = GV_OPT_STR, .off = A(job) },
	{ .name = "accept", .has_arg = optional_argument, .arg = "POLICY",
	  .help = "gate the run (default policy, or POLICY file); sets the exit code",
	  .type = GV_OPT_FLAG, .off = A(accept) },
	{ .name = "soak-seconds", .has_arg = required_argument, .arg = "N",
	  .help = "soak duration (default by profile: 30, 300, 1200)",
	  .type = GV_OPT_INT, .off = A(cfg.soak_seconds), .min = 1, .max = 86400 },
	{ .name = "nvme-dir", .has_arg = required_argument, .arg = "DIR",
	  .help = "directory for fio's work files (default: largest NVMe mount, else a temp dir)",
	  .type = GV_OPT_STR, .off = A(cfg.nvme_dir) },
	{ .name = "nvme-device", .has_arg = required_argument, .arg = "DEV",
	  .help = "raw block device to test (needs --nvme-allow-destructive)",
	  .type = GV_OPT_STR, .off = A(cfg.nvme_device) },
	{ .name = "nvme-allow-destructive", .has_arg = no_argument, .arg = NULL,
	  .help = "allow writing to --nvme-device (destroys its data)",
	  .type = GV_OPT_FLAG, .off = A(cfg.nvme_allow_destructive) },
	{ .name = "objstore-url", .has_arg = required_argument, .arg = "URL",
	  .help = "s3://BUCKET/KEY or http(s)://... to read (and, for s3, write)",
	  .type = GV_OPT_STR, .off = A(cfg.objstore_url) },
	{ .name = "objstore-endpoint", .has_arg = required_argument, .arg = "URL",
	  .help = "S3-compatible endpoint",
	  .type = GV_OPT_STR, .off = A(cfg.objstore_endpoint) },
	{ .name = "objstore-concurrency", .has_arg = required_argument, .arg = "N",
	  .help = "parallel requests (default 16)",
	  .type = GV_OPT_INT, .off = A(cfg.objstore_concurrency), .min = 1, .max = 1024 },
	{ .name = "provider", .has_arg = required_argument, .arg = "P",
	  .help = "override the cloud provider (aws, lambda, alibaba)",
	  .type = GV_OPT_STR, .off = A(inv.provider) },
	{ .name = "sku", .has_arg = required_argument, .arg = "TYPE",
	  .help = "override the instance type",
	  .type = GV_OPT_STR, .off = A(inv.sku) },
	{ .name = "region", .has_arg = required_argument, .arg = "R",
	  .help = "override the region",
	  .type = GV_OPT_STR, .off = A(inv.region) },
	{ .name = "custom", .has_arg = no_argument, .arg = NULL,
	  .help = "a machine the price catalog does not know: stored as provider custom[:P]",
	  .type = GV_OPT_FLAG, .off = A(custom) },
	{ .name = "help", .has_arg = no_argument, .arg = NULL, .help = "this text", .type = GV_OPT_FLAG, .off = A(help) },
	{ .name = NULL },
};
#undef A
#define N_OPTIONS (sizeof run_options / sizeof run_options[0] - 1)

/* The benches and the exit codes, after the options (built once: the registry is data too). */
static char run_more[2048];

static const char *run_more_text(void)
{
	if (run_more[0])
		return run_more;
	size_t n = (size_t)snprintf(run_more, sizeof run_more, "benches:\n");
	for (const struct bench *const *b = bench_registry; *b && n < sizeof run_more; b++)
		if (!((*b)->flags & BENCH_TEST_ONLY) || bench_test_benches_allowed())
			n += (size_t)snprintf(run_more + n, sizeof run_more - n, "  %-10s %s\n", (*b)->name, (*b)->summary);
	if (n < sizeof run_more)
		snprintf(run_more + n, sizeof run_more - n,
			 "\nexit codes: 0 stored (and accepted with --accept), 1 rejected, 2 usage or\n"
			 "input error, 3 could not measure what the policy requires");
	return run_more;
}

const struct gv_cmd_doc cmd_run_doc = {
	.name = "run",
	.synopsis = "run [OPTIONS]",
	.about = "Collects the inventory, runs the benches (each in its own process with a\n"
		"deadline), stores one run and prints a summary. A bench that cannot run here\n"
		"is recorded as skipped with the reason.",
	.opts = run_options,
	.more = NULL,
	.more_fn = run_more_text,
};

static void run_usage(FILE *f)
{
	gv_cmd_help(&cmd_run_doc, f);
}

static int parse_args(int argc, char **argv, struct run_args *a)
{
	struct option lopts[N_OPTIONS + 1];
	gv_opts_getopt(run_options, lopts, N_OPTIONS + 1);
	int c;
	while ((c = getopt_long(argc, argv, "h", lopts, NULL)) != -1) {
		if (c == 'h') {
			a->help = 1;
			continue;
		}
		if (c < 256) {
			if (c == '?' && optopt)
				return gv_usage_error("run", "unknown option '-%c'", optopt);
			return gv_usage_error("run", "unknown option or missing value in '%s'", argv[optind - 1]);
		}
		const struct gv_opt *o = &run_options[c - 256];
		if (!strcmp(o->name, "accept")) {
			a->accept = 1;
			/* `--accept POLICY`: the next word, when it is not an option */
			if (optarg)
				a->accept_policy = optarg;
			else if (optind < argc && argv[optind][0] != '-')
				a->accept_policy = argv[optind++];
			continue;
		}
		if (gv_opts_store("run", o, optarg, a))
			return GV_EXIT_USAGE;
	}
	if (optind < argc)
		return gv_usage_error("run", "unexpected argument '%s'", argv[optind]);
	return 0;
}

/*
 * A raw device is refused before any bench runs (exit 2): without
 * --nvme-allow-destructive, when it is not a block device, when it is in use.
 */
static int check_nvme_device(const struct run_args *a)
{
	const char *dev = a->cfg.nvme_device;
	struct stat st;
	if (stat(dev, &st))
		return gv_usage_error("run", "cannot use --nvme-device '%s': %s", dev, strerror(errno));
	if (!S_ISBLK(st.st_mode))
		return gv_usage_error("run", "--nvme-device '%s' is not a block device", dev);
	if (!a->cfg.nvme_allow_destructive)
		return gv_usage_error("run", "refusing to write to block device %s without "
				      "--nvme-allow-destructive", dev);
	char why[512];
	if (blockdev_check_unused(dev, NULL, NULL, why, sizeof why)) {
		gv_err("refusing to write to block device: %s", why);
		return GV_EXIT_USAGE;
	}
	return 0;
}

/*
 * `gpuvet run` after its options: inventory and benches (run_execute), then
 * the fingerprint loaded once and passed down: flags, the gate (with the
 * policy parsed before the run), the JSON or the summary, the report.  The
 * verdict's text is printed after the summary (with --json on stderr, so
 * stdout stays one document).
 */
static int run_straight(struct store *s, const struct run_args *a, const struct bench **sel, const struct policy *pol)
{
	struct run_request rq = { .cfg = a->cfg, .benches = sel, .inv = a->inv, .progress = gv_progress_enabled(),
				  .custom = a->custom };
	int64_t run_id;
	int interrupted = 0, rc = GV_EXIT_OK, arc = -1, flags_failed = 0;
	json_t *fp;
	if (run_execute(s, &rq, &run_id, &interrupted) < 0)
		return GV_EXIT_USAGE;
	if (!(fp = derive_load(s, run_id, STORE_RUN_ALL))) {   /* what the run measured, derived as every import is */
		gv_err("%s", store_errmsg(s));
		return GV_EXIT_USAGE;
	}
	json_t *flags = hooks_after_run(s, run_id, fp, &flags_failed);
	if (flags_failed)
		rc = GV_EXIT_USAGE;   /* every failed store write reaches the exit code */
	char *vtext = NULL;
	size_t vlen = 0;
	if (pol && !interrupted) {
		FILE *mem = open_memstream(&vtext, &vlen);
		arc = hooks_accept(s, run_id, pol, fp, flags, mem ? mem : a->json ? stderr : stdout);
		if (mem)
			fclose(mem);
	}
	if (a->json) {
		if (json_dumpf(fp, stdout, JSON_INDENT(2) | JSON_ENSURE_ASCII) < 0 || fputc('\n', stdout) == EOF)
			rc = GV_EXIT_USAGE;
	} else if (!gv_quiet) {
		summary_print(fp, stdout);
		if (!pol && !interrupted)
			summary_standing(fp, stdout);
	}
	if (vtext)
		fputs(vtext, a->json ? stderr : stdout);
	free(vtext);
	fflush(stdout);
	if (interrupted) {
		gv_err("run %lld interrupted: stored as incomplete with what was measured", (long long)run_id);
		rc = GV_EXIT_USAGE;
	}
	if (a->job && !gv_quiet) {
		struct fprun *typed = derive_from_json(fp);   /* cost reads the typed run (judge/cost.h) */
		if (typed)
			cost_print_run_line(s, run_id, typed, &a->cjob, a->json ? stderr : stdout);
		fprun_free(typed);
	}
	if (a->report && hooks_report(s, run_id, fp, a->report, pol))
		rc = GV_EXIT_USAGE;
	if (arc >= 0 && rc == GV_EXIT_OK)
		rc = arc;
	json_decref(flags);
	json_decref(fp);
	return rc;
}

int cmd_run(int argc, char **argv, const struct gv_global *g)
{
	struct run_args a = { 0 };
	int rc = parse_args(argc, argv, &a);
	if (rc)
		return rc;
	if (a.help) {
		run_usage(stdout);
		return GV_EXIT_OK;
	}
	if (run_parse_profile(a.profile, &a.cfg.profile))
		return gv_usage_error("run", "unknown profile '%s' (quick, standard or full)", a.profile);
	if (a.cfg.nvme_allow_destructive && !a.cfg.nvme_device)
		return gv_usage_error("run", "'--nvme-allow-destructive' needs '--nvme-device DEV'");
	if (a.cfg.nvme_device && (rc = check_nvme_device(&a)))
		return rc;
	struct naming given = { .provider = a.inv.provider, .sku = a.inv.sku, .region = a.inv.region };
	if ((rc = naming_check_args("run", &given)))
		return rc;
	a.cfg.verbose = gv_verbose;
	const char *nm = getenv("GPUVET_NO_METADATA");
	a.inv.no_metadata = nm && !strcmp(nm, "1");

	char err[256];
	const struct bench **sel = a.bench ? run_parse_selection(a.bench, err, sizeof err) : run_default_selection();
	if (!sel)
		return gv_usage_error("run", "%s", err);

	if (a.job && cost_job_parse(a.job, &a.cjob, err, sizeof err)) {
		free(sel);
		return gv_usage_error("run", "%s", err);
	}
	if (a.report) { /* a report that cannot be written is said before any bench runs, not after them */
		char rerr[512];
		if (gv_outfile_check(a.report, rerr, sizeof rerr)) {
			free(sel);
			return gv_usage_error("run", "--report: %s", rerr);
		}
	}
	struct policy *pol = NULL;
	if (a.accept) { /* parsed once, before any bench runs: a policy that cannot be read is said first */
		char perr[512];
		int prc = policy_load(a.accept_policy, &pol, perr, sizeof perr);
		if (prc) {
			gv_err(prc == -2 ? "cannot read policy '%s': %s" : "policy '%s': %s",
			       a.accept_policy ? a.accept_policy : "built-in", perr);
			free(sel);
			return GV_EXIT_USAGE;
		}
	}

	struct store *s;
	const char *db = gv_db_path(g);
	if (gv_store_open(db, &s)) {
		gv_err("%s", store_open_error());
		policy_free(pol);
		free(sel);
		return GV_EXIT_USAGE;
	}
	rc = run_straight(s, &a, sel, pol);
	policy_free(pol);
	free(sel);
	store_close(s);
	return rc;
}
