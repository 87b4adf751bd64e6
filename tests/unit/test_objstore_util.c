/*
 * test_objstore_util.c - object URLs into request URLs (AWS virtual-hosted
 * and path style, S3-compatible endpoints), masking of secrets in URLs, the
 * AWS shared files' format, Content-Range and S3's XML answers (the XML
 * bodies are what S3 and moto send).
 */
#include "platform/objstore_util.h"
#include "tests/unit/t.h"

#include <stdlib.h>

static void test_s3_endpoint_path_style(void)
{
	struct os_target t;
	char err[256];
	CHECK(objstore_parse_target("s3://my-bucket/dir/a b+c.bin", "http://127.0.0.1:9000/",
				    "eu-west-1", &t, err, sizeof err) == 0);
	CHECK(t.is_s3);
	CHECK_STR(t.bucket, "my-bucket");
	CHECK_STR(t.key, "dir/a b+c.bin");
	CHECK_STR(t.base, "http://127.0.0.1:9000/my-bucket");
	CHECK_STR(t.url, "http://127.0.0.1:9000/my-bucket/dir/a%20b%2Bc.bin");
	CHECK_STR(t.display, "s3://my-bucket/dir/a b+c.bin");
	objstore_target_free(&t);
}

static void test_s3_aws_hosts(void)
{
	struct os_target t;
	CHECK(objstore_parse_target("s3://data-1/k", NULL, "us-west-2", &t, NULL, 0) == 0);
	CHECK_STR(t.url, "https://data-1.s3.us-west-2.amazonaws.com/k");
	objstore_target_free(&t);
	/* dots in the bucket break virtual-hosted TLS names: path style */
	CHECK(objstore_parse_target("s3://a.b.c/k", NULL, NULL, &t, NULL, 0) == 0);
	CHECK_STR(t.url, "https://s3.us-east-1.amazonaws.com/a.b.c/k");
	objstore_target_free(&t);
}

static void test_bad_urls(void)
{
	struct os_target t;
	char err[256];
	CHECK(objstore_parse_target("s3://bucket", NULL, NULL, &t, err, sizeof err) == -1);
	CHECK_STR(err, "s3 url must be s3://BUCKET/KEY");
	CHECK(objstore_parse_target("s3://bucket/", NULL, NULL, &t, err, sizeof err) == -1);
	CHECK(objstore_parse_target("s3://UPPER/k", NULL, NULL, &t, err, sizeof err) == -1);
	CHECK_STR(err, "invalid s3 bucket name in url");
	CHECK(objstore_parse_target("s3://bkt/k", "ftp://x", NULL, &t, err, sizeof err) == -1);
	CHECK_STR(err, "invalid object store endpoint 'ftp://x'");
	CHECK(objstore_parse_target("gs://b/k", NULL, NULL, &t, err, sizeof err) == -1);
	CHECK(strstr(err, "unsupported object store url 'gs://b/k'") == err);
	CHECK(objstore_parse_target("http://u:secret@/x?token=abc", NULL, NULL, &t, err,
				    sizeof err) == -1);
	CHECK(!strstr(err, "secret") && !strstr(err, "abc"));
	CHECK(objstore_parse_target("", NULL, NULL, &t, err, sizeof err) == -1);
	CHECK(objstore_parse_target(NULL, NULL, NULL, &t, err, sizeof err) == -1);
}

static void test_http_url(void)
{
	struct os_target t;
	CHECK(objstore_parse_target("https://cdn.example/x.bin?X-Amz-Signature=zz", NULL, NULL, &t,
				    NULL, 0) == 0);
	CHECK(!t.is_s3);
	CHECK_STR(t.url, "https://cdn.example/x.bin?X-Amz-Signature=zz");
	CHECK_STR(t.display, "https://cdn.example/x.bin?***");
	objstore_target_free(&t);
}

static void test_mask(void)
{
	char *m = objstore_mask_url("https://user:pw@host:8443/a/b?q=1#f");
	CHECK_STR(m, "https://***@host:8443/a/b?***");
	free(m);
	m = objstore_mask_url("http://host/p@q");
	CHECK_STR(m, "http://host/p@q"); /* an '@' in the path is not userinfo */
	free(m);
	m = objstore_mask_url("user:pw@host/x");
	CHECK_STR(m, "***@host/x");
	free(m);
	m = objstore_mask_url("x?y://a:b@c");
	CHECK_STR(m, "x?***");
	free(m);
}

static void test_uri_encode(void)
{
	char *e = objstore_uri_encode("a/b c~_.-é", 1);
	CHECK_STR(e, "a/b%20c~_.-%C3%A9");
	free(e);
	e = objstore_uri_encode("x/y+z=", 0);
	CHECK_STR(e, "x%2Fy%2Bz%3D");
	free(e);
}

static void test_ini(void)
{
	const char *creds =
		"# comment\n[default]\naws_access_key_id = AKIADEFAULT\r\n"
		"aws_secret_access_key=sdefault\n\n[ work ]\n ; note\n"
		"aws_access_key_id\t=\tAKIAWORK  \naws_session_token = tok==\n";
	char *v = objstore_ini_get(creds, "default", "aws_access_key_id");
	CHECK_STR(v, "AKIADEFAULT");
	free(v);
	v = objstore_ini_get(creds, "default", "aws_secret_access_key");
	CHECK_STR(v, "sdefault");
	free(v);
	v = objstore_ini_get(creds, "work", "aws_access_key_id");
	CHECK_STR(v, "AKIAWORK");
	free(v);
	v = objstore_ini_get(creds, "work", "aws_session_token");
	CHECK_STR(v, "tok==");
	free(v);
	CHECK(objstore_ini_get(creds, "work", "aws_secret_access_key") == NULL);
	CHECK(objstore_ini_get(creds, "nope", "aws_access_key_id") == NULL);
	v = objstore_ini_get("[profile dev]\nregion = eu-central-1", "profile dev", "region");
	CHECK_STR(v, "eu-central-1");
	free(v);
}

static void test_content_range(void)
{
	CHECK(objstore_content_range_total(" bytes 0-0/25165824\r\n") == 25165824);
	CHECK(objstore_content_range_total("bytes 0-0/*") == -1);
	CHECK(objstore_content_range_total("bytes */100") == 100);
	CHECK(objstore_content_range_total("items 0-0/5") == -1);
	CHECK(objstore_content_range_total("bytes 0-0/12x") == -1);
	CHECK(objstore_content_range_total(NULL) == -1);
}

static void test_xml(void)
{
	/* moto's answer to a request signed with the wrong secret (shortened) */
	const char *err = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error>\n"
			  "  <Code>SignatureDoesNotMatch</Code>\n  <Message>The request signature we "
			  "calculated does not match the signature you provided.</Message>\n</Error>";
	char out[128];
	CHECK(objstore_xml_text(err, strlen(err), "Code", out, sizeof out) == 0);
	CHECK_STR(out, "SignatureDoesNotMatch");
	const char *create = "<InitiateMultipartUploadResult><Bucket>b</Bucket><Key>k</Key>"
			     "<UploadId>VXBsb2FkIElE&amp;x</UploadId></InitiateMultipartUploadResult>";
	CHECK(objstore_xml_text(create, strlen(create), "UploadId", out, sizeof out) == 0);
	CHECK_STR(out, "VXBsb2FkIElE&x");
	CHECK(objstore_xml_text(create, strlen(create), "Missing", out, sizeof out) == -1);
	CHECK(objstore_xml_text(create, strlen(create), "UploadId", out, 4) == -1); /* too long */
	CHECK(objstore_xml_text("<Code>unterminated", 18, "Code", out, sizeof out) == -1);
}

TEST_MAIN(T(test_s3_endpoint_path_style), T(test_s3_aws_hosts), T(test_bad_urls),
	  T(test_http_url), T(test_mask), T(test_uri_encode), T(test_ini), T(test_content_range),
	  T(test_xml))
