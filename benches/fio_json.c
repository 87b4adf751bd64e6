/*
 * fio_json.c - fio's JSON output into struct fio_result (see fio_json.h).
 *
 * Formulas: throughput is fio's own "bw_bytes" (bytes/s over the job's
 * runtime), IOPS fio's "iops", latency fio's "clat_ns" percentiles (the
 * completion latency: submission to completion, what fio's own summary
 * prints as clat).  Nothing is recomputed, so the numbers match what a user
 * sees running fio by hand with the same options.
 */
#include "benches/fio_json.h"

#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static void fio_errf(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void fio_errf(char *err, size_t errlen, const char *fmt, ...)
{
	if (!err || !errlen)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

/* A JSON number (fio writes integers and reals) or def. */
static double fio_num(const json_t *o, const char *key, double def)
{
	const json_t *v = json_object_get(o, key);
	if (json_is_integer(v))
		return (double)json_integer_value(v);
	if (json_is_real(v))
		return json_real_value(v);
	return def;
}

static double fio_percentile(const json_t *clat, const char *key)
{
	const json_t *pct = json_object_get(clat, "percentile");
	if (!json_is_object(pct))
		return NAN;
	double v = fio_num(pct, key, NAN);
	return v >= 0 ? v : NAN;
}

static void fio_add_dir(struct fio_dir *d, const json_t *jd, long long *best_ios)
{
	if (!json_is_object(jd))
		return;
	double bw = fio_num(jd, "bw_bytes", 0), iops = fio_num(jd, "iops", 0);
	double iob = fio_num(jd, "io_bytes", 0), ios = fio_num(jd, "total_ios", 0);
	if (bw > 0 && isfinite(bw))
		d->bw_bytes += bw;
	if (iops > 0 && isfinite(iops))
		d->iops += iops;
	if (iob > 0 && iob < 9e18)
		d->io_bytes += (long long)iob;
	long long n = ios > 0 && ios < 9e18 ? (long long)ios : 0;
	d->total_ios += n;
	const json_t *clat = json_object_get(jd, "clat_ns");
	if (json_is_object(clat) && n > *best_ios) {
		*best_ios = n;
		d->clat_p50_ns = fio_percentile(clat, "50.000000");
		d->clat_p99_ns = fio_percentile(clat, "99.000000");
		double m = fio_num(clat, "mean", NAN);
		d->clat_mean_ns = m >= 0 ? m : NAN;
	}
}

/* Start of the JSON document: the first '{' at the start of a line. */
static const char *fio_json_start(const char *text, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		if (text[i] == '{' && (i == 0 || text[i - 1] == '\n'))
			return text + i;
	}
	return NULL;
}

int fio_json_parse(const char *text, size_t len, struct fio_result *out, char *err,
		   size_t errlen)
{
	memset(out, 0, sizeof *out);
	out->read.clat_p50_ns = out->read.clat_p99_ns = out->read.clat_mean_ns = NAN;
	out->write.clat_p50_ns = out->write.clat_p99_ns = out->write.clat_mean_ns = NAN;
	const char *start = text ? fio_json_start(text, len) : NULL;
	if (!start) {
		fio_errf(err, errlen, "fio printed no json output");
		return -1;
	}
	json_error_t jerr;
	json_t *root = json_loadb(start, len - (size_t)(start - text), JSON_DISABLE_EOF_CHECK,
				  &jerr);
	if (!root) {
		fio_errf(err, errlen, "malformed fio json output: %s at line %d", jerr.text,
			 jerr.line);
		return -1;
	}
	int rc = -1;
	const json_t *ver = json_object_get(root, "fio version");
	const json_t *jobs = json_object_get(root, "jobs");
	if (!json_is_object(root) || !json_is_string(ver) || !json_is_array(jobs)) {
		fio_errf(err, errlen, "malformed fio json output: no \"fio version\" or \"jobs\"");
		goto out;
	}
	snprintf(out->version, sizeof out->version, "%s", json_string_value(ver));
	long long best_r = -1, best_w = -1;
	size_t i;
	json_t *job;
	json_array_foreach(jobs, i, job) {
		if (!json_is_object(job))
			continue;
		out->njobs++;
		double e = fio_num(job, "error", 0);
		if (e != 0 && !out->error) {
			out->error = e > 0 && e < 1e6 ? (int)e : -1;
			const json_t *name = json_object_get(job, "jobname");
			snprintf(out->error_job, sizeof out->error_job, "%s",
				 json_is_string(name) ? json_string_value(name) : "?");
		}
		double rt = fio_num(job, "job_runtime", 0);
		if (rt > out->runtime_ms && isfinite(rt))
			out->runtime_ms = rt;
		fio_add_dir(&out->read, json_object_get(job, "read"), &best_r);
		fio_add_dir(&out->write, json_object_get(job, "write"), &best_w);
	}
	if (!out->njobs) {
		fio_errf(err, errlen, "malformed fio json output: no jobs");
		goto out;
	}
	rc = 0;
out:
	json_decref(root);
	return rc;
}
