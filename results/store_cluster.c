/*
 * store_cluster.c - cluster runs in the store (issue 49; store.h, the tables: store_int.h
 * STORE_CLUSTER_SCHEMA): one transaction writes a cluster run whole, a read gives it back as
 * the struct gv_cluster every layer shares (common/cluster.h), a merge copies those another
 * store has and this one lacks.  A store older than schema 8 (read read-only) has none; one of
 * schema 8 has no authentication, deadline, clock skew, NIC rate or figure measured again (#56):
 * read as unknown (NULL, NAN).
 */
#include "results/store.h"
#include "results/store_int.h"
#include "common/cluster.h"
#include "common/util.h"

#include <limits.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int has_clusters(struct store *s)
{
	return s->version >= STORE_CLUSTER_VERSION;
}

/* The columns of #56 (a store read read-only at schema 8 has none: their figures are unknown). */
static int has_v2(struct store *s)
{
	return s->version >= STORE_CLUSTER_V2;
}

/* ---- writing ---- */

static int bind_run(sqlite3_stmt *st, const struct gv_cluster *c)
{
	store_bind_text(st, 1, c->uuid);
	store_bind_text(st, 2, c->started_at);
	store_bind_text(st, 3, c->engine);
	store_bind_text(st, 4, c->schedule);
	store_bind_text(st, 5, c->transport);
	store_bind_text(st, 6, c->nccl_net);
	store_bind_text(st, 7, c->profile);
	sqlite3_bind_int(st, 8, c->nnodes);
	sqlite3_bind_int(st, 9, c->nrounds);
	sto_bind_real(st, 10, c->stated_gbps);
	store_bind_text(st, 11, c->stated_source);
	sto_bind_real(st, 12, c->pair_median_gbps);
	sqlite3_bind_int(st, 13, c->verdict);
	store_bind_text(st, 14, c->policy);
	store_bind_text(st, 15, c->ar_why);
	sqlite3_bind_int(st, 16, c->authenticated != 0);
	sto_bind_real(st, 17, c->deadline_s);
	sto_bind_real(st, 18, c->pair_healthy_gbps);
	return 0;
}

/* Steps a statement bound for one row and resets it for the next: STORE_OK or STORE_ERR naming what. */
static int step_row(struct store *s, sqlite3_stmt *st, const char *what)
{
	int rc = sqlite3_step(st) == SQLITE_DONE ? STORE_OK : store_fail(s, what);
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	return rc;
}

static int put_nodes(struct store *s, int64_t id, const struct gv_cluster *c)
{
	sqlite3_stmt *st, *mt;
	if (store_prepare(s, "INSERT INTO cluster_nodes (cluster_id, rank, state, host, addr, run_uuid, provider,"
			  " instance_type, gpu_model, ngpus, verdict, why, clock_skew_s, link_gbps, link_source)"
			  " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", &st))
		return STORE_ERR;
	if (store_prepare(s, "INSERT INTO cluster_metrics (cluster_id, rank, seq, name, value, higher_better, remeasured)"
			  " VALUES (?,?,?,?,?,?,?)", &mt)) {
		sqlite3_finalize(st);
		return STORE_ERR;
	}
	int rc = STORE_OK;
	for (int i = 0; i < c->nnodes && rc == STORE_OK; i++) {
		const struct gv_cluster_node *n = &c->nodes[i];
		sqlite3_bind_int64(st, 1, id);
		sqlite3_bind_int(st, 2, i);   /* index = rank (cluster.h) */
		store_bind_text(st, 3, gv_node_state_name(n->state));
		store_bind_text(st, 4, n->host);
		store_bind_text(st, 5, n->addr);
		store_bind_text(st, 6, n->run_uuid);
		store_bind_text(st, 7, n->provider);
		store_bind_text(st, 8, n->instance_type);
		store_bind_text(st, 9, n->gpu_model);
		sqlite3_bind_int(st, 10, n->ngpus);
		sqlite3_bind_int(st, 11, n->verdict);
		store_bind_text(st, 12, n->why);
		sto_bind_real(st, 13, n->clock_skew_s);
		sto_bind_real(st, 14, n->link_gbps);
		store_bind_text(st, 15, n->link_source);
		rc = step_row(s, st, "storing a cluster node");
		for (size_t m = 0; m < n->nmetrics && rc == STORE_OK; m++) {
			sqlite3_bind_int64(mt, 1, id);
			sqlite3_bind_int(mt, 2, i);
			sqlite3_bind_int64(mt, 3, (sqlite3_int64)m);
			store_bind_text(mt, 4, n->metrics[m].name);
			sto_bind_real(mt, 5, n->metrics[m].value);
			sqlite3_bind_int(mt, 6, n->metrics[m].higher_better != 0);
			sto_bind_real(mt, 7, n->metrics[m].remeasured);
			rc = step_row(s, mt, "storing a cluster node's metric");
		}
	}
	sqlite3_finalize(st);
	sqlite3_finalize(mt);
	return rc;
}

static int put_pairs(struct store *s, int64_t id, const struct gv_cluster *c)
{
	sqlite3_stmt *st;
	if (store_prepare(s, "INSERT INTO cluster_pairs (cluster_id, seq, a, b, round, state, gbps_ab, gbps_ba, lat_us,"
			  " nccl_gbps_ab, nccl_gbps_ba, why) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)", &st))
		return STORE_ERR;
	int rc = STORE_OK;
	for (size_t i = 0; i < c->npairs && rc == STORE_OK; i++) {
		const struct gv_cluster_pair *p = &c->pairs[i];
		sqlite3_bind_int64(st, 1, id);
		sqlite3_bind_int64(st, 2, (sqlite3_int64)i);
		sqlite3_bind_int(st, 3, p->a);
		sqlite3_bind_int(st, 4, p->b);
		sqlite3_bind_int(st, 5, p->round);
		store_bind_text(st, 6, gv_pair_state_name(p->state));
		sto_bind_real(st, 7, p->gbps_ab);
		sto_bind_real(st, 8, p->gbps_ba);
		sto_bind_real(st, 9, p->lat_us);
		sto_bind_real(st, 10, p->nccl_gbps_ab);
		sto_bind_real(st, 11, p->nccl_gbps_ba);
		store_bind_text(st, 12, p->why);
		rc = step_row(s, st, "storing a cluster pair");
	}
	sqlite3_finalize(st);
	return rc;
}

static int put_ar_findings(struct store *s, int64_t id, const struct gv_cluster *c)
{
	sqlite3_stmt *st;
	if (store_prepare(s, "INSERT INTO cluster_allreduce (cluster_id, seq, bytes, time_us, algbw_gbps, busbw_gbps)"
			  " VALUES (?,?,?,?,?,?)", &st))
		return STORE_ERR;
	int rc = STORE_OK;
	for (size_t i = 0; i < c->nar && rc == STORE_OK; i++) {
		sqlite3_bind_int64(st, 1, id);
		sqlite3_bind_int64(st, 2, (sqlite3_int64)i);
		sto_bind_real(st, 3, c->ar[i].bytes);
		sto_bind_real(st, 4, c->ar[i].time_us);
		sto_bind_real(st, 5, c->ar[i].algbw_gbps);
		sto_bind_real(st, 6, c->ar[i].busbw_gbps);
		rc = step_row(s, st, "storing the cluster all-reduce");
	}
	sqlite3_finalize(st);
	if (rc || store_prepare(s, "INSERT INTO cluster_findings (cluster_id, seq, kind, rank, peer, drain, evidence)"
				" VALUES (?,?,?,?,?,?,?)", &st))
		return STORE_ERR;
	for (size_t i = 0; i < c->nfindings && rc == STORE_OK; i++) {
		const struct gv_cluster_finding *f = &c->findings[i];
		sqlite3_bind_int64(st, 1, id);
		sqlite3_bind_int64(st, 2, (sqlite3_int64)i);
		store_bind_text(st, 3, gv_finding_name(f->kind));
		sqlite3_bind_int(st, 4, f->rank);
		sqlite3_bind_int(st, 5, f->peer);
		sqlite3_bind_int(st, 6, f->drain != 0);
		store_bind_text(st, 7, f->evidence);
		rc = step_row(s, st, "storing a cluster finding");
	}
	sqlite3_finalize(st);
	return rc;
}

/* Whether a cluster run of this uuid is stored: 1 (its id in *id), 0, or -1 on error. */
static int cluster_exists(struct store *s, const char *uuid, int64_t *id)
{
	sqlite3_stmt *st;
	if (store_prepare(s, "SELECT id FROM clusters WHERE uuid = ?", &st))
		return -1;
	store_bind_text(st, 1, uuid);
	int rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		*id = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	if (rc == SQLITE_ROW)
		return 1;
	if (rc == SQLITE_DONE)
		return 0;
	store_fail(s, "finding the cluster run");
	return -1;
}

static int load_id(struct store *s, int64_t id, struct gv_cluster **out);

/* c's document as `cluster show --json` prints it (the pairs streamed, no jansson tree); NULL on failure. */
static char *doc_text(const struct gv_cluster *c, size_t *n)
{
	char *t = NULL;
	FILE *f = open_memstream(&t, n);
	if (!f)
		return NULL;
	int rc = gv_cluster_write_json(c, f);
	if (fclose(f) || rc) {
		free(t);
		return NULL;
	}
	return t;
}

/*
 * One uuid, one cluster run: STORE_DUP when the run stored under c's uuid (id) is c, the same
 * document; else STORE_ERR said (an import or a merge must not take another run for it).  The two
 * are compared as printed text, which a merge again of a 1,024-node run holds as 2 x 132 MB, not
 * as two 0.9 GB trees.
 */
static int same_as_stored(struct store *s, int64_t id, const struct gv_cluster *c)
{
	struct gv_cluster *old = NULL;
	if (load_id(s, id, &old))
		return STORE_ERR;
	size_t na = 0, nb = 0;
	char *a = doc_text(old, &na), *b = doc_text(c, &nb);
	int same = a && b && na == nb && !memcmp(a, b, na);
	free(a);
	free(b);
	gv_cluster_free(old);
	if (same)
		return STORE_DUP;
	sto_set_err(s, "database '%s': another cluster run under the uuid %s is stored already (one uuid, one cluster "
		    "run): not stored, the stored one kept", s->path, c->uuid);
	return STORE_ERR;
}

static int put_all(struct store *s, const struct gv_cluster *c)
{
	int64_t old = 0;
	int there = cluster_exists(s, c->uuid, &old);
	if (there)
		return there > 0 ? same_as_stored(s, old, c) : STORE_ERR;
	sqlite3_stmt *st;
	if (store_prepare(s, "INSERT INTO clusters (uuid, started_at, engine, schedule, transport, nccl_net, profile,"
			  " nnodes, nrounds, stated_gbps, stated_source, pair_median_gbps, verdict, policy, ar_why,"
			  " authenticated, deadline_s, pair_healthy_gbps) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", &st))
		return STORE_ERR;
	bind_run(st, c);
	if (sto_step_done(s, st, "storing the cluster run"))
		return STORE_ERR;
	int64_t id = sqlite3_last_insert_rowid(s->db);
	if (put_nodes(s, id, c) || put_pairs(s, id, c) || put_ar_findings(s, id, c))
		return STORE_ERR;
	return STORE_OK;
}

int store_put_cluster(struct store *s, const struct gv_cluster *c)
{
	if (!c || !c->uuid[0] || c->nnodes < 1 || c->nnodes > GV_CLUSTER_MAX_NODES || !c->nodes) {
		sto_set_err(s, "database '%s': a cluster run needs a uuid and 1 to %d nodes", s->path,
			    GV_CLUSTER_MAX_NODES);
		return STORE_ERR;
	}
	if (!has_clusters(s)) {
		sto_set_err(s, "database '%s' has schema %d, before cluster runs (%d): open it read-write to migrate",
			    s->path, s->version, STORE_CLUSTER_VERSION);
		return STORE_ERR;
	}
	if (s->in_bench) {
		sto_set_err(s, "database '%s': a bench's transaction is open", s->path);
		return STORE_ERR;
	}
	/* inside the caller's transaction (a merge's batch): a savepoint, kept or undone whole */
	int nested = !sqlite3_get_autocommit(s->db);
	if (sto_exec_sql(s, nested ? "SAVEPOINT cluster" : "BEGIN IMMEDIATE"))
		return STORE_ERR;
	int rc = put_all(s, c);
	if (rc == STORE_OK) {
		if (sto_exec_sql(s, nested ? "RELEASE cluster" : "COMMIT") == STORE_OK)
			return STORE_OK;
		rc = STORE_ERR;
	}
	char keep[sizeof s->err];
	gv_strlcpy(keep, s->err, sizeof keep);   /* the undo must not replace the reason */
	if (nested)
		sqlite3_exec(s->db, "ROLLBACK TO cluster; RELEASE cluster", NULL, NULL, NULL);
	else
		sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
	gv_strlcpy(s->err, keep, sizeof s->err);
	return rc;
}

/* ---- reading ---- */

static double col_real(sqlite3_stmt *st, int i)
{
	return sqlite3_column_type(st, i) == SQLITE_NULL ? NAN : sqlite3_column_double(st, i);
}

static void col_text(sqlite3_stmt *st, int i, char *dst, size_t size)
{
	const unsigned char *t = sqlite3_column_text(st, i);
	gv_strlcpy(dst, t ? (const char *)t : "", size);
}

/* A stored name back to its enum value (names(i) for 0..n-1); -1 for a name this binary does not know. */
static int name_index(const char *(*names)(int), int n, const unsigned char *t)
{
	for (int i = 0; t && i < n; i++)
		if (!strcmp(names(i), (const char *)t))
			return i;
	return -1;
}

static int load_run(struct store *s, int64_t id, struct gv_cluster **out)
{
	sqlite3_stmt *st;
	if (store_prepare(s, has_v2(s) ? "SELECT uuid, started_at, engine, schedule, transport, nccl_net, profile, nnodes,"
			  " nrounds, stated_gbps, stated_source, pair_median_gbps, verdict, policy, ar_why, authenticated,"
			  " deadline_s, pair_healthy_gbps FROM clusters WHERE id = ?" :
			  "SELECT uuid, started_at, engine, schedule, transport, nccl_net, profile, nnodes, nrounds,"
			  " stated_gbps, stated_source, pair_median_gbps, verdict, policy, ar_why, 0, NULL, NULL FROM clusters"
			  " WHERE id = ?", &st))
		return STORE_ERR;
	sqlite3_bind_int64(st, 1, id);
	int rc = sqlite3_step(st);
	struct gv_cluster *c = rc == SQLITE_ROW ? gv_cluster_new(sqlite3_column_int(st, 7)) : NULL;
	if (!c) {
		sqlite3_finalize(st);
		if (rc != SQLITE_ROW)
			return store_fail(s, "reading the cluster run");
		sto_set_err(s, "database '%s': cluster run %lld has no nodes it can hold", s->path, (long long)id);
		return STORE_ERR;
	}
	col_text(st, 0, c->uuid, sizeof c->uuid);
	col_text(st, 1, c->started_at, sizeof c->started_at);
	col_text(st, 2, c->engine, sizeof c->engine);
	col_text(st, 3, c->schedule, sizeof c->schedule);
	col_text(st, 4, c->transport, sizeof c->transport);
	col_text(st, 5, c->nccl_net, sizeof c->nccl_net);
	col_text(st, 6, c->profile, sizeof c->profile);
	c->nrounds = sqlite3_column_int(st, 8);
	c->stated_gbps = col_real(st, 9);
	col_text(st, 10, c->stated_source, sizeof c->stated_source);
	c->pair_median_gbps = col_real(st, 11);
	c->verdict = sqlite3_column_int(st, 12);
	col_text(st, 13, c->policy, sizeof c->policy);
	col_text(st, 14, c->ar_why, sizeof c->ar_why);
	c->authenticated = sqlite3_column_int(st, 15) != 0;
	c->deadline_s = col_real(st, 16);
	c->pair_healthy_gbps = col_real(st, 17);
	sqlite3_finalize(st);
	*out = c;
	return STORE_OK;
}

static int bad_row(struct store *s, const struct gv_cluster *c, const char *what)
{
	sto_set_err(s, "database '%s': cluster run %s: %s", s->path, c->uuid, what);
	return STORE_ERR;
}

static int load_nodes(struct store *s, int64_t id, struct gv_cluster *c)
{
	sqlite3_stmt *st;
	if (store_prepare(s, has_v2(s) ? "SELECT rank, state, host, addr, run_uuid, provider, instance_type, gpu_model,"
			  " ngpus, verdict, why, clock_skew_s, link_gbps, link_source FROM cluster_nodes WHERE cluster_id = ?"
			  " ORDER BY rank" :
			  "SELECT rank, state, host, addr, run_uuid, provider, instance_type, gpu_model, ngpus, verdict, why,"
			  " NULL, NULL, NULL FROM cluster_nodes WHERE cluster_id = ? ORDER BY rank", &st))
		return STORE_ERR;
	sqlite3_bind_int64(st, 1, id);
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int r = sqlite3_column_int(st, 0);
		if (r < 0 || r >= c->nnodes) {
			sqlite3_finalize(st);
			return bad_row(s, c, "a node's rank is out of range");
		}
		struct gv_cluster_node *n = &c->nodes[r];
		n->state = name_index(gv_node_state_name, 3, sqlite3_column_text(st, 1));
		if (n->state < 0)
			n->state = GV_NODE_LOST;   /* a state a newer gpuvet wrote: it did not report here */
		col_text(st, 2, n->host, sizeof n->host);
		col_text(st, 3, n->addr, sizeof n->addr);
		col_text(st, 4, n->run_uuid, sizeof n->run_uuid);
		col_text(st, 5, n->provider, sizeof n->provider);
		col_text(st, 6, n->instance_type, sizeof n->instance_type);
		col_text(st, 7, n->gpu_model, sizeof n->gpu_model);
		n->ngpus = sqlite3_column_int(st, 8);
		n->verdict = sqlite3_column_int(st, 9);
		col_text(st, 10, n->why, sizeof n->why);
		n->clock_skew_s = col_real(st, 11);
		n->link_gbps = col_real(st, 12);
		col_text(st, 13, n->link_source, sizeof n->link_source);
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? STORE_OK : store_fail(s, "reading the cluster nodes");
}

static int load_metrics(struct store *s, int64_t id, struct gv_cluster *c)
{
	sqlite3_stmt *st;
	if (store_prepare(s, has_v2(s) ? "SELECT rank, name, value, higher_better, remeasured FROM cluster_metrics"
			  " WHERE cluster_id = ? ORDER BY rank, seq" :
			  "SELECT rank, name, value, higher_better, NULL FROM cluster_metrics WHERE cluster_id = ?"
			  " ORDER BY rank, seq", &st))
		return STORE_ERR;
	sqlite3_bind_int64(st, 1, id);
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int r = sqlite3_column_int(st, 0);
		if (r < 0 || r >= c->nnodes) {
			sqlite3_finalize(st);
			return bad_row(s, c, "a metric's rank is out of range");
		}
		struct gv_cluster_node *n = &c->nodes[r];
		n->metrics = gv_realloc(n->metrics, (n->nmetrics + 1) * sizeof *n->metrics);
		struct gv_cluster_metric *m = &n->metrics[n->nmetrics++];
		memset(m, 0, sizeof *m);
		col_text(st, 1, m->name, sizeof m->name);
		m->value = col_real(st, 2);
		m->higher_better = sqlite3_column_int(st, 3);
		m->remeasured = col_real(st, 4);
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? STORE_OK : store_fail(s, "reading the cluster nodes' metrics");
}

/*
 * The rows of one child table of cluster run id, in their order: *n counted first (to size an
 * array once), then *st prepared and bound, read until done.  The table and columns are this
 * file's own constants.
 */
static int open_rows(struct store *s, const char *table, const char *cols, int64_t id, size_t *n,
		     sqlite3_stmt **st)
{
	char sql[320];
	snprintf(sql, sizeof sql, "SELECT count(*) FROM %s WHERE cluster_id = ?", table);
	if (store_prepare(s, sql, st))
		return STORE_ERR;
	sqlite3_bind_int64(*st, 1, id);
	int rc = sqlite3_step(*st);
	*n = rc == SQLITE_ROW ? (size_t)sqlite3_column_int64(*st, 0) : 0;
	sqlite3_finalize(*st);
	if (rc != SQLITE_ROW)
		return store_fail(s, "counting a cluster run's rows");
	snprintf(sql, sizeof sql, "SELECT %s FROM %s WHERE cluster_id = ? ORDER BY seq", cols, table);
	if (store_prepare(s, sql, st))
		return STORE_ERR;
	sqlite3_bind_int64(*st, 1, id);
	return STORE_OK;
}

static int load_pairs(struct store *s, int64_t id, struct gv_cluster *c)
{
	sqlite3_stmt *st;
	size_t n;
	if (open_rows(s, "cluster_pairs", "a, b, round, state, gbps_ab, gbps_ba, lat_us, nccl_gbps_ab, nccl_gbps_ba, why",
		      id, &n, &st))
		return STORE_ERR;
	c->pairs = n ? gv_calloc(n, sizeof *c->pairs) : NULL;
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW && c->npairs < n) {
		struct gv_cluster_pair *p = &c->pairs[c->npairs++];
		p->a = sqlite3_column_int(st, 0);
		p->b = sqlite3_column_int(st, 1);
		p->round = sqlite3_column_int(st, 2);
		p->state = name_index(gv_pair_state_name, 3, sqlite3_column_text(st, 3));
		if (p->state < 0)
			p->state = GV_PAIR_SKIPPED;
		p->gbps_ab = col_real(st, 4);
		p->gbps_ba = col_real(st, 5);
		p->lat_us = col_real(st, 6);
		p->nccl_gbps_ab = col_real(st, 7);
		p->nccl_gbps_ba = col_real(st, 8);
		col_text(st, 9, p->why, sizeof p->why);
		if (p->a < 0 || p->b < 0 || p->a >= c->nnodes || p->b >= c->nnodes) {
			sqlite3_finalize(st);
			return bad_row(s, c, "a pair names a rank out of range");
		}
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE || rc == SQLITE_ROW ? STORE_OK : store_fail(s, "reading the cluster pairs");
}

static int load_ar(struct store *s, int64_t id, struct gv_cluster *c)
{
	sqlite3_stmt *st;
	size_t n;
	if (open_rows(s, "cluster_allreduce", "bytes, time_us, algbw_gbps, busbw_gbps", id, &n, &st))
		return STORE_ERR;
	c->ar = n ? gv_calloc(n, sizeof *c->ar) : NULL;
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW && c->nar < n) {
		struct gv_cluster_ar_point *p = &c->ar[c->nar++];
		p->bytes = col_real(st, 0);
		p->time_us = col_real(st, 1);
		p->algbw_gbps = col_real(st, 2);
		p->busbw_gbps = col_real(st, 3);
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE || rc == SQLITE_ROW ? STORE_OK : store_fail(s, "reading the cluster all-reduce");
}

static int load_findings(struct store *s, int64_t id, struct gv_cluster *c)
{
	sqlite3_stmt *st;
	size_t n;
	if (open_rows(s, "cluster_findings", "kind, rank, peer, drain, evidence", id, &n, &st))
		return STORE_ERR;
	c->findings = n ? gv_calloc(n, sizeof *c->findings) : NULL;
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW && c->nfindings < n) {
		struct gv_cluster_finding *f = &c->findings[c->nfindings++];
		f->kind = name_index(gv_finding_name, GV_FIND_KINDS, sqlite3_column_text(st, 0));
		if (f->kind < 0)
			f->kind = GV_FIND_FABRIC_RULE;   /* a kind a newer gpuvet wrote: its evidence says it */
		f->rank = sqlite3_column_int(st, 1);
		f->peer = sqlite3_column_int(st, 2);
		f->drain = sqlite3_column_int(st, 3) != 0;
		col_text(st, 4, f->evidence, sizeof f->evidence);
		if (f->rank < -1 || f->rank >= c->nnodes || f->peer < -1 || f->peer >= c->nnodes) {
			sqlite3_finalize(st);
			return bad_row(s, c, "a finding names a rank out of range");
		}
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE || rc == SQLITE_ROW ? STORE_OK : store_fail(s, "reading the cluster findings");
}

static int load_id(struct store *s, int64_t id, struct gv_cluster **out)
{
	struct gv_cluster *c = NULL;
	int began = store_read_begin(s);   /* one snapshot: the run and its parts as one write left them */
	int rc = load_run(s, id, &c);
	if (rc == STORE_OK && (load_nodes(s, id, c) || load_metrics(s, id, c) || load_pairs(s, id, c) ||
			       load_ar(s, id, c) || load_findings(s, id, c)))
		rc = STORE_ERR;
	store_read_end(s, began);
	if (rc) {
		gv_cluster_free(c);
		return rc;
	}
	*out = c;
	return STORE_OK;
}

/* The cluster run's id: the one stored last (id NULL), a number, a uuid or a unique prefix.  STORE_NOTFOUND said. */
static int resolve(struct store *s, const char *id, int64_t *out)
{
	sqlite3_stmt *st;
	long num;
	size_t n = id ? strlen(id) : 0;
	if (!id) {
		if (store_prepare(s, "SELECT id FROM clusters ORDER BY id DESC LIMIT 1", &st))
			return STORE_ERR;
	} else if (id[0] != '0' && gv_parse_long(id, 1, LONG_MAX, &num) == 0) {
		if (store_prepare(s, "SELECT id FROM clusters WHERE id = ?", &st))
			return STORE_ERR;
		sqlite3_bind_int64(st, 1, num);
	} else if (n >= 4 && n < GV_CLUSTER_UUID_LEN && strspn(id, "0123456789abcdefABCDEF-") == n) {
		if (store_prepare(s, "SELECT id FROM clusters WHERE substr(uuid, 1, ?) = lower(?) LIMIT 2", &st))
			return STORE_ERR;
		sqlite3_bind_int(st, 1, (int)n);
		store_bind_text(st, 2, id);
	} else {
		sto_set_err(s, "no cluster run '%s' (give its number or a uuid prefix of at least 4 characters)", id);
		return STORE_NOTFOUND;
	}
	int found = 0, rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		*out = sqlite3_column_int64(st, 0);
		found++;
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return store_fail(s, "finding the cluster run");
	if (found == 1)
		return STORE_OK;
	if (!id)
		sto_set_err(s, "database '%s' has no cluster runs (gpuvet cluster run stores them)", s->path);
	else
		sto_set_err(s, found ? "cluster run '%s' is ambiguous: give more of its uuid" :
			    "no cluster run '%s' in the store", id);
	return STORE_NOTFOUND;
}

int store_load_cluster(struct store *s, const char *id, struct gv_cluster **c)
{
	int64_t cid = 0;
	*c = NULL;
	if (!has_clusters(s)) {
		if (id)
			sto_set_err(s, "no cluster run '%s' in the store (schema %d: before cluster runs)", id, s->version);
		else
			sto_set_err(s, "database '%s' has no cluster runs (gpuvet cluster run stores them)", s->path);
		return 1;
	}
	int rc = resolve(s, id, &cid);
	if (rc)
		return rc == STORE_NOTFOUND ? 1 : -1;
	return load_id(s, cid, c) ? -1 : 0;
}

int store_each_cluster(struct store *s, store_cluster_fn fn, void *ud)
{
	if (!has_clusters(s))
		return STORE_OK;
	sqlite3_stmt *st;
	if (store_prepare(s, "SELECT c.id, c.uuid, c.started_at, c.engine, c.nnodes, c.verdict,"
			  " (SELECT count(*) FROM cluster_findings f WHERE f.cluster_id = c.id AND f.drain = 1)"
			  " FROM clusters c ORDER BY c.id", &st))
		return STORE_ERR;
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct store_cluster_row r = {
			.id = sqlite3_column_int64(st, 0),
			.uuid = (const char *)sqlite3_column_text(st, 1),
			.started_at = (const char *)sqlite3_column_text(st, 2),
			.engine = (const char *)sqlite3_column_text(st, 3),
			.nnodes = sqlite3_column_int(st, 4),
			.verdict = sqlite3_column_int(st, 5),
			.drain = sqlite3_column_int(st, 6),
		};
		if (fn(ud, &r)) {
			rc = SQLITE_DONE;
			break;
		}
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? STORE_OK : store_fail(s, "listing the cluster runs");
}

/* ---- merging ---- */

static int collect_id(void *ud, const struct store_cluster_row *r)
{
	int64_t **ids = ud;
	size_t n = (size_t)(*ids)[0];
	*ids = gv_realloc(*ids, (n + 2) * sizeof **ids);
	(*ids)[n + 1] = r->id;
	(*ids)[0] = (int64_t)(n + 1);
	return 0;
}

int store_merge_clusters(struct store *s, const char *path, int *added, int *skipped)
{
	struct store *o;
	*added = *skipped = 0;
	int rc = store_open_readonly(path, &o);
	if (rc) {
		sto_set_err(s, "%s", store_open_error());
		return rc;
	}
	int64_t *ids = gv_calloc(1, sizeof *ids);   /* ids[0]: how many follow */
	if ((rc = store_each_cluster(o, collect_id, &ids)))
		sto_set_err(s, "%s", store_errmsg(o));
	for (int64_t i = 1; rc == STORE_OK && i <= ids[0]; i++) {
		struct gv_cluster *c = NULL;
		if (load_id(o, ids[i], &c)) {
			sto_set_err(s, "%s", store_errmsg(o));
			rc = STORE_ERR;
			break;
		}
		int r = store_put_cluster(s, c);
		gv_cluster_free(c);
		if (r == STORE_DUP)
			(*skipped)++;
		else if (r == STORE_OK)
			(*added)++;
		else
			rc = r;
	}
	free(ids);
	store_close(o);
	return rc;
}
