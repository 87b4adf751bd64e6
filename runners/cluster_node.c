/*
 * cluster_node.c - one rank's own work in `gpuvet cluster run`
 * (runners/cluster_int.h): its fingerprint (an ordinary stored run, gated
 * by the policy as `gpuvet run --accept` would), its side of a pair
 * (libfabric host to host, NCCL GPU to GPU) and its GPUs' part of the
 * cluster all-reduce.  Rank 0 runs the same code for its own node.
 */
#include "runners/cluster_int.h"
#include "runners/hooks.h"
#include "runners/run.h"
#include "judge/accept.h"
#include "judge/policy.h"
#include "benches/fabric.h"
#include "benches/nccl_pair.h"
#include "platform/nic.h"
#include "common/cluster.h"
#include "common/util.h"
#include "results/store.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/*
 * The NIC's own stated rate: over efa or verbs what libfabric says of the endpoint's NIC (its link
 * attributes), else the kernel's speed of the interface that holds this node's address.
 */
static void node_link(struct cluster_node *n)
{
	const char *prov = n->fab ? fabric_provider(n->fab) : "";
	double bps;
	char nic[64];
	n->link_gbps = NAN;
	if ((!strncmp(prov, "efa", 3) || !strncmp(prov, "verbs", 5)) && !fabric_link_speed(n->fab, &bps, nic, sizeof nic)) {
		n->link_gbps = bps / 8e9;
		snprintf(n->link_source, sizeof n->link_source, "libfabric %.20s %.30s link speed %.0f Gb/s", prov,
			 nic[0] ? nic : "NIC", bps / 1e9);
		return;
	}
	if (nic_link_rate(n->src_ip, NULL, &n->link_gbps, n->link_source, sizeof n->link_source))
		n->link_gbps = NAN;
}

void cluster_node_open(struct cluster_node *n, const char *src_ip)
{
	char err[200];
	if (src_ip != n->src_ip)
		gv_strlcpy(n->src_ip, src_ip ? src_ip : "", sizeof n->src_ip);
	if (fabric_open(n->src_ip[0] ? n->src_ip : NULL, &n->fab, err, sizeof err)) {
		n->fab = NULL;
		snprintf(n->fab_why, sizeof n->fab_why, "%s", err);
	}
	node_link(n);
	if (n->nccl_asked)
		return;
	n->nccl_asked = 1;   /* once, before any thread: NCCL's log settings are set with setenv */
	n->ngpus = 0;
	if (nccl_pair_available(&n->ngpus, n->nccl_why, sizeof n->nccl_why))
		n->ngpus = 0;
}

void cluster_node_close(struct cluster_node *n)
{
	if (n->fab)
		fabric_close(n->fab);
	n->fab = NULL;
}

json_t *cluster_node_hello(const struct cluster_node *n)
{
	json_t *h = json_pack("{s:s,s:s?,s:s?,s:s,s:i,s:s,s:s}", "host", n->host, "fabric", n->fab ? fabric_addr(n->fab) : NULL,
			      "provider", n->fab ? fabric_provider(n->fab) : NULL, "fabric_why", n->fab_why, "ngpus", n->ngpus,
			      "nccl_why", n->nccl_why, "link_source", n->link_source);
	if (!isnan(n->link_gbps))
		json_object_set_new(h, "link_gbps", json_real(n->link_gbps));
	return h;
}

static json_t *reply(const char *of, int ok, const char *why)
{
	return json_pack("{s:s,s:s,s:b,s:s}", "op", "reply", "of", of, "ok", ok, "why", why ? why : "");
}

/* The verdict the gate appended to fp last: its name and reason sentence. */
static void last_verdict(const json_t *fp, int rc, char *why, size_t len)
{
	const json_t *vs = json_object_get(fp, "verdicts");
	const json_t *v = json_array_get(vs, json_array_size(vs) ? json_array_size(vs) - 1 : 0);
	const char *name = json_string_value(json_object_get(v, "verdict"));
	if (v && name)
		accept_reason_sentence(json_object_get(v, "detail"), name, why, len);
	else
		snprintf(why, len, "its gate could not be recorded (exit %d)", rc);
}

/* This node's fingerprint: stored here, flagged, gated; the reply carries it whole for rank 0. */
static json_t *fingerprint(struct cluster_node *n)
{
	struct run_request rq = { .cfg = n->cfg, .benches = n->sel, .inv = n->inv, .progress = 0 };
	int64_t run_id;
	int interrupted = 0, failed = 0;
	json_t *fp = NULL;
	if (run_execute(n->s, &rq, &run_id, &interrupted) < 0)
		return reply("fingerprint", 0, "the run could not be stored here (its message is on this node's stderr)");
	if (store_load_fingerprint(n->s, run_id, &fp))
		return reply("fingerprint", 0, store_errmsg(n->s));
	json_t *flags = hooks_after_run(n->s, run_id, fp, &failed);
	int rc = 3;
	char why[256] = "";
	if (interrupted) {
		snprintf(why, sizeof why, "its run was interrupted");
	} else {
		FILE *sink = fopen("/dev/null", "w");
		rc = accept_judge(n->s, run_id, n->pol, fp, flags, 0, sink ? sink : stderr);
		if (sink)
			fclose(sink);
		last_verdict(fp, rc, why, sizeof why);
		if (rc == GV_EXIT_USAGE)
			rc = 3;
	}
	json_decref(flags);
	json_t *r = reply("fingerprint", 1, why);
	json_object_set_new(r, "verdict", json_integer(rc));
	json_object_set_new(r, "fingerprint", fp);
	return r;
}

/*
 * The benches rank 0 names measured again, into a store of their own in memory: the fingerprint
 * goes back to rank 0, nothing is kept here (the first run is this node's stored run).
 */
static json_t *remeasure(struct cluster_node *n, const json_t *msg)
{
	const json_t *names = json_object_get(msg, "benches"), *v;
	size_t i, k = 0;
	const struct bench **sel = gv_calloc(json_array_size(names) + 1, sizeof *sel);
	json_array_foreach(names, i, v) {
		const struct bench *b = json_string_value(v) ? bench_find(json_string_value(v)) : NULL;
		if (b)
			sel[k++] = b;
	}
	struct store *mem = NULL;
	json_t *fp = NULL, *r = NULL;
	int64_t run_id;
	int interrupted = 0;
	struct run_request rq = { .cfg = n->cfg, .benches = sel, .inv = n->inv, .progress = 0 };
	if (!k)
		r = reply("remeasure", 0, "rank 0 named no bench this gpuvet knows");
	else if (store_open(":memory:", &mem))
		r = reply("remeasure", 0, store_open_error());
	else if (run_execute(mem, &rq, &run_id, &interrupted) < 0 || store_load_fingerprint(mem, run_id, &fp))
		r = reply("remeasure", 0, "the benches could not be run again (their message is on this node's stderr)");
	store_close(mem);
	free(sel);
	if (r)
		return r;
	r = reply("remeasure", !interrupted, interrupted ? "its run was interrupted" : "");
	json_object_set_new(r, "fingerprint", fp);
	return r;
}

static int num(const json_t *o, const char *key, double dflt)
{
	const json_t *v = json_object_get(o, key);
	return json_is_integer(v) ? (int)json_integer_value(v) : (int)dflt;
}

static json_t *fabric_side(struct cluster_node *n, const json_t *msg)
{
	const char *peer = json_string_value(json_object_get(msg, "fabric"));
	if (!n->fab)
		return reply("pair", 0, n->fab_why);
	if (!peer)
		return reply("pair", 0, "rank 0 gave no peer address");
	struct fabric_pair_opts o = { .timeout_ms = num(msg, "timeout_ms", 20000) };
	struct fabric_pair_result res;
	char err[200];
	if (fabric_pair(n->fab, peer, json_is_true(json_object_get(msg, "lower")), &o, &res, err, sizeof err)) {
		/* a pair that failed may leave operations to a dead peer in the endpoint: a new endpoint for the
		 * next pair, its address told to rank 0 (or none, and why) */
		json_t *r = reply("pair", 0, err);
		cluster_node_close(n);
		cluster_node_open(n, n->src_ip);
		json_object_set_new(r, "fabric", n->fab ? json_string(fabric_addr(n->fab)) : json_null());
		return r;
	}
	json_t *r = reply("pair", 1, "");
	json_object_set_new(r, "gbps_ab", json_real(res.gbps_ab));
	json_object_set_new(r, "gbps_ba", json_real(res.gbps_ba));
	json_object_set_new(r, "lat_us", json_real(res.lat_us));
	return r;
}

static json_t *nccl_side(struct cluster_node *n, const json_t *msg, const char *op)
{
	char err[200], net[64] = "";
	const char *uid = json_string_value(json_object_get(msg, "uid"));
	if (!n->ngpus)
		return reply(op, 0, n->nccl_why);
	if (!strcmp(op, "nccl_uid")) {
		char hex[2 * NCCL_PAIR_UID_BYTES + 1];
		if (nccl_pair_uid(hex, err, sizeof err))
			return reply(op, 0, err);
		json_t *r = reply(op, 1, "");
		json_object_set_new(r, "uid", json_string(hex));
		return r;
	}
	if (!uid)
		return reply(op, 0, "rank 0 gave no NCCL unique id");
	int tmo = num(msg, "timeout_ms", 60000);
	if (!strcmp(op, "nccl_pair")) {
		double ab, ba;
		if (nccl_pair_run(uid, json_is_true(json_object_get(msg, "lower")), tmo, &ab, &ba, net, sizeof net, err,
				  sizeof err))
			return reply(op, 0, err);
		json_t *r = reply(op, 1, "");
		json_object_set_new(r, "gbps_ab", json_real(ab));
		json_object_set_new(r, "gbps_ba", json_real(ba));
		json_object_set_new(r, "net", json_string(net));
		return r;
	}
	struct gv_cluster_ar_point pts[32];
	size_t npts = sizeof pts / sizeof pts[0];
	if (nccl_cluster_allreduce(uid, num(msg, "first_rank", 0), n->ngpus, num(msg, "total", 0),
				   json_real_value(json_object_get(msg, "max_bytes")), tmo, pts, &npts, net, sizeof net, err,
				   sizeof err))
		return reply(op, 0, err);
	json_t *r = reply(op, 1, ""), *a = json_array();
	for (size_t i = 0; i < npts; i++)
		json_array_append_new(a, json_pack("{s:f,s:f,s:f,s:f}", "bytes", pts[i].bytes, "time_us", pts[i].time_us,
						   "algbw_gbps", pts[i].algbw_gbps, "busbw_gbps", pts[i].busbw_gbps));
	json_object_set_new(r, "points", a);
	json_object_set_new(r, "net", json_string(net));
	return r;
}

json_t *cluster_node_do(struct cluster_node *n, const json_t *msg)
{
	const char *op = json_string_value(json_object_get(msg, "op"));
	if (!op)
		return reply("?", 0, "an instruction without an op");
	if (!strcmp(op, "fingerprint"))
		return fingerprint(n);
	if (!strcmp(op, "remeasure"))
		return remeasure(n, msg);
	if (!strcmp(op, "pair"))
		return fabric_side(n, msg);
	if (!strcmp(op, "nccl_uid") || !strcmp(op, "nccl_pair") || !strcmp(op, "allreduce"))
		return nccl_side(n, msg, op);
	return reply(op, 0, "an instruction this gpuvet does not know (ranks of different versions?)");
}
