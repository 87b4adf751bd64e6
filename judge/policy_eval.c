/*
 * policy_eval.c - a policy judged on a run (policy.h policy_evaluate_run): each
 * rule on the metric it names, against its absolute, reference and fleet
 * thresholds, then the flags (policy_flags.c).  It reads the typed run
 * (results/fprun.h) that derive() has derived (judge/derive.h): the model, the
 * GPU count and a bench's timing class are gpuvet's, never a file's.  Its
 * verdict is a JSON object (policy.h), what the store keeps and scripts read.
 */
#include "judge/policy.h"
#include "judge/policy_int.h"
#include "benches/bench.h"
#include "results/fprun.h"
#include "common/gpus.h"
#include "common/stats.h"
#include "common/util.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/*
 * Reference value of a metric for a model, in the metric's unit; 0 when
 * there is none.  The rule is the peak rule of the metric's row, declared
 * beside its bench (benches/bench.h, enum metric_peak).
 */
static double metric_reference(const char *m, int gpu, int ngpu, const struct gpu_ref *ref, char *desc, size_t dlen)
{
	const struct metric_info *mi = metric_info_find(m);
	double link;
	switch (mi ? mi->peak : METRIC_PEAK_NONE) {
	case METRIC_PEAK_PERCENT:
		snprintf(desc, dlen, "100%% (the metric is already relative to the reference)");
		return 100.0;
	case METRIC_PEAK_GEMM: {
		/* the model's one reference (common/gpus.h), per GPU; the instance row counts the run's GPUs */
		enum gpu_ref_kind kind;
		double per;
		int n = gpu < 0 ? (ngpu > 0 ? ngpu : 1) : 1;
		if (!ref || gpu_reference_metric(ref->key, m, &per, &kind, NULL))
			return 0;
		snprintf(desc, dlen, "%s reference %.4g TFLOP/s (%s) x %d gpu(s)", ref->key, per, gpu_ref_kind_name(kind),
			 n);
		return per * n;
	}
	case METRIC_PEAK_PCIE:
	case METRIC_PEAK_PCIE_BIDIR:
		link = ref ? gpu_pcie_link_gbps(ref->pcie_gen, ref->pcie_width) : 0;
		if (!(link > 0))
			return 0;
		snprintf(desc, dlen, "%s pcie gen%d x%d %.4g GB/s%s", ref->key, ref->pcie_gen, ref->pcie_width, link,
			 mi->peak == METRIC_PEAK_PCIE_BIDIR ? " x 2 directions" : "");
		return mi->peak == METRIC_PEAK_PCIE_BIDIR ? 2 * link : link;
	case METRIC_PEAK_NVLINK:
		if (!ref || !(ref->nvlink_gbps > 0))
			return 0;
		snprintf(desc, dlen, "%s nvlink %.4g GB/s per direction", ref->key, ref->nvlink_gbps / 2);
		return ref->nvlink_gbps / 2;
	default:
		return 0;
	}
}

static int str_eq(const char *a, const char *b)
{
	return a && b && !strcmp(a, b);
}

/* Whether digest is the built-in policy's text's (computed once). */
static int builtin_digest(const char *digest)
{
	static char d[POLICY_DIGEST_LEN];
	if (!d[0])
		policy_digest_of(policy_default_text(), strlen(policy_default_text()), d);
	return str_eq(d, digest);
}

/*
 * Accepted here by the policy of this digest, and never judged otherwise by
 * it: an imported verdict (judged elsewhere, by whatever binary) and a
 * verdict of another policy count for nothing.  For the built-in policy, a
 * run an earlier version's built-in rejected or could not measure (a verdict
 * of schema 5 or older: named "default", no digest) stays out whatever it
 * is judged now: an upgrade never turns the runs the gate refused into the
 * baseline it judges others by (accept_legacy.c).
 */
static int accepted(const struct fprun *r, const char *digest)
{
	int acc = 0, builtin = builtin_digest(digest);
	for (size_t i = 0; i < r->nverdicts; i++) {
		const struct fp_verdict *v = &r->verdicts[i];
		if (v->imported)
			continue;
		if (builtin && (!v->digest || !*v->digest) && str_eq(v->policy, POLICY_BUILTIN_NAME) &&
		    !str_eq(v->verdict, "accept"))
			return 0;
		if (!str_eq(v->digest, digest))
			continue;
		if (!str_eq(v->verdict, "accept"))
			return 0;
		acc = 1;
	}
	return acc;
}

/* One instance type however it is spelled: white space around it and case are not the SKU ("P5.48XLARGE "). */
static int same_sku(const char *a, const char *b)
{
	while (isspace((unsigned char)*a))
		a++;
	while (isspace((unsigned char)*b))
		b++;
	size_t na = strlen(a), nb = strlen(b);
	while (na && isspace((unsigned char)a[na - 1]))
		na--;
	while (nb && isspace((unsigned char)b[nb - 1]))
		nb--;
	return na == nb && !strncasecmp(a, b, na);
}

int policy_same_fleet_run(const struct fprun *fp, const struct fprun *other, const char *digest)
{
	/* the model each run's devices resolve to (derive()), never its label: "h100-sxm" and "H100-SXM5" are one H100 */
	const struct gpu_ref *m1 = fp->d.model, *m2 = other->d.model;
	const char *i1 = fp->run.instance_type, *i2 = other->run.instance_type;
	const char *u1 = fp->run.uuid, *u2 = other->run.uuid;
	if (!m1 || m1 != m2 || fp->d.ngpu != other->d.ngpu)
		return 0;
	if (i1 && i2 && !same_sku(i1, i2))
		return 0;
	if (str_eq(u1, u2) || fp == other)
		return 0;
	return accepted(other, digest);
}

static json_t *check_obj(const struct policy_rule *r, const char *metric, int gpu, double value, const char *unit,
			 const char *op, double threshold, const char *kind, const char *source)
{
	return json_pack("{s:i,s:s,s:i,s:f,s:s,s:s,s:f,s:s,s:s}", "rule_line", r->line, "metric", metric, "gpu", gpu,
			 "value", value, "unit", unit ? unit : "", "op", op, "threshold", threshold, "kind", kind,
			 "source", source);
}

static void judge(json_t *res, json_t *check, int pass)
{
	json_array_append_new(json_object_get(res, pass ? "passed" : "failed"), check);
}

static void note(json_t *res, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(json_t *res, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	size_t i;
	json_t *n;
	json_array_foreach(json_object_get(res, "notes"), i, n)   /* a rule judged per GPU notes once */
		if (!strcmp(json_string_value(n), msg))
			return;
	json_array_append_new(json_object_get(res, "notes"), json_string(msg));
}

/* The timing class derive() found in the rows of the bench of metric ("steady"), NULL for none. */
static const char *bench_timing(const struct fprun *r, const char *metric)
{
	size_t len = strcspn(metric, ".");
	for (size_t i = 0; i < r->nbenches; i++) {
		const char *n = r->benches[i].name;
		if (n && strlen(n) == len && !strncmp(n, metric, len))
			return r->benches[i].timing;
	}
	return NULL;
}

/*
 * Whether two runs timed metric `name` the same way, by the class derive()
 * found in each run's rows (judge/derive.c timing_rows: steady-timed GEMM rows
 * carry their window's parameters, burst-timed ones their repetitions; their
 * figures sit about 5 % apart on a power-capped GPU), never by what a file's
 * config says.  A run whose rows show no class is compared with every run:
 * removing the evidence never takes a run out of its fleet.
 */
static int same_timing(const struct fprun *fp, const struct fprun *other, const char *name)
{
	const char *a = bench_timing(fp, name), *b = bench_timing(other, name);
	return !a || !b || !strcmp(a, b);
}

/*
 * A rule the run cannot be judged on (policy_rule_metric says why): a failed
 * check when its bench failed, else a note when optional, else unmeasurable.
 */
static void rule_unmeasured(const struct policy *p, const struct policy_rule *r, int gpu, const char *metric,
			    const char *why, int failed, json_t *res)
{
	if (failed) {
		char src[160];
		snprintf(src, sizeof src, "policy %s, rule %s: a rule whose bench failed fails (no fallback)", p->name,
			 r->metrics[0]);
		json_array_append_new(json_object_get(res, "failed"),
			json_pack("{s:i,s:s,s:i,s:s,s:s,s:s}", "rule_line", r->line, "metric", metric, "gpu", gpu,
				  "kind", "bench", "reason", why, "source", src));
		return;
	}
	if (r->optional) {
		char where[24] = "all gpus";
		if (gpu >= 0)
			snprintf(where, sizeof where, "gpu %d", gpu);
		note(res, "rule %s: %s (%s) not measured (%s); optional", r->metrics[0], metric, where, why);
		return;
	}
	json_t *alts = json_array();
	for (int i = 0; i < r->nmetrics; i++)
		json_array_append_new(alts, json_string(r->metrics[i]));
	json_array_append_new(json_object_get(res, "unmeasurable"),
		json_pack("{s:i,s:s,s:o,s:i,s:s}", "rule_line", r->line, "metric", metric, "alternatives",
			  alts, "gpu", gpu, "reason", why));
}

/* The fleet's runs that judge this rule: accepted of the same SKU, timed the same way, with a value; their count. */
static size_t fleet_values(const struct policy *p, struct fprun *fp, struct fprun *const *fleet, size_t nfleet,
			   const char *name, int gpu, double *vals, json_t *runs)
{
	size_t k = 0;
	for (size_t i = 0; i < nfleet; i++) {
		struct fprun *o = fleet[i];
		double ov;
		if (policy_same_fleet_run(fp, o, p->digest) && same_timing(fp, o, name) && !fprun_value(o, name, gpu, &ov) &&
		    isfinite(ov)) {
			vals[k++] = ov;
			json_array_append_new(runs, json_pack("{s:I,s:s?}", "id", (json_int_t)o->run.id, "uuid", o->run.uuid));
		}
	}
	return k;
}

/* The rule's thresholds against the median of accepted runs of the same SKU, timed the same way. */
static void rule_fleet(const struct policy *p, const struct policy_rule *r, int gpu, struct fprun *fp,
		       struct fprun *const *fleet, size_t nfleet, const char *name, double v, const char *unit, json_t *res)
{
	char src[512];
	json_t *runs = json_array();
	double *vals = gv_malloc((nfleet ? nfleet : 1) * sizeof *vals);
	size_t k = fleet_values(p, fp, fleet, nfleet, name, gpu, vals, runs);
	if ((int)k >= p->fleet_min_runs) {
		double med = gv_median(vals, k), lo = vals[0], hi = vals[0];
		for (size_t j = 1; j < k; j++) {
			lo = vals[j] < lo ? vals[j] : lo;
			hi = vals[j] > hi ? vals[j] : hi;
		}
		/* run-to-run spread of the metric across the fleet, stored with the verdict */
		double spread = med != 0 ? (hi - lo) / fabs(med) : 0;
		double margin = r->has_fleet_min ? 1 - r->fleet_min : r->fleet_max - 1;
		if (r->has_fleet_min && r->has_fleet_max && r->fleet_max - 1 < margin)
			margin = r->fleet_max - 1;
		json_array_append_new(json_object_get(res, "fleet"),
			json_pack("{s:s,s:i,s:I,s:f,s:f,s:f,s:f,s:O}", "metric", name, "gpu", gpu, "runs", (json_int_t)k,
				  "median", med, "min", lo, "max", hi, "spread", spread, "baseline_runs", runs));
		if (margin < 3 * spread)
			note(res, "rule %s: the fleet's run-to-run spread of %s is %.1f%%; a %.0f%% margin is "
			     "under 3x that, so noise may reject good machines", r->metrics[0], name, spread * 100,
			     margin * 100);
		const char *it = fp->run.instance_type;
		const char *model = fp->d.model ? fp->d.model->key : NULL;
		if (r->has_fleet_min) {
			snprintf(src, sizeof src, "fleet: median %.4g of %zu accepted run(s) of %s x%d%s%s x %.3g "
				 "(policy %s, rule %s min_fraction_of_fleet %.3g)", med, k, model ? model : "?",
				 fp->d.ngpu, it ? " " : "", it ? it : "", r->fleet_min, p->name, r->metrics[0], r->fleet_min);
			judge(res, check_obj(r, name, gpu, v, unit, ">=", med * r->fleet_min, "fleet", src),
			      v >= med * r->fleet_min);
		}
		if (r->has_fleet_max) {
			snprintf(src, sizeof src, "fleet: median %.4g of %zu accepted run(s) of %s x%d%s%s x %.3g "
				 "(policy %s, rule %s max_fraction_of_fleet %.3g)", med, k, model ? model : "?",
				 fp->d.ngpu, it ? " " : "", it ? it : "", r->fleet_max, p->name, r->metrics[0], r->fleet_max);
			judge(res, check_obj(r, name, gpu, v, unit, "<=", med * r->fleet_max, "fleet", src),
			      v <= med * r->fleet_max);
		}
	} else {
		note(res, "rule %s: fleet baseline for %s has %zu accepted run(s) of this instance type, fewer than %d; "
		     "fleet threshold not applied", r->metrics[0], name, k, p->fleet_min_runs);
	}
	json_decref(runs);
	free(vals);
}

static void eval_rule_gpu(const struct policy *p, const struct policy_rule *r, int gpu, struct fprun *fp,
			  struct fprun *const *fleet, size_t nfleet, json_t *res)
{
	const char *name = NULL;
	char src[512], desc[256], why[300];
	int failed;
	const struct fp_metric *m = policy_rule_metric(r, gpu, fp, &name, why, sizeof why, &failed);
	if (!m) {
		rule_unmeasured(p, r, gpu, name, why, failed, res);
		return;
	}
	double v = m->value;
	const char *unit = m->unit;
	if (r->has_min) {
		snprintf(src, sizeof src, "policy %s, rule %s min %.4g", p->name, r->metrics[0], r->min);
		judge(res, check_obj(r, name, gpu, v, unit, ">=", r->min, "absolute", src), v >= r->min);
	}
	if (r->has_max) {
		snprintf(src, sizeof src, "policy %s, rule %s max %.4g", p->name, r->metrics[0], r->max);
		judge(res, check_obj(r, name, gpu, v, unit, "<=", r->max, "absolute", src), v <= r->max);
	}
	if (r->has_ref_min) {
		if (fp->d.model_state != FP_MODEL_RESOLVED) {
			/* no model, no reference: not measured (exit 3), never skipped with a note */
			rule_unmeasured(p, r, gpu, name, fp->d.model_why, 0, res);
			return;
		}
		double rv = metric_reference(name, gpu, fp->d.ngpu, fp->d.model, desc, sizeof desc);
		if (rv > 0) {
			snprintf(src, sizeof src, "reference: %s x %.3g (policy %s, rule %s min_fraction_of_reference %.3g)",
				 desc, r->ref_min, p->name, r->metrics[0], r->ref_min);
			judge(res, check_obj(r, name, gpu, v, unit, ">=", rv * r->ref_min, "reference", src),
			      v >= rv * r->ref_min);
		} else {
			note(res, "rule %s: no reference for %s on gpu model '%s' (gpuvet knows no published figure "
			     "for it); min_fraction_of_reference not applied", r->metrics[0], name, fp->d.model->key);
		}
	}
	if (r->has_fleet_min || r->has_fleet_max)
		rule_fleet(p, r, gpu, fp, fleet, nfleet, name, v, unit, res);
}

/* What stops any rule from being judged: no GPU at all, or two GPU counts that disagree. */
static void run_unmeasurable(const struct fprun *fp, json_t *res)
{
	if (!fp->inv.ngpus && fp->d.ngpu == 0) {
		const char *e = fp->inv.gpu_error;
		json_array_append_new(json_object_get(res, "unmeasurable"),
			json_pack("{s:i,s:s}", "rule_line", 0, "reason", e ? e : "no gpu visible"));
	}
	if (fp->inv.ngpus && fp->run.gpu_count >= 0 && fp->run.gpu_count != (int)fp->inv.ngpus) {
		char why[160];   /* which count is the machine's is not known: nothing is judged on either */
		snprintf(why, sizeof why, "run.gpu_count %d disagrees with the inventory's %zu gpu(s)", fp->run.gpu_count,
			 fp->inv.ngpus);
		json_array_append_new(json_object_get(res, "unmeasurable"),
			json_pack("{s:i,s:s,s:i,s:s}", "rule_line", 0, "metric", "run.gpu_count", "gpu", -1, "reason", why));
	}
}

enum policy_verdict policy_evaluate_run(const struct policy *p, struct fprun *fp, struct fprun *const *fleet,
					size_t nfleet, const json_t *run_flags, json_t **result)
{
	json_t *res = json_pack("{s:s,s:s,s:s,s:[],s:[],s:[],s:[],s:[],s:[]}", "policy", p->name, "policy_source",
				p->source, "policy_digest", p->digest, "failed", "unmeasurable", "passed", "notes", "fleet",
				"tolerated");
	size_t ndup = policy_fold_duplicates(fp);   /* one row per metric: its worst */
	if (ndup)
		note(res, "%zu metric(s) had more than one row of the same gpu; each is judged at its worst "
		     "row (docs/acceptance.md)", ndup);
	run_unmeasurable(fp, res);
	for (size_t i = 0; i < p->nrules; i++) {
		const struct policy_rule *r = &p->rules[i];
		if (r->gpu == POLICY_GPU_EACH) {
			for (int g = 0; g < fp->d.ngpu; g++)
				eval_rule_gpu(p, r, g, fp, fleet, nfleet, res);
		} else {
			eval_rule_gpu(p, r, r->gpu, fp, fleet, nfleet, res);
		}
	}
	policy_eval_flags(p, fp, run_flags, res);
	enum policy_verdict v = json_array_size(json_object_get(res, "failed")) ? POLICY_REJECT :
				json_array_size(json_object_get(res, "unmeasurable")) ? POLICY_UNMEASURABLE : POLICY_ACCEPT;
	json_object_set_new(res, "verdict", json_string(policy_verdict_name(v)));
	*result = res;
	return v;
}
