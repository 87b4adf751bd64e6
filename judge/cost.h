/*
 * cost.h - what a described job costs on each priced instance type (issue
 * 37): the instance types, their prices and their measured figures come
 * from the ranking (judge/rank.h, one rank_compute call per figure), the
 * arithmetic from judge/cost_model.h.  docs/cost.md documents every field.
 */
#ifndef GPUVET_COST_H
#define GPUVET_COST_H

#include "judge/cost_model.h"

#include <jansson.h>
#include <stdint.h>

struct fprun;
struct store;

struct cost_opts {
	struct cost_job job;
	const char *market;     /* as rank's: on_demand (default), spot, reserved */
	const char *region;     /* NULL: each type at its cheapest region */
	int include_estimates;  /* also types never measured, from the reference */
	int say_left_out;       /* what the table leaves out (the CLI, not the report): with include_estimates, the
				   types without a price in market in "unpriced"; without, "estimates_that_fit" */
	int include_flagged;
	int max_age_days;       /* > 0: leave out prices captured longer ago (as rank's) */
	int estimates_max;      /* > 0: the estimates of the rankings it reads bounded as rank's (the report's jobs:
				   the types with the most GEMM per dollar, a page's worth, not a 1.1 M-type catalog) */
	int left_out_max;       /* as rank's: 0 RANK_LEFT_OUT_MAX, < 0 none listed */
};

/*
 * {"job":{...}, "market":..., "region":..., "constants":[...], "rows":[...],
 * "unranked":[...], "unpriced":[...], "estimates_that_fit":N (say_left_out)}; 0, or -1 with a
 * one-line message.
 */
int cost_compute(struct store *s, const struct cost_opts *o, json_t **out, char *err, size_t errlen);

/*
 * The same in two steps, for several jobs priced on one read of the store
 * (the report's reference jobs): cost_basis_load reads the rankings for o's
 * options (market, region, estimates, ages, bounds, the job's precision) and,
 * from the gather they were counted on, the runs of each measured row;
 * cost_compute_on prices o's job on them.  Every o given to
 * cost_compute_on must have the options the basis was loaded with; a job of
 * another precision is refused.
 */
struct cost_basis;
struct rank_gather;
struct rank_opts;
/* The rankings a basis reads (COST_RANKINGS of them, the job's precision's first), for a caller's rank_gather. */
#define COST_RANKINGS 5
size_t cost_rank_opts(const struct cost_opts *o, struct rank_opts *ro);   /* ro: COST_RANKINGS of them */
/* g: a gather of the store that holds cost_rank_opts' rankings (rank_gather_new), or NULL to read its own. */
int cost_basis_load(struct store *s, const struct rank_gather *g, const struct cost_opts *o, struct cost_basis **out,
		    char *err, size_t errlen);
int cost_compute_on(struct store *s, const struct cost_basis *b, const struct cost_opts *o, json_t **out, char *err,
		    size_t errlen);
void cost_basis_free(struct cost_basis *b);

/*
 * The job on the machine of one run, a typed run derived (judge/derive.h:
 * derive_load_run for a stored one, derive_from_json for a document): its
 * own instance-level metric rows (GEMM of the job's dtype, D2D, all-reduce,
 * pinned H2D), the one GPU count and the model derive() resolved from the
 * devices (its efficiencies, and its reference for what the run did not
 * measure), the first device's memory.  The run's label (run.gpu_model,
 * run.gpu_count) is never read.  Returns cost_predict's fits; -1 with why
 * when the devices resolve to no model gpuvet knows (or none is listed),
 * or the run measured no GEMM rate of the dtype.
 */
int cost_of_run(struct fprun *r, const struct cost_job *j, struct cost_hw *h, struct cost_pred *p, char *why,
		size_t whylen);

/* `cost --run ID --json`: {"job", "run", "rows":[one row: cost_of_run's prediction, unpriced]}. */
json_t *cost_run_json(struct fprun *r, int64_t run_id, const struct cost_opts *o);

#endif
