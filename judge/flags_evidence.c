/*
 * flags_evidence.c - what a soak reading is, and whether a flag check has
 * enough of them to pass (flags.h flags_series_covered).  One owner: the
 * checks read a series through flags_series() and the coverage rule counts
 * what it returns, so a point the check would not believe never counts as
 * evidence, and a point the coverage counted is the point the check judges.
 *
 * A reading is a point of the soak's series (benches/soak.cu, one a second)
 * whose x is a time (finite, >= 0) and whose y is a value the sensor can
 * give (flags_reading_valid: a mask of NVML's defined clock-event bits, a
 * PCIe generation 1-7, a positive clock or rate under a bound...); points
 * that share a second count once (the first, or for the clock-event mask
 * every bit any of them set: the worst).  A check that passes says the
 * machine had none of the trouble it looks for, so a series counts only
 * when every GPU of the run has readings for at least
 * FLAG_EVIDENCE_MIN_SHARE of the soak's seconds (flags_soak_seconds: the longest
 * of its declared duration, its series' own timestamps and the bench's measured
 * duration less its set-up, or the points stored when more), and for at least
 * FLAG_EVIDENCE_MIN_READINGS seconds.  One reading of 30, 30 null ones,
 * thirty masks of -1, three readings repeated ten times, a rate of -1 or a
 * soak that declares 2 s is no evidence: the check is not measured (exit 3).
 */
#include "judge/flags.h"
#include "judge/flags_int.h"
#include "benches/bench.h"
#include "common/util.h"

#include <math.h>
#include <nvml.h>
#include <stdlib.h>
#include <string.h>

/* Every clock-event bit NVML defines (nvml.h, bits 0-10); a mask with another bit set is not a reading. */
#define MASK_DEFINED_BITS 0x7ffULL
/* Two points closer than this in x are one second's reading (the soak samples once a second). */
#define READING_MIN_GAP_S 0.5

/* What a valid reading of each soak series is: [lo, hi], whole numbers only when integral. */
static const struct {
	const char *series;
	double lo, hi;
	int integral, lo_open;
} valid_rows[] = {
	{ "soak.clock_events.mask", 0, (double)MASK_DEFINED_BITS, 1, 0 },
	{ "soak.pcie.gen", 1, 7, 1, 0 },          /* PCIe 1.0 to 7.0 */
	{ "soak.pcie.width", 1, 32, 1, 0 },       /* x1 to x32 lanes */
	{ "soak.sm_clock.mhz", 0, 10000, 0, 1 },  /* a clock that runs, under 10 GHz */
	{ "soak.mem_clock.mhz", 0, 20000, 0, 1 },
	{ "soak.tflops", 0, 20000, 0, 1 },        /* a rate that ran, under 10x any GPU's dense peak */
	{ "soak.temp.c", -40, 150, 0, 0 },        /* NVML's sensor range, with margin */
	{ "soak.power.w", 0, 5000, 0, 1 },
	{ "soak.power_limit.w", 0, 5000, 0, 1 },
	{ "soak.throttle.thermal_s", 0, 1e9, 0, 0 },
	{ "soak.throttle.power_s", 0, 1e9, 0, 0 },
};

int flags_reading_valid(const char *series, double y)
{
	if (!isfinite(y))
		return 0;
	for (size_t i = 0; series && i < sizeof valid_rows / sizeof valid_rows[0]; i++) {
		if (strcmp(valid_rows[i].series, series))
			continue;
		if (y < valid_rows[i].lo || y > valid_rows[i].hi || (valid_rows[i].lo_open && y <= valid_rows[i].lo))
			return 0;
		if (valid_rows[i].integral && y != floor(y))
			return 0;
		if (!strcmp(series, "soak.clock_events.mask") && ((unsigned long long)y & ~MASK_DEFINED_BITS))
			return 0;
		return 1;
	}
	return 1;   /* a series without a row: any finite value */
}

struct pt {
	double x, y;
	size_t at;   /* the point's place in the stored array: ties keep their order */
};

static int cmp_pt(const void *a, const void *b)
{
	const struct pt *p = a, *q = b;
	if (p->x != q->x)
		return p->x < q->x ? -1 : 1;
	return p->at < q->at ? -1 : p->at > q->at;
}

void flags_pts_free(struct fpts *p)
{
	if (p->own)
		free(p->xy);
	p->xy = NULL;
	p->n = 0;
}

struct fpts flags_raw_series(const struct fprun *r, const char *series, int gpu)
{
	const struct fp_series *s = fprun_series(r, series_owner(series), series, gpu);
	return s ? (struct fpts){ s->xy, s->n, 0 } : (struct fpts){ NULL, 0, 0 };
}

struct fpts flags_series(const struct fprun *r, const char *series, int gpu)
{
	struct fpts raw = flags_raw_series(r, series, gpu), out = { gv_malloc((2 * raw.n + 1) * sizeof *out.xy), 0, 1 };
	size_t n = 0;
	int mask = !strcmp(series, "soak.clock_events.mask");
	struct pt *v = gv_malloc((raw.n ? raw.n : 1) * sizeof *v);
	for (size_t i = 0; i < raw.n; i++) {
		double x = raw.xy[2 * i], y = raw.xy[2 * i + 1];
		if (!(x >= 0 && x < 1e9) || !flags_reading_valid(series, y))
			continue;
		v[n++] = (struct pt){ x, y, i };
	}
	size_t sorted = 1;
	while (sorted < n && cmp_pt(&v[sorted - 1], &v[sorted]) <= 0)
		sorted++;
	if (sorted < n)   /* a soak's seconds come in order: sorted only when they do not */
		qsort(v, n, sizeof *v, cmp_pt);
	for (size_t i = 0; i < n; i++) {
		double *prev = out.n ? &out.xy[2 * (out.n - 1)] : NULL;
		if (prev && v[i].x - prev[0] < READING_MIN_GAP_S) {
			if (mask)   /* one second, two masks: every reason either saw */
				prev[1] = (double)((unsigned long long)v[i].y | (unsigned long long)prev[1]);
			continue;
		}
		out.xy[2 * out.n] = v[i].x;
		out.xy[2 * out.n + 1] = v[i].y;
		out.n++;
	}
	free(v);
	return out;
}

/* A soak series' largest time (its own timestamps, every gpu): the soak sampled at least that long. */
static double soak_last_x(const struct fprun *r, int ngpu)
{
	static const char *const series[] = { "soak.clock_events.mask", "soak.tflops", "soak.sm_clock.mhz", "soak.temp.c",
					      "soak.power.w", "soak.pcie.gen" };
	double last = 0;
	for (size_t k = 0; k < sizeof series / sizeof series[0]; k++)
		for (int g = 0; g < ngpu; g++) {
			struct fpts p = flags_raw_series(r, series[k], g);
			for (size_t i = 0; i < p.n; i++)
				if (p.xy[2 * i] > last && p.xy[2 * i] < 1e7)
					last = p.xy[2 * i];
		}
	return last;
}

/*
 * The soak's length in seconds, from its evidence: the longest of what its config echo declares
 * (duration_s), what its own series' timestamps show, and what the harness measured the bench took
 * (its duration_s) less the set-up before the first reading (FLAG_SOAK_SETUP_S).  Removing or
 * lowering the declared length does not shorten it: 10 readings of a 30 s soak stay a third of it.
 * 0 when the run has no soak.
 */
double flags_soak_seconds(const struct fprun *r)
{
	const struct fp_bench *b = fprun_bench(r, "soak");
	int ngpu = r->d.ngpu;
	double len = 0, d;
	if (b) {
		if (!fp_obj_num(&b->config, "duration_s", &d) && d > 0 && d < 1e7)
			len = d;
		double setup = FLAG_SOAK_SETUP_S + FLAG_SOAK_SETUP_PER_GPU_S * (ngpu > 0 ? ngpu : 1);
		if (isfinite(b->duration_s) && b->duration_s - setup > len && b->duration_s < 1e7)
			len = b->duration_s - setup;
	}
	double last = soak_last_x(r, ngpu);
	return last > len ? last : len;
}

int flags_series_covered(const struct fprun *r, const char *series)
{
	int ngpu = r->d.ngpu;
	double want = flags_soak_seconds(r);
	if (ngpu < 1)
		return 0;
	for (int g = 0; g < ngpu; g++) {
		struct fpts valid = flags_series(r, series, g);
		size_t n = flags_raw_series(r, series, g).n, readings = valid.n;
		flags_pts_free(&valid);
		double expect = want > (double)n ? want : (double)n;
		if (readings < FLAG_EVIDENCE_MIN_READINGS || readings < FLAG_EVIDENCE_MIN_SHARE * expect)
			return 0;
	}
	return 1;
}
