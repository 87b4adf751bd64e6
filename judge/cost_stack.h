/*
 * cost_stack.h - the software stacks' efficiency figures and the calibrated
 * bands (judge/cost_stack.c), read by the prediction (cost_predict.c) and
 * shown by `gpuvet cost --published` (cost_published.c).
 */
#ifndef GPUVET_COST_STACK_H
#define GPUVET_COST_STACK_H

#include "judge/cost_model.h"

struct cost_eff {
	enum cost_stack stack;
	enum cost_task task;
	enum cost_arch arch;
	int fp8;
	double value;           /* of the sustained GEMM rate of the job's dtype */
	double lo, hi;          /* its own spread: published / predicted over the stack's cases of the task (the band) */
	const char *fitted_on;  /* the published cases it is fitted on (judge/cost_published.csv ids) */
	const char *source;
};

extern const struct cost_eff cost_effs[];
extern const size_t cost_effs_count;
/* The row a job uses; *covered 0 when it is another stack's, generation's or precision's (the band widens). */
const struct cost_eff *cost_eff_find(enum cost_stack s, enum cost_task t, enum cost_arch a, int fp8, int *covered);

/* Outside what the record covers (the row is another stack's, generation's or precision's): the band's ends x these. */
extern const double cost_uncovered_lo, cost_uncovered_hi;

#endif
