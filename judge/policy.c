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
#include <stddef.h>
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

/* A rule's 'metric': one name or a list of alternatives, each a metric some bench reports. */
static int parse_metrics(struct pctx *c, yaml_node_t *k, yaml_node_t *v, struct policy_rule *r)
{
	if (r->nmetrics)
		return policy_perr(c, k, "'metric' given twice");
	yaml_node_item_t one = 0, *it = &one, *top = &one + 1;
	if (v->type == YAML_SEQUENCE_NODE) {
		it = v->data.sequence.items.start;
		top = v->data.sequence.items.top;
		if (it == top)
			return policy_perr(c, v, "'metric' list is empty");
	}
	for (; it < top; it++) {
		yaml_node_t *e = v->type == YAML_SEQUENCE_NODE ? yaml_document_get_node(c->doc, *it) : v;
		if (r->nmetrics >= POLICY_MAX_ALTS)
			return policy_perr(c, e, "at most %d metric alternatives", POLICY_MAX_ALTS);
		if (!policy_scalar(e) || !metric_name_ok(policy_scalar(e)))
			return policy_perr(c, e, "not a metric name (dotted, lowercase)");
		if (!metric_info_find(policy_scalar(e)))
			return policy_perr(c, e, UNKNOWN_METRIC, policy_scalar(e));
		r->metrics[r->nmetrics++] = gv_strdup(policy_scalar(e));
	}
	return 0;
}

static int parse_gpu(struct pctx *c, yaml_node_t *v, struct policy_rule *r)
{
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
	return 0;
}

/*
 * A rule's keys, as runners/opts.h has options: each names its field, its kind and its range (a
 * number outside (lo, hi] refused; lo == hi: any), and where "it was given" is kept.  The one list:
 * the parser reads it, and the error for an unknown key names its keys.
 */
enum rule_kind { RK_METRIC, RK_GPU, RK_NUMBER, RK_BOOL };
#define RF(f) offsetof(struct policy_rule, f)
static const struct {
	const char *key;
	enum rule_kind kind;
	size_t off, has;   /* the value's field, and its "given" flag (RK_NUMBER) */
	double lo, hi;
} rule_keys[] = {
	{ "metric", RK_METRIC, 0, 0, 0, 0 },
	{ "gpu", RK_GPU, 0, 0, 0, 0 },
	{ "min", RK_NUMBER, RF(min), RF(has_min), 0, 0 },
	{ "max", RK_NUMBER, RF(max), RF(has_max), 0, 0 },
	{ "min_fraction_of_reference", RK_NUMBER, RF(ref_min), RF(has_ref_min), 0, 10 },
	{ "min_fraction_of_fleet", RK_NUMBER, RF(fleet_min), RF(has_fleet_min), 0, 10 },
	{ "max_fraction_of_fleet", RK_NUMBER, RF(fleet_max), RF(has_fleet_max), 0, 10 },
	{ "optional", RK_BOOL, RF(optional), 0, 0, 0 },
};
#undef RF

static int parse_rule_key(struct pctx *c, yaml_node_t *k, yaml_node_t *v, const char *key, struct policy_rule *r)
{
	char *base = (char *)r;
	for (size_t i = 0; i < sizeof rule_keys / sizeof rule_keys[0]; i++) {
		if (strcmp(key, rule_keys[i].key))
			continue;
		switch (rule_keys[i].kind) {
		case RK_METRIC: return parse_metrics(c, k, v, r);
		case RK_GPU: return parse_gpu(c, v, r);
		case RK_BOOL: return get_bool(c, v, key, (int *)(void *)(base + rule_keys[i].off));
		case RK_NUMBER: {
			double *d = (double *)(void *)(base + rule_keys[i].off);
			if (policy_get_number(c, v, key, d))
				return -1;
			if (rule_keys[i].hi > rule_keys[i].lo && (*d <= rule_keys[i].lo || *d > rule_keys[i].hi))
				return policy_perr(c, v, "'%s' must be in (%g, %g]", key, rule_keys[i].lo, rule_keys[i].hi);
			*(int *)(void *)(base + rule_keys[i].has) = 1;
			return 0;
		}
		}
	}
	char known[320] = "";
	for (size_t i = 0, n = 0; i < sizeof rule_keys / sizeof rule_keys[0] && n < sizeof known; i++)
		n += (size_t)snprintf(known + n, sizeof known - n, "%s%s", i ? ", " : "", rule_keys[i].key);
	return policy_perr(c, k, "unknown rule key '%s' (%s)", key, known);
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
		if (parse_rule_key(c, k, v, key, r))
			return -1;
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
			/*
			 * compared as a reader sees it (common/ident_fold.c: its confusables skeleton): Default, "default ",
			 * défault, a fullwidth, Cyrillic, small-capital or squared look-alike; and a name that starts with
			 * the word, "default (built-in)", which reads as the built-in one annotated
			 */
			size_t bl = strlen(POLICY_BUILTIN_NAME);
			if (!strncmp(folded, POLICY_BUILTIN_NAME, bl) && !isalnum((unsigned char)folded[bl]) && !c->builtin)
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

