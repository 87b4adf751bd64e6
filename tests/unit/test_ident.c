/*
 * test_ident.c - identity strings (results/ident.c) and the fingerprint
 * schema's time check (results/fp_check.c).
 */
#include "tests/unit/t.h"
#include "results/fp_check.h"
#include "common/ident.h"

#include <string.h>

static void test_ident_check(void)
{
	CHECK(ident_check("p5.48xlarge") == NULL);
	CHECK(ident_check("ecs.gn7i-c8g1.2xlarge") == NULL);
	CHECK(ident_check("my box (rack 3)") == NULL);
	CHECK(ident_check("h\xc3\xa9t\xc3\xa9ro") == NULL);       /* é: printable UTF-8 */
	CHECK_STR(ident_check(""), "is empty");
	CHECK_STR(ident_check("a\x1b[31m"), "holds a control character");
	CHECK_STR(ident_check("a\tb"), "holds a control character");
	CHECK_STR(ident_check("a\x7f"), "holds a control character");
	CHECK_STR(ident_check("a\xc2\x85"), "holds a control character");   /* U+0085, C1 */
	CHECK_STR(ident_check("a\xe2\x80\xae" "b"), "holds a bidirectional override");
	CHECK_STR(ident_check("p5\xff"), "is not valid utf-8");
	CHECK_STR(ident_check("\xc0\xaf"), "is not valid utf-8");            /* overlong '/' */
	CHECK_STR(ident_check("\xed\xa0\x80"), "is not valid utf-8");        /* a surrogate */
	CHECK_STR(ident_check("\xe2\x82"), "is not valid utf-8");            /* cut short */
	char big[IDENT_MAX + 2];
	memset(big, 'x', sizeof big - 1);
	big[sizeof big - 1] = 0;
	CHECK_STR(ident_check(big), "is longer than 256 bytes");
	big[IDENT_MAX] = 0;
	CHECK(ident_check(big) == NULL);
}

static void test_ident_escape(void)
{
	char out[64];
	ident_escape("a\x1b[2Jb\x07\\", out, sizeof out);
	CHECK_STR(out, "a\\e[2Jb\\x07\\\\");
	ident_escape("p5\xff\xc3\xa9", out, sizeof out);
	CHECK_STR(out, "p5\\xff\xc3\xa9");
	ident_escape("x\xe2\x80\xaey\xc2\x85", out, sizeof out);
	CHECK_STR(out, "x\\u{202e}y\\u{0085}");
	ident_escape("\x1b\x1b\x1b\x1b", out, 7); /* never a cut escape, always terminated */
	CHECK_STR(out, "\\e\\e\\e");
	ident_escape(NULL, out, sizeof out);
	CHECK_STR(out, "");
}

static void test_csv_formula(void)
{
	CHECK(ident_csv_formula("=cmd|' /C calc'!A0"));
	CHECK(ident_csv_formula("+SUM(1)"));
	CHECK(ident_csv_formula("-1+1"));
	CHECK(ident_csv_formula("@x"));
	CHECK(ident_csv_formula("\tx"));
	CHECK(ident_csv_formula("\rx"));
	CHECK(!ident_csv_formula("p5.48xlarge"));
	CHECK(!ident_csv_formula(""));
	CHECK(!ident_csv_formula(NULL));
}

static void test_iso8601(void)
{
	CHECK(fp_iso8601("2026-11-22T04:00:00Z"));
	CHECK(fp_iso8601("2026-11-22T04:00:00.123Z"));
	CHECK(fp_iso8601("2026-11-22T04:00:00+05:30"));
	CHECK(fp_iso8601("2024-02-29T00:00:00Z"));
	CHECK(!fp_iso8601("yesterday"));
	CHECK(!fp_iso8601("2026-02-30T00:00:00Z"));
	CHECK(!fp_iso8601("2026-13-01T00:00:00Z"));
	CHECK(!fp_iso8601("2026-11-22T24:00:00Z"));
	CHECK(!fp_iso8601("2026-11-22 04:00:00Z"));
	CHECK(!fp_iso8601("2026-11-22T04:00:00"));
	CHECK(!fp_iso8601("2026-11-22T04:00:00.Z"));
	CHECK(!fp_iso8601("2026-11-22T04:00:00Zjunk"));
	CHECK(!fp_iso8601(NULL));
}

/* The same instant in UTC, so that stored times order as instants (issue 28 item 12). */
static void test_iso8601_utc(void)
{
	static const struct { const char *in, *out; } cases[] = {
		{ "2026-11-22T04:00:00Z", "2026-11-22T04:00:00Z" },
		{ "2026-11-22T04:00:00+05:30", "2026-11-21T22:30:00Z" },
		{ "2026-11-22T23:30:00.250-02:00", "2026-11-23T01:30:00.250Z" },
		{ "2024-03-01T00:30:00+01:00", "2024-02-29T23:30:00Z" },
		{ "2026-12-31T23:00:00-01:00", "2027-01-01T00:00:00Z" },
	};
	char out[48];
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		CHECK(fp_iso8601_utc(cases[i].in, out, sizeof out) == 0);
		CHECK_STR(out, cases[i].out);
	}
	CHECK(fp_iso8601_utc("yesterday", out, sizeof out) == -1);
	/* impossible dates are no times (issue 28, smaller inputs) */
	CHECK(!fp_iso8601("2025-02-29T00:00:00Z") && !fp_iso8601("1900-02-29T00:00:00Z"));
	CHECK(fp_iso8601("2000-02-29T00:00:00Z") && fp_iso8601("2028-02-29T12:00:00Z"));
	CHECK(!fp_iso8601("2026-04-31T00:00:00Z") && !fp_iso8601("2026-11-22T24:00:00Z"));
	/* uuids: the nil uuid and one without dashes are refused */
	CHECK(fp_uuid_ok("cafbf7a5-1c2d-4e5f-8a9b-0c1d2e3f4a5b"));
	CHECK(!fp_uuid_ok("00000000-0000-0000-0000-000000000000"));
	CHECK(!fp_uuid_ok("cafbf7a51c2d4e5f8a9b0c1d2e3f4a5b"));
	CHECK(!fp_uuid_ok("cafbf7a5-1c2d-4e5f-8a9b-0c1d2e3f4a5-") && !fp_uuid_ok("CAFBF7A5-1C2D-4E5F-8A9B-0C1D2E3F4A5B"));
	CHECK(!fp_uuid_ok("cafbf7a5-1c2d-4e5f-8a9b0-c1d2e3f4a5b") && !fp_uuid_ok(NULL));
	CHECK(fp_iso8601_utc(NULL, out, sizeof out) == -1);
}

/* issue 52: names compared as a reader sees them; reasons hold a word */
static void test_ident_fold(void)
{
	char out[64];
	static const char *const same[] = {
		"default", "Default", "DEFAULT", "default ", "  default",
		"\xef\xbd\x84\xef\xbd\x85\xef\xbd\x86\xef\xbd\x81\xef\xbd\x95\xef\xbd\x8c\xef\xbd\x94",   /* fullwidth */
		"d\xd0\xb5" "fault",                 /* Cyrillic e */
		"\xf0\x9d\x90\x9d\xf0\x9d\x90\x9e\xf0\x9d\x90\x9f\xf0\x9d\x90\x9a\xf0\x9d\x90\xae\xf0\x9d\x90\xa5"
		"\xf0\x9d\x90\xad",                  /* mathematical bold */
		"default\xe3\x80\x80",               /* ideographic space */
		/* issue 57: the confusables skeleton (TR39, ICU) after NFKD without combining marks */
		"d\xc3\xa9" "fault",                 /* an accent */
		"\xe1\xb4\x85\xe1\xb4\x87\xea\x9c\xb0\xe1\xb4\x80\xe1\xb4\x9c\xca\x9f\xe1\xb4\x9b",   /* small capitals */
		"\xf0\x9f\x84\xb3" "efault",          /* a squared D */
		"\xea\x93\x93" "efault",              /* Lisu DA */
	};
	for (size_t i = 0; i < sizeof same / sizeof same[0]; i++) {
		CHECK(ident_fold(same[i], out, sizeof out) == NULL);
		CHECK_STR(out, "default");
	}
	CHECK(ident_fold("de\xef\xac\x81" "ault", out, sizeof out) == NULL);   /* the fi ligature */
	CHECK_STR(out, "defiault");
	CHECK(ident_fold("lab  one", out, sizeof out) == NULL);
	CHECK_STR(out, "lab one");
	CHECK(ident_fold("default\xe2\x80\x8b", out, sizeof out) != NULL);   /* zero-width space */
	CHECK(ident_fold("def\xc2\xad" "ault", out, sizeof out) != NULL);    /* soft hyphen */
	CHECK(ident_fold("def\xe2\x80\xa8" "ault", out, sizeof out) != NULL);   /* line separator */
	CHECK(ident_fold("default\xe2\xa0\x80", out, sizeof out) != NULL);      /* blank Braille pattern */
	CHECK(ident_fold("lab\x01", out, sizeof out) != NULL);
	CHECK(ident_fold("\xe6\x97\xa5\xe6\x9c\xac", out, sizeof out) == NULL);   /* a Japanese name keeps its own */
	CHECK_STR(out, "\xe6\x97\xa5\xe6\x9c\xac");
	CHECK(ident_words("ok") == 1 && ident_words("no") == 1 && ident_words("a shared lab host") == 4);
	CHECK(ident_words("   ") == 0 && ident_words("\xe2\x80\x8b") == 0 && ident_words("...") == 0);
	CHECK(ident_words("") == 0 && ident_words("\xe2\x80\x8b \xe2\x81\xa0") == 0);
	CHECK(ident_words("\xe6\xa4\x9c\xe8\xa8\xbc") == 1);
}

TEST_MAIN(T(test_ident_fold), T(test_ident_check), T(test_ident_escape), T(test_csv_formula), T(test_iso8601), T(test_iso8601_utc))
