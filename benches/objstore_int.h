/*
 * objstore_int.h - private to benches/objstore*.c: the state of the object-
 * store bench shared by its phases (objstore.c) and its request engine
 * (objstore_req.c: one libcurl multi handle, retries, the S3 error judge).
 */
#ifndef GPUVET_OBJSTORE_INT_H
#define GPUVET_OBJSTORE_INT_H

#include "benches/bench.h"
#include "platform/objstore_util.h"

#include <curl/curl.h>
#include <stddef.h>

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
enum os_kind { OS_PROBE, OS_GET, OS_CREATE, OS_PART, OS_COMPLETE, OS_DELETE, OS_ABORT };


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

/* ---- objstore_req.c ---- */
const char *os_kind_name(enum os_kind k);
unsigned long long os_rand(struct os_state *s);
void os_wipe_free(char *p);
char *os_aprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void os_load_region(struct os_state *s);
int os_load_credentials(struct os_state *s, char *why, size_t whylen);
void os_s3_code(const struct os_req *q, char *out, size_t len);
int os_run_requests(struct os_state *s, struct os_req *reqs, int n, int conc, double new_reqs_until,
		    double grace_until, double *t_first, double *t_last, long long *bytes_done, const char *what);
/* One request on its own (create, complete, delete, abort) until until; 1 done, 0 failed (said in s). */
int os_single(struct os_state *s, struct os_req *q, double until, const char *what);
void os_reqs_free(struct os_req *reqs, int n);
double os_pct(const double *v, int n, double p);
void os_json_safe(const char *in, char *out, size_t len);

/* ---- objstore_put.c ---- */
int os_put_phase(struct os_state *s);
/* Deletes what the PUT left: the object written, or the upload still open. */
void os_put_cleanup(struct os_state *s);

#endif
