/* summary.h - the human summary of a run printed by `gpuvet run` and `gpuvet results show --text`. */
#ifndef GPUVET_SUMMARY_H
#define GPUVET_SUMMARY_H

#include <jansson.h>
#include <stdio.h>

void summary_print(const json_t *fingerprint, FILE *f);
/*
 * The run's standing in one line, for a run not judged here (judge/standing.h): "No GPU measured on
 * this machine: WHY", or the built-in policy's verdict as a preview, said not to be recorded; never
 * a verdict word the run did not earn.
 */
void summary_standing(const json_t *fingerprint, FILE *f);
/* A value with its unit, human scaled: "5120 TFLOP/s", "12.4 GB/s". */
void summary_format_value(double v, const char *unit, char *buf, size_t size);

#endif
