/*
 * test_jsplit.c - the streaming array splitter of `results import` (common/jsplit.c).
 */
#include "common/jsplit.h"
#include "platform/objstore_util.h"
#include "tests/unit/t.h"

#include <stdio.h>
#include <string.h>

/* Splits text reading rsize bytes at a time (0: the default); the elements joined by '|' into out;
 * returns jsplit_next's last answer. */
static int split_by(const char *text, size_t rsize, char *out, size_t outlen, char *err, size_t errlen)
{
	FILE *f = fmemopen((void *)text, strlen(text), "r");
	struct jsplit j;
	jsplit_init(&j, f);
	j.rsize = rsize;
	const char *e;
	size_t len;
	int r;
	out[0] = 0;
	while ((r = jsplit_next(&j, &e, &len)) == 1) {
		if (out[0])
			strncat(out, "|", outlen - strlen(out) - 1);
		strncat(out, e, outlen - strlen(out) - 1);
	}
	snprintf(err, errlen, "%s", j.err);
	jsplit_free(&j);
	fclose(f);
	return r;
}

static int split(const char *text, char *out, size_t outlen, char *err, size_t errlen)
{
	return split_by(text, 0, out, outlen, err, errlen);
}

/* Reads of 1 to 9 bytes split as one of 64 KiB: the same elements, end, error and byte offset. */
static void test_reads_of_any_size_split_alike(void)
{
	static const char *const texts[] = {
		" [ {\"a\": \"x,]}\\\"\"} ,\n[1, [2]] , \"s\" ,null ]\n", "[1, 2,, 3]", "[1, {\"a\": 2]",
		"[1] 2", "[1, }]", "  {\"one\": \"t\\\\\"}\n\n", "[\"a\\\"]\", [[[]]], {\"b\": [\"]\"]}]",
	};
	for (size_t k = 0; k < sizeof texts / sizeof texts[0]; k++) {
		char want[256], werr[160], got[256], gerr[160];
		int r = split_by(texts[k], 0, want, sizeof want, werr, sizeof werr);
		for (size_t n = 1; n <= 9; n++) {
			CHECK(split_by(texts[k], n, got, sizeof got, gerr, sizeof gerr) == r);
			CHECK_STR(got, want);
			CHECK_STR(gerr, werr);
		}
	}
}

static void test_elements(void)
{
	char out[256], err[160];
	CHECK(split(" [ {\"a\": \"x,]}\\\"\"} ,\n[1, [2]] , \"s\" ,null ]\n", out, sizeof out, err, sizeof err) == 0);
	CHECK_STR(out, "{\"a\": \"x,]}\\\"\"}|[1, [2]]|\"s\"|null");
	CHECK(split("[]", out, sizeof out, err, sizeof err) == 0);
	CHECK_STR(out, "");
	CHECK(split("  {\"one\": 1}\n\n", out, sizeof out, err, sizeof err) == 0);
	CHECK_STR(out, "{\"one\": 1}");
}

static void test_errors_name_the_element(void)
{
	char out[256], err[160];
	CHECK(split("[1, 2,, 3]", out, sizeof out, err, sizeof err) == -1);
	CHECK_STR(out, "1|2");
	CHECK(strstr(err, "element 2 at byte") && strstr(err, "empty element"));
	CHECK(split("[1, {\"a\": 2]", out, sizeof out, err, sizeof err) == -1);
	CHECK(strstr(err, "element 1") && strstr(err, "unterminated array"));
	CHECK(split("[1] 2", out, sizeof out, err, sizeof err) == -1);
	CHECK(strstr(err, "text after the closing"));
	CHECK(split("[1, }]", out, sizeof out, err, sizeof err) == -1);
	CHECK(strstr(err, "element 1") && strstr(err, "unexpected '}'"));
	CHECK(split(" \n", out, sizeof out, err, sizeof err) == -1);
	CHECK(strstr(err, "empty document"));
}

static int count_key(void *ud, const char *key)
{
	(void)key;
	++*(int *)ud;
	return 0;
}

static void test_list_objects_page(void)
{
	/* moto 5.2.1 puts IsTruncated before the Contents, AWS after the Name; both read */
	const char *moto = "<?xml version=\"1.0\"?><ListBucketResult><IsTruncated>true</IsTruncated>"
			   "<Contents><Key>fleet/a&amp;b.json</Key></Contents><Contents><Key>fleet/c.json</Key>"
			   "</Contents><NextContinuationToken>tok/+=</NextContinuationToken></ListBucketResult>";
	int n = 0, trunc = -1;
	char next[64];
	CHECK(objstore_list_parse(moto, strlen(moto), count_key, &n, &trunc, next, sizeof next) == 0);
	CHECK(n == 2 && trunc == 1);
	CHECK_STR(next, "tok/+=");
	const char *last = "<ListBucketResult><Name>b</Name><IsTruncated>false</IsTruncated></ListBucketResult>";
	n = 0;
	CHECK(objstore_list_parse(last, strlen(last), count_key, &n, &trunc, next, sizeof next) == 0);
	CHECK(n == 0 && trunc == 0);
	const char *err = "<Error><Code>AccessDenied</Code></Error>";
	CHECK(objstore_list_parse(err, strlen(err), count_key, &n, &trunc, next, sizeof next) == -1);
	const char *cut = "<ListBucketResult><Contents><Key>a.json</Key>";
	CHECK(objstore_list_parse(cut, strlen(cut), count_key, &n, &trunc, next, sizeof next) == -1);
}

TEST_MAIN(T(test_elements), T(test_errors_name_the_element), T(test_reads_of_any_size_split_alike),
	  T(test_list_objects_page))
