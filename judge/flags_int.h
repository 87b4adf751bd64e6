/*
 * flags_int.h - private to judge/flags*.c: what the flag files share (the
 * clock-event reasons, one GPU's soak samples, the flag builder: flags_util.c
 * and flags_evidence.c, below every other flag file).
 */
#ifndef GPUVET_FLAGS_INT_H
#define GPUVET_FLAGS_INT_H

#include "results/fprun.h"

#include <jansson.h>
#include <nvml.h>

enum reason {
	R_GPU_IDLE, R_APP_CLOCKS, R_SW_POWER_CAP, R_HW_SLOWDOWN, R_SYNC_BOOST, R_SW_THERMAL,
	R_HW_THERMAL, R_HW_POWER_BRAKE, R_DISPLAY_CLOCK, R_BOARD_LIMIT, R_RELIABILITY, R_COUNT
};

/* Reasons that slow a GPU for a cause other than the load itself. */
#define SLOWDOWN_BITS (nvmlClocksEventReasonSwThermalSlowdown | nvmlClocksThrottleReasonHwThermalSlowdown | \
		       nvmlClocksThrottleReasonHwSlowdown | nvmlClocksThrottleReasonHwPowerBrakeSlowdown)

/* What the soak samples of one GPU say. */
struct soak_gpu {
	int gpu;
	int n;                   /* mask samples */
	double period, soak_s;   /* seconds per sample, soak length */
	double bit_s[R_COUNT];   /* seconds each reason was active */
	double thermal_viol_s, power_viol_s;  /* NVML counters, -1 when absent */
};

/* Appends {"code","severity","message","evidence"} to out; "gpu -1: " in the message becomes "all gpus: ". */
void flags_add(json_t *out, const char *code, const char *severity, json_t *evidence, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
/*
 * Whether y is a reading series can hold (flags_evidence.c: a mask of NVML's
 * defined bits, a PCIe generation 1-7, a positive rate under its bound...);
 * a series without a row takes any finite value.
 */
int flags_reading_valid(const char *series, double y);

/* Points of a series: x0, y0, x1, y1 ... (NaN a null); own: malloc'd here (flags_pts_free). */
struct fpts {
	double *xy;
	size_t n;
	int own;
};
void flags_pts_free(struct fpts *p);
/*
 * The points of a series of gpu as stored under the bench that declares it
 * (benches/bench.h series_owner), never a copy under another bench; empty
 * when none (flags_evidence.c).  Borrowed from the run.
 */
struct fpts flags_raw_series(const struct fprun *r, const char *series, int gpu);
/*
 * The readings of a soak series of gpu that every check and the coverage rule
 * judge: valid points (flags_reading_valid) sorted by x, one per distinct
 * second.  A new array (flags_pts_free it).
 */
struct fpts flags_series(const struct fprun *r, const char *series, int gpu);
/* First and last x of the points whose x and y are numbers; -1 when none. */
int flags_pts_span(const struct fpts *p, double *x0, double *x1);
/* Median of the y of points with x in [x0, x1]; -1 when none (count in *n). */
int flags_pts_median(const struct fpts *p, double x0, double x1, double *median, int *n);
/* The largest y of the points, -1 when none. */
double flags_pts_max(const struct fpts *p);
/* Point i's x and clock-event mask; -1 when it is not a valid mask reading. */
int flags_mask_of(const struct fpts *p, size_t i, double *x, unsigned long long *mask);
/* What the soak samples of gpu say; -1 when it has none. */
int flags_soak_gpu_read(const struct fprun *r, int gpu, struct soak_gpu *sg);
/* The name of clock-event reason r ("sw_thermal_slowdown"), flags_util.c. */
const char *flags_reason_name(int r);
/* Whether any GPU (or the instance) has points of series. */
int flags_any_series(const struct fprun *r, const char *series);
/* Whether a metric named prefix...suffix is stored. */
int flags_any_metric(const struct fprun *r, const char *prefix, const char *suffix);
/* Whether the run's soak bench ran ok. */
int flags_soak_ok(const struct fprun *r);
/*
 * Checks every flag raised against its row of the table (its code, a severity
 * the row declares) and sets its remediation (flags_table.c); how many were
 * raised outside their row (each said on stderr, and kept: fail closed).
 */
int flags_finish(json_t *flags);
/* The hardware and host health flags, in their order (flags_health.c). */
void flags_health(struct fprun *r, int ngpu, json_t *out);
/* CONTENTION (flags_contention.c). */
void flags_contention(struct fprun *r, int ngpu, json_t *out);
/* HOST_STARVED and BELOW_FLOOR (flags_host.c, flags_links.c). */
void flags_host_starved(struct fprun *r, json_t *out);
void flags_below_floor(struct fprun *r, json_t *out);

#endif
