/*
 * test_mindex.c - a run's metrics indexed once (common/mindex.h, issue #47 item 3) and the one
 * number parser (common/util.h, item 8).
 */
#include "tests/unit/t.h"
#include "common/mindex.h"
#include "common/util.h"

#include <stdio.h>

static void test_mindex_finds_the_first_row_of_a_key(void)
{
	struct mindex x = { 0 };
	size_t at = 99;
	CHECK(mindex_find(&x, "a", 0, &at) == -1);
	mindex_add(&x, "gemm.bf16.tflops", 0, 0);
	mindex_add(&x, "gemm.bf16.tflops", -1, 1);
	mindex_add(&x, "gemm.bf16.tflops", 0, 2);   /* the same key again: the first is found */
	mindex_add(&x, "b", 7, 3);
	mindex_add(&x, NULL, 0, 4);                 /* a row without a name is left out */
	CHECK(mindex_find(&x, "gemm.bf16.tflops", 0, &at) == 0 && at == 0);
	CHECK(mindex_find(&x, "gemm.bf16.tflops", -1, &at) == 0 && at == 1);
	CHECK(mindex_find(&x, "b", 7, &at) == 0 && at == 3);
	CHECK(mindex_find(&x, "b", 6, &at) == -1);
	CHECK(mindex_find(&x, "gemm.bf16", 0, &at) == -1);
	mindex_add(&x, "a", 1, 5);                  /* added after a search: sorted again */
	CHECK(mindex_find(&x, "a", 1, &at) == 0 && at == 5);
	mindex_free(&x);
}

static void test_mindex_of_many_rows(void)
{
	struct mindex x = { 0 };
	static char names[20000][24];
	size_t at;
	for (int i = 0; i < 20000; i++) {
		snprintf(names[i], sizeof names[i], "m%d.v", 19999 - i);
		mindex_add(&x, names[i], i % 3 - 1, (size_t)i);
	}
	int ok = 1;
	for (int i = 0; i < 20000; i++)
		ok &= mindex_find(&x, names[i], i % 3 - 1, &at) == 0 && at == (size_t)i &&
		      mindex_find(&x, names[i], i % 3, &at) == -1;
	CHECK(ok);
	mindex_free(&x);
}

static void test_one_number_parser_is_decimal_only(void)
{
	double v;
	long l;
	CHECK(gv_parse_number("8192", 1, 1e7, 1, &v) == 0 && v == 8192);
	CHECK(gv_parse_number("1e9", 1, 1e18, 1, &v) == 0 && v == 1e9);
	CHECK(gv_parse_number("1.5", 1, 10, 1, &v) == -1);          /* not whole */
	CHECK(gv_parse_number("1.5", 1, 10, 0, &v) == 0 && v == 1.5);
	CHECK(gv_parse_number("0", 1, 10, 1, &v) == -1);            /* below the range */
	CHECK(gv_parse_number("1e20", 1, 1e18, 0, &v) == -1);       /* above it */
	const char *bad[] = { "0x10", "0X1p4", "inf", "nan", "", " 5", "5 ", "1,5", "\xef\xbc\x95" };
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		CHECK(gv_parse_double(bad[i], &v) == -1);
		CHECK(gv_parse_long(bad[i], -100, 100, &l) == -1);
	}
	CHECK(gv_parse_long("-3", -5, 5, &l) == 0 && l == -3);
	CHECK(gv_parse_long("1e3", 0, 5000, &l) == -1);             /* an integer has no exponent */
}

TEST_MAIN(T(test_mindex_finds_the_first_row_of_a_key), T(test_mindex_of_many_rows),
	  T(test_one_number_parser_is_decimal_only))
