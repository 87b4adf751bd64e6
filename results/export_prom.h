/*
 * export_prom.h - Prometheus node-exporter textfile metrics of the store:
 * for each host, its latest run (so one node's store gives that node's
 * state, and a merged fleet store gives every node's).  Names and labels:
 * docs/fleets.md "Prometheus export".  Output passes `promtool check metrics`.
 */
#ifndef GPUVET_EXPORT_PROM_H
#define GPUVET_EXPORT_PROM_H

#include <stdint.h>
#include <stdio.h>

struct store;

/* Every run of the store considered; -1 with a message in err. */
int export_prometheus(struct store *s, FILE *out, char *err, size_t errlen);
/* Only the runs ids[0..n) considered (results/export.h); the latest per host is written. */
int export_prometheus_runs(struct store *s, const int64_t *ids, size_t n, FILE *out, char *err, size_t errlen);

/*
 * The metric family name for a gpuvet metric name and the factor its value
 * is multiplied by (units spelled as Prometheus base units: "_ms" ->
 * "_seconds" x 0.001; a trailing ".count" dropped): "gpuvet_<name>".
 */
void export_prom_name(const char *metric, char *out, size_t outlen, double *factor);

#endif
