/*
 * fetch_alibaba_spot.c - Alibaba Cloud ECS preemptible (spot) prices from
 * DescribeSpotPriceHistory (fetch.h).
 *
 * One signed RPC call per instance type (the types the store knows for
 * alibaba, and --types), Linux, VPC, over the API's default window (the
 * last three hours):
 *   GET https://ecs.aliyuncs.com/?Action=DescribeSpotPriceHistory&RegionId=R
 *       &InstanceType=T&NetworkType=vpc&OSType=linux&Format=JSON&...&Signature=..
 * The answer lists {ZoneId, InstanceType, Timestamp, SpotPrice, OriginPrice,
 * NetworkType, IoOptimized} under SpotPrices.SpotPriceType, with one
 * Currency; each zone's latest price becomes a spot row (its zone kept,
 * captured_at its own timestamp) of source alibaba-spot:REGION, replaced as a
 * whole in one transaction.  A type the region does not sell is skipped.
 */
#include "pricing/fetch.h"
#include "common/util.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int spot_entry(json_t *e, const char *instance_type, struct alibaba_spot **out, size_t *n, char *err,
		      size_t errlen)
{
	const char *zone = json_string_value(json_object_get(e, "ZoneId"));
	const char *ts = json_string_value(json_object_get(e, "Timestamp"));
	const char *it = json_string_value(json_object_get(e, "InstanceType"));
	const char *net = json_string_value(json_object_get(e, "NetworkType"));
	json_t *p = json_object_get(e, "SpotPrice");
	if (it && strcmp(it, instance_type))
		return 0; /* another type's row */
	if (net && strcmp(net, "vpc"))
		return 0;
	if (!zone || !*zone || strlen(zone) >= sizeof (*out)->zone || !ts || strlen(ts) >= sizeof (*out)->timestamp) {
		snprintf(err, errlen, "alibaba spot answer: an entry without ZoneId or Timestamp");
		return -1;
	}
	if (!json_is_number(p) || !isfinite(json_number_value(p)) || !(json_number_value(p) > 0)) {
		snprintf(err, errlen, "alibaba spot answer: SpotPrice of %.64s in %.64s is not a positive number",
			 instance_type, zone);
		return -1;
	}
	for (size_t i = 0; i < *n; i++)
		if (!strcmp((*out)[i].zone, zone)) {
			if (strcmp(ts, (*out)[i].timestamp) >= 0) { /* ISO 8601 UTC: the later sorts later */
				gv_strlcpy((*out)[i].timestamp, ts, sizeof (*out)[i].timestamp);
				(*out)[i].price = json_number_value(p);
			}
			return 0;
		}
	*out = gv_realloc(*out, (*n + 1) * sizeof **out);
	struct alibaba_spot *s = &(*out)[(*n)++];
	gv_strlcpy(s->zone, zone, sizeof s->zone);
	gv_strlcpy(s->timestamp, ts, sizeof s->timestamp);
	s->price = json_number_value(p);
	return 0;
}

int alibaba_parse_spot(const char *json, size_t len, const char *instance_type, struct alibaba_spot **out,
		       size_t *n, char currency[4], char *err, size_t errlen)
{
	json_error_t je;
	json_t *root = json_loadb(json, len, 0, &je);
	*out = NULL;
	*n = 0;
	if (!root) {
		snprintf(err, errlen, "alibaba spot answer is not JSON: %s", je.text);
		return -1;
	}
	const char *code = json_string_value(json_object_get(root, "Code"));
	const char *cur = json_string_value(json_object_get(root, "Currency"));
	json_t *list = json_object_get(json_object_get(root, "SpotPrices"), "SpotPriceType");
	int rc = -1;
	if (code) {
		const char *m = json_string_value(json_object_get(root, "Message"));
		snprintf(err, errlen, "alibaba error %.80s%s%.160s", code, m ? ": " : "", m ? m : "");
	} else if (!json_is_array(list)) {
		snprintf(err, errlen, "alibaba spot answer has no SpotPrices.SpotPriceType list");
	} else if (json_array_size(list) && (!cur || strlen(cur) != 3)) {
		snprintf(err, errlen, "alibaba spot answer has no 3-letter Currency");
	} else {
		size_t i;
		json_t *e;
		rc = 0;
		json_array_foreach(list, i, e)
			if ((rc = spot_entry(e, instance_type, out, n, err, errlen)) < 0)
				break;
		if (rc == 0)
			memcpy(currency, cur ? cur : "USD", 4);
	}
	if (rc < 0) {
		free(*out);
		*out = NULL;
		*n = 0;
	}
	json_decref(root);
	return rc;
}

/* One type's spot prices into the load: how many zones, -1 with err. */
static long spot_one(struct catalog_load *load, const struct catalog_sku *k, const char *region, const char *endpoint,
		     const char *id, const char *secret, const char *source, char *err, size_t errlen)
{
	char p_type[160], *body = NULL, cur[4];
	size_t len = 0, n = 0;
	long status = 0;
	struct alibaba_spot *z = NULL;
	snprintf(p_type, sizeof p_type, "InstanceType=%s", k->instance_type);
	const char *params[] = { p_type, "NetworkType=vpc", "OSType=linux" };
	char *url = alibaba_rpc_url(endpoint, "DescribeSpotPriceHistory", region, params, 3, id, secret);
	int frc = fetch_small(url, NULL, 4u << 20, &body, &len, &status, err, errlen);
	free(url);
	if (frc < 0) {
		if ((status == 400 || status == 404) && strstr(err, "InvalidInstanceType")) {
			err[0] = '\0'; /* not sold in this region */
			return 0;
		}
		return -1;
	}
	int prc = alibaba_parse_spot(body, len, k->instance_type, &z, &n, cur, err, errlen);
	free(body);
	for (size_t i = 0; prc == 0 && i < n; i++) {
		struct price_rec r;
		char e2[320];
		price_rec_init(&r);
		gv_strlcpy(r.provider, "alibaba", sizeof r.provider);
		gv_strlcpy(r.instance_type, k->instance_type, sizeof r.instance_type);
		gv_strlcpy(r.region, region, sizeof r.region);
		gv_strlcpy(r.zone, z[i].zone, sizeof r.zone);
		if (k->gpu_model)
			gv_strlcpy(r.gpu_model, k->gpu_model, sizeof r.gpu_model);
		r.gpu_count = k->gpu_count;
		r.vcpus = k->vcpus;
		r.memory_gib = k->memory_gib;
		gv_strlcpy(r.market, "spot", sizeof r.market);
		r.price = z[i].price;
		gv_strlcpy(r.unit, "hour", sizeof r.unit);
		gv_strlcpy(r.currency, cur, sizeof r.currency);
		gv_strlcpy(r.source, source, sizeof r.source);
		gv_strlcpy(r.source_version, "2014-05-26", sizeof r.source_version);
		gv_strlcpy(r.captured_at, z[i].timestamp, sizeof r.captured_at);
		if (catalog_load_put(load, &r, e2, sizeof e2) < 0) {
			snprintf(err, errlen, "alibaba spot %s: %s", k->instance_type, e2);
			prc = -1;
		}
	}
	free(z);
	return prc < 0 ? -1 : (long)n;
}

int fetch_alibaba_spot(sqlite3 *db, const char *region, const char *types, long *rows, char *err, size_t errlen)
{
	const char *id = getenv("ALIBABA_CLOUD_ACCESS_KEY_ID"), *secret = getenv("ALIBABA_CLOUD_ACCESS_KEY_SECRET");
	const char *endpoint = getenv("GPUVET_ALIBABA_API_URL");
	struct catalog_sku *skus = NULL;
	size_t nskus = 0;
	struct catalog_load *load = NULL;
	char source[96];
	int rc = -1;
	if (alibaba_call_args(id, secret, &endpoint, &region, err, errlen))
		return -1;
	snprintf(source, sizeof source, "alibaba-spot:%s", region);
	err[0] = '\0';
	if (catalog_skus(db, "alibaba", &skus, &nskus, err, errlen) < 0)
		return -1;
	alibaba_add_types(&skus, &nskus, types);
	if (catalog_load_begin(db, &load, err, errlen) < 0)
		goto out;
	for (size_t i = 0; i < nskus; i++)
		if (spot_one(load, &skus[i], region, endpoint, id, secret, source, err, errlen) < 0)
			goto out;
	long n = catalog_load_rows(load);
	if (n == 0) { /* nothing preemptible in the region: the previous spot prices are kept */
		snprintf(err, errlen, "alibaba sells none of the %zu known instance types as spot in %s", nskus, region);
		goto out;
	}
	rc = catalog_load_commit(load, "alibaba", endpoint, err, errlen);
	load = NULL;
	if (rc == 0 && rows)
		*rows = n;
out:
	if (load)
		catalog_load_abort(load);
	if (rc < 0)
		catalog_note_failure(db, source, "alibaba", err);
	catalog_skus_free(skus, nskus);
	return rc;
}
