/*
 * objstore_util.c - URLs, masking, AWS shared files, Content-Range and S3
 * XML for the objstore bench (see objstore_util.h).
 */
#include "platform/objstore_util.h"

#include <ctype.h>
#include <stdint.h>
#include <curl/curl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void os_errf(char *err, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void os_errf(char *err, size_t n, const char *fmt, ...)
{
	if (!err || !n)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, n, fmt, ap);
	va_end(ap);
}

static char *os_strndup(const char *s, size_t n)
{
	char *p = malloc(n + 1);
	if (!p)
		abort();
	memcpy(p, s, n);
	p[n] = 0;
	return p;
}

static char *os_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *os_printf(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		abort();
	char *p = malloc((size_t)n + 1);
	if (!p)
		abort();
	va_start(ap, fmt);
	vsnprintf(p, (size_t)n + 1, fmt, ap);
	va_end(ap);
	return p;
}

char *objstore_uri_encode(const char *s, int keep_slash)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t n = strlen(s);
	char *out = malloc(n * 3 + 1), *w = out;
	if (!out)
		abort();
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (isalnum(*p) || *p == '-' || *p == '_' || *p == '.' || *p == '~' ||
		    (keep_slash && *p == '/')) {
			*w++ = (char)*p;
		} else {
			*w++ = '%';
			*w++ = hex[*p >> 4];
			*w++ = hex[*p & 15];
		}
	}
	*w = 0;
	return out;
}

char *objstore_mask_url(const char *url)
{
	if (!url)
		return os_strndup("(none)", 6);
	/* a scheme is letters, digits, '+', '-', '.' before "://" */
	const char *p = url;
	while (isalnum((unsigned char)*p) || *p == '+' || *p == '-' || *p == '.')
		p++;
	int has_scheme = p > url && !strncmp(p, "://", 3);
	const char *auth = has_scheme ? p + 3 : url;
	/* authority: up to the first '/', '?' or '#'; without a scheme up to '?' or '#' */
	size_t alen = strcspn(auth, has_scheme ? "/?#" : "?#");
	const char *at = NULL;
	for (const char *q = auth; q < auth + alen; q++)
		if (*q == '@')
			at = q;
	const char *host = at ? at + 1 : auth;
	size_t hlen = alen - (size_t)(host - auth);
	size_t rest = strcspn(auth + alen, "?#");
	int has_query = auth[alen + rest] != 0;
	return os_printf("%.*s%s%.*s%.*s%s", (int)(auth - url), url, at ? "***@" : "", (int)hlen,
			 host, (int)rest, auth + alen, has_query ? "?***" : "");
}

void objstore_target_free(struct os_target *t)
{
	free(t->bucket);
	free(t->key);
	free(t->base);
	free(t->url);
	free(t->display);
	memset(t, 0, sizeof *t);
}

/* A valid http(s) URL with a host, checked by libcurl's own parser. */
static int os_http_url_ok(const char *url)
{
	if (strncmp(url, "http://", 7) && strncmp(url, "https://", 8))
		return 0;
	CURLU *h = curl_url();
	if (!h)
		return 0;
	int ok = curl_url_set(h, CURLUPART_URL, url, 0) == CURLUE_OK;
	char *host = NULL;
	if (ok && (curl_url_get(h, CURLUPART_HOST, &host, 0) != CURLUE_OK || !host || !*host))
		ok = 0;
	curl_free(host);
	curl_url_cleanup(h);
	return ok;
}

static int os_bucket_ok(const char *b, size_t n)
{
	if (n < 3 || n > 63)
		return 0;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)b[i];
		if (!(islower(c) || isdigit(c) || c == '-' || c == '.' || c == '_'))
			return 0;
	}
	return 1;
}

int objstore_parse_target(const char *url, const char *endpoint, const char *region,
			  struct os_target *t, char *err, size_t errlen)
{
	memset(t, 0, sizeof *t);
	if (!url || !*url) {
		os_errf(err, errlen, "empty object store url");
		return -1;
	}
	if (!strncmp(url, "s3://", 5)) {
		const char *b = url + 5;
		size_t bl = strcspn(b, "/");
		const char *key = b[bl] == '/' ? b + bl + 1 : "";
		if (!bl || !*key) {
			os_errf(err, errlen, "s3 url must be s3://BUCKET/KEY");
			return -1;
		}
		if (!os_bucket_ok(b, bl)) {
			os_errf(err, errlen, "invalid s3 bucket name in url");
			return -1;
		}
		if (strlen(key) > 1024) {
			os_errf(err, errlen, "s3 key longer than 1024 bytes");
			return -1;
		}
		t->is_s3 = 1;
		t->bucket = os_strndup(b, bl);
		t->key = os_strndup(key, strlen(key));
		if (endpoint && *endpoint) {
			if (!os_http_url_ok(endpoint) || strchr(endpoint, '?')) {
				char *m = objstore_mask_url(endpoint);
				os_errf(err, errlen, "invalid object store endpoint '%s'", m);
				free(m);
				objstore_target_free(t);
				return -1;
			}
			size_t el = strlen(endpoint);
			while (el && endpoint[el - 1] == '/')
				el--;
			t->base = os_printf("%.*s/%s", (int)el, endpoint, t->bucket);
		} else {
			const char *r = region && *region ? region : "us-east-1";
			if (strchr(t->bucket, '.'))
				t->base = os_printf("https://s3.%s.amazonaws.com/%s", r, t->bucket);
			else
				t->base = os_printf("https://%s.s3.%s.amazonaws.com", t->bucket, r);
		}
		char *ek = objstore_uri_encode(t->key, 1);
		t->url = os_printf("%s/%s", t->base, ek);
		free(ek);
		t->display = os_printf("s3://%s/%s", t->bucket, t->key);
		return 0;
	}
	if (!os_http_url_ok(url)) {
		char *m = objstore_mask_url(url);
		if (!strncmp(url, "http://", 7) || !strncmp(url, "https://", 8))
			os_errf(err, errlen, "invalid object store url '%s'", m);
		else
			os_errf(err, errlen, "unsupported object store url '%s' (want s3://BUCKET/KEY "
				"or http(s)://...)", m);
		free(m);
		return -1;
	}
	t->url = os_strndup(url, strlen(url));
	t->display = objstore_mask_url(url);
	return 0;
}

/* ---- AWS shared files ---- */

static const char *os_skip_ws(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\t' || *p == '\r'))
		p++;
	return p;
}

static size_t os_trim_len(const char *s, size_t n)
{
	while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r'))
		n--;
	return n;
}

char *objstore_ini_get(const char *text, const char *section, const char *key)
{
	if (!text || !section || !key)
		return NULL;
	int in = 0;
	size_t sl = strlen(section), kl = strlen(key);
	const char *p = text;
	while (*p) {
		const char *eol = strchr(p, '\n');
		const char *end = eol ? eol : p + strlen(p);
		const char *s = os_skip_ws(p, end);
		if (s < end && *s == '[') {
			const char *close = memchr(s, ']', (size_t)(end - s));
			in = 0;
			if (close) {
				const char *n = os_skip_ws(s + 1, close);
				size_t nl = os_trim_len(n, (size_t)(close - n));
				in = nl == sl && !memcmp(n, section, sl);
			}
		} else if (in && s < end && *s != '#' && *s != ';') {
			const char *eq = memchr(s, '=', (size_t)(end - s));
			if (eq && os_trim_len(s, (size_t)(eq - s)) == kl && !memcmp(s, key, kl)) {
				const char *v = os_skip_ws(eq + 1, end);
				return os_strndup(v, os_trim_len(v, (size_t)(end - v)));
			}
		}
		if (!eol)
			break;
		p = eol + 1;
	}
	return NULL;
}

long long objstore_content_range_total(const char *v)
{
	if (!v)
		return -1;
	while (*v == ' ')
		v++;
	if (strncasecmp(v, "bytes ", 6))
		return -1;
	const char *slash = strchr(v, '/');
	if (!slash || slash[1] == '*' || !isdigit((unsigned char)slash[1]))
		return -1;
	char *end;
	long long total = strtoll(slash + 1, &end, 10);
	while (*end == ' ' || *end == '\r' || *end == '\n')
		end++;
	if (*end || total < 0)
		return -1;
	return total;
}

int objstore_xml_text(const char *xml, size_t len, const char *tag, char *out, size_t outlen)
{
	if (!xml || !outlen)
		return -1;
	char open[80], close[80];
	int ol = snprintf(open, sizeof open, "<%s>", tag);
	int cl = snprintf(close, sizeof close, "</%s>", tag);
	if (ol < 0 || cl < 0 || ol >= (int)sizeof open || cl >= (int)sizeof close)
		return -1;
	const char *s = memmem(xml, len, open, (size_t)ol);
	if (!s)
		return -1;
	s += ol;
	const char *e = memmem(s, len - (size_t)(s - xml), close, (size_t)cl);
	if (!e)
		return -1;
	size_t w = 0;
	static const struct { const char *ent; char c; } ents[] = {
		{ "&quot;", '"' }, { "&amp;", '&' }, { "&lt;", '<' }, { "&gt;", '>' }, { "&apos;", '\'' },
	};
	for (const char *p = s; p < e; ) {
		char c = *p;
		size_t adv = 1;
		if (c == '&') {
			for (size_t i = 0; i < sizeof ents / sizeof ents[0]; i++) {
				size_t n = strlen(ents[i].ent);
				if ((size_t)(e - p) >= n && !memcmp(p, ents[i].ent, n)) {
					c = ents[i].c;
					adv = n;
					break;
				}
			}
		}
		if (w + 1 >= outlen)
			return -1;
		out[w++] = c;
		p += adv;
	}
	out[w] = 0;
	return 0;
}

/* ---- AWS credentials and region (shared by the bench and `results --to/merge s3://`) ---- */

static char *os_strndup0(const char *s)
{
	return os_strndup(s, strlen(s));
}

static char *os_read_text(const char *path)
{
	FILE *f = fopen(path, "re");
	if (!f)
		return NULL;
	size_t cap = 4096, n = 0;
	char *b = malloc(cap);
	if (!b)
		abort();
	size_t r;
	while ((r = fread(b + n, 1, cap - n - 1, f)) > 0) {
		n += r;
		if (n + 1 == cap) {
			if (cap > (1u << 20))
				break;
			cap *= 2;
			char *nb = realloc(b, cap);
			if (!nb)
				abort();
			b = nb;
		}
	}
	b[n] = 0;
	fclose(f);
	return b;
}

static const char *os_profile(void)
{
	const char *profile = getenv("AWS_PROFILE");
	return profile && *profile ? profile : "default";
}

/* Region: AWS_REGION, AWS_DEFAULT_REGION, the profile's in ~/.aws/config, us-east-1. */
void objstore_aws_region(char *out, size_t outlen)
{
	const char *profile = os_profile();
	const char *home = getenv("HOME");
	const char *r = getenv("AWS_REGION");
	if (!r || !*r)
		r = getenv("AWS_DEFAULT_REGION");
	char *cfgregion = NULL;
	if (!r || !*r) {
		const char *cf = getenv("AWS_CONFIG_FILE");
		char *path = cf && *cf ? os_strndup0(cf) : home ? os_printf("%s/.aws/config", home)
							     : NULL;
		char *text = path ? os_read_text(path) : NULL;
		if (text) {
			char *sect = !strcmp(profile, "default") ? os_strndup0("default")
							      : os_printf("profile %s", profile);
			cfgregion = objstore_ini_get(text, sect, "region");
			free(sect);
		}
		free(text);
		free(path);
		r = cfgregion;
	}
	snprintf(out, outlen, "%s", r && *r ? r : "us-east-1");
	free(cfgregion);
	for (char *p = out; *p; p++)
		if (!isalnum((unsigned char)*p) && *p != '-')
			*p = '-';
}

/* Credentials; 0 or -1 with a reason (never a secret). */
int objstore_aws_credentials(char **access, char **secret, char **token, char *why, size_t whylen)
{
	const char *profile = os_profile();
	const char *home = getenv("HOME");
	const char *ak = getenv("AWS_ACCESS_KEY_ID"), *sk = getenv("AWS_SECRET_ACCESS_KEY");
	if (ak && *ak && sk && *sk) {
		*access = os_strndup0(ak);
		*secret = os_strndup0(sk);
		const char *tok = getenv("AWS_SESSION_TOKEN");
		if (tok && *tok)
			*token = os_strndup0(tok);
		return 0;
	}
	const char *cf = getenv("AWS_SHARED_CREDENTIALS_FILE");
	char *path = cf && *cf ? os_strndup0(cf) : home ? os_printf("%s/.aws/credentials", home) : NULL;
	char *text = path ? os_read_text(path) : NULL;
	if (text) {
		*access = objstore_ini_get(text, profile, "aws_access_key_id");
		*secret = objstore_ini_get(text, profile, "aws_secret_access_key");
		*token = objstore_ini_get(text, profile, "aws_session_token");
		explicit_bzero(text, strlen(text));
	}
	free(text);
	int ok = *access && **access && *secret && **secret;
	if (!ok)
		snprintf(why, whylen, "no aws credentials: set AWS_ACCESS_KEY_ID and "
			 "AWS_SECRET_ACCESS_KEY or a profile '%s' in %s", profile,
			 path ? path : "~/.aws/credentials");
	free(path);
	return ok ? 0 : -1;
}


/* ---- ListObjectsV2 ---- */

int objstore_list_parse(const char *xml, size_t len, objstore_key_fn fn, void *ud, int *truncated,
			char *next, size_t nextlen)
{
	char tmp[16];
	*truncated = 0;
	if (nextlen)
		next[0] = 0;
	if (!xml || !memmem(xml, len, "<ListBucketResult", 17))
		return -1;
	/* the page's own elements come after the last </Contents> (S3 puts them first, moto last) */
	const char *p = xml, *end = xml + len;
	char key[1025];
	for (;;) {
		const char *c = memmem(p, (size_t)(end - p), "<Contents>", 10);
		if (!c)
			break;
		const char *ce = memmem(c, (size_t)(end - c), "</Contents>", 11);
		if (!ce)
			return -1;
		if (objstore_xml_text(c, (size_t)(ce - c), "Key", key, sizeof key) || !key[0])
			return -1;
		if (fn && fn(ud, key))
			return -1;
		p = ce + 11;
	}
	/* IsTruncated and NextContinuationToken outside any <Contents> (a key may hold that text) */
	const char *first = memmem(xml, len, "<Contents>", 10);
	size_t headlen = first ? (size_t)(first - xml) : len;
	if (objstore_xml_text(xml, headlen, "IsTruncated", tmp, sizeof tmp) &&
	    objstore_xml_text(p, (size_t)(end - p), "IsTruncated", tmp, sizeof tmp))
		tmp[0] = 0;
	*truncated = !strcmp(tmp, "true");
	if (*truncated && objstore_xml_text(xml, headlen, "NextContinuationToken", next, nextlen) &&
	    objstore_xml_text(p, (size_t)(end - p), "NextContinuationToken", next, nextlen))
		return -1;
	return 0;
}
