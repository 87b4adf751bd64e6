/*
 * flags.h - the named findings of a run, computed from its fingerprint
 * (inventory, metrics, soak samples): throttling, decay, contention,
 * virtualization, degraded hardware, below-reference performance.
 *
 * Each flag is {"code","severity","message","evidence":{...}}; evidence
 * always carries "gpu" (-1 for the instance) and the thresholds it was
 * judged against, so a reader can check the decision.  The thresholds are
 * the named constants below (docs/flags.md documents why each value).
 */
#ifndef GPUVET_FLAGS_H
#define GPUVET_FLAGS_H

#include "common/severity.h"

#include <jansson.h>
#include <stddef.h>
#include <stdio.h>

/* ---- throttling (soak.clock_events.mask, one sample per second) ---- */
#define FLAG_HW_MIN_S              1.0   /* any second of HW slowdown / power brake / HW thermal */
#define FLAG_THERMAL_MIN_S         3.0   /* SW thermal slowdown: tolerate a 1-2 s transient */
#define FLAG_THERMAL_SW_CRIT_FRAC  0.10  /* SW thermal for >= 10% of the soak: critical */
#define FLAG_POWER_MIN_S           5.0   /* SW power cap seconds before THROTTLE_POWER is raised */
#define FLAG_POWER_LIMIT_MIN_FRAC  0.90  /* enforced limit < 90% of the model's TDP: capped by the host */
#define FLAG_POWER_UNDER_CAP_FRAC  0.80  /* capped while the board draws < 80% of the limit: not the cap at work */
/* ---- decay: last window against first window of the soak ---- */
#define FLAG_DECAY_WINDOW_S        60.0  /* "first minute" / "last minute" */
#define FLAG_DECAY_MIN_SOAK_S      15.0  /* shorter soaks: windows are thirds; below this, no judgement */
#define FLAG_CLOCK_DECAY_PCT       10.0  /* SM clock median drop: warning */
#define FLAG_PERF_DECAY_PCT        10.0  /* soak TFLOP/s median drop: warning */
#define FLAG_DECAY_CRIT_PCT        25.0  /* either drop: critical */
/* ---- contention (two independent signals, see flags.c) ---- */
#define FLAG_CONTENTION_SPREAD     0.10  /* gemm repetition spread (max-min)/median, burst-timed runs */
/*
 * Steady-timed gemm: (p95 - p5) / median of the window's batches.  A clean H100
 * at its power cap oscillates: 0.115-0.125 at 8 ms batches, an H200 0.05-0.07
 * (tests/fixtures/gpu/{h100,h200}-2026-11-22/settle-from-idle.json, 2-6 s); twice the
 * clean maximum.
 */
#define FLAG_CONTENTION_BATCH_SPREAD 0.25
#define FLAG_DIP_FRAC              0.15  /* a soak second below (1-0.15) x median TFLOP/s is a dip */
#define FLAG_DIP_MIN_EPISODES      3     /* recurring: at least 3 separate dips ... */
#define FLAG_DIP_MAX_THROTTLED     0.5   /* ... not explained by throttling (<= half the dip seconds throttled) */
#define FLAG_CONTENTION_STEAL_PCT  2.0   /* hypervisor steal over the run */
#define FLAG_CONTENTION_LOW_FRAC   0.35  /* soak TFLOP/s < 35% of peak at unthrottled clocks (models without an achievable reference) */
#define FLAG_CONTENTION_EFF_FRAC   0.92  /* soak TFLOP/s per watt AND per SM MHz both < 92% of the model's clean reference
					    (clean H100/H200 captures: >= 0.99; beside a 25%-duty tenant: <= 0.875) */
#define FLAG_JITTER_FRAC           0.015 /* 75th percentile of |change from one soak second to the next| > 1.5% of the
					    median TFLOP/s (clean captures <= 0.73%, light tenants >= 2.56%) */
#define FLAG_JITTER_MIN_SAMPLES    10    /* soak seconds needed to judge dips or jitter */
/* ---- host ---- */
#define FLAG_STEAL_WARN_PCT        5.0
#define FLAG_STEAL_CRIT_PCT        20.0
/*
 * HOST_STARVED (judge/flags_host.c): images/s one GPU trains ResNet-50 v1.5 at with AMP, per
 * A100 80GB (NVIDIA DeepLearningExamples PyTorch/Classification/ConvNets/README.md: 15977 img/s on
 * a DGX A100, 8 GPUs), scaled to other models; and the host memory traffic of one image in a
 * CPU loader (torchvision ImageNet pipeline, docs/flags.md itemises it).
 */
#define FLAG_HOST_RN50_A100_IPS    1997.0
#define FLAG_HOST_BYTES_PER_IMAGE  7.1e6
/* ---- hardware health ---- */
#define FLAG_ECC_CORRECTED_WARN    100.0 /* volatile corrected ECC errors since boot */
#define FLAG_XID_RECENT_S          86400.0 /* a hardware XID logged since boot less than a day ago: critical */
/* ---- reference (common/gpus.h) ---- */
#define FLAG_REF_LINK_MIN_PCT      60.0  /* memcpy H2D/D2H pinned vs the model's PCIe link */
#define FLAG_REF_ACHIEVABLE_FRAC   0.80  /* per-GPU gemm / pinned copy < 80% of the model's one reference
					    (gpu_reference_metric; clean captures >= 0.858) */
/* ---- floors (judge/flags_links.c; the values are common/gpus.c gpu_reference_floor's) ---- */
#define FLAG_FLOOR_NODE_GPUS       8     /* the all-reduce floors are for one node of 8 GPUs */
#define FLAG_FLOOR_MIN_BYTES       4294967296.0  /* judged from a 4 GiB sweep (standard, full profiles) */
#define FLAG_FLOOR_CRIT_FRAC       0.5   /* busbw under half the floor: critical (PCIe or host-memory speed) */
/* ---- node: a GPU that trails the best GPU of its instance ---- */
#define FLAG_NODE_OUTLIER_FRAC     0.10  /* per-GPU gemm.<dtype>.tflops more than 10% below the instance's best */
#define FLAG_NODE_OUTLIER_CRIT_FRAC 0.25 /* 25% or more below: critical */
/* ---- silent data corruption (soak.sdc.mismatches) ---- */
#define FLAG_SDC_MIN_MISMATCHES    1     /* any soak result differing from the first one: critical */

/* ---- evidence: what a check needs before it may pass (judge/flags_evidence.c) ---- */
#define FLAG_EVIDENCE_MIN_SHARE    0.90  /* finite soak readings per GPU, share of the soak's seconds: a clean
					    capture has all of them (tests/fixtures/gpu: 30 of 30, 60 of 60, 300 of 300) */
#define FLAG_EVIDENCE_MIN_READINGS 10    /* and at least 10 s of them: the quick profile soaks 30 s; a soak that
					    declares 2 s proves nothing about throttling under sustained load */
/*
 * The soak's set-up before its first reading (CUDA context, cuBLASLt, NVML), which the harness's
 * measured duration of the bench includes: 0.43-0.66 s on the one-GPU captures (tests/fixtures/gpu:
 * the bench's duration_s less its declared duration); 2 s and 1 s per GPU leave room for a
 * machine of 8 that opens its GPUs one after the other.
 */
#define FLAG_SOAK_SETUP_S          2.0
#define FLAG_SOAK_SETUP_PER_GPU_S  1.0
/*
 * The soak's length in seconds from its evidence (judge/flags_evidence.c): the longest of its
 * declared duration, its series' timestamps and its measured duration less its set-up; 0 without a soak.
 */
struct fprun;
double flags_soak_seconds(const struct fprun *r);
/*
 * Whether every GPU of the run has finite readings of a soak series for at
 * least FLAG_EVIDENCE_MIN_SHARE of the soak's seconds.
 */
int flags_series_covered(const struct fprun *r, const char *series);

/*
 * Computes the flags of a run, read as fields of the typed run (results/fprun.h)
 * that derive() has derived (judge/derive.h: its model and GPU count); a new
 * JSON array (never NULL).
 */
json_t *flags_compute_run(struct fprun *r);
/* The same of a fingerprint document (flags_json.c): decoded and derived once, then flags_compute_run. */
json_t *flags_compute(const json_t *fingerprint);

/*
 * Whether the run holds the evidence that code needs (the soak's samples for
 * THROTTLE_*, the inventory's GPUs for ECC_ERRORS, ...): 1 yes, 0 no with the
 * reason in *why (static text), -1 unknown code.  flags_measurable() is the
 * same of a fingerprint document (flags_json.c).
 */
int flags_measurable_run(struct fprun *r, const char *code, const char **why);
int flags_measurable(const json_t *fingerprint, const char *code, const char **why);

struct gpu_ref;
/* Images/s a GPU of this model consumes training ResNet-50 (flags_host.c); -1 when unknown. */
double flags_host_need_ips(const struct gpu_ref *ref);
/* Whether the run can be judged for BELOW_FLOOR (as flags_measurable_run). */
int flags_floor_measurable(struct fprun *r, const char **why);
/*
 * The one-line remediation of a flag (code, severity, evidence.gpu), e.g.
 * "drain the node and ask the provider to replace gpu 3"; never NULL.
 * flags_compute() sets it as flags[].remediation.
 */
const char *flags_remediation(const char *code, const char *severity, int gpu, char *buf, size_t len);

/* The severities a flag may be raised at: bit 1 << gv_severity_rank() (common/severity.h). */
#define FLAG_SEV_INFO     0x1u
#define FLAG_SEV_WARNING  0x2u
#define FLAG_SEV_CRITICAL 0x4u

/*
 * One row per flag code (judge/flags_table.c), every field required: the
 * only list of codes (the policy, `gpuvet help flags` and docs/flags.md, the
 * tests and the fixtures read it).
 */
struct flag_def {
	const char *code;            /* "THROTTLE_THERMAL" */
	unsigned severities;         /* FLAG_SEV_* it may be raised at */
	/* whether the fingerprint holds the evidence its check needs: 1, or 0 with *why (static text) */
	int (*measured)(struct fprun *r, const char **why);
	const char *warning, *critical;   /* what to do, one line each; "%s" names the gpu */
};
/* The rows, ended by { NULL }. */
extern const struct flag_def flag_rows[];
/* The row of code; NULL when unknown. */
const struct flag_def *flags_def_find(const char *code);
/* NULL when the row is whole, else what it lacks (no measured function, no line of what to do, ...). */
const char *flags_def_check(const struct flag_def *d);
int flags_code_known(const char *code);
/* docs/flags.md's table of codes, severities and what to do (`gpuvet help flags`, `make docs`). */
void flags_table_markdown(FILE *f);

/*
 * What one NVML clock-event mask says, for the report's charts (the same
 * bits the flags judge): FLAG_REASON_* bits.
 */
#define FLAG_REASON_THERMAL 0x1u   /* SW or HW thermal slowdown */
#define FLAG_REASON_HW      0x2u   /* HW slowdown or HW power brake */
#define FLAG_REASON_POWER   0x4u   /* SW power cap */
unsigned flags_reason_kinds(unsigned long long mask);
/*
 * Whether a stored metric row measures anything: an all-reduce of one rank
 * (params.ranks 1, as gpuvet before 2026-11-25 stored for one GPU: busbw 0)
 * measures no link, so its figures are shown and ranked as absent.
 */
int flags_metric_is_measurement(const char *name, const json_t *params);
/* The same from a row's typed params: ranks_given when its params give "ranks" as an integer. */
int flags_metric_is_measurement_ranks(const char *name, int ranks_given, long long ranks);
/*
 * The same rule where only the run's GPU count is known (instance headlines
 * read without params): NULL when metric measures something on gpus GPUs,
 * else why not, in words ("fewer than 2 GPUs: an all-reduce measures no link").
 */
const char *flags_metric_not_applicable(const char *name, int gpus);
/*
 * A second at the power cap: 1 when it is power throttling (the enforced
 * limit under FLAG_POWER_LIMIT_MIN_FRAC x the model's TDP, or the board
 * drawing under FLAG_POWER_UNDER_CAP_FRAC x the limit), 0 when it is the
 * normal cap of a GPU at full load.  Unknown values (<= 0, NaN) count as normal.
 */
int flags_cap_is_throttling(double limit_w, double power_w, double tdp_w);

#endif
