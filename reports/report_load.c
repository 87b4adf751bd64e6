/*
 * report_load.c - the report's loading side (see html.h): the runs table's
 * rows, prices and price sources from the store and the catalog, the
 * rankings (in parallel, each on a read-only connection of its own), and
 * the entry points that load, then render (html.c) into a stream or a file.
 */
#include "reports/html.h"
#include "common/outfile.h"
#include "reports/report_int.h"
#include "judge/rank.h"
#include "pricing/catalog.h"
#include "results/store.h"
#include "common/util.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* ---- from the store ---- */

/*
 * The runs table needs every run but only a few columns: read them with
 * five queries over the whole store (schema v1, results/store.c) rather
 * than one fingerprint per run, which would also load every sample.  Full
 * fingerprints are loaded only for the runs that get detail.
 */

struct id_index {
	int64_t id;
	size_t i;
};

static int cmp_id_index(const void *a, const void *b)
{
	int64_t x = ((const struct id_index *)a)->id, y = ((const struct id_index *)b)->id;
	return (x > y) - (x < y);
}

static struct run_sum *find_run(struct rdoc *d, const struct id_index *ix, int64_t id)
{
	struct id_index key = { id, 0 }, *hit = bsearch(&key, ix, d->n, sizeof *ix, cmp_id_index);
	return hit ? &d->runs[hit->i] : NULL;
}

struct sum_walk {
	const struct report_opts *o;
	struct rdoc *d;
	size_t cap, total;
	struct id_index *ix;
};

static int take_run(void *ud, const struct store_run_row *row)
{
	struct sum_walk *w = ud;
	struct rdoc *d = w->d;
	int want = w->o->n_run_ids == 0;
	w->total++;
	for (size_t k = 0; k < w->o->n_run_ids && !want; k++)
		want = w->o->run_ids[k] == row->id;
	if (!want)
		return 0;
	if (d->n == w->cap) {
		w->cap = w->cap ? w->cap * 2 : 256;
		d->runs = gv_realloc(d->runs, w->cap * sizeof *d->runs);
	}
	struct run_sum *r = &d->runs[d->n++];
	memset(r, 0, sizeof *r);
	r->id = row->id;
	r->uuid = dupn(row->uuid);
	r->status = rep_strs_get(d->strs, row->status);
	r->profile = rep_strs_get(d->strs, row->profile);
	r->version = rep_strs_get(d->strs, row->gpuvet_version);
	r->host = rep_strs_get(d->strs, row->hostname);
	r->provider = rep_strs_get(d->strs, row->provider);
	r->itype = rep_strs_get(d->strs, row->instance_type);
	r->region = rep_strs_get(d->strs, row->region);
	r->gpu_model = rep_strs_get(d->strs, row->gpu_model);
	r->gpu_count = row->gpu_count;
	r->started = dupn(row->started_at);
	r->detail = w->o->n_run_ids > 0;
	if (w->o->run_fp && w->o->n_run_ids && row->id == w->o->run_ids[0])
		r->fp = json_incref(w->o->run_fp);   /* held by the caller: not loaded again */
	report_sum_init_run(r, d->strs);
	return 0;
}

static int take_bench(void *ud, int64_t run, const char *name, const char *status, const char *reason)
{
	struct sum_walk *w = ud;
	struct run_sum *r = find_run(w->d, w->ix, run);
	(void)name;
	(void)reason;
	if (r)
		report_sum_add_bench(r, status);
	return 0;
}

static int take_metric(void *ud, int64_t run, const char *name, double value, const char *unit)
{
	struct sum_walk *w = ud;
	struct run_sum *r = find_run(w->d, w->ix, run);
	(void)unit;
	if (r)
		report_sum_add_metric(r, name, value);
	return 0;
}

static int take_flag(void *ud, int64_t run, const char *code, const char *severity, const char *message)
{
	struct sum_walk *w = ud;
	struct run_sum *r = find_run(w->d, w->ix, run);
	(void)message;
	if (r)
		report_sum_add_flag(r, code, severity);
	return 0;
}

static int take_verdict(void *ud, int64_t run, const char *verdict, const char *policy, const char *at)
{
	struct sum_walk *w = ud;
	struct run_sum *r = find_run(w->d, w->ix, run);
	if (r)
		report_sum_add_verdict(r, w->d->strs, verdict, policy, at);
	return 0;
}

/* An accept that tolerated a critical flag: the run's headline says so, if it is the run's verdict. */
static int take_tolerated(void *ud, int64_t run, const char *policy, const char *at, const char *code)
{
	struct sum_walk *w = ud;
	struct run_sum *r = find_run(w->d, w->ix, run);
	(void)policy;
	if (r && code && at && r->verdict_at && !strcmp(at, r->verdict_at)) {
		free(r->tolerated);
		r->tolerated = gv_strdup(code);
	}
	return 0;
}

static int load_summaries(struct store *s, const struct report_opts *o, struct rdoc *d, char *err, size_t errlen)
{
	struct sum_walk w = { .o = o, .d = d };
	int rc = STORE_OK;

	if (store_each_run(s, STORE_RUNS_BY_START, take_run, &w)) {
		snprintf(err, errlen, "%s", store_errmsg(s));
		return -1;
	}
	d->runs_in_store = w.total;
	if (o->n_run_ids && d->n < o->n_run_ids) {
		snprintf(err, errlen, "run not found in the store");
		return -1;
	}
	w.ix = gv_malloc((d->n ? d->n : 1) * sizeof *w.ix);
	for (size_t i = 0; i < d->n; i++)
		w.ix[i] = (struct id_index){ d->runs[i].id, i };
	qsort(w.ix, d->n, sizeof *w.ix, cmp_id_index);
	if (store_each_bench(s, take_bench, &w) ||
	    store_each_headline(s, report_head, N_HEAD, take_metric, &w) ||
	    store_each_flag(s, take_flag, &w) || store_each_verdict(s, take_verdict, &w) ||
	    store_each_tolerating_verdict(s, take_tolerated, &w)) {
		snprintf(err, errlen, "%s", store_errmsg(s));
		rc = -1;
	}
	free(w.ix);
	return rc;
}

/*
 * The fleet behind the charts' fleet-median line: with --run the report
 * holds only the runs asked for, so read every run's GPU model and soak
 * figure (two light passes: the runs, one headline metric).
 */
struct fleet_walk {
	struct rdoc *d;
	size_t cap;
};

static int cmp_fleet_id(const void *a, const void *b)
{
	int64_t x = ((const struct report_fleet *)a)->id, y = ((const struct report_fleet *)b)->id;
	return (x > y) - (x < y);
}

static int fleet_run(void *ud, const struct store_run_row *row)
{
	struct fleet_walk *w = ud;
	struct report_fleet *f;
	if (!row->gpu_model || row->gpu_count <= 0)
		return 0;
	if (w->d->n_fleet == w->cap) {
		w->cap = w->cap ? w->cap * 2 : 256;
		w->d->fleet = gv_realloc(w->d->fleet, w->cap * sizeof *w->d->fleet);
	}
	f = &w->d->fleet[w->d->n_fleet++];
	f->id = row->id;
	gv_strlcpy(f->model, row->gpu_model, sizeof f->model);
	f->gpus = row->gpu_count;
	f->soak = NAN;
	return 0;
}

static int fleet_metric(void *ud, int64_t run, const char *name, double value, const char *unit)
{
	struct fleet_walk *w = ud;
	struct report_fleet key = { .id = run }, *hit;
	(void)name;
	(void)unit;
	if (!w->d->n_fleet)
		return 0;
	hit = bsearch(&key, w->d->fleet, w->d->n_fleet, sizeof key, cmp_fleet_id);
	if (hit)
		hit->soak = value / hit->gpus;
	return 0;
}

static void load_fleet(struct store *s, struct rdoc *d)
{
	static const char *const soak[1] = { "soak.tflops.last_min" };
	struct fleet_walk w = { .d = d };

	if (store_each_run(s, STORE_RUNS_BY_START, fleet_run, &w) == 0) {
		if (d->n_fleet) /* qsort and bsearch take no NULL array, even empty */
			qsort(d->fleet, d->n_fleet, sizeof *d->fleet, cmp_fleet_id);
		if (store_each_headline(s, soak, 1, fleet_metric, &w) == 0)
			return;
	}
	gv_debug("report: no fleet median: %s", store_errmsg(s));
	free(d->fleet);
	d->fleet = NULL;
	d->n_fleet = 0;
}

static int take_source(void *ud, const struct price_source *ps)
{
	json_array_append_new(ud, json_pack("{s:s?,s:s?,s:s?,s:s?,s:s?,s:s?,s:I}", "source", ps->source,
					    "provider", ps->provider, "fetched_at", ps->fetched_at, "captured_at",
					    ps->captured_at, "status", ps->status, "message", ps->message, "rows",
					    (json_int_t)ps->rows));
	return 0;
}

static json_t *load_prices(struct store *s, json_t **sources, char *err, size_t errlen)
{
	char serr[256];
	json_t *arr = report_load_prices(s, err, errlen);   /* bounded: html_prices.c */
	*sources = json_array();
	catalog_sources(store_db(s), take_source, *sources, serr, sizeof serr);
	return arr;
}

/*
 * Rankings: [0] is exactly `gpuvet rank`'s default (so the order matches
 * `gpuvet rank --json`), computed first on the caller's connection; then
 * the same metric on spot prices and per GPU, each metric of RANK_MORE
 * some run has, and the composite score.training, on-demand per instance.
 * A ranking rank_compute() refuses (no price for that market) or that has
 * no row is left out.
 *
 * Each ranking reads the whole store, so the others are computed in
 * parallel, each thread on a read-only connection of its own to the same
 * file; an in-memory store is ranked serially on the caller's connection.
 */
struct rank_job {
	struct rank_opts o;
	json_t *out;
	int rc;
	char err[256];
};

struct rank_pool {
	struct store *main;       /* the caller's connection */
	const char *path;         /* for the threads' own read-only connections; NULL: none (in memory) */
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
		p->jobs[i].rc = rank_compute(s, &p->jobs[i].o, &p->jobs[i].out, p->jobs[i].err, sizeof p->jobs[i].err);
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

static json_t *compute_rankings(struct store *s, const struct report_opts *o, const struct rdoc *d,
				char *why, size_t whylen)
{
	json_t *out = json_array(), *r0 = NULL;
	/* the page shows how many runs were left out, never the list: a ranking's state stays its SKUs */
	/* and of the estimates, the best REPORT_ESTIMATES_MAX: a priced catalog of 1.1 M types is not a page */
	struct rank_opts ro = { .include_estimates = !o->no_estimates, .left_out_max = -1,
				.estimates_max = REPORT_ESTIMATES_MAX };
	struct rank_job jobs[5 + sizeof RANK_MORE / sizeof RANK_MORE[0]];
	struct rank_pool pool = { .main = s, .jobs = jobs };
	const char *path = store_file(s), *metric;
	pthread_t th[3];
	struct rank_thread thr[3];
	size_t nth = 0;
	long cpus = sysconf(_SC_NPROCESSORS_ONLN), lim;
	const char *env = getenv("GPUVET_REPORT_THREADS");   /* 1: serial (benchmarks, debugging) */
	struct store *ro_main = NULL;
	char err[256];

	if (env && gv_parse_long(env, 1, 64, &lim) == 0)
		cpus = lim;
	/* rank's defaults first, on the caller's connection: the table's order, and the default metric */
	if (rank_compute(s, &ro, &r0, err, sizeof err)) {
		snprintf(why, whylen, "%s", err);
		return out;
	}
	json_array_append_new(out, r0);
	metric = json_string_value(json_object_get(r0, "metric"));

	memset(jobs, 0, sizeof jobs);
	jobs[pool.n].o = ro;
	jobs[pool.n++].o.market = "spot";
	jobs[pool.n].o = ro;
	jobs[pool.n++].o.per = "gpu";
	for (size_t m = 0; m < sizeof RANK_MORE / sizeof RANK_MORE[0]; m++) {
		int present = 0;
		for (size_t h = 0; h < N_HEAD; h++)
			if (!strcmp(report_head[h], RANK_MORE[m]))
				for (size_t i = 0; i < d->n && !present; i++)
					present = isfinite(d->runs[i].head[h]);
		if (!present || (metric && !strcmp(metric, RANK_MORE[m])))
			continue;
		jobs[pool.n].o = ro;
		jobs[pool.n++].o.metric = RANK_MORE[m];
	}
	jobs[pool.n].o = ro;
	jobs[pool.n++].o.metric = "score.training";   /* the composite (score.all costs a pass per metric) */
	/* the first screen's workloads: inference (FP16 GEMM) and data-heavy (score.data) beside training */
	if (!metric || strcmp(metric, "gemm.fp16.tflops")) {
		jobs[pool.n].o = ro;
		jobs[pool.n++].o.metric = "gemm.fp16.tflops";
	}
	jobs[pool.n].o = ro;
	jobs[pool.n++].o.metric = "score.data";

	/*
	 * The rest in parallel, every thread on a read-only connection of its
	 * own (the catalogs are loaded already; a writable connection would
	 * check them again on every call).
	 */
	pthread_mutex_init(&pool.mu, NULL);
	pool.path = path && *path ? path : NULL;
	if (pool.path) {
		for (long i = 1; i < cpus && i <= 3 && nth + 1 < pool.n; i++) {
			if (!(thr[nth].s = rank_conn(pool.path)))
				break;
			thr[nth].pool = &pool;
			if (pthread_create(&th[nth], NULL, rank_worker, &thr[nth])) {
				store_close(thr[nth].s);
				break;
			}
			nth++;
		}
		ro_main = rank_conn(pool.path);
	}
	rank_pool_drain(&pool, ro_main ? ro_main : s);
	for (size_t i = 0; i < nth; i++) {
		pthread_join(th[i], NULL);
		store_close(thr[i].s);
	}
	pthread_mutex_destroy(&pool.mu);
	store_close(ro_main);

	for (size_t k = 0; k < pool.n; k++) {
		if (!jobs[k].rc && json_array_size(json_object_get(jobs[k].out, "rows")))
			json_array_append(out, jobs[k].out);
		json_decref(jobs[k].out);
	}
	return out;
}

/* A stream that forwards to another and counts the bytes, for the size budget. */
struct counted {
	FILE *to;
	size_t bytes;
};

static ssize_t counted_write(void *cookie, const char *buf, size_t n)
{
	struct counted *c = cookie;
	size_t w = fwrite(buf, 1, n, c->to);
	c->bytes += w;
	return w == n ? (ssize_t)n : -1;
}

/* ---- the size rule's rows, and the time of each step (-v) ---- */

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* "report: STEP took X s" with -v; restarts the clock. */
static void step_done(const char *what, double *t0)
{
	double t = now_s();
	gv_debug("report: %s took %.3f s", what, t - *t0);
	*t0 = t;
}

static int cmp_row_newest(const void *a, const void *b, void *base)
{
	const struct run_sum *runs = base;
	const struct run_sum *x = &runs[*(const size_t *)a], *y = &runs[*(const size_t *)b];
	int c = strcmp(y->started ? y->started : "", x->started ? x->started : "");
	return c ? c : (y->id > x->id) - (y->id < x->id);
}

/*
 * The runs table's rows when the store has more runs than REPORT_ROWS_MAX:
 * every detailed run, then the newest runs with a critical or warning
 * flag, then the newest of the rest, up to REPORT_ROWS_MAX in all (half of
 * what is left for the flagged, so the newest always show).  The others
 * are counted in the summary and the rankings, not listed.
 */
static void pick_rows(struct run_sum *runs, size_t n)
{
	size_t *idx, listed = 0, flagged_room;
	if (n <= REPORT_ROWS_MAX)
		return;
	idx = gv_malloc(n * sizeof *idx);
	for (size_t i = 0; i < n; i++) {
		idx[i] = i;
		runs[i].unlisted = !runs[i].detail;
		listed += runs[i].detail != 0;
	}
	qsort_r(idx, n, sizeof *idx, cmp_row_newest, runs);
	flagged_room = listed < REPORT_ROWS_MAX ? (REPORT_ROWS_MAX - listed) / 2 : 0;
	for (size_t i = 0; i < n && flagged_room; i++) {
		struct run_sum *r = &runs[idx[i]];
		if (r->unlisted && (r->nflag[0] || r->nflag[1])) {
			r->unlisted = 0;
			listed++;
			flagged_room--;
		}
	}
	for (size_t i = 0; i < n && listed < REPORT_ROWS_MAX; i++)
		if (runs[idx[i]].unlisted) {
			runs[idx[i]].unlisted = 0;
			listed++;
		}
	free(idx);
}

int report_write(struct store *s, const struct report_opts *o, FILE *out, char *err, size_t errlen)
{
	static const struct report_opts none = { 0 };
	struct rdoc d = { 0 };
	char now[32], rank_why[256] = "", price_err[256] = "";
	json_t *sources = NULL;
	int rc = -1, in_txn;
	double t0 = now_s(), start = t0;

	if (!o)
		o = &none;
	d.strs = rep_strs_new();
	/*
	 * The shipped price catalogs are loaded by the command before this
	 * (gv_prices_ready), so the rankings, some on read-only connections of
	 * their own, all see the same prices as `gpuvet rank`.
	 */
	/*
	 * Many passes over the same tables, whose pages the kernel keeps: a page
	 * cache of 64 MiB was 45 MiB of a 100k-run report's peak and saved no time
	 * measured (docs/lab/fleet-scale.md), so the rankings' size.
	 */
	if (store_read_cache(s, 16))
		gv_debug("report: %s", store_errmsg(s));
	/*
	 * Read transactions around our own reading: one snapshot per phase and no
	 * lock taken per statement.  Not around the rankings, which run on
	 * connections of their own.
	 */
	in_txn = store_read_begin(s);
	rc = load_summaries(s, o, &d, err, errlen);
	if (rc == 0 && o->n_run_ids)
		load_fleet(s, &d);
	store_read_end(s, in_txn);
	in_txn = 0;
	if (rc)
		goto out;
	rc = -1;
	step_done("reading the runs' summaries", &t0);
	report_pick_detail(d.runs, d.n, o->detail_per_sku, o->detail_max);
	pick_rows(d.runs, d.n);
	/* fingerprints are loaded one at a time while the detail is written */
	d.store = s;
	d.remedy = o->remedy;
	d.cost = o->cost;
	d.load_err = err;
	d.load_errlen = errlen;
	err[0] = 0;
	d.rankings = compute_rankings(s, o, &d, rank_why, sizeof rank_why);
	d.rank_error = rank_why[0] ? rank_why : NULL;
	step_done("ranking", &t0);
	in_txn = store_read_begin(s);
	d.prices = load_prices(s, &sources, price_err, sizeof price_err);
	d.price_sources = sources;
	d.prices_error = price_err[0] ? price_err : NULL;
	gv_iso8601((long)time(NULL), now, sizeof now);
	d.generated_at = now;
	step_done("reading prices", &t0);
	{
		struct counted cnt = { out, 0 };
		cookie_io_functions_t io = { .write = counted_write };
		FILE *cf = fopencookie(&cnt, "w", io);
		int bad;
		if (!cf) {
			snprintf(err, errlen, "cannot write the report: %s", strerror(errno));
			goto out;
		}
		d.written = &cnt.bytes;
		d.budget = o->budget_bytes ? o->budget_bytes : REPORT_BUDGET_BYTES;
		errno = 0;
		bad = report_render_doc(&d, cf);
		bad |= fclose(cf) != 0;
		bad |= fflush(out) != 0 || ferror(out);
		if (err[0])
			goto out;
		if (bad) {
			snprintf(err, errlen, "cannot write the report: %s", strerror(errno ? errno : EIO));
			goto out;
		}
		step_done("writing the page (with the detailed runs' fingerprints)", &t0);
		gv_debug("report: %zu runs, %zu bytes, %.3f s in all", d.n, cnt.bytes, now_s() - start);
	}
	rc = 0;
out:
	store_read_end(s, in_txn);
	for (size_t i = 0; i < d.n; i++)
		report_run_sum_free(&d.runs[i]);
	free(d.runs);
	rep_strs_free(d.strs);
	free(d.fleet);
	json_decref(d.rankings);
	json_decref(d.prices);
	json_decref(sources);
	return rc;
}

int report_write_file(struct store *s, const struct report_opts *o, const char *path, char *err, size_t errlen)
{
	struct gv_outfile out;
	if (gv_outfile_open(&out, path, err, errlen))
		return -1;
	if (report_write(s, o, out.f, err, errlen)) {
		gv_outfile_abort(&out);
		if (!strstr(err, path)) {   /* which file could not be written */
			char why[512];
			snprintf(why, sizeof why, "%s", err);
			snprintf(err, errlen, "%s: %s", path, why);
		}
		return -1;
	}
	return gv_outfile_commit(&out, err, errlen);
}
