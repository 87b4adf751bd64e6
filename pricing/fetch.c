/* fetch.c - the libcurl helper of the price fetchers (see fetch.h) */
#include "pricing/fetch.h"
#include "common/util.h"

#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct xfer {
	const struct fetch_req *req;
	CURL *c;
	long status;
	int checked;
	int aborted;
	char body[256];   /* start of an error answer, for the message */
	size_t body_len;
	curl_off_t last_progress;
};

static size_t on_write(char *ptr, size_t size, size_t nmemb, void *ud)
{
	struct xfer *x = ud;
	size_t n = size * nmemb;
	if (!x->checked) {
		curl_easy_getinfo(x->c, CURLINFO_RESPONSE_CODE, &x->status);
		x->checked = 1;
	}
	if (x->status >= 300) {
		/* keep the start of the error answer; never hand it to the parser */
		size_t room = sizeof x->body - 1 - x->body_len;
		size_t k = n < room ? n : room;
		memcpy(x->body + x->body_len, ptr, k);
		x->body_len += k;
		return n;
	}
	if (x->req->on_data(x->req->ud, ptr, n) != 0) {
		x->aborted = 1;
		return 0;
	}
	return n;
}

static int on_progress(void *ud, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal, curl_off_t ulnow)
{
	struct xfer *x = ud;
	(void)ultotal;
	(void)ulnow;
	if (dlnow - x->last_progress >= (8 << 20)) {
		x->last_progress = dlnow;
		if (dltotal > 0)
			fprintf(stderr, "\rgpuvet: %lld of %lld MB", (long long)(dlnow >> 20),
				(long long)(dltotal >> 20));
		else
			fprintf(stderr, "\rgpuvet: %lld MB", (long long)(dlnow >> 20));
	}
	return 0;
}

/* One printable line from the start of an error body */
static void body_excerpt(const char *b, size_t n, char *out, size_t size)
{
	size_t j = 0;
	for (size_t i = 0; i < n && j + 1 < size && j < 120; i++)
		out[j++] = (b[i] >= 0x20 && b[i] < 0x7f) ? b[i] : ' ';
	out[j] = '\0';
}

int fetch_run(const struct fetch_req *r, long *http_status, char *err, size_t errlen)
{
	struct xfer x = { .req = r };
	struct curl_slist *hdrs = NULL;
	int rc = -1;

	if (curl_global_init(CURL_GLOBAL_DEFAULT) != 0) {
		snprintf(err, errlen, "cannot initialise libcurl");
		return -1;
	}
	x.c = curl_easy_init();
	if (!x.c) {
		snprintf(err, errlen, "cannot initialise libcurl");
		curl_global_cleanup();
		return -1;
	}
	for (const char *const *h = r->headers; h && *h; h++)
		hdrs = curl_slist_append(hdrs, *h);
	curl_easy_setopt(x.c, CURLOPT_URL, r->url);
	curl_easy_setopt(x.c, CURLOPT_HTTPHEADER, hdrs);
	curl_easy_setopt(x.c, CURLOPT_WRITEFUNCTION, on_write);
	curl_easy_setopt(x.c, CURLOPT_WRITEDATA, &x);
	curl_easy_setopt(x.c, CURLOPT_FOLLOWLOCATION, 1L);
	curl_easy_setopt(x.c, CURLOPT_MAXREDIRS, 5L);
	curl_easy_setopt(x.c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(x.c, CURLOPT_CONNECTTIMEOUT, 30L);
	curl_easy_setopt(x.c, CURLOPT_LOW_SPEED_LIMIT, 1L);
	curl_easy_setopt(x.c, CURLOPT_LOW_SPEED_TIME, 60L);
	curl_easy_setopt(x.c, CURLOPT_ACCEPT_ENCODING, "");
	curl_easy_setopt(x.c, CURLOPT_USERAGENT, "gpuvet/" GPUVET_VERSION);
	if (r->timeout_s > 0)
		curl_easy_setopt(x.c, CURLOPT_TIMEOUT, r->timeout_s);
	if (r->aws_sigv4) {
		curl_easy_setopt(x.c, CURLOPT_AWS_SIGV4, r->aws_sigv4);
		curl_easy_setopt(x.c, CURLOPT_USERPWD, r->userpwd);
	}
	if (gv_progress_enabled()) {
		curl_easy_setopt(x.c, CURLOPT_XFERINFOFUNCTION, on_progress);
		curl_easy_setopt(x.c, CURLOPT_XFERINFODATA, &x);
		curl_easy_setopt(x.c, CURLOPT_NOPROGRESS, 0L);
	}
	CURLcode cc = curl_easy_perform(x.c);
	char shown[1024];   /* the URL as messages may quote it: no credential (common/util.h gv_redact) */
	gv_redact(r->url, shown, sizeof shown);
	if (x.last_progress)
		fputc('\n', stderr);
	if (!x.checked)
		curl_easy_getinfo(x.c, CURLINFO_RESPONSE_CODE, &x.status);
	if (http_status)
		*http_status = x.status;
	if (x.aborted) {
		/* the data callback said why */
	} else if (cc == CURLE_PARTIAL_FILE) {
		snprintf(err, errlen, "transfer from %s cut short (truncated answer)", shown);
	} else if (cc != CURLE_OK) {
		snprintf(err, errlen, "cannot fetch %s: %s", shown, curl_easy_strerror(cc));
	} else if (x.status >= 300) {
		char ex[128];
		body_excerpt(x.body, x.body_len, ex, sizeof ex);
		snprintf(err, errlen, "HTTP %ld from %s%s%s", x.status, shown, ex[0] ? ": " : "", ex);
	} else {
		rc = 0;
	}
	curl_slist_free_all(hdrs);
	curl_easy_cleanup(x.c);
	curl_global_cleanup();
	return rc;
}

struct small {
	char *buf;
	size_t len, max;
	char *err;
	size_t errlen;
	const char *url;
};

static int small_data(void *ud, const char *buf, size_t len)
{
	struct small *s = ud;
	if (s->len + len > s->max) {
		char shown[1024];
		snprintf(s->err, s->errlen, "answer from %s is larger than %zu bytes", gv_redact(s->url, shown, sizeof shown),
			 s->max);
		return -1;
	}
	s->buf = gv_realloc(s->buf, s->len + len + 1);
	memcpy(s->buf + s->len, buf, len);
	s->len += len;
	s->buf[s->len] = '\0';
	return 0;
}

int fetch_small(const char *url, const char *const *headers, size_t max, char **out, size_t *len,
		long *http_status, char *err, size_t errlen)
{
	struct fetch_req r = { .headers = headers, .timeout_s = 120 };
	return fetch_small_req(&r, url, max, out, len, http_status, err, errlen);
}

int fetch_small_req(struct fetch_req *r, const char *url, size_t max, char **out, size_t *len,
		    long *http_status, char *err, size_t errlen)
{
	struct small s = { .max = max, .err = err, .errlen = errlen, .url = url };
	r->url = url;
	r->on_data = small_data;
	r->ud = &s;
	if (r->timeout_s <= 0)
		r->timeout_s = 120;
	if (fetch_run(r, http_status, err, errlen) < 0) {
		free(s.buf);
		return -1;
	}
	if (!s.buf) {
		s.buf = gv_malloc(1);
		s.buf[0] = '\0';
	}
	*out = s.buf;
	*len = s.len;
	return 0;
}
