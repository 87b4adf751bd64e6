/*
 * fetch_alibaba.c - Alibaba Cloud ECS prices from DescribePrice.
 *
 * One signed RPC call per instance type (Alibaba has no bulk price list):
 *   GET https://ecs.aliyuncs.com/?Action=DescribePrice&RegionId=R
 *       &ResourceType=instance&InstanceType=T&PriceUnit=Hour&Format=JSON
 *       &Version=2014-05-26&AccessKeyId=..&SignatureMethod=HMAC-SHA1
 *       &SignatureVersion=1.0&SignatureNonce=..&Timestamp=..&Signature=..
 * signed with RPC signature v1: base64(HMAC-SHA1(secret + "&",
 * "GET&%2F&" + percent-encoded sorted query)).  The instance types asked
 * for are the Alibaba types already in the store (the shipped catalog and
 * imports).  Credentials: ALIBABA_CLOUD_ACCESS_KEY_ID / _SECRET; without
 * them the command says to import a CSV instead.
 */
#include "pricing/fetch.h"
#include "common/crypto.h"
#include "common/util.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- RPC signature v1 ---- */

/* RFC 3986 percent-encoding as Alibaba's signature wants it: unreserved kept, %XX upper case */
static void pct_append(char **buf, size_t *len, size_t *cap, const char *s, size_t n)
{
	static const char hex[] = "0123456789ABCDEF";
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (*len + 4 > *cap) {
			*cap = *cap ? *cap * 2 : 256;
			*buf = gv_realloc(*buf, *cap);
		}
		if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
		    c == '_' || c == '.' || c == '~') {
			(*buf)[(*len)++] = (char)c;
		} else {
			(*buf)[(*len)++] = '%';
			(*buf)[(*len)++] = hex[c >> 4];
			(*buf)[(*len)++] = hex[c & 15];
		}
	}
	(*buf)[*len] = '\0';
}

static void raw_append(char **buf, size_t *len, size_t *cap, const char *s)
{
	size_t n = strlen(s);
	if (*len + n + 1 > *cap) {
		while (*len + n + 1 > *cap)
			*cap = *cap ? *cap * 2 : 256;
		*buf = gv_realloc(*buf, *cap);
	}
	memcpy(*buf + *len, s, n + 1);
	*len += n;
}

static int cmp_param(const void *a, const void *b)
{
	const char *x = *(const char *const *)a, *y = *(const char *const *)b;
	size_t kx = strcspn(x, "="), ky = strcspn(y, "=");
	int c = memcmp(x, y, kx < ky ? kx : ky);
	if (c)
		return c;
	return kx < ky ? -1 : kx > ky;
}

char *alibaba_signed_query(const char *const *params, size_t n, const char *secret)
{
	const char **sorted = gv_malloc((n ? n : 1) * sizeof *sorted);
	char *q = NULL, *sts = NULL;
	size_t ql = 0, qc = 0, sl = 0, sc = 0;
	memcpy(sorted, params, n * sizeof *sorted);
	qsort(sorted, n, sizeof *sorted, cmp_param);
	raw_append(&q, &ql, &qc, "");
	for (size_t i = 0; i < n; i++) {
		const char *eqs = strchr(sorted[i], '=');
		size_t klen = eqs ? (size_t)(eqs - sorted[i]) : strlen(sorted[i]);
		if (i)
			raw_append(&q, &ql, &qc, "&");
		pct_append(&q, &ql, &qc, sorted[i], klen);
		raw_append(&q, &ql, &qc, "=");
		if (eqs)
			pct_append(&q, &ql, &qc, eqs + 1, strlen(eqs + 1));
	}
	raw_append(&sts, &sl, &sc, "GET&%2F&");
	pct_append(&sts, &sl, &sc, q, ql);
	char *key = gv_asprintf("%s&", secret);
	uint8_t mac[20];
	char b64[32];
	gv_hmac_sha1(key, strlen(key), sts, sl, mac);
	gv_base64(mac, sizeof mac, b64);
	raw_append(&q, &ql, &qc, "&Signature=");
	pct_append(&q, &ql, &qc, b64, strlen(b64));
	free(key);
	free(sts);
	free(sorted);
	return q;
}

/* ---- the answer ---- */

int alibaba_parse_price(const char *json, size_t len, double *price, char currency[4],
			char *err, size_t errlen)
{
	json_error_t je;
	json_t *root = json_loadb(json, len, 0, &je);
	int rc = -1;
	if (!root) {
		snprintf(err, errlen, "alibaba answer is not JSON: %s", je.text);
		return -1;
	}
	const char *code = json_string_value(json_object_get(root, "Code"));
	json_t *p = json_object_get(json_object_get(root, "PriceInfo"), "Price");
	json_t *tp = json_object_get(p, "TradePrice");
	const char *cur = json_string_value(json_object_get(p, "Currency"));
	if (code) {
		const char *m = json_string_value(json_object_get(root, "Message"));
		snprintf(err, errlen, "alibaba error %.80s%s%.160s", code, m ? ": " : "", m ? m : "");
	} else if (!json_is_number(tp)) {
		snprintf(err, errlen, "alibaba answer has no PriceInfo.Price.TradePrice");
	} else if (!(json_number_value(tp) >= 0) || !isfinite(json_number_value(tp))) {
		snprintf(err, errlen, "alibaba answer has a negative price");
	} else if (!cur || strlen(cur) != 3) {
		snprintf(err, errlen, "alibaba answer has no 3-letter PriceInfo.Price.Currency");
	} else {
		*price = json_number_value(tp);
		memcpy(currency, cur, 4);
		rc = 0;
	}
	json_decref(root);
	return rc;
}

/* ---- the fetch ---- */

char *alibaba_rpc_url(const char *endpoint, const char *action, const char *region, const char *const *extra,
		      size_t nextra, const char *id, const char *secret)
{
	char nonce[37], ts[32], p_action[96], p_region[96], p_id[160], p_nonce[64], p_ts[64];
	const char *params[24];
	size_t n = 0;
	gv_uuid(nonce);
	gv_iso8601((long)time(NULL), ts, sizeof ts);
	snprintf(p_action, sizeof p_action, "Action=%s", action);
	snprintf(p_region, sizeof p_region, "RegionId=%s", region);
	snprintf(p_id, sizeof p_id, "AccessKeyId=%s", id);
	snprintf(p_nonce, sizeof p_nonce, "SignatureNonce=%s", nonce);
	snprintf(p_ts, sizeof p_ts, "Timestamp=%s", ts);
	const char *common[] = { p_action, p_region, "Format=JSON", "Version=2014-05-26", p_id,
				 "SignatureMethod=HMAC-SHA1", "SignatureVersion=1.0", p_nonce, p_ts };
	for (size_t i = 0; i < sizeof common / sizeof common[0]; i++)
		params[n++] = common[i];
	for (size_t i = 0; i < nextra && n < sizeof params / sizeof params[0]; i++)
		params[n++] = extra[i];
	char *q = alibaba_signed_query(params, n, secret);
	char *url = gv_asprintf("%s?%s", endpoint, q);
	free(q);
	return url;
}

/* --types: instance types the store does not know yet, added to the list to price. */
int alibaba_call_args(const char *id, const char *secret, const char **endpoint, const char **region, char *err,
		      size_t errlen)
{
	if (!id || !*id || !secret || !*secret) {
		snprintf(err, errlen, "no alibaba credentials (ALIBABA_CLOUD_ACCESS_KEY_ID and "
				      "ALIBABA_CLOUD_ACCESS_KEY_SECRET): import a CSV with gpuvet prices import FILE");
		return -1;
	}
	if (!*endpoint || !**endpoint)
		*endpoint = "https://ecs.aliyuncs.com/";
	if (!*region || !**region)
		*region = "us-east-1";
	return 0;
}

void alibaba_add_types(struct catalog_sku **skus, size_t *nskus, const char *types)
{
	for (const char *t = types; t && *t;) {
		size_t n = strcspn(t, ",");
		if (n && n < 96) {
			char name[96];
			int known = 0;
			memcpy(name, t, n);
			name[n] = '\0';
			for (size_t i = 0; i < *nskus; i++)
				known |= !strcmp((*skus)[i].instance_type, name);
			if (!known) {
				*skus = gv_realloc(*skus, (*nskus + 1) * sizeof **skus);
				(*skus)[(*nskus)++] = (struct catalog_sku){ .instance_type = gv_strdup(name), .gpu_model = NULL,
									    .gpu_count = NAN, .vcpus = -1,
									    .memory_gib = NAN };
			}
		}
		t += n + (t[n] == ',');
	}
}

/* One type's DescribePrice, signed, into the load: 1 priced, 0 not sold in the region, -1 err set. */
static int ali_price_one(struct catalog_load *load, const struct catalog_sku *k, const char *region,
			 const char *endpoint, const char *id, const char *secret, const char *source, const char *now,
			 char *err, size_t errlen)
{
	char *body = NULL, p_type[160];
	size_t len = 0;
	long status = 0;
	snprintf(p_type, sizeof p_type, "InstanceType=%s", k->instance_type);
	const char *params[] = { "ResourceType=instance", p_type, "PriceUnit=Hour" };
	char *url = alibaba_rpc_url(endpoint, "DescribePrice", region, params, 3, id, secret);
	int frc = fetch_small(url, NULL, 1u << 20, &body, &len, &status, err, errlen);
	free(url);
	if (frc < 0) {
		/* a type not sold in this region is skipped; anything else stops the refresh */
		if ((status == 400 || status == 404) && strstr(err, "InvalidInstanceType")) {
			gv_debug("alibaba: %s not priced in %s", k->instance_type, region);
			err[0] = '\0';
			return 0;
		}
		return -1;
	}
	struct price_rec r;
	double price;
	char cur[4];
	int prc = alibaba_parse_price(body, len, &price, cur, err, errlen);
	free(body);
	if (prc < 0)
		return -1;
	price_rec_init(&r);
	gv_strlcpy(r.provider, "alibaba", sizeof r.provider);
	gv_strlcpy(r.instance_type, k->instance_type, sizeof r.instance_type);
	gv_strlcpy(r.region, region, sizeof r.region);
	if (k->gpu_model)
		gv_strlcpy(r.gpu_model, k->gpu_model, sizeof r.gpu_model);
	r.gpu_count = k->gpu_count;
	r.vcpus = k->vcpus;
	r.memory_gib = k->memory_gib;
	gv_strlcpy(r.market, "on_demand", sizeof r.market);
	r.price = price;
	gv_strlcpy(r.unit, "hour", sizeof r.unit);
	gv_strlcpy(r.currency, cur, sizeof r.currency);
	gv_strlcpy(r.source, source, sizeof r.source);
	gv_strlcpy(r.source_version, "2014-05-26", sizeof r.source_version);
	gv_strlcpy(r.captured_at, now, sizeof r.captured_at);
	char e2[320];
	if (catalog_load_put(load, &r, e2, sizeof e2) < 0) {
		snprintf(err, errlen, "alibaba %s: %s", k->instance_type, e2);
		return -1;
	}
	return 1;
}

int fetch_alibaba(sqlite3 *db, const char *region, const char *types, long *rows, char *err, size_t errlen)
{
	const char *id = getenv("ALIBABA_CLOUD_ACCESS_KEY_ID");
	const char *secret = getenv("ALIBABA_CLOUD_ACCESS_KEY_SECRET");
	const char *endpoint = getenv("GPUVET_ALIBABA_API_URL");
	struct catalog_sku *skus = NULL;
	size_t nskus = 0;
	struct catalog_load *load = NULL;
	char source[96], now[32];
	int rc = -1;

	if (alibaba_call_args(id, secret, &endpoint, &region, err, errlen))
		return -1;
	snprintf(source, sizeof source, "alibaba-api:%s", region);
	err[0] = '\0';

	if (catalog_skus(db, "alibaba", &skus, &nskus, err, errlen) < 0)
		return -1;
	alibaba_add_types(&skus, &nskus, types);
	if (!nskus) {
		snprintf(err, errlen, "no alibaba instance types to price: pass --types ecs.gn7i-c8g1.2xlarge,... "
				      "or import a CSV that names them");
		goto out;
	}
	if (catalog_load_begin(db, &load, err, errlen) < 0)
		goto out;
	gv_iso8601((long)time(NULL), now, sizeof now);
	for (size_t i = 0; i < nskus; i++)
		if (ali_price_one(load, &skus[i], region, endpoint, id, secret, source, now, err, errlen) < 0)
			goto out;
	if (catalog_load_rows(load) == 0) {
		snprintf(err, errlen, "alibaba priced none of the %zu known instance types in %s", nskus, region);
		goto out;
	}
	long n = catalog_load_rows(load);
	rc = catalog_load_commit(load, "alibaba", endpoint, err, errlen);
	load = NULL;
	if (rc == 0 && rows)
		*rows = n;
out:
	if (load) {
		catalog_load_abort(load);
		catalog_note_failure(db, source, "alibaba", err);
	} else if (rc < 0 && nskus) {
		catalog_note_failure(db, source, "alibaba", err);
	}
	catalog_skus_free(skus, nskus);
	return rc;
}
