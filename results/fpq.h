/*
 * fpq.h - read-only queries on a fingerprint (README.md "Fingerprint"):
 * one metric, one series, a bench's status, the run's reference GPU, and
 * tolerant field readers for the inventory.  Shared by flags, policy and
 * the Prometheus export; every function takes a borrowed json_t and
 * returns borrowed references (or copies into out parameters).
 */
#ifndef GPUVET_FPQ_H
#define GPUVET_FPQ_H

#include <jansson.h>
#include <stddef.h>

struct gpu_ref;

/* The metric object {"bench","name","gpu","value",...} or NULL. */
const json_t *fpq_metric(const json_t *fp, const char *name, int gpu);
/* 0 and *v when the metric exists with a numeric value, else -1. */
int fpq_metric_value(const json_t *fp, const char *name, int gpu, double *v);
/*
 * The points array [[x,y],...] of one series of one GPU under bench (the one
 * that declares it: benches/bench.h series_owner; NULL: under any), or NULL.
 * A copy of a series under another bench is never read for it.
 */
const json_t *fpq_series(const json_t *fp, const char *bench, const char *series, int gpu);
/* A bench's status ("ok", "skipped", ...) or NULL when it did not run; reason in *reason. */
const char *fpq_bench_status(const json_t *fp, const char *bench, const char **reason);

/* inventory.gpus (array; an empty array when absent, never NULL). */
const json_t *fpq_gpus(const json_t *fp);
/* Number of GPUs: inventory, else run.gpu_count, else highest GPU index in metrics/samples + 1. */
int fpq_gpu_count(const json_t *fp);
/*
 * The run's GPU model from the evidence (common/gpu_evidence.h): GPU 0's NVML
 * name held to its memory and pci device id; never run.gpu_model or a GPU's
 * reference_model, labels.  NONE: the inventory lists no GPU; UNKNOWN: a
 * device gpuvet cannot resolve (no name, a name of no model, or one its memory
 * or device id contradicts), why in words; RESOLVED with *ref.
 */
enum { FPQ_MODEL_NONE = 0, FPQ_MODEL_RESOLVED, FPQ_MODEL_UNKNOWN };
int fpq_gpu_model(const json_t *fp, const struct gpu_ref **ref, char *why, size_t whylen);
/* The model when RESOLVED, else NULL. */
const struct gpu_ref *fpq_gpu_ref(const json_t *fp);
/* run.<key> as a string, or NULL. */
const char *fpq_run_str(const json_t *fp, const char *key);

/*
 * Reads a number from obj at the first of the dotted paths that exists
 * ("pcie.max_gen", "pcie_max_gen", NULL).  Booleans read as 0/1 and the
 * strings "enabled"/"disabled", "yes"/"no", "true"/"false", "on"/"off"
 * as 1/0; numeric strings are parsed.  0 on success, -1 when none exists.
 */
int fpq_num(const json_t *obj, double *v, ...);
/* Same for a string value: the first path that holds a string, or NULL. */
const char *fpq_str(const json_t *obj, ...);

/* Median of the y values of points with x in [x0, x1]; -1 when none (count in *n). */
int fpq_series_median(const json_t *points, double x0, double x1, double *median, int *n);
/* First and last x of a series; -1 when empty. */
int fpq_series_span(const json_t *points, double *x0, double *x1);

#endif
