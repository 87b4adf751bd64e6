/*
 * fetch.h - the provider price fetchers and the small libcurl helper they
 * share.
 *
 * Every fetcher streams: bytes go from libcurl's write callback straight
 * into a parser (libcsv for AWS, a bounded buffer for the small JSON
 * answers of Lambda and Alibaba), and rows go straight into ONE store
 * transaction that replaces the source's previous rows.  An HTTP error, a
 * transfer cut short, or a row that does not parse rolls the transaction
 * back: the previous prices stay, price_sources records the failure, and
 * the caller prints one line and exits 2.
 *
 * Endpoints can be redirected for tests and mirrors:
 *   GPUVET_AWS_PRICING_URL   (may contain "{region}")
 *   GPUVET_LAMBDA_API_URL    (the instance-types endpoint)
 *   GPUVET_ALIBABA_API_URL   (the ECS RPC endpoint)
 */
#ifndef GPUVET_FETCH_H
#define GPUVET_FETCH_H

#include <stddef.h>
#include <stdint.h>

#include "pricing/catalog.h"
#include "common/crypto.h"

/* ---- libcurl helper ---- */

/* Receives the body of a 2xx answer; non-zero aborts the transfer (the callback sets err). */
typedef int (*fetch_data_fn)(void *ud, const char *buf, size_t len);

struct fetch_req {
	const char *url;
	const char *const *headers;  /* NULL-terminated "Name: value" lines, or NULL */
	long timeout_s;              /* whole transfer; 0: none (a stall of 60 s still aborts) */
	fetch_data_fn on_data;
	void *ud;
	const char *aws_sigv4;       /* "aws:amz:REGION:SERVICE": libcurl signs the request (SigV4), or NULL */
	const char *userpwd;         /* "KEY:SECRET" for aws_sigv4 */
};

/* 0 on a complete 2xx answer; -1 with err ("HTTP 500 from URL", "transfer cut short"...). */
int fetch_run(const struct fetch_req *r, long *http_status, char *err, size_t errlen);

/* Fetches a small document (at most max bytes) into a malloc'd NUL-terminated buffer. */
int fetch_small(const char *url, const char *const *headers, size_t max, char **out, size_t *len,
		long *http_status, char *err, size_t errlen);
/* Same, with the request prepared by the caller (aws_sigv4, userpwd, headers); url/on_data/ud are set here. */
int fetch_small_req(struct fetch_req *r, const char *url, size_t max, char **out, size_t *len,
		    long *http_status, char *err, size_t errlen);

/* ---- AWS: the public bulk price list, per region, CSV ---- */

typedef int (*price_emit_fn)(void *ud, const struct price_rec *r, char *err, size_t errlen);

struct aws_parser;
/* region: used when the file has no "Region Code" column. */
struct aws_parser *aws_parser_new(const char *region, price_emit_fn emit, void *ud);
void aws_parser_free(struct aws_parser *p);
/* Prefilters on (the default) or off: off parses every line with libcsv (tests, fuzzing); before the first feed. */
void aws_parser_set_prefilter(struct aws_parser *p, int on);
int aws_parser_feed(struct aws_parser *p, const void *buf, size_t len);
int aws_parser_finish(struct aws_parser *p);
const char *aws_parser_error(const struct aws_parser *p);
/* rows emitted, lines read, lines skipped unparsed by the "GPU instance" prefilter */
void aws_parser_stats(const struct aws_parser *p, long *emitted, long *lines, long *skipped);
/* GPU model key and count of an NVIDIA GPU instance type ("p5.48xlarge"); NULL if not one. */
const char *aws_gpu_family(const char *instance_type, double *gpus);

int fetch_aws(sqlite3 *db, const char *region, long *rows, char *err, size_t errlen);

/*
 * Spot prices: EC2 DescribeSpotPriceHistory (Linux/UNIX, StartTime now: the price in
 * force per availability zone) for every AWS GPU type in the store, signed with SigV4
 * by libcurl.  Credentials AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY (/ AWS_SESSION_TOKEN);
 * endpoint https://ec2.REGION.amazonaws.com/ or GPUVET_AWS_EC2_URL.
 */
int aws_spot_parse(const char *xml, size_t len, price_emit_fn emit, void *ud, char *next_token,
		   size_t next_size, char *err, size_t errlen);
int fetch_aws_spot(sqlite3 *db, const char *region, long *rows, char *err, size_t errlen);

/* ---- Lambda: GET /api/v1/instance-types (API key in LAMBDA_API_KEY) ---- */

int lambda_parse(const char *json, size_t len, const char *captured_at, price_emit_fn emit,
		 void *ud, char *err, size_t errlen);
int fetch_lambda(sqlite3 *db, long *rows, char *err, size_t errlen);

/* ---- Alibaba Cloud: ECS DescribePrice, RPC signature v1 (HMAC-SHA1) ---- */

/* Parses a DescribePrice answer: the trade price per hour and its currency. */
int alibaba_parse_price(const char *json, size_t len, double *price, char currency[4],
			char *err, size_t errlen);
/*
 * The signed query string of an RPC call: params are "Key=Value" pairs
 * (unencoded), sorted and percent-encoded here; Signature is appended.
 * Returns a malloc'd string.
 */
char *alibaba_signed_query(const char *const *params, size_t n, const char *secret);
/* Its SHA-1, HMAC-SHA1 and base64: common/crypto.h (libcrypto). */

/* The URL of a signed ECS RPC call (Action, RegionId, JSON, version 2014-05-26, the signature's own
 * parameters) with extra "Key=Value" parameters; malloc'd. */
char *alibaba_rpc_url(const char *endpoint, const char *action, const char *region, const char *const *extra,
		      size_t nextra, const char *id, const char *secret);
/* Both ECS calls' inputs: credentials present (else err and -1), endpoint and region defaulted. */
int alibaba_call_args(const char *id, const char *secret, const char **endpoint, const char **region, char *err,
		      size_t errlen);
/* Adds the comma-separated types the list does not hold yet (--types). */
void alibaba_add_types(struct catalog_sku **skus, size_t *nskus, const char *types);

/* types: comma-separated instance types to price besides those already in the store, or NULL. */
int fetch_alibaba(sqlite3 *db, const char *region, const char *types, long *rows, char *err, size_t errlen);

/*
 * Preemptible (spot) prices: DescribeSpotPriceHistory (fetch_alibaba_spot.c) per type, Linux, VPC,
 * the last hours' history; each zone's latest price is kept, with its own timestamp as captured_at.
 */
struct alibaba_spot {
	char zone[64], timestamp[32];
	double price;
};
/* Parses an answer: each zone's latest price of instance_type into *out (malloc'd), its currency. */
int alibaba_parse_spot(const char *json, size_t len, const char *instance_type, struct alibaba_spot **out,
		       size_t *n, char currency[4], char *err, size_t errlen);
int fetch_alibaba_spot(sqlite3 *db, const char *region, const char *types, long *rows, char *err, size_t errlen);

#endif
