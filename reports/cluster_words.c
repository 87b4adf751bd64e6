/*
 * cluster_words.c - a cluster run's verdict in words (cluster_words.h): the counts of its pairs
 * and findings and the one sentence that says why.
 */
#include "reports/cluster_words.h"
#include "reports/svg.h"
#include "common/cluster.h"
#include "common/stats.h"
#include "common/util.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

double cluster_pair_slower(const struct gv_cluster_pair *p)
{
	if (p->state != GV_PAIR_MEASURED)
		return NAN;
	if (isnan(p->gbps_ab) || isnan(p->gbps_ba))
		return isnan(p->gbps_ab) ? p->gbps_ba : p->gbps_ab;
	return p->gbps_ab < p->gbps_ba ? p->gbps_ab : p->gbps_ba;
}

void cluster_tally(const struct gv_cluster *c, struct cluster_tally *t)
{
	memset(t, 0, sizeof *t);
	double *v = gv_calloc(c->npairs ? c->npairs : 1, sizeof *v);
	size_t nv = 0;
	for (size_t i = 0; i < c->npairs; i++) {
		const struct gv_cluster_pair *p = &c->pairs[i];
		t->measured += p->state == GV_PAIR_MEASURED;
		t->failed += p->state == GV_PAIR_FAILED;
		t->skipped += p->state != GV_PAIR_MEASURED && p->state != GV_PAIR_FAILED;
		double s = cluster_pair_slower(p);
		if (!isnan(s))
			v[nv++] = s;
	}
	t->median = !isnan(c->pair_median_gbps) ? c->pair_median_gbps : nv ? gv_median_inplace(v, nv) : NAN;
	t->healthy = !isnan(c->pair_healthy_gbps) ? c->pair_healthy_gbps : t->median;
	free(v);
	unsigned char *drained = gv_calloc((size_t)c->nnodes + 1, 1);
	for (size_t i = 0; i < c->nfindings; i++) {
		const struct gv_cluster_finding *f = &c->findings[i];
		if (f->drain && f->rank >= 0 && f->rank < c->nnodes) {
			t->drain_nodes += !drained[f->rank];
			drained[f->rank] = 1;
		} else if (f->kind == GV_FIND_BAD_LINK) {
			t->links++;
		} else {
			t->others++;
		}
	}
	free(drained);
}

const char *cluster_verdict_word(int verdict)
{
	switch (verdict) {
	case 0: return "ACCEPT";
	case 1: return "REJECT";
	case 3: return "UNMEASURABLE";
	default: return "NOT JUDGED";
	}
}

struct words {
	char *buf;
	size_t len, at;
	int parts;   /* the comma-joined parts written */
};

static void put(struct words *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(struct words *w, const char *fmt, ...)
{
	if (w->at >= w->len)
		return;
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(w->buf + w->at, w->len - w->at, fmt, ap);
	va_end(ap);
	w->at = n < 0 ? w->len : w->at + (size_t)n;
}

static void part(struct words *w, long n, const char *one, const char *many)
{
	if (n > 0)
		put(w, "%s%ld %s", w->parts++ ? ", " : "", n, n == 1 ? one : many);
}

void cluster_why(const struct gv_cluster *c, const struct cluster_tally *t, char *buf, size_t len)
{
	struct words w = { buf, len, 0, 0 };
	char med[32];
	if (len)
		buf[0] = 0;
	svg_fmt_num(t->median, med, sizeof med);
	if (c->verdict == 0) {
		put(&w, "all %d nodes accepted and %zu of %zu pairs measured, median %s GB/s host to host", c->nnodes,
		    t->measured, c->npairs, med);
	} else {
		part(&w, t->drain_nodes, "node to drain", "nodes to drain");
		part(&w, t->links, "bad link", "bad links");
		part(&w, t->others, "other finding", "other findings");
		if (t->failed + t->skipped)
			put(&w, "%s%zu of %zu pairs not measured", w.parts++ ? ", " : "", t->failed + t->skipped, c->npairs);
		if (!w.parts)
			put(&w, "%s", c->verdict == 3 ? "nothing was measured that the fabric rules need" :
			    c->verdict == -1 ? "the analysis did not run" : "no finding");
	}
	put(&w, " (%d node%s, %zu pair%s)", c->nnodes, c->nnodes == 1 ? "" : "s", c->npairs, c->npairs == 1 ? "" : "s");
}
