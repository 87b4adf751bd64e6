/*
 * cluster_util.c - below every file of the cluster analysis (judge/cluster_int.h): the rules in
 * force, which ranks share a host, a pair's figures, the healthy pairs' figure, and the words
 * the findings share.  It calls none of the other cluster files.
 */
#include "judge/cluster_int.h"
#include "common/stats.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cluster_rules_of(const struct policy *p, struct cluster_rules *r, char *name, size_t namelen, char *err,
		     size_t errlen)
{
	struct policy *builtin = NULL;
	if (p && p->cluster.line) {
		r->pc = p->cluster;
	} else {
		if (policy_load(NULL, &builtin, err, errlen))
			return -1;
		r->pc = builtin->cluster;
		policy_free(builtin);
	}
	if (name && p)
		snprintf(name, namelen, "%s %.19s%s", p->name ? p->name : "unnamed", p->digest,
			 p->cluster.line ? "" : " (fabric rules: the built-in default's)");
	else if (name)
		snprintf(name, namelen, "%s (built-in)", POLICY_BUILTIN_NAME);
	return 0;
}

/*
 * Two ranks share a host when both the host name and the address rank 0 saw are the same: network
 * namespaces of one machine share the host name but not the address, so they are nodes; two
 * ranks started on one machine by mistake (no --ntasks-per-node=1) share both.
 */
int cluster_shared_hosts(const struct gv_cluster *c, unsigned char *shared, unsigned char *left_out)
{
	int n = 0;
	if (shared)
		memset(shared, 0, (size_t)c->nnodes);
	for (int i = 0; i < c->nnodes; i++)
		for (int j = i + 1; j < c->nnodes; j++) {
			const struct gv_cluster_node *a = &c->nodes[i], *b = &c->nodes[j];
			if (!a->host[0] || !a->addr[0] || strcmp(a->host, b->host) || strcmp(a->addr, b->addr))
				continue;
			if (shared) {
				n += !shared[i] + !shared[j];
				shared[i] = shared[j] = 1;
			}
		}
	for (size_t k = 0; left_out && k < c->npairs; k++) {
		const struct gv_cluster_node *a = &c->nodes[c->pairs[k].a], *b = &c->nodes[c->pairs[k].b];
		left_out[k] = a->host[0] && a->addr[0] && !strcmp(a->host, b->host) && !strcmp(a->addr, b->addr);
	}
	return n;
}

double cluster_pair_way(const struct gv_cluster_pair *p, enum cluster_fig f, int ab)
{
	if (f == CLUSTER_FIG_LAT)
		return p->lat_us;
	if (f == CLUSTER_FIG_HOST)
		return ab ? p->gbps_ab : p->gbps_ba;
	return ab ? p->nccl_gbps_ab : p->nccl_gbps_ba;
}

double cluster_pair_figure(const struct gv_cluster_pair *p, enum cluster_fig f)
{
	double ab = cluster_pair_way(p, f, 1), ba = cluster_pair_way(p, f, 0);
	if (p->state != GV_PAIR_MEASURED || !isfinite(ab) || !isfinite(ba))
		return NAN;
	return ab < ba ? ab : ba;
}

double cluster_pair_link(const struct gv_cluster *c, const struct gv_cluster_pair *p)
{
	double a = c->nodes[p->a].link_gbps, b = c->nodes[p->b].link_gbps;
	if (!(a > 0))
		return b > 0 ? b : NAN;
	return b > 0 && b < a ? b : a;
}

double cluster_healthy(double *v, size_t n, int higher_better)
{
	if (!n)
		return NAN;
	qsort(v, n, sizeof *v, gv_cmp_double);
	size_t hi = (size_t)ceil(0.9 * (double)n) - 1;   /* nearest rank of the 0.9 quantile */
	return higher_better ? v[hi] : v[n - 1 - hi];
}

const char *cluster_fig_words(enum cluster_fig f)
{
	return f == CLUSTER_FIG_HOST ? "host to host" : f == CLUSTER_FIG_NCCL ? "GPU to GPU (NCCL)" : "latency";
}

void cluster_duration(double s, char *buf, size_t size)
{
	double a = fabs(s);
	if (a >= 2 * 365.25 * 86400)
		snprintf(buf, size, "%.1f years", a / (365.25 * 86400));
	else if (a >= 2 * 86400)
		snprintf(buf, size, "%.0f days", a / 86400);
	else if (a >= 3600)
		snprintf(buf, size, "%.1f h", a / 3600);
	else if (a >= 120)
		snprintf(buf, size, "%.1f min", a / 60);
	else
		snprintf(buf, size, "%.3g s", a);
}

void cluster_list_ints(const int *v, size_t n, size_t max, char *buf, size_t size)
{
	size_t shown = n > max ? max : n;
	buf[0] = 0;
	for (size_t i = 0; i < shown; i++) {
		size_t l = strlen(buf);
		const char *sep = !i ? "" : i + 1 == shown && shown == n ? " and " : ", ";
		snprintf(buf + l, size - l, "%s%d", sep, v[i]);
	}
	if (shown < n) {
		size_t l = strlen(buf);
		snprintf(buf + l, size - l, " and %zu more", n - shown);
	}
}
