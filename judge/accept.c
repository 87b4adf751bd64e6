/*
 * accept.c - the acceptance gate as a library (accept.h): `gpuvet accept`
 * (cmd_accept.c) and `gpuvet run --accept` (hooks.c) both call accept_run().
 */
#include "judge/accept.h"
#include "judge/policy.h"
#include "judge/derive.h"
#include "results/fprun.h"
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

/*
 * prefix then text ("        threshold: TEXT", "  note: TEXT"), broken at spaces so no line passes 160 columns (the
 * terminal promise); the continuation lines indented under TEXT.
 */
static void print_wrapped(FILE *out, const char *prefix, const char *text)
{
	const size_t width = 160, indent = strlen(prefix);
	size_t col = indent;
	fputs(prefix, out);
	text += strspn(text, " ");
	while (*text) {
		size_t w = strcspn(text, " ");
		if (col > indent && col + 1 + w > width) {
			fprintf(out, "\n%*s", (int)indent, "");
			col = indent;
		} else if (col > indent) {
			fputc(' ', out);
			col++;
		}
		fwrite(text, 1, w, out);
		col += w;
		text += w;
		text += strspn(text, " ");
	}
	fputc('\n', out);
}

static void print_detail(FILE *out, const char *label, const char *text)
{
	char prefix[64];
	snprintf(prefix, sizeof prefix, "        %s: ", label);
	print_wrapped(out, prefix, text);
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

static const char *or_empty(const char *s)
{
	return s ? s : "";
}

static void print_text(FILE *out, const struct fprun *r, int64_t run_id, const json_t *res)
{
	const struct fp_head *run = &r->run;
	const json_t *failed = json_object_get(res, "failed"), *unm = json_object_get(res, "unmeasurable");
	const json_t *root = root_cause(unm);
	const char *verdict = jstr(res, "verdict");
	char why[768];
	size_t i;
	json_t *e;
	/* the host named as one ("on host vm"), never a bare word that reads as a label; the model and the
	 * count gpuvet derived (judge/derive.h), one of each */
	fprintf(out, "run %lld (%.8s) on host %s: %d x %s%s%s%s%s\npolicy %s (%s, %.19s)\n", (long long)run_id,
		or_empty(run->uuid), run->hostname && *run->hostname ? run->hostname : "(unnamed)", r->d.ngpu,
		r->d.model ? r->d.model->key : "unknown GPU", run->provider && *run->provider ? ", " : "",
		or_empty(run->provider), run->instance_type && *run->instance_type ? " " : "", or_empty(run->instance_type),
		jstr(res, "policy"), jstr(res, "policy_source"), jstr(res, "policy_digest"));
	accept_reason_sentence(res, verdict, why, sizeof why);
	if (!strcmp(verdict, "accept") && json_array_size(json_object_get(res, "tolerated")))
		fprintf(out, "ACCEPT: %zu check(s) passed; %s\n", json_array_size(json_object_get(res, "passed")), why);
	else if (!strcmp(verdict, "accept"))
		fprintf(out, "ACCEPT: %zu check(s) passed\n", json_array_size(json_object_get(res, "passed")));
	else if (!strcmp(verdict, "reject"))
		fprintf(out, "REJECT: %zu check(s) failed\n", json_array_size(failed));
	else
		fprintf(out, "UNMEASURABLE: %s\n", why);
	json_array_foreach(failed, i, e) {
		if (json_object_get(e, "flag")) {
			fprintf(out, "  FAIL  flag %s (%s): %s\n", jstr(e, "flag"), jstr(e, "severity"), jstr(e, "message"));
			print_detail(out, "threshold", jstr(e, "source"));
			if (*jstr(e, "remediation"))
				fprintf(out, "        what to do: %s\n", jstr(e, "remediation"));
		} else if (!strcmp(jstr(e, "kind"), "bench")) {
			fprintf(out, "  FAIL  %s (", jstr(e, "metric"));
			print_gpu(out, e);
			fprintf(out, "): %s\n", jstr(e, "reason"));
			print_detail(out, "threshold", jstr(e, "source"));
		} else {
			fprintf(out, "  FAIL  %s (", jstr(e, "metric"));
			print_gpu(out, e);
			fprintf(out, ") = %.4g %s, needs %s %.4g %s\n", json_number_value(json_object_get(e, "value")),
				jstr(e, "unit"), jstr(e, "op"), json_number_value(json_object_get(e, "threshold")), jstr(e, "unit"));
			print_detail(out, "threshold", jstr(e, "source"));
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
		print_wrapped(out, "  note: ", json_string_value(e));
	if (strcmp(verdict, "accept"))
		fprintf(out, "  %zu check(s) passed\n", json_array_size(json_object_get(res, "passed")));
}

/* The other runs of the same SKU accepted here, derived, without their series (*n of them). */
static struct fprun **load_fleet(struct store *s, int64_t run_id, const struct fprun *fp, const char *digest, size_t *n)
{
	int64_t *ids = NULL;
	size_t nids = 0;
	struct fprun **fleet = NULL;
	const struct gpu_ref *model = fp->d.model;   /* the resolved model: stored runs carry its key */
	int scan = store_fleet_candidates(s, run_id, digest, model ? model->key : "", fp->d.ngpu, fp->run.instance_type,
					  &ids, &nids) != 0;
	*n = 0;
	if (scan && store_list_runs(s, &ids, &nids)) {
		gv_debug("fleet baseline unavailable: %s", store_errmsg(s));
		return NULL;
	}
	gv_debug("fleet baseline: %zu candidate run(s)%s", nids, scan ? " (full scan)" : "");
	fleet = gv_calloc(nids ? nids : 1, sizeof *fleet);
	for (size_t i = 0; i < nids; i++) {
		struct fprun *o;
		if (ids[i] == run_id || derive_load_run(s, ids[i], STORE_RUN_NO_SERIES | STORE_RUN_NO_FLAGS, &o))
			continue;
		if (policy_same_fleet_run(fp, o, digest))
			fleet[(*n)++] = o;
		else
			fprun_free(o);
	}
	free(ids);
	return fleet;
}

/*
 * A fleet baseline an upgrade lost is named, not the routine "fewer than N":
 * accepts an earlier gpuvet stored by this policy's name without its text
 * (schema 5 or older) count for nothing until the runs are judged again.
 */
static void name_lost_baseline(struct store *s, const struct policy *p, const struct fprun *fp, json_t *res)
{
	long long lost = 0;
	size_t i;
	json_t *n;
	json_array_foreach(json_object_get(res, "notes"), i, n) {
		const char *t = json_string_value(n), *has = t ? strstr(t, " has ") : NULL;
		char msg[512];
		if (!has || !strstr(t, "fleet threshold not applied"))
			continue;
		if (!lost && (store_legacy_accepts(s, p->name, p->digest, fp->run.gpu_model, fp->d.ngpu, &lost) || !lost))
			return;
		snprintf(msg, sizeof msg, "%.*s lost in an upgrade: %lld run(s) of this instance type accepted by policy '%s' under "
			 "an earlier gpuvet, whose store kept no policy text with its verdicts, count for nothing until "
			 "judged again with this policy (gpuvet accept --run ID --policy FILE); fleet threshold not applied",
			 (int)(has - t), t, lost, p->name);
		json_array_set_new(json_object_get(res, "notes"), i, json_string(msg));
	}
}

/* The verdict recorded in the store; 0, or -1 with why (the verdict still printed, the exit code 2). */
static int record(struct store *s, int64_t run_id, const struct policy *p, enum policy_verdict v, const json_t *res,
		  char *why, size_t whylen)
{
	char *detail = json_dumps(res, JSON_COMPACT | JSON_REAL_PRECISION(17));
	int unrecorded = !detail || store_put_verdict(s, run_id, policy_verdict_name(v), p->name, p->digest, p->source,
						       detail);
	snprintf(why, whylen, "%s", !unrecorded ? "" : !detail ? "out of memory" :
		 store_is_readonly(s) ? "the store can only be read here" : store_errmsg(s));
	free(detail);
	return unrecorded ? -1 : 0;
}

int accept_judge_run(struct store *s, int64_t run_id, const struct policy *p, struct fprun *fp, const json_t *run_flags,
		     int json, FILE *out, json_t **verdict)
{
	json_t *res;
	struct fprun **fleet = NULL;
	size_t nfleet = 0;
	if (policy_needs_fleet(p))
		fleet = load_fleet(s, run_id, fp, p->digest, &nfleet);
	enum policy_verdict v = policy_evaluate_run(p, fp, fleet, nfleet, run_flags, &res);
	if (fleet)
		name_lost_baseline(s, p, fp, res);
	for (size_t i = 0; i < nfleet; i++)
		fprun_free(fleet[i]);
	free(fleet);
	json_object_set_new(res, "run", json_pack("{s:I,s:s?,s:s?,s:s?,s:i,s:s?}", "id", (json_int_t)run_id,
		"uuid", fp->run.uuid, "hostname", fp->run.hostname,
		"gpu_model", fp->d.model ? fp->d.model->key : fp->run.gpu_model, "gpu_count", fp->d.ngpu,
		"instance_type", fp->run.instance_type));
	json_object_set_new(res, "exit_code", json_integer((int)v));
	char why[600];
	int unrecorded = record(s, run_id, p, v, res, why, sizeof why);
	if (json) {
		json_dumpf(res, out, JSON_INDENT(2) | JSON_REAL_PRECISION(10));
		fputc('\n', out);
	} else {
		print_text(out, fp, run_id, res);
	}
	if (verdict && !unrecorded)
		*verdict = json_incref(res);
	json_decref(res);
	if (unrecorded) {   /* said after the verdict, and in the exit code: a script must not take it as stored */
		fflush(out);
		gv_err("the verdict was not recorded in the store: %s", why);
	}
	return unrecorded ? GV_EXIT_USAGE : (int)v;
}

int accept_judge(struct store *s, int64_t run_id, const struct policy *p, json_t *fp, const json_t *run_flags,
		 int json, FILE *out)
{
	struct fprun *r = derive_from_json(fp);
	json_t *res = NULL;
	if (!r)
		r = fprun_new();
	int rc = accept_judge_run(s, run_id, p, r, run_flags, json, out, &res);
	fprun_free(r);
	if (res) {   /* the fingerprint in hand holds it as one loaded from the store would */
		char at[32];
		gv_iso8601((long)time(NULL), at, sizeof at);
		if (!json_is_array(json_object_get(fp, "verdicts")))
			json_object_set_new(fp, "verdicts", json_array());
		json_array_append_new(json_object_get(fp, "verdicts"),
				      json_pack("{s:s,s:s,s:s,s:O,s:s,s:s,s:b}", "verdict", jstr(res, "verdict"), "policy",
						p->name, "at", at, "detail", res, "policy_digest", p->digest, "policy_source",
						p->source, "imported", 0));
		json_decref(res);
	}
	return rc;
}

int accept_run(struct store *s, int64_t run_id, const char *policy_path, const json_t *run_flags, int json,
	       const char *picked, FILE *out, json_t **verdict)
{
	struct policy *p;
	char err[512];
	struct fprun *r;
	int rc = policy_load(policy_path, &p, err, sizeof err);
	if (rc == -2) {
		gv_err("cannot read policy '%s': %s", policy_path, err);
		return GV_EXIT_USAGE;
	}
	if (rc) {
		gv_err("policy '%s': %s", policy_path ? policy_path : "built-in", err);
		return GV_EXIT_USAGE;
	}
	if (derive_load_run(s, run_id, STORE_RUN_ALL, &r)) {   /* judged on what gpuvet derives, an old run's too */
		gv_err("%s", store_errmsg(s));
		policy_free(p);
		return GV_EXIT_USAGE;
	}
	if (picked && !json)
		fprintf(out, "judging run %lld, %s (docs/acceptance.md)\n", (long long)run_id, picked);
	rc = accept_judge_run(s, run_id, p, r, run_flags, json, out, verdict);
	fprun_free(r);
	policy_free(p);
	return rc;
}
