/*
 * cost_line.h - `run --job`: one line, what the job costs on the machine of
 * the run just stored (runners/cmd_cost.c; docs/cost.md).
 */
#ifndef GPUVET_COST_LINE_H
#define GPUVET_COST_LINE_H

#include "judge/cost_model.h"

#include <jansson.h>
#include <stdint.h>
#include <stdio.h>

struct fprun;
struct store;

/* r: the run typed and derived (judge/derive.h), as cost_of_run reads it. */
void cost_print_run_line(struct store *s, int64_t run_id, struct fprun *r, const struct cost_job *j, FILE *out);

/* `cost --published`: the table, --json or --markdown (docs/cost.md's), on stdout; the exit code. */
int cost_published_print(int json, int markdown);

#endif
