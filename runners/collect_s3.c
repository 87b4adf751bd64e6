/*
 * collect_s3.c - a fleet's runs through object storage (collect.h):
 *
 *   results export --format json --to s3://BUCKET/PREFIX/   one object per run, PREFIXUUID.json
 *   results merge s3://BUCKET/PREFIX/                        every such object the store lacks
 *
 * Requests are signed by libcurl's SigV4 (CURLOPT_AWS_SIGV4, as the objstore
 * bench) with the bench's credentials and region (platform/objstore_util.c);
 * the endpoint is --endpoint, else AWS_ENDPOINT_URL_S3 / AWS_ENDPOINT_URL,
 * else AWS.  An object is never overwritten: a HEAD first, then a PUT with
 * `If-None-Match: *` (a service that knows conditional writes refuses the
 * PUT with 412 if another writer came between).  A failed request (connection
 * error, 5xx, 429, a body shorter than its Content-Length) is retried 4 times
 * with backoff; then the command stops with exit 2 naming the object.
 * Merge checks each object whole (jansson, then results/fp_check.c through
 * the import) and stores it in one savepoint, so a run is stored whole or
 * not at all; runs already in the store are skipped by the uuid in the
 * object's name without being fetched, so a retry fetches only the rest.
 */
#include "runners/collect.h"
#include "runners/cli.h"
#include "runners/hooks.h"
#include "platform/objstore_util.h"
#include "common/util.h"
#include "results/store.h"

#include <curl/curl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define S3_TRIES 5
#define S3_MAX_OBJECT (256u << 20)

static const char *endpoint_opt;

void collect_set_endpoint(const char *url)
{
	endpoint_opt = url;
}

struct s3c {
	char *bucket, *prefix, *base, *display; /* display: s3://BUCKET/PREFIX */
	char *access, *secret, *token;
	char sigv4[128];
	CURL *e;
	struct curl_slist *hdrs;
	char *body; /* last response */
	size_t len;
	int too_big;
	char curlerr[CURL_ERROR_SIZE];
};

static void wipe_free(char *p)
{
	if (p) {
		explicit_bzero(p, strlen(p));
		free(p);
	}
}

static void s3c_free(struct s3c *c)
{
	if (c->e)
		curl_easy_cleanup(c->e);
	curl_slist_free_all(c->hdrs);
	wipe_free(c->access);
	wipe_free(c->secret);
	wipe_free(c->token);
	free(c->bucket);
	free(c->prefix);
	free(c->base);
	free(c->display);
	free(c->body);
}

static const char *s3_endpoint(void)
{
	const char *v = endpoint_opt;
	if (!v || !*v)
		v = getenv("AWS_ENDPOINT_URL_S3");
	if (!v || !*v)
		v = getenv("AWS_ENDPOINT_URL");
	return v && *v ? v : NULL;
}

/* s3://BUCKET/PREFIX/ -> c; 0 or -1 (message printed). */
static int s3c_open(struct s3c *c, const char *url)
{
	memset(c, 0, sizeof *c);
	const char *b = url + 5;
	size_t bl = strcspn(b, "/");
	const char *p = b[bl] ? b + bl + 1 : "";
	c->bucket = gv_asprintf("%.*s", (int)bl, b);
	c->prefix = *p && p[strlen(p) - 1] != '/' ? gv_asprintf("%s/", p) : gv_strdup(p);
	c->display = gv_asprintf("s3://%s/%s", c->bucket, c->prefix);
	char region[64], err[256], *probe = gv_asprintf("s3://%s/_", c->bucket);
	objstore_aws_region(region, sizeof region);
	struct os_target t;
	int rc = objstore_parse_target(probe, s3_endpoint(), region, &t, err, sizeof err);
	free(probe);
	if (rc) {
		gv_err("'%s': %s", c->display, err);
		return -1;
	}
	c->base = gv_strdup(t.base);
	objstore_target_free(&t);
	if (strlen(c->prefix) > 900) {
		gv_err("'%s': prefix longer than 900 bytes", c->display);
		return -1;
	}
	if (objstore_aws_credentials(&c->access, &c->secret, &c->token, err, sizeof err)) {
		gv_err("'%s': %s", c->display, err);
		return -1;
	}
	snprintf(c->sigv4, sizeof c->sigv4, "aws:amz:%s:s3", region);
	if (curl_global_init(CURL_GLOBAL_DEFAULT) || !(c->e = curl_easy_init())) {
		gv_err("'%s': cannot initialise libcurl", c->display);
		return -1;
	}
	c->hdrs = curl_slist_append(NULL, "x-amz-content-sha256: UNSIGNED-PAYLOAD");
	if (c->token) {
		char *h = gv_asprintf("x-amz-security-token: %s", c->token);
		c->hdrs = curl_slist_append(c->hdrs, h);
		wipe_free(h);
	}
	return 0;
}

static size_t on_body(char *data, size_t size, size_t nmemb, void *ud)
{
	struct s3c *c = ud;
	size_t n = size * nmemb;
	if (c->len + n > S3_MAX_OBJECT) {
		c->too_big = 1;
		return 0;
	}
	c->body = gv_realloc(c->body, c->len + n + 1);
	memcpy(c->body + c->len, data, n);
	c->len += n;
	c->body[c->len] = 0;
	return n;
}

struct upload {
	const char *data;
	size_t len, off;
};

static size_t on_read(char *buf, size_t size, size_t nmemb, void *ud)
{
	struct upload *u = ud;
	size_t n = size * nmemb;
	if (n > u->len - u->off)
		n = u->len - u->off;
	memcpy(buf, u->data + u->off, n);
	u->off += n;
	return n;
}

/* The text of S3's <Code> in the last body, or "". */
static const char *s3_code(struct s3c *c)
{
	static char code[64];
	if (!c->body || objstore_xml_text(c->body, c->len, "Code", code, sizeof code))
		code[0] = 0;
	return code;
}

/*
 * One request with retries: method GET, HEAD or PUT (put: the body, sent
 * with If-None-Match: *).  Returns the final HTTP status (c->body holds its
 * body), or -1 with why (after the retries).
 */
static long s3_request(struct s3c *c, const char *method, const char *url, const struct upload *put,
		       char *why, size_t whylen)
{
	long http = -1;
	for (int attempt = 0; attempt < S3_TRIES; attempt++) {
		if (attempt) {
			struct timespec ts = { 0, (long)(100000000L << (attempt - 1)) };
			while (ts.tv_nsec >= 1000000000L) {
				ts.tv_sec++;
				ts.tv_nsec -= 1000000000L;
			}
			nanosleep(&ts, NULL);
		}
		CURL *e = c->e;
		curl_easy_reset(e);
		free(c->body);
		c->body = NULL;
		c->len = 0;
		c->too_big = 0;
		c->curlerr[0] = 0;
		struct curl_slist *h = NULL;
		for (struct curl_slist *i = c->hdrs; i; i = i->next)
			h = curl_slist_append(h, i->data);
		struct upload u = put ? *put : (struct upload){ NULL, 0, 0 };
		curl_easy_setopt(e, CURLOPT_URL, url);
		curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
		curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
		curl_easy_setopt(e, CURLOPT_USERAGENT, "gpuvet-collect/1");
		curl_easy_setopt(e, CURLOPT_ERRORBUFFER, c->curlerr);
		curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_body);
		curl_easy_setopt(e, CURLOPT_WRITEDATA, c);
		curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, 10000L);
		curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, 120000L);
		curl_easy_setopt(e, CURLOPT_LOW_SPEED_LIMIT, 1024L);
		curl_easy_setopt(e, CURLOPT_LOW_SPEED_TIME, 20L);
		curl_easy_setopt(e, CURLOPT_AWS_SIGV4, c->sigv4);
		curl_easy_setopt(e, CURLOPT_USERNAME, c->access);
		curl_easy_setopt(e, CURLOPT_PASSWORD, c->secret);
		if (!strcmp(method, "HEAD")) {
			curl_easy_setopt(e, CURLOPT_NOBODY, 1L);
		} else if (put) {
			h = curl_slist_append(h, "If-None-Match: *");
			h = curl_slist_append(h, "Content-Type: application/json");
			curl_easy_setopt(e, CURLOPT_UPLOAD, 1L);
			curl_easy_setopt(e, CURLOPT_INFILESIZE_LARGE, (curl_off_t)u.len);
			curl_easy_setopt(e, CURLOPT_READFUNCTION, on_read);
			curl_easy_setopt(e, CURLOPT_READDATA, &u);
			curl_easy_setopt(e, CURLOPT_EXPECT_100_TIMEOUT_MS, 200L);
		}
		curl_easy_setopt(e, CURLOPT_HTTPHEADER, h);
		CURLcode rc = curl_easy_perform(e);
		curl_slist_free_all(h);
		if (c->too_big) {
			snprintf(why, whylen, "larger than %u MiB", S3_MAX_OBJECT >> 20);
			return -1;
		}
		if (rc != CURLE_OK) {
			snprintf(why, whylen, "%s", c->curlerr[0] ? c->curlerr : curl_easy_strerror(rc));
			continue;
		}
		curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &http);
		if (http >= 500 || http == 429) {
			const char *code = s3_code(c);
			snprintf(why, whylen, "http %ld%s%s", http, *code ? " " : "", code);
			continue;
		}
		return http;
	}
	return -1;
}

static char *object_url(struct s3c *c, const char *key)
{
	char *ek = objstore_uri_encode(key, 1);
	char *u = gv_asprintf("%s/%s", c->base, ek);
	free(ek);
	return u;
}

/* An error answer as words: "http 403 AccessDenied". */
static void http_why(struct s3c *c, long http, char *why, size_t whylen)
{
	const char *code = s3_code(c);
	snprintf(why, whylen, "http %ld%s%s", http, *code ? " " : "", code);
}

/* PUTs one run unless its object exists: 1 written, 0 present, -1 failed (printed). */
static int export_one(struct s3c *c, const char *uuid, const char *doc)
{
	char *key = gv_asprintf("%s%s.json", c->prefix, uuid), why[300] = "";
	char *url = object_url(c, key);
	int rc = -1;
	long http = s3_request(c, "HEAD", url, NULL, why, sizeof why);
	if (http == 200) {
		rc = 0;
	} else if (http == 404) {
		struct upload u = { doc, strlen(doc), 0 };
		http = s3_request(c, "PUT", url, &u, why, sizeof why);
		if (http == 200)
			rc = 1;
		else if (http == 412) /* written by someone else since the HEAD: never overwritten */
			rc = 0;
		else if (http > 0)
			http_why(c, http, why, sizeof why);
	} else if (http > 0) {
		http_why(c, http, why, sizeof why);
	}
	if (rc < 0)
		gv_err("cannot export to 's3://%s/%s': %s", c->bucket, key, why);
	free(url);
	free(key);
	return rc;
}

int collect_export_s3(struct store *s, const int64_t *ids, size_t n, const char *url)
{
	struct s3c c;
	if (s3c_open(&c, url)) {
		s3c_free(&c);
		return GV_EXIT_USAGE;
	}
	long written = 0, present = 0, live = 0;
	int rc = 0;
	for (size_t i = 0; i < n && !rc; i++) {
		json_t *fp;
		if (store_load_fingerprint(s, ids[i], &fp)) {
			gv_err("%s", store_errmsg(s));
			rc = GV_EXIT_USAGE;
			break;
		}
		json_t *run = json_object_get(fp, "run");
		const char *uuid = json_string_value(json_object_get(run, "uuid"));
		const char *st = json_string_value(json_object_get(run, "status"));
		if (st && !strcmp(st, "running")) { /* an object is never replaced: wait for the whole run */
			live++;
			json_decref(fp);
			continue;
		}
		char *doc = json_dumps(fp, JSON_COMPACT | JSON_ENSURE_ASCII);
		int r = uuid && doc ? export_one(&c, uuid, doc) : -1;
		free(doc);
		json_decref(fp);
		if (r < 0)
			rc = GV_EXIT_USAGE;
		else if (r)
			written++;
		else
			present++;
	}
	if (!gv_quiet)
		printf("%s: %ld run(s) written, %ld already there%s\n", c.display, written, present,
		       live ? ", some still running (export again when done)" : "");
	s3c_free(&c);
	return rc;
}

/* ---- merge ---- */

struct keys {
	char **v;
	size_t n, cap;
	const char *prefix;
};

static int add_key(void *ud, const char *key)
{
	struct keys *k = ud;
	size_t kl = strlen(key), pl = strlen(k->prefix);
	/* only PREFIX + NAME.json directly under the prefix */
	if (kl < pl + 6 || strncmp(key, k->prefix, pl) || strchr(key + pl, '/') || strcmp(key + kl - 5, ".json"))
		return 0;
	if (k->n == k->cap) {
		k->cap = k->cap ? k->cap * 2 : 256;
		k->v = gv_realloc(k->v, k->cap * sizeof *k->v);
	}
	k->v[k->n++] = gv_strdup(key);
	return 0;
}

/* ListObjectsV2 pages until the last; 0 or -1 (printed). */
static int list_keys(struct s3c *c, struct keys *k)
{
	char next[1100] = "", why[300];
	int truncated;
	/*
	 * The listing asks for the prefix up to its first '/' and the keys are
	 * filtered here (add_key): moto, the loopback test server, verifies the
	 * signature of a query holding an encoded '/' (%2F, as SigV4 wants it)
	 * against the decoded text and refuses it, while AWS needs the %2F.
	 */
	char *head = gv_asprintf("%.*s", (int)strcspn(c->prefix, "/"), c->prefix);
	char *ep = objstore_uri_encode(head, 0);
	char **seen = NULL;   /* every continuation token so far: a listing that repeats one would loop for ever */
	size_t nseen = 0;
	int rc = 0;
	free(head);
	do {
		for (size_t i = 0; i < nseen && next[0]; i++)
			if (!strcmp(seen[i], next)) {
				gv_err("cannot list '%s': the listing repeated a continuation token after %zu page(s); "
				       "stopped", c->display, nseen + 1);
				rc = -1;
				goto out;
			}
		if (next[0]) {
			seen = gv_realloc(seen, (nseen + 1) * sizeof *seen);
			seen[nseen++] = gv_strdup(next);
		}
		char *et = objstore_uri_encode(next, 0);
		/* the query in SigV4's canonical order (sorted by name) */
		char *url = next[0] ? gv_asprintf("%s?continuation-token=%s&list-type=2&prefix=%s", c->base, et, ep)
				    : gv_asprintf("%s?list-type=2&prefix=%s", c->base, ep);
		free(et);
		long http = s3_request(c, "GET", url, NULL, why, sizeof why);
		free(url);
		if (http > 0 && http != 200)
			http_why(c, http, why, sizeof why);
		if (http == 200 && objstore_list_parse(c->body, c->len, add_key, k, &truncated, next, sizeof next)) {
			snprintf(why, sizeof why, "malformed ListObjectsV2 answer");
			http = -1;
		}
		if (http != 200) {
			gv_err("cannot list '%s': %s", c->display, why);
			rc = -1;
			goto out;
		}
	} while (truncated && next[0]);
out:
	for (size_t i = 0; i < nseen; i++)
		free(seen[i]);
	free(seen);
	free(ep);
	return rc;
}

/* GETs, checks and stores one object: 1 added, 0 present, -1 failed (printed). */
static int merge_one(struct store *s, struct s3c *c, const char *key)
{
	char why[300] = "", *url = object_url(c, key);
	long http = s3_request(c, "GET", url, NULL, why, sizeof why);
	free(url);
	int rc = -1;
	struct jtree t = { 0 };
	if (http > 0 && http != 200) {
		http_why(c, http, why, sizeof why);
	} else if (http == 200 && jt_parse(&t, c->body ? c->body : "", c->len)) {
		snprintf(why, sizeof why, "not json (line %d: %s)", t.line, t.err);
	} else if (http == 200) {
		const char *uuid = jt_str(&t, jt_get(&t, jt_get(&t, 1, "run"), "uuid"));
		const char *name = key + strlen(c->prefix);
		if (!uuid || strlen(name) != strlen(uuid) + 5 || strncmp(name, uuid, strlen(uuid)))
			snprintf(why, sizeof why, "its run.uuid is not the object's name");
		else {
			int64_t id = 0;
			int r = store_import_tree(s, &t, &id);   /* derived as it is imported (store_set_derive), as import is */
			rc = r == STORE_OK ? 1 : r == STORE_DUP ? 0 : -1;
			if (rc < 0)
				snprintf(why, sizeof why, "%s", store_errmsg(s));
		}
	}
	jt_free(&t);
	if (rc < 0)
		gv_err("cannot merge 's3://%s/%s': %s", c->bucket, key, why);
	return rc;
}

/* merge_one inside its own part of the batch: an object that fails leaves nothing of itself. */
static int merge_marked(struct store *s, struct s3c *c, const char *key)
{
	if (store_batch_mark(s)) {
		gv_err("%s", store_errmsg(s));
		return -1;
	}
	int r = merge_one(s, c, key);
	if (store_batch_unmark(s, r >= 0) && r >= 0) {
		gv_err("%s", store_errmsg(s));
		return -1;
	}
	return r;
}

/* Is the run named by key (PREFIX + UUID.json) already stored? */
static int have_run(struct store *s, const struct s3c *c, const char *key)
{
	char uuid[37];
	const char *name = key + strlen(c->prefix);
	if (strlen(name) != 41)
		return 0;
	memcpy(uuid, name, 36);
	uuid[36] = 0;
	if (strspn(uuid, "0123456789abcdef-") != 36)
		return 0;
	int64_t id;
	return store_resolve_run(s, uuid, &id) == STORE_OK;
}

int collect_merge_s3(struct store *s, const char *url, int *added, int *skipped)
{
	struct s3c c;
	struct keys k = { NULL, 0, 0, NULL };
	*added = *skipped = 0;
	int rc = s3c_open(&c, url);
	k.prefix = c.prefix;
	if (!rc)
		rc = list_keys(&c, &k);
	int began = 0;
	if (!rc && store_batch_begin(s)) {
		gv_err("%s", store_errmsg(s));
		rc = -1;
	}
	began = !rc;
	for (size_t i = 0; i < k.n && !rc; i++) {
		int r = have_run(s, &c, k.v[i]) ? 0 : merge_marked(s, &c, k.v[i]);
		if (r < 0) {
			rc = -1;
			break;
		}
		*added += r;
		*skipped += !r;
		if (r && *added % COLLECT_BATCH == 0 && (store_batch_end(s, 1) || store_batch_begin(s))) {
			gv_err("%s", store_errmsg(s));
			rc = -1;
		}
	}
	/* the runs merged before a failure stay: a retry skips them by uuid */
	if (began && store_batch_end(s, 1) && !rc) {
		gv_err("%s", store_errmsg(s));
		rc = -1;
	}
	if (!gv_quiet && c.display)
		printf("%s: %d run(s) added, %d already present%s\n", c.display, *added, *skipped,
		       rc ? " (stopped)" : "");
	for (size_t i = 0; i < k.n; i++)
		free(k.v[i]);
	free(k.v);
	s3c_free(&c);
	return rc;
}
