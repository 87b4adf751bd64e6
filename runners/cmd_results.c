/*
 * cmd_results.c - `gpuvet results list|show|export|merge|import`: the store.
 */
#include "runners/cli.h"
#include "runners/summary.h"
#include "common/util.h"
#include "results/export.h"
#include "common/ident.h"
#include "results/store.h"
#include "runners/collect.h"

#include <csv.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void results_usage(FILE *f)
{
	fprintf(f, "usage: gpuvet results list [--json]\n"
		   "       gpuvet results show [ID|UUID] [--text]       (default: latest run; JSON fingerprint)\n"
		   "       gpuvet results export --format json|csv|prometheus [--run ID] [-o FILE]\n"
		   "       gpuvet results export --format json --to s3://BUCKET/PREFIX/ [--endpoint URL]\n"
		   "                                                    (one object per run, UUID.json, never overwritten)\n"
		   "       gpuvet results merge DB|s3://BUCKET/PREFIX/... [--endpoint URL]\n"
		   "                                                    (copy runs from other stores, no duplicates)\n"
		   "       gpuvet results import FINGERPRINT.json... [--provider P] [--sku TYPE] [--region R]\n"
		   "                                                    (one fingerprint or an array per file)\n"
		   "       gpuvet results tag RUN [--provider P] [--sku TYPE] [--region R]\n"
		   "                                                    (name what a run was on, after the fact)\n\n"
		   "A run is named by its number or a prefix (4+ characters) of its uuid.\n");
}

static int open_store(const struct gv_global *g, int readonly, struct store **s)
{
	int rc = readonly ? store_open_readonly(gv_db_path(g), s) : store_open(gv_db_path(g), s);
	if (rc) {
		gv_err("%s", store_open_error());
		return GV_EXIT_USAGE;
	}
	return 0;
}

static const char *js(const json_t *o, const char *k, const char *dflt)
{
	const char *v = json_string_value(json_object_get(o, k));
	return v ? v : dflt;
}

/* As js, made safe for a terminal (round-robin buffers: several in one printf). */
static const char *jp(const json_t *o, const char *k, const char *dflt)
{
	static char bufs[10][512];
	static unsigned next;
	const char *v = json_string_value(json_object_get(o, k));
	if (!v)
		return dflt;
	char *b = bufs[next++ % 10];
	ident_escape(v, b, sizeof bufs[0]);
	return b;
}

static int cmd_list(struct store *s, int as_json)
{
	int64_t *ids;
	size_t n;
	if (store_list_runs(s, &ids, &n)) {
		gv_err("%s", store_errmsg(s));
		return GV_EXIT_USAGE;
	}
	json_t *arr = json_array();
	if (!as_json && n)
		printf("%-5s %-8s %-20s %-10s %-8s %-9s %-22s %-12s %s\n", "id", "uuid", "started", "status",
		       "profile", "provider", "instance type", "gpus", "benches ok");
	for (size_t i = 0; i < n; i++) {
		json_t *fp;
		if (store_load_fingerprint(s, ids[i], &fp)) {
			gv_err("%s", store_errmsg(s));
			free(ids);
			json_decref(arr);
			return GV_EXIT_USAGE;
		}
		json_t *run = json_object_get(fp, "run");
		int ok = 0, total = 0;
		size_t j;
		json_t *b;
		json_array_foreach(json_object_get(fp, "benches"), j, b) {
			if (!strcmp(js(b, "name", ""), "harness"))
				continue;
			total++;
			ok += !strcmp(js(b, "status", ""), "ok");
		}
		if (as_json) {
			json_t *row = json_deep_copy(run);
			json_object_set_new(row, "benches_ok", json_integer(ok));
			json_object_set_new(row, "benches", json_integer(total));
			json_object_set_new(row, "flags", json_integer((json_int_t)json_array_size(json_object_get(fp, "flags"))));
			json_array_append_new(arr, row);
		} else {
			char gpus[48];
			snprintf(gpus, sizeof gpus, "%lld %s", (long long)json_integer_value(json_object_get(run, "gpu_count")),
				 jp(run, "gpu_model", ""));
			printf("%-5lld %-8.8s %-20s %-10s %-8s %-9s %-22s %-12s %d/%d\n",
			       (long long)ids[i], jp(run, "uuid", "?"), jp(run, "started_at", "?"), jp(run, "status", "?"),
			       jp(run, "profile", "?"), jp(run, "provider", "unknown"), jp(run, "instance_type", "-"), gpus,
			       ok, total);
		}
		json_decref(fp);
	}
	if (as_json) {
		json_dumpf(arr, stdout, JSON_INDENT(2));
		fputc('\n', stdout);
	} else if (!n) {
		printf("no runs in %s\n", "the store");
	}
	json_decref(arr);
	free(ids);
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

static int cmd_show(struct store *s, const char *id, int text)
{
	int64_t run_id;
	json_t *fp;
	if (resolve(s, id, &run_id))
		return GV_EXIT_USAGE;
	if (store_load_fingerprint(s, run_id, &fp)) {
		gv_err("%s", store_errmsg(s));
		return GV_EXIT_USAGE;
	}
	if (text)
		summary_print(fp, stdout);
	else {
		json_dumpf(fp, stdout, JSON_INDENT(2) | JSON_ENSURE_ASCII);
		fputc('\n', stdout);
	}
	json_decref(fp);
	return 0;
}

/* ---- export ---- */

static void csv_cell(FILE *f, const char *s, int last)
{
	csv_fwrite(f, s, strlen(s));
	fputc(last ? '\n' : ',', f);
}

/*
 * A text cell.  One a spreadsheet would read as a formula (= + - @, tab,
 * CR first: names from --sku or an imported file) gets a leading single
 * quote, as OWASP recommends against CSV injection.
 */
static void csv_field(FILE *f, const char *v, int last)
{
	const char *s = v ? v : "";
	if (ident_csv_formula(s)) {
		char *q = gv_asprintf("'%s", s);
		csv_cell(f, q, last);
		free(q);
		return;
	}
	csv_cell(f, s, last);
}

/* A number cell: never neutralised (-1 is the instance-level gpu). */
static void csv_num(FILE *f, const json_t *v, int last)
{
	char buf[64] = "";
	if (json_is_number(v))
		snprintf(buf, sizeof buf, "%.17g", json_number_value(v));
	csv_cell(f, buf, last);
}

int export_csv(struct store *s, const int64_t *ids, size_t n, FILE *out)
{
	static const char *const header[] = { "run_id", "run_uuid", "started_at", "status", "provider",
					      "instance_type", "region", "gpu_model", "gpu_count", "bench",
					      "metric", "gpu", "value", "unit", "params" };
	for (size_t i = 0; i < sizeof header / sizeof header[0]; i++)
		csv_field(out, header[i], i + 1 == sizeof header / sizeof header[0]);
	for (size_t i = 0; i < n; i++) {
		json_t *fp;
		if (store_load_fingerprint(s, ids[i], &fp))
			return -1;
		json_t *run = json_object_get(fp, "run"), *m;
		size_t j;
		json_array_foreach(json_object_get(fp, "metrics"), j, m) {
			char *params = json_dumps(json_object_get(m, "params"), JSON_COMPACT | JSON_SORT_KEYS);
			csv_num(out, json_object_get(run, "id"), 0);
			csv_field(out, js(run, "uuid", ""), 0);
			csv_field(out, js(run, "started_at", ""), 0);
			csv_field(out, js(run, "status", ""), 0);
			csv_field(out, js(run, "provider", ""), 0);
			csv_field(out, js(run, "instance_type", ""), 0);
			csv_field(out, js(run, "region", ""), 0);
			csv_field(out, js(run, "gpu_model", ""), 0);
			csv_num(out, json_object_get(run, "gpu_count"), 0);
			csv_field(out, js(m, "bench", ""), 0);
			csv_field(out, js(m, "name", ""), 0);
			csv_num(out, json_object_get(m, "gpu"), 0);
			csv_num(out, json_object_get(m, "value"), 0);
			csv_field(out, js(m, "unit", ""), 0);
			csv_field(out, params ? params : "{}", 1);
			free(params);
		}
		json_decref(fp);
	}
	return 0;
}

int export_json(struct store *s, const int64_t *ids, size_t n, FILE *out)
{
	/* one document: an array of fingerprints, streamed run by run */
	fputs("[", out);
	for (size_t i = 0; i < n; i++) {
		json_t *fp;
		if (store_load_fingerprint(s, ids[i], &fp))
			return -1;
		fputs(i ? ",\n" : "\n", out);
		json_dumpf(fp, out, JSON_COMPACT | JSON_ENSURE_ASCII);
		json_decref(fp);
	}
	fputs("\n]\n", out);
	return 0;
}

static int cmd_export(struct store *s, const char *format, const char *id, const char *outpath)
{
	int64_t *ids = NULL, one;
	size_t n = 0;
	if (!format)
		return gv_usage_error("results", "export needs '--format json|csv|prometheus'");
	if (strcmp(format, "json") && strcmp(format, "csv") && strcmp(format, "prometheus"))
		return gv_usage_error("results", "unknown export format '%s' (json, csv or prometheus)", format);
	if (id) {
		if (resolve(s, id, &one))
			return GV_EXIT_USAGE;
		ids = gv_malloc(sizeof *ids);
		ids[0] = one;
		n = 1;
	} else if (store_list_runs(s, &ids, &n)) {
		gv_err("%s", store_errmsg(s));
		return GV_EXIT_USAGE;
	}
	FILE *out = stdout;
	char *tmp = NULL;
	if (outpath) {
		tmp = gv_asprintf("%s.tmp", outpath);
		out = fopen(tmp, "w");
		if (!out) {
			gv_err("cannot write '%s': %m", tmp);
			free(tmp);
			free(ids);
			return GV_EXIT_USAGE;
		}
	}
	char err[256] = "";
	int rc;
	if (!strcmp(format, "json"))
		rc = export_json(s, ids, n, out);
	else if (!strcmp(format, "csv"))
		rc = export_csv(s, ids, n, out);
	else
		rc = export_prometheus_runs(s, ids, n, out, err, sizeof err);
	free(ids);
	if (rc)
		gv_err("%s", err[0] ? err : store_errmsg(s));
	if (outpath) {
		if (fclose(out) != 0 && !rc) {
			gv_err("cannot write '%s'", tmp);
			rc = -1;
		}
		if (!rc && rename(tmp, outpath) != 0) {
			gv_err("cannot rename '%s' to '%s': %m", tmp, outpath);
			rc = -1;
		}
		if (rc)
			remove(tmp);
		free(tmp);
	}
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
	int64_t *ids = NULL, one;
	size_t n = 0;
	if (id) {
		if (resolve(s, id, &one))
			return GV_EXIT_USAGE;
		ids = gv_malloc(sizeof *ids);
		ids[0] = one;
		n = 1;
	} else if (store_list_runs(s, &ids, &n)) {
		gv_err("%s", store_errmsg(s));
		return GV_EXIT_USAGE;
	}
	int rc = collect_export_s3(s, ids, n, to);
	free(ids);
	return rc;
}

static int naming_check(const struct naming *nm)
{
	return gv_check_identity("results", "--provider", nm->provider) ||
	       gv_check_identity("results", "--sku", nm->sku) || gv_check_identity("results", "--region", nm->region);
}

static int naming_any(const struct naming *nm)
{
	return nm->provider || nm->sku || nm->region;
}

static int cmd_tag(struct store *s, int n, char **args, const struct naming *nm)
{
	int64_t run_id;
	if (n != 1)
		return gv_usage_error("results", "tag takes one run");
	if (!naming_any(nm))
		return gv_usage_error("results", "tag needs --provider, --sku or --region");
	if (resolve(s, args[0], &run_id))
		return GV_EXIT_USAGE;
	if (store_tag_run(s, run_id, nm->provider, nm->sku, nm->region)) {
		gv_err("cannot tag run %s: %s", args[0], store_errmsg(s));
		return GV_EXIT_USAGE;
	}
	if (!gv_quiet)
		printf("run %lld: provider %s, instance type %s, region %s\n", (long long)run_id,
		       nm->provider ? nm->provider : "(unchanged)", nm->sku ? nm->sku : "(unchanged)",
		       nm->region ? nm->region : "(unchanged)");
	return 0;
}

int cmd_results(int argc, char **argv, const struct gv_global *g)
{
	static const struct option lopts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "text", no_argument, NULL, 't' },
		{ "format", required_argument, NULL, 'f' },
		{ "run", required_argument, NULL, 'r' },
		{ "provider", required_argument, NULL, 'P' },
		{ "sku", required_argument, NULL, 'S' },
		{ "region", required_argument, NULL, 'R' },
		{ "to", required_argument, NULL, 'T' },
		{ "endpoint", required_argument, NULL, 'E' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	int as_json = 0, text = 0, c;
	const char *format = NULL, *run = NULL, *outpath = NULL, *to = NULL;
	struct naming nm = { NULL, NULL, NULL };
	if (argc < 2) {
		results_usage(stderr);
		return GV_EXIT_USAGE;
	}
	const char *sub = argv[1];
	if (!strcmp(sub, "--help") || !strcmp(sub, "-h")) {
		results_usage(stdout);
		return 0;
	}
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
		case 'T': to = optarg; break;
		case 'E': collect_set_endpoint(optarg); break;
		case 'h': results_usage(stdout); return 0;
		default: return gv_usage_error("results", "unknown option or missing value in '%s'", argv[optind]);
		}
	}
	if (naming_any(&nm) && strcmp(sub, "tag") && strcmp(sub, "import"))
		return gv_usage_error("results", "--provider, --sku and --region go with tag and import");
	if (to && strcmp(sub, "export"))
		return gv_usage_error("results", "--to goes with export");
	if (naming_check(&nm))
		return GV_EXIT_USAGE;
	int nargs = argc - 1 - optind;
	char **args = argv + 1 + optind;
	struct store *s;
	int rc;
	if (!strcmp(sub, "list")) {
		if (nargs)
			return gv_usage_error("results", "list takes no argument");
		if ((rc = open_store(g, 0, &s)))
			return rc;
		rc = cmd_list(s, as_json);
	} else if (!strcmp(sub, "show")) {
		if (nargs > 1)
			return gv_usage_error("results", "show takes one run");
		if ((rc = open_store(g, 0, &s)))
			return rc;
		rc = cmd_show(s, nargs ? args[0] : run, text);
	} else if (!strcmp(sub, "export")) {
		if (nargs)
			return gv_usage_error("results", "unexpected argument '%s'", args[0]);
		if (to && (rc = export_to_check(format, outpath, to)))
			return rc;
		if ((rc = open_store(g, 0, &s)))
			return rc;
		rc = to ? cmd_export_to(s, run, to) : cmd_export(s, format, run, outpath);
	} else if (!strcmp(sub, "merge")) {
		if ((rc = open_store(g, 0, &s)))
			return rc;
		rc = collect_merge(s, nargs, args);
	} else if (!strcmp(sub, "import")) {
		if ((rc = open_store(g, 0, &s)))
			return rc;
		rc = collect_import(s, nargs, args, &nm);
	} else if (!strcmp(sub, "tag")) {
		if ((rc = open_store(g, 0, &s)))
			return rc;
		rc = cmd_tag(s, nargs, args, &nm);
	} else {
		return gv_usage_error("results", "unknown subcommand '%s' (list, show, export, merge, import, tag)", sub);
	}
	store_close(s);
	return rc;
}
