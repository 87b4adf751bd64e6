/*
 * objstore_util.h - the text handling of the objstore bench, apart from the
 * transfers so it can be unit-tested and fuzzed: object URLs (s3:// and
 * http(s)://) into request URLs, masking of URLs for messages, the AWS
 * shared credentials/config file format, Content-Range, and the few XML
 * elements S3 answers with.
 */
#ifndef GPUVET_OBJSTORE_UTIL_H
#define GPUVET_OBJSTORE_UTIL_H

#include <stddef.h>

struct os_target {
	int is_s3;
	char *bucket;    /* s3 only */
	char *key;       /* s3 only, as given (not encoded) */
	char *base;      /* s3: URL of the bucket ("http://127.0.0.1:9000/b"); else NULL */
	char *url;       /* request URL of the object (key percent-encoded for s3) */
	char *display;   /* for messages: no userinfo, no query string */
};

/*
 * url: s3://BUCKET/KEY or http(s)://...; endpoint: S3-compatible service
 * base URL (path-style addressing) or NULL for AWS (virtual-hosted style,
 * path style when the bucket name has dots); region for the AWS host name.
 * 0, or -1 with a lowercase message in err (which never holds the URL's
 * userinfo or query string).
 */
int objstore_parse_target(const char *url, const char *endpoint, const char *region,
			  struct os_target *t, char *err, size_t errlen);
void objstore_target_free(struct os_target *t);

/* URL with "user:pass@" replaced by "***@" and any "?query" by "?***"; malloc'd. */
char *objstore_mask_url(const char *url);

/*
 * Percent-encodes s (RFC 3986 unreserved characters kept, and '/' when
 * keep_slash) with uppercase hex, as SigV4 canonical requests want; malloc'd.
 */
char *objstore_uri_encode(const char *s, int keep_slash);

/*
 * Looks up `key` in section `section` of an INI text in the AWS shared
 * files' format ("[default]", "[profile x]", "key = value", '#'/';'
 * comments).  Returns a malloc'd value or NULL.
 */
char *objstore_ini_get(const char *text, const char *section, const char *key);

/* "bytes 0-0/12345" -> 12345; -1 when not a valid complete-length form. */
long long objstore_content_range_total(const char *value);

/*
 * The text of the first <tag>...</tag> in xml[0..len), with &quot; &amp;
 * &lt; &gt; &apos; decoded, into out; 0 or -1 when absent or too long.
 */
int objstore_xml_text(const char *xml, size_t len, const char *tag, char *out, size_t outlen);

/*
 * Region: AWS_REGION, AWS_DEFAULT_REGION, the profile's (AWS_PROFILE) in
 * ~/.aws/config (AWS_CONFIG_FILE), else us-east-1; only [A-Za-z0-9-] kept.
 */
void objstore_aws_region(char *out, size_t outlen);
/*
 * Credentials: AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY / AWS_SESSION_TOKEN,
 * else profile AWS_PROFILE in ~/.aws/credentials (AWS_SHARED_CREDENTIALS_FILE).
 * 0 with malloc'd strings (token may stay NULL), or -1 with a reason (never a secret).
 */
int objstore_aws_credentials(char **access, char **secret, char **token, char *why, size_t whylen);

/*
 * One page of a ListObjectsV2 answer: fn(ud, key) for each <Contents><Key>
 * (entities decoded; a key over 1024 bytes is an error); *truncated from
 * <IsTruncated>, next (NUL-terminated, may be empty) from
 * <NextContinuationToken>.  0, or -1 when the text is not a ListBucketResult.
 */
typedef int (*objstore_key_fn)(void *ud, const char *key);
int objstore_list_parse(const char *xml, size_t len, objstore_key_fn fn, void *ud, int *truncated,
			char *next, size_t nextlen);

#endif
