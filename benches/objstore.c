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
#include "benches/bench.h"
#include "platform/objstore_util.h"
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

#define OS_DEFAULT_CONCURRENCY 16
#define OS_MAX_CONCURRENCY 512
#define OS_DEFAULT_RANGE_MB 8
#define OS_MAX_ATTEMPTS 6            /* 1 + 5 retries */
#define OS_ERRBODY 2048
#define OS_MIN_PART (5ll << 20)      /* S3's minimum part size (all but the last) */
#define OS_MAX_PARTS 10000

struct os_plan {
	long long get_bytes;   /* byte budget of the GET phase */
	double get_s;          /* time budget of the GET phase */
	long long put_bytes;
	double put_s;
	long low_speed_s;      /* abort a request that moves < 1 KiB/s for this long */
};

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

/* ---- state ---- */

enum os_kind { OS_PROBE, OS_GET, OS_CREATE, OS_PART, OS_COMPLETE, OS_DELETE, OS_ABORT };

static const char *os_kind_name(enum os_kind k)
{
	static const char *n[] = { "GET", "GET", "CreateMultipartUpload", "UploadPart",
				   "CompleteMultipartUpload", "DELETE", "AbortMultipartUpload" };
	return n[k];
}

struct os_state;

struct os_req {
	struct os_state *st;
	enum os_kind kind;
	long long off, len;        /* GET range / part bytes */
	int part;                  /* part number, 1-based */
	int attempt;               /* attempts made */
	double not_before;         /* backoff: do not start before */
	/* per attempt */
	CURL *easy;
	struct curl_slist *hdrs;
	long long got;             /* body bytes received (2xx) */
	long long sent;            /* upload position */
	char errbody[OS_ERRBODY];
	size_t errlen;
	long http;
	char etag[160];
	long long range_total;     /* from Content-Range, -1 when none */
	long long content_length;  /* from Content-Length, -1 when none */
	const char *postdata;      /* CompleteMultipartUpload's XML */
	char *body;                /* body kept for CreateMultipartUpload/Complete (malloc'd) */
	size_t bodylen;
	char curlerr[CURL_ERROR_SIZE];
	/* final outcome */
	int failed;                /* an attempt failed (it is retried or given up) */
	int done, ok;
	double ttfb_s;
};

struct os_state {
	struct bench_ctx *ctx;
	const struct bench_config *cfg;
	struct os_plan plan;
	struct os_target t;
	char *access, *secret, *token;   /* credentials (s3), wiped on exit */
	char region[64];
	char sigv4[128];
	int conc;
	long long range;
	double hard_deadline;            /* bench_now() after which nothing may run */
	CURLM *multi;
	int retries, errors;
	int any_success;
	int whole_object;                /* the server ignores Range: GETs fetch the whole object */
	char first_error[512];
	char last_error[512];            /* the latest failed attempt, retried or not */
	char *upload_buf;                /* part payload */
	size_t upload_len;
	char upload_id[512];
	char *put_key;                   /* object key of the upload test object */
	char *put_url;
	int put_state;                   /* 0 nothing made, 1 upload open, 2 object written */
	unsigned long long rng;
};

/* ---- helpers ---- */

static unsigned long long os_rand(struct os_state *s)
{
	unsigned long long x = s->rng;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return s->rng = x;
}

static void os_wipe_free(char *p)
{
	if (!p)
		return;
	explicit_bzero(p, strlen(p));
	free(p);
}

static char *os_strdup(const char *s)
{
	char *p = strdup(s);
	if (!p)
		abort();
	return p;
}

static char *os_aprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *os_aprintf(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *p = NULL;
	if (vasprintf(&p, fmt, ap) < 0)
		abort();
	va_end(ap);
	return p;
}

static void os_load_region(struct os_state *s)
{
	objstore_aws_region(s->region, sizeof s->region);
}

static int os_load_credentials(struct os_state *s, char *why, size_t whylen)
{
	return objstore_aws_credentials(&s->access, &s->secret, &s->token, why, whylen);
}

/* ---- one request ---- */

static size_t os_on_body(char *data, size_t size, size_t nmemb, void *ud)
{
	struct os_req *q = ud;
	size_t n = size * nmemb;
	if (!q->http)
		curl_easy_getinfo(q->easy, CURLINFO_RESPONSE_CODE, &q->http);
	if (q->http >= 300) {
		size_t room = sizeof q->errbody - 1 - q->errlen;
		size_t c = n < room ? n : room;
		memcpy(q->errbody + q->errlen, data, c);
		q->errlen += c;
		q->errbody[q->errlen] = 0;
	} else if (q->kind == OS_CREATE || q->kind == OS_COMPLETE) {
		if (q->bodylen + n > (1u << 20))
			return 0; /* not an S3 answer */
		char *nb = realloc(q->body, q->bodylen + n + 1);
		if (!nb)
			return 0;
		q->body = nb;
		memcpy(q->body + q->bodylen, data, n);
		q->bodylen += n;
		q->body[q->bodylen] = 0;
	}
	if (q->http < 300)
		q->got += (long long)n;
	if (q->kind == OS_PROBE && q->got > 1024)
		return 0; /* a server that ignores Range: stop; reported below */
	return n;
}

static size_t os_on_header(char *data, size_t size, size_t nmemb, void *ud)
{
	struct os_req *q = ud;
	size_t n = size * nmemb;
	char line[512];
	size_t c = n < sizeof line - 1 ? n : sizeof line - 1;
	memcpy(line, data, c);
	line[c] = 0;
	if (!strncasecmp(line, "HTTP/", 5)) { /* a new response (after 100 Continue) */
		q->etag[0] = 0;
		q->range_total = -1;
		q->content_length = -1;
	} else if (!strncasecmp(line, "content-length:", 15)) {
		char *end;
		long long v = strtoll(line + 15, &end, 10);
		q->content_length = end != line + 15 && v >= 0 ? v : -1;
	} else if (!strncasecmp(line, "etag:", 5)) {
		const char *v = line + 5;
		while (*v == ' ')
			v++;
		snprintf(q->etag, sizeof q->etag, "%.*s", (int)strcspn(v, "\r\n"), v);
	} else if (!strncasecmp(line, "content-range:", 14)) {
		q->range_total = objstore_content_range_total(line + 14);
	}
	return n;
}

static size_t os_on_read(char *buf, size_t size, size_t nmemb, void *ud)
{
	struct os_req *q = ud;
	const struct os_state *s = q->st;
	size_t n = size * nmemb;
	long long left = q->len - q->sent;
	if ((long long)n > left)
		n = (size_t)left;
	/* the payload repeats one random buffer */
	size_t off = (size_t)(q->sent % (long long)s->upload_len);
	if (n > s->upload_len - off)
		n = s->upload_len - off;
	memcpy(buf, s->upload_buf + off, n);
	q->sent += (long long)n;
	return n;
}

static int os_seek(void *ud, curl_off_t offset, int origin)
{
	struct os_req *q = ud;
	if (origin != SEEK_SET || offset < 0 || offset > q->len)
		return CURL_SEEKFUNC_FAIL;
	q->sent = offset;
	return CURL_SEEKFUNC_OK;
}

static char *os_upload_query_id(const struct os_state *s)
{
	return objstore_uri_encode(s->upload_id, 0);
}

/* Builds the easy handle of q's next attempt; 0 or -1. */
static int os_start(struct os_state *s, struct os_req *q)
{
	q->easy = curl_easy_init();
	if (!q->easy)
		return -1;
	q->hdrs = NULL;
	q->got = q->sent = 0;
	q->errlen = 0;
	q->errbody[0] = 0;
	q->http = 0;
	q->etag[0] = 0;
	q->range_total = -1;
	q->content_length = -1;
	q->curlerr[0] = 0;
	free(q->body);
	q->body = NULL;
	q->bodylen = 0;
	q->attempt++;
	CURL *e = q->easy;
	char *url = NULL;
	char *uid = NULL;
	switch (q->kind) {
	case OS_PROBE:
	case OS_GET: {
		char range[64];
		snprintf(range, sizeof range, "%lld-%lld", q->off, q->off + q->len - 1);
		curl_easy_setopt(e, CURLOPT_RANGE, q->kind == OS_GET && s->whole_object ? NULL : range);
		url = os_strdup(s->t.url);
		break;
	}
	case OS_CREATE:
		url = os_aprintf("%s?uploads=", s->put_url);
		curl_easy_setopt(e, CURLOPT_POST, 1L);
		curl_easy_setopt(e, CURLOPT_POSTFIELDS, "");
		curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE, 0L);
		break;
	case OS_PART:
		uid = os_upload_query_id(s);
		url = os_aprintf("%s?partNumber=%d&uploadId=%s", s->put_url, q->part, uid);
		curl_easy_setopt(e, CURLOPT_UPLOAD, 1L);
		curl_easy_setopt(e, CURLOPT_INFILESIZE_LARGE, (curl_off_t)q->len);
		curl_easy_setopt(e, CURLOPT_READFUNCTION, os_on_read);
		curl_easy_setopt(e, CURLOPT_READDATA, q);
		curl_easy_setopt(e, CURLOPT_SEEKFUNCTION, os_seek);
		curl_easy_setopt(e, CURLOPT_SEEKDATA, q);
		/* S3 answers 100-continue at once; a server that does not costs 200 ms */
		curl_easy_setopt(e, CURLOPT_EXPECT_100_TIMEOUT_MS, 200L);
		break;
	case OS_COMPLETE:
		uid = os_upload_query_id(s);
		url = os_aprintf("%s?uploadId=%s", s->put_url, uid);
		curl_easy_setopt(e, CURLOPT_POST, 1L);
		curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE, (long)strlen(q->postdata));
		curl_easy_setopt(e, CURLOPT_POSTFIELDS, q->postdata);
		break;
	case OS_DELETE:
		url = os_strdup(s->put_url);
		curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, "DELETE");
		curl_easy_setopt(e, CURLOPT_NOBODY, 1L);
		break;
	case OS_ABORT:
		uid = os_upload_query_id(s);
		url = os_aprintf("%s?uploadId=%s", s->put_url, uid);
		curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, "DELETE");
		curl_easy_setopt(e, CURLOPT_NOBODY, 1L);
		break;
	}
	free(uid);
	curl_easy_setopt(e, CURLOPT_URL, url);
	free(url);
	q->st = s;
	curl_easy_setopt(e, CURLOPT_PRIVATE, (char *)q);
	curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(e, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_1_1);
	curl_easy_setopt(e, CURLOPT_USERAGENT, "gpuvet-objstore/1");
	curl_easy_setopt(e, CURLOPT_ERRORBUFFER, q->curlerr);
	curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, os_on_body);
	curl_easy_setopt(e, CURLOPT_WRITEDATA, q);
	curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, os_on_header);
	curl_easy_setopt(e, CURLOPT_HEADERDATA, q);
	curl_easy_setopt(e, CURLOPT_TCP_KEEPALIVE, 1L);
	/* large reads: fewer system calls and callbacks per byte (curl's CLI uses 100 KiB) */
	curl_easy_setopt(e, CURLOPT_BUFFERSIZE, 512L * 1024);
	double left = s->hard_deadline - bench_now();
	long left_ms = left > 0.05 ? (long)(left * 1000) : 50;
	curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, left_ms);
	curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, left_ms < 10000 ? left_ms : 10000L);
	curl_easy_setopt(e, CURLOPT_LOW_SPEED_LIMIT, 1024L);
	curl_easy_setopt(e, CURLOPT_LOW_SPEED_TIME, s->plan.low_speed_s);
	if (s->t.is_s3) {
		curl_easy_setopt(e, CURLOPT_AWS_SIGV4, s->sigv4);
		curl_easy_setopt(e, CURLOPT_USERNAME, s->access);
		curl_easy_setopt(e, CURLOPT_PASSWORD, s->secret);
		q->hdrs = curl_slist_append(q->hdrs, "x-amz-content-sha256: UNSIGNED-PAYLOAD");
		if (s->token) {
			char *h = os_aprintf("x-amz-security-token: %s", s->token);
			q->hdrs = curl_slist_append(q->hdrs, h);
			os_wipe_free(h);
		}
		if (q->kind == OS_COMPLETE)
			q->hdrs = curl_slist_append(q->hdrs, "Content-Type: application/xml");
		curl_easy_setopt(e, CURLOPT_HTTPHEADER, q->hdrs);
	}
	return 0;
}

static void os_finish_easy(struct os_state *s, struct os_req *q)
{
	if (q->easy) {
		curl_multi_remove_handle(s->multi, q->easy);
		curl_easy_cleanup(q->easy);
		q->easy = NULL;
	}
	curl_slist_free_all(q->hdrs);
	q->hdrs = NULL;
}

/* Lowercase first letter, for curl's error strings in our messages. */
static void os_lower_first(char *s)
{
	if (s && *s)
		*s = (char)tolower((unsigned char)*s);
}

/* S3 error code from an error body, "" when none. */
static void os_s3_code(const struct os_req *q, char *out, size_t len)
{
	out[0] = 0;
	if (objstore_xml_text(q->errbody, q->errlen, "Code", out, len))
		out[0] = 0;
	for (char *p = out; *p; p++)
		if (!isalnum((unsigned char)*p))
			*p = '_';
}

/*
 * Classifies a finished attempt: 1 success, 0 retryable failure, -1 final
 * failure (message in msg).
 */
static int os_judge(struct os_state *s, struct os_req *q, CURLcode rc, char *msg, size_t len)
{
	char code[64];
	os_s3_code(q, code, sizeof code);
	curl_easy_getinfo(q->easy, CURLINFO_RESPONSE_CODE, &q->http);
	if (q->kind == OS_PROBE && q->http == 200 &&
	    (rc == CURLE_OK || (rc == CURLE_WRITE_ERROR && q->got > 1024))) {
		/* Range ignored (python's http.server): measure with whole-object GETs */
		if (q->content_length <= 0) {
			snprintf(msg, len, "server ignores range requests and sends no content-length");
			return -1;
		}
		s->whole_object = 1;
		q->range_total = q->content_length;
		return 1;
	}
	if (rc == CURLE_OK && q->http >= 200 && q->http < 300) {
		if (q->kind == OS_PROBE && q->http != 206) {
			snprintf(msg, len, "server ignores range requests (http %ld)", q->http);
			return -1;
		}
		if (q->kind == OS_GET && q->got != q->len) {
			snprintf(msg, len, "short range: %lld of %lld bytes", q->got, q->len);
			return 0;
		}
		if (q->kind == OS_COMPLETE && q->body && strstr(q->body, "<Error>")) {
			/* S3 can fail a completion inside a 200 answer */
			struct os_req tmp;
			memset(&tmp, 0, sizeof tmp);
			tmp.errlen = q->bodylen < sizeof tmp.errbody - 1 ? q->bodylen
									  : sizeof tmp.errbody - 1;
			memcpy(tmp.errbody, q->body, tmp.errlen);
			os_s3_code(&tmp, code, sizeof code);
			snprintf(msg, len, "%s answered 200 with error %s", os_kind_name(q->kind),
				 code[0] ? code : "(unknown)");
			return !strcmp(code, "InternalError") || !strcmp(code, "SlowDown") ? 0 : -1;
		}
		return 1;
	}
	if (rc == CURLE_WRITE_ERROR && q->kind == OS_PROBE && q->got > 1024) {
		snprintf(msg, len, "server ignores range requests (http %ld)", q->http);
		return -1;
	}
	if (rc != CURLE_OK) {
		os_lower_first(q->curlerr);
		snprintf(msg, len, "%s", q->curlerr[0] ? q->curlerr : curl_easy_strerror(rc));
		switch (rc) {
		case CURLE_RECV_ERROR:
		case CURLE_SEND_ERROR:
		case CURLE_GOT_NOTHING:
		case CURLE_PARTIAL_FILE:
		case CURLE_OPERATION_TIMEDOUT:
		case CURLE_HTTP2:
		case CURLE_HTTP2_STREAM:
			return 0;
		case CURLE_COULDNT_CONNECT:
			return s->any_success ? 0 : -1; /* nothing listening: say so at once */
		default:
			return -1;
		}
	}
	/* S3's answers when the bucket lives in another region than the signature says */
	int region_hint = !strcmp(code, "PermanentRedirect") ||
			  !strcmp(code, "AuthorizationHeaderMalformed") || q->http == 301;
	snprintf(msg, len, "http %ld%s%s%s", q->http, code[0] ? " " : "", code,
		 region_hint ? " (is the bucket in another region? set AWS_REGION)" : "");
	if (q->http == 429 || q->http == 500 || q->http == 502 || q->http == 503 ||
	    q->http == 504 || !strcmp(code, "SlowDown") || !strcmp(code, "RequestTimeout") ||
	    !strcmp(code, "InternalError"))
		return 0;
	return -1;
}

/*
 * Runs reqs[0..n) with at most `conc` in flight.  new_reqs_until: no
 * request is started for the first time after this instant (time budget);
 * in-flight requests may finish until `grace_until`, then are dropped.
 * Returns the number of requests that succeeded.
 */
static int os_run_requests(struct os_state *s, struct os_req *reqs, int n, int conc,
			   double new_reqs_until, double grace_until, double *t_first,
			   double *t_last, long long *bytes_done, const char *what)
{
	int next = 0, active = 0, succeeded = 0;
	int waiting = 0; /* failed attempts waiting for their retry */
	long long total = 0;
	for (int i = 0; i < n; i++)
		total += reqs[i].len;
	*t_first = 0;
	*t_last = 0;
	*bytes_done = 0;
	for (;;) {
		double now = bench_now();
		/* start what may start: retries due first, then new requests */
		for (int i = 0; waiting && i < next && active < conc && now < grace_until; i++) {
			struct os_req *q = &reqs[i];
			if (q->done || q->easy || q->not_before > now || !q->attempt)
				continue;
			waiting--;
			if (os_start(s, q) || curl_multi_add_handle(s->multi, q->easy) != CURLM_OK) {
				os_finish_easy(s, q);
				q->done = 1;
				s->errors++;
				continue;
			}
			active++;
		}
		while (next < n && active < conc && now < new_reqs_until && now < grace_until) {
			struct os_req *q = &reqs[next++];
			if (os_start(s, q) || curl_multi_add_handle(s->multi, q->easy) != CURLM_OK) {
				os_finish_easy(s, q);
				q->done = 1;
				s->errors++;
				continue;
			}
			if (!*t_first)
				*t_first = now;
			active++;
		}
		if (!active && !waiting && (next >= n || now >= new_reqs_until))
			break;
		if (now >= grace_until)
			break;
		int still = 0;
		curl_multi_perform(s->multi, &still);
		CURLMsg *m;
		int left;
		while ((m = curl_multi_info_read(s->multi, &left))) {
			if (m->msg != CURLMSG_DONE)
				continue;
			struct os_req *q = NULL;
			curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, (char **)&q);
			if (!q || q < reqs || q >= reqs + n || q->easy != m->easy_handle)
				continue;
			CURLcode rc = m->data.result;
			char msg[400];
			int verdict = os_judge(s, q, rc, msg, sizeof msg);
			double t = bench_now();
			if (verdict == 1) {
				curl_off_t st = 0;
				curl_easy_getinfo(q->easy, CURLINFO_STARTTRANSFER_TIME_T, &st);
				q->ttfb_s = (double)st / 1e6;
				q->ok = q->done = 1;
				s->any_success = 1;
				succeeded++;
				*t_last = t;
				*bytes_done += q->len;
			} else {
				double backoff = 0.1 * (double)(1 << (q->attempt < 7 ? q->attempt - 1 : 6));
				if (backoff > 5)
					backoff = 5;
				backoff *= 0.5 + (double)(os_rand(s) % 1000) / 2000.0;
				q->failed = 1;
				snprintf(s->last_error, sizeof s->last_error, "%s %s: %s", os_kind_name(q->kind),
					 s->t.display, msg);
				if (verdict == 0 && q->attempt < OS_MAX_ATTEMPTS &&
				    t + backoff < grace_until - 0.5) {
					s->retries++;
					waiting++;
					q->not_before = t + backoff;
					bench_log(s->ctx, "%s %s: %s; retry %d in %.0f ms", what,
						  os_kind_name(q->kind), msg, q->attempt, backoff * 1000);
				} else {
					q->done = 1;
					s->errors++;
					if (!s->first_error[0])
						snprintf(s->first_error, sizeof s->first_error, "%s %s: %s%s",
							 os_kind_name(q->kind), s->t.display, msg,
							 verdict == 0 ? " (retries exhausted)" : "");
				}
			}
			os_finish_easy(s, q);
			active--;
		}
		if (total > 0)
			bench_progress(s->ctx, (double)*bytes_done / (double)total);
		int numfds = 0;
		curl_multi_poll(s->multi, NULL, 0, active ? 50 : 10, &numfds);
	}
	/*
	 * The time is up: drop what is still in flight.  A request that never
	 * failed is neither success nor error (the time budget ended it); one
	 * whose earlier attempts failed (a stalled server) is an error.
	 */
	for (int i = 0; i < n; i++) {
		struct os_req *q = &reqs[i];
		if (!q->done && q->failed) {
			q->done = 1;
			s->errors++;
			if (!s->first_error[0])
				snprintf(s->first_error, sizeof s->first_error, "%.440s (no answer before the deadline)",
					 s->last_error);
		}
		os_finish_easy(s, q);
	}
	return succeeded;
}

static void os_reqs_free(struct os_req *reqs, int n)
{
	for (int i = 0; i < n; i++)
		free(reqs[i].body);
	free(reqs);
}

/* Nearest-rank percentile of sorted v[0..n). */
static double os_pct(const double *v, int n, double p)
{
	if (n <= 0)
		return NAN;
	int k = (int)ceil(p / 100.0 * n) - 1;
	if (k < 0)
		k = 0;
	if (k >= n)
		k = n - 1;
	return v[k];
}

/* JSON-safe copy of a display URL (no quotes or control characters). */
static void os_json_safe(const char *in, char *out, size_t len)
{
	size_t w = 0;
	for (const unsigned char *p = (const unsigned char *)in; *p && w + 1 < len; p++)
		out[w++] = (*p < 0x20 || *p == '"' || *p == '\\') ? '_' : (char)*p;
	out[w] = 0;
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

/* One request run alone (with retries); 1 ok, 0 failed (s->first_error set). */
static int os_single(struct os_state *s, struct os_req *q, double until, const char *what)
{
	double t0, t1;
	long long b;
	if (until > s->hard_deadline)
		until = s->hard_deadline;
	return os_run_requests(s, q, 1, 1, until, until, &t0, &t1, &b, what) == 1;
}

static int os_put_phase(struct os_state *s)
{
	char rnd[17];
	snprintf(rnd, sizeof rnd, "%016llx", os_rand(s));
	s->put_key = os_aprintf("%s.gpuvet-put-%s", s->t.key, rnd);
	char *ek = objstore_uri_encode(s->put_key, 1);
	s->put_url = os_aprintf("%s/%s", s->t.base, ek);
	free(ek);
	double phase_end = bench_now() + s->plan.put_s + s->plan.low_speed_s;

	struct os_req create = { .kind = OS_CREATE };
	if (!os_single(s, &create, phase_end, "put")) {
		char code[64];
		os_s3_code(&create, code, sizeof code);
		free(create.body);
		if (create.http == 403 && !strcmp(code, "AccessDenied")) {
			/* read-only credentials, common for training data: GET is the measurement */
			bench_log(s->ctx, "put not measured: %s", s->first_error);
			s->errors--;
			return BENCH_OK;
		}
		bench_reason(s->ctx, "%s", s->first_error);
		return BENCH_FAIL;
	}
	s->put_state = 1; /* an upload is open: abort it if anything fails */
	int got_id = create.body &&
		     !objstore_xml_text(create.body, create.bodylen, "UploadId", s->upload_id,
					sizeof s->upload_id) && s->upload_id[0];
	free(create.body);
	if (!got_id) {
		bench_reason(s->ctx, "CreateMultipartUpload %s: no UploadId in the answer",
			     s->t.display);
		return BENCH_FAIL;
	}

	long long part = s->range < OS_MIN_PART ? OS_MIN_PART : s->range;
	int n = (int)(s->plan.put_bytes / part);
	if (n < 2)
		n = 2;
	if (n > OS_MAX_PARTS)
		n = OS_MAX_PARTS;
	struct os_req *parts = calloc((size_t)n, sizeof *parts);
	s->upload_len = (size_t)part;
	s->upload_buf = malloc(s->upload_len);
	if (!parts || !s->upload_buf)
		abort();
	for (size_t i = 0; i + 8 <= s->upload_len; i += 8) {
		unsigned long long r = os_rand(s);
		memcpy(s->upload_buf + i, &r, 8);
	}
	for (int i = 0; i < n; i++) {
		parts[i].kind = OS_PART;
		parts[i].part = i + 1;
		parts[i].len = part;
	}
	double start = bench_now();
	double stop_new = start + s->plan.put_s;
	double t0, t1;
	long long bytes;
	int ok = os_run_requests(s, parts, n, s->conc, stop_new, phase_end, &t0, &t1, &bytes, "put");
	/* the parts to complete: the leading run of successful parts */
	int k = 0;
	while (k < n && parts[k].ok)
		k++;
	int status = BENCH_OK;
	if (k == 0) {
		bench_reason(s->ctx, "%s", s->first_error[0] ? s->first_error
						   : "no part uploaded before the deadline");
		status = BENCH_FAIL;
	} else {
		/* each <Part> is its fixed text, the part number and an escaped ETag (< 400) */
		size_t cap = 128 + (size_t)k * 512, w = 0;
		char *xml = malloc(cap);
		if (!xml)
			abort();
		w += (size_t)snprintf(xml + w, cap - w, "<CompleteMultipartUpload>");
		long long done_bytes = 0;
		for (int i = 0; i < k; i++) {
			char esc[400];
			size_t e = 0;
			for (const char *p = parts[i].etag; *p && e + 7 < sizeof esc; p++) {
				if (*p == '&') { memcpy(esc + e, "&amp;", 5); e += 5; }
				else if (*p == '<') { memcpy(esc + e, "&lt;", 4); e += 4; }
				else if (*p == '>') { memcpy(esc + e, "&gt;", 4); e += 4; }
				else esc[e++] = *p;
			}
			esc[e] = 0;
			w += (size_t)snprintf(xml + w, cap - w,
					      "<Part><PartNumber>%d</PartNumber><ETag>%s</ETag></Part>",
					      parts[i].part, esc);
			done_bytes += parts[i].len;
		}
		snprintf(xml + w, cap - w, "</CompleteMultipartUpload>");
		struct os_req complete = { .kind = OS_COMPLETE, .postdata = xml };
		int cok = os_single(s, &complete, s->hard_deadline, "put");
		free(complete.body);
		if (!cok) {
			bench_reason(s->ctx, "%s", s->first_error);
			status = BENCH_FAIL;
		} else {
			double secs = bench_now() - t0;
			char disp[600], params[1024];
			os_json_safe(s->t.display, disp, sizeof disp);
			snprintf(params, sizeof params,
				 "{\"url\":\"%s\",\"part_bytes\":%lld,\"parts\":%d,\"concurrency\":%d,"
				 "\"bytes\":%lld,\"seconds\":%.3f,\"http\":\"1.1\"}",
				 disp, part, k, s->conc, done_bytes, secs);
			bench_metric(s->ctx, "objstore.put.gbps", -1, (double)done_bytes / secs / 1e9,
				     "GB/s", params);
			bench_log(s->ctx, "put: %d parts uploaded, the first %d completed, %lld bytes in "
				  "%.2f s", ok, k, done_bytes, secs);
			s->put_state = 2; /* completed: the object exists */
		}
		free(xml);
	}
	(void)bytes; /* parts after a failed one are uploaded but not completed */
	(void)t1;    /* the PUT time runs to the completion, not to the last part */
	os_reqs_free(parts, n);
	return status;
}

/* Removes what the PUT phase left: the test object, or the unfinished upload. */
static void os_put_cleanup(struct os_state *s)
{
	if (!s->put_url || !s->put_state)
		return;
	/* a short, separate allowance: cleaning up matters even when time is short */
	double until = bench_now() + 10;
	if (until > s->hard_deadline + 4)
		until = s->hard_deadline + 4;
	char saved[sizeof s->first_error];
	memcpy(saved, s->first_error, sizeof saved);
	int saved_errors = s->errors;
	double saved_deadline = s->hard_deadline;
	s->hard_deadline = until;
	struct os_req q = { .kind = s->put_state == 1 ? OS_ABORT : OS_DELETE };
	int ok = os_single(s, &q, until, "cleanup");
	free(q.body);
	if (!ok && q.kind == OS_ABORT) {
		/* the completion may have gone through with its answer lost */
		struct os_req d = { .kind = OS_DELETE };
		ok = os_single(s, &d, until, "cleanup");
		free(d.body);
	}
	if (!ok)
		bench_log(s->ctx, "could not remove the upload test object %s: %s", s->put_key,
			  s->first_error);
	s->hard_deadline = saved_deadline;
	s->errors = saved_errors; /* cleanup is not part of the measurement */
	memcpy(s->first_error, saved, sizeof saved);
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
