/*
 * cluster_coord.c - rank 0 of `gpuvet cluster run` (runners/cluster_int.h):
 * waits for the ranks, has every node take its fingerprint at once, drives
 * the pair schedule round by round (libfabric host to host, then NCCL GPU
 * to GPU where every node has GPUs), runs one all-reduce over every GPU,
 * then analyses (judge/cluster.h), stores the nodes' runs and the cluster
 * run, prints the verdict and the nodes to drain, and gives every rank its
 * own line.
 */
#include "runners/cluster_int.h"
#include "runners/cluster_show.h"
#include "runners/hooks.h"
#include "platform/rendezvous.h"
#include "platform/hostlist.h"
#include "judge/cluster.h"
#include "judge/policy.h"
#include "benches/nccl_pair.h"
#include "common/cluster.h"
#include "common/util.h"
#include "results/store.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct coord {
	struct cluster_xchg x;
	const struct cluster_engine *e;
	char **fabric;              /* each rank's fabric address, NULL: none (c->nodes[i].why says) */
	int *ngpus;
	char **nccl_why;            /* each rank's reason for no NCCL pairs, from its hello */
	json_t **msgs, **replies;   /* one per rank, reused by every exchange */
};

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
	if (gv_quiet || (!gv_verbose && !gv_progress_enabled()))
		return;
	va_list ap;
	va_start(ap, fmt);
	fputs("cluster: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

static void clear(struct coord *k)
{
	for (int i = 0; i < k->x.c->nnodes; i++) {
		json_decref(k->msgs[i]);
		json_decref(k->replies[i]);
		k->msgs[i] = k->replies[i] = NULL;
	}
}

static const char *jstr(const json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));
	return s ? s : "";
}

/* A node as its hello says it: host, address, fabric, GPUs. */
static void take_hello(struct coord *k, int i, const json_t *h, const char *addr)
{
	struct gv_cluster_node *nd = &k->x.c->nodes[i];
	nd->state = GV_NODE_OK;
	snprintf(nd->host, sizeof nd->host, "%s", jstr(h, "host"));
	snprintf(nd->addr, sizeof nd->addr, "%s", addr);
	const char *fab = json_string_value(json_object_get(h, "fabric"));
	k->fabric[i] = fab ? gv_strdup(fab) : NULL;
	if (!fab)
		snprintf(nd->why, sizeof nd->why, "no fabric: %s", jstr(h, "fabric_why"));
	k->ngpus[i] = (int)json_integer_value(json_object_get(h, "ngpus"));
	free(k->nccl_why[i]);
	k->nccl_why[i] = gv_strdup(jstr(h, "nccl_why"));
	if (!k->x.c->transport[0] && json_string_value(json_object_get(h, "provider")))
		snprintf(k->x.c->transport, sizeof k->x.c->transport, "%s", jstr(h, "provider"));
	const json_t *lg = json_object_get(h, "link_gbps");
	nd->link_gbps = json_is_number(lg) && json_number_value(lg) > 0 ? json_number_value(lg) : NAN;
	snprintf(nd->link_source, sizeof nd->link_source, "%s", isnan(nd->link_gbps) ? "" : jstr(h, "link_source"));
}

/*
 * rank 0's say on a hello whose proof holds: under Slurm with one task per node, a rank must come
 * from the address its host in SLURM_JOB_NODELIST resolves to (where it resolves;
 * GPUVET_CLUSTER_ADDR_CHECK=0 turns it off).  The welcome carries rank 0's host and the time left
 * before the run's deadline.
 */
static int admit(void *arg, int rank, const json_t *hello, json_t *welcome, char *why, size_t whylen)
{
	struct coord *k = arg;
	const char *addr = jstr(hello, "addr"), *off = getenv("GPUVET_CLUSTER_ADDR_CHECK");
	char host[256], seen[160];
	if (!(off && !strcmp(off, "0")) && !cluster_rank_host(k->e, rank, host, sizeof host) &&
	    hostlist_resolves_to(host, addr, seen, sizeof seen) == 0) {
		snprintf(why, whylen, "rank %d came from %.60s, but its host in SLURM_JOB_NODELIST, %.60s, is %.60s", rank,
			 addr, host, seen);
		return -1;
	}
	json_object_set_new(welcome, "host", json_string(k->x.n->host));
	json_object_set_new(welcome, "deadline_s", json_integer(k->x.deadline_s));
	json_object_set_new(welcome, "deadline_left_s", json_real(k->x.deadline_at - bench_now()));
	return 0;
}

/*
 * A rank that never arrived: its host from the engine where it says, how long rank 0 waited (its
 * --wait, or less when the deadline came first) and why a connection claiming it was refused.
 */
static void never_arrived(struct coord *k, int i, int waited_ms, int wait_ms)
{
	struct gv_cluster_node *nd = &k->x.c->nodes[i];
	const char *refused = rdzv_refused_why(k->x.r, i);
	char cut[48] = "";
	if (waited_ms < wait_ms)
		snprintf(cut, sizeof cut, ", cut by --deadline %d", k->x.deadline_s);
	if (cluster_rank_host(k->e, i, nd->host, sizeof nd->host))
		nd->host[0] = '\0';
	snprintf(nd->why, sizeof nd->why, "rank 0 waited %d s for it, --wait %d%s%s%.180s", waited_ms / 1000,
		 wait_ms / 1000, cut, refused ? "; " : "", refused ? refused : "");
}

/* Every rank's hello, then its "ready" (sent once it has opened its fabric on the address it reached us from). */
static void arrive(struct coord *k, int wait_ms)
{
	struct gv_cluster *c = k->x.c;
	double t0 = bench_now();
	char late[160];
	snprintf(late, sizeof late, "it arrived after rank 0 stopped waiting for ranks (--wait %d s)", wait_ms / 1000);
	rdzv_set_late_why(k->x.r, late);
	rdzv_set_admit(k->x.r, admit, k);
	int waited = cluster_budget_ms(&k->x, wait_ms);
	int got = rdzv_gather_hellos(k->x.r, waited);
	say("%d of %d ranks arrived after %.1f s (--wait %d s)", got + 1, c->nnodes, bench_now() - t0, wait_ms / 1000);
	cluster_node_open(k->x.n, rdzv_local_addr(k->x.r));   /* the address the others reached us at */
	json_t *mine = cluster_node_hello(k->x.n);
	take_hello(k, 0, mine, rdzv_local_addr(k->x.r));
	c->nodes[0].clock_skew_s = c->nodes[0].clock_skew_unc_s = 0;
	json_decref(mine);
	char *pending = calloc((size_t)c->nnodes, 1);
	for (int i = 1; pending && i < c->nnodes; i++) {
		const json_t *h = rdzv_hello(k->x.r, i), *sk = json_object_get(h, "clock_skew_s"),
			     *unc = json_object_get(h, "clock_skew_unc_s");
		if ((pending[i] = h != NULL))
			c->nodes[i].state = GV_NODE_OK;   /* from now on, silence makes it lost */
		c->nodes[i].clock_skew_s = json_is_number(sk) ? json_number_value(sk) : NAN;
		c->nodes[i].clock_skew_unc_s = json_is_number(unc) ? json_number_value(unc) : NAN;
	}
	for (int i = 1; i < c->nnodes; i++)
		if (!pending || !pending[i])
			never_arrived(k, i, waited, wait_ms);
	int left = wait_ms - cluster_ms(bench_now() - t0);
	k->x.step = "its ready message";
	k->x.cut = 0;
	if (pending)
		cluster_collect(&k->x, "ready", pending, k->replies, cluster_budget_ms(&k->x, left > 10000 ? left : 10000));
	for (int i = 1; i < c->nnodes; i++)
		if (k->replies[i]) {
			const json_t *h = rdzv_hello(k->x.r, i);
			take_hello(k, i, k->replies[i], jstr(h, "addr"));
		}
	free(pending);
	clear(k);
}

/* A node's fingerprint, received: into this store as an ordinary run (flags derived, as an import), and its figures. */
static void take_fingerprint(struct coord *k, int i, json_t *rep)
{
	struct gv_cluster_node *nd = &k->x.c->nodes[i];
	json_t *fp = json_object_get(rep, "fingerprint");
	const json_t *run = json_object_get(fp, "run");
	if (!json_is_true(json_object_get(rep, "ok")) || !fp) {
		nd->verdict = GV_EXIT_UNMEASURABLE;
		if (nd->state == GV_NODE_OK)
			snprintf(nd->why, sizeof nd->why, "no fingerprint: %s", jstr(rep, "why"));
		return;
	}
	snprintf(nd->run_uuid, sizeof nd->run_uuid, "%s", jstr(run, "uuid"));
	snprintf(nd->provider, sizeof nd->provider, "%s", jstr(run, "provider"));
	snprintf(nd->instance_type, sizeof nd->instance_type, "%s", jstr(run, "instance_type"));
	snprintf(nd->gpu_model, sizeof nd->gpu_model, "%s", jstr(run, "gpu_model"));
	nd->verdict = (int)json_integer_value(json_object_get(rep, "verdict"));
	if (nd->state == GV_NODE_OK)   /* a node named lost keeps why */
		snprintf(nd->why, sizeof nd->why, "%s", jstr(rep, "why"));
	cluster_node_metrics(fp, nd);
	if (i == 0)
		return;   /* rank 0's run is in this store already */
	int64_t id;
	struct store *s = k->x.n->s;
	int rc = store_import_fingerprint(s, fp, &id);
	if (rc == STORE_OK && hooks_imported_flags(s, id))
		gv_err("cluster: rank %d's run %s: flags not stored: %s", i, nd->run_uuid, store_errmsg(s));
	else if (rc != STORE_OK && rc != STORE_DUP)   /* the node keeps it in its own store either way */
		gv_err("cluster: rank %d's run %s not stored here: %s", i, nd->run_uuid, store_errmsg(s));
}

/* Every node takes its fingerprint at once (rank 0's own first, the others' replies wait in their sockets). */
static void fingerprints(struct coord *k)
{
	struct gv_cluster *c = k->x.c;
	for (int i = 0; i < c->nnodes; i++)
		if (c->nodes[i].state == GV_NODE_OK)
			k->msgs[i] = json_pack("{s:s}", "op", "fingerprint");
	say("every node takes its fingerprint (up to %d s)", k->x.n->fingerprint_s);
	k->x.step = "its fingerprint";
	cluster_exchange(&k->x, k->msgs, k->replies, cluster_ms(k->x.n->fingerprint_s + 60.0), 0);
	for (int i = 0; i < c->nnodes; i++)
		if (k->replies[i])
			take_fingerprint(k, i, k->replies[i]);
	clear(k);
}

/* Why a pair cannot be tried: a node gone or without a fabric, or both ranks on one host; NULL when it can. */
static const char *untriable(const struct coord *k, int a, int b, char *buf, size_t len)
{
	const struct gv_cluster_node *nodes = k->x.c->nodes;
	for (int j = 0; j < 2; j++) {
		int r = j ? b : a;
		if (nodes[r].state != GV_NODE_OK || !k->fabric[r]) {
			snprintf(buf, len, "rank %d %s", r, nodes[r].state == GV_NODE_MISSING ? "never arrived"
						 : nodes[r].state == GV_NODE_LOST ? "dropped out" : "has no fabric");
			return buf;
		}
	}
	if (nodes[a].host[0] && !strcmp(nodes[a].host, nodes[b].host) && !strcmp(nodes[a].addr, nodes[b].addr)) {
		snprintf(buf, len, "both ranks are on host %.50s (%.40s): no link between them", nodes[a].host, nodes[a].addr);
		return buf;
	}
	return NULL;
}

/* Every pair from `first` on not yet tried is skipped: the run's deadline leaves no time for it. */
static void out_of_time(struct coord *k, size_t first, int nccl)
{
	struct gv_cluster *c = k->x.c;
	for (size_t i = first; i < c->npairs; i++) {
		struct gv_cluster_pair *p = &c->pairs[i];
		if (nccl || p->state != GV_PAIR_SKIPPED || p->why[0])
			continue;
		snprintf(p->why, sizeof p->why, "not tried: the run's deadline (--deadline %d s) left no time for round %d",
			 k->x.deadline_s, p->round + 1);
	}
	cluster_name_slow(&k->x);
	say("the run's deadline leaves no time for the %s rounds left", nccl ? "NCCL" : "host");
}

static json_t *pair_msg(const struct coord *k, const char *op, int peer, int lower, int timeout_ms)
{
	return json_pack("{s:s,s:i,s:b,s:s?,s:i}", "op", op, "peer", peer, "lower", lower, "fabric", k->fabric[peer],
			 "timeout_ms", timeout_ms);
}

/* The figures of a pair from whichever side answered well (both measured the same exchange). */
static void take_pair(struct coord *k, struct gv_cluster_pair *p, int nccl)
{
	const json_t *ra = k->replies[p->a], *rb = k->replies[p->b];
	for (int j = 0; j < 2; j++) {   /* a side whose pair failed opened a new endpoint: its address from now on */
		const json_t *r = j ? rb : ra, *fab = json_object_get(r, "fabric");
		int who = j ? p->b : p->a;
		if (!fab)
			continue;
		free(k->fabric[who]);
		k->fabric[who] = json_is_string(fab) ? gv_strdup(json_string_value(fab)) : NULL;
	}
	const json_t *good = json_is_true(json_object_get(ra, "ok")) ? ra : json_is_true(json_object_get(rb, "ok")) ? rb : NULL;
	if (!good) {
		const json_t *bad = ra && jstr(ra, "why")[0] ? ra : rb;
		const struct gv_cluster_node *na = &k->x.c->nodes[p->a], *nb = &k->x.c->nodes[p->b];
		if (!nccl && (na->state == GV_NODE_LOST || nb->state == GV_NODE_LOST)) {   /* no evidence on the other side */
			p->state = GV_PAIR_SKIPPED;
			snprintf(p->why, sizeof p->why, "rank %d dropped out during it", na->state == GV_NODE_LOST ? p->a : p->b);
		} else if (!nccl) {
			p->state = GV_PAIR_FAILED;
			snprintf(p->why, sizeof p->why, "%s", bad ? jstr(bad, "why") : "neither side answered");
		}
		return;
	}
	const json_t *ab = json_object_get(good, "gbps_ab"), *ba = json_object_get(good, "gbps_ba");
	if (nccl) {
		p->nccl_gbps_ab = json_is_number(ab) ? json_number_value(ab) : NAN;
		p->nccl_gbps_ba = json_is_number(ba) ? json_number_value(ba) : NAN;
		if (!k->x.c->nccl_net[0])
			snprintf(k->x.c->nccl_net, sizeof k->x.c->nccl_net, "%s", jstr(good, "net"));
		return;
	}
	p->state = GV_PAIR_MEASURED;
	p->gbps_ab = json_is_number(ab) ? json_number_value(ab) : NAN;
	p->gbps_ba = json_is_number(ba) ? json_number_value(ba) : NAN;
	const json_t *lat = json_object_get(good, "lat_us");
	p->lat_us = json_is_number(lat) ? json_number_value(lat) : NAN;
}

/*
 * A round's waits within the run's deadline: the pair's own timeout (what each side is told) and
 * the exchange's; 0 when the deadline leaves too little for a pair (under 2 s of it).
 */
static int round_budget(const struct coord *k, int pair_ms, int *tmo)
{
	int budget = cluster_budget_ms(&k->x, pair_ms + 15000);
	*tmo = budget - 5000 < pair_ms ? budget - 5000 : pair_ms;
	return *tmo >= 2000;
}

/* Round by round, the pairs the schedule names: both sides at once, every pair of a round side by side. */
static void host_rounds(struct coord *k)
{
	struct gv_cluster *c = k->x.c;
	size_t first = 0;
	char step[48];
	for (int round = 0; round < c->nrounds; round++) {
		size_t end = first;
		char buf[160];
		int tmo;
		while (end < c->npairs && c->pairs[end].round == round)
			end++;
		if (!round_budget(k, cluster_ms(k->x.n->o->pair_timeout_s), &tmo)) {
			out_of_time(k, first, 0);
			return;
		}
		for (size_t i = first; i < end; i++) {
			struct gv_cluster_pair *p = &c->pairs[i];
			const char *why = untriable(k, p->a, p->b, buf, sizeof buf);
			if (why) {
				p->state = GV_PAIR_SKIPPED;
				snprintf(p->why, sizeof p->why, "%s", why);
				continue;
			}
			k->msgs[p->a] = pair_msg(k, "pair", p->b, 1, tmo);
			k->msgs[p->b] = pair_msg(k, "pair", p->a, 0, tmo);
		}
		say("round %d of %d: %zu pairs", round + 1, c->nrounds, end - first);
		snprintf(step, sizeof step, "its pair of round %d of %d", round + 1, c->nrounds);
		k->x.step = step;
		cluster_exchange(&k->x, k->msgs, k->replies, tmo + 15000, 1);
		for (size_t i = first; i < end; i++)
			if (c->pairs[i].state != GV_PAIR_SKIPPED || !c->pairs[i].why[0])
				take_pair(k, &c->pairs[i], 0);
		clear(k);
		first = end;
	}
}

/* Whether every node present has GPUs and NCCL; else why not, into buf. */
static int all_gpus(const struct coord *k, char *buf, size_t len)
{
	const struct gv_cluster *c = k->x.c;
	for (int i = 0; i < c->nnodes; i++)
		if (c->nodes[i].state == GV_NODE_OK && k->ngpus[i] < 1) {
			snprintf(buf, len, "rank %d (%.40s) has no GPU for NCCL: %.90s", i, c->nodes[i].host,
				 k->nccl_why[i] ? k->nccl_why[i] : "?");
			return 0;
		}
	return 1;
}

/* The same rounds GPU to GPU: the lower rank of each pair makes the NCCL id, both sides join it. */
static void nccl_rounds(struct coord *k)
{
	struct gv_cluster *c = k->x.c;
	int tmo;
	for (int round = 0; round < c->nrounds; round++) {
		/* the id's exchange (up to 30 s) and then the pair (its timeout and 15 s) must both fit */
		int want = cluster_ms(k->x.n->o->pair_timeout_s * 2.0);
		if (!round_budget(k, want + 30000, &tmo) || (tmo = tmo - 30000 < want ? tmo - 30000 : want) < 2000) {
			out_of_time(k, 0, 1);
			return;
		}
		k->x.step = "its NCCL id";
		for (size_t i = 0; i < c->npairs; i++)
			if (c->pairs[i].round == round && c->pairs[i].state == GV_PAIR_MEASURED)
				k->msgs[c->pairs[i].a] = json_pack("{s:s}", "op", "nccl_uid");
		cluster_exchange(&k->x, k->msgs, k->replies, 30000, 0);
		json_t **uids = calloc((size_t)c->nnodes, sizeof *uids);
		for (int i = 0; uids && i < c->nnodes; i++) {
			uids[i] = json_incref(json_object_get(k->replies[i], "uid"));
		}
		clear(k);
		for (size_t i = 0; uids && i < c->npairs; i++) {
			struct gv_cluster_pair *p = &c->pairs[i];
			if (p->round != round || !uids[p->a])
				continue;
			k->msgs[p->a] = pair_msg(k, "nccl_pair", p->b, 1, tmo);
			k->msgs[p->b] = pair_msg(k, "nccl_pair", p->a, 0, tmo);
			json_object_set(k->msgs[p->a], "uid", uids[p->a]);
			json_object_set(k->msgs[p->b], "uid", uids[p->a]);
		}
		k->x.step = "its NCCL pair";
		cluster_exchange(&k->x, k->msgs, k->replies, tmo + 15000, 1);
		for (size_t i = 0; i < c->npairs; i++)
			if (c->pairs[i].round == round && c->pairs[i].state == GV_PAIR_MEASURED)
				take_pair(k, &c->pairs[i], 1);
		clear(k);
		for (int i = 0; uids && i < c->nnodes; i++)
			json_decref(uids[i]);
		free(uids);
	}
}

/* One all-reduce over every GPU of every node present, rank 0's first GPU its NCCL rank 0. */
static void allreduce(struct coord *k)
{
	struct gv_cluster *c = k->x.c;
	char hex[2 * NCCL_PAIR_UID_BYTES + 1], err[200];
	if (nccl_pair_uid(hex, err, sizeof err)) {
		snprintf(c->ar_why, sizeof c->ar_why, "no NCCL id on rank 0: %.130s", err);
		return;
	}
	int total = 0;
	for (int i = 0; i < c->nnodes; i++)
		if (c->nodes[i].state == GV_NODE_OK)
			total += k->ngpus[i];
	int tmo = cluster_budget_ms(&k->x, cluster_ms(k->x.n->o->pair_timeout_s * 4.0) + 15000) - 15000, first = 0;
	if (tmo < 2000) {
		snprintf(c->ar_why, sizeof c->ar_why, "not run: the run's deadline (--deadline %d s) left no time for it",
			 k->x.deadline_s);
		cluster_name_slow(&k->x);
		return;
	}
	for (int i = 0; i < c->nnodes; i++)
		if (c->nodes[i].state == GV_NODE_OK) {
			k->msgs[i] = json_pack("{s:s,s:s,s:i,s:i,s:f,s:i}", "op", "allreduce", "uid", hex, "first_rank",
					       first, "total", total, "max_bytes", 1073741824.0, "timeout_ms", tmo);
			first += k->ngpus[i];
		}
	say("all-reduce over %d GPUs", total);
	k->x.step = "its part of the all-reduce";
	cluster_exchange(&k->x, k->msgs, k->replies, tmo + 15000, 1);
	const json_t *r0 = k->replies[0], *pt;
	size_t i;
	if (!json_is_true(json_object_get(r0, "ok"))) {
		snprintf(c->ar_why, sizeof c->ar_why, "the all-reduce failed: %s", r0 ? jstr(r0, "why") : "no answer");
	} else if ((c->ar = calloc(json_array_size(json_object_get(r0, "points")) + 1, sizeof *c->ar))) {
		json_array_foreach(json_object_get(r0, "points"), i, pt)
			c->ar[c->nar++] = (struct gv_cluster_ar_point){
				json_number_value(json_object_get(pt, "bytes")), json_number_value(json_object_get(pt, "time_us")),
				json_number_value(json_object_get(pt, "algbw_gbps")),
				json_number_value(json_object_get(pt, "busbw_gbps")) };
	}
	clear(k);
}

/* A node's line and exit code: what its rank prints. */
static json_t *node_line(const struct gv_cluster *c, int i, const struct policy *pol)
{
	const struct gv_cluster_node *nd = &c->nodes[i];
	const struct gv_cluster_finding *f = NULL;
	for (size_t j = 0; j < c->nfindings && !f; j++)
		if (c->findings[j].drain && c->findings[j].rank == i)
			f = &c->findings[j];
	int unmeasured = nd->verdict == GV_EXIT_UNMEASURABLE && !pol->cluster.node_unmeasured_reported;
	int rc = f ? GV_EXIT_REJECT : nd->verdict == GV_EXIT_REJECT ? GV_EXIT_REJECT
				     : unmeasured ? GV_EXIT_UNMEASURABLE : GV_EXIT_OK;
	char line[1024];
	if (f)   /* the finding's kind, then its evidence (which never repeats the kind) */
		snprintf(line, sizeof line, "rank %d %.127s (%.63s): drain: %s: %.383s", i, nd->host, nd->addr,
			 gv_finding_name(f->kind), f->evidence);
	else
		snprintf(line, sizeof line, "rank %d %.127s (%.63s): %s%.255s", i, nd->host, nd->addr,
			 rc == GV_EXIT_OK ? "ok" : "its own gate: ", rc == GV_EXIT_OK ? "" : nd->why);
	return json_pack("{s:i,s:s,s:s,s:b,s:i,s:s,s:s}", "rank", i, "host", nd->host, "addr", nd->addr, "drain", f != NULL,
			 "exit_code", rc, "line", line, "cluster_run", c->uuid);
}

/* Analysis, the store, rank 0's output, every rank's line; the cluster's exit code. */
static int finish(struct coord *k)
{
	struct gv_cluster *c = k->x.c;
	char err[256];
	int rc = GV_EXIT_OK;
	c->authenticated = rdzv_authenticated(k->x.r);
	c->deadline_s = k->x.deadline_s;
	if (cluster_analyse(c, k->x.n->pol, err, sizeof err)) {
		gv_err("cluster: %s", err);
		c->verdict = GV_EXIT_UNMEASURABLE;
	}
	if (store_put_cluster(k->x.n->s, c)) {
		gv_err("cluster: the cluster run was not stored: %s", store_errmsg(k->x.n->s));
		rc = GV_EXIT_USAGE;
	}
	if (k->x.n->o->json) {
		if (gv_cluster_write_json(c, stdout))
			rc = GV_EXIT_USAGE;
	} else if (!gv_quiet) {
		cluster_print_text(c, stdout);   /* its summary says whether the run was authenticated */
	}
	fflush(stdout);
	for (int i = 1; i < c->nnodes; i++)
		if (rdzv_alive(k->x.r, i)) {   /* a rank named slow is still told its line */
			json_t *m = json_pack("{s:s,s:o}", "op", "done", "node", node_line(c, i, k->x.n->pol));
			if (rdzv_send(k->x.r, i, m, 10000, err, sizeof err))
				gv_debug("cluster: rank %d not told its line: %s", i, err);
			json_decref(m);
		}
	return rc != GV_EXIT_OK ? rc : c->verdict < 0 ? GV_EXIT_UNMEASURABLE : c->verdict;
}

static void describe(struct gv_cluster *c, const struct cluster_node *n, const struct cluster_engine *e,
		     enum cluster_pairs kind)
{
	gv_uuid(c->uuid);
	gv_iso8601((long)time(NULL), c->started_at, sizeof c->started_at);
	snprintf(c->engine, sizeof c->engine, "%s", e->name);
	snprintf(c->schedule, sizeof c->schedule, "%s", cluster_pairs_name(kind));
	snprintf(c->profile, sizeof c->profile, "%s", n->o->profile ? n->o->profile : "quick");
	snprintf(c->policy, sizeof c->policy, "%s %.19s", n->pol->name, n->pol->digest);
}

int cluster_coordinate(struct cluster_node *n, struct rdzv *r, const struct cluster_engine *e)
{
	enum cluster_pairs kind = CLUSTER_PAIRS_ALL;
	if (n->o->pairs && cluster_pairs_parse(n->o->pairs, &kind))
		return GV_EXIT_USAGE;   /* checked by the command before */
	struct coord k = { .x = { .n = n, .r = r, .c = gv_cluster_new(e->size) }, .e = e };
	struct gv_cluster *c = k.x.c;
	if (!c || !(k.fabric = calloc((size_t)e->size, sizeof *k.fabric)) || !(k.ngpus = calloc((size_t)e->size, sizeof *k.ngpus)) ||
	    !(k.nccl_why = calloc((size_t)e->size, sizeof *k.nccl_why)) ||
	    !(k.msgs = calloc((size_t)e->size, sizeof *k.msgs)) || !(k.replies = calloc((size_t)e->size, sizeof *k.replies)) ||
	    !(k.x.alone_s = calloc((size_t)e->size, sizeof *k.x.alone_s)) ||
	    cluster_schedule(e->size, kind, &c->pairs, &c->npairs, &c->nrounds)) {
		gv_err("cluster: out of memory for %d nodes", e->size);
		gv_cluster_free(c);
		return GV_EXIT_USAGE;
	}
	describe(c, n, e, kind);
	k.x.deadline_s = n->o->deadline_s ? n->o->deadline_s
				: cluster_default_deadline(n->fingerprint_s, n->o->wait_s, n->o->pair_timeout_s, c->nrounds);
	k.x.deadline_at = n->t_start + k.x.deadline_s;
	k.x.reserve_s = 10 + 0.02 * e->size;
	say("the run's deadline: %d s", k.x.deadline_s);
	arrive(&k, cluster_ms(n->o->wait_s));
	fingerprints(&k);
	cluster_remeasure(&k.x);
	host_rounds(&k);
	char why[200];
	if (all_gpus(&k, why, sizeof why)) {
		nccl_rounds(&k);
		allreduce(&k);
	} else {
		gv_strlcpy(c->ar_why, why, sizeof c->ar_why);
	}
	int rc = finish(&k);
	for (int i = 0; i < e->size; i++) {
		free(k.fabric[i]);
		free(k.nccl_why[i]);
	}
	free(k.nccl_why);
	free(k.fabric);
	free(k.ngpus);
	free(k.msgs);
	free(k.replies);
	free(k.x.alone_s);
	gv_cluster_free(c);
	return rc;
}
