/*
 * policy.c - acceptance policy: YAML parsing (libyaml's document API, so
 * every error names its line; the helpers every section's parser shares in
 * policy_util.c) and evaluation against a fingerprint.
 *
 * Format (docs/acceptance.md):
 *   name: STRING                      stored with the verdict
 *   fleet_min_runs: INT               accepted runs of the SKU needed for fleet thresholds (3)
 *   rules:                            each a mapping:
 *     - metric: NAME | [NAME, ...]    the first present in the run is judged
 *       gpu: instance | each | N      -1 headline (default), every GPU, one GPU
 *       min: / max:                   absolute, in the metric's unit
 *       min_fraction_of_reference:    x the model's reference (common/gpus.h)
 *       min_fraction_of_fleet: / max_fraction_of_fleet:
 *                                     x median of accepted runs of the same SKU
 *       optional: true|false          missing metric: note instead of unmeasurable
 *   reject_flags:                     CODE (rejects at warning or worse) or
 *     - {code: CODE, severity: info|warning|critical}
 *   tolerate_flags:                   critical flags let through (every other one rejects)
 *     - {code: CODE, reason: TEXT}
 *   cluster:                          fabric rules of `gpuvet cluster` (policy_cluster.c)
 *
 * A verdict is keyed by the digest of the policy's text (policy_digest_of);
 * the name "default" is the built-in's alone (docs/acceptance.md).
 */
#include "common/embed.h"
#include "judge/policy.h"
#include "judge/policy_int.h"
#include "benches/bench.h"
#include "judge/flags.h"
#include "results/fpq.h"
#include "common/gpus.h"
#include "common/stats.h"
#include "common/util.h"
#include "common/ident.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <yaml.h>

GV_EMBED(policy_default_yaml, "judge/policies/default.yaml");   /* the built-in policy, as the file is */

const char *policy_default_text(void)
{
	return policy_default_yaml;
}

const char *policy_verdict_name(enum policy_verdict v)
{
	return v == POLICY_ACCEPT ? "accept" : v == POLICY_REJECT ? "reject" : "unmeasurable";
}

/* ---- parsing ---- */


/* A typo in a metric name is an input error, not a metric the run could not measure (exit 3). */
#define UNKNOWN_METRIC "unknown metric '%s': no bench reports it (docs/benches.md)"

/*
 * Nesting deeper than POLICY_MAX_DEPTH is refused from the event stream,
 * before libyaml builds a document of it (a deep one is slow to load).
 */
static int check_depth(const char *text, size_t len, char *err, size_t errlen)
{
	yaml_parser_t ps;
	yaml_event_t ev;
	int depth = 0, rc = 0;
	if (!yaml_parser_initialize(&ps))
		return 0;
	yaml_parser_set_input_string(&ps, (const unsigned char *)text, len);
	for (;;) {
		if (!yaml_parser_parse(&ps, &ev))
			break; /* the loader reports the syntax error */
		yaml_event_type_t t = ev.type;
		unsigned long line = (unsigned long)ev.start_mark.line + 1;
		yaml_event_delete(&ev);
		if (t == YAML_SEQUENCE_START_EVENT || t == YAML_MAPPING_START_EVENT) {
			if (++depth > POLICY_MAX_DEPTH) {
				snprintf(err, errlen, "line %lu: nested deeper than %d levels", line, POLICY_MAX_DEPTH);
				rc = -1;
				break;
			}
		} else if (t == YAML_SEQUENCE_END_EVENT || t == YAML_MAPPING_END_EVENT) {
			depth--;
		} else if (t == YAML_STREAM_END_EVENT) {
			break;
		}
	}
	yaml_parser_delete(&ps);
	return rc;
}

static int get_bool(struct pctx *c, const yaml_node_t *n, const char *key, int *out)
{
	const char *s = policy_scalar(n);
	if (s && (!strcmp(s, "true") || !strcmp(s, "yes"))) {
		*out = 1;
		return 0;
	}
	if (s && (!strcmp(s, "false") || !strcmp(s, "no"))) {
		*out = 0;
		return 0;
	}
	return policy_perr(c, n, "'%s' must be true or false", key);
}

static int metric_name_ok(const char *s)
{
	size_t n = strlen(s);
	if (!n || n > 128 || s[0] == '.' || s[n - 1] == '.')
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '.' || s[i] == '_'))
			return 0;
	return 1;
}

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

/* Whether any model could give this metric a reference (parse-time check). */
static int metric_has_reference(const char *m)
{
	const struct metric_info *mi = metric_info_find(m);
	if (!mi || mi->peak == METRIC_PEAK_NONE)
		return 0;
	if (mi->peak == METRIC_PEAK_GEMM) {
		char dt[16];
		return sscanf(m, "gemm.%15[a-z0-9].tflops", dt) == 1 && gpu_dtype_from_name(dt) >= 0;
	}
	return 1;
}

static int parse_rule(struct pctx *c, yaml_node_t *n, struct policy_rule *r)
{
	yaml_node_pair_t *pair;
	memset(r, 0, sizeof *r);
	r->gpu = -1;
	r->line = (int)n->start_mark.line + 1;
	if (n->type != YAML_MAPPING_NODE)
		return policy_perr(c, n, "a rule must be a mapping with 'metric' and thresholds");
	if (policy_dup_keys(c, n))
		return -1;
	for (pair = n->data.mapping.pairs.start; pair < n->data.mapping.pairs.top; pair++) {
		yaml_node_t *k, *v;
		const char *key = policy_pair_kv(c, pair, &k, &v);
		if (!key)
			return policy_perr(c, k, "rule keys must be plain words");
		if (!strcmp(key, "metric")) {
			if (r->nmetrics)
				return policy_perr(c, k, "'metric' given twice");
			if (v->type == YAML_SEQUENCE_NODE) {
				yaml_node_item_t *it;
				for (it = v->data.sequence.items.start; it < v->data.sequence.items.top; it++) {
					yaml_node_t *e = yaml_document_get_node(c->doc, *it);
					if (r->nmetrics >= POLICY_MAX_ALTS)
						return policy_perr(c, e, "at most %d metric alternatives", POLICY_MAX_ALTS);
					if (!policy_scalar(e) || !metric_name_ok(policy_scalar(e)))
						return policy_perr(c, e, "not a metric name (dotted, lowercase)");
					if (!metric_info_find(policy_scalar(e)))
						return policy_perr(c, e, UNKNOWN_METRIC, policy_scalar(e));
					r->metrics[r->nmetrics++] = gv_strdup(policy_scalar(e));
				}
				if (!r->nmetrics)
					return policy_perr(c, v, "'metric' list is empty");
			} else {
				if (!policy_scalar(v) || !metric_name_ok(policy_scalar(v)))
					return policy_perr(c, v, "not a metric name (dotted, lowercase)");
				if (!metric_info_find(policy_scalar(v)))
					return policy_perr(c, v, UNKNOWN_METRIC, policy_scalar(v));
				r->metrics[r->nmetrics++] = gv_strdup(policy_scalar(v));
			}
		} else if (!strcmp(key, "gpu")) {
			const char *s = policy_scalar(v);
			long g;
			if (s && !strcmp(s, "instance"))
				r->gpu = -1;
			else if (s && !strcmp(s, "each"))
				r->gpu = POLICY_GPU_EACH;
			else if (s && !gv_parse_long(s, -1, 4095, &g))
				r->gpu = (int)g;
			else
				return policy_perr(c, v, "'gpu' must be instance, each or a gpu index");
		} else if (!strcmp(key, "min")) {
			if (policy_get_number(c, v, key, &r->min))
				return -1;
			r->has_min = 1;
		} else if (!strcmp(key, "max")) {
			if (policy_get_number(c, v, key, &r->max))
				return -1;
			r->has_max = 1;
		} else if (!strcmp(key, "min_fraction_of_reference")) {
			if (policy_get_number(c, v, key, &r->ref_min))
				return -1;
			if (r->ref_min <= 0 || r->ref_min > 10)
				return policy_perr(c, v, "'%s' must be in (0, 10]", key);
			r->has_ref_min = 1;
		} else if (!strcmp(key, "min_fraction_of_fleet") || !strcmp(key, "max_fraction_of_fleet")) {
			int is_min = key[1] == 'i';
			double f;
			if (policy_get_number(c, v, key, &f))
				return -1;
			if (f <= 0 || f > 10)
				return policy_perr(c, v, "'%s' must be in (0, 10]", key);
			if (is_min) {
				r->fleet_min = f;
				r->has_fleet_min = 1;
			} else {
				r->fleet_max = f;
				r->has_fleet_max = 1;
			}
		} else if (!strcmp(key, "optional")) {
			if (get_bool(c, v, key, &r->optional))
				return -1;
		} else {
			return policy_perr(c, k, "unknown rule key '%s' (metric, gpu, min, max, min_fraction_of_reference, "
				    "min_fraction_of_fleet, max_fraction_of_fleet, optional)", key);
		}
	}
	if (!r->nmetrics)
		return policy_perr(c, n, "rule without 'metric'");
	if (!r->has_min && !r->has_max && !r->has_ref_min && !r->has_fleet_min && !r->has_fleet_max)
		return policy_perr(c, n, "rule for '%s' has no threshold", r->metrics[0]);
	if (r->has_min && r->has_max && r->min > r->max)
		return policy_perr(c, n, "min %g is above max %g", r->min, r->max);
	if (r->has_ref_min)
		for (int i = 0; i < r->nmetrics; i++)
			if (!metric_has_reference(r->metrics[i]))
				return policy_perr(c, n, "metric '%s' has no reference value: use min/max or a fleet threshold",
					    r->metrics[i]);
	return 0;
}

static int parse_flag(struct pctx *c, yaml_node_t *n, struct policy_flag *f)
{
	const char *code = policy_scalar(n), *sev = "warning";
	f->line = (int)n->start_mark.line + 1;
	if (n->type == YAML_MAPPING_NODE) {
		yaml_node_pair_t *pair;
		code = NULL;
		if (policy_dup_keys(c, n))
			return -1;
		for (pair = n->data.mapping.pairs.start; pair < n->data.mapping.pairs.top; pair++) {
			yaml_node_t *k, *v;
			const char *key = policy_pair_kv(c, pair, &k, &v);
			if (key && !strcmp(key, "code") && policy_scalar(v))
				code = policy_scalar(v);
			else if (key && !strcmp(key, "severity") && policy_scalar(v))
				sev = policy_scalar(v);
			else
				return policy_perr(c, k, "a flag entry takes 'code' and 'severity'");
		}
	}
	if (!code)
		return policy_perr(c, n, "flag entry without a code");
	if (!flags_code_known(code))
		return policy_perr(c, n, "unknown flag '%s'", code);
	f->min_severity = gv_severity_rank(sev);
	if (f->min_severity < 0)
		return policy_perr(c, n, "severity must be info, warning or critical, not '%s'", sev);
	f->code = gv_strdup(code);
	return 0;
}

/* {code: CODE, reason: TEXT}: a critical flag the policy lets through, never without a reason. */
static int parse_tolerate(struct pctx *c, yaml_node_t *n, struct policy_tolerate *t)
{
	const char *code = NULL, *reason = NULL;
	t->line = (int)n->start_mark.line + 1;
	if (n->type != YAML_MAPPING_NODE || policy_dup_keys(c, n))
		return n->type != YAML_MAPPING_NODE ? policy_perr(c, n, "a tolerate_flags entry is {code: CODE, reason: TEXT}") : -1;
	for (yaml_node_pair_t *pair = n->data.mapping.pairs.start; pair < n->data.mapping.pairs.top; pair++) {
		yaml_node_t *k, *v;
		const char *key = policy_pair_kv(c, pair, &k, &v);
		if (key && !strcmp(key, "code") && policy_scalar(v))
			code = policy_scalar(v);
		else if (key && !strcmp(key, "reason") && policy_scalar(v))
			reason = policy_scalar(v);
		else
			return policy_perr(c, k, "a tolerate_flags entry takes 'code' and 'reason'");
	}
	if (!code || !flags_code_known(code))
		return policy_perr(c, n, code ? "unknown flag '%s'" : "tolerate_flags entry without a code%s", code ? code : "");
	/* a reason is read by whoever finds the flag let through: at least one word, one line, no hidden text */
	if (!reason)
		return policy_perr(c, n, "tolerating %s needs a 'reason' (a line of text saying why)", code);
	if (ident_check(reason))
		return policy_perr(c, n, "the reason for tolerating %s %s", code, ident_check(reason));
	if (strlen(reason) > 200)
		return policy_perr(c, n, "the reason for tolerating %s is longer than 200 bytes: say it in one line", code);
	if (!ident_words(reason))
		return policy_perr(c, n, "the reason for tolerating %s holds no word (only spaces or invisible characters): "
			    "say in a line of text why", code);
	t->code = gv_strdup(code);
	t->reason = gv_strdup(reason);
	return 0;
}

/* Each list of the policy: rules, reject_flags or tolerate_flags. */
static int parse_list(struct pctx *c, yaml_node_t *k, yaml_node_t *v, const char *key, struct policy *p)
{
	int which = !strcmp(key, "rules") ? 0 : !strcmp(key, "reject_flags") ? 1 : 2;
	if (v->type != YAML_SEQUENCE_NODE)
		return policy_perr(c, v, "'%s' must be a list", key);
	if (which == 0 ? p->rules != NULL : which == 1 ? p->flags != NULL : p->tolerated != NULL)
		return policy_perr(c, k, "'%s' given twice", key);
	size_t n = (size_t)(v->data.sequence.items.top - v->data.sequence.items.start);
	if (n > POLICY_MAX_RULES)
		return policy_perr(c, v, "at most %d entries in '%s'", POLICY_MAX_RULES, key);
	if (which == 0)
		p->rules = gv_calloc(n ? n : 1, sizeof *p->rules);
	else if (which == 1)
		p->flags = gv_calloc(n ? n : 1, sizeof *p->flags);
	else
		p->tolerated = gv_calloc(n ? n : 1, sizeof *p->tolerated);
	for (size_t i = 0; i < n; i++) {
		yaml_node_t *e = yaml_document_get_node(c->doc, v->data.sequence.items.start[i]);
		int rc = which == 0 ? (p->nrules++, parse_rule(c, e, &p->rules[i])) :
			 which == 1 ? (p->nflags++, parse_flag(c, e, &p->flags[i])) :
				      (p->ntolerated++, parse_tolerate(c, e, &p->tolerated[i]));
		if (rc)
			return -1;
	}
	return 0;
}

/* A code both rejected and tolerated is a contradiction, refused. */
static int check_tolerated(struct pctx *c, yaml_node_t *root, const struct policy *p)
{
	for (size_t i = 0; i < p->ntolerated; i++)
		for (size_t j = 0; j < p->nflags; j++)
			if (!strcmp(p->tolerated[i].code, p->flags[j].code)) {
				snprintf(c->err, c->errlen, "line %d: %s is both in reject_flags (line %d) and tolerated",
					 p->tolerated[i].line, p->flags[j].code, p->flags[j].line);
				return -1;
			}
	(void)root;
	return 0;
}

static int parse_root(struct pctx *c, yaml_node_t *root, struct policy *p)
{
	yaml_node_pair_t *pair;
	if (!root)
		return policy_perr(c, NULL, "empty policy");
	if (root->type != YAML_MAPPING_NODE)
		return policy_perr(c, root, "a policy is a mapping with 'rules' and/or 'reject_flags'");
	if (policy_dup_keys(c, root))
		return -1;
	for (pair = root->data.mapping.pairs.start; pair < root->data.mapping.pairs.top; pair++) {
		yaml_node_t *k, *v;
		const char *key = policy_pair_kv(c, pair, &k, &v);
		if (!key)
			return policy_perr(c, k, "top-level keys must be plain words");
		if (!strcmp(key, "name")) {
			const char *s = policy_scalar(v);
			if (!s || !*s || strlen(s) > 64)
				return policy_perr(c, v, "'name' must be a short string");
			char folded[256];
			const char *bad = ident_fold(s, folded, sizeof folded);
			if (bad)
				return policy_perr(c, v, "'name' %s", bad);
			if (!strcmp(s, POLICY_BUILTIN_NAME) && !c->builtin)
				return policy_perr(c, v, "'name' %s is the built-in policy's; give an edited copy a name of its own",
					    POLICY_BUILTIN_NAME);
			/* compared as a reader sees it: Default, DEFAULT, "default ", a fullwidth or Cyrillic look-alike */
			if (!strcmp(folded, POLICY_BUILTIN_NAME) && !c->builtin)
				return policy_perr(c, v, "'name' '%s' reads as %s, the built-in policy's name; give an edited copy a "
					    "name of its own", s, POLICY_BUILTIN_NAME);
			free(p->name);
			p->name = gv_strdup(s);
		} else if (!strcmp(key, "fleet_min_runs")) {
			long l;
			if (!policy_scalar(v) || gv_parse_long(policy_scalar(v), 1, 100000, &l))
				return policy_perr(c, v, "'fleet_min_runs' must be a whole number >= 1");
			p->fleet_min_runs = (int)l;
		} else if (!strcmp(key, "rules") || !strcmp(key, "reject_flags") || !strcmp(key, "tolerate_flags")) {
			if (parse_list(c, k, v, key, p))
				return -1;
		} else if (!strcmp(key, "cluster")) {
			if (policy_parse_cluster(c, k, v, p))
				return -1;
		} else {
			return policy_perr(c, k, "unknown key '%s' (name, fleet_min_runs, rules, reject_flags, tolerate_flags, "
					   "cluster)", key);
		}
	}
	if (!p->nrules && !p->nflags)
		return policy_perr(c, root, "the policy has neither rules nor reject_flags");
	return check_tolerated(c, root, p);
}

void policy_free(struct policy *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->nrules; i++)
		for (int j = 0; j < p->rules[i].nmetrics; j++)
			free(p->rules[i].metrics[j]);
	for (size_t i = 0; i < p->nflags; i++)
		free(p->flags[i].code);
	for (size_t i = 0; i < p->ntolerated; i++) {
		free(p->tolerated[i].code);
		free(p->tolerated[i].reason);
	}
	free(p->tolerated);
	free(p->rules);
	free(p->flags);
	free(p->name);
	free(p->source);
	free(p);
}

int policy_parse(const char *text, size_t len, const char *source, struct policy **out, char *err, size_t errlen)
{
	yaml_parser_t parser;
	yaml_document_t doc;
	char digest[POLICY_DIGEST_LEN], builtin[POLICY_DIGEST_LEN];
	struct pctx c = { &doc, err, errlen, 0 };
	int rc;
	*out = NULL;
	if (len > POLICY_MAX_BYTES) {
		snprintf(err, errlen, "line 1: policy larger than %d bytes", POLICY_MAX_BYTES);
		return -1;
	}
	if (check_depth(text, len, err, errlen))
		return -1;
	policy_digest_of(text, len, digest);
	policy_digest_of(policy_default_yaml, strlen(policy_default_yaml), builtin);
	c.builtin = !strcmp(digest, builtin);
	if (!yaml_parser_initialize(&parser)) {
		snprintf(err, errlen, "line 1: cannot initialise the yaml parser");
		return -1;
	}
	yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
	if (!yaml_parser_load(&parser, &doc)) {
		if (parser.context)
			snprintf(err, errlen, "line %lu: %s %s started at line %lu",
				 (unsigned long)parser.problem_mark.line + 1, parser.problem ? parser.problem : "invalid yaml",
				 parser.context, (unsigned long)parser.context_mark.line + 1);
		else
			snprintf(err, errlen, "line %lu: %s", (unsigned long)parser.problem_mark.line + 1,
				 parser.problem ? parser.problem : "invalid yaml");
		yaml_parser_delete(&parser);
		return -1;
	}
	/* one policy per file: a second YAML document would be silently ignored */
	yaml_document_t more;
	int loaded = yaml_parser_load(&parser, &more), second = loaded && yaml_document_get_root_node(&more) != NULL;
	unsigned long line = loaded ? (unsigned long)more.start_mark.line + 1 : (unsigned long)parser.problem_mark.line + 1;
	if (loaded)
		yaml_document_delete(&more);
	if (!loaded || second) {
		snprintf(err, errlen, "line %lu: %s", line,
			 second ? "a second yaml document: a policy file holds one policy" : "invalid yaml after the policy");
		yaml_document_delete(&doc);
		yaml_parser_delete(&parser);
		return -1;
	}
	struct policy *p = gv_calloc(1, sizeof *p);
	p->name = gv_strdup("custom");
	p->source = gv_strdup(source ? source : "built-in");
	memcpy(p->digest, digest, sizeof p->digest);
	p->fleet_min_runs = POLICY_FLEET_MIN_RUNS;
	rc = parse_root(&c, yaml_document_get_root_node(&doc), p);
	yaml_document_delete(&doc);
	yaml_parser_delete(&parser);
	if (rc) {
		policy_free(p);
		return -1;
	}
	*out = p;
	return 0;
}

int policy_load(const char *path, struct policy **out, char *err, size_t errlen)
{
	if (!path) {
		int rc = policy_parse(policy_default_yaml, strlen(policy_default_yaml), "built-in", out, err, errlen);
		return rc;
	}
	size_t len;
	struct stat st;
	/* a FIFO or a device would block or never end: a policy is a file */
	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "not a regular file");
		return -2;
	}
	char *text = gv_read_file_max(path, POLICY_MAX_BYTES + 1, &len);
	if (!text) {
		snprintf(err, errlen, "%s", strerror(errno));
		if (err[0] >= 'A' && err[0] <= 'Z')
			err[0] = (char)(err[0] - 'A' + 'a');   /* one lowercase line */
		return -2;
	}
	int rc = policy_parse(text, len, path, out, err, errlen);
	free(text);
	return rc;
}

int policy_needs_fleet(const struct policy *p)
{
	for (size_t i = 0; i < p->nrules; i++)
		if (p->rules[i].has_fleet_min || p->rules[i].has_fleet_max)
			return 1;
	return 0;
}

/* ---- evaluation ---- */

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
static int accepted(const json_t *fp, const char *digest)
{
	size_t i;
	json_t *v;
	int acc = 0, builtin = builtin_digest(digest);
	json_array_foreach(json_object_get(fp, "verdicts"), i, v) {
		const char *vd = json_string_value(json_object_get(v, "policy_digest"));
		if (json_is_true(json_object_get(v, "imported")))
			continue;
		if (builtin && (!vd || !*vd) && str_eq(json_string_value(json_object_get(v, "policy")), POLICY_BUILTIN_NAME) &&
		    !str_eq(json_string_value(json_object_get(v, "verdict")), "accept"))
			return 0;
		if (!str_eq(vd, digest))
			continue;
		if (!str_eq(json_string_value(json_object_get(v, "verdict")), "accept"))
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

int policy_same_fleet(const json_t *fp, const json_t *other, const char *digest)
{
	/* the model each run's devices resolve to, never its label: "h100-sxm" and "H100-SXM5" are one H100 */
	const struct gpu_ref *m1 = fpq_gpu_ref(fp), *m2 = fpq_gpu_ref(other);
	const char *i1 = fpq_run_str(fp, "instance_type"), *i2 = fpq_run_str(other, "instance_type");
	const char *u1 = fpq_run_str(fp, "uuid"), *u2 = fpq_run_str(other, "uuid");
	if (!m1 || m1 != m2 || fpq_gpu_count(fp) != fpq_gpu_count(other))
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

/* The "timing" a run's bench declared in its config echo ("steady"), NULL for none. */
static const char *bench_timing(const json_t *fp, const char *metric)
{
	size_t i, len = strcspn(metric, ".");
	json_t *b;
	json_array_foreach(json_object_get(fp, "benches"), i, b) {
		const char *n = json_string_value(json_object_get(b, "name"));
		if (n && strlen(n) == len && !strncmp(n, metric, len))
			return fpq_str(json_object_get(b, "config"), "timing", NULL);
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
static int same_timing(const json_t *fp, const json_t *other, const char *name)
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

/* The rule's thresholds against the median of accepted runs of the same SKU, timed the same way. */
static void rule_fleet(const struct policy *p, const struct policy_rule *r, int gpu, const json_t *fp,
		       const json_t *fleet, const char *name, double v, const char *unit, json_t *res)
{
	char src[512];
	size_t i, k = 0, cap = json_array_size(fleet);
	json_t *o, *runs = json_array();
	double *vals = gv_malloc((cap ? cap : 1) * sizeof *vals);
	json_array_foreach(fleet, i, o) {
		double ov;
		if (policy_same_fleet(fp, o, p->digest) && same_timing(fp, o, name) &&
		    !fpq_metric_value(o, name, gpu, &ov) && isfinite(ov)) {
			vals[k++] = ov;
			json_array_append_new(runs, json_pack("{s:O?,s:O?}", "id", json_object_get(json_object_get(o, "run"), "id"),
							      "uuid", json_object_get(json_object_get(o, "run"), "uuid")));
		}
	}
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
		const char *it = fpq_run_str(fp, "instance_type");
		const char *model = fpq_gpu_ref(fp) ? fpq_gpu_ref(fp)->key : NULL;
		if (r->has_fleet_min) {
			snprintf(src, sizeof src, "fleet: median %.4g of %zu accepted run(s) of %s x%d%s%s x %.3g "
				 "(policy %s, rule %s min_fraction_of_fleet %.3g)", med, k, model ? model : "?",
				 fpq_gpu_count(fp), it ? " " : "", it ? it : "", r->fleet_min, p->name, r->metrics[0], r->fleet_min);
			judge(res, check_obj(r, name, gpu, v, unit, ">=", med * r->fleet_min, "fleet", src),
			      v >= med * r->fleet_min);
		}
		if (r->has_fleet_max) {
			snprintf(src, sizeof src, "fleet: median %.4g of %zu accepted run(s) of %s x%d%s%s x %.3g "
				 "(policy %s, rule %s max_fraction_of_fleet %.3g)", med, k, model ? model : "?",
				 fpq_gpu_count(fp), it ? " " : "", it ? it : "", r->fleet_max, p->name, r->metrics[0], r->fleet_max);
			judge(res, check_obj(r, name, gpu, v, unit, "<=", med * r->fleet_max, "fleet", src),
			      v <= med * r->fleet_max);
		}
	} else {
		note(res, "rule %s: fleet baseline for %s has %zu accepted run(s) of this sku, fewer than %d; "
		     "fleet threshold not applied", r->metrics[0], name, k, p->fleet_min_runs);
	}
	json_decref(runs);
	free(vals);
}

static void eval_rule_gpu(const struct policy *p, const struct policy_rule *r, int gpu, const json_t *fp,
			  const json_t *fleet, json_t *res)
{
	const char *name = NULL;
	char src[512], desc[256], why[300];
	int failed;
	const json_t *m = policy_rule_metric(r, gpu, fp, &name, why, sizeof why, &failed);
	if (!m) {
		rule_unmeasured(p, r, gpu, name, why, failed, res);
		return;
	}
	double v = json_number_value(json_object_get(m, "value"));
	const char *unit = json_string_value(json_object_get(m, "unit"));
	if (r->has_min) {
		snprintf(src, sizeof src, "policy %s, rule %s min %.4g", p->name, r->metrics[0], r->min);
		judge(res, check_obj(r, name, gpu, v, unit, ">=", r->min, "absolute", src), v >= r->min);
	}
	if (r->has_max) {
		snprintf(src, sizeof src, "policy %s, rule %s max %.4g", p->name, r->metrics[0], r->max);
		judge(res, check_obj(r, name, gpu, v, unit, "<=", r->max, "absolute", src), v <= r->max);
	}
	if (r->has_ref_min) {
		const struct gpu_ref *ref;
		char mwhy[300];
		double rv = 0;
		if (fpq_gpu_model(fp, &ref, mwhy, sizeof mwhy) != FPQ_MODEL_RESOLVED) {
			/* no model, no reference: not measured (exit 3), never skipped with a note */
			rule_unmeasured(p, r, gpu, name, mwhy, 0, res);
			return;
		}
		rv = metric_reference(name, gpu, fpq_gpu_count(fp), ref, desc, sizeof desc);
		if (rv > 0) {
			snprintf(src, sizeof src, "reference: %s x %.3g (policy %s, rule %s min_fraction_of_reference %.3g)",
				 desc, r->ref_min, p->name, r->metrics[0], r->ref_min);
			judge(res, check_obj(r, name, gpu, v, unit, ">=", rv * r->ref_min, "reference", src),
			      v >= rv * r->ref_min);
		} else {
			const char *model = fpq_run_str(fp, "gpu_model");
			note(res, "rule %s: no reference for %s on gpu model '%s' (gpuvet knows no published figure "
			     "for it); min_fraction_of_reference not applied", r->metrics[0], name, model ? model : "unknown");
		}
	}
	if (r->has_fleet_min || r->has_fleet_max)
		rule_fleet(p, r, gpu, fp, fleet, name, v, unit, res);
}

enum policy_verdict policy_evaluate(const struct policy *p, const json_t *fp, const json_t *fleet, json_t **result)
{
	return policy_evaluate_flags(p, fp, fleet, NULL, result);
}

enum policy_verdict policy_evaluate_flags(const struct policy *p, const json_t *raw, const json_t *fleet,
					  const json_t *run_flags, json_t **result)
{
	json_t *res = json_pack("{s:s,s:s,s:s,s:[],s:[],s:[],s:[],s:[],s:[]}", "policy", p->name, "policy_source",
				p->source, "policy_digest", p->digest, "failed", "unmeasurable", "passed", "notes", "fleet",
				"tolerated");
	size_t ndup;
	json_t *own = policy_worst_of_duplicates(raw, &ndup);   /* one row per metric: its worst */
	const json_t *fp = own;
	if (ndup)
		note(res, "%zu metric(s) had more than one row of the same gpu; each is judged at its worst "
		     "row (docs/acceptance.md)", ndup);
	int ngpu = fpq_gpu_count(fp);
	if (!json_array_size(fpq_gpus(fp)) && ngpu == 0) {
		const char *e = json_string_value(json_object_get(json_object_get(fp, "inventory"), "gpu_error"));
		json_array_append_new(json_object_get(res, "unmeasurable"),
			json_pack("{s:i,s:s}", "rule_line", 0, "reason", e ? e : "no gpu visible"));
	}
	json_t *jc = json_object_get(json_object_get(fp, "run"), "gpu_count");
	size_t ninv = json_array_size(fpq_gpus(fp));
	if (ninv && json_is_integer(jc) && json_integer_value(jc) != (json_int_t)ninv) {
		char why[160];   /* which count is the machine's is not known: nothing is judged on either */
		snprintf(why, sizeof why, "run.gpu_count %lld disagrees with the inventory's %zu gpu(s)",
			 (long long)json_integer_value(jc), ninv);
		json_array_append_new(json_object_get(res, "unmeasurable"),
			json_pack("{s:i,s:s,s:i,s:s}", "rule_line", 0, "metric", "run.gpu_count", "gpu", -1, "reason", why));
	}
	for (size_t i = 0; i < p->nrules; i++) {
		const struct policy_rule *r = &p->rules[i];
		if (r->gpu == POLICY_GPU_EACH) {
			for (int g = 0; g < ngpu; g++)
				eval_rule_gpu(p, r, g, fp, fleet, res);
		} else {
			eval_rule_gpu(p, r, r->gpu, fp, fleet, res);
		}
	}
	policy_eval_flags(p, fp, run_flags, res);
	enum policy_verdict v = json_array_size(json_object_get(res, "failed")) ? POLICY_REJECT :
				json_array_size(json_object_get(res, "unmeasurable")) ? POLICY_UNMEASURABLE : POLICY_ACCEPT;
	json_object_set_new(res, "verdict", json_string(policy_verdict_name(v)));
	json_decref(own);
	*result = res;
	return v;
}
