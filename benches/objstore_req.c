/*
 * objstore_req.c - the object-store bench's request engine (objstore.c has
 * the phases and the metrics): one libcurl multi handle with at most C
 * requests in flight, SigV4 by libcurl, retries with jittered backoff, and
 * the judge of each answer (HTTP status, S3 error code, short bodies).
 */
#include "benches/objstore_int.h"
#include "common/stats.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

const char *os_kind_name(enum os_kind k)
{
	static const char *n[] = { "GET", "GET", "CreateMultipartUpload", "UploadPart",
				   "CompleteMultipartUpload", "DELETE", "AbortMultipartUpload" };
	return n[k];
}

/* ---- helpers ---- */

unsigned long long os_rand(struct os_state *s)
{
	unsigned long long x = s->rng;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return s->rng = x;
}

void os_wipe_free(char *p)
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

char *os_aprintf(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *p = NULL;
	if (vasprintf(&p, fmt, ap) < 0)
		abort();
	va_end(ap);
	return p;
}

void os_load_region(struct os_state *s)
{
	objstore_aws_region(s->region, sizeof s->region);
}

int os_load_credentials(struct os_state *s, char *why, size_t whylen)
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
/* The request's method, URL and body by its kind: the URL (malloc'd). */
static char *os_set_method(struct os_state *s, struct os_req *q, CURL *e)
{
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
	return url;
}

/* What every request carries: callbacks, timeouts within the bench's deadline, SigV4 for S3. */
static void os_set_common(struct os_state *s, struct os_req *q, CURL *e)
{
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
	/* CompleteMultipartUpload: the server assembles the object before it answers (S3 documents minutes, keeping
	 * the connection with white space; moto and MinIO stay silent).  Bounded by the deadline alone: cut as a
	 * stall, it was sent again while the first was still assembling, and moto failed both (http 500) */
	if (q->kind == OS_COMPLETE)
		curl_easy_setopt(e, CURLOPT_LOW_SPEED_TIME, 0L);
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
}

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
	char *url = os_set_method(s, q, e);
	curl_easy_setopt(e, CURLOPT_URL, url);
	free(url);
	os_set_common(s, q, e);
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
void os_s3_code(const struct os_req *q, char *out, size_t len)
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
/* A failed attempt: retried after a jittered backoff while attempts and time remain (1), else given up (0). */
static int os_failed_attempt(struct os_state *s, struct os_req *q, int verdict, const char *msg, const char *what,
			     double t, double grace_until)
{
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
		q->not_before = t + backoff;
		bench_log(s->ctx, "%s %s: %s; retry %d in %.0f ms", what,
			  os_kind_name(q->kind), msg, q->attempt, backoff * 1000);
		return 1;
	}
	q->done = 1;
	s->errors++;
	if (!s->first_error[0])
		snprintf(s->first_error, sizeof s->first_error, "%s %s: %s%s",
			 os_kind_name(q->kind), s->t.display, msg,
			 verdict == 0 ? " (retries exhausted)" : "");
	return 0;
}

/*
 * The time is up: drop what is still in flight.  A request that never
 * failed is neither success nor error (the time budget ended it); one
 * whose earlier attempts failed (a stalled server) is an error.
 */
static void os_drop_in_flight(struct os_state *s, struct os_req *reqs, int n)
{
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
}

int os_run_requests(struct os_state *s, struct os_req *reqs, int n, int conc,
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
				waiting += os_failed_attempt(s, q, verdict, msg, what, t, grace_until);
			}
			os_finish_easy(s, q);
			active--;
		}
		if (total > 0)
			bench_progress(s->ctx, (double)*bytes_done / (double)total);
		int numfds = 0;
		curl_multi_poll(s->multi, NULL, 0, active ? 50 : 10, &numfds);
	}
	os_drop_in_flight(s, reqs, n);
	return succeeded;
}

/* One request run alone (with retries); 1 ok, 0 failed (s->first_error set). */
int os_single(struct os_state *s, struct os_req *q, double until, const char *what)
{
	double t0, t1;
	long long b;
	if (until > s->hard_deadline)
		until = s->hard_deadline;
	return os_run_requests(s, q, 1, 1, until, until, &t0, &t1, &b, what) == 1;
}

void os_reqs_free(struct os_req *reqs, int n)
{
	for (int i = 0; i < n; i++)
		free(reqs[i].body);
	free(reqs);
}

/* Nearest-rank percentile of sorted v[0..n). */
double os_pct(const double *v, int n, double p)
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
void os_json_safe(const char *in, char *out, size_t len)
{
	size_t w = 0;
	for (const unsigned char *p = (const unsigned char *)in; *p && w + 1 < len; p++)
		out[w++] = (*p < 0x20 || *p == '"' || *p == '\\') ? '_' : (char)*p;
	out[w] = 0;
}

