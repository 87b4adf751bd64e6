/*
 * flags_evidence.c - whether a flag check has enough evidence to pass
 * (flags.h flags_series_covered).  A check that passes says the machine had
 * none of the trouble it looks for, so it needs the samples to look at: the
 * soak samples one reading a second (benches/soak.cu), and a series counts
 * only when every GPU of the run has a finite reading for at least
 * FLAG_EVIDENCE_MIN_SHARE of the soak's seconds (its config's duration_s,
 * or the points stored when the config does not say), and for at least
 * FLAG_EVIDENCE_MIN_READINGS seconds.  One reading of 30, 30 null ones, or
 * a soak that declares 2 s is no evidence: the check is not measured (exit 3).
 */
#include "judge/flags.h"
#include "judge/flags_int.h"
#include "results/fpq.h"

#include <math.h>
#include <string.h>

/* The soak's length in seconds as its config echo declares it; 0 when it does not. */
static double soak_seconds(const json_t *fp)
{
	size_t i;
	json_t *b;
	json_array_foreach(json_object_get(fp, "benches"), i, b) {
		const char *n = json_string_value(json_object_get(b, "name"));
		json_t *d = json_object_get(json_object_get(b, "config"), "duration_s");
		if (n && !strcmp(n, "soak") && json_is_number(d) && json_number_value(d) > 0 &&
		    json_number_value(d) < 1e7)
			return json_number_value(d);
	}
	return 0;
}

int flags_series_covered(const json_t *fp, const char *series)
{
	int ngpu = fpq_gpu_count(fp);
	double want = soak_seconds(fp);
	if (ngpu < 1)
		return 0;
	for (int g = 0; g < ngpu; g++) {
		const json_t *pts = fpq_series(fp, series, g);
		size_t i, n = json_array_size(pts), finite = 0;
		json_t *p;
		json_array_foreach(pts, i, p) {
			json_t *y = json_array_get(p, 1);
			finite += json_is_number(y) && isfinite(json_number_value(y));
		}
		double expect = want > (double)n ? want : (double)n;
		if (finite < FLAG_EVIDENCE_MIN_READINGS || finite < FLAG_EVIDENCE_MIN_SHARE * expect)
			return 0;
	}
	return 1;
}
