/*
 * test_real17.c - common/real17.c: %.17g and strtod's double, byte for byte
 * and bit for bit against glibc, on every kind of double: random bit
 * patterns, the values a fleet stores, exact ties, powers of ten and their
 * neighbours, the edges of the exact range and what falls outside it.
 */
#include "tests/unit/t.h"
#include "common/real17.h"

#include <float.h>
#include <stdint.h>
#include <stdlib.h>

static int fails;

static void same_print(double v)
{
	char want[64], got[REAL17_BUF];
	snprintf(want, sizeof want, "%.17g", v);
	int n = real17_print(v, got);
	if (strcmp(want, got) || n != (int)strlen(want)) {
		if (fails++ < 10)
			fprintf(stderr, "real17_print(%a): '%s', printf '%s'\n", v, got, want);
		CHECK(0);
	}
}

static void same_read(const char *s)
{
	double want = strtod(s, NULL), got = real17_read(s, strlen(s));
	if (memcmp(&want, &got, sizeof want)) {
		if (fails++ < 10)
			fprintf(stderr, "real17_read(%s): %a, strtod %a\n", s, got, want);
		CHECK(0);
	}
}

static uint64_t rng = 0x9e3779b97f4a7c15ULL;

static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static double from_bits(uint64_t u)
{
	double d;
	memcpy(&d, &u, sizeof d);
	return d;
}

static void test_print_random_bits(void)
{
	for (int i = 0; i < 100000; i++)
		same_print(from_bits(next()));
}

/* doubles of every magnitude the exact path takes, and just outside it */
static void test_print_magnitudes(void)
{
	for (int e = -30; e <= 45; e++)
		for (int i = 0; i < 1500; i++) {
			double v = ldexp((double)(next() >> 11), -53) * pow(10, e);
			same_print(v);
			same_print(-v);
			same_print(nextafter(v, 0));
			same_print(nextafter(v, INFINITY));
		}
}

/* powers of ten and their neighbours: where the decimal exponent's estimate is off by one */
static void test_print_powers_and_edges(void)
{
	for (int e = -320; e <= 308; e++) {
		char t[16];
		snprintf(t, sizeof t, "1e%d", e);
		double v = strtod(t, NULL);
		same_print(v);
		same_print(nextafter(v, 0));
		same_print(nextafter(v, INFINITY));
		same_print(-v);
	}
	const double edge[] = { 0.0, -0.0, 1.0, -1.0, 0.5, 0.1, 0.2, 0.3, 1e-4, 9.9999999999999995e-5,
				1e-5, 1e16, 1e17, 99999999999999999.0, 9.9999999999999999e16, 123456789012345678.0,
				DBL_MAX, DBL_MIN, DBL_TRUE_MIN, DBL_EPSILON, 4503599627370497.5,
				1234567890123456.25, 1234567890123456.75, 9007199254740993.0, 2.5, 1e22, 1e23,
				INFINITY, -INFINITY, NAN };
	for (size_t i = 0; i < sizeof edge / sizeof edge[0]; i++)
		same_print(edge[i]);
}

/* ties: 17 digits and a 5 after them, exactly (x = 2^50 + j/4 and kin); printf rounds them to even */
static void test_print_ties(void)
{
	for (int s = 1; s <= 8; s++)
		for (int i = 0; i < 20000; i++) {
			double v = ldexp((double)((next() >> 11) | (1ULL << 52)), -s);
			same_print(v);
		}
}

/* integers, short decimals and the 17-digit decimals a store holds */
static void test_print_stored_forms(void)
{
	for (int i = 0; i < 100000; i++) {
		char t[40];
		snprintf(t, sizeof t, "%.*f", (int)(next() % 9), (double)(next() % 100000000) / 1000.0);
		same_print(strtod(t, NULL));
		snprintf(t, sizeof t, "%d.%0*llu", (int)(next() % 2000), 8, (unsigned long long)(next() % 100000000));
		same_print(strtod(t, NULL));
		same_print((double)(next() >> (next() % 64)));
	}
}

static void test_read_fast_and_fallback(void)
{
	static const char *const ok[] = { "0.0", "-0.0", "1.5", "0.1", "124.008", "0.00877491", "8.81e-08",
					  "2e-05", "2.0000000000000002e-5", "9007199254740993.0",
					  "9007199254740992.0", "1e22", "1e23", "1.7976931348623157e308",
					  "4.9406564584124654e-324", "53.198838525541881", "1E+2", "-3.25e-3" };
	for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++)
		same_read(ok[i]);
	for (int i = 0; i < 200000; i++) {
		char t[40];
		double v = from_bits(next());
		if (!isfinite(v))
			continue;
		snprintf(t, sizeof t, "%.17g", v);
		same_read(t);
		snprintf(t, sizeof t, "%.*g", (int)(1 + next() % 16), v);
		same_read(t);
		snprintf(t, sizeof t, "%llu.%03u", (unsigned long long)(next() % 100000000), (unsigned)(next() % 1000));
		same_read(t);
	}
	double d;
	CHECK(!real17_read_fast("12345678901234567890", "12345678901234567890" + 20, &d));
	CHECK(!real17_read_fast("1e23", "1e23" + 4, &d));
	CHECK(real17_read_fast("1.5e2", "1.5e2" + 5, &d) && d == 150.0);
}

/*
 * The 128-bit path of real17_decimal: 17 to 19 significant digits (what %.17g writes, and more) at every power
 * of ten it takes and just outside it; exact ties of both its branches: an integer halfway between two doubles
 * above 2^53 (m * 10^0), and r / 2^k written as (r * 5^k) / 10^k with r odd of 54 bits (a quotient with no rest).
 */
static void test_read_long_mantissas(void)
{
	for (int e = -24; e <= 22; e++)
		for (int i = 0; i < 3000; i++) {
			char t[48];
			int digits = 17 + (int)(next() % 3);
			uint64_t m = next() % 10000000000000000000ULL;
			snprintf(t, sizeof t, "%s%0*llue%d", i & 1 ? "-" : "", digits, (unsigned long long)(m % (digits == 19 ?
				 10000000000000000000ULL : digits == 18 ? 1000000000000000000ULL : 100000000000000000ULL)), e);
			same_read(t);
			snprintf(t, sizeof t, "0.%0*llu", digits, (unsigned long long)(m % 100000000000000000ULL));
			same_read(t);
		}
	for (int i = 0; i < 100000; i++) {
		char t[48];
		double v = ldexp(1.0 + (double)(next() >> 12) / 4503599627370496.0, 53 + (int)(next() % 10));
		uint64_t mid = (uint64_t)v + (uint64_t)((nextafter(v, INFINITY) - v) / 2);
		for (int d = -1; d <= 1; d++) {
			snprintf(t, sizeof t, "%llu.0", (unsigned long long)(mid + (uint64_t)d));
			same_read(t);
		}
		static const uint64_t five[] = { 5, 25, 125 };
		uint64_t r = (next() >> 10) | 1 | (1ULL << 53);   /* odd, 54 bits */
		snprintf(t, sizeof t, "%llue-%d", (unsigned long long)(r * five[i % 3]), i % 3 + 1);
		same_read(t);
	}
	double d;
	CHECK(real17_read_fast("30.546828627999986", "30.546828627999986" + 18, &d) && d == strtod("30.546828627999986", NULL));
	CHECK(!real17_read_fast("1e-23", "1e-23" + 5, &d) || d == 1e-23);
}

TEST_MAIN(T(test_print_random_bits), T(test_print_magnitudes), T(test_print_powers_and_edges),
	  T(test_print_ties), T(test_print_stored_forms), T(test_read_fast_and_fallback),
	  T(test_read_long_mantissas))
