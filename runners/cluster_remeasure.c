/*
 * cluster_remeasure.c - the suspect stragglers measured again before they
 * are judged (#56, runners/cluster_int.h).  After the fingerprints rank 0
 * asks the analysis which nodes look like stragglers (cluster_suspects(),
 * judge/cluster.h); every node then runs again, side by side, the benches
 * behind the suspects' figures (every bench that gave one of their straggler
 * figures) and sends the new fingerprint; rank 0 reduces it to figures as it
 * did the first (cluster_node_metrics()) and keeps them beside the first as
 * gv_cluster_metric.remeasured.  A suspect's second figure is judged against
 * the others' second figures, taken at the same time: whatever moved every
 * node between the two passes (a GPU's clocks after its first burn, other
 * tenants, the load of a shared machine) moves that median too, which a
 * suspect measured alone against the first median would not see.  It costs
 * no wall time: the others wait for the suspects either way.  The second
 * measurement is not stored as a run of its own (the node would count twice
 * in the store's fleet and rankings): it lives in the cluster run.  All of it
 * within the run's deadline.
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

/* Adds the benches behind a node's figures to names, by name, and how long the ones added may take to *seconds. */
static void benches_of(const struct gv_cluster_node *nd, const struct bench_config *cfg, json_t *names, int *seconds)
{
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
	int ranks[MAX_SUSPECTS], longest = 0, suspects = 0, asked = 0;
	int ns = cluster_suspects(c, x->n->pol, ranks, MAX_SUSPECTS);
	ns = test_suspects(c->nnodes, ranks, ns < 0 ? 0 : ns, MAX_SUSPECTS);
	json_t *names = json_array();
	for (int s = 0; names && s < ns; s++) {
		const struct gv_cluster_node *nd = &c->nodes[ranks[s]];
		if (nd->state == GV_NODE_OK && nd->nmetrics)
			benches_of(nd, &x->n->cfg, names, &longest), suspects++;
	}
	json_t **msgs = calloc((size_t)c->nnodes, sizeof *msgs), **replies = calloc((size_t)c->nnodes, sizeof *replies);
	for (int i = 0; msgs && replies && json_array_size(names) && i < c->nnodes; i++)
		if (c->nodes[i].state == GV_NODE_OK && c->nodes[i].nmetrics) {
			msgs[i] = json_pack("{s:s,s:O}", "op", "remeasure", "benches", names);
			asked++;
		}
	int budget = cluster_budget_ms(x, cluster_ms(longest + 60.0));
	if (asked && budget < cluster_ms(longest + 10.0)) {
		gv_err("cluster: %d suspect node%s not measured again: the run's deadline (--deadline %d s) leaves %d s, "
		       "its benches may take %d s", suspects, suspects == 1 ? "" : "s", x->deadline_s, budget / 1000, longest);
	} else if (asked) {
		gv_debug("cluster: %d suspect node%s: %d nodes measure %s benches again side by side (up to %d s)", suspects,
			 suspects == 1 ? "" : "s", asked, suspects == 1 ? "its" : "their", longest);
		x->step = "measuring the suspects' benches again";
		cluster_exchange(x, msgs, replies, cluster_ms(longest + 60.0), 0);
		for (int i = 0; i < c->nnodes; i++)
			if (replies[i])
				take(&c->nodes[i], replies[i]);
	}
	for (int i = 0; msgs && replies && i < c->nnodes; i++) {
		json_decref(msgs[i]);
		json_decref(replies[i]);
	}
	json_decref(names);
	free(msgs);
	free(replies);
}
