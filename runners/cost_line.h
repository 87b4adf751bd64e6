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

struct store;

void cost_print_run_line(struct store *s, int64_t run_id, const json_t *fp, const struct cost_job *j, FILE *out);

/* `cost --published`: the table, --json or --markdown (docs/cost.md's), on stdout; the exit code. */
int cost_published_print(int json, int markdown);

#endif
