/*
 * fpq.h - what the readers that still hold a fingerprint document (the
 * report, the Prometheus export, `run`'s summary) ask of it: one metric, its
 * GPUs and their count, the run's model from the evidence, a run field.  The
 * judge reads the typed run instead (results/fprun.h), derived once
 * (judge/derive.h).  Every function takes a borrowed json_t and returns
 * borrowed references (or copies into out parameters).
 */
#ifndef GPUVET_FPQ_H
#define GPUVET_FPQ_H

#include <jansson.h>
#include <stddef.h>

struct gpu_ref;

/* The metric object {"bench","name","gpu","value",...} or NULL. */
const json_t *fpq_metric(const json_t *fp, const char *name, int gpu);

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

#endif
