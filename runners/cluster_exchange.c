/*
 * cluster_exchange.c - rank 0 instructing the other ranks and collecting
 * their replies, each wait bounded (runners/cluster_int.h).  Rank 0's own
 * part runs in a thread beside the others when a pair needs both sides at
 * once.
 */
#include "runners/cluster_int.h"
#include "platform/rendezvous.h"
#include "common/cluster.h"
#include "common/util.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void cluster_mark_lost(struct gv_cluster *c, int rank, const char *fmt, ...)
{
	if (rank < 0 || rank >= c->nnodes || c->nodes[rank].state != GV_NODE_OK)
		return;
	struct gv_cluster_node *nd = &c->nodes[rank];
	nd->state = GV_NODE_LOST;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(nd->why, sizeof nd->why, fmt, ap);
	va_end(ap);
	gv_debug("cluster: rank %d lost: %s", rank, nd->why);
}

int cluster_budget_ms(const struct cluster_xchg *x, int want_ms)
{
	if (!(x->deadline_at > 0))
		return want_ms;
	double left = x->deadline_at - x->reserve_s - bench_now();
	int ms = cluster_ms(left);
	return ms < want_ms ? ms : want_ms;
}

int cluster_default_deadline(int fingerprint_s, int wait_s, int pair_timeout_s, int rounds)
{
	double d = wait_s + 2.0 * (fingerprint_s + 60) + 10.0 * rounds + 3.0 * (pair_timeout_s + 15) +
		   (4.0 * pair_timeout_s + 15) + 60;
	return d > 30 * 86400.0 ? 30 * 86400 : (int)d;
}

/* Is this the reply awaited from a rank: the op asked for, or the reply to the last instruction? */
static int awaited(const struct cluster_xchg *x, const char *op, const json_t *m)
{
	const char *got = json_string_value(json_object_get(m, "op"));
	if (!got)
		return 0;
	if (op)
		return !strcmp(got, op);
	const json_t *seq = json_object_get(m, "seq");
	return !strcmp(got, "reply") && json_is_integer(seq) && json_integer_value(seq) == x->seq;
}

void cluster_name_slow(struct cluster_xchg *x)
{
	double floor = x->deadline_s * 0.1 > 5 ? x->deadline_s * 0.1 : 5;
	for (int i = 1; x->alone_s && i < x->c->nnodes; i++)
		if (x->alone_s[i] >= floor)
			cluster_mark_lost(x->c, i, "too slow: rank 0 waited %.0f s for it alone (after every other rank had "
					  "answered) and the run's deadline (--deadline %d s) ran out", x->alone_s[i], x->deadline_s);
}

void cluster_collect(struct cluster_xchg *x, const char *op, char *pending, json_t **replies, int timeout_ms)
{
	double end = bench_now() + timeout_ms / 1000.0, prev = bench_now();
	int left = 0;
	for (int i = 1; i < x->c->nnodes; i++)
		left += pending[i] != 0;
	while (left > 0) {
		double rem = end - bench_now();
		int from = -1;
		json_t *m = NULL;
		char err[256] = "";
		int rc = rem > 0 ? rdzv_recv(x->r, &from, &m, cluster_ms(rem), err, sizeof err) : 1;
		if (rc != 0)
			break;
		if (from <= 0 || from >= x->c->nnodes) {
			json_decref(m);
			continue;
		}
		if (!m) {
			cluster_mark_lost(x->c, from, "its connection to rank 0 dropped: %s", err[0] ? err : "closed");
		} else if (!pending[from] || !awaited(x, op, m)) {
			json_decref(m);   /* a late answer to an instruction already given up on */
			continue;
		} else {
			replies[from] = m;
			double now = bench_now();
			if (left == 1 && x->alone_s && now - prev > 1.0)   /* the last to answer: rank 0 waited for it alone */
				x->alone_s[from] += now - prev;
			prev = now;
		}
		if (pending[from]) {
			pending[from] = 0;
			left--;
		}
	}
	int late = 0;
	char silent[96];
	for (int i = 1; i < x->c->nnodes; i++)
		if (pending[i]) {
			late = 1;
			if (rdzv_silent(x->r, i, silent, sizeof silent))   /* its link, not its answer, is what is missing */
				cluster_mark_lost(x->c, i, "its connection to rank 0 dropped: %s", silent);
			else if (x->cut)
				cluster_mark_lost(x->c, i, "too slow: it had not answered rank 0 (%s) by the run's deadline "
						  "(--deadline %d s)", x->step ? x->step : "?", x->deadline_s);
			else
				cluster_mark_lost(x->c, i, "it did not answer rank 0 (%s) within %d s", x->step ? x->step : "?",
						  (timeout_ms + 500) / 1000);
			pending[i] = 0;
		}
	if (x->cut && late)   /* the deadline ran out on this step: who made it so */
		cluster_name_slow(x);
}

struct local {
	struct cluster_node *n;
	json_t *msg, *reply;
};

static void *local_run(void *arg)
{
	struct local *l = arg;
	l->reply = cluster_node_do(l->n, l->msg);
	return NULL;
}

void cluster_exchange(struct cluster_xchg *x, json_t **msgs, json_t **replies, int timeout_ms, int beside)
{
	int n = x->c->nnodes;
	char *pending = calloc((size_t)n, 1);
	if (!pending)
		return;
	int budget = cluster_budget_ms(x, timeout_ms);
	x->cut = budget < timeout_ms;
	timeout_ms = budget;
	x->seq++;
	for (int i = 0; i < n; i++)
		replies[i] = NULL;
	for (int i = 1; i < n; i++) {
		if (!msgs[i] || x->c->nodes[i].state != GV_NODE_OK)
			continue;
		char err[256];
		json_object_set_new(msgs[i], "seq", json_integer(x->seq));
		if (rdzv_send(x->r, i, msgs[i], timeout_ms, err, sizeof err))
			cluster_mark_lost(x->c, i, "rank 0 could not reach it: %s", err);
		else
			pending[i] = 1;
	}
	struct local l = { x->n, msgs[0], NULL };
	pthread_t t;
	int threaded = 0;
	if (msgs[0] && beside && pthread_create(&t, NULL, local_run, &l) == 0)
		threaded = 1;
	else if (msgs[0])
		local_run(&l);
	cluster_collect(x, NULL, pending, replies, timeout_ms);
	if (threaded)
		pthread_join(t, NULL);
	replies[0] = l.reply;
	free(pending);
}
