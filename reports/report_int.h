/*
 * report_int.h - private to reports/: what the report's loading
 * (report_load.c: the store, the rankings, the entry points that write a
 * report) and its rendering (html.c: every section of the page) share.
 */
#ifndef GPUVET_REPORT_INT_H
#define GPUVET_REPORT_INT_H

#include <jansson.h>
#include <stdint.h>
#include <stdio.h>

#include "common/util.h"
#include "reports/html.h"

struct store;

/* Headline metrics of the runs table (html.c). */
#define N_HEAD 10
extern const char *const report_head[N_HEAD];

/* One run reduced to what the summary, runs table and detail selection need. */
struct run_sum {
	int64_t id;
	char *uuid, *status, *profile, *version, *host, *provider, *itype, *region, *gpu_model;
	char *started, *sku, *verdict, *policy, *verdict_at;
	char *flags;             /* "CODE:severity CODE:severity" */
	int gpu_count, nflag[3];  /* critical, warning, info */
	int nb_ok, nb_skip, nb_fail;
	double head[N_HEAD];
	json_t *fp;              /* full fingerprint when detailed (a reference), else NULL */
	int detail, charts, forced;
	int unlisted;            /* left out of the runs table by the size rule (report_load.c) */
};

/* One stored run's soak figure per GPU (soak.tflops.last_min / GPUs), for the charts' fleet median. */
struct report_fleet {
	int64_t id;
	char model[32];
	int gpus;
	double soak;
};

struct rdoc {
	struct run_sum *runs;
	size_t n;
	json_t *rankings;
	const char *rank_error;
	json_t *prices;
	json_t *price_sources;
	const char *prices_error;
	size_t runs_in_store;
	const char *generated_at;
	const size_t *written;   /* bytes written so far (NULL: not counted, no size budget) */
	size_t budget;           /* detail stops once written reaches this */
	struct store *store;     /* detailed runs without fp are loaded from here, one at a time */
	char *load_err;          /* set when a run cannot be loaded (render then fails) */
	size_t load_errlen;
	report_remedy_fn remedy; /* html.h */
	struct report_fleet *fleet;  /* every run of the store when runs is a subset (--run); NULL: runs is the store */
	size_t n_fleet;
};

static inline char *dupn(const char *s)
{
	return s ? gv_strdup(s) : NULL;
}

/* ---- reducing a run (html.c) ---- */
void report_sum_init_run(struct run_sum *r);
void report_sum_add_metric(struct run_sum *r, const char *name, double value);
void report_sum_add_bench(struct run_sum *r, const char *st);
void report_sum_add_flag(struct run_sum *r, const char *code, const char *sev);
void report_sum_add_verdict(struct run_sum *r, const char *verdict, const char *policy, const char *at);
void report_run_sum_free(struct run_sum *r);
/* Marks which runs get full detail (per_sku newest of each type, at most max). */
void report_pick_detail(struct run_sum *runs, size_t n, int per_sku, int max);
/* At most this many rows in the runs table: the detailed runs, the newest and the flagged (report_load.c). */
#define REPORT_ROWS_MAX 2000
/* Writes the whole page; -1 on a write error. */
int report_render_doc(const struct rdoc *d, FILE *f);

#endif
