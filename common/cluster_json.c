/*
 * cluster_json.c - a cluster run's JSON: the one writer and the one reader
 * (common/cluster.h).  The same document is what rank 0 prints with --json,
 * what `cluster show --json` prints and what a rank sends; NAN is null.
 * "drain" and "links" are derived from the findings for scripts and are
 * ignored on read.
 * The reader trusts nothing: every index is checked against nnodes, every
 * string bounded, every count against what n nodes can have.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cluster.h"

static json_t *num(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

static const char *verdict_name(int v)
{
	return v == 0 ? "accept" : v == 1 ? "reject" : v == 3 ? "unmeasurable" : NULL;
}

static int verdict_of(const char *s)
{
	return !s ? -1 : !strcmp(s, "accept") ? 0 : !strcmp(s, "reject") ? 1 : !strcmp(s, "unmeasurable") ? 3 : -2;
}

json_t *gv_cluster_metrics_to_json(const struct gv_cluster_node *n)
{
	json_t *a = json_array();
	for (size_t i = 0; a && i < n->nmetrics; i++)
		json_array_append_new(a, json_pack("{s:s,s:o,s:b,s:o}", "name", n->metrics[i].name, "value",
						   num(n->metrics[i].value), "higher_better", n->metrics[i].higher_better,
						   "remeasured", num(n->metrics[i].remeasured)));
	return a;
}

static json_t *node_json(const struct gv_cluster_node *n)
{
	json_t *o = json_pack("{s:i,s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:i,s:s?,s:i,s:s}", "rank", n->rank, "state",
			      gv_node_state_name(n->state), "host", n->host, "addr", n->addr, "run_uuid", n->run_uuid,
			      "provider", n->provider, "instance_type", n->instance_type, "gpu_model", n->gpu_model,
			      "ngpus", n->ngpus, "verdict", verdict_name(n->verdict), "exit_code", n->verdict, "why",
			      n->why);
	if (o) {
		json_object_set_new(o, "clock_skew_s", num(n->clock_skew_s));
		json_object_set_new(o, "clock_skew_unc_s", num(n->clock_skew_unc_s));
		json_object_set_new(o, "link_gbps", num(n->link_gbps));
		json_object_set_new(o, "link_source", json_string(n->link_source));
		json_object_set_new(o, "metrics", gv_cluster_metrics_to_json(n));
	}
	return o;
}

static json_t *pair_json(const struct gv_cluster_pair *p)
{
	return json_pack("{s:i,s:i,s:i,s:s,s:o,s:o,s:o,s:o,s:o,s:s}", "a", p->a, "b", p->b, "round", p->round, "state",
			 gv_pair_state_name(p->state), "gbps_ab", num(p->gbps_ab), "gbps_ba", num(p->gbps_ba), "lat_us",
			 num(p->lat_us), "nccl_gbps_ab", num(p->nccl_gbps_ab), "nccl_gbps_ba", num(p->nccl_gbps_ba),
			 "why", p->why);
}

/* The nodes to drain, once each, with the first finding that names them: what a script acts on. */
static json_t *drain_json(const struct gv_cluster *c)
{
	json_t *a = json_array();
	char *seen = calloc((size_t)c->nnodes, 1);
	for (size_t i = 0; a && seen && i < c->nfindings; i++) {
		const struct gv_cluster_finding *f = &c->findings[i];
		if (!f->drain || f->rank < 0 || f->rank >= c->nnodes || seen[f->rank])
			continue;
		seen[f->rank] = 1;
		const struct gv_cluster_node *n = &c->nodes[f->rank];
		json_array_append_new(a, json_pack("{s:i,s:s,s:s,s:s,s:s}", "rank", f->rank, "host", n->host, "addr",
						   n->addr, "finding", gv_finding_name(f->kind), "why", f->evidence));
	}
	free(seen);
	return a;
}

/* The bad links, once each, with the first finding that names them: the pairs a provisioning script re-places. */
static json_t *links_json(const struct gv_cluster *c)
{
	json_t *a = json_array();
	for (size_t i = 0; a && i < c->nfindings; i++) {
		const struct gv_cluster_finding *f = &c->findings[i];
		int seen = 0;
		if (f->kind != GV_FIND_BAD_LINK || f->rank < 0 || f->peer < 0 || f->rank >= c->nnodes || f->peer >= c->nnodes)
			continue;
		for (size_t j = 0; j < i && !seen; j++)
			seen = c->findings[j].kind == GV_FIND_BAD_LINK && c->findings[j].rank == f->rank &&
			       c->findings[j].peer == f->peer;
		if (!seen)
			json_array_append_new(a, json_pack("{s:i,s:i,s:s,s:s,s:s}", "a", f->rank, "b", f->peer, "host_a",
							   c->nodes[f->rank].host, "host_b", c->nodes[f->peer].host, "why",
							   f->evidence));
	}
	return a;
}

static json_t *cluster_json(const struct gv_cluster *c, int with_pairs)
{
	json_t *o = json_pack("{s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:i,s:i,s:s?,s:i,s:s,s:{s:o,s:s},s:o}", "uuid", c->uuid,
			      "started_at", c->started_at, "engine", c->engine, "schedule", c->schedule, "transport",
			      c->transport, "nccl_net", c->nccl_net, "profile", c->profile, "nnodes", c->nnodes,
			      "nrounds", c->nrounds, "verdict", verdict_name(c->verdict), "exit_code", c->verdict,
			      "policy", c->policy, "stated", "gbps", num(c->stated_gbps), "source", c->stated_source,
			      "pair_median_gbps", num(c->pair_median_gbps));
	if (!o)
		return NULL;
	json_object_set_new(o, "pair_healthy_gbps", num(c->pair_healthy_gbps));
	json_object_set_new(o, "authenticated", json_boolean(c->authenticated));
	json_object_set_new(o, "deadline_s", num(c->deadline_s));
	json_t *nodes = json_array(), *pairs = json_array(), *pts = json_array(), *finds = json_array();
	for (int i = 0; nodes && i < c->nnodes; i++)
		json_array_append_new(nodes, node_json(&c->nodes[i]));
	for (size_t i = 0; pairs && with_pairs && i < c->npairs; i++)
		json_array_append_new(pairs, pair_json(&c->pairs[i]));
	for (size_t i = 0; pts && i < c->nar; i++)
		json_array_append_new(pts, json_pack("{s:o,s:o,s:o,s:o}", "bytes", num(c->ar[i].bytes), "time_us",
						     num(c->ar[i].time_us), "algbw_gbps", num(c->ar[i].algbw_gbps),
						     "busbw_gbps", num(c->ar[i].busbw_gbps)));
	for (size_t i = 0; finds && i < c->nfindings; i++) {
		const struct gv_cluster_finding *f = &c->findings[i];
		json_array_append_new(finds, json_pack("{s:s,s:i,s:i,s:b,s:s}", "kind", gv_finding_name(f->kind), "rank",
						       f->rank, "peer", f->peer, "drain", f->drain, "evidence", f->evidence));
	}
	json_object_set_new(o, "nodes", nodes);
	json_object_set_new(o, "pairs", pairs);
	json_object_set_new(o, "allreduce", json_pack("{s:o,s:s}", "points", pts ? pts : json_null(), "why", c->ar_why));
	json_object_set_new(o, "findings", finds);
	json_object_set_new(o, "drain", drain_json(c));
	json_object_set_new(o, "links", links_json(c));
	return o;
}

json_t *gv_cluster_to_json(const struct gv_cluster *c)
{
	return cluster_json(c, 1);
}

/* One pair as json_dumpf would print it inside the document: its lines indented 4 more. */
static int write_pair(FILE *f, const struct gv_cluster_pair *p, int last)
{
	json_t *j = pair_json(p);
	char *t = j ? json_dumps(j, JSON_INDENT(2) | JSON_ENSURE_ASCII) : NULL;
	json_decref(j);
	if (!t)
		return -1;
	int rc = fputs("    ", f) == EOF;
	for (const char *q = t; *q && !rc; q++)
		rc = fputc(*q, f) == EOF || (*q == '\n' && fputs("    ", f) == EOF);
	free(t);
	return rc || fputs(last ? "\n" : ",\n", f) == EOF ? -1 : 0;
}

/*
 * The document gv_cluster_to_json() makes, as json_dumpf(JSON_INDENT(2)) prints it, byte for byte,
 * with the pairs made and printed one at a time: 523,776 pairs as one jansson tree took 0.9 GB.
 */
int gv_cluster_write_json(const struct gv_cluster *c, FILE *f)
{
	json_t *o = cluster_json(c, 0);
	char *t = o ? json_dumps(o, JSON_INDENT(2) | JSON_ENSURE_ASCII) : NULL;
	json_decref(o);
	if (!t)
		return -1;
	static const char key[] = "\n  \"pairs\": []";
	char *at = c->npairs ? strstr(t, key) : NULL;
	int rc = 0;
	if (!at) {
		rc = fputs(t, f) == EOF;
	} else {
		at += sizeof key - 3;   /* at the "[]" */
		rc = fwrite(t, 1, (size_t)(at - t), f) != (size_t)(at - t) || fputs("[\n", f) == EOF;
		for (size_t i = 0; !rc && i < c->npairs; i++)
			rc = write_pair(f, &c->pairs[i], i + 1 == c->npairs) != 0;
		rc = rc || fputs("  ]", f) == EOF || fputs(at + 2, f) == EOF;
	}
	free(t);
	return rc || fputc('\n', f) == EOF ? -1 : 0;
}

/* ---- reading ---- */

struct rd {
	char *err;
	size_t errlen;
};

static int bad(struct rd *r, const char *what)
{
	snprintf(r->err, r->errlen, "cluster run: %s", what);
	return -1;
}

/* A string member into buf (absent: ""); -1 when it is not a string or does not fit. */
static int str(struct rd *r, const json_t *o, const char *key, char *buf, size_t size)
{
	const json_t *v = json_object_get(o, key);
	buf[0] = 0;
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_string(v) || json_string_length(v) >= size || memchr(json_string_value(v), 0, json_string_length(v))) {
		char m[96];
		snprintf(m, sizeof m, "'%s' is not a string of under %zu bytes", key, size);
		return bad(r, m);
	}
	memcpy(buf, json_string_value(v), json_string_length(v) + 1);
	return 0;
}

/* A number member (absent or null: NAN). */
static int real(struct rd *r, const json_t *o, const char *key, double *out)
{
	const json_t *v = json_object_get(o, key);
	*out = NAN;
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_number(v)) {
		char m[96];
		snprintf(m, sizeof m, "'%s' is not a number", key);
		return bad(r, m);
	}
	*out = json_number_value(v);
	return 0;
}

/* An integer member in [lo, hi] (absent: dflt). */
static int integer(struct rd *r, const json_t *o, const char *key, long lo, long hi, long dflt, int *out)
{
	const json_t *v = json_object_get(o, key);
	long x = dflt;
	if (v && !json_is_null(v)) {
		if (!json_is_integer(v) || json_integer_value(v) < lo || json_integer_value(v) > hi) {
			char m[96];
			snprintf(m, sizeof m, "'%s' is not an integer in %ld..%ld", key, lo, hi);
			return bad(r, m);
		}
		x = (long)json_integer_value(v);
	}
	*out = (int)x;
	return 0;
}

/* A name member looked up with the enum's name function; absent: dflt. */
static int named(struct rd *r, const json_t *o, const char *key, const char *(*name)(int), int n, int dflt, int *out)
{
	char buf[32];
	if (str(r, o, key, buf, sizeof buf))
		return -1;
	*out = dflt;
	if (!buf[0])
		return 0;
	for (int i = 0; i < n; i++)
		if (!strcmp(name(i), buf)) {
			*out = i;
			return 0;
		}
	char m[96];
	snprintf(m, sizeof m, "'%s' is not a known name", key);
	return bad(r, m);
}

/* A boolean member (absent or null: 0). */
static int boolean(struct rd *r, const json_t *o, const char *key, int *out)
{
	const json_t *v = json_object_get(o, key);
	*out = 0;
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_boolean(v)) {
		char m[96];
		snprintf(m, sizeof m, "'%s' is not true or false", key);
		return bad(r, m);
	}
	*out = json_is_true(v);
	return 0;
}

static int verdict_member(struct rd *r, const json_t *o, int *out)
{
	char buf[16];
	if (str(r, o, "verdict", buf, sizeof buf))
		return -1;
	*out = verdict_of(buf[0] ? buf : NULL);
	return *out == -2 ? bad(r, "'verdict' is not accept, reject or unmeasurable") : 0;
}

int gv_cluster_metrics_from_json(const json_t *arr, struct gv_cluster_node *n, char *err, size_t errlen)
{
	struct rd r = { err, errlen };
	free(n->metrics);
	n->metrics = NULL;
	n->nmetrics = 0;
	if (!arr || json_is_null(arr))
		return 0;
	if (!json_is_array(arr) || json_array_size(arr) > 4096)
		return bad(&r, "'metrics' is not an array of at most 4096");
	if (json_array_size(arr) && !(n->metrics = calloc(json_array_size(arr), sizeof *n->metrics)))
		return bad(&r, "out of memory");
	size_t i;
	const json_t *m;
	json_array_foreach(arr, i, m) {
		struct gv_cluster_metric *x = &n->metrics[n->nmetrics];
		const json_t *hb = json_object_get(m, "higher_better");
		if (!json_is_object(m) || str(&r, m, "name", x->name, sizeof x->name) || !x->name[0] ||
		    real(&r, m, "value", &x->value) || real(&r, m, "remeasured", &x->remeasured) ||
		    (hb && !json_is_boolean(hb)))
			return bad(&r, "a metric is not {name, value, higher_better}");
		x->higher_better = hb ? json_is_true(hb) : 1;
		n->nmetrics++;
	}
	return 0;
}

static int read_node(struct rd *r, const json_t *o, struct gv_cluster *c)
{
	int rank;
	if (!json_is_object(o) || integer(r, o, "rank", 0, c->nnodes - 1, -1, &rank) || rank < 0)
		return bad(r, "a node has no rank in 0..nnodes-1");
	struct gv_cluster_node *n = &c->nodes[rank];
	if (str(r, o, "host", n->host, sizeof n->host) || str(r, o, "addr", n->addr, sizeof n->addr) ||
	    str(r, o, "run_uuid", n->run_uuid, sizeof n->run_uuid) ||
	    str(r, o, "provider", n->provider, sizeof n->provider) ||
	    str(r, o, "instance_type", n->instance_type, sizeof n->instance_type) ||
	    str(r, o, "gpu_model", n->gpu_model, sizeof n->gpu_model) || str(r, o, "why", n->why, sizeof n->why) ||
	    integer(r, o, "ngpus", 0, 1024, 0, &n->ngpus) ||
	    named(r, o, "state", gv_node_state_name, 3, GV_NODE_MISSING, &n->state) || verdict_member(r, o, &n->verdict) ||
	    real(r, o, "clock_skew_s", &n->clock_skew_s) || real(r, o, "clock_skew_unc_s", &n->clock_skew_unc_s) ||
	    real(r, o, "link_gbps", &n->link_gbps) ||
	    str(r, o, "link_source", n->link_source, sizeof n->link_source))
		return -1;
	return gv_cluster_metrics_from_json(json_object_get(o, "metrics"), n, r->err, r->errlen);
}

static int read_pair(struct rd *r, const json_t *o, const struct gv_cluster *c, struct gv_cluster_pair *p)
{
	if (!json_is_object(o) || integer(r, o, "a", 0, c->nnodes - 1, -1, &p->a) ||
	    integer(r, o, "b", 0, c->nnodes - 1, -1, &p->b) || p->a < 0 || p->b <= p->a)
		return bad(r, "a pair is not two ranks a < b of the cluster");
	return integer(r, o, "round", 0, GV_CLUSTER_MAX_NODES, 0, &p->round) ||
	       named(r, o, "state", gv_pair_state_name, 3, GV_PAIR_SKIPPED, &p->state) ||
	       real(r, o, "gbps_ab", &p->gbps_ab) || real(r, o, "gbps_ba", &p->gbps_ba) ||
	       real(r, o, "lat_us", &p->lat_us) || real(r, o, "nccl_gbps_ab", &p->nccl_gbps_ab) ||
	       real(r, o, "nccl_gbps_ba", &p->nccl_gbps_ba) || str(r, o, "why", p->why, sizeof p->why);
}

static int read_finding(struct rd *r, const json_t *o, const struct gv_cluster *c, struct gv_cluster_finding *f)
{
	const json_t *d = json_object_get(o, "drain");
	if (!json_is_object(o) || named(r, o, "kind", gv_finding_name, GV_FIND_KINDS, -1, &f->kind) || f->kind < 0 ||
	    integer(r, o, "rank", -1, c->nnodes - 1, -1, &f->rank) || integer(r, o, "peer", -1, c->nnodes - 1, -1, &f->peer) ||
	    (d && !json_is_boolean(d)) || str(r, o, "evidence", f->evidence, sizeof f->evidence))
		return bad(r, "a finding is not {kind, rank, peer, drain, evidence} of this cluster");
	f->drain = json_is_true(d);
	return 0;
}

/* An array member of at most max entries, each read by fn into an element of the calloc'd *out. */
static int array(struct rd *r, const json_t *o, const char *key, size_t max, size_t size, void **out, size_t *n)
{
	const json_t *a = json_object_get(o, key);
	*n = 0;
	if (!a || json_is_null(a))
		return 0;
	if (!json_is_array(a) || json_array_size(a) > max) {
		char m[96];
		snprintf(m, sizeof m, "'%s' is not an array of at most %zu", key, max);
		return bad(r, m);
	}
	if (json_array_size(a) && !(*out = calloc(json_array_size(a), size)))
		return bad(r, "out of memory");
	*n = json_array_size(a);
	return 0;
}

static int read_lists(struct rd *r, const json_t *doc, struct gv_cluster *c)
{
	size_t n, i;
	const json_t *v, *ar = json_object_get(doc, "allreduce");
	size_t maxpairs = (size_t)c->nnodes * (size_t)(c->nnodes - 1) / 2;
	if (array(r, doc, "pairs", maxpairs, sizeof *c->pairs, (void **)&c->pairs, &c->npairs))
		return -1;
	for (i = 0; i < c->npairs; i++)
		if (read_pair(r, json_array_get(json_object_get(doc, "pairs"), i), c, &c->pairs[i]))
			return -1;
	if (array(r, doc, "findings", 64 * (size_t)c->nnodes + 64, sizeof *c->findings, (void **)&c->findings,
		  &c->nfindings))
		return -1;
	for (i = 0; i < c->nfindings; i++)
		if (read_finding(r, json_array_get(json_object_get(doc, "findings"), i), c, &c->findings[i]))
			return -1;
	if (ar && !json_is_null(ar) && !json_is_object(ar))
		return bad(r, "'allreduce' is not an object");
	if (str(r, ar, "why", c->ar_why, sizeof c->ar_why) ||
	    array(r, ar, "points", 256, sizeof *c->ar, (void **)&c->ar, &c->nar))
		return -1;
	json_array_foreach(json_object_get(ar, "points"), i, v) {
		struct gv_cluster_ar_point *p = &c->ar[i];
		if (!json_is_object(v) || real(r, v, "bytes", &p->bytes) || real(r, v, "time_us", &p->time_us) ||
		    real(r, v, "algbw_gbps", &p->algbw_gbps) || real(r, v, "busbw_gbps", &p->busbw_gbps))
			return bad(r, "an all-reduce point is not {bytes, time_us, algbw_gbps, busbw_gbps}");
	}
	const json_t *nodes = json_object_get(doc, "nodes");
	if (nodes && !json_is_array(nodes))
		return bad(r, "'nodes' is not an array");
	n = json_array_size(nodes);
	if (n > (size_t)c->nnodes)
		return bad(r, "more nodes than 'nnodes'");
	json_array_foreach(nodes, i, v)
		if (read_node(r, v, c))
			return -1;
	return 0;
}

struct gv_cluster *gv_cluster_from_json(const json_t *doc, char *err, size_t errlen)
{
	struct rd r = { err, errlen };
	int nnodes;
	const json_t *st = json_object_get(doc, "stated");
	if (!json_is_object(doc) || (st && !json_is_object(st) && !json_is_null(st))) {
		bad(&r, !json_is_object(doc) ? "not a JSON object" : "'stated' is not {gbps, source}");
		return NULL;
	}
	if (integer(&r, doc, "nnodes", 1, GV_CLUSTER_MAX_NODES, 0, &nnodes))
		return NULL;
	if (nnodes < 1) {
		bad(&r, "'nnodes' is missing");
		return NULL;
	}
	struct gv_cluster *c = gv_cluster_new(nnodes);
	if (!c) {
		bad(&r, "out of memory");
		return NULL;
	}
	if (str(&r, doc, "uuid", c->uuid, sizeof c->uuid) || str(&r, doc, "started_at", c->started_at, sizeof c->started_at) ||
	    str(&r, doc, "engine", c->engine, sizeof c->engine) || str(&r, doc, "schedule", c->schedule, sizeof c->schedule) ||
	    str(&r, doc, "transport", c->transport, sizeof c->transport) ||
	    str(&r, doc, "nccl_net", c->nccl_net, sizeof c->nccl_net) || str(&r, doc, "profile", c->profile, sizeof c->profile) ||
	    str(&r, doc, "policy", c->policy, sizeof c->policy) ||
	    integer(&r, doc, "nrounds", 0, GV_CLUSTER_MAX_NODES, 0, &c->nrounds) || verdict_member(&r, doc, &c->verdict) ||
	    real(&r, doc, "pair_median_gbps", &c->pair_median_gbps) || real(&r, doc, "deadline_s", &c->deadline_s) ||
	    real(&r, doc, "pair_healthy_gbps", &c->pair_healthy_gbps) ||
	    boolean(&r, doc, "authenticated", &c->authenticated) ||
	    real(&r, st, "gbps", &c->stated_gbps) || str(&r, st, "source", c->stated_source, sizeof c->stated_source) ||
	    read_lists(&r, doc, c)) {
		gv_cluster_free(c);
		return NULL;
	}
	return c;
}
