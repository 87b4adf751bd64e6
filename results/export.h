/*
 * export.h - the store's runs as JSON (an array of fingerprints), CSV (one
 * row per metric) and Prometheus node-exporter textfile metrics.
 */
#ifndef GPUVET_EXPORT_H
#define GPUVET_EXPORT_H

#include <stdint.h>
#include <stdio.h>

struct store;

int export_json(struct store *s, const int64_t *ids, size_t n, FILE *out);
/* One row per metric of run_id (0: every run, in started order), streamed from one statement. */
int export_csv(struct store *s, int64_t run_id, FILE *out);
/* Prometheus text format (results/export_prom.c); -1 with a message in err. */
int export_prometheus_runs(struct store *s, const int64_t *ids, size_t n, FILE *out, char *err, size_t errlen);

#endif
