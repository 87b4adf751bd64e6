/*
 * report_rank.c - the report's rankings: [0] is exactly `gpuvet rank`'s
 * default (so the order matches `gpuvet rank --json`); then the same metric
 * on spot prices and per GPU, each metric of RANK_MORE some run has, the
 * composite score.training, FP16 and score.data.  A ranking rank_compute()
 * refuses (no price for that market) or that has no row is left out.
 *
 * The store is read once for all of them (judge/rank_gather.c), and on a
 * file that reading runs in a thread on a read-only connection of its own
 * while the report reads its summaries (rep_rankings_start); the rankings
 * are then computed from it (rep_rankings_finish), [0] on the caller's
 * connection, the others in parallel, each thread on a read-only connection
 * of its own (prices).  An in-memory store is ranked serially.
 */
#include "reports/report_int.h"
#include "reports/html.h"
#include "judge/rank.h"
#include "judge/cost.h"
#include "results/store.h"
#include "common/util.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct rank_job {
	struct rank_opts o;
	json_t *out;
	int rc;
	char err[256];
};

struct rank_pool {
	struct store *main;       /* the caller's connection */
	const char *path;         /* for the threads' own read-only connections; NULL: none (in memory) */
	const struct rank_gather *g;   /* the runs and metrics every job reads, read once */
	struct rank_job *jobs;
	size_t n, next;
	pthread_mutex_t mu;
};

static void rank_pool_drain(struct rank_pool *p, struct store *s)
{
	for (;;) {
		size_t i;
		pthread_mutex_lock(&p->mu);
		i = p->next++;
		pthread_mutex_unlock(&p->mu);
		if (i >= p->n)
			return;
		p->jobs[i].rc = rank_compute_gathered(s, p->g, &p->jobs[i].o, &p->jobs[i].out, p->jobs[i].err,
						      sizeof p->jobs[i].err);
	}
}

struct rank_thread {
	struct rank_pool *pool;
	struct store *s;
};

static void *rank_worker(void *arg)
{
	struct rank_thread *t = arg;
	rank_pool_drain(t->pool, t->s);
	return NULL;
}

/* A read-only connection for a ranking thread (opened by the calling thread: store_open keeps an error buffer). */
static struct store *rank_conn(const char *path)
{
	struct store *s;
	if (store_open_readonly(path, &s) != STORE_OK)
		return NULL;
	/* a ranking is one streamed pass: 16 MiB each was 60 MiB of a 100k-run report's peak, for no time */
	store_read_cache(s, 4);
	return s;
}

/* Metrics ranked per dollar besides rank's default, when some run has them. */
static const char *const RANK_MORE[] = {
	"memcpy.h2d.pinned.gbps", "allreduce.busbw.gbps", "nvme.seqread.gbps", "soak.tflops.last_min",
	"host.membw.triad.gbps",
};
#define RANK_JOBS_MAX (6 + sizeof RANK_MORE / sizeof RANK_MORE[0])

/* The rankings the page shows ([0] rank's defaults), metric's duplicates left out (metric NULL: none known yet;
 * d NULL: before the page is read, every metric of RANK_MORE). */
static size_t ranking_jobs(struct rank_job *jobs, const struct rank_opts *ro, const struct rdoc *d, const char *metric)
{
	size_t n = 0;
	memset(jobs, 0, (RANK_JOBS_MAX) * sizeof *jobs);
	jobs[n++].o = *ro;
	jobs[n].o = *ro;
	jobs[n++].o.market = "spot";
	jobs[n].o = *ro;
	jobs[n++].o.per = "gpu";
	for (size_t m = 0; m < sizeof RANK_MORE / sizeof RANK_MORE[0]; m++) {
		int present = !d;   /* no page yet: every candidate (the gather reads an absent metric for nothing) */
		for (size_t h = 0; d && h < N_HEAD; h++)
			if (!strcmp(report_head[h], RANK_MORE[m]))
				present = d->agg.head_present[h];
		if (!present || (metric && !strcmp(metric, RANK_MORE[m])))
			continue;
		jobs[n].o = *ro;
		jobs[n++].o.metric = RANK_MORE[m];
	}
	jobs[n].o = *ro;
	jobs[n++].o.metric = "score.training";   /* the composite (score.all costs a pass per metric) */
	/* the first screen's workloads: inference (FP16 GEMM) and data-heavy (score.data) beside training */
	if (!metric || strcmp(metric, "gemm.fp16.tflops")) {
		jobs[n].o = *ro;
		jobs[n++].o.metric = "gemm.fp16.tflops";
	}
	jobs[n].o = *ro;
	jobs[n++].o.metric = "score.data";
	return n;
}

/* Every job but [0] in parallel, each thread on a read-only connection of its own to the same file. */
static void run_pool(struct rank_pool *pool, struct store *s)
{
	pthread_t th[3];
	struct rank_thread thr[3];
	size_t nth = 0;
	long cpus = sysconf(_SC_NPROCESSORS_ONLN), lim;
	const char *env = getenv("GPUVET_REPORT_THREADS");   /* 1: serial (benchmarks, debugging) */
	struct store *ro_main = NULL;

	if (env && gv_parse_long(env, 1, 64, &lim) == 0)
		cpus = lim;
	/* the catalogs are loaded already; a writable connection would check them again on every call */
	pthread_mutex_init(&pool->mu, NULL);
	if (pool->path) {
		for (long i = 1; i < cpus && i <= 3 && nth + 1 < pool->n - pool->next; i++) {
			if (!(thr[nth].s = rank_conn(pool->path)))
				break;
			thr[nth].pool = pool;
			if (pthread_create(&th[nth], NULL, rank_worker, &thr[nth])) {
				store_close(thr[nth].s);
				break;
			}
			nth++;
		}
		ro_main = rank_conn(pool->path);
	}
	rank_pool_drain(pool, ro_main ? ro_main : s);
	for (size_t i = 0; i < nth; i++) {
		pthread_join(th[i], NULL);
		store_close(thr[i].s);
	}
	pthread_mutex_destroy(&pool->mu);
	store_close(ro_main);
}

/* What the report asks of rank: the left-out runs counted, never listed; of the estimates, the best
 * REPORT_ESTIMATES_MAX (a priced catalog of 1.1 M types is not a page). */
static struct rank_opts report_rank_opts(const struct report_opts *o)
{
	return (struct rank_opts){ .include_estimates = !o->no_estimates, .left_out_max = -1,
				   .estimates_max = REPORT_ESTIMATES_MAX, .max_age_days = o->max_age_days };
}

/* The gather of every ranking the page may show (n jobs' options), on s. */
static struct rank_gather *gather_all(struct store *s, const struct report_opts *o, char *err, size_t errlen)
{
	struct rank_job jobs[RANK_JOBS_MAX];
	struct rank_opts ro = report_rank_opts(o), all[RANK_JOBS_MAX + COST_RANKINGS];
	size_t nj = ranking_jobs(jobs, &ro, NULL, NULL), n = 1;
	/* rank's defaults first (the gather's options), then the reference jobs' figures (cost finds a row's runs by
	 * its metric's own bit, which only the first fifteen metrics gathered have: judge/rank.h), then the rest */
	all[0] = jobs[0].o;
	n += rep_workload_rank_opts(o, all + n);
	for (size_t i = 1; i < nj; i++)
		all[n++] = jobs[i].o;
	return rank_gather_new(s, all, n, err, errlen);
}

static void *gather_main(void *arg)
{
	struct rep_rankings *r = arg;
	r->g = gather_all(r->conn, r->o, r->err, sizeof r->err);
	r->basis = rep_workload_basis(r->conn, r->g, r->o, r->basis_err, sizeof r->basis_err);
	r->machines_ok = !r->o->n_run_ids && store_report_machines(r->conn, &r->machines) == STORE_OK;
	return NULL;
}

void rep_rankings_start(struct rep_rankings *r, struct store *s, const struct report_opts *o)
{
	const char *path = store_file(s);
	memset(r, 0, sizeof *r);
	r->o = o;
	/* a connection of its own, opened here (store_open keeps an error buffer), and the thread */
	if (!path || !*path || !(r->conn = rank_conn(path)))
		return;
	r->threaded = pthread_create(&r->th, NULL, gather_main, r) == 0;
	if (!r->threaded) {
		store_close(r->conn);
		r->conn = NULL;
	}
}

/* The gather's thread done and its connection closed; no thread (or none could start): gathered here on s. */
static void gather_wait(struct rep_rankings *r, struct store *s)
{
	if (r->threaded)
		pthread_join(r->th, NULL);
	store_close(r->conn);
	r->conn = NULL;
	if (!r->threaded && s) {
		r->g = gather_all(s, r->o, r->err, sizeof r->err);
		r->basis = rep_workload_basis(s, r->g, r->o, r->basis_err, sizeof r->basis_err);
	}
	r->threaded = 0;
}

void rep_rankings_drop(struct rep_rankings *r)
{
	gather_wait(r, NULL);
	rank_gather_delete(r->g);
	r->g = NULL;
	cost_basis_free(r->basis);
	r->basis = NULL;
}

json_t *rep_rankings_finish(struct rep_rankings *r, struct store *s, const struct rdoc *d, char *why, size_t whylen)
{
	json_t *out = json_array(), *r0 = NULL;
	struct rank_opts ro = report_rank_opts(r->o);
	struct rank_job jobs[RANK_JOBS_MAX];
	const char *path = store_file(s), *metric;
	struct rank_pool pool = { .main = s, .jobs = jobs, .path = path && *path ? path : NULL };

	gather_wait(r, s);
	pool.g = r->g;
	if (!r->g || rank_compute_gathered(s, r->g, &ro, &r0, r->err, sizeof r->err)) {
		snprintf(why, whylen, "%s", r->err);
		rank_gather_delete(r->g);
		return out;
	}
	json_array_append_new(out, r0);
	metric = json_string_value(json_object_get(r0, "metric"));
	pool.n = ranking_jobs(jobs, &ro, d, metric);
	pool.next = 1;   /* [0] is r0 */
	run_pool(&pool, s);
	rank_gather_delete(r->g);
	for (size_t k = 1; k < pool.n; k++) {
		if (!jobs[k].rc && json_array_size(json_object_get(jobs[k].out, "rows")))
			json_array_append(out, jobs[k].out);
		json_decref(jobs[k].out);
	}
	return out;
}
