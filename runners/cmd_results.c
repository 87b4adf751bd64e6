/*
 * cmd_results.c - `gpuvet results list|show|export|merge|import`: the store.
 */
#include "runners/cli.h"
#include "runners/opts.h"
#include "runners/summary.h"
#include "common/util.h"
#include "results/export.h"
#include "common/ident.h"
#include "results/store.h"
#include "results/fprun.h"
#include "judge/derive.h"
#include "runners/collect.h"
#include "results/jcanon.h"
#include "results/fpq.h"
#include "runners/naming.h"
#include "common/outfile.h"

#include <csv.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const struct gv_opt results_opts[] = {
	{ .name = "json", .has_arg = no_argument, .val = 'j', .arg = NULL,
	  .help = "list: the runs as JSON; show: the JSON fingerprint (the default in a pipe)" },
	{ .name = "text", .has_arg = no_argument, .val = 't', .arg = NULL,
	  .help = "show: the run as text for a person (the default on a terminal)" },
	{ .name = "format", .has_arg = required_argument, .val = 'f', .arg = "json|csv|prometheus",
	  .help = "export: the format" },
	{ .name = "run", .has_arg = required_argument, .val = 'r', .arg = "ID",
	  .help = "show, export: this run (number or uuid prefix)" },
	{ .name = "output", .has_arg = required_argument, .val = 'o', .arg = "FILE",
	  .help = "export: write here (default stdout); whole or not at all",
	  .short_name = 'o' },
	{ .name = "provider", .has_arg = required_argument, .val = 'P', .arg = "P",
	  .help = "import, tag: the cloud provider (aws, lambda, alibaba)" },
	{ .name = "sku", .has_arg = required_argument, .val = 'S', .arg = "TYPE", .help = "import, tag: the instance type" },
	{ .name = "region", .has_arg = required_argument, .val = 'R', .arg = "R", .help = "import, tag: the region" },
	{ .name = "custom", .has_arg = optional_argument, .val = 'C', .arg = NULL,
	  .help = "import, tag: a machine the catalog does not know (provider custom[:P]); --custom NAME or --custom=NAME "
		  "stores custom:NAME" },
	{ .name = "to", .has_arg = required_argument, .val = 'T', .arg = "s3://BUCKET/PREFIX/",
	  .help = "export: one object per run, UUID.json, never overwritten" },
	{ .name = "endpoint", .has_arg = required_argument, .val = 'E', .arg = "URL",
	  .help = "export --to, merge: an S3-compatible endpoint" },
	{ .name = "help", .has_arg = no_argument, .val = 'h', .arg = NULL, .help = "this text", .short_name = 'h' },
	{ .name = NULL },
};

const struct gv_cmd_doc cmd_results_doc = {
	.name = "results",
	.synopsis = "results list [--json]\n"
		"       gpuvet results show [ID|UUID] [--text|--json] (default: the run stored last; text on a terminal,\n"
		"                                                    the JSON fingerprint in a pipe)\n"
		"       gpuvet results export --format json|csv|prometheus [--run ID] [-o FILE]\n"
		"       gpuvet results export --format json --to s3://BUCKET/PREFIX/ [--endpoint URL]\n"
		"                                                    (one object per run, UUID.json, never overwritten)\n"
		"       gpuvet results merge DB|s3://BUCKET/PREFIX/... [--endpoint URL]\n"
		"                                                    (copy runs from other stores, no duplicates)\n"
		"       gpuvet results import FILE|DIR... [--provider P] [--sku TYPE] [--region R] [--custom [NAME]]\n"
		"                                                    (one fingerprint or an array per file; a directory:\n"
		"                                                     its fingerprints, other files named as skipped)\n"
		"       gpuvet results tag RUN [--provider P] [--sku TYPE] [--region R] [--custom [NAME]]\n"
		"                                                    (name what a run was on, after the fact)",
	.about = "The store of runs.  A run is named by its number or a prefix (4+ characters) of\n"
		"its uuid.  A provider, instance type and region must be in the price catalog, and the type's\n"
		"GPUs what the run measured; --custom stores a machine the catalog does not know\n"
		"(provider custom[:P]).",
	.opts = results_opts,
	.more = NULL,
};

static int open_store(const struct gv_global *g, int readonly, struct store **s)
{
	int rc = readonly ? store_open_readonly(gv_db_path(g), s) : gv_store_open(gv_db_path(g), s);
	if (rc) {
		gv_err("%s", store_open_error());
		return GV_EXIT_USAGE;
	}
	return 0;
}

/* A stored string, or dflt where a fingerprint would have none, made safe for a terminal
 * (round-robin buffers: several in one printf). */
static const char *jp(const char *v, const char *dflt)
{
	static char bufs[10][512];
	static unsigned next;
	if (!v || !ident_utf8_valid(v, strlen(v)))   /* what json_string() takes */
		return dflt;
	char *b = bufs[next++ % 10];
	ident_escape(v, b, sizeof bufs[0]);
	return b;
}

/* What a fingerprint's "run" object says, for `list --json` (the same keys in the same order). */
static json_t *run_object(const struct store_list_row *l)
{
	const struct store_run_row *r = &l->run;
	json_t *o = json_object();
	json_object_set_new(o, "id", json_integer(r->id));
#define TXT(k, v) json_object_set_new(o, k, (v) ? json_string(v) : json_null())
	TXT("uuid", r->uuid);
	TXT("status", r->status);
	TXT("profile", r->profile);
	TXT("gpuvet_version", r->gpuvet_version);
	TXT("hostname", r->hostname);
	TXT("started_at", r->started_at);
	TXT("finished_at", l->finished_at);
	TXT("provider", r->provider);
	TXT("instance_type", r->instance_type);
	TXT("region", r->region);
	TXT("gpu_model", r->gpu_model);
#undef TXT
	json_object_set_new(o, "gpu_count", json_integer(r->gpu_count));
	return o;
}

struct list_walk {
	int as_json;
	size_t n;
};

/* A JSON string as jansson writes it (no JSON_ENSURE_ASCII), for ASCII text; NULL is null. */
static void json_out(const char *v)
{
	if (!v) {
		fputs("null", stdout);
		return;
	}
	putchar('"');
	for (const char *p = v;; p++) {
		size_t run = strcspn(p, "\"\\\b\f\n\r\t\x01\x02\x03\x04\x05\x06\x07\x0b\x0e\x0f\x10\x11\x12"
				   "\x13\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f");
		fwrite(p, 1, run, stdout);
		p += run;
		if (!*p)
			break;
		switch (*p) {
		case '"': fputs("\\\"", stdout); break;
		case '\\': fputs("\\\\", stdout); break;
		case '\b': fputs("\\b", stdout); break;
		case '\f': fputs("\\f", stdout); break;
		case '\n': fputs("\\n", stdout); break;
		case '\r': fputs("\\r", stdout); break;
		case '\t': fputs("\\t", stdout); break;
		default: printf("\\u%04X", (unsigned char)*p); break;
		}
	}
	putchar('"');
}

static int row_ascii(const struct store_list_row *l)
{
	const struct store_run_row *r = &l->run;
	const char *v[] = { r->uuid, r->status, r->profile, r->gpuvet_version, r->hostname, r->started_at,
			    l->finished_at, r->provider, r->instance_type, r->region, r->gpu_model };
	for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
		for (const char *p = v[i]; p && *p; p++)
			if ((unsigned char)*p >= 0x80)
				return 0;
	return 1;
}

/* The critical and warning flag codes a run raised ("A,B", worst first) as an array. */
static json_t *raised_json(const char *raised)
{
	json_t *a = json_array();
	for (const char *p = raised; p && *p;) {
		size_t n = strcspn(p, ",");
		json_array_append_new(a, json_stringn(p, n));
		p += n + (p[n] == ',');
	}
	return a;
}

/* A verdict as a person reads it in the list (README "Words and units"): one word per state. */
static const char *verdict_word(const char *v)
{
	if (!v)
		return "not judged";
	return !strcmp(v, "accept") ? "accepted" : !strcmp(v, "reject") ? "rejected" : "unmeasurable";
}

/* One element of `list --json`, as json_dumpf writes an array of objects with JSON_INDENT(2). */
static void list_json_row(const struct store_list_row *l, int first)
{
	const struct store_run_row *r = &l->run;
	fputs(first ? "[\n  " : ",\n  ", stdout);
	if (!row_ascii(l)) {
		/* jansson itself, which drops a string that is not UTF-8 as the fingerprint did */
		json_t *run = run_object(l);
		json_object_set_new(run, "benches_ok", json_integer(l->benches_ok));
		json_object_set_new(run, "benches", json_integer(l->benches));
		json_object_set_new(run, "flags", json_integer(l->flags));
		json_object_set_new(run, "verdict", l->verdict ? json_string(l->verdict) : json_null());
		json_object_set_new(run, "raised", raised_json(l->raised));
		char *t = json_dumps(run, JSON_INDENT(2));
		for (const char *p = t, *nl; *p; p = nl + 1) {
			if (!(nl = strchr(p, '\n'))) {
				fputs(p, stdout);
				break;
			}
			fwrite(p, 1, (size_t)(nl + 1 - p), stdout);
			fputs("  ", stdout);
		}
		free(t);
		json_decref(run);
		return;
	}
	static const char *const keys[] = { "uuid", "status", "profile", "gpuvet_version", "hostname", "started_at",
					    "finished_at", "provider", "instance_type", "region", "gpu_model" };
	const char *v[] = { r->uuid, r->status, r->profile, r->gpuvet_version, r->hostname, r->started_at,
			    l->finished_at, r->provider, r->instance_type, r->region, r->gpu_model };
	printf("{\n    \"id\": %lld", (long long)r->id);
	for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
		printf(",\n    \"%s\": ", keys[i]);
		json_out(v[i]);
	}
	printf(",\n    \"gpu_count\": %d,\n    \"benches_ok\": %d,\n    \"benches\": %d,\n    \"flags\": %d,\n    \"verdict\": ",
	       r->gpu_count, l->benches_ok, l->benches, l->flags);
	json_out(l->verdict);
	fputs(",\n    \"raised\": [", stdout);
	for (const char *p = l->raised; p && *p;) {   /* flag codes: [A-Z0-9_], as the judge names them */
		size_t n = strcspn(p, ",");
		printf("%s\n      \"%.*s\"", p == l->raised ? "" : ",", (int)n, p);
		p += n + (p[n] == ',');
	}
	fputs(l->raised && *l->raised ? "\n    ]\n  }" : "]\n  }", stdout);
}

static int list_row(void *ud, const struct store_list_row *l)
{
	struct list_walk *w = ud;
	const struct store_run_row *r = &l->run;
	if (w->as_json) {
		list_json_row(l, w->n == 0);
	} else {
		char gpus[48], benches[24], line[2048];
		if (!w->n)
			printf("%-5s %-8s %-20s %-10s %-8s %-9s %-22s %-14s %-13s %-7s %-12s %s\n", "id", "uuid", "started",
			       "status", "profile", "provider", "instance type", "region", "gpus", "benches", "verdict",
			       "flags (critical, warning)");
		snprintf(gpus, sizeof gpus, "%lld %s", (long long)r->gpu_count, jp(r->gpu_model, ""));
		snprintf(benches, sizeof benches, "%d/%d", l->benches_ok, l->benches);
		snprintf(line, sizeof line, "%-5lld %-8.8s %-20s %-10s %-8s %-9s %-22s %-14s %-13s %-7s %-12s %s",
			 (long long)r->id, jp(r->uuid, "?"), jp(r->started_at, "?"), jp(r->status, "?"), jp(r->profile, "?"),
			 jp(r->provider, "unknown"), jp(r->instance_type, "-"), jp(r->region, "-")[0] ? jp(r->region, "-") : "-",
			 gpus, benches, verdict_word(l->verdict), l->raised && *l->raised ? jp(l->raised, "-") : "-");
		gv_table_line(line, 0);
	}
	w->n++;
	return 0;
}

/* One statement over the store (store_each_list_row), streamed: constant memory whatever its size. */
static int cmd_list(struct store *s, int as_json)
{
	struct list_walk w = { as_json, 0 };
	static char buf[1 << 16];
	setvbuf(stdout, buf, _IOFBF, sizeof buf);
	int began = store_read_begin(s);
	int rc = store_each_list_row(s, list_row, &w);
	store_read_end(s, began);
	if (rc) {
		if (as_json && w.n)
			fputs("\n]\n", stdout);
		fflush(stdout);
		gv_err("%s", store_errmsg(s));
		return GV_EXIT_USAGE;
	}
	if (as_json)
		fputs(w.n ? "\n]\n" : "[]\n", stdout);
	else if (!w.n)
		printf("no runs in %s\n", "the store");
	fflush(stdout);
	return 0;
}

static int resolve(struct store *s, const char *id, int64_t *run_id)
{
	int rc = id ? store_resolve_run(s, id, run_id) : store_latest_run(s, run_id);
	if (rc) {
		gv_err("%s", store_errmsg(s));
		return GV_EXIT_USAGE;
	}
	return 0;
}

/*
 * text: 1 --text, 0 --json, -1 neither: the run as text to a terminal (a person reading), the JSON fingerprint
 * into a pipe or a file (a script's `results show | jq`, as before), as `git` and `ls` decide by isatty.
 */
static int cmd_show(struct store *s, const char *id, int text)
{
	if (text < 0)
		text = isatty(STDOUT_FILENO);
	int64_t run_id;
	struct fprun *r;
	if (resolve(s, id, &run_id))
		return GV_EXIT_USAGE;
	/* the typed run, derived (an old run gets what gpuvet derives now), written a row at a time */
	if (derive_load_run(s, run_id, STORE_RUN_ALL, &r)) {
		gv_err("%s", store_errmsg(s));
		return GV_EXIT_USAGE;
	}
	if (text) {
		json_t *fp = fprun_to_json(r);
		summary_print(fp, stdout);
		json_decref(fp);
	} else {
		fprun_write(r, stdout);
	}
	fprun_free(r);
	return 0;
}

/* ---- export (the rows themselves: results/export.c) ---- */

/* The runs an export takes: the one named, or every run; -1 after saying why. */
static int export_ids(struct store *s, const char *id, int64_t **ids, size_t *n)
{
	int64_t one;
	if (id) {
		if (resolve(s, id, &one))
			return -1;
		*ids = gv_malloc(sizeof **ids);
		(*ids)[0] = one;
		*n = 1;
	} else if (store_list_runs(s, ids, n)) {
		gv_err("%s", store_errmsg(s));
		return -1;
	}
	return 0;
}

static int cmd_export(struct store *s, const char *format, const char *id, const char *outpath)
{
	int64_t *ids = NULL;
	size_t n = 0;
	if (!format)
		return gv_usage_error("results", "export needs '--format json|csv|prometheus'");
	if (strcmp(format, "json") && strcmp(format, "csv") && strcmp(format, "prometheus"))
		return gv_usage_error("results", "unknown export format '%s' (json, csv or prometheus)", format);
	/* the CSV of every run is one streamed statement: no list of every run id first */
	if ((id || strcmp(format, "csv")) && export_ids(s, id, &ids, &n))
		return GV_EXIT_USAGE;
	/* -o: common/outfile.h (a pipe or device in place, a file through a unique temporary) */
	struct gv_outfile of = { 0 };
	char err[256] = "";
	if (outpath && gv_outfile_open(&of, outpath, err, sizeof err)) {
		gv_err("%s", err);
		free(ids);
		return GV_EXIT_USAGE;
	}
	FILE *out = outpath ? of.f : stdout;
	int rc;
	errno = 0;
	if (!strcmp(format, "json"))
		rc = export_json(s, ids, n, out);
	else if (!strcmp(format, "csv"))
		rc = export_csv(s, id ? ids[0] : 0, out);
	else
		rc = export_prometheus_runs(s, ids, n, out, err, sizeof err);
	free(ids);
	/* one line, naming what failed and why: the store's error, else the output's */
	if (rc && !err[0] && store_errmsg(s) && *store_errmsg(s))
		snprintf(err, sizeof err, "cannot export: %s", store_errmsg(s));
	if (rc && !err[0])
		snprintf(err, sizeof err, "cannot write '%s': %s", outpath ? outpath : "standard output",
			 strerror(errno ? errno : EIO));
	if (outpath) {
		if (rc)
			gv_outfile_abort(&of);
		else if (gv_outfile_commit(&of, err, sizeof err))
			rc = -1;
	} else if (!rc && fflush(stdout)) {
		snprintf(err, sizeof err, "cannot write standard output: %s", strerror(errno));
		rc = -1;
	}
	if (rc)
		gv_err("%s", err);
	return rc ? GV_EXIT_USAGE : 0;
}

static int export_to_check(const char *format, const char *outpath, const char *to)
{
	if (!format || strcmp(format, "json"))
		return gv_usage_error("results", "--to takes '--format json' (one fingerprint per object)");
	if (outpath)
		return gv_usage_error("results", "--to and -o go separately");
	if (strncmp(to, "s3://", 5) || !to[5] || to[5] == '/')
		return gv_usage_error("results", "--to '%s' is not s3://BUCKET/PREFIX/", to);
	return 0;
}

static int cmd_export_to(struct store *s, const char *id, const char *to)
{
	int64_t *ids = NULL;
	size_t n = 0;
	if (export_ids(s, id, &ids, &n))
		return GV_EXIT_USAGE;
	int rc = collect_export_s3(s, ids, n, to);
	free(ids);
	return rc;
}

/* NAME, the word after --custom, as the machine's name (provider custom:NAME); 0, or an exit code said on stderr. */
static int take_custom(const char *name, struct naming *nm)
{
	if (nm->provider)
		return gv_usage_error("results", "--custom %s and --provider %s: name the machine once "
				      "(--custom NAME stores provider custom:NAME)", name, nm->provider);
	if (gv_check_identity("results", "--custom", name))
		return GV_EXIT_USAGE;
	nm->provider = name;
	return 0;
}

/*
 * `tag RUN --custom NAME`: the word after --custom (custom_next, found in argv before getopt
 * moved it) names the machine, as --provider NAME --custom would.  Leaves the run in *run;
 * 0, or an exit code said on stderr.
 */
static int tag_args(int n, char **args, const char *custom_next, struct naming *nm, const char **run)
{
	if (n == 2 && nm->custom && custom_next && (args[0] == custom_next || args[1] == custom_next)) {
		*run = args[0] == custom_next ? args[1] : args[0];
		return take_custom(custom_next, nm);
	}
	if (n != 1)
		return gv_usage_error("results", "tag takes one run%s", n > 1 ? ": name the machine with --custom NAME "
				      "(provider custom:NAME), its type with --sku TYPE, its region with --region R" : "");
	*run = args[0];
	return 0;
}

/*
 * `import FILE... --custom NAME`: as tag's, the word after --custom names the machine when it is
 * no file or directory (a path there is read, as before: `--custom FILE` stores custom:unknown).
 * Takes the name out of the files (*n, args); 0, or an exit code said on stderr.
 */
static int import_args(int *n, char **args, const char *custom_next, struct naming *nm)
{
	struct stat st;
	int k = 0;
	if (!nm->custom || !custom_next || stat(custom_next, &st) == 0)
		return 0;
	while (k < *n && args[k] != custom_next)
		k++;
	if (k == *n)
		return 0;
	int rc = take_custom(custom_next, nm);
	if (rc)
		return rc;
	memmove(args + k, args + k + 1, (size_t)(*n - k - 1) * sizeof *args);
	--*n;
	return 0;
}

static int cmd_tag(struct store *s, int n, char **argv_args, const char *custom_next, struct naming *nm)
{
	int64_t run_id;
	json_t *fp;
	const char *run = NULL;
	int rc0 = tag_args(n, argv_args, custom_next, nm, &run);
	if (rc0)
		return rc0;
	const char *args[1] = { run };
	if (!naming_any(nm))
		return gv_usage_error("results", "tag needs --provider, --sku, --region or --custom");
	if (resolve(s, args[0], &run_id))
		return GV_EXIT_USAGE;
	if (store_load_fingerprint(s, run_id, &fp)) {
		gv_err("cannot tag run %s: %s", args[0], store_errmsg(s));
		return GV_EXIT_USAGE;
	}
	/* the name after the change, against the catalog and the GPUs the run measured */
	const char *prov = NULL;
	char why[512];
	if (naming_open(nm, s)) {
		json_decref(fp);
		return GV_EXIT_USAGE;
	}
	int rc = naming_apply(nm, fpq_run_str(fp, "provider"), fpq_run_str(fp, "instance_type"),
			      fpq_run_str(fp, "region"), fpq_run_str(fp, "gpu_model"), fpq_gpu_count(fp), NULL, &prov,
			      why, sizeof why);
	naming_close(nm);
	if (rc) {
		gv_err("cannot tag run %s: %s", args[0], why);
		json_decref(fp);
		return GV_EXIT_USAGE;
	}
	if (store_tag_run(s, run_id, nm->custom || nm->provider ? prov : NULL, nm->sku, nm->region)) {
		gv_err("cannot tag run %s: %s", args[0], store_errmsg(s));
		json_decref(fp);
		return GV_EXIT_USAGE;
	}
	json_decref(fp);
	if (!gv_quiet)
		printf("run %lld: provider %s, instance type %s, region %s\n", (long long)run_id,
		       nm->custom || nm->provider ? prov : "(unchanged)", nm->sku ? nm->sku : "(unchanged)",
		       nm->region ? nm->region : "(unchanged)");
	return 0;
}

int cmd_results(int argc, char **argv, const struct gv_global *g)
{
	struct option lopts[16];
	gv_opts_getopt(results_opts, lopts, 16);
	int as_json = 0, text = -1, c;
	const char *format = NULL, *run = NULL, *outpath = NULL, *to = NULL;
	struct naming nm = { 0 };
	if (argc < 2) {
		gv_cmd_help(&cmd_results_doc, stderr);
		return GV_EXIT_USAGE;
	}
	const char *sub = argv[1];
	if (!strcmp(sub, "--help") || !strcmp(sub, "-h")) {
		gv_cmd_help(&cmd_results_doc, stdout);
		return 0;
	}
	/* the word after --custom, before getopt moves it: `tag RUN --custom NAME` names the machine */
	const char *custom_next = NULL;
	for (int i = 2; i + 1 < argc && !custom_next; i++)
		if (!strcmp(argv[i], "--custom") && argv[i + 1][0] != '-')
			custom_next = argv[i + 1];
	optind = 1;
	while ((c = getopt_long(argc - 1, argv + 1, "ho:", lopts, NULL)) != -1) {
		switch (c) {
		case 'j': as_json = 1; break;
		case 't': text = 1; break;
		case 'f': format = optarg; break;
		case 'r': run = optarg; break;
		case 'o': outpath = optarg; break;
		case 'P': nm.provider = optarg; break;
		case 'S': nm.sku = optarg; break;
		case 'R': nm.region = optarg; break;
		case 'C':   /* --custom=NAME as --custom NAME */
			nm.custom = 1;
			if (optarg && take_custom(optarg, &nm))
				return GV_EXIT_USAGE;
			break;
		case 'T': to = optarg; break;
		case 'E': collect_set_endpoint(optarg); break;
		case 'h': gv_cmd_help(&cmd_results_doc, stdout); return 0;
		default: return gv_opt_refused("results", argc - 1, argv + 1, lopts);
		}
	}
	if (naming_any(&nm) && strcmp(sub, "tag") && strcmp(sub, "import"))
		return gv_usage_error("results", "--provider, --sku, --region and --custom go with tag and import");
	if (to && strcmp(sub, "export"))
		return gv_usage_error("results", "--to goes with export");
	if (naming_check_args("results", &nm))
		return GV_EXIT_USAGE;
	int nargs = argc - 1 - optind;
	char **args = argv + 1 + optind;
	struct store *s;
	int rc;
	if (text >= 0 && as_json)
		return gv_usage_error("results", "--text and --json: choose one");
	if (!strcmp(sub, "list")) {
		if (nargs)
			return gv_usage_error("results", "list takes no argument");
		if ((rc = gv_open_reading(g, GV_READ_ROWS, &s)))
			return rc;
		rc = cmd_list(s, as_json);
	} else if (!strcmp(sub, "show")) {
		if (nargs > 1)
			return gv_usage_error("results", "show takes one run");
		if ((rc = gv_open_reading(g, GV_READ_ROWS, &s)))   /* a read: read-only where the store allows */
			return rc;
		rc = cmd_show(s, nargs ? args[0] : run, text >= 0 ? text : as_json ? 0 : -1);
	} else if (!strcmp(sub, "export")) {
		if (nargs)
			return gv_usage_error("results", "unexpected argument '%s'", args[0]);
		if (to && (rc = export_to_check(format, outpath, to)))
			return rc;
		if ((rc = gv_open_reading(g, GV_READ_ROWS, &s)))
			return rc;
		rc = to ? cmd_export_to(s, run, to) : cmd_export(s, format, run, outpath);
	} else if (!strcmp(sub, "merge")) {
		if ((rc = open_store(g, 0, &s)))
			return rc;
		rc = collect_merge(s, nargs, args);
	} else if (!strcmp(sub, "import")) {
		if ((rc = open_store(g, 0, &s)))
			return rc;
		if ((rc = import_args(&nargs, args, custom_next, &nm))) {
			store_close(s);
			return rc;
		}
		rc = collect_import(s, nargs, args, &nm);
	} else if (!strcmp(sub, "tag")) {
		if ((rc = open_store(g, 0, &s)))
			return rc;
		rc = cmd_tag(s, nargs, args, custom_next, &nm);
	} else {
		return gv_usage_error("results", "unknown subcommand '%s' (list, show, export, merge, import, tag)", sub);
	}
	store_close(s);
	return rc;
}
