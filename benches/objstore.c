/*
 * objstore.c - object-store throughput as data loaders see it: many ranged
 * GETs of one large object in parallel, and (S3) a multipart upload.
 *
 * Transfers run on one libcurl multi handle with at most C requests in
 * flight (C = --objstore-concurrency, default 16) over HTTP/1.1 keep-alive
 * connections (at most C per host).  S3 requests are signed by libcurl
 * (CURLOPT_AWS_SIGV4 "aws:amz:REGION:s3") with the payload declared
 * UNSIGNED-PAYLOAD; a session token goes in x-amz-security-token.
 *
 *   GET   probe with Range: bytes=0-0 (size from Content-Range), then ranges
 *         of R bytes (GPUVET_OBJSTORE_RANGE_MB, default 8 MiB) over the
 *         object, wrapping around, until the profile's byte budget or time
 *         budget is spent.
 *         objstore.get.gbps = bytes of completed ranges / (last completion -
 *         first request) / 1e9;  objstore.ttfb.p50_ms / .p99_ms: time to
 *         first byte (libcurl STARTTRANSFER) of the completed ranges.
 *   PUT   (s3:// only) CreateMultipartUpload of KEY.gpuvet-put-RANDOM, parts
 *         of R bytes (at least 5 MiB) in parallel, CompleteMultipartUpload,
 *         then DELETE; on any failure AbortMultipartUpload, so nothing is
 *         left behind.  objstore.put.gbps = part bytes / (first part start ->
 *         complete done) / 1e9.
 *
 * Retries: HTTP 429/500/502/503/504, S3 SlowDown / RequestTimeout /
 * InternalError, connection resets, empty replies, partial bodies and
 * stalls are retried with exponential backoff (100 ms doubling, 5 s cap,
 * jittered), at most 5 times and never past the deadline.
 * objstore.retries counts retried attempts; objstore.errors counts requests
 * that failed for good.  Every request has libcurl timeouts (connect, total
 * until the bench's deadline, low-speed limit) so nothing hangs.
 *
 * Credentials come from AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY /
 * AWS_SESSION_TOKEN, else the profile AWS_PROFILE (default "default") of
 * AWS_SHARED_CREDENTIALS_FILE (default ~/.aws/credentials).  They are handed
 * to libcurl only: never in a metric, parameter, reason or log line; URLs in
 * messages lose userinfo and query strings.
 */
#include "benches/objstore_int.h"
#include "common/stats.h"

#include <ctype.h>
#include <curl/curl.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

static struct os_plan os_plan_for(enum bench_profile p)
{
	switch (p) {
	case PROFILE_FULL:
		return (struct os_plan){ 32ll << 30, 60, 8ll << 30, 60, 20 };
	case PROFILE_STANDARD:
		return (struct os_plan){ 8ll << 30, 30, 2ll << 30, 30, 15 };
	case PROFILE_QUICK:
	default:
		return (struct os_plan){ 1ll << 30, 8, 256ll << 20, 8, 10 };
	}
}

static int objstore_deadline(const struct bench_config *cfg)
{
	struct os_plan pl = os_plan_for(cfg->profile);
	/* probe + both phases + a stalled request's grace in each + set-up slack */
	return (int)(pl.get_s + pl.put_s) + 3 * (int)pl.low_speed_s + 15;
}

/* ---- phases ---- */

static int os_get_phase(struct os_state *s, long long size)
{
	long long range = s->range < size && !s->whole_object ? s->range : size;
	long long budget = s->plan.get_bytes;
	int n = (int)((budget + range - 1) / range);
	if (n > 4096) /* small ranges: requests, not bytes, are the limit */
		n = 4096;
	if (size <= range && n > s->conc * 4) /* a small object: a few rounds tell its latency */
		n = s->conc * 4;
	struct os_req *reqs = calloc((size_t)n, sizeof *reqs);
	if (!reqs)
		abort();
	long long off = 0;
	for (int i = 0; i < n; i++) {
		if (off >= size)
			off = 0;
		reqs[i].kind = OS_GET;
		reqs[i].off = off;
		reqs[i].len = size - off < range ? size - off : range;
		off += reqs[i].len;
	}
	double start = bench_now();
	double stop_new = start + s->plan.get_s;
	double grace = stop_new + s->plan.low_speed_s;
	if (grace > s->hard_deadline)
		grace = s->hard_deadline;
	double t0, t1;
	long long bytes;
	int ok = os_run_requests(s, reqs, n, s->conc, stop_new, grace, &t0, &t1, &bytes, "get");
	int issued = 0;
	double *tt = malloc(sizeof *tt * (size_t)n);
	if (!tt)
		abort();
	int nt = 0;
	for (int i = 0; i < n; i++) {
		if (reqs[i].attempt)
			issued++;
		if (reqs[i].ok)
			tt[nt++] = reqs[i].ttfb_s * 1e3;
	}
	qsort(tt, (size_t)nt, sizeof *tt, gv_cmp_double);
	int status = BENCH_OK;
	if (!ok) {
		bench_reason(s->ctx, "%s", s->first_error[0] ? s->first_error
						   : "no ranged GET finished before the deadline");
		status = BENCH_FAIL;
	} else {
		double secs = t1 - t0;
		char disp[600], params[1024];
		os_json_safe(s->t.display, disp, sizeof disp);
		snprintf(params, sizeof params,
			 "{\"url\":\"%s\",\"object_bytes\":%lld,\"range_bytes\":%lld,"
			 "\"concurrency\":%d,\"requests\":%d,\"completed\":%d,\"bytes\":%lld,"
			 "\"seconds\":%.3f,\"http\":\"1.1\",\"signed\":%s,\"get_mode\":\"%s\"}",
			 disp, size, range, s->conc, issued, ok, bytes, secs,
			 s->t.is_s3 ? "true" : "false", s->whole_object ? "whole-object" : "ranged");
		if (secs > 0)
			bench_metric(s->ctx, "objstore.get.gbps", -1, (double)bytes / secs / 1e9,
				     "GB/s", params);
		bench_metric(s->ctx, "objstore.ttfb.p50_ms", -1, os_pct(tt, nt, 50), "ms", params);
		bench_metric(s->ctx, "objstore.ttfb.p99_ms", -1, os_pct(tt, nt, 99), "ms", params);
		bench_log(s->ctx, "get: %d of %d ranges, %lld bytes in %.2f s", ok, issued, bytes,
			  secs);
	}
	free(tt);
	os_reqs_free(reqs, n);
	return status;
}

static long long os_probe(struct os_state *s)
{
	struct os_req q = { .kind = OS_PROBE, .off = 0, .len = 1 };
	double t0 = bench_now(), until = t0 + 10 + s->plan.low_speed_s;
	int ok = os_single(s, &q, until, "probe");
	free(q.body);
	if (!ok && !s->first_error[0]) { /* accepted the connection, never answered */
		s->errors++;
		snprintf(s->first_error, sizeof s->first_error,
			 "GET %s: no answer within %.0f s (the server accepted the connection and sent nothing)",
			 s->t.display, bench_now() - t0);
	}
	if (!ok)
		return -1;
	if (q.range_total <= 0) {
		snprintf(s->first_error, sizeof s->first_error,
			 "GET %s: no object size in the answer (Content-Range)", s->t.display);
		return -1;
	}
	return q.range_total;
}

/* The configuration echo; get_mode says whether GETs are ranged or whole-object. */
static void os_echo_config(struct os_state *s)
{
	char disp[600], echo[1100];
	os_json_safe(s->t.display, disp, sizeof disp);
	snprintf(echo, sizeof echo,
		 "{\"url\":\"%s\",\"s3\":%s,\"region\":\"%s\",\"concurrency\":%d,"
		 "\"range_bytes\":%lld,\"get_budget_bytes\":%lld,\"get_budget_s\":%.0f,"
		 "\"put_budget_bytes\":%lld,\"put_budget_s\":%.0f,\"get_mode\":\"%s\"}",
		 disp, s->t.is_s3 ? "true" : "false", s->t.is_s3 ? s->region : "",
		 s->conc, s->range, s->plan.get_bytes, s->plan.get_s,
		 s->t.is_s3 ? s->plan.put_bytes : 0, s->t.is_s3 ? s->plan.put_s : 0,
		 s->whole_object ? "whole-object (the server ignores range requests)" : "ranged");
	bench_config_echo(s->ctx, echo);
}

static int objstore_run(struct bench_ctx *ctx, const struct bench_config *cfg)
{
	if (!cfg->objstore_url || !*cfg->objstore_url) {
		bench_reason(ctx, "no object store configured (--objstore-url)");
		return BENCH_SKIP;
	}
	struct os_state *s = calloc(1, sizeof *s);
	if (!s)
		abort();
	s->ctx = ctx;
	s->cfg = cfg;
	s->plan = os_plan_for(cfg->profile);
	s->hard_deadline = bench_now() + objstore_deadline(cfg) - 3;
	s->rng = (unsigned long long)time(NULL) ^ ((unsigned long long)getpid() << 32) ^
		 0x9e3779b97f4a7c15ull;
	s->conc = cfg->objstore_concurrency > 0 ? cfg->objstore_concurrency : OS_DEFAULT_CONCURRENCY;
	if (s->conc > OS_MAX_CONCURRENCY)
		s->conc = OS_MAX_CONCURRENCY;
	long range_mb = OS_DEFAULT_RANGE_MB;
	const char *rm = getenv("GPUVET_OBJSTORE_RANGE_MB");
	if (rm && *rm) {
		char *end;
		long v = strtol(rm, &end, 10);
		if (*end || v < 1 || v > 1024) {
			bench_reason(ctx, "invalid GPUVET_OBJSTORE_RANGE_MB '%s' (want 1..1024)", rm);
			free(s);
			return BENCH_FAIL;
		}
		range_mb = v;
	}
	s->range = (long long)range_mb << 20;

	int status = BENCH_FAIL;
	char why[512];
	os_load_region(s);
	if (objstore_parse_target(cfg->objstore_url, cfg->objstore_endpoint, s->region, &s->t, why,
				  sizeof why)) {
		bench_reason(ctx, "%s", why);
		goto out;
	}
	if (s->t.is_s3 && os_load_credentials(s, why, sizeof why)) {
		bench_reason(ctx, "%s", why);
		goto out;
	}
	if (curl_global_init(CURL_GLOBAL_DEFAULT)) {
		bench_reason(ctx, "cannot initialise libcurl");
		goto out;
	}
	s->multi = curl_multi_init();
	if (!s->multi) {
		bench_reason(ctx, "cannot initialise libcurl");
		curl_global_cleanup();
		goto out;
	}
	curl_multi_setopt(s->multi, CURLMOPT_MAX_HOST_CONNECTIONS, (long)s->conc);
	curl_multi_setopt(s->multi, CURLMOPT_MAXCONNECTS, (long)s->conc + 4);
	snprintf(s->sigv4, sizeof s->sigv4, "aws:amz:%s:s3", s->region);
	os_echo_config(s);
	long long size = os_probe(s);
	if (size < 0) {
		bench_reason(ctx, "%s", s->first_error);
		goto metrics;
	}
	bench_log(ctx, "object %s: %lld bytes", s->t.display, size);
	if (s->whole_object) {
		bench_log(ctx, "server ignores range requests: measuring with whole-object GETs");
		os_echo_config(s);
	}
	status = os_get_phase(s, size);
	if (status == BENCH_OK && s->t.is_s3) {
		s->first_error[0] = 0;
		status = os_put_phase(s);
		os_put_cleanup(s);
	}
metrics:
	bench_metric(ctx, "objstore.errors", -1, s->errors, "count", NULL);
	bench_metric(ctx, "objstore.retries", -1, s->retries, "count", NULL);
	curl_multi_cleanup(s->multi);
	curl_global_cleanup();
out:
	objstore_target_free(&s->t);
	os_wipe_free(s->access);
	os_wipe_free(s->secret);
	os_wipe_free(s->token);
	free(s->put_key);
	free(s->put_url);
	free(s->upload_buf);
	free(s);
	return status;
}

static const struct metric_info objstore_metrics[] = {
	{ "objstore.get.gbps", "GB/s", "object GET", METRIC_RANKABLE, METRIC_PEAK_NONE },
	{ "objstore.put.gbps", "GB/s", "object PUT", METRIC_RANKABLE, METRIC_PEAK_NONE },
	{ "objstore.ttfb.p50_ms", "ms", "time to first byte p50", METRIC_LOWER_IS_BETTER, METRIC_PEAK_NONE },
	{ "objstore.ttfb.p99_ms", "ms", "time to first byte p99", METRIC_LOWER_IS_BETTER, METRIC_PEAK_NONE },
	{ "objstore.errors", "count", "request errors", METRIC_LOWER_IS_BETTER, METRIC_PEAK_NONE },
	{ "objstore.retries", "count", "request retries", METRIC_LOWER_IS_BETTER, METRIC_PEAK_NONE },
	{ NULL, NULL, NULL, 0, METRIC_PEAK_NONE },
};

const struct bench bench_objstore = {
	.name = "objstore",
	.summary = "object store: parallel ranged GETs and S3 multipart PUT through libcurl",
	.flags = 0,
	.deadline_s = objstore_deadline,
	.run = objstore_run,
	.metrics = objstore_metrics,
};
