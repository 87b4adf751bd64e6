/*
 * cost_int.h - judge/cost.c's helpers in judge/cost_more.c: what a cost
 * table leaves out, said instead of dropped (issue 48 item 8).  cost.c
 * makes the tables and calls these; they never call back into cost.c.
 */
#ifndef GPUVET_COST_INT_H
#define GPUVET_COST_INT_H

#include "judge/cost.h"

/*
 * The unmeasured types whose estimate fits the job: what --estimates would
 * add, counted in with, the table cost_compute made with include_estimates
 * (NULL: 0).
 */
long cost_estimates_that_fit(const json_t *with);
/*
 * Appends to res's "unpriced" the catalog's types whose GPU has a reference
 * but that have no price in the asked market (in --region, when given),
 * each with why; 0, or -1 with err set.
 */
int cost_list_unpriced(struct store *s, const struct cost_opts *o, json_t *res, char *err, size_t errlen);

#endif
