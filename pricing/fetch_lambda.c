/*
 * fetch_lambda.c - Lambda Cloud prices from its instance-types API.
 *
 *   GET https://cloud.lambda.ai/api/v1/instance-types
 *   Authorization: Bearer $LAMBDA_API_KEY
 *
 * answers {"data": {"gpu_1x_a10": {"instance_type": {"name": ...,
 * "description": ..., "gpu_description": ..., "price_cents_per_hour": 75,
 * "specs": {"vcpus": 30, "memory_gib": 200, "storage_gib": 1400,
 * "gpus": 1}}, "regions_with_capacity_available": [...]}, ...}}.
 * Lambda charges the same price in every region, so rows carry region ""
 * (any region).  The answer is a few kilobytes; it is read into a buffer
 * capped at 4 MiB and parsed with jansson.
 */
#include "pricing/fetch.h"
#include "common/util.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define LAMBDA_MAX_ANSWER (4u << 20)

/* Lambda's type names -> reference GPU keys (common/gpus.h); order matters (a100_80gb before a100) */
static const struct {
	const char *part;
	const char *gpu;
} lambda_gpus[] = {
	{ "b200", "B200" },          { "gh200", "GH200" },          { "h100_sxm", "H100-SXM" },
	{ "h100_pcie", "H100-PCIE" }, { "h100", "H100-SXM" },       { "a100_80gb", "A100-80-SXM" },
	{ "a100", "A100-40-SXM" },   { "a6000", "RTX-A6000" },      { "rtx6000", "RTX6000" },
	{ "a10", "A10" },            { "v100", "V100-SXM2-16" },
};

static const char *lambda_gpu_key(const char *name)
{
	for (size_t i = 0; i < sizeof lambda_gpus / sizeof lambda_gpus[0]; i++)
		if (strstr(name, lambda_gpus[i].part))
			return lambda_gpus[i].gpu;
	return NULL;
}

static int num(json_t *o, const char *key, double *out)
{
	json_t *v = json_object_get(o, key);
	if (!json_is_number(v))
		return -1;
	*out = json_number_value(v);
	return isfinite(*out) ? 0 : -1;
}

int lambda_parse(const char *json, size_t len, const char *captured_at, price_emit_fn emit,
		 void *ud, char *err, size_t errlen)
{
	json_error_t je;
	json_t *root = json_loadb(json, len, JSON_REJECT_DUPLICATES, &je);
	int rc = -1;
	if (!root) {
		snprintf(err, errlen, "lambda answer is not JSON: %s (line %d)", je.text, je.line);
		return -1;
	}
	json_t *data = json_object_get(root, "data");
	if (!json_is_object(data)) {
		json_t *e = json_object_get(root, "error");
		const char *m = json_string_value(json_object_get(e, "message"));
		snprintf(err, errlen, "lambda answer has no \"data\" object%s%.200s", m ? ": " : "", m ? m : "");
		goto out;
	}
	const char *key;
	json_t *v;
	json_object_foreach(data, key, v) {
		json_t *it = json_object_get(v, "instance_type");
		json_t *specs = json_object_get(it, "specs");
		const char *name = json_string_value(json_object_get(it, "name"));
		double cents, gpus = 0, vcpus, mem;
		if (!json_is_object(it) || !name || !*name) {
			snprintf(err, errlen, "lambda answer: entry '%.80s' has no instance_type.name", key);
			goto out;
		}
		if (json_is_object(specs) && num(specs, "gpus", &gpus) == 0 && gpus <= 0)
			continue; /* CPU-only types are not ranked */
		if (num(it, "price_cents_per_hour", &cents) < 0) {
			snprintf(err, errlen, "lambda answer: '%.80s' has no numeric price_cents_per_hour", name);
			goto out;
		}
		if (cents < 0) {
			snprintf(err, errlen, "lambda answer: '%.80s' has a negative price", name);
			goto out;
		}
		struct price_rec r;
		char e2[320];
		price_rec_init(&r);
		gv_strlcpy(r.provider, "lambda", sizeof r.provider);
		if (gv_strlcpy(r.instance_type, name, sizeof r.instance_type) >= sizeof r.instance_type) {
			snprintf(err, errlen, "lambda answer: instance type name too long");
			goto out;
		}
		const char *gpu = lambda_gpu_key(name);
		if (!gpu)
			gpu = json_string_value(json_object_get(it, "gpu_description"));
		if (gpu)
			gv_strlcpy(r.gpu_model, gpu, sizeof r.gpu_model);
		if (json_is_object(specs)) {
			if (num(specs, "gpus", &gpus) == 0)
				r.gpu_count = gpus;
			if (num(specs, "vcpus", &vcpus) == 0 && vcpus >= 0 && vcpus < 1e6)
				r.vcpus = (long)vcpus;
			if (num(specs, "memory_gib", &mem) == 0 && mem >= 0)
				r.memory_gib = mem;
		}
		gv_strlcpy(r.market, "on_demand", sizeof r.market);
		r.price = cents / 100.0;
		gv_strlcpy(r.unit, "hour", sizeof r.unit);
		gv_strlcpy(r.currency, "USD", sizeof r.currency);
		gv_strlcpy(r.source, "lambda-api", sizeof r.source);
		gv_strlcpy(r.source_version, "v1", sizeof r.source_version);
		gv_strlcpy(r.captured_at, captured_at, sizeof r.captured_at);
		const char *bad = price_rec_check(&r, e2, sizeof e2); /* zero, 1e300: refused here */
		if (bad) {
			snprintf(err, errlen, "lambda answer: '%.80s': %s", name, bad);
			goto out;
		}
		if (emit(ud, &r, e2, sizeof e2) != 0) {
			snprintf(err, errlen, "lambda answer: '%.80s': %s", name, e2);
			goto out;
		}
	}
	rc = 0;
out:
	json_decref(root);
	return rc;
}

static int lambda_emit(void *ud, const struct price_rec *r, char *err, size_t errlen)
{
	return catalog_load_put(ud, r, err, errlen);
}

int fetch_lambda(sqlite3 *db, long *rows, char *err, size_t errlen)
{
	const char *key = getenv("LAMBDA_API_KEY");
	const char *url = getenv("GPUVET_LAMBDA_API_URL");
	char auth[512], now[32];
	char *body = NULL;
	size_t len = 0;
	struct catalog_load *load = NULL;

	if (!url || !*url)
		url = "https://cloud.lambda.ai/api/v1/instance-types";
	if (!key || !*key) {
		snprintf(err, errlen, "no lambda api key: set LAMBDA_API_KEY (or import a CSV with gpuvet prices import FILE)");
		return -1;
	}
	if (strlen(key) > 400 || strpbrk(key, "\r\n")) {
		snprintf(err, errlen, "LAMBDA_API_KEY is not a valid key");
		return -1;
	}
	snprintf(auth, sizeof auth, "Authorization: Bearer %s", key);
	const char *hdrs[] = { auth, "Accept: application/json", NULL };
	err[0] = '\0';
	if (fetch_small(url, hdrs, LAMBDA_MAX_ANSWER, &body, &len, NULL, err, errlen) < 0)
		goto fail;
	gv_iso8601((long)time(NULL), now, sizeof now);
	if (catalog_load_begin(db, &load, err, errlen) < 0)
		goto fail;
	if (lambda_parse(body, len, now, lambda_emit, load, err, errlen) < 0)
		goto fail;
	if (catalog_load_rows(load) == 0) {
		snprintf(err, errlen, "lambda answer lists no GPU instance types");
		goto fail;
	}
	long n = catalog_load_rows(load);
	free(body);
	if (catalog_load_commit(load, "lambda", url, err, errlen) < 0)
		return -1;
	if (rows)
		*rows = n;
	return 0;
fail:
	free(body);
	catalog_load_abort(load);
	catalog_note_failure(db, "lambda-api", "lambda", err);
	return -1;
}
