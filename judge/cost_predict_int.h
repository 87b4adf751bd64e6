/*
 * cost_predict_int.h - what the training prediction (cost_predict.c) and the
 * serving one (cost_serve.c) share: the band's ends, the memory fit, the
 * instances a number of GPUs takes (cost_predict_util.c, below both).
 * Internal to judge/cost_*.c.
 */
#ifndef GPUVET_COST_PREDICT_INT_H
#define GPUVET_COST_PREDICT_INT_H

#include "judge/cost_model.h"
#include "judge/cost_stack.h"

#define COST_GIB 1073741824.0
#define COST_MAX_GPUS 100000

/* The band's end a prediction is made at: the central value, or the low or high end of every factor. */
enum cost_end { END_MID, END_LO, END_HI };

/* ---- cost_predict_util.c ---- */
/* A constant at one end of its stated range. */
double cost_k_at(enum cost_k k, enum cost_end e);
/* A measured figure at one end of its spread (the centre where an end is missing). */
double cost_pick(double mid, double lo, double hi, enum cost_end e);
/* GPUs whose usable memory holds `sharded` bytes spread over them plus `fixed` bytes each; 0 when none can. */
int cost_gpus_for(double usable, double fixed, double sharded);
/* Instances of h for g GPUs within --gpus; 0 with p->why when they exceed it (how: the layout in words, or NULL). */
int cost_instances_for(const struct cost_job *j, const struct cost_hw *h, int g, const char *how, struct cost_pred *p);
/* The band's multipliers: the efficiency row's own spread (wider, with p->band_note, outside the record). */
void cost_band_of(const struct cost_eff *e, int covered, struct cost_pred *p, double *lo, double *hi);
/* The layout p holds, in words, into p->layout. */
void cost_layout_text(const struct cost_job *j, struct cost_pred *p);

/* Serving as it runs (cost_serve.c): fits and rates p; 0 with p->why when it does not fit. */
int cost_serve(const struct cost_job *j, const struct cost_hw *h, struct cost_pred *p);

#endif
