/* test_redact.c - credentials never reach a message (common/util.h gv_redact). */
#include "tests/unit/t.h"
#include "common/util.h"

#include <string.h>

static void test_userinfo_and_credential_parameters(void)
{
	static const struct { const char *in, *out; } cases[] = {
		{ "HTTP 503 from https://user:pa55@prices.example/x.csv", "HTTP 503 from https://***@prices.example/x.csv" },
		{ "cannot fetch http://tok@127.0.0.1:9/: refused", "cannot fetch http://***@127.0.0.1:9/: refused" },
		{ "https://ecs.aliyuncs.com/?Action=DescribePrice&AccessKeyId=LTAI5t&SignatureMethod=HMAC-SHA1"
		  "&Signature=abc%3D&Timestamp=2026",
		  "https://ecs.aliyuncs.com/?Action=DescribePrice&AccessKeyId=***&SignatureMethod=***"
		  "&Signature=***&Timestamp=2026" },
		{ "s3://b/k?X-Amz-Credential=AKIA%2F1&X-Amz-Signature=ff&X-Amz-Security-Token=zz&x=1",
		  "s3://b/k?X-Amz-Credential=***&X-Amz-Signature=***&X-Amz-Security-Token=***&x=1" },
		{ "http://h/p?token=t1&api_key=k&secret=s&region=us-east-1#f",
		  "http://h/p?token=***&api_key=***&secret=***&region=us-east-1#f" },
		/* nothing to hide: unchanged */
		{ "fnv64:5ec48dcd0a19febd", "fnv64:5ec48dcd0a19febd" },
		{ "prices a & b, c=d", "prices a & b, c=d" },
		{ "https://host/path?region=eu-west-1", "https://host/path?region=eu-west-1" },
		{ "", "" },
	};
	char out[512];
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
		CHECK_STR(gv_redact(cases[i].in, out, sizeof out), cases[i].out);
	/* truncation keeps a terminated string, and hides the secret even when cut */
	char small[24];
	gv_redact("http://user:secretpassword@h/", small, sizeof small);
	CHECK(strlen(small) < sizeof small && !strstr(small, "secret"));
	CHECK_STR(gv_redact(NULL, out, sizeof out), "");
	/* longer than the output: cut, ended, never a loop (a 2 KiB signed query reached a 1 KiB buffer) */
	char big[4096], tiny[64];
	memset(big, 'a', sizeof big - 1);
	big[sizeof big - 1] = '\0';
	memcpy(big, "https://h/?x=1&Signature=", 25);
	CHECK_STR(gv_redact(big, tiny, sizeof tiny), "https://h/?x=1&Signature=***");
	CHECK(strlen(gv_redact(big + 25, tiny, sizeof tiny)) == sizeof tiny - 1);
}

TEST_MAIN(T(test_userinfo_and_credential_parameters))
