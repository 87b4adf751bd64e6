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

struct store;

struct cost_opts {
	struct cost_job job;
	const char *market;     /* as rank's: on_demand (default), spot, reserved */
	const char *region;     /* NULL: each type at its cheapest region */
	int include_estimates;  /* also types never measured, from the reference */
	int include_flagged;
};

/*
 * {"job":{...}, "market":..., "region":..., "constants":[...], "rows":[...],
 * "unranked":[...], "unpriced":[...]}; 0, or -1 with a one-line message.
 */
int cost_compute(struct store *s, const struct cost_opts *o, json_t **out, char *err, size_t errlen);

#endif
