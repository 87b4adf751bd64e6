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
 *   soak.tflops.first_min / last_min   mean TFLOP/s over the first / last w
 *                                      seconds (instance: sum over GPUs)
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
	/* per-second series kept for the metrics */
	double *x, *tflops, *sm;
	int n;
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
	if (nv->DeviceGetTemperature && nv->DeviceGetTemperature(s->nv, NVML_TEMPERATURE_GPU, &v) == NVML_SUCCESS)
		bench_sample(ctx, "soak.temp.c", gi, x, v);
	if (nv->DeviceGetPowerUsage && nv->DeviceGetPowerUsage(s->nv, &v) == NVML_SUCCESS)
		bench_sample(ctx, "soak.power.w", gi, x, v / 1000.0);
	if (nv->DeviceGetEnforcedPowerLimit && nv->DeviceGetEnforcedPowerLimit(s->nv, &v) == NVML_SUCCESS)
		bench_sample(ctx, "soak.power_limit.w", gi, x, v / 1000.0);
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
			if (f > s->foreign_max)
				s->foreign_max = f;
		}
	}
}

static int soak_run(struct bench_ctx *ctx, const struct bench_config *cfg)
{
	struct gv_gerr err;
	struct soak_gpu *gs = NULL;
	int n = 0, min_cc = 1000, stop = 0, rc = BENCH_FAIL, dur = soak_duration_s(cfg);
	double free_min = 1e30, w = 0, t0 = 0;
	enum gemm_dtype dt;
	struct gemm_shape sh = { 8192, 8192, 8192 };
	char why[256] = "", params[512];
	const struct gv_nvml *nv = NULL;
	nvmlEventSet_t evset = NULL;
	unsigned self_pid = (unsigned)getpid();
	int npts = dur + 8;

	memset(&err, 0, sizeof err);
	if (gv_probe_gpus(ctx, &n) != BENCH_OK)
		return BENCH_SKIP;
	if (n > SOAK_MAX_GPUS)
		n = SOAK_MAX_GPUS;
	gs = (struct soak_gpu *)gv_calloc((size_t)n, sizeof *gs);
	for (int d = 0; d < n; d++) {
		cudaDeviceProp p;
		size_t fr = 0, tot = 0;
		gs[d].dev = d;
		gs[d].stop = &stop;
		gs[d].x = (double *)gv_calloc((size_t)npts, sizeof(double));
		gs[d].tflops = (double *)gv_calloc((size_t)npts, sizeof(double));
		gs[d].sm = (double *)gv_calloc((size_t)npts, sizeof(double));
		GV_CUDA(&err, cudaGetDeviceProperties(&p, d));
		GV_CUDA(&err, cudaSetDevice(d));
		GV_CUDA(&err, cudaMemGetInfo(&fr, &tot));
		if (p.major * 10 + p.minor < min_cc)
			min_cc = p.major * 10 + p.minor;
		if ((double)fr < free_min)
			free_min = (double)fr;
	}
	dt = min_cc >= gemm_dtype_min_cc(GEMM_BF16) ? GEMM_BF16 : GEMM_FP16;
	while (sh.m > 1024 && gemm_bytes(&sh, gv_ab_size(dt), gv_d_size(dt)) > 0.4 * free_min)
		sh.m = sh.n = sh.k = sh.m / 2;

	nv = gv_nvml_load(why, sizeof why);
	if (!nv)
		bench_log(ctx, "nvml not available, only throughput is sampled: %s", why);
	for (int d = 0; d < n; d++) {
		gs[d].gemm_open = 1;   /* gv_gemm_close() copes with a half-opened one */
		if (gv_gemm_open(&gs[d].g, d, dt, &err))
			goto fail;
		int r = gv_gemm_set_shape(&gs[d].g, sh, 4, &err);
		if (r)
			goto fail;
		if (nv && gv_nvml_dev_for_cuda(nv, d, &gs[d].nv) == 0) {
			nvmlViolationTime_t vt;
			gs[d].have_nv = 1;
			if (nv->DeviceGetViolationStatus &&
			    nv->DeviceGetViolationStatus(gs[d].nv, NVML_PERF_POLICY_POWER, &vt) == NVML_SUCCESS) {
				gs[d].have_viol_power = 1;
				gs[d].viol_power0 = vt.violationTime;
			}
			if (nv->DeviceGetViolationStatus &&
			    nv->DeviceGetViolationStatus(gs[d].nv, NVML_PERF_POLICY_THERMAL, &vt) == NVML_SUCCESS) {
				gs[d].have_viol_therm = 1;
				gs[d].viol_therm0 = vt.violationTime;
			}
		} else if (nv) {
			bench_log(ctx, "gpu %d: no nvml device with its pci address", d);
		}
	}
	if (nv && nv->EventSetCreate && nv->DeviceRegisterEvents && nv->EventSetWait) {
		if (nv->EventSetCreate(&evset) != NVML_SUCCESS) {
			evset = NULL;
		} else {
			for (int d = 0; d < n; d++)
				if (gs[d].have_nv) {
					nvmlReturn_t r = nv->DeviceRegisterEvents(gs[d].nv, nvmlEventTypeXidCriticalError, evset);
					if (r != NVML_SUCCESS)
						bench_log(ctx, "gpu %d: xid events not available: %s", d,
							  gv_nvml_strerror(nv, r));
				}
		}
	}

	/* start every GPU, then sample once a second on a fixed schedule */
	for (int d = 0; d < n; d++) {
		if (pthread_create(&gs[d].th, NULL, soak_worker, &gs[d])) {
			gv_gerr_set(&err, "cannot start the soak thread of gpu %d", d);
			stop = 1;
			goto join;
		}
		gs[d].th_started = 1;
	}
	t0 = bench_now();
	{
		unsigned long long *prev = (unsigned long long *)gv_calloc((size_t)n, sizeof *prev);
		double tprev = t0;
		for (int k = 1; k <= dur && !__atomic_load_n(&stop, __ATOMIC_ACQUIRE); k++) {
			sleep_until(t0 + k);
			double now = bench_now(), x = now - t0;
			for (int d = 0; d < n; d++) {
				struct soak_gpu *s = &gs[d];
				unsigned long long c = __atomic_load_n(&s->completed, __ATOMIC_ACQUIRE);
				double tf = gemm_flops(sh.m, sh.n, sh.k) * (double)(c - prev[d]) / (now - tprev) / 1e12;
				prev[d] = c;
				if (s->n < npts) {
					s->x[s->n] = x;
					s->tflops[s->n] = tf;
					s->sm[s->n] = NAN;
					s->n++;
				}
				bench_sample(ctx, "soak.tflops", d, x, tf);
				if (s->have_nv)
					soak_sample_nvml(ctx, nv, s, d, x, self_pid);
			}
			tprev = now;
			if (evset) {
				nvmlEventData_t ed;
				while (nv->EventSetWait(evset, &ed, 0) == NVML_SUCCESS) {
					for (int d = 0; d < n; d++)
						if (gs[d].have_nv && gs[d].nv == ed.device) {
							gs[d].xid_count++;
							bench_sample(ctx, "soak.xid", d, x, (double)ed.eventData);
							bench_log(ctx, "gpu %d: xid %llu at %.0f s", d, ed.eventData, x);
						}
				}
			}
			bench_progress(ctx, (double)k / dur);
		}
		free(prev);
	}
	__atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
join:
	for (int d = 0; d < n; d++)
		if (gs[d].th_started)
			pthread_join(gs[d].th, NULL);
	for (int d = 0; d < n; d++)
		if (gs[d].err.set && !err.set)
			gv_gerr_set(&err, "gpu %d: %s", d, gs[d].err.text);
	if (err.set)
		goto fail;

	/* the last result of every GPU, checked after the heat */
	for (int d = 0; d < n; d++) {
		double e = 0;
		if (gv_gemm_check(&gs[d].g, 1024, &e, &err))
			goto fail;
		if (!(e <= gemm_tolerance(dt))) {
			gv_gerr_set(&err, "gpu %d computed wrong results under sustained load: max error %.3g > %.3g", d,
				    e, gemm_tolerance(dt));
			goto fail;
		}
	}

	/* metrics */
	w = soak_window_s(dur);
	{
		double first_sum = 0, last_sum = 0, drop_max = -INFINITY, thr_max = -INFINITY;
		int xid_sum = 0, foreign_max = 0, have_sm = 0, have_thr = 0;
		for (int d = 0; d < n; d++) {
			struct soak_gpu *s = &gs[d];
			double f = series_window_mean(s->x, s->tflops, s->n, 0.5, w + 0.5);
			double l = series_window_mean(s->x, s->tflops, s->n, dur - w + 0.5, dur + 0.5);
			snprintf(params, sizeof params,
				 "{\"dtype\":\"%s\",\"m\":%d,\"n\":%d,\"k\":%d,\"window_s\":%.3g,\"duration_s\":%d,"
				 "\"algo_id\":%d}",
				 gemm_dtype_name(dt), sh.m, sh.n, sh.k, w, dur, s->g.algo_id);
			bench_metric(ctx, "soak.tflops.first_min", d, f, "TFLOP/s", params);
			bench_metric(ctx, "soak.tflops.last_min", d, l, "TFLOP/s", params);
			gv_sdc_report(ctx, &s->sdc, d);
			first_sum += isfinite(f) ? f : 0;
			last_sum += isfinite(l) ? l : 0;
			if (s->have_nv) {
				double sf = series_window_mean(s->x, s->sm, s->n, 0.5, w + 0.5);
				double sl = series_window_mean(s->x, s->sm, s->n, dur - w + 0.5, dur + 0.5);
				if (isfinite(sf) && isfinite(sl)) {
					double dp = drop_pct(sf, sl);
					snprintf(params, sizeof params,
						 "{\"first_mhz\":%.6g,\"last_mhz\":%.6g,\"window_s\":%.3g}", sf, sl, w);
					bench_metric(ctx, "soak.sm_clock.drop_pct", d, dp, "%", params);
					if (dp > drop_max)
						drop_max = dp;
					have_sm = 1;
				}
				if (s->have_viol_power || s->have_viol_therm) {
					double t = s->throttle_power_s + s->throttle_therm_s;
					if (t > dur)
						t = dur;
					snprintf(params, sizeof params,
						 "{\"power_s\":%.6g,\"thermal_s\":%.6g,\"duration_s\":%d}",
						 s->throttle_power_s, s->throttle_therm_s, dur);
					bench_metric(ctx, "soak.throttle_s", d, t, "s", params);
					if (t > thr_max)
						thr_max = t;
					have_thr = 1;
				}
				snprintf(params, sizeof params, "{\"event_set\":%d}", evset ? 1 : 0);
				bench_metric(ctx, "soak.xid.count", d, s->xid_count, "count", params);
				bench_metric(ctx, "soak.foreign_procs.count", d, s->foreign_max, "count", NULL);
				xid_sum += s->xid_count;
				if (s->foreign_max > foreign_max)
					foreign_max = s->foreign_max;
			}
		}
		snprintf(params, sizeof params,
			 "{\"dtype\":\"%s\",\"m\":%d,\"n\":%d,\"k\":%d,\"window_s\":%.3g,\"duration_s\":%d,\"gpus\":%d,"
			 "\"aggregate\":\"sum\"}",
			 gemm_dtype_name(dt), sh.m, sh.n, sh.k, w, dur, n);
		bench_metric(ctx, "soak.tflops.first_min", -1, first_sum, "TFLOP/s", params);
		bench_metric(ctx, "soak.tflops.last_min", -1, last_sum, "TFLOP/s", params);
		if (have_sm)
			bench_metric(ctx, "soak.sm_clock.drop_pct", -1, drop_max, "%", "{\"aggregate\":\"max\"}");
		if (have_thr)
			bench_metric(ctx, "soak.throttle_s", -1, thr_max, "s", "{\"aggregate\":\"max\"}");
		if (nv) {
			bench_metric(ctx, "soak.xid.count", -1, xid_sum, "count", "{\"aggregate\":\"sum\"}");
			bench_metric(ctx, "soak.foreign_procs.count", -1, foreign_max, "count", "{\"aggregate\":\"max\"}");
		}
	}
	snprintf(params, sizeof params,
		 "{\"duration_s\":%d,\"dtype\":\"%s\",\"m\":%d,\"gpus\":%d,\"nvml\":%d,\"xid_events\":%d}", dur,
		 gemm_dtype_name(dt), sh.m, n, nv ? 1 : 0, evset ? 1 : 0);
	bench_config_echo(ctx, params);
	rc = BENCH_OK;
	goto out;
fail:
	__atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
	for (int d = 0; d < n; d++)
		if (gs && gs[d].th_started) {
			pthread_join(gs[d].th, NULL);
			gs[d].th_started = 0;
		}
	bench_reason(ctx, "%s", err.set ? err.text : "soak failed");
	rc = BENCH_FAIL;
out:
	if (evset && nv && nv->EventSetFree)
		nv->EventSetFree(evset);
	for (int d = 0; gs && d < n; d++) {
		if (gs[d].gemm_open)
			gv_gemm_close(&gs[d].g);
		free(gs[d].x);
		free(gs[d].tflops);
		free(gs[d].sm);
	}
	free(gs);
	return rc;
}

extern "C" const struct bench bench_soak = {
	.name = "soak",
	.summary = "sustained tensor GEMM on every GPU with NVML clocks, power, throttle, XID sampled each second",
	.flags = BENCH_NEEDS_GPU,
	.deadline_s = soak_deadline,
	.probe = soak_probe,
	.run = soak_run,
};
