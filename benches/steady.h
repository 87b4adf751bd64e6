/*
 * steady.h - steady-state measurement for the GPU throughput benches.
 *
 * A GPU under a heavy load starts at its boost clock and settles at its
 * power cap about a second later (tests/fixtures/gpu/h100-2026-11-22/
 * settle-from-idle.json: bf16 740 TFLOP/s in the first 0.1 s, 684 from 1 s
 * on; the power-cap loop then oscillates with a period of about 1 s).  A
 * figure taken from a few products after a few warm-ups is the burst, and
 * it varies 5 % from run to run.  So every headline GPU throughput is taken
 * in two phases, the same in every profile:
 *
 *  1. warm-up: timed batches run back to back while NVML is read every
 *     STEADY_NV_PERIOD_S; it ends when steady_settled() says so (below) or
 *     after max_warm_s;
 *  2. window: batches keep running for window_s (a whole number of power-cap
 *     periods: 1 s quick, 2 s standard, 4 s full), and the figure is the
 *     work done in it over its time (the harmonic mean of the batches'
 *     throughputs, as every batch does the same work): what a job running
 *     there gets.  Not the median of the batches: under the power-cap
 *     oscillation the batches' distribution is skewed and its median sits
 *     up to 3 % above the sustained rate (H100 tf32 in the capture above);
 *     the median is kept in the params.  The mean SM clock, power, cap,
 *     temperature and the clock-event reasons seen in the window go with it.
 *
 * The settling rule (steady_settled) after at least min_warm_s:
 *  - power-capped: every NVML reading of the last hold_s has power >=
 *    cap_frac x the enforced cap;
 *  - not capped (no power-cap reason in the last two stable_win_s windows):
 *    the mean SM clock and the mean batch throughput of the last two
 *    stable_win_s windows agree within stable_tol;
 *  - without NVML: the mean throughput of the last two 1 s windows agree
 *    within stable_tol;
 *  - at max_warm_s it stops anyway and says it was not settled.
 *
 * This file is plain C (no CUDA): the GPU loops feed it, the unit tests
 * replay real captures through it.
 */
#ifndef GPUVET_STEADY_H
#define GPUVET_STEADY_H

#include <stddef.h>

#include "benches/bench.h"
#include "platform/gpu_reading.h"

#ifdef __cplusplus
extern "C" {
#endif

#define STEADY_NV_PERIOD_S 0.05   /* NVML read every 50 ms during warm-up and window */
#define STEADY_BURST_S 0.1        /* the burst: the best batch of the first 0.1 s */
/* NVML clock-event reason: software power cap (nvml.h nvmlClocksEventReasonSwPowerCap) */
#define STEADY_REASON_POWER_CAP 0x4ull

struct steady_cfg {
	double min_warm_s;    /* never settled before */
	double max_warm_s;    /* warm-up bound */
	double window_s;      /* measuring window */
	double batch_s;       /* target duration of one timed batch */
	double cap_frac;      /* power at the cap: >= cap_frac x cap */
	double hold_s;        /* at the cap for this long */
	double stable_tol;    /* two windows agree within this fraction */
	double stable_win_s;  /* the windows compared when not capped */
};

/* The profile's configuration: the same rule everywhere, a longer window in standard and full. */
struct steady_cfg steady_cfg_for(enum bench_profile p);


/* One timed batch: t its end (seconds since the warm-up began), value its throughput. */
struct steady_batch {
	double t, value;
};

struct steady_trace {
	struct steady_batch *b;
	int nb, cap_b;
	struct gpu_reading *nv;
	int nnv, cap_nv;
};

void steady_trace_add_batch(struct steady_trace *tr, double t, double value);
void steady_trace_add_nv(struct steady_trace *tr, const struct gpu_reading *s);
void steady_trace_free(struct steady_trace *tr);

enum steady_verdict { STEADY_WARMING = 0, STEADY_CAPPED, STEADY_STABLE, STEADY_STABLE_NO_NVML, STEADY_TIMEOUT };
const char *steady_verdict_name(enum steady_verdict v);

/* Whether the warm-up is over at time now (STEADY_WARMING while not). */
enum steady_verdict steady_settled(const struct steady_trace *tr, const struct steady_cfg *c, double now);

/* What the window [t0, t1] holds. */
struct steady_summary {
	int batches;
	double rate;              /* the figure: work done in the window / its time (batches of equal work) */
	double median, mean, min, max;
	double p05, p95;
	double batch_spread;      /* (p95 - p5) / median over the batches */
	double t0, t1;
	int nv_samples;
	double sm_mhz, power_w, cap_w, temp_c, temp_max_c;   /* means (temp_max: max); NAN when unknown */
	unsigned long long reasons;                          /* OR over the window's readings */
	double burst;             /* best batch of the first STEADY_BURST_S of the warm-up */
	double settle_s;          /* where the window began */
	enum steady_verdict how;  /* why the warm-up ended */
};

void steady_summarize(const struct steady_trace *tr, double t0, double t1, struct steady_summary *out);

/*
 * Writes the summary as JSON members without braces ("window_s":1,...,"clock_event_reasons":[...]),
 * for a metric's params.  Returns the length, or -1 when it does not fit.
 */
int steady_params(char *buf, size_t len, const struct steady_summary *s);

/* Names of the reasons set in an NVML clock-event mask, comma separated into buf. */
void steady_reason_names(unsigned long long mask, char *buf, size_t len);

#ifdef __cplusplus
}
#endif
#endif
