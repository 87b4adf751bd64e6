/*
 * cluster_remeasure.c - a suspect straggler measured again before it is
 * judged (#56, runners/cluster_int.h).  After the fingerprints rank 0 asks
 * the analysis which nodes look like stragglers (cluster_suspects(),
 * judge/cluster.h); each of them runs again the benches behind its figures
 * (every bench that gave one of its straggler figures: the analysis then has
 * two measurements of each, taken minutes apart) and sends the new
 * fingerprint; rank 0 reduces it to figures as it did the first
 * (cluster_node_metrics()) and keeps them beside the first as
 * gv_cluster_metric.remeasured.  The second measurement is not stored as a
 * run of its own (the node would count twice in the store's fleet and
 * rankings): it lives in the cluster run.  All of it within the run's
 * deadline.
 */
#include "runners/cluster_int.h"
#include "judge/cluster.h"
#include "benches/bench.h"
#include "common/cluster.h"
#include "common/util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SUSPECTS 64

/*
 * GPUVET_TEST_SUSPECTS=R,R...: ranks taken as suspects besides the analysis' own (tests plant one
 * without depending on the straggler rule); read only where test benches are (GPUVET_TEST_BENCHES=1).
 */
static int test_suspects(int nnodes, int *ranks, int n, int max)
{
	const char *e = getenv("GPUVET_TEST_SUSPECTS");
	if (!e || !bench_test_benches_allowed())
		return n;
	for (const char *p = e; *p && n < max;) {
		char *end;
		long r = strtol(p, &end, 10);
		if (end == p)
			break;
		int dup = 0;
		for (int i = 0; i < n; i++)
			dup |= ranks[i] == r;
		if (r >= 0 && r < nnodes && !dup)
			ranks[n++] = (int)r;
		p = *end == ',' ? end + 1 : end;
	}
	return n;
}

/* The benches behind a node's figures, by name, and how long they may take together. */
static json_t *benches_of(const struct gv_cluster_node *nd, const struct bench_config *cfg, int *seconds)
{
	json_t *names = json_array();
	*seconds = 0;
	for (size_t m = 0; m < nd->nmetrics; m++) {
		const char *owner = metric_owner(nd->metrics[m].name);
		const struct bench *b = owner ? bench_find(owner) : NULL;
		size_t i;
		json_t *v;
		int seen = 0;
		json_array_foreach(names, i, v)
			seen |= !strcmp(json_string_value(v), owner ? owner : "");
		if (!b || seen)
			continue;
		json_array_append_new(names, json_string(b->name));
		*seconds += b->deadline_s ? b->deadline_s(cfg) : 60;
	}
	return names;
}

/* The figures of a second fingerprint, beside the first ones of the same name. */
static void take(struct gv_cluster_node *nd, const json_t *rep)
{
	struct gv_cluster_node again = { 0 };
	if (!json_is_true(json_object_get(rep, "ok")) ||
	    cluster_node_metrics(json_object_get(rep, "fingerprint"), &again)) {
		gv_debug("cluster: rank %d not measured again: %s", nd->rank,
			 json_string_value(json_object_get(rep, "why")) ? json_string_value(json_object_get(rep, "why")) : "?");
		free(again.metrics);
		return;
	}
	for (size_t m = 0; m < nd->nmetrics; m++)
		for (size_t j = 0; j < again.nmetrics; j++)
			if (!strcmp(nd->metrics[m].name, again.metrics[j].name))
				nd->metrics[m].remeasured = again.metrics[j].value;
	free(again.metrics);
}

void cluster_remeasure(struct cluster_xchg *x)
{
	struct gv_cluster *c = x->c;
	int ranks[MAX_SUSPECTS], longest = 0, asked = 0;
	int ns = cluster_suspects(c, x->n->pol, ranks, MAX_SUSPECTS);
	ns = test_suspects(c->nnodes, ranks, ns < 0 ? 0 : ns, MAX_SUSPECTS);
	json_t **msgs = calloc((size_t)c->nnodes, sizeof *msgs), **replies = calloc((size_t)c->nnodes, sizeof *replies);
	for (int s = 0; msgs && replies && s < ns; s++) {
		struct gv_cluster_node *nd = &c->nodes[ranks[s]];
		int secs;
		if (nd->state != GV_NODE_OK || !nd->nmetrics)
			continue;
		json_t *names = benches_of(nd, &x->n->cfg, &secs);
		msgs[ranks[s]] = json_pack("{s:s,s:o}", "op", "remeasure", "benches", names);
		longest = secs > longest ? secs : longest;
		asked++;
	}
	int budget = cluster_budget_ms(x, cluster_ms(longest + 60.0));
	if (asked && budget < cluster_ms(longest + 10.0)) {
		gv_err("cluster: %d suspect node%s not measured again: the run's deadline (--deadline %d s) leaves %d s, "
		       "its benches may take %d s", asked, asked == 1 ? "" : "s", x->deadline_s, budget / 1000, longest);
	} else if (asked) {
		gv_debug("cluster: %d suspect node%s measure%s again (up to %d s)", asked, asked == 1 ? "" : "s",
			 asked == 1 ? "s" : "", longest);
		x->step = "measuring its suspect figures again";
		cluster_exchange(x, msgs, replies, cluster_ms(longest + 60.0), 0);
		for (int i = 0; i < c->nnodes; i++)
			if (replies[i])
				take(&c->nodes[i], replies[i]);
	}
	for (int i = 0; msgs && replies && i < c->nnodes; i++) {
		json_decref(msgs[i]);
		json_decref(replies[i]);
	}
	free(msgs);
	free(replies);
}
