/*
 * cluster_worker.c - a rank other than 0 in `gpuvet cluster run`
 * (runners/cluster_int.h): it carries out rank 0's instructions one by one
 * and ends on "done" with its own node's line.  Every wait is bounded: a
 * rank 0 that goes away or falls silent ends it with exit 3.
 */
#include "runners/cluster_int.h"
#include "platform/rendezvous.h"
#include "common/util.h"

#include <stdio.h>
#include <string.h>

/*
 * The longest rank 0 may leave this rank without an instruction after it
 * answered `op`: the others' fingerprints (rank 0 waits for them up to the
 * selection's deadline and a minute), else two rounds of pairs (a round
 * sat out) or the all-reduce, and then some.
 */
static int idle_ms(const struct cluster_node *n, const char *op)
{
	double pt = n->o->pair_timeout_s;
	if (op && !strcmp(op, "fingerprint"))
		return cluster_ms(n->fingerprint_s + 90.0);
	double rounds = 2 * (pt + 15), ar = 4 * pt + 15;
	return cluster_ms((rounds > ar ? rounds : ar) + 30.0);
}

/* "done": this node's line (text, or its JSON object with --json) and its exit code. */
static int done(const struct cluster_node *n, const json_t *msg)
{
	const json_t *node = json_object_get(msg, "node");
	int rc = json_is_integer(json_object_get(node, "exit_code")) ? (int)json_integer_value(json_object_get(node, "exit_code"))
								      : GV_EXIT_UNMEASURABLE;
	if (n->o->json) {
		if (json_dumpf(node, stdout, JSON_COMPACT | JSON_ENSURE_ASCII) == 0)
			fputc('\n', stdout);
	} else if (!gv_quiet) {
		const char *line = json_string_value(json_object_get(node, "line"));
		printf("%s\n", line ? line : "(rank 0 sent no line)");
	}
	fflush(stdout);
	return rc;
}

/* rank 0's wait past its deadline: its verdict and every rank's line come within the deadline; this is slack. */
#define AFTER_DEADLINE_S 60.0

/* A wait of want_ms, no longer than until rank 0's deadline (and some slack) has passed. */
static int within_deadline(const struct cluster_node *n, int want_ms)
{
	if (!(n->deadline_at > 0))
		return want_ms;
	int ms = cluster_ms(n->deadline_at + AFTER_DEADLINE_S - bench_now());
	return ms < want_ms ? ms : want_ms;
}

static int gone(const struct cluster_node *n, const char *where, const char *err)
{
	if (!strncmp(err, "rank 0 ", 7))   /* the rendezvous' own words begin with whom: said once */
		err += 7;
	gv_err("cluster: rank %d: rank 0 (host %s) went away%s%s; this node is not judged by the cluster (its own run is "
	       "in its store)", n->rank, n->rank0_host[0] ? n->rank0_host : where, err[0] ? ": " : "", err);
	return GV_EXIT_UNMEASURABLE;
}

int cluster_work(struct cluster_node *n, struct rdzv *r)
{
	/* the first instruction comes once every rank has arrived: a rendezvous nobody drives (a port another
	 * program holds) is given up on then, not after a whole run's silence */
	int wait = within_deadline(n, cluster_ms(n->o->wait_s + 20.0));
	const char *where = n->o->rendezvous ? n->o->rendezvous : "?";
	for (;;) {
		int from = 0;
		json_t *msg = NULL;
		char err[256] = "";
		int rc = rdzv_recv(r, &from, &msg, wait, err, sizeof err);
		if (rc == 1) {
			gv_err("cluster: rank %d: rank 0 (host %s) said nothing for %d s; giving up", n->rank, n->rank0_host,
			       wait / 1000);
			return GV_EXIT_UNMEASURABLE;
		}
		if (rc < 0 || !msg)
			return gone(n, where, err);
		const char *op = json_string_value(json_object_get(msg, "op"));
		if (op && !strcmp(op, "done")) {
			rc = done(n, msg);
			json_decref(msg);
			return rc;
		}
		json_t *rep = cluster_node_do(n, msg);
		json_object_set(rep, "seq", json_object_get(msg, "seq"));
		wait = within_deadline(n, idle_ms(n, op));
		json_decref(msg);
		rc = rdzv_send(r, 0, rep, wait, err, sizeof err);
		json_decref(rep);
		if (rc) {   /* rank 0 may have ended the run while this rank worked: its line may be waiting */
			if (rdzv_recv(r, &from, &msg, 0, err, sizeof err) == 0 && msg &&
			    !strcmp(json_string_value(json_object_get(msg, "op")) ? json_string_value(json_object_get(msg, "op")) : "", "done")) {
				rc = done(n, msg);
				json_decref(msg);
				return rc;
			}
			json_decref(msg);
			return gone(n, where, err);
		}
	}
}
