/*
 * accept.c - the acceptance gate as a library (accept.h): `gpuvet accept`
 * (cmd_accept.c) and `gpuvet run --accept` (hooks.c) both call accept_run().
 */
#include "judge/accept.h"
#include "judge/policy.h"
#include "judge/derive.h"
#include "results/fpq.h"
#include "results/store.h"
#include "common/util.h"
#include "common/gpus.h"

#include <stdlib.h>
#include <time.h>
#include <string.h>

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

/* The root cause of an unmeasurable verdict: the entry with neither metric nor flag (no GPU at all), else NULL. */
static const json_t *root_cause(const json_t *unm)
{
	size_t i;
	json_t *e;
	json_array_foreach(unm, i, e)
		if (!json_object_get(e, "flag") && !json_object_get(e, "metric"))
			return e;
	return NULL;
}

const char *accept_reason_sentence(const json_t *detail, const char *verdict, char *buf, size_t size)
{
	const json_t *failed = json_object_get(detail, "failed"), *unm = json_object_get(detail, "unmeasurable");
	const json_t *e = json_array_get(failed, 0), *root = root_cause(unm);
	size_t nf = json_array_size(failed), nu = json_array_size(unm);
	char more[64] = "";
	if (verdict && !strcmp(verdict, "reject") && e) {
		if (nf > 1)
			snprintf(more, sizeof more, " (and %zu more)", nf - 1);
		if (json_object_get(e, "flag"))
			snprintf(buf, size, "flag %s (%s): %s%s", jstr(e, "flag"), jstr(e, "severity"), jstr(e, "message"),
				 more);
		else if (!strcmp(jstr(e, "kind"), "bench"))
			snprintf(buf, size, "%s: %s%s", jstr(e, "metric"), jstr(e, "reason"), more);
		else {
			char where[32] = "the whole instance";
			json_int_t g = json_integer_value(json_object_get(e, "gpu"));
			if (g >= 0)
				snprintf(where, sizeof where, "gpu %lld", (long long)g);
			snprintf(buf, size, "%s on %s is %.4g %s, under the %.4g %s needed (%s)%s", jstr(e, "metric"), where,
				 json_number_value(json_object_get(e, "value")), jstr(e, "unit"),
				 json_number_value(json_object_get(e, "threshold")), jstr(e, "unit"), jstr(e, "kind"), more);
		}
	} else if (verdict && !strcmp(verdict, "unmeasurable") && nu) {
		if (root && nu > 1)
			snprintf(buf, size, "no GPU could be measured: %s (%zu requirement%s of the policy need one)",
				 jstr(root, "reason"), nu - 1, nu - 1 == 1 ? "" : "s");
		else if (root)
			snprintf(buf, size, "no GPU could be measured: %s (a GPU instance is judged with its GPUs)",
				 jstr(root, "reason"));
		else
		{
			const json_t *u = json_array_get(unm, 0);
			snprintf(buf, size, "%s%s%s not measured: %s%s", json_object_get(u, "flag") ? "flag " : "",
				 jstr(u, "flag"), jstr(u, "metric"), jstr(u, "reason"), nu > 1 ? " (and more)" : "");
		}
	} else if (json_array_size(json_object_get(detail, "tolerated"))) {
		const json_t *t = json_array_get(json_object_get(detail, "tolerated"), 0);
		size_t nt = json_array_size(json_object_get(detail, "tolerated"));
		snprintf(buf, size, "accepted despite %s (tolerated by %s: %s)%s", jstr(t, "flag"), jstr(t, "policy"),
			 jstr(t, "reason"), nt > 1 ? ", and more critical flags it tolerates" : "");
	} else {
		snprintf(buf, size, "every one of its %zu check(s) passed",
			 json_array_size(json_object_get(detail, "passed")));
	}
	return buf;
}

static void print_text(FILE *out, const json_t *fp, const json_t *res)
{
	const json_t *run = json_object_get(fp, "run");
	const json_t *failed = json_object_get(res, "failed"), *unm = json_object_get(res, "unmeasurable");
	const json_t *root = root_cause(unm);
	const char *verdict = jstr(res, "verdict");
	char why[768];
	size_t i;
	json_t *e;
	fprintf(out, "run %lld (%.8s) %s: %s x%lld%s%s%s%s\npolicy %s (%s, %.19s)\n",
		(long long)json_integer_value(json_object_get(run, "id")), jstr(run, "uuid"), jstr(run, "hostname"),
		*jstr(run, "gpu_model") ? jstr(run, "gpu_model") : "unknown gpu",
		(long long)json_integer_value(json_object_get(run, "gpu_count")),
		*jstr(run, "provider") ? ", " : "", jstr(run, "provider"), *jstr(run, "instance_type") ? " " : "",
		jstr(run, "instance_type"), jstr(res, "policy"), jstr(res, "policy_source"), jstr(res, "policy_digest"));
	accept_reason_sentence(res, verdict, why, sizeof why);
	if (!strcmp(verdict, "accept") && json_array_size(json_object_get(res, "tolerated")))
		fprintf(out, "ACCEPT: %zu check(s) passed; %s\n", json_array_size(json_object_get(res, "passed")), why);
	else if (!strcmp(verdict, "accept"))
		fprintf(out, "ACCEPT: %zu check(s) passed\n", json_array_size(json_object_get(res, "passed")));
	else if (!strcmp(verdict, "reject"))
		fprintf(out, "REJECT: %zu check(s) failed\n", json_array_size(failed));
	else
		fprintf(out, "CANNOT MEASURE: %s\n", why);
	json_array_foreach(failed, i, e) {
		if (json_object_get(e, "flag")) {
			fprintf(out, "  FAIL  flag %s (%s): %s\n        threshold: %s\n", jstr(e, "flag"), jstr(e, "severity"),
				jstr(e, "message"), jstr(e, "source"));
			if (*jstr(e, "remediation"))
				fprintf(out, "        what to do: %s\n", jstr(e, "remediation"));
		} else if (!strcmp(jstr(e, "kind"), "bench")) {
			fprintf(out, "  FAIL  %s (", jstr(e, "metric"));
			print_gpu(out, e);
			fprintf(out, "): %s\n        threshold: %s\n", jstr(e, "reason"), jstr(e, "source"));
		} else {
			fprintf(out, "  FAIL  %s (", jstr(e, "metric"));
			print_gpu(out, e);
			fprintf(out, ") = %.4g %s, needs %s %.4g %s\n        threshold: %s\n",
				json_number_value(json_object_get(e, "value")), jstr(e, "unit"), jstr(e, "op"),
				json_number_value(json_object_get(e, "threshold")), jstr(e, "unit"), jstr(e, "source"));
		}
	}
	/* no GPU at all: one line names what could not be measured, the cause is said once above */
	if (root) {
		fputs("  NOT MEASURED ", out);
		json_array_foreach(unm, i, e)
			if (e != root)
				fprintf(out, " %s%s%s", json_object_get(e, "flag") ? "flag " : "",
					json_object_get(e, "flag") ? jstr(e, "flag") : jstr(e, "metric"),
					i + 1 < json_array_size(unm) ? "," : "");
		fputc('\n', out);
	}
	json_array_foreach(unm, i, e) {
		if (root)
			break;
		if (json_object_get(e, "flag"))
			fprintf(out, "  NOT MEASURED  flag %s: %s (policy: reject_flags %s)\n", jstr(e, "flag"),
				jstr(e, "reason"), jstr(e, "flag"));
		else if (json_object_get(e, "metric")) {
			fprintf(out, "  NOT MEASURED  %s (", jstr(e, "metric"));
			print_gpu(out, e);
			fprintf(out, "): %s\n", jstr(e, "reason"));
		}
	}
	json_array_foreach(json_object_get(res, "tolerated"), i, e) {
		fprintf(out, "  TOLERATED  flag %s (%s) on ", jstr(e, "flag"), jstr(e, "severity"));
		print_gpu(out, e);
		fprintf(out, ": %s\n        tolerated by policy %s: %s\n", jstr(e, "message"), jstr(e, "policy"),
			jstr(e, "reason"));
	}
	json_array_foreach(json_object_get(res, "fleet"), i, e) {
		size_t j;
		json_t *b;
		fprintf(out, "  fleet baseline for %s (", jstr(e, "metric"));
		print_gpu(out, e);
		fputs("): runs", out);
		json_array_foreach(json_object_get(e, "baseline_runs"), j, b)
			fprintf(out, "%s %lld (%.8s)", j ? "," : "", (long long)json_integer_value(json_object_get(b, "id")),
				jstr(b, "uuid"));
		fputc('\n', out);
	}
	json_array_foreach(json_object_get(res, "notes"), i, e)
		fprintf(out, "  note: %s\n", json_string_value(e));
	if (strcmp(verdict, "accept"))
		fprintf(out, "  %zu check(s) passed\n", json_array_size(json_object_get(res, "passed")));
}

/* Fingerprints of the other runs of the same SKU that were accepted, without their samples. */
static json_t *load_fleet(struct store *s, int64_t run_id, const json_t *fp, const char *digest)
{
	int64_t *ids = NULL;
	size_t n = 0;
	json_t *fleet = json_array();
	const struct gpu_ref *model = fpq_gpu_ref(fp);   /* the resolved model: stored runs carry its key */
	int scan = store_fleet_candidates(s, run_id, digest, model ? model->key : "", fpq_gpu_count(fp),
					  fpq_run_str(fp, "instance_type"), &ids, &n) != 0;
	if (scan && store_list_runs(s, &ids, &n)) {
		gv_debug("fleet baseline unavailable: %s", store_errmsg(s));
		return fleet;
	}
	gv_debug("fleet baseline: %zu candidate run(s)%s", n, scan ? " (full scan)" : "");
	for (size_t i = 0; i < n; i++) {
		json_t *o;
		if (ids[i] == run_id || !(o = derive_load(s, ids[i], STORE_RUN_NO_SERIES)))
			continue;
		if (policy_same_fleet(fp, o, digest))
			json_array_append(fleet, o);
		json_decref(o);
	}
	free(ids);
	return fleet;
}

/*
 * A fleet baseline an upgrade lost is named, not the routine "fewer than N":
 * accepts an earlier gpuvet stored by this policy's name without its text
 * (schema 5 or older) count for nothing until the runs are judged again.
 */
static void name_lost_baseline(struct store *s, const struct policy *p, const json_t *fp, json_t *res)
{
	long long lost = 0;
	size_t i;
	json_t *n;
	json_array_foreach(json_object_get(res, "notes"), i, n) {
		const char *t = json_string_value(n), *has = t ? strstr(t, " has ") : NULL;
		char msg[512];
		if (!has || !strstr(t, "fleet threshold not applied"))
			continue;
		if (!lost && (store_legacy_accepts(s, p->name, p->digest, fpq_run_str(fp, "gpu_model"), fpq_gpu_count(fp),
						  &lost) || !lost))
			return;
		snprintf(msg, sizeof msg, "%.*s lost in an upgrade: %lld run(s) of this sku accepted by policy '%s' under "
			 "an earlier gpuvet, whose store kept no policy text with its verdicts, count for nothing until "
			 "judged again with this policy (gpuvet accept --run ID --policy FILE); fleet threshold not applied",
			 (int)(has - t), t, lost, p->name);
		json_array_set_new(json_object_get(res, "notes"), i, json_string(msg));
	}
}

int accept_judge(struct store *s, int64_t run_id, const struct policy *p, json_t *fp, const json_t *run_flags,
		 int json, FILE *out)
{
	json_t *res, *fleet = NULL;
	if (policy_needs_fleet(p))
		fleet = load_fleet(s, run_id, fp, p->digest);
	enum policy_verdict v = policy_evaluate_flags(p, fp, fleet, run_flags, &res);
	if (fleet)
		name_lost_baseline(s, p, fp, res);
	json_t *run = json_object_get(fp, "run");
	json_object_set_new(res, "run", json_pack("{s:I,s:O?,s:O?,s:O?,s:O?,s:O?}", "id", (json_int_t)run_id,
		"uuid", json_object_get(run, "uuid"), "hostname", json_object_get(run, "hostname"),
		"gpu_model", json_object_get(run, "gpu_model"), "gpu_count", json_object_get(run, "gpu_count"),
		"instance_type", json_object_get(run, "instance_type")));
	json_object_set_new(res, "exit_code", json_integer((int)v));
	char *detail = json_dumps(res, JSON_COMPACT | JSON_REAL_PRECISION(17));
	int unrecorded = !detail || store_put_verdict(s, run_id, policy_verdict_name(v), p->name, p->digest, p->source,
								   detail);
	char why[600];
	snprintf(why, sizeof why, "%s", !unrecorded ? "" : !detail ? "out of memory" :
		 store_is_readonly(s) ? "the store can only be read here" : store_errmsg(s));
	free(detail);
	if (!unrecorded) {   /* the fingerprint in hand holds it as one loaded from the store would */
		char at[32];
		gv_iso8601((long)time(NULL), at, sizeof at);
		if (!json_is_array(json_object_get(fp, "verdicts")))
			json_object_set_new(fp, "verdicts", json_array());
		json_array_append_new(json_object_get(fp, "verdicts"),
				      json_pack("{s:s,s:s,s:s,s:O,s:s,s:s,s:b}", "verdict", policy_verdict_name(v), "policy",
						p->name, "at", at, "detail", res, "policy_digest", p->digest, "policy_source",
						p->source, "imported", 0));
	}
	if (json) {
		json_dumpf(res, out, JSON_INDENT(2) | JSON_REAL_PRECISION(10));
		fputc('\n', out);
	} else {
		int had_id = json_object_get(run, "id") != NULL;   /* the text names the run by number */
		json_object_set_new(run, "id", json_integer(run_id));
		print_text(out, fp, res);
		if (!had_id)
			json_object_del(run, "id");
	}
	json_decref(res);
	json_decref(fleet);
	if (unrecorded) {   /* said after the verdict, and in the exit code: a script must not take it as stored */
		fflush(out);
		gv_err("the verdict was not recorded in the store: %s", why);
	}
	return unrecorded ? GV_EXIT_USAGE : (int)v;
}

int accept_run(struct store *s, int64_t run_id, const char *policy_path, const json_t *run_flags, int json,
	       const char *picked, FILE *out)
{
	struct policy *p;
	char err[512];
	json_t *fp;
	int rc = policy_load(policy_path, &p, err, sizeof err);
	if (rc == -2) {
		gv_err("cannot read policy '%s': %s", policy_path, err);
		return GV_EXIT_USAGE;
	}
	if (rc) {
		gv_err("policy '%s': %s", policy_path ? policy_path : "built-in", err);
		return GV_EXIT_USAGE;
	}
	if (!(fp = derive_load(s, run_id, STORE_RUN_ALL))) {   /* judged on what gpuvet derives from its evidence */
		gv_err("%s", store_errmsg(s));
		policy_free(p);
		return GV_EXIT_USAGE;
	}
	if (picked && !json)
		fprintf(out, "judging run %lld, %s (docs/acceptance.md)\n", (long long)run_id, picked);
	rc = accept_judge(s, run_id, p, fp, run_flags, json, out);
	json_decref(fp);
	policy_free(p);
	return rc;
}
