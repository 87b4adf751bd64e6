/*
 * rank.h - instance types ordered by a metric per dollar (issue 6).
 * Shared by `gpuvet rank` and the HTML report so both show the same order.
 */
#ifndef GPUVET_RANK_H
#define GPUVET_RANK_H

#include <jansson.h>

#include <stdint.h>

struct store;

struct rank_opts {
	const char *metric;     /* metric name ("gemm.bf16.tflops") or composite ("score.training"); NULL: default */
	const char *market;     /* "on_demand" (default) or "spot" */
	const char *region;     /* NULL: any */
	const char *per;        /* "instance" (default) or "gpu" */
	int include_estimates;  /* list priced SKUs with no run, ranked with the measured ones, marked with their basis */
	int include_flagged;    /* count runs with critical flags too (default: left out, counted) */
	int max_age_days;       /* > 0: leave out prices captured longer ago */
	int left_out_max;       /* runs listed in "left_out": 0 RANK_LEFT_OUT_MAX, < 0 none (all are counted) */
	int estimates_max;      /* > 0: at most this many estimate rows, the best per dollar; the others counted in
				   "estimates_left_out" (the report: a page, not a 1.1 M-type catalog) */
};

/* At most this many left-out runs are listed (the first by run id): the list stays small in a fleet's store. */
#define RANK_LEFT_OUT_MAX 1000

/*
 * Computes the ranking as JSON: {"metric":..., "unit":..., "market":..., "per":...,
 * "rows":[{"rank":1,"provider":...,"instance_type":...,"region":...,"gpu_model":...,
 * "gpu_count":...,"price_per_hour":...,"currency":"USD","value":...,"value_per_dollar":...,
 * "runs":N,"flags":[...],"estimate":false}, ...]}.  Returns 0, or -1 with a one-line
 * message in err.
 */
int rank_compute(struct store *s, const struct rank_opts *o, json_t **out, char *err, size_t errlen);

/*
 * Several rankings of one store read it once: rank_gather_new reads the runs,
 * their flags and every metric the rankings o[0..n) ask for (they must agree
 * on region and include_flagged: a ranking that does not, or that prices
 * before it reads runs, reads its own); rank_compute_gathered is then
 * rank_compute for any of them, its prices read through s, and may run in
 * several threads at once over the same gather (it only reads it).
 */
struct rank_gather;
struct rank_gather *rank_gather_new(struct store *s, const struct rank_opts *o, size_t n, char *err, size_t errlen);
int rank_compute_gathered(struct store *s, const struct rank_gather *g, const struct rank_opts *o, json_t **out,
			  char *err, size_t errlen);
/*
 * The runs a row's median is of (its "runs" count): each run of the type and profile that has metric, as the
 * ranking over g counts them, in id order.  Their number and *ids (malloc'd, NULL for none), or -1 when g did
 * not gather metric.
 */
long rank_gather_runs_of(const struct rank_gather *g, const char *metric, const char *provider, const char *itype,
			 const char *profile, int64_t **ids);
void rank_gather_delete(struct rank_gather *g);

/* Where a spot price is taken, said once for rank, cost and the report. */
#define RANK_SPOT_NOTE "each region's lowest zone, interruptible"

#endif
