/*
 * report_load.c - the report's loading side (see html.h): the runs table's
 * rows, prices and price sources from the store and the catalog, the
 * rankings (in parallel, each on a read-only connection of its own), and
 * the entry points that load, then render (html.c) into a stream or a file.
 */
#include "reports/html.h"
#include "common/outfile.h"
#include "reports/report_int.h"
#include "judge/policy.h"
#include "judge/rank.h"
#include "judge/cost.h"
#include "pricing/catalog.h"
#include "results/store.h"
#include "results/fprun.h"
#include "judge/derive.h"
#include "common/cluster.h"
#include "common/util.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* the time of each step (-v), below */
static double now_s(void);
static void step_done(const char *what, double *t0);

/* ---- from the store ---- */

/*
 * The store's runs are read in one streamed pass in started order
 * (store_each_report_run: each run's columns), with the facts of each read
 * before by id (report_scan.c: flags, latest verdict, BF16 headline),
 * counted into the page's aggregates (report_agg.c) and offered to its
 * choices (report_pick.c), then dropped; only the runs the page shows are
 * read again whole, by id, and full fingerprints only for the detailed,
 * one at a time while the detail is written.  With --run, the runs asked
 * for are the page.
 */

static void count_sev(void *ud, const char *code, size_t len, int sev)
{
	(void)code;
	(void)len;
	((int *)ud)[sev]++;
}

/* A run's summary from its row: its strings owned or shared (keep), or the row's own (counted, then dropped). */
static void sum_from_row(struct run_sum *r, struct rep_strs *strs, const struct store_report_run *row, int keep)
{
	const struct store_run_row *x = &row->run;
	memset(r, 0, sizeof *r);
	r->id = x->id;
	r->gpu_count = x->gpu_count;
	if (keep) {
		r->uuid = dupn(x->uuid);
		r->started = dupn(x->started_at);
		r->status = rep_strs_get(strs, x->status);
		r->profile = rep_strs_get(strs, x->profile);
		r->version = rep_strs_get(strs, x->gpuvet_version);
		r->host = rep_strs_get(strs, x->hostname);
		r->provider = rep_strs_get(strs, x->provider);
		r->itype = rep_strs_get(strs, x->instance_type);
		r->region = rep_strs_get(strs, x->region);
		r->gpu_model = rep_strs_get(strs, x->gpu_model);
		r->flags = dupn(row->flags);
		r->verdict = rep_strs_get(strs, row->verdict);
		r->policy = rep_strs_get(strs, row->policy);
		r->verdict_at = dupn(row->verdict_at);
	} else {
		r->uuid = (char *)x->uuid;
		r->started = (char *)x->started_at;
		r->status = x->status;
		r->profile = x->profile;
		r->version = x->gpuvet_version;
		r->host = x->hostname;
		r->provider = x->provider;
		r->itype = x->instance_type;
		r->region = x->region;
		r->gpu_model = x->gpu_model;
		r->flags = (char *)row->flags;
		r->verdict = row->verdict;
		r->policy = row->policy;
		r->verdict_at = (char *)row->verdict_at;
	}
	report_sum_init_run(r, strs);
	for (size_t h = 0; h < N_HEAD && h < row->nhead; h++)
		r->head[h] = row->head[h];
	r->nb_ok = row->benches_ok;
	r->nb_skip = row->benches_skipped;
	r->nb_fail = row->benches_failed;
	rep_each_flag(r->flags, count_sev, r->nflag);
}

struct load_walk {
	struct rdoc *d;
	const struct rep_pick_ent *pick;   /* the chosen runs, in the order asked for */
	struct rep_facts *facts;           /* every run's, for the streamed pass */
	size_t cap;
	uint64_t seq;
};

/* Every run of the store, once: counted and offered to the page's choices. */
static int stream_run(void *ud, const struct store_report_run *row)
{
	struct load_walk *w = ud;
	struct run_sum r;
	sum_from_row(&r, w->d->strs, row, 0);
	rep_facts_apply(w->facts, &r);
	rep_agg_add(&w->d->agg, &r, w->seq);
	rep_pick_add(&w->d->agg, r.sku, (size_t)r.id, w->seq, 0, r.nflag[0] || r.nflag[1]);
	rep_facts_note_run(w->facts, &w->d->agg, &r);
	w->seq++;
	return 0;
}

/* A run the page shows, kept whole. */
static int keep_run(void *ud, const struct store_report_run *row)
{
	struct load_walk *w = ud;
	struct rdoc *d = w->d;
	struct run_sum *r;
	if (d->n == w->cap) {
		w->cap = w->cap ? w->cap * 2 : 256;
		d->runs = gv_realloc(d->runs, w->cap * sizeof *d->runs);
	}
	r = &d->runs[d->n];
	sum_from_row(r, d->strs, row, 1);
	if (w->pick) {
		r->detail = w->pick[d->n].detail;
		r->charts = w->pick[d->n].charts;
	}
	d->n++;
	return 0;
}

static int cmp_page_order(const void *a, const void *b)
{
	const struct run_sum *x = a, *y = b;
	int c = strcmp(x->started ? x->started : "", y->started ? y->started : "");
	return c ? c : (x->id > y->id) - (x->id < y->id);
}

static int count_run(void *ud, const struct store_run_row *r)
{
	(void)r;
	++*(size_t *)ud;
	return 0;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

/* --run: the runs asked for, each once, in the page's order; all of them detailed. */
static int load_asked(struct store *s, const struct report_opts *o, struct rdoc *d)
{
	int64_t *ids = gv_malloc(o->n_run_ids * sizeof *ids);
	size_t n = 0;
	struct load_walk w = { .d = d };
	memcpy(ids, o->run_ids, o->n_run_ids * sizeof *ids);
	qsort(ids, o->n_run_ids, sizeof *ids, cmp_i64);
	for (size_t i = 0; i < o->n_run_ids; i++)
		if (!n || ids[n - 1] != ids[i])
			ids[n++] = ids[i];
	if (store_each_report_run(s, ids, n, report_head, N_HEAD, keep_run, &w) ||
	    store_each_run_sku(s, count_run, &d->runs_in_store)) {
		free(ids);
		return -1;
	}
	free(ids);
	if (d->n < n)
		return 1;
	if (d->n) /* qsort takes no NULL array, even empty */
		qsort(d->runs, d->n, sizeof *d->runs, cmp_page_order);
	for (size_t i = 0; i < d->n; i++) {
		d->runs[i].detail = 1;
		if (o->run_fp && d->runs[i].id == o->run_ids[0])
			d->runs[i].fp = derive_from_json(o->run_fp);   /* held by the caller: decoded, not loaded again */
		rep_agg_add(&d->agg, &d->runs[i], i);
	}
	report_pick_detail(&d->agg, d->runs, d->n);
	rep_agg_medians_mem(&d->agg, d->runs, d->n, 0);
	return 0;
}

/* The BF16 values in ascending order, to their instance type's median. */
static int bf16_value(void *ud, const struct store_value_row *v)
{
	struct rdoc *d = ud;
	struct rep_sku *k = rep_agg_sku(&d->agg, report_sku_key(d->strs, v->provider, v->instance_type, v->region), 0);
	if (k)
		rep_med_add(&k->bf16, v->value);
	return 0;
}

static int soak_count(void *ud, const struct store_value_row *v)
{
	rep_agg_soak(ud, v->gpu_model, 1)->med.n++;
	return 0;
}

static int soak_value(void *ud, const struct store_value_row *v)
{
	struct rep_soak *k = rep_agg_soak(ud, v->gpu_model, 0);
	if (k)
		rep_med_add(&k->med, v->value / v->gpu_count);
	return 0;
}

/*
 * The charts' fleet median: every stored run's soak figure per GPU, by GPU
 * model (two streamed passes), by the runs' noted models when facts has them.
 */
static void load_fleet(struct store *s, struct rdoc *d, const struct rep_facts *facts)
{
	static const char soak[] = "soak.tflops.last_min";
	int rc = facts ? rep_facts_soak_medians(facts, s, &d->agg, soak) : 1;
	if (rc == 0 || (rc > 0 && store_each_headline_value(s, soak, 1, 0, soak_count, &d->agg) == 0 &&
			store_each_headline_value(s, soak, 1, 1, soak_value, &d->agg) == 0))
		return;
	gv_debug("report: no fleet median: %s", store_errmsg(s));
	free(d->agg.soak);
	d->agg.soak = NULL;
	d->agg.nsoak = 0;
}

/* The machines the runs were made on, for the fleet's heading (one vetted twice is one machine of two runs):
 * as the rankings' thread counted them, else counted here. */
static int load_machines(struct store *s, const struct rep_rankings *ranks, struct rdoc *d, char *err, size_t errlen)
{
	int64_t n = ranks->machines;
	if (!ranks->machines_ok && store_report_machines(s, &n)) {
		snprintf(err, errlen, "%s", store_errmsg(s));
		return -1;
	}
	d->agg.machines = (size_t)n;
	return 0;
}

/* Every run: one streamed pass, then the runs shown. */
static int load_all(struct store *s, struct rdoc *d)
{
	struct load_walk w = { .d = d };
	struct rep_facts facts;
	struct rep_pick_ent *pick;
	size_t np;
	int64_t *ids;
	int rc;
	/* the facts counted of the BF16 headline, the summary's medians'; the other headlines are looked for */
	double t0 = now_s();
	if (rep_facts_load(&facts, s, &d->agg))
		return -1;
	step_done("reading the runs' flags, verdicts and BF16 in id order", &t0);
	w.facts = &facts;
	rc = store_each_report_run(s, NULL, 0, NULL, 0, stream_run, &w);
	if (!rc) {
		step_done("reading the runs in started order", &t0);
		rc = rep_facts_bf16_medians(&facts, s, &d->agg);
		if (rc > 0)   /* too many types for the facts: joined to the runs */
			rc = store_each_headline_value(s, report_head[0], 0, 1, bf16_value, d);
		step_done("reading the BF16 values in order, for the medians", &t0);
	}
	if (!rc) {
		load_fleet(s, d, &facts);
		step_done("reading the soak values in order, for the fleet medians", &t0);
	}
	rep_facts_free(&facts);
	if (rc)
		return -1;
	for (size_t h = 1; h < N_HEAD; h++) {
		int present = store_headline_present(s, report_head[h]);
		if (present < 0)
			return -1;
		d->agg.head_present[h] = present;
	}
	d->runs_in_store = d->agg.runs;
	np = rep_pick(&d->agg, 1, &pick);
	d->unlisted = d->agg.runs - np;
	ids = gv_malloc((np ? np : 1) * sizeof *ids);
	for (size_t i = 0; i < np; i++)
		ids[i] = (int64_t)pick[i].ref;
	w.pick = pick;
	rc = store_each_report_run(s, ids, np, report_head, N_HEAD, keep_run, &w);
	free(ids);
	free(pick);
	return rc ? -1 : 0;
}

static int load_summaries(struct store *s, const struct report_opts *o, struct rdoc *d, char *err, size_t errlen)
{
	int rc = o->n_run_ids ? load_asked(s, o, d) : load_all(s, d);
	if (rc < 0) {
		snprintf(err, errlen, "%s", store_errmsg(s));
		return -1;
	}
	if (rc > 0) {
		snprintf(err, errlen, "run not found in the store");
		return -1;
	}
	if (o->n_run_ids)   /* else read by load_all */
		load_fleet(s, d, NULL);
	rep_agg_note_detail(&d->agg, d->runs, d->n);
	return 0;
}

static int take_source(void *ud, const struct price_source *ps)
{
	json_array_append_new(ud, json_pack("{s:s?,s:s?,s:s?,s:s?,s:s?,s:s?,s:I}", "source", ps->source,
					    "provider", ps->provider, "fetched_at", ps->fetched_at, "captured_at",
					    ps->captured_at, "status", ps->status, "message", ps->message, "rows",
					    (json_int_t)ps->rows));
	return 0;
}

static json_t *load_prices(struct store *s, int max_age_days, json_t **sources, char *err, size_t errlen)
{
	char serr[256];
	json_t *arr = report_load_prices(s, max_age_days, err, errlen);   /* bounded: html_prices.c */
	*sources = json_array();
	catalog_sources(store_db(s), take_source, *sources, serr, sizeof serr);
	return arr;
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

/*
 * The one policy every verdict of the page is by (html.h report_opts.policy; else the built-in,
 * loaded into *builtin), and the store's verdict reads narrowed to it.  0, or -1 with err.
 */
static int page_policy(struct store *s, const struct report_opts *o, struct policy **builtin,
		       const struct policy **out, char *err, size_t errlen)
{
	if (!o->policy && policy_load(NULL, builtin, err, errlen))
		return -1;
	*out = o->policy ? o->policy : *builtin;
	if (store_report_policy(s, (*out)->digest)) {
		snprintf(err, errlen, "%s", store_errmsg(s));
		policy_free(*builtin);
		*builtin = NULL;
		return -1;
	}
	return 0;
}

/* The store's verdict reads back to every policy's, the built-in policy freed. */
static void page_policy_end(struct store *s, struct policy *builtin)
{
	store_report_policy(s, NULL);
	policy_free(builtin);
}

/* A reason runs were rejected (store_reject_reasons), kept while there is room: the most frequent come first. */
static int take_reason(void *ud, const char *reason, int64_t runs, int64_t newest_run)
{
	struct rdoc *d = ud;
	if (d->nreasons == sizeof d->reasons / sizeof d->reasons[0])
		return 1;
	struct rep_reason *r = &d->reasons[d->nreasons++];
	gv_strlcpy(r->what, reason ? reason : "?", sizeof r->what);
	r->runs = (long)runs;
	r->example = newest_run;
	return 0;
}

/*
 * The newest cluster run (html_cluster.c; none: d->cluster NULL), why the page's policy rejected runs (the fleet
 * headline's reasons), the reference jobs priced (report_costs.c) and the prices, after the fleet's machines; -1
 * with err when the count or the cluster run fails.
 */
static int load_cluster_prices(struct store *s, const struct report_opts *o, const struct rep_rankings *ranks,
			       struct rdoc *d, json_t **sources, char *price_err, size_t plen, char *err, size_t errlen)
{
	if ((!o->n_run_ids && load_machines(s, ranks, d, err, errlen)) ||   /* --run: the runs asked, not a fleet */
	    rep_cluster_load(s, d, err, errlen))
		return -1;
	if (store_reject_reasons(s, d->policy->digest, take_reason, d))   /* a page without them, said with -v */
		gv_debug("report: %s", store_errmsg(s));
	/* the first screen's jobs, as `gpuvet cost` prices them, on the figures read beside the summaries */
	d->workloads = rep_workload_costs(s, o, ranks->basis, ranks->basis_err);
	d->prices = load_prices(s, o->max_age_days, sources, price_err, plen);
	d->price_sources = *sources;
	d->prices_error = price_err[0] ? price_err : NULL;
	return 0;
}

int report_write(struct store *s, const struct report_opts *o, FILE *out, char *err, size_t errlen)
{
	static const struct report_opts none = { 0 };
	struct rdoc d = { 0 };
	char now[32], rank_why[256] = "", price_err[256] = "";
	json_t *sources = NULL;
	struct rep_rankings ranks;
	struct policy *builtin = NULL;   /* the page's policy when o names none */
	int rc = -1, in_txn;
	double t0 = now_s(), start = t0;

	if (!o)
		o = &none;
	if (page_policy(s, o, &builtin, &d.policy, err, errlen))
		return -1;
	d.strs = rep_strs_new();
	rep_agg_init(&d.agg, d.strs, o->detail_per_sku, o->detail_max);
	/*
	 * The shipped price catalogs are loaded by the command before this
	 * (gv_prices_ready), so the rankings, some on read-only connections of
	 * their own, all see the same prices as `gpuvet rank`.
	 *
	 * Many passes over the same tables, whose pages the kernel keeps: a page
	 * cache of 64 MiB was 45 MiB of a 100k-run report's peak and saved no time
	 * measured (docs/lab/fleet-scale.md), so the rankings' size.
	 */
	if (store_read_cache(s, 16))
		gv_debug("report: %s", store_errmsg(s));
	/* Read transactions around our own reading: one snapshot per phase and no lock taken per statement.  Not
	   around the rankings, which run on connections of their own. */
	rep_rankings_start(&ranks, s, o);   /* the rankings' reading, beside the summaries' */
	in_txn = store_read_begin(s);
	rc = load_summaries(s, o, &d, err, errlen);
	store_read_end(s, in_txn);
	in_txn = 0;
	if (rc) {
		rep_rankings_drop(&ranks);
		goto out;
	}
	rc = -1;
	step_done("reading the runs' summaries", &t0);
	/* fingerprints are loaded one at a time while the detail is written */
	d.store = s;
	d.remedy = o->remedy;
	d.cost = o->cost;
	d.load_err = err;
	d.load_errlen = errlen;
	err[0] = 0;
	d.rankings = rep_rankings_finish(&ranks, s, &d, rank_why, sizeof rank_why);
	d.rank_error = rank_why[0] ? rank_why : NULL;
	step_done("ranking", &t0);
	in_txn = store_read_begin(s);
	if (load_cluster_prices(s, o, &ranks, &d, &sources, price_err, sizeof price_err, err, errlen))
		goto out;
	gv_iso8601((long)time(NULL), now, sizeof now);
	d.generated_at = now;
	d.max_age_days = o->max_age_days;
	step_done("reading prices and pricing the reference jobs", &t0);
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
		gv_debug("report: %zu runs, %zu bytes, %.3f s in all", d.agg.runs, cnt.bytes, now_s() - start);
	}
	rc = 0;
out:
	store_read_end(s, in_txn);
	page_policy_end(s, builtin);
	cost_basis_free(ranks.basis);
	for (size_t i = 0; i < d.n; i++)
		report_run_sum_free(&d.runs[i]);
	free(d.runs);
	rep_agg_free(&d.agg);
	rep_strs_free(d.strs);
	json_decref(d.rankings);
	json_decref(d.workloads);
	json_decref(d.prices);
	json_decref(sources);
	gv_cluster_free(d.cluster);
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
