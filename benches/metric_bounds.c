/*
 * metric_bounds.c - what a value of each metric and series can physically
 * be, beside the rows that declare them (bench.h metric_bound_check), and
 * the checks of an imported fingerprint that need what the benches declare
 * (bench_fp_check): every metric row under a bench the fingerprint lists
 * and, when any bench of this gpuvet declares the metric, under that one;
 * every value within its bounds; every config value the judge reads (a
 * bench's "timing") one its bench declares.
 *
 * The bounds are physical, not health thresholds: a rate is never
 * negative, a GEMM never runs at more than twice the datasheet peak of the
 * fastest GPU known for its dtype (common/gpus.c; twice, so that a part newer
 * than the table is still taken), a percentage of a link never exceeds 100.
 * NVML readings of a series may be -1 (a reading NVML did not give); what
 * counts as a valid reading is the judge's (judge/flags_evidence.c).
 */
#include "benches/bench.h"
#include "common/gpus.h"
#include "common/jtree.h"
#include "common/name_memo.h"

#include "common/util.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

enum bound_hi { HI_ABS = 0, HI_GEMM, HI_MEMBW };   /* hi as given; 2x the fastest known peak x GPUs; 2x the fastest memory */

struct metric_bound {
	const char *name;   /* a metric or series name, '*' standing for one dotted word */
	double lo, hi;
	enum bound_hi rule;
	const char *why;    /* said when a value is refused */
};

#define GEMM(n) { n, 0, 0, HI_GEMM, "at most twice the fastest known GPU's datasheet peak per GPU" }
#define NVML(n, h, w) { n, -1, h, HI_ABS, w }
#define MEMBW(n) { n, 0, 0, HI_MEMBW, "at most twice the fastest known GPU's memory bandwidth" }
/* NVLink-C2C, the fastest host-to-GPU link known (GH200), carries 450 GB/s a direction: twice that */
#define HOSTLINK(n, h) { n, 0, h, HI_ABS, "at most twice the fastest host-to-GPU link known (NVLink-C2C, 450 GB/s a direction)" }

/* Metrics (rows of each bench's metric table) and series, by name; first match wins. */
static const struct metric_bound bounds[] = {
	GEMM("gemm.*.tflops"), GEMM("gemm.*.best_shape.tflops"), GEMM("soak.tflops.first_min"),
	GEMM("soak.tflops.last_min"), GEMM("soak.tflops"),
	{ "gemm.*.pct_of_peak", 0, 200, HI_ABS, "a percent of the datasheet peak, at most twice it" },
	{ "memcpy.h2d.pct_of_link", 0, 100, HI_ABS, "a percent of the PCIe link" },
	{ "host.cpu_steal.pct", 0, 100, HI_ABS, "a percent of CPU time" },
	{ "soak.sm_clock.drop_pct", -100, 100, HI_ABS, "a percent of the first minute's clock" },
	NVML("soak.temp.c", 150, "a GPU temperature in degrees C (GPUs shut down near 100)"),
	NVML("soak.sm_clock.mhz", 10000, "an SM clock in MHz"),
	NVML("soak.mem_clock.mhz", 20000, "a memory clock in MHz"),
	NVML("soak.pcie.gen", 7, "a PCIe generation (1 to 7)"),
	NVML("soak.pcie.width", 32, "a PCIe link width in lanes"),
	NVML("soak.power.w", 5000, "a board power in W"),
	NVML("soak.power_limit.w", 5000, "a board power limit in W"),
	NVML("soak.clock_events.mask", 4294967295.0, "a 32-bit mask of NVML clock-event reasons"),
	NVML("soak.throttle.*", 1e7, "seconds of a run"),
	/* every rate has an upper bound (issue 57: a copy of 1e200 GB/s was imported) */
	HOSTLINK("memcpy.bidir.pinned.gbps", 1800), HOSTLINK("memcpy.bidir.pageable.gbps", 1800),
	HOSTLINK("memcpy.*.pinned.gbps", 900), HOSTLINK("memcpy.*.pageable.gbps", 900),
	HOSTLINK("ingest.gbps", 900),
	MEMBW("memcpy.d2d.gbps"), MEMBW("allreduce.*.gbps"),
	{ "nvme.*.gbps", 0, 1000, HI_ABS, "a local disk array: 32 PCIe gen5 drives read 450 GB/s" },
	{ "nvme.randread.kiops", 0, 1e5, HI_ABS, "a local disk array: 100 M IOPS is 30 gen5 drives' worth" },
	{ "objstore.*.gbps", 0, 1000, HI_ABS, "an instance's network: 3,200 Gbps is 400 GB/s" },
	{ "host.membw.*.gbps", 0, 10000, HI_ABS, "host memory: 12 channels of DDR5 on two sockets move about 1,200 GB/s" },
	{ "host.decode.*", 0, 1e7, HI_ABS, "images a second of a host's cores" },
};

/* Every other metric or series named with one of these ends is a rate, a count or a time: never negative. */
static const char *const nonneg_ends[] = { ".gbps", ".kiops", "_us", "_ms", ".us", ".count", ".errors", ".retries",
					   "_s", ".mismatches", ".mismatch", ".images_per_s", ".images_per_s_per_gpu" };

static int ends_with(const char *s, const char *end)
{
	size_t n = strlen(s), m = strlen(end);
	return n >= m && !strcmp(s + n - m, end);
}

/* Twice the fastest dense peak any known GPU has for the dtype of "gemm.<dtype>..." (any dtype: the fastest). */
static double gemm_hi(const char *name)
{
	const char *dot = strchr(name, '.');
	char dt[16] = "";
	if (dot && !strncmp(name, "gemm.", 5)) {
		size_t n = strcspn(dot + 1, ".");
		if (n < sizeof dt)
			memcpy(dt, dot + 1, n), dt[n] = '\0';
	}
	int d = gpu_dtype_from_name(dt);
	double hi = 0;
	for (size_t i = 0; i < gpu_refs_count; i++)
		for (int k = 0; k < GPU_DTYPE_COUNT; k++)
			if ((d < 0 || k == d) && gpu_refs[i].peak_tflops[k] > hi)
				hi = gpu_refs[i].peak_tflops[k];
	return 2 * hi;
}

/* Twice the fastest memory bandwidth of any known GPU (a device copy or a collective moves no faster). */
static double membw_hi(void)
{
	double hi = 0;
	for (size_t i = 0; i < gpu_refs_count; i++)
		if (gpu_refs[i].mem_bw_gbps > hi)
			hi = gpu_refs[i].mem_bw_gbps;
	return 2 * hi;
}

/* The bounds of a name before a GPU count scales them: one GPU's (hi of HI_GEMM and HI_MEMBW: per GPU), and why. */
struct name_bound {
	double lo, hi;
	enum bound_hi rule;
	const char *why;
};

static struct name_bound bound_scan(const char *name)
{
	for (size_t i = 0; i < sizeof bounds / sizeof bounds[0]; i++) {
		const struct metric_bound *b = &bounds[i];
		if (metric_name_matches(b->name, name))
			return (struct name_bound){ b->lo, b->rule == HI_GEMM ? gemm_hi(name) : b->rule == HI_MEMBW ? membw_hi() : b->hi,
						    b->rule, b->why };
	}
	if (ends_with(name, ".gbps"))   /* any other rate (a newer bench's): never negative, never 100 TB/s */
		return (struct name_bound){ 0, 1e5, HI_ABS, "a rate in GB/s: no link gpuvet measures reaches 100 TB/s" };
	for (size_t i = 0; i < sizeof nonneg_ends / sizeof nonneg_ends[0]; i++)
		if (ends_with(name, nonneg_ends[i]))
			return (struct name_bound){ 0, INFINITY, HI_ABS, "a rate, count or time is never negative" };
	return (struct name_bound){ -INFINITY, INFINITY, HI_ABS, "a finite number" };
}

/* The bounds of a metric or series of one GPU (gpu -1: the instance row of gpus GPUs), and why; a name's scanned once
 * per thread and kept (common/name_memo.h: an import asks them of every row of every run). */
static void bounds_of(const char *name, int gpu, int gpus, double *lo, double *hi, const char **why)
{
	static _Thread_local struct name_memo_key keys[NAME_MEMO_SLOTS];
	static _Thread_local struct name_bound vals[NAME_MEMO_SLOTS];
	size_t at;
	int kept = name_memo_find(keys, name, &at);
	struct name_bound b = kept < 0 ? bound_scan(name) : kept ? vals[at] : (vals[at] = bound_scan(name));
	if (kept == 0)
		name_memo_keep(&keys[at], name);
	*lo = b.lo;
	*hi = b.rule != HI_ABS && gpu < 0 && gpus > 1 ? b.hi * gpus : b.hi;
	*why = b.why;
}

static int outside(const char *name, int gpu, double value, double lo, double hi, const char *why, char *err,
		   size_t errlen)
{
	char where[32] = "";
	if (isnan(value) || (isfinite(value) && value >= lo && value <= hi))   /* NaN: null, not measured */
		return 0;
	if (gpu >= 0)
		snprintf(where, sizeof where, " on gpu %d", gpu);
	snprintf(err, errlen, "%s%s = %.6g is outside its physical bounds [%.6g, %.6g] (%s)", name, where, value, lo, hi,
		 why);
	return -1;
}

int metric_bound_check(const char *name, int gpu, double value, int gpus, char *err, size_t errlen)
{
	double lo, hi;
	const char *why;
	if (!name || isnan(value))
		return 0;
	bounds_of(name, gpu, gpus, &lo, &hi, &why);
	return outside(name, gpu, value, lo, hi, why, err, errlen);
}

/*
 * The config values the judge reads, as each bench declares them: the
 * fleet baseline compares a metric only across runs whose bench timed it
 * the same way (judge/policy.c same_timing), so a "timing" the bench never
 * writes would only move a run out of its fleet.
 */
static const struct { const char *bench, *key, *value; } declared_config[] = {
	{ "gemm", "timing", "steady" },   /* benches/gemm.cu config echo; older, burst-timed runs write none */
};

static int listed(const struct jtree *t, uint32_t benches, const char *name)
{
	size_t i;
	uint32_t b;
	jt_foreach(t, benches, i, b) {
		const char *n = jt_str(t, jt_get(t, b, "name"));
		if (n && name && !strcmp(n, name))
			return 1;
	}
	return 0;
}

static int check_configs(const struct jtree *t, uint32_t benches, char *err, size_t errlen)
{
	size_t i;
	uint32_t b;
	jt_foreach(t, benches, i, b) {
		const char *name = jt_str(t, jt_get(t, b, "name")), *want = NULL;
		uint32_t v = jt_get(t, jt_get(t, b, "config"), "timing");
		if (!v || !name)
			continue;
		for (size_t k = 0; k < sizeof declared_config / sizeof declared_config[0]; k++)
			if (!strcmp(declared_config[k].bench, name) && !strcmp(declared_config[k].key, "timing"))
				want = declared_config[k].value;
		if (!want || !jt_str(t, v) || strcmp(jt_str(t, v), want))
			return gv_fp_refuse(err, errlen, "benches[%zu] '%.40s': config timing %s%.40s%s is not what the bench "
				    "declares (%s)", i, name, jt_str(t, v) ? "'" : "", jt_str(t, v) ? jt_str(t, v) : "(not text)",
				    jt_str(t, v) ? "'" : "", want ? want : "none");
	}
	return 0;
}

static int check_metrics(const struct jtree *t, uint32_t fp, int gpus, char *err, size_t errlen)
{
	uint32_t benches = jt_get(t, fp, "benches"), m;
	size_t i;
	jt_foreach(t, jt_get(t, fp, "metrics"), i, m) {
		const char *name = jt_str(t, jt_get(t, m, "name")), *bench = jt_str(t, jt_get(t, m, "bench"));
		const char *owner = metric_owner(name);
		uint32_t g = jt_get(t, m, "gpu");
		double v;
		char why[256];
		/* a metric no bench declares (a newer gpuvet's) is kept; no rule or flag of this one reads it */
		if (owner && (!bench || strcmp(bench, owner)))
			return gv_fp_refuse(err, errlen, "metrics[%zu] '%.60s' is under bench '%.40s'; bench '%s' declares it", i,
				    name, bench ? bench : "", owner);
		if (!listed(t, benches, bench))
			return gv_fp_refuse(err, errlen, "metrics[%zu] '%.60s' is under bench '%.40s', which the fingerprint's "
				    "benches do not list", i, name, bench);
		if (jt_number(t, jt_get(t, m, "value"), &v) &&
		    metric_bound_check(name, g ? (int)jt_int(t, g) : -1, v, gpus, why, sizeof why))
			return gv_fp_refuse(err, errlen, "metrics[%zu] %s", i, why);
	}
	return 0;
}

static int check_samples(const struct jtree *t, uint32_t fp, int gpus, char *err, size_t errlen)
{
	uint32_t benches = jt_get(t, fp, "benches"), s, p;
	size_t i, j;
	jt_foreach(t, jt_get(t, fp, "samples"), i, s) {
		const char *series = jt_str(t, jt_get(t, s, "series")), *bench = jt_str(t, jt_get(t, s, "bench"));
		int gpu = jt_get(t, s, "gpu") ? (int)jt_int(t, jt_get(t, s, "gpu")) : -1;
		double lo, hi;
		const char *why;
		const char *owner = series_owner(series);
		/* a series no bench declares (a newer gpuvet's) is kept; no rule or flag of this one reads it */
		if (owner && (!bench || strcmp(bench, owner)))
			return gv_fp_refuse(err, errlen, "samples[%zu] '%.60s' is under bench '%.40s'; bench '%s' declares it", i,
				    series, bench ? bench : "", owner);
		if (!listed(t, benches, bench))
			return gv_fp_refuse(err, errlen, "samples[%zu] '%.60s' is under bench '%.40s', which the fingerprint's "
				    "benches do not list", i, series ? series : "", bench ? bench : "");
		bounds_of(series ? series : "", gpu, gpus, &lo, &hi, &why);   /* once a series, not once a point */
		jt_foreach(t, jt_get(t, s, "points"), j, p) {
			double x = 0, y;
			uint32_t px = jt_first(t, p), py = px ? jt_next(t, p, px) : 0;
			char msg[256];
			if (jt_number(t, px, &x) && !isfinite(x))
				return gv_fp_refuse(err, errlen, "samples[%zu].points[%zu]: x is not finite", i, j);
			if (jt_number(t, py, &y) && outside(series, gpu, y, lo, hi, why, msg, sizeof msg))
				return gv_fp_refuse(err, errlen, "samples[%zu].points[%zu] %s", i, j, msg);
		}
	}
	return 0;
}

int bench_fp_check(const struct jtree *t, uint32_t fp, char *err, size_t errlen)
{
	uint32_t gc = jt_get(t, jt_get(t, fp, "run"), "gpu_count");
	int gpus = (int)jt_size(t, jt_get(t, jt_get(t, fp, "inventory"), "gpus"));
	if (!gpus && jt_is_int(t, gc) && jt_int(t, gc) > 0 && jt_int(t, gc) <= 1024)
		gpus = (int)jt_int(t, gc);
	if (check_configs(t, jt_get(t, fp, "benches"), err, errlen) || check_metrics(t, fp, gpus, err, errlen))
		return -1;
	return check_samples(t, fp, gpus, err, errlen);
}
