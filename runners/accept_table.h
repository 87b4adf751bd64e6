/*
 * accept_table.h - every check of a verdict as one table, as dcgmi diag
 * prints its plugins: result, check, GPU, measured, needed, where the
 * threshold comes from.  Reads the verdict's detail as judge/accept.c
 * records it (the same object `accept --json` prints); decides nothing.
 */
#ifndef GPUVET_ACCEPT_TABLE_H
#define GPUVET_ACCEPT_TABLE_H

#include <jansson.h>
#include <stdio.h>

/* The table of detail's checks (failed, not measured, tolerated, passed), at most 160 columns wide. */
void accept_table_print(const json_t *detail, FILE *out);
/* The detail of fp's newest verdict by the policy of this digest (the one just recorded), or NULL. */
const json_t *accept_table_newest(const json_t *fp, const char *digest);

#endif
