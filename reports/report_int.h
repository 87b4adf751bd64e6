/*
 * report_int.h - private to reports/: what the report's loading
 * (report_load.c: the store, the rankings, the entry points that write a
 * report) and its rendering (html.c: the frame and the table of sections;
 * html_<section>.c: one section each) share.
 */
#ifndef GPUVET_REPORT_INT_H
#define GPUVET_REPORT_INT_H

#include <jansson.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>

#include "common/util.h"
#include "reports/html.h"

struct store;
struct fprun;
struct fp_flag;
struct fp_metric;
struct fp_obj;

/* Headline metrics of the runs table (html_util.c). */
#define N_HEAD 10
extern const char *const report_head[N_HEAD];

/* One copy of each repeated string (report_strs.c); freed with every string it holds. */
struct rep_strs;
struct rep_strs *rep_strs_new(void);
const char *rep_strs_get(struct rep_strs *p, const char *s);   /* NULL for NULL */
void rep_strs_free(struct rep_strs *p);

/*
 * One run reduced to what the summary, runs table and detail selection need.
 * The strings a fleet's runs share are the rdoc's (strs); the rest are the run's.
 */
struct run_sum {
	int64_t id;
	char *uuid, *started, *verdict_at;
	const char *status, *profile, *version, *host, *provider, *itype, *region, *gpu_model;
	const char *sku, *verdict, *policy;
	char *flags;             /* "CODE:severity CODE:severity" */
	int gpu_count, nflag[3];  /* critical, warning, info */
	int nb_ok, nb_skip, nb_fail;
	double head[N_HEAD];
	struct fprun *fp;        /* the run decoded and derived when held in memory (owned: freed with the run_sum), else NULL */
	int detail, charts, forced;
};

/* ---- what the page says about every run it covers, in bounded state (report_agg.c, report_pick.c) ---- */

/* The middle four of a group's n values, fed in ascending order (rep_med_add). */
struct rep_med {
	size_t n, seen;
	double v[4];
};
void rep_med_add(struct rep_med *m, double v);
double rep_med_value(const struct rep_med *m);              /* the median; NaN for none */
double rep_med_without(const struct rep_med *m, double x);   /* the median of the others than one equal to x */

/* A run the page may show: ref names it to the caller (index or id), seq its place in the page's order. */
struct rep_pick_ent {
	size_t ref;
	uint64_t seq;
	int forced, detail, charts, pad;
};

/* An instance type (provider / type / region): its runs and the newest's columns. */
struct rep_sku {
	const char *key, *provider, *itype, *region, *gpu_model;   /* interned */
	char *started;            /* the newest run's */
	size_t started_cap;
	int has_started, gpu_count;
	int64_t newest_id;
	size_t runs;
	int acc, rej, crit;
	struct rep_med bf16;      /* report_head[0] */
	struct rep_pick_ent *recent;   /* ring of its last per_sku runs */
	size_t nrecent;
};

struct rep_flag_count {
	char code[48];
	int sev, runs;
	int64_t latest_detail;    /* a run with detail that has the flag, 0 if none */
	int64_t example;          /* the newest run id that has it (any run: listed in the runs table, flagged) */
	uint64_t last_seq;        /* the last run counted, to count each run once */
};

/* A GPU model's soak figures per GPU (soak.tflops.last_min / GPUs) over the store, for the charts' fleet median. */
struct rep_soak {
	const char *model;        /* interned */
	struct rep_med med;
};

struct rep_agg {
	struct rep_strs *strs;
	size_t runs;              /* the runs the page covers */
	size_t machines;          /* the machines they were made on (store_report_machines), 0: not counted */
	int verd[4], incomplete, synthetic;   /* accept, reject, unmeasurable, none */
	int64_t verd_example[4];  /* of each, the newest run id (the fleet headline links a lone one to its row) */
	int head_present[N_HEAD];
	struct rep_sku *sku;
	size_t nsku, sku_cap, *sku_ix;
	struct rep_flag_count fc[64];
	size_t nfc;
	const char *vers[16];     /* in the order first seen, interned */
	int vcount[16], nv;
	const char **models;      /* GPU models of the runs covered */
	size_t nmodels;
	struct rep_soak *soak;
	size_t nsoak;
	int per_sku, detail_max;
	size_t forced, picked;
	struct rep_pick_ent *last, *flagged;   /* rings of REPORT_ROWS_MAX */
	size_t nlast, nflagged;
};
void rep_agg_init(struct rep_agg *a, struct rep_strs *strs, int per_sku, int detail_max);
void rep_agg_free(struct rep_agg *a);
struct rep_sku *rep_agg_sku(struct rep_agg *a, const char *key, int add);
struct rep_soak *rep_agg_soak(struct rep_agg *a, const char *model, int add);
void rep_agg_add(struct rep_agg *a, const struct run_sum *r, uint64_t seq);
void rep_agg_note_detail(struct rep_agg *a, const struct run_sum *runs, size_t n);
void rep_agg_medians_mem(struct rep_agg *a, const struct run_sum *runs, size_t n, int soak);
double rep_agg_fleet_soak(const struct rep_agg *a, const struct run_sum *r, size_t *nruns);
void rep_each_flag(const char *flags, void (*fn)(void *ud, const char *code, size_t len, int sev), void *ud);
void rep_agg_add_flags(struct rep_agg *a, const char *flags, uint64_t run_key, int64_t run_id);
/* Instance types the page covers, whatever their regions (provider and type): the summary's count. */
size_t rep_agg_types(const struct rep_agg *a);

/*
 * A run's facts the full-store pass looks up by id (report_scan.c): its
 * critical and warning flags, latest verdict and whether its BF16 headline
 * is finite, one byte per run id from lo (the flags counted into a); and
 * its instance type and GPU model, noted by the pass for the medians.
 */
struct rep_facts {
	int64_t lo;
	size_t n;
	int64_t *ids;             /* ids far sparser than the runs (set by hand): each run's id, ascending; else NULL */
	unsigned char *b;
	uint16_t *sku;            /* each run's instance type in a->sku, + 1 (0: none); NULL past 65,534 types */
	uint8_t *model;           /* each run's GPU model in a->models, + 1 (0: none or no GPUs); NULL: see below */
	unsigned char model_gc[255];   /* per model its one GPU count (NULL model past 255, or two counts) */
};
int rep_facts_load(struct rep_facts *f, struct store *s, struct rep_agg *a);
/* Notes r's instance type and GPU model (counted by rep_agg_add before), for the medians below. */
void rep_facts_note_run(struct rep_facts *f, struct rep_agg *a, const struct run_sum *r);
/* The BF16 values in ascending order into their type's median by the runs' noted types: 1 if none were noted. */
int rep_facts_bf16_medians(const struct rep_facts *f, struct store *s, struct rep_agg *a);
/* name's values per GPU into their model's soak median (rep_agg_soak) by the runs' noted models: 1 if none noted. */
int rep_facts_soak_medians(const struct rep_facts *f, struct store *s, struct rep_agg *a, const char *name);
/* Sets r's nflag[0..1] (whether, not how many), verdict ("unmeasurable" standing for any other) and head[0] (finite or not). */
void rep_facts_apply(const struct rep_facts *f, struct run_sum *r);
void rep_facts_free(struct rep_facts *f);
void rep_pick_add(struct rep_agg *a, const char *sku, size_t ref, uint64_t seq, int forced, int flagged);
size_t rep_pick(struct rep_agg *a, int rows, struct rep_pick_ent **out);
/* The page's order of run indices: newest first (started, then id) (report_pick.c, for qsort_r with the
 * run array as argument). */
int rep_cmp_newest(const void *a, const void *b, void *base);

struct rdoc {
	struct run_sum *runs;    /* the runs shown (rows, detail), in the page's order */
	size_t n;
	json_t *rankings;
	const char *rank_error;
	json_t *prices;
	json_t *price_sources;
	const char *prices_error;
	size_t runs_in_store;
	const char *generated_at;
	int max_age_days;        /* > 0: prices captured longer ago were left out (report --max-age) */
	const size_t *written;   /* bytes written so far (NULL: not counted, no size budget) */
	size_t budget;           /* detail stops once written reaches this */
	struct store *store;     /* detailed runs without fp are loaded from here, one at a time */
	char *load_err;          /* set when a run cannot be loaded (render then fails) */
	size_t load_errlen;
	report_remedy_fn remedy; /* html.h */
	json_t *cost;            /* html.h report_opts.cost (borrowed) */
	const struct policy *policy;   /* html.h report_opts.policy (borrowed); NULL: the built-in one */
	struct rep_strs *strs;   /* the runs' shared strings */
	struct rep_agg agg;      /* every run the page covers; runs holds only those shown */
	size_t unlisted;         /* runs left out of the runs table by the size rule */
	struct gv_cluster *cluster;   /* the newest stored cluster run (html_cluster.c), NULL: none */
	/* why the page's policy rejected runs: each first failed check, most first (the fleet headline) */
	struct rep_reason { char what[64]; long runs; int64_t example; } reasons[4];
	size_t nreasons;
	json_t *workloads;       /* the reference jobs priced by `gpuvet cost` (report_costs.c); NULL: none */
	size_t clusters;         /* how many cluster runs the store holds */
};

static inline char *dupn(const char *s)
{
	return s ? gv_strdup(s) : NULL;
}

/* ---- reducing a run (html.c) ---- */
void report_sum_init_run(struct run_sum *r, struct rep_strs *strs);
/* "provider / type / region" ("?" for none), interned: an instance type's key */
const char *report_sku_key(struct rep_strs *strs, const char *provider, const char *itype, const char *region);
void report_sum_add_metric(struct run_sum *r, const char *name, double value);
void report_sum_add_bench(struct run_sum *r, const char *st);
void report_sum_add_flag(struct run_sum *r, const char *code, const char *sev);
void report_sum_add_verdict(struct run_sum *r, struct rep_strs *strs, const char *verdict, const char *policy,
			    const char *at);
void report_run_sum_free(struct run_sum *r);
/* Marks which runs get full detail (a's per_sku newest of each type, at most its detail_max). */
void report_pick_detail(struct rep_agg *a, struct run_sum *runs, size_t n);
/* At most this many rows in the runs table: the detailed runs, the newest and the flagged (report_load.c). */
#define REPORT_ROWS_MAX 2000
/* Estimate rows per ranking (rank_opts.estimates_max): the best per dollar; the others counted. */
#define REPORT_ESTIMATES_MAX 200

/* reports/report_rank.c: the rankings, their store reading started before the summaries' (a thread, a
 * connection of its own, on a file) and the rankings computed from it after them. */
struct rank_gather;
struct rank_opts;
struct cost_basis;
struct rep_rankings {
	const struct report_opts *o;
	struct store *conn;
	struct rank_gather *g;
	struct cost_basis *basis;   /* the reference jobs' figures (report_costs.c), read beside the summaries too */
	char basis_err[512];
	int64_t machines;           /* the fleet's machines (store_report_machines), counted there too */
	int machines_ok;            /* 1 when counted; 0: count them on the caller's connection */
	pthread_t th;
	int threaded;
	char err[256];
};
void rep_rankings_start(struct rep_rankings *r, struct store *s, const struct report_opts *o);
json_t *rep_rankings_finish(struct rep_rankings *r, struct store *s, const struct rdoc *d, char *why, size_t whylen);
/* The reading waited for and dropped: the page will not be written. */
void rep_rankings_drop(struct rep_rankings *r);
/* Writes the whole page; -1 on a write error. */
int report_render_doc(const struct rdoc *d, FILE *f);

/* ---- shared by the report's section files (reports/html*.c) ---- */

/*
 * The page is a table of sections (html.c report_sections), each a function
 * from the loaded document to its HTML, in its own file; each is given the
 * document and what the page decided once: the runs its first screen
 * answers for (tg, nt) and the first of them (top).
 */
struct policy;
struct report_page {
	size_t tg[8], nt;
	int fleet;                     /* the page covers more than one run and none was asked for: the fleet heads it */
	const struct run_sum *top;
	const struct policy *policy;   /* the one policy every verdict of the page is by (report --policy) */
};
typedef void (*report_section_fn)(FILE *f, const struct rdoc *d, const struct report_page *pg);
struct series_buf {
	char *label;
	double *x, *y;
	size_t n;
	int gpu;
};
struct pt { double x, y; };
enum { BAND_THERMAL, BAND_POWER, BAND_HW, BAND_XID, BAND_CAP, N_BAND_KINDS };
struct bands {
	struct svg_band *b;
	size_t n, cap;
};
/* html_util.c: below every section */
void rep_badge(FILE *f, const char *what);
void rep_fmt_val(double v, char *buf, size_t size);
double rep_jnum(json_t *o, const char *k);
void rep_json_human(FILE *f, const char *key, json_t *v, int depth);
const char *rep_jstr(json_t *o, const char *k);
const char *rep_market_name(const char *m);
const char *rep_orq(const char *s);
int rep_sev_index(const char *s);
const char *rep_sev_name(int index);   /* by rep_sev_index: critical, warning, info */
void rep_tag(FILE *f, const char *open, const char *text, const char *close);
void rep_td_head(FILE *f, const char *metric, double v);
void rep_td_num(FILE *f, double v, const char *suffix);
void rep_td_text(FILE *f, const char *s);
/* An object's member that is a number written as an integer (a row's "gpus", "ranks"): 0 with *v, else -1. */
int rep_obj_int(const struct fp_obj *o, const char *key, long long *v);
int rep_row_gpus(const struct fp_metric *m, const struct run_sum *r);
/* Whether a row is a measurement (judge/flags.h flags_metric_is_measurement on its typed params). */
int rep_row_is_measurement(const struct fp_metric *m);
/* html_ranking.c: what a ranking row's figure is, "(sustained)", "(estimate: reference, measured)", and its other profiles */
void rep_basis_words(FILE *f, json_t *row, const char *unit);
/* html_prices.c: the cheapest prices of each GPU model and market, the rest counted (Provenance) */
json_t *report_load_prices(struct store *s, int max_age_days, char *err, size_t errlen);
void rep_prices_table(FILE *f, const struct rdoc *d);
/* html_summary.c */
void rep_section_summary(FILE *f, const struct rdoc *d, const struct report_page *pg);
/* html_ranking.c */
void rep_section_bars(FILE *f, const struct rdoc *d, const struct report_page *pg);
void rep_section_ranking(FILE *f, const struct rdoc *d, const struct report_page *pg);
/* html_runs.c */
void rep_section_runs(FILE *f, const struct rdoc *d, const struct report_page *pg);
/* html_detail.c */
const char *rep_flag_remedy(const struct rdoc *d, const struct fp_flag *fl, char *buf, size_t len);
void rep_section_detail(FILE *f, const struct rdoc *d, const struct report_page *pg);
/* html_charts.c */
size_t rep_collect(const struct fprun *fp, const char *prefix, const char *suffix, struct series_buf *out, size_t max);
void rep_run_charts(FILE *f, const struct rdoc *d, const struct run_sum *r, struct fprun *fp);
void rep_series_free(struct series_buf *b, size_t n);
void rep_throttle_bands(const struct fprun *fp, struct bands *bs, double tdp);
/* html_provenance.c */
void rep_section_provenance(FILE *f, const struct rdoc *d, const struct report_page *pg);
/* html_cost.c */
void rep_section_cost(FILE *f, const struct rdoc *d, const struct report_page *pg);
/* html_cluster.c: the newest cluster run into d (none: d->cluster NULL); 0, or -1 with err */
int rep_cluster_load(struct store *s, struct rdoc *d, char *err, size_t errlen);
void rep_section_cluster(FILE *f, const struct rdoc *d, const struct report_page *pg);
/* The page's headline when the newest item of the store is the cluster run: its verdict and why; 1 said, 0 not. */
int rep_cluster_headline(FILE *f, const struct rdoc *d, const struct report_page *pg);
/* report_costs.c: [{"label", "command", "result": cost_compute's (or {"error"})}] for the reference jobs */
/* The rankings the reference jobs read (COST_RANKINGS at most, into ro), for the page's one gather of the store. */
size_t rep_workload_rank_opts(const struct report_opts *o, struct rank_opts *ro);
/* The figures the reference jobs are priced on, read from s once, over the gather g when it holds them (NULL with
 * err: none). */
struct cost_basis *rep_workload_basis(struct store *s, const struct rank_gather *g, const struct report_opts *o,
				      char *err, size_t errlen);
/* The jobs priced on b (NULL: each says berr). */
json_t *rep_workload_costs(struct store *s, const struct report_opts *o, const struct cost_basis *b, const char *berr);
/* html_answer.c */
size_t rep_answer_targets(const struct rdoc *d, size_t *out, size_t max);
void rep_headline(FILE *f, const struct rdoc *d, const struct report_page *pg);
void rep_section_answer(FILE *f, const struct rdoc *d, const struct report_page *pg);

#endif
