/*
 * cmd_accept.c - `gpuvet accept [--policy FILE] [--run ID] [--json]`: the
 * acceptance gate (accept.h).  Exit 0 accept, 1 reject, 3 could not
 * measure what the policy requires, 2 usage or input error.
 */
#include "runners/accept.h"
#include "runners/cli.h"
#include "runners/fpq.h"
#include "runners/policy.h"
#include "runners/util.h"
#include "results/store.h"

#include <getopt.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *jstr(const json_t *o, const char *k)
{
	const char *v = json_string_value(json_object_get(o, k));
	return v ? v : "";
}

static void print_gpu(FILE *out, const json_t *item)
{
	json_int_t g = json_integer_value(json_object_get(item, "gpu"));
	if (g < 0)
		fputs("instance", out);
	else
		fprintf(out, "gpu %lld", (long long)g);
}

static void print_text(FILE *out, const json_t *fp, const json_t *res)
{
	const json_t *run = json_object_get(fp, "run");
	const json_t *failed = json_object_get(res, "failed"), *unm = json_object_get(res, "unmeasurable");
	const char *verdict = jstr(res, "verdict");
	size_t i;
	json_t *e;
	fprintf(out, "run %lld (%.8s) %s: %s x%lld%s%s%s%s\npolicy %s (%s)\n",
		(long long)json_integer_value(json_object_get(run, "id")), jstr(run, "uuid"), jstr(run, "hostname"),
		*jstr(run, "gpu_model") ? jstr(run, "gpu_model") : "unknown gpu",
		(long long)json_integer_value(json_object_get(run, "gpu_count")),
		*jstr(run, "provider") ? ", " : "", jstr(run, "provider"), *jstr(run, "instance_type") ? " " : "",
		jstr(run, "instance_type"), jstr(res, "policy"), jstr(res, "policy_source"));
	if (!strcmp(verdict, "accept"))
		fprintf(out, "ACCEPT: %zu check(s) passed\n", json_array_size(json_object_get(res, "passed")));
	else if (!strcmp(verdict, "reject"))
		fprintf(out, "REJECT: %zu check(s) failed\n", json_array_size(failed));
	else
		fprintf(out, "CANNOT MEASURE: %zu requirement(s) not measured\n", json_array_size(unm));
	json_array_foreach(failed, i, e) {
		if (json_object_get(e, "flag")) {
			fprintf(out, "  FAIL  flag %s (%s): %s\n        threshold: %s\n", jstr(e, "flag"), jstr(e, "severity"),
				jstr(e, "message"), jstr(e, "source"));
			if (*jstr(e, "remediation"))
				fprintf(out, "        what to do: %s\n", jstr(e, "remediation"));
		} else {
			fprintf(out, "  FAIL  %s (", jstr(e, "metric"));
			print_gpu(out, e);
			fprintf(out, ") = %.4g %s, needs %s %.4g %s\n        threshold: %s\n",
				json_number_value(json_object_get(e, "value")), jstr(e, "unit"), jstr(e, "op"),
				json_number_value(json_object_get(e, "threshold")), jstr(e, "unit"), jstr(e, "source"));
		}
	}
	json_array_foreach(unm, i, e) {
		if (json_object_get(e, "flag"))
			fprintf(out, "  NOT MEASURED  flag %s: %s (policy line %lld)\n", jstr(e, "flag"), jstr(e, "reason"),
				(long long)json_integer_value(json_object_get(e, "rule_line")));
		else if (json_object_get(e, "metric")) {
			fprintf(out, "  NOT MEASURED  %s (", jstr(e, "metric"));
			print_gpu(out, e);
			fprintf(out, "): %s (policy line %lld)\n", jstr(e, "reason"),
				(long long)json_integer_value(json_object_get(e, "rule_line")));
		} else
			fprintf(out, "  NOT MEASURED  %s\n", jstr(e, "reason"));
	}
	json_array_foreach(json_object_get(res, "notes"), i, e)
		fprintf(out, "  note: %s\n", json_string_value(e));
	if (strcmp(verdict, "accept"))
		fprintf(out, "  %zu check(s) passed\n", json_array_size(json_object_get(res, "passed")));
}

/*
 * Candidate fleet runs: accepted runs of the same GPU model and count (and
 * instance type when both know it), found with one query so a large merged
 * store is not loaded whole; -1 when the query cannot run (then every run is
 * a candidate and policy_same_fleet() decides).
 */
static int fleet_candidates(struct store *s, int64_t run_id, const json_t *fp, int64_t **ids, size_t *n)
{
	sqlite3 *db = store_db(s);
	sqlite3_stmt *st;
	const char *model = fpq_run_str(fp, "gpu_model"), *it = fpq_run_str(fp, "instance_type");
	size_t cap = 16;
	*n = 0;
	if (!db || sqlite3_prepare_v2(db,
		"SELECT DISTINCT r.id FROM runs r JOIN verdicts v ON v.run_id = r.id AND v.verdict = 'accept' "
		"WHERE r.gpu_model = ?1 AND r.gpu_count = ?2 AND r.id <> ?3 "
		"AND (?4 IS NULL OR r.instance_type IS NULL OR r.instance_type = ?4) ORDER BY r.id", -1, &st, NULL) != SQLITE_OK)
		return -1;
	sqlite3_bind_text(st, 1, model ? model : "", -1, SQLITE_TRANSIENT);
	sqlite3_bind_int(st, 2, fpq_gpu_count(fp));
	sqlite3_bind_int64(st, 3, run_id);
	if (it)
		sqlite3_bind_text(st, 4, it, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(st, 4);
	*ids = gv_malloc(cap * sizeof **ids);
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (*n == cap)
			*ids = gv_realloc(*ids, (cap *= 2) * sizeof **ids);
		(*ids)[(*n)++] = sqlite3_column_int64(st, 0);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		free(*ids);
		*ids = NULL;
		return -1;
	}
	return 0;
}

/* Fingerprints of the other runs of the same SKU that were accepted, without their samples. */
static json_t *load_fleet(struct store *s, int64_t run_id, const json_t *fp)
{
	int64_t *ids = NULL;
	size_t n = 0;
	json_t *fleet = json_array();
	int scan = fleet_candidates(s, run_id, fp, &ids, &n) != 0;
	if (scan && store_list_runs(s, &ids, &n)) {
		gv_debug("fleet baseline unavailable: %s", store_errmsg(s));
		return fleet;
	}
	gv_debug("fleet baseline: %zu candidate run(s)%s", n, scan ? " (full scan)" : "");
	for (size_t i = 0; i < n; i++) {
		json_t *o;
		if (ids[i] == run_id || store_load_fingerprint(s, ids[i], &o))
			continue;
		if (policy_same_fleet(fp, o)) {
			json_object_del(o, "samples");
			json_array_append(fleet, o);
		}
		json_decref(o);
	}
	free(ids);
	return fleet;
}

int accept_run(struct store *s, int64_t run_id, const char *policy_path, int json, FILE *out)
{
	struct policy *p;
	char err[512];
	json_t *fp, *res, *fleet = NULL;
	int rc = policy_load(policy_path, &p, err, sizeof err);
	if (rc == -2) {
		gv_err("cannot read policy '%s': %s", policy_path, err);
		return GV_EXIT_USAGE;
	}
	if (rc) {
		gv_err("policy '%s': %s", policy_path ? policy_path : "built-in", err);
		return GV_EXIT_USAGE;
	}
	if (store_load_fingerprint(s, run_id, &fp)) {
		gv_err("%s", store_errmsg(s));
		policy_free(p);
		return GV_EXIT_USAGE;
	}
	if (policy_needs_fleet(p))
		fleet = load_fleet(s, run_id, fp);
	enum policy_verdict v = policy_evaluate(p, fp, fleet, &res);
	json_object_set_new(res, "run", json_pack("{s:I,s:O?,s:O?,s:O?,s:O?,s:O?}", "id", (json_int_t)run_id,
		"uuid", json_object_get(json_object_get(fp, "run"), "uuid"),
		"hostname", json_object_get(json_object_get(fp, "run"), "hostname"),
		"gpu_model", json_object_get(json_object_get(fp, "run"), "gpu_model"),
		"gpu_count", json_object_get(json_object_get(fp, "run"), "gpu_count"),
		"instance_type", json_object_get(json_object_get(fp, "run"), "instance_type")));
	json_object_set_new(res, "exit_code", json_integer((int)v));
	char *detail = json_dumps(res, JSON_COMPACT | JSON_REAL_PRECISION(10));
	if (!detail || store_put_verdict(s, run_id, policy_verdict_name(v), p->name, detail))
		gv_err("the verdict was not recorded in the store: %s", detail ? store_errmsg(s) : "out of memory");
	free(detail);
	if (json) {
		json_dumpf(res, out, JSON_INDENT(2) | JSON_REAL_PRECISION(10));
		fputc('\n', out);
	} else {
		json_object_set_new(json_object_get(fp, "run"), "id", json_integer(run_id));
		print_text(out, fp, res);
	}
	json_decref(res);
	json_decref(fleet);
	json_decref(fp);
	policy_free(p);
	return (int)v;
}

static void accept_usage(FILE *f)
{
	fprintf(f, "usage: gpuvet accept [--policy FILE] [--run ID|UUID] [--json] [--show-policy]\n\n"
		   "Gates a stored run (default: the latest) against an acceptance policy (default:\n"
		   "the built-in one, see --show-policy) and records the verdict with the run.\n"
		   "Every failed rule is listed with the measured value, the threshold and where\n"
		   "the threshold comes from (the policy, the GPU model's reference, the fleet).\n\n"
		   "  --policy FILE   YAML policy (README \"Acceptance\")\n"
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
		case 'r': run = optarg; break;
		case 'j': json = 1; break;
		case 's': show = 1; break;
		case 'h': accept_usage(stdout); return GV_EXIT_OK;
		default:
			return gv_usage_error("accept", "unknown option or missing value in '%s'", argv[optind - 1]);
		}
	}
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
	if (store_open(path, &s)) {
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
	rc = accept_run(s, run_id, policy, json, stdout);
	store_close(s);
	if (fflush(stdout) != 0 && rc != GV_EXIT_USAGE) {
		gv_err("cannot write the verdict to stdout");
		return GV_EXIT_USAGE;
	}
	return rc;
}
