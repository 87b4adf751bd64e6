/*
 * cluster_verify.c - a cluster run from outside (`cluster import`) checked before it is stored
 * (cluster_show.h cluster_verify): every figure a number a machine can give, every date as a
 * run's dates are checked (results/fp_check.h fp_check_time), and the document's own conclusions
 * (its verdict, findings, drain and links lists, exit code, median and stated rate) derived again
 * from its pairs and nodes by the one analysis (judge/cluster.h cluster_analyse) under the policy
 * it names.  A document that disagrees is refused, naming the field: an edited "accept" over a node
 * whose every pair runs at a fifth is not a cluster run gpuvet would have written (#56 item 7).
 *
 * The bounds (judge/cluster.h): rates 0 to CLUSTER_MAX_GBPS (2,000 GB/s: NVLink 5's 1.8 TB/s per
 * GPU, the fastest link any endpoint has), a latency 0 to CLUSTER_MAX_LAT_US (100 s, past any
 * pair's deadline), a clock skew within CLUSTER_MAX_SKEW_S either way, a node's figures within
 * their metric's own physical bounds (benches/metric_bounds.c).  JSON holds no NaN or infinity,
 * so "finite" is the reader's; null is a figure not measured.
 */
#include "runners/cluster_show.h"
#include "judge/cluster.h"
#include "judge/policy.h"
#include "benches/bench.h"
#include "common/cluster.h"
#include "common/gpus.h"
#include "results/fp_check.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEADLINE_MAX_S 1e9   /* a run's whole deadline, seconds: finite, 31 years */

static int refuse(char *why, size_t wlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int refuse(char *why, size_t wlen, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, wlen, fmt, ap);
	va_end(ap);
	return -1;
}

/* A figure (NAN: null, not measured) within [lo, hi]; else -1 naming it. */
static int in_range(char *why, size_t wlen, const char *field, double v, double lo, double hi, const char *bound)
{
	if (isnan(v) || (v >= lo && v <= hi))
		return 0;
	return refuse(why, wlen, "'%s' is %.6g: outside [%.6g, %.6g] (%s)", field, v, lo, hi, bound);
}

static int check_pairs(const struct gv_cluster *c, char *why, size_t wlen)
{
	char f[64];
	for (size_t k = 0; k < c->npairs; k++) {
		const struct gv_cluster_pair *p = &c->pairs[k];
		const double rates[] = { p->gbps_ab, p->gbps_ba, p->nccl_gbps_ab, p->nccl_gbps_ba };
		static const char *const names[] = { "gbps_ab", "gbps_ba", "nccl_gbps_ab", "nccl_gbps_ba" };
		for (int i = 0; i < 4; i++) {
			snprintf(f, sizeof f, "pairs[%zu].%s", k, names[i]);
			if (in_range(why, wlen, f, rates[i], 0, CLUSTER_MAX_GBPS, "GB/s: no link carries more"))
				return -1;
		}
		snprintf(f, sizeof f, "pairs[%zu].lat_us", k);
		if (in_range(why, wlen, f, p->lat_us, 0, CLUSTER_MAX_LAT_US, "us: past any pair's deadline"))
			return -1;
		if (p->state == GV_PAIR_MEASURED && (isnan(p->gbps_ab) || isnan(p->gbps_ba) || isnan(p->lat_us)))
			return refuse(why, wlen, "'pairs[%zu]' is measured without its figures (gbps_ab, gbps_ba, lat_us)", k);
	}
	return 0;
}

static int check_nodes(const struct gv_cluster *c, char *why, size_t wlen)
{
	char f[96], err[256];
	for (int i = 0; i < c->nnodes; i++) {
		const struct gv_cluster_node *n = &c->nodes[i];
		snprintf(f, sizeof f, "nodes[%d].clock_skew_s", i);
		if (in_range(why, wlen, f, n->clock_skew_s, -CLUSTER_MAX_SKEW_S, CLUSTER_MAX_SKEW_S, "seconds: no clock since 1970"))
			return -1;
		snprintf(f, sizeof f, "nodes[%d].link_gbps", i);
		if (in_range(why, wlen, f, n->link_gbps, 0, CLUSTER_MAX_GBPS, "GB/s: no NIC carries more"))
			return -1;
		for (size_t m = 0; m < n->nmetrics; m++) {
			const struct gv_cluster_metric *x = &n->metrics[m];
			double v[2] = { x->value, x->remeasured };
			for (int k = 0; k < 2; k++) {
				if (isnan(v[k]) || !metric_bound_check(x->name, -1, v[k], n->ngpus > 0 ? n->ngpus : 1, err, sizeof err))
					continue;
				return refuse(why, wlen, "'nodes[%d].metrics[%zu].%s': %s", i, m, k ? "remeasured" : "value", err);
			}
		}
	}
	return 0;
}

static int check_figures(const struct gv_cluster *c, char *why, size_t wlen)
{
	char f[64];
	if (check_pairs(c, why, wlen) || check_nodes(c, why, wlen) ||
	    in_range(why, wlen, "deadline_s", c->deadline_s, 0, DEADLINE_MAX_S, "seconds") ||
	    in_range(why, wlen, "stated.gbps", c->stated_gbps, 0, CLUSTER_MAX_GBPS * 8, "GB/s per node") ||
	    in_range(why, wlen, "pair_median_gbps", c->pair_median_gbps, 0, CLUSTER_MAX_GBPS, "GB/s") ||
	    in_range(why, wlen, "pair_healthy_gbps", c->pair_healthy_gbps, 0, CLUSTER_MAX_GBPS, "GB/s"))
		return -1;
	for (size_t i = 0; i < c->nar; i++) {
		const struct gv_cluster_ar_point *p = &c->ar[i];
		const double v[] = { p->algbw_gbps, p->busbw_gbps };
		for (int k = 0; k < 2; k++) {
			snprintf(f, sizeof f, "allreduce.points[%zu].%s", i, k ? "busbw_gbps" : "algbw_gbps");
			if (in_range(why, wlen, f, v[k], 0, CLUSTER_MAX_GBPS, "GB/s per GPU: no link carries more"))
				return -1;
		}
		snprintf(f, sizeof f, "allreduce.points[%zu]", i);
		if (!(p->bytes > 0 && p->bytes <= 1e15) || !(p->time_us > 0 && p->time_us <= 1e12))
			return refuse(why, wlen, "'%s' is not a size of 1 byte to 1 PB timed in over 0 us", f);
	}
	return 0;
}

/* The start: a time as runs' are (syntax, not ahead of this clock, not before the nodes' GPU model was announced). */
static int check_dates(const struct gv_cluster *c, char *why, size_t wlen)
{
	if (!fp_iso8601(c->started_at))
		return refuse(why, wlen, "'started_at' is '%.40s', not an ISO 8601 time", c->started_at);
	if (fp_check_time("'started_at'", c->started_at, NULL, why, wlen))
		return -1;
	for (int i = 0; i < c->nnodes; i++) {
		const struct gpu_ref *m = c->nodes[i].gpu_model[0] ? gpu_ref_find(c->nodes[i].gpu_model) : NULL;
		if (m && fp_check_time("'started_at'", c->started_at, m, why, wlen))
			return -1;
	}
	return 0;
}

/* ---- the conclusions derived again ---- */

struct said {
	int verdict;
	double median, healthy, stated;
	char policy[80];
	struct gv_cluster_finding *findings;
	size_t n;
};

static int cmp_finding(const void *x, const void *y)
{
	const struct gv_cluster_finding *a = x, *b = y;
	if (a->kind != b->kind)
		return a->kind - b->kind;
	if (a->rank != b->rank)
		return a->rank - b->rank;
	if (a->peer != b->peer)
		return a->peer - b->peer;
	return a->drain - b->drain;
}

static int same_number(double a, double b)
{
	return (isnan(a) && isnan(b)) || fabs(a - b) <= 1e-9 * fmax(fabs(a), fabs(b));
}

/* The findings as (kind, rank, peer, drain), each list sorted: 0 when they are the same. */
static int check_findings(const struct said *doc, const struct gv_cluster *c, char *why, size_t wlen)
{
	struct gv_cluster_finding *mine = malloc((c->nfindings + 1) * sizeof *mine);
	if (!mine)
		return refuse(why, wlen, "out of memory");
	if (c->nfindings) {   /* NULL with none: memcpy and qsort take no NULL */
		memcpy(mine, c->findings, c->nfindings * sizeof *mine);
		qsort(mine, c->nfindings, sizeof *mine, cmp_finding);
	}
	if (doc->n)
		qsort(doc->findings, doc->n, sizeof *doc->findings, cmp_finding);
	size_t i = 0;
	while (i < doc->n && i < c->nfindings && !cmp_finding(&doc->findings[i], &mine[i]))
		i++;
	int rc = 0;
	if (i < doc->n || i < c->nfindings) {
		const struct gv_cluster_finding *d = i < doc->n ? &doc->findings[i] : NULL, *m = i < c->nfindings ? &mine[i] : NULL;
		char a[96] = "nothing more", b[96] = "nothing more";
		if (d)
			snprintf(a, sizeof a, "%s of rank %d%s", gv_finding_name(d->kind), d->rank, d->drain ? " (drain)" : "");
		if (m)
			snprintf(b, sizeof b, "%s of rank %d%s", gv_finding_name(m->kind), m->rank, m->drain ? " (drain)" : "");
		rc = refuse(why, wlen, "'findings' disagree with the document's own pairs and nodes: it has %zu, they give %zu "
			    "(first difference: it says %s, they give %s)", doc->n, c->nfindings, a, b);
	}
	free(mine);
	return rc;
}

/* Whether the document's list (drain: {rank}; links: {a, b}) holds the entry r (and q). */
static int listed(const json_t *arr, int links, int r, int q)
{
	size_t i;
	const json_t *e;
	json_array_foreach(arr, i, e)
		if (json_integer_value(json_object_get(e, links ? "a" : "rank")) == r &&
		    (!links || json_integer_value(json_object_get(e, "b")) == q))
			return 1;
	return 0;
}

/* A list the document derives from its findings ("drain", "links") against c's: the same entries, once each. */
static int check_list(const json_t *doc, const struct gv_cluster *c, const char *key, char *why, size_t wlen)
{
	const json_t *arr = json_object_get(doc, key), *e;
	int links = !strcmp(key, "links"), bad = 0;
	size_t i, want = 0;
	if (!arr || json_is_null(arr))
		return links ? 0 : refuse(why, wlen, "'drain' is missing: the list a script acts on");
	if (!json_is_array(arr))
		return refuse(why, wlen, "'%s' is not a list", key);
	for (size_t k = 0; k < c->nfindings; k++) {
		const struct gv_cluster_finding *f = &c->findings[k];
		int first = 1;
		for (size_t j = 0; j < k && first; j++)   /* each node (link) once, as the writer lists them */
			first = !(links ? c->findings[j].kind == GV_FIND_BAD_LINK && c->findings[j].rank == f->rank &&
						  c->findings[j].peer == f->peer
					: c->findings[j].drain && c->findings[j].rank == f->rank);
		if (!first || !(links ? f->kind == GV_FIND_BAD_LINK : f->drain && f->rank >= 0))
			continue;
		want++;
		bad |= !listed(arr, links, f->rank, f->peer);
	}
	json_array_foreach(arr, i, e) {
		int r = (int)json_integer_value(json_object_get(e, links ? "a" : "rank"));
		int q = (int)json_integer_value(json_object_get(e, "b")), found = 0;
		for (size_t k = 0; k < c->nfindings && !found; k++)
			found = links ? c->findings[k].kind == GV_FIND_BAD_LINK && c->findings[k].rank == r && c->findings[k].peer == q
				      : c->findings[k].drain && c->findings[k].rank == r;
		bad |= !found;
	}
	if (bad || json_array_size(arr) != want)
		return refuse(why, wlen, "'%s' lists %zu %s; the document's own pairs and nodes give %zu", key,
			      json_array_size(arr), links ? "links" : "nodes to drain", want);
	return 0;
}

static int check_said(const json_t *doc, const struct said *d, const struct gv_cluster *c, char *why, size_t wlen)
{
	static const char *const words[] = { "accept", "reject", "not judged", "unmeasurable" };
	const json_t *ec = json_object_get(doc, "exit_code");
	if (strcmp(d->policy, c->policy))
		return refuse(why, wlen, "'policy' is '%s', but this check judged it under '%s': give the policy it names "
			      "with --policy", d->policy, c->policy);
	if (d->verdict != c->verdict)
		return refuse(why, wlen, "'verdict' is %s, but the document's own pairs and nodes give %s", d->verdict >= 0 &&
			      d->verdict <= 3 ? words[d->verdict] : "none", c->verdict >= 0 ? words[c->verdict] : "none");
	if (!json_is_integer(ec) || json_integer_value(ec) != c->verdict)
		return refuse(why, wlen, "'exit_code' is not %d, the exit code of its verdict", c->verdict);
	if (!same_number(d->healthy, c->pair_healthy_gbps))
		return refuse(why, wlen, "'pair_healthy_gbps' is %.6g, but its pairs give %.6g", d->healthy, c->pair_healthy_gbps);
	if (!same_number(d->median, c->pair_median_gbps))
		return refuse(why, wlen, "'pair_median_gbps' is %.6g, but its pairs give %.6g", d->median, c->pair_median_gbps);
	if (!same_number(d->stated, c->stated_gbps))
		return refuse(why, wlen, "'stated.gbps' is %.6g, but judge/published/network.csv gives %.6g for its type",
			      d->stated, c->stated_gbps);
	return check_findings(d, c, why, wlen) || check_list(doc, c, "drain", why, wlen) ||
	       check_list(doc, c, "links", why, wlen);
}

int cluster_verify(const json_t *doc, struct gv_cluster *c, const struct policy *p, char *why, size_t wlen)
{
	char err[256];
	struct said d = { .verdict = c->verdict, .median = c->pair_median_gbps, .healthy = c->pair_healthy_gbps,
			  .stated = c->stated_gbps,
			  .findings = c->findings, .n = c->nfindings };
	snprintf(d.policy, sizeof d.policy, "%s", c->policy);
	if (check_figures(c, why, wlen) || check_dates(c, why, wlen))
		return -1;
	c->findings = NULL;   /* the document's, kept in d; the analysis makes its own */
	c->nfindings = 0;
	int rc = cluster_analyse(c, p, err, sizeof err) ? refuse(why, wlen, "%s", err) : check_said(doc, &d, c, why, wlen);
	free(d.findings);
	return rc;
}
