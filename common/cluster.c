/*
 * cluster.c - a cluster run's plain data: allocation, findings, the names
 * of its states (common/cluster.h).  Its JSON is common/cluster_json.c.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cluster.h"

struct gv_cluster *gv_cluster_new(int n)
{
	if (n < 1 || n > GV_CLUSTER_MAX_NODES)
		return NULL;
	struct gv_cluster *c = calloc(1, sizeof *c);
	if (!c)
		return NULL;
	c->nodes = calloc((size_t)n, sizeof *c->nodes);
	if (!c->nodes) {
		free(c);
		return NULL;
	}
	c->nnodes = n;
	c->stated_gbps = NAN;
	c->pair_median_gbps = NAN;
	c->pair_healthy_gbps = NAN;
	c->deadline_s = NAN;
	c->verdict = -1;
	for (int i = 0; i < n; i++) {
		c->nodes[i].rank = i;
		c->nodes[i].state = GV_NODE_MISSING;
		c->nodes[i].verdict = -1;
		c->nodes[i].clock_skew_s = NAN;
		c->nodes[i].clock_skew_unc_s = NAN;
		c->nodes[i].link_gbps = NAN;
	}
	return c;
}

void gv_cluster_free(struct gv_cluster *c)
{
	if (!c)
		return;
	for (int i = 0; i < c->nnodes; i++)
		free(c->nodes[i].metrics);
	free(c->nodes);
	free(c->pairs);
	free(c->ar);
	free(c->findings);
	free(c);
}

int gv_cluster_add_finding(struct gv_cluster *c, int kind, int rank, int peer, int drain, const char *fmt, ...)
{
	struct gv_cluster_finding *f = realloc(c->findings, (c->nfindings + 1) * sizeof *f);
	if (!f)
		return -1;
	c->findings = f;
	f += c->nfindings++;
	memset(f, 0, sizeof *f);
	f->kind = kind;
	f->rank = rank;
	f->peer = peer;
	f->drain = drain;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(f->evidence, sizeof f->evidence, fmt, ap);
	va_end(ap);
	return 0;
}

static const char *name_of(const char *const *names, size_t n, int i)
{
	return i >= 0 && (size_t)i < n ? names[i] : "?";
}

const char *gv_node_state_name(int state)
{
	static const char *const names[] = { "ok", "missing", "lost" };
	return name_of(names, sizeof names / sizeof names[0], state);
}

const char *gv_pair_state_name(int state)
{
	static const char *const names[] = { "measured", "failed", "skipped" };
	return name_of(names, sizeof names / sizeof names[0], state);
}

const char *gv_finding_name(int kind)
{
	static const char *const names[GV_FIND_KINDS] = {
		[GV_FIND_MISSING] = "missing", [GV_FIND_LOST] = "lost",
		[GV_FIND_NODE_REJECTED] = "node_rejected", [GV_FIND_NODE_UNMEASURED] = "node_unmeasured",
		[GV_FIND_BAD_NODE] = "bad_node", [GV_FIND_BAD_LINK] = "bad_link",
		[GV_FIND_STRAGGLER] = "straggler", [GV_FIND_FABRIC_RULE] = "fabric_rule",
		[GV_FIND_COORDINATOR] = "coordinator", [GV_FIND_INTERMITTENT] = "intermittent",
		[GV_FIND_CLOCK_SKEW] = "clock_skew", [GV_FIND_SHARED_HOST] = "shared_host",
	};
	return name_of(names, GV_FIND_KINDS, kind);
}
