/*
 * soak.cu - sustained tensor-core load with NVML sampled once a second.
 *
 * Every GPU runs back-to-back cuBLASLt GEMMs (BF16, or FP16 before
 * Ampere; 8192^3, or smaller when memory is short) from its own host
 * thread, keeping four in flight; a GEMM counts as done when its event
 * completes.  The main thread wakes on a fixed one-second schedule and,
 * per GPU, records (x = seconds since the soak started):
 *
 *   soak.tflops            GEMMs completed in that second * 2 m n k / dt / 1e12
 *   soak.sm_clock.mhz, soak.mem_clock.mhz, soak.temp.c, soak.power.w,
 *   soak.power_limit.w     NVML instantaneous readings
 *   soak.clock_events.mask NVML clock-event-reason bitmask (as a number)
 *   soak.throttle.power_s, soak.throttle.thermal_s
 *                          NVML violation counters (power, thermal), seconds
 *                          accumulated since the soak started
 *   soak.pcie.gen, soak.pcie.width   the link under load
 *   soak.xid               one point per XID event (y = XID code), from an
 *                          NVML event set
 *
 * Metrics per GPU and for the instance (-1), with w = soak_window_s(T)
 * (60 s, or a third of a soak shorter than 3 minutes):
 *   soak.tflops.first_min / last_min   mean TFLOP/s over the first w seconds
 *                                      after SOAK_SETTLE_S (the power-cap
 *                                      settling, benches/steady.h) / the
 *                                      last w seconds (instance: sum over
 *                                      GPUs); each with the window's mean SM
 *                                      clock, power, cap and temperature
 *   soak.sm_clock.drop_pct             (first-w mean SM clock - last-w mean)
 *                                      / first * 100; negative if it rose
 *                                      (instance: the worst GPU)
 *   soak.throttle_s                    power + thermal violation seconds over
 *                                      the soak, capped at T (instance: worst)
 *   soak.xid.count                     XID events (instance: sum)
 *   soak.foreign_procs.count           most compute processes other than ours
 *                                      seen at once (instance: max)
 *   soak.sdc.mismatches                GEMM results (every SDC_EVERY-th, checksummed
 *                                      on the device) that differ from the first
 *                                      one; soak.sdc.mismatch: one point per
 *                                      mismatch (x = s, y = iteration); benches/sdc.h
 * After the soak each GPU's last result is checked against the FP64
 * reference on sampled elements (a GPU that computes wrong when hot fails).
 */
#include "benches/gpu_common.cuh"
#include "benches/sdc_gpu.cuh"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>


#define SOAK_MAX_GPUS 64
#define SOAK_DEPTH 4
/*
 * The first window starts this many seconds in: a GPU takes about a second
 * to settle at its power cap (benches/steady.h), and the per-second sample
 * at x = 2 is the first wholly after that; so first_min is the sustained
 * rate, not the boost-clock burst, and PERF_DECAY compares like with like.
 */
#define SOAK_SETTLE_S 2.0

struct soak_gpu {
	int dev;
	struct gv_gemm g;
	int gemm_open;
	pthread_t th;
	int th_started;
	unsigned long long completed;   /* __atomic */
	struct gv_gerr err;
	struct gv_sdc sdc;              /* results compared with the first one (benches/sdc.h) */
	int *stop;
	/* NVML */
	nvmlDevice_t nv;
	int have_nv;
	unsigned long long viol_power0, viol_therm0;
	int have_viol_power, have_viol_therm;
	double throttle_power_s, throttle_therm_s;
	int xid_count, foreign_max;
	/* per-second series kept for the metrics (NAN where NVML gave nothing) */
	double *x, *tflops, *sm, *pw, *cap, *temp;
	int n;
};

/* The whole soak's state, shared by its steps. */
struct soak {
	struct bench_ctx *ctx;
	const struct bench_config *cfg;
	struct soak_gpu *gs;
	int n, dur, stop, min_cc;
	double free_min;
	enum gemm_dtype dt;
	struct gemm_shape sh;
	const struct gv_nvml *nv;
	nvmlEventSet_t evset;
	unsigned self_pid;
	struct gv_gerr err;
};

static int soak_deadline(const struct bench_config *cfg)
{
	return soak_duration_s(cfg) + 240;
}

static int soak_probe(struct bench_ctx *ctx, const struct bench_config *cfg)
{
	(void)cfg;
	return gv_probe_gpus_libs(ctx, GV_NEED_CUBLASLT);
}

static void *soak_worker(void *arg)
{
	struct soak_gpu *s = (struct soak_gpu *)arg;
	cudaEvent_t ev[SOAK_DEPTH];
	int made = 0;
	unsigned long long i = 0;

	GV_CUDA(&s->err, cudaSetDevice(s->dev));
	gv_sdc_open(&s->sdc);
	for (; made < SOAK_DEPTH; made++)
		GV_CUDA(&s->err, cudaEventCreateWithFlags(&ev[made], cudaEventDisableTiming | cudaEventBlockingSync));
	while (!__atomic_load_n(s->stop, __ATOMIC_ACQUIRE)) {
		if (gv_gemm_enqueue(&s->g, &s->err) || gv_sdc_enqueue(&s->sdc, &s->g, i, &s->err))
			goto fail;
		GV_CUDA(&s->err, cudaEventRecord(ev[i % SOAK_DEPTH], s->g.stream));
		if (i >= SOAK_DEPTH - 1) {
			GV_CUDA(&s->err, cudaEventSynchronize(ev[(i - (SOAK_DEPTH - 1)) % SOAK_DEPTH]));
			__atomic_add_fetch(&s->completed, 1, __ATOMIC_RELEASE);
			gv_sdc_collect(&s->sdc, i - (SOAK_DEPTH - 1));
		}
		i++;
	}
	GV_CUDA(&s->err, cudaStreamSynchronize(s->g.stream));
	for (unsigned long long j = i >= SOAK_DEPTH - 1 ? i - (SOAK_DEPTH - 1) : 0; j < i; j++)
		gv_sdc_collect(&s->sdc, j);
fail:
	if (s->err.set)
		__atomic_store_n(s->stop, 1, __ATOMIC_RELEASE);   /* one GPU failing ends the soak */
	for (int k = 0; k < made; k++)
		cudaEventDestroy(ev[k]);
	gv_sdc_close(&s->sdc);
	return NULL;
}

static void sleep_until(double t)
{
	double now = bench_now();
	if (t <= now)
		return;
	struct timespec ts;
	double d = t - now;
	ts.tv_sec = (time_t)d;
	ts.tv_nsec = (long)((d - (double)ts.tv_sec) * 1e9);
	while (nanosleep(&ts, &ts) != 0)
		;
}

/* One NVML sample of one GPU at time x. */
static void soak_sample_nvml(struct bench_ctx *ctx, const struct gv_nvml *nv, struct soak_gpu *s, int gi, double x,
			     unsigned self_pid)
{
	unsigned v = 0, w = 0;
	unsigned long long mask = 0;
	nvmlViolationTime_t vt;
	if (nv->DeviceGetClockInfo && nv->DeviceGetClockInfo(s->nv, NVML_CLOCK_SM, &v) == NVML_SUCCESS) {
		bench_sample(ctx, "soak.sm_clock.mhz", gi, x, v);
		s->sm[s->n - 1] = v;
	}
	if (nv->DeviceGetClockInfo && nv->DeviceGetClockInfo(s->nv, NVML_CLOCK_MEM, &v) == NVML_SUCCESS)
		bench_sample(ctx, "soak.mem_clock.mhz", gi, x, v);
	if (nv->DeviceGetTemperature && nv->DeviceGetTemperature(s->nv, NVML_TEMPERATURE_GPU, &v) == NVML_SUCCESS) {
		bench_sample(ctx, "soak.temp.c", gi, x, v);
		s->temp[s->n - 1] = v;
	}
	if (nv->DeviceGetPowerUsage && nv->DeviceGetPowerUsage(s->nv, &v) == NVML_SUCCESS) {
		bench_sample(ctx, "soak.power.w", gi, x, v / 1000.0);
		s->pw[s->n - 1] = v / 1000.0;
	}
	if (nv->DeviceGetEnforcedPowerLimit && nv->DeviceGetEnforcedPowerLimit(s->nv, &v) == NVML_SUCCESS) {
		bench_sample(ctx, "soak.power_limit.w", gi, x, v / 1000.0);
		s->cap[s->n - 1] = v / 1000.0;
	}
	if (nv->DeviceGetCurrentClocksEventReasons &&
	    nv->DeviceGetCurrentClocksEventReasons(s->nv, &mask) == NVML_SUCCESS)
		bench_sample(ctx, "soak.clock_events.mask", gi, x, (double)mask);
	if (nv->DeviceGetViolationStatus) {
		if (s->have_viol_power && nv->DeviceGetViolationStatus(s->nv, NVML_PERF_POLICY_POWER, &vt) == NVML_SUCCESS) {
			s->throttle_power_s = (double)(vt.violationTime - s->viol_power0) / 1e9;
			bench_sample(ctx, "soak.throttle.power_s", gi, x, s->throttle_power_s);
		}
		if (s->have_viol_therm &&
		    nv->DeviceGetViolationStatus(s->nv, NVML_PERF_POLICY_THERMAL, &vt) == NVML_SUCCESS) {
			s->throttle_therm_s = (double)(vt.violationTime - s->viol_therm0) / 1e9;
			bench_sample(ctx, "soak.throttle.thermal_s", gi, x, s->throttle_therm_s);
		}
	}
	if (nv->DeviceGetCurrPcieLinkGeneration && nv->DeviceGetCurrPcieLinkGeneration(s->nv, &v) == NVML_SUCCESS)
		bench_sample(ctx, "soak.pcie.gen", gi, x, v);
	if (nv->DeviceGetCurrPcieLinkWidth && nv->DeviceGetCurrPcieLinkWidth(s->nv, &w) == NVML_SUCCESS)
		bench_sample(ctx, "soak.pcie.width", gi, x, w);
	const char *hide = getenv("GPUVET_TEST_HIDE_FOREIGN");   /* tests: the other tenant invisible, as on a vGPU */
	if (nv->DeviceGetComputeRunningProcesses && !(hide && *hide && strcmp(hide, "0"))) {
		nvmlProcessInfo_t infos[64];
		unsigned cnt = 64, pids[64];
		nvmlReturn_t r = nv->DeviceGetComputeRunningProcesses(s->nv, &cnt, infos);
		if (r == NVML_SUCCESS) {
			for (unsigned k = 0; k < cnt && k < 64; k++)
				pids[k] = infos[k].pid;
			int f = foreign_procs(pids, (int)(cnt < 64 ? cnt : 64), self_pid, 1);
			/* tests only: as on a time-sliced vGPU, where the other tenant's processes are invisible */
			if (getenv("GPUVET_TEST_HIDE_FOREIGN"))
				f = 0;
			if (f > s->foreign_max)
				s->foreign_max = f;
		}
	}
}

/* The GPUs, the dtype (BF16, FP16 before Ampere) and the largest shape that fits. */
static int soak_setup(struct soak *k)
{
	k->min_cc = 1000;
	k->free_min = 1e30;
	k->gs = (struct soak_gpu *)gv_calloc((size_t)k->n, sizeof *k->gs);
	for (int d = 0; d < k->n; d++) {
		cudaDeviceProp p;
		size_t fr = 0, tot = 0, npts = (size_t)k->dur + 8;
		struct soak_gpu *s = &k->gs[d];
		s->dev = d;
		s->stop = &k->stop;
		s->x = (double *)gv_calloc(npts, sizeof(double));
		s->tflops = (double *)gv_calloc(npts, sizeof(double));
		s->sm = (double *)gv_calloc(npts, sizeof(double));
		s->pw = (double *)gv_calloc(npts, sizeof(double));
		s->cap = (double *)gv_calloc(npts, sizeof(double));
		s->temp = (double *)gv_calloc(npts, sizeof(double));
		GV_CUDA(&k->err, cudaGetDeviceProperties(&p, d));
		GV_CUDA(&k->err, cudaSetDevice(d));
		GV_CUDA(&k->err, cudaMemGetInfo(&fr, &tot));
		if (p.major * 10 + p.minor < k->min_cc)
			k->min_cc = p.major * 10 + p.minor;
		if ((double)fr < k->free_min)
			k->free_min = (double)fr;
	}
	k->dt = k->min_cc >= gemm_dtype_min_cc(GEMM_BF16) ? GEMM_BF16 : GEMM_FP16;
	k->sh.m = k->sh.n = k->sh.k = 8192;
	while (k->sh.m > 1024 && gemm_bytes(&k->sh, gv_ab_size(k->dt), gv_d_size(k->dt)) > 0.4 * k->free_min)
		k->sh.m = k->sh.n = k->sh.k = k->sh.m / 2;
	return 0;
fail:
	return -1;
}

/* NVML handle and violation-counter baselines of one GPU. */
static void soak_open_nvml(struct soak *k, struct soak_gpu *s)
{
	nvmlViolationTime_t vt;
	if (gv_nvml_dev_for_cuda(k->nv, s->dev, &s->nv) != 0) {
		bench_log(k->ctx, "gpu %d: no nvml device with its pci address", s->dev);
		return;
	}
	s->have_nv = 1;
	if (k->nv->DeviceGetViolationStatus &&
	    k->nv->DeviceGetViolationStatus(s->nv, NVML_PERF_POLICY_POWER, &vt) == NVML_SUCCESS) {
		s->have_viol_power = 1;
		s->viol_power0 = vt.violationTime;
	}
	if (k->nv->DeviceGetViolationStatus &&
	    k->nv->DeviceGetViolationStatus(s->nv, NVML_PERF_POLICY_THERMAL, &vt) == NVML_SUCCESS) {
		s->have_viol_therm = 1;
		s->viol_therm0 = vt.violationTime;
	}
}

/* cuBLASLt on every GPU, NVML handles, the XID event set. */
static int soak_open(struct soak *k)
{
	char why[256] = "";
	const struct gv_nvml *nv = k->nv = gv_nvml_load(why, sizeof why);
	if (!nv)
		bench_log(k->ctx, "nvml not available, only throughput is sampled: %s", why);
	for (int d = 0; d < k->n; d++) {
		k->gs[d].gemm_open = 1;   /* gv_gemm_close() copes with a half-opened one */
		if (gv_gemm_open(&k->gs[d].g, d, k->dt, &k->err) || gv_gemm_set_shape(&k->gs[d].g, k->sh, 4, &k->err))
			return -1;
		if (nv)
			soak_open_nvml(k, &k->gs[d]);
	}
	if (!nv || !nv->EventSetCreate || !nv->DeviceRegisterEvents || !nv->EventSetWait)
		return 0;
	if (nv->EventSetCreate(&k->evset) != NVML_SUCCESS) {
		k->evset = NULL;
		return 0;
	}
	for (int d = 0; d < k->n; d++)
		if (k->gs[d].have_nv) {
			nvmlReturn_t r = nv->DeviceRegisterEvents(k->gs[d].nv, nvmlEventTypeXidCriticalError, k->evset);
			if (r != NVML_SUCCESS)
				bench_log(k->ctx, "gpu %d: xid events not available: %s", d, gv_nvml_strerror(nv, r));
		}
	return 0;
}

/* XID events that arrived since the last second. */
static void soak_drain_xids(struct soak *k, double x)
{
	nvmlEventData_t ed;
	while (k->nv->EventSetWait(k->evset, &ed, 0) == NVML_SUCCESS)
		for (int d = 0; d < k->n; d++)
			if (k->gs[d].have_nv && k->gs[d].nv == ed.device) {
				k->gs[d].xid_count++;
				bench_sample(k->ctx, "soak.xid", d, x, (double)ed.eventData);
				bench_log(k->ctx, "gpu %d: xid %llu at %.0f s", d, ed.eventData, x);
			}
}

/* One second's throughput and NVML readings of every GPU. */
static void soak_second(struct soak *k, unsigned long long *prev, double now, double tprev, double x)
{
	for (int d = 0; d < k->n; d++) {
		struct soak_gpu *s = &k->gs[d];
		unsigned long long c = __atomic_load_n(&s->completed, __ATOMIC_ACQUIRE);
		double tf = gemm_flops(k->sh.m, k->sh.n, k->sh.k) * (double)(c - prev[d]) / (now - tprev) / 1e12;
		prev[d] = c;
		if (s->n < k->dur + 8) {
			s->x[s->n] = x;
			s->tflops[s->n] = tf;
			s->sm[s->n] = s->pw[s->n] = s->cap[s->n] = s->temp[s->n] = NAN;
			s->n++;
		}
		bench_sample(k->ctx, "soak.tflops", d, x, tf);
		if (s->have_nv)
			soak_sample_nvml(k->ctx, k->nv, s, d, x, k->self_pid);
	}
}

/* Starts every GPU's worker, samples once a second on a fixed schedule, joins them. */
static int soak_loop(struct soak *k)
{
	unsigned long long *prev = (unsigned long long *)gv_calloc((size_t)k->n, sizeof *prev);
	for (int d = 0; d < k->n; d++) {
		if (pthread_create(&k->gs[d].th, NULL, soak_worker, &k->gs[d])) {
			gv_gerr_set(&k->err, "cannot start the soak thread of gpu %d", d);
			break;
		}
		k->gs[d].th_started = 1;
	}
	double t0 = bench_now(), tprev = t0;
	for (int i = 1; i <= k->dur && !k->err.set && !__atomic_load_n(&k->stop, __ATOMIC_ACQUIRE); i++) {
		sleep_until(t0 + i);
		double now = bench_now();
		soak_second(k, prev, now, tprev, now - t0);
		tprev = now;
		if (k->evset)
			soak_drain_xids(k, now - t0);
		bench_progress(k->ctx, (double)i / k->dur);
	}
	__atomic_store_n(&k->stop, 1, __ATOMIC_RELEASE);
	for (int d = 0; d < k->n; d++)
		if (k->gs[d].th_started) {
			pthread_join(k->gs[d].th, NULL);
			k->gs[d].th_started = 0;
		}
	for (int d = 0; d < k->n; d++)
		if (k->gs[d].err.set && !k->err.set)
			gv_gerr_set(&k->err, "gpu %d: %s", d, k->gs[d].err.text);
	free(prev);
	return k->err.set ? -1 : 0;
}

/* The last result of every GPU, checked against FP64 after the heat. */
static int soak_check(struct soak *k)
{
	for (int d = 0; d < k->n; d++) {
		double e = 0;
		if (gv_gemm_check(&k->gs[d].g, 1024, &e, &k->err))
			return -1;
		if (!(e <= gemm_tolerance(k->dt))) {
			gv_gerr_set(&k->err, "gpu %d computed wrong results under sustained load: max error %.3g > %.3g", d,
				    e, gemm_tolerance(k->dt));
			return -1;
		}
	}
	return 0;
}

/* A throughput window's params: the shape, and what the GPU did in the window. */
static void soak_window_params(const struct soak *k, const struct soak_gpu *s, double lo, double hi, double w,
			       char *buf, size_t len)
{
	double sm = series_window_mean(s->x, s->sm, s->n, lo, hi), pw = series_window_mean(s->x, s->pw, s->n, lo, hi);
	double cap = series_window_mean(s->x, s->cap, s->n, lo, hi), t = series_window_mean(s->x, s->temp, s->n, lo, hi);
	char v[4][24];
	const double x[4] = { sm, pw, cap, t };
	for (int i = 0; i < 4; i++)
		if (isfinite(x[i]))
			snprintf(v[i], sizeof v[i], "%.5g", x[i]);
		else
			snprintf(v[i], sizeof v[i], "null");
	snprintf(buf, len,
		 "{\"dtype\":\"%s\",\"m\":%d,\"n\":%d,\"k\":%d,\"window_s\":%.3g,\"window_start_s\":%.3g,"
		 "\"settle_s\":%.3g,\"duration_s\":%d,\"algo_id\":%d,\"sm_clock_mhz\":%s,\"power_w\":%s,"
		 "\"power_cap_w\":%s,\"temp_c\":%s}",
		 gemm_dtype_name(k->dt), k->sh.m, k->sh.n, k->sh.k, w, lo - 0.5, SOAK_SETTLE_S, k->dur, s->g.algo_id,
		 v[0], v[1], v[2], v[3]);
}

/* Per-GPU clock drop, throttle time, XIDs and foreign processes; the instance's worst into *agg. */
struct soak_agg {
	double first, last, drop_max, thr_max;
	int xid_sum, foreign_max, have_sm, have_thr;
};

static void soak_health_metrics(struct soak *k, struct soak_gpu *s, int d, double f_lo, double f_hi, double l_lo,
				double l_hi, double w, struct soak_agg *a)
{
	char params[256];
	double sf = series_window_mean(s->x, s->sm, s->n, f_lo, f_hi), sl = series_window_mean(s->x, s->sm, s->n, l_lo, l_hi);
	if (isfinite(sf) && isfinite(sl)) {
		double dp = drop_pct(sf, sl);
		snprintf(params, sizeof params, "{\"first_mhz\":%.6g,\"last_mhz\":%.6g,\"window_s\":%.3g}", sf, sl, w);
		bench_metric(k->ctx, "soak.sm_clock.drop_pct", d, dp, "%", params);
		if (dp > a->drop_max)
			a->drop_max = dp;
		a->have_sm = 1;
	}
	if (s->have_viol_power || s->have_viol_therm) {
		double t = s->throttle_power_s + s->throttle_therm_s;
		if (t > k->dur)
			t = k->dur;
		snprintf(params, sizeof params, "{\"power_s\":%.6g,\"thermal_s\":%.6g,\"duration_s\":%d}",
			 s->throttle_power_s, s->throttle_therm_s, k->dur);
		bench_metric(k->ctx, "soak.throttle_s", d, t, "s", params);
		if (t > a->thr_max)
			a->thr_max = t;
		a->have_thr = 1;
	}
	snprintf(params, sizeof params, "{\"event_set\":%d}", k->evset ? 1 : 0);
	bench_metric(k->ctx, "soak.xid.count", d, s->xid_count, "count", params);
	bench_metric(k->ctx, "soak.foreign_procs.count", d, s->foreign_max, "count", NULL);
	a->xid_sum += s->xid_count;
	if (s->foreign_max > a->foreign_max)
		a->foreign_max = s->foreign_max;
}

static void soak_metrics(struct soak *k)
{
	char params[768];
	double w = soak_window_s(k->dur), skip = k->dur >= 3 * SOAK_SETTLE_S ? SOAK_SETTLE_S : 0;
	double f_lo = skip + 0.5, f_hi = skip + w + 0.5, l_lo = k->dur - w + 0.5, l_hi = k->dur + 0.5;
	struct soak_agg a = { 0, 0, -INFINITY, -INFINITY, 0, 0, 0, 0 };
	for (int d = 0; d < k->n; d++) {
		struct soak_gpu *s = &k->gs[d];
		double f = series_window_mean(s->x, s->tflops, s->n, f_lo, f_hi);
		double l = series_window_mean(s->x, s->tflops, s->n, l_lo, l_hi);
		soak_window_params(k, s, f_lo, f_hi, w, params, sizeof params);
		bench_metric(k->ctx, "soak.tflops.first_min", d, f, "TFLOP/s", params);
		soak_window_params(k, s, l_lo, l_hi, w, params, sizeof params);
		bench_metric(k->ctx, "soak.tflops.last_min", d, l, "TFLOP/s", params);
		gv_sdc_report(k->ctx, &s->sdc, d);
		a.first += isfinite(f) ? f : 0;
		a.last += isfinite(l) ? l : 0;
		if (s->have_nv)
			soak_health_metrics(k, s, d, f_lo, f_hi, l_lo, l_hi, w, &a);
	}
	snprintf(params, sizeof params,
		 "{\"dtype\":\"%s\",\"m\":%d,\"n\":%d,\"k\":%d,\"window_s\":%.3g,\"settle_s\":%.3g,\"duration_s\":%d,"
		 "\"gpus\":%d,\"aggregate\":\"sum\"}",
		 gemm_dtype_name(k->dt), k->sh.m, k->sh.n, k->sh.k, w, skip, k->dur, k->n);
	bench_metric(k->ctx, "soak.tflops.first_min", -1, a.first, "TFLOP/s", params);
	bench_metric(k->ctx, "soak.tflops.last_min", -1, a.last, "TFLOP/s", params);
	if (a.have_sm)
		bench_metric(k->ctx, "soak.sm_clock.drop_pct", -1, a.drop_max, "%", "{\"aggregate\":\"max\"}");
	if (a.have_thr)
		bench_metric(k->ctx, "soak.throttle_s", -1, a.thr_max, "s", "{\"aggregate\":\"max\"}");
	if (k->nv) {
		bench_metric(k->ctx, "soak.xid.count", -1, a.xid_sum, "count", "{\"aggregate\":\"sum\"}");
		bench_metric(k->ctx, "soak.foreign_procs.count", -1, a.foreign_max, "count", "{\"aggregate\":\"max\"}");
	}
	snprintf(params, sizeof params,
		 "{\"duration_s\":%d,\"dtype\":\"%s\",\"m\":%d,\"gpus\":%d,\"nvml\":%d,\"xid_events\":%d,\"settle_s\":%.3g}",
		 k->dur, gemm_dtype_name(k->dt), k->sh.m, k->n, k->nv ? 1 : 0, k->evset ? 1 : 0, skip);
	bench_config_echo(k->ctx, params);
}

static void soak_free(struct soak *k)
{
	if (k->evset && k->nv && k->nv->EventSetFree)
		k->nv->EventSetFree(k->evset);
	for (int d = 0; k->gs && d < k->n; d++) {
		struct soak_gpu *s = &k->gs[d];
		if (s->gemm_open)
			gv_gemm_close(&s->g);
		free(s->x);
		free(s->tflops);
		free(s->sm);
		free(s->pw);
		free(s->cap);
		free(s->temp);
	}
	free(k->gs);
}

static int soak_run(struct bench_ctx *ctx, const struct bench_config *cfg)
{
	struct soak *k = (struct soak *)gv_calloc(1, sizeof *k);
	int rc = BENCH_FAIL;
	k->ctx = ctx;
	k->cfg = cfg;
	k->dur = soak_duration_s(cfg);
	k->self_pid = (unsigned)getpid();
	if (gv_probe_gpus(ctx, &k->n) != BENCH_OK) {
		free(k);
		return BENCH_SKIP;
	}
	if (k->n > SOAK_MAX_GPUS)
		k->n = SOAK_MAX_GPUS;
	if (soak_setup(k) || soak_open(k) || soak_loop(k) || soak_check(k)) {
		bench_reason(ctx, "%s", k->err.set ? k->err.text : "soak failed");
	} else {
		soak_metrics(k);
		rc = BENCH_OK;
	}
	soak_free(k);
	free(k);
	return rc;
}

#define R METRIC_RANKABLE
#define G METRIC_PER_GPU
#define L METRIC_LOWER_IS_BETTER

/* The metrics this bench reports (struct metric_info, benches/bench.h). */
static const struct metric_info soak_metric_rows[] = {
	{ "soak.tflops.first_min", "TFLOP/s", "soak first minute", R, METRIC_PEAK_NONE },
	{ "soak.tflops.last_min", "TFLOP/s", "soak last minute", R, METRIC_PEAK_NONE },
	{ "soak.sm_clock.drop_pct", "%", "SM clock drop", L, METRIC_PEAK_NONE },
	{ "soak.throttle_s", "s", "throttled time", L, METRIC_PEAK_NONE },
	{ "soak.xid.count", "count", "Xid errors", L, METRIC_PEAK_NONE },
	{ "soak.foreign_procs.count", "count", "foreign processes", L, METRIC_PEAK_NONE },
	{ "soak.sdc.mismatches", "count", "GEMM results differing from the first", L, METRIC_PEAK_NONE },
	{ NULL, NULL, NULL, 0, METRIC_PEAK_NONE },
};

#undef R
#undef G
#undef L

/* The series it samples (struct bench .series): judged under this bench only. */
static const char *const soak_series[] = { "soak.sm_clock.mhz", "soak.mem_clock.mhz", "soak.temp.c", "soak.power.w", "soak.power_limit.w", "soak.clock_events.mask", "soak.throttle.*", "soak.pcie.gen", "soak.pcie.width", "soak.xid", "soak.tflops", "soak.sdc.mismatch", NULL };

extern "C" const struct bench bench_soak = {
	.name = "soak",
	.summary = "sustained tensor GEMM on every GPU with NVML clocks, power, throttle, XID sampled each second",
	.flags = BENCH_NEEDS_GPU,
	.deadline_s = soak_deadline,
	.probe = soak_probe,
	.run = soak_run,
	.metrics = soak_metric_rows,
	.series = soak_series,
};
