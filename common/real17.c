/*
 * real17.c - see real17.h.  %.17g is the double's 17 significant digits,
 * correctly rounded (ties to even, glibc's rounding of an exact tie), in
 * %g's layout.  For x = m * 2^e2 and its decimal exponent k, the digits are
 * D = round(x * 10^(16-k)), 10^16 <= D < 10^17: computed exactly as
 * (m * 10^p) >> -e2 for p = 16-k >= 0, or (m << e2) / 10^-p, whenever those
 * fit 128 bits (x from about 1e-6 to 1e38); anything else goes to snprintf.
 */
#include "common/real17.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef unsigned __int128 u128;

static const uint64_t pow10_u64[] = {
	1ULL, 10ULL, 100ULL, 1000ULL, 10000ULL, 100000ULL, 1000000ULL, 10000000ULL, 100000000ULL,
	1000000000ULL, 10000000000ULL, 100000000000ULL, 1000000000000ULL, 10000000000000ULL,
	100000000000000ULL, 1000000000000000ULL, 10000000000000000ULL, 100000000000000000ULL,
	1000000000000000000ULL, 10000000000000000000ULL,
};

static u128 pow10_u128(int p)
{
	return p < 20 ? pow10_u64[p] : (u128)pow10_u64[19] * pow10_u64[p - 19];
}

/*
 * The floor of x * 10^p as q, and where the rest lies against one half:
 * -1 below, 0 exactly, 1 above.  0 when it does not fit 128 bits.
 */
static int scaled(uint64_t m, int e2, int p, uint64_t *q, int *half)
{
	if (p >= 0) {
		if (p > 22)
			return 0;
		u128 n = (u128)m * pow10_u128(p);          /* < 2^53 * 10^22 < 2^127 */
		if (e2 >= 0) {
			if (e2 > 10 || (n >> (127 - e2)))
				return 0;
			u128 v = n << e2;
			if (v >> 64)
				return 0;
			*q = (uint64_t)v;
			*half = -1;
			return 1;
		}
		int s = -e2;
		if (s >= 127)
			return 0;
		u128 v = n >> s, rest = n - (v << s), h = (u128)1 << (s - 1);
		if (v >> 64)
			return 0;
		*q = (uint64_t)v;
		*half = rest < h ? -1 : rest > h ? 1 : 0;
		return 1;
	}
	int t = -p;
	if (t > 38 || e2 < 0 || e2 > 74)
		return 0;
	u128 x = (u128)m << e2, d = pow10_u128(t), v = x / d, rest = x - v * d;
	if (v >> 64)
		return 0;
	*q = (uint64_t)v;
	*half = 2 * rest < d ? -1 : 2 * rest > d ? 1 : 0;
	return 1;
}

/* x's 17 digits (D) and decimal exponent k, exactly; 0 when out of range. */
static int digits17(double x, uint64_t *D, int *k)
{
	int e2;
	double fr = frexp(x, &e2);                 /* x = fr * 2^e2, 0.5 <= fr < 1 */
	uint64_t m = (uint64_t)ldexp(fr, 53);      /* exact: a double has at most 53 bits */
	e2 -= 53;
	/* 2^(e2+52) <= x < 2^(e2+53): log10(2) times the lower bound is floor(log10(x)) or one less */
	int kk = (int)floor((e2 + 52) * 0.30102999566398120);
	for (int tries = 0; tries < 3; tries++) {
		uint64_t q;
		int half;
		if (!scaled(m, e2, 16 - kk, &q, &half))
			return 0;
		if (q < pow10_u64[16]) {
			kk--;
			continue;
		}
		if (q >= pow10_u64[17]) {
			kk++;
			continue;
		}
		if (half > 0 || (half == 0 && (q & 1)))
			q++;
		if (q == pow10_u64[17]) {
			q = pow10_u64[16];
			kk++;
		}
		*D = q;
		*k = kk;
		return 1;
	}
	return 0;
}

int real17_print(double v, char *buf)
{
	uint64_t D;
	int k;
	if (!isfinite(v) || v == 0 || !digits17(fabs(v), &D, &k))
		return snprintf(buf, REAL17_BUF, "%.17g", v);
	char d[17];
	for (int i = 16; i >= 0; i--, D /= 10)
		d[i] = (char)('0' + D % 10);
	int nd = 17;
	while (nd > 1 && d[nd - 1] == '0')
		nd--;                                  /* %g drops trailing zeros */
	char *o = buf;
	if (signbit(v))
		*o++ = '-';
	if (k >= -4 && k < 17) {                   /* fixed: 16-k decimals */
		if (k < 0) {
			*o++ = '0';
			*o++ = '.';
			for (int i = -1; i > k; i--)
				*o++ = '0';
			memcpy(o, d, (size_t)nd);
			o += nd;
		} else {
			memcpy(o, d, (size_t)k + 1);
			o += k + 1;
			if (nd > k + 1) {
				*o++ = '.';
				memcpy(o, d + k + 1, (size_t)(nd - k - 1));
				o += nd - k - 1;
			}
		}
	} else {                                   /* d.ddde[+-]XX */
		*o++ = d[0];
		if (nd > 1) {
			*o++ = '.';
			memcpy(o, d + 1, (size_t)nd - 1);
			o += nd - 1;
		}
		*o++ = 'e';
		*o++ = k < 0 ? '-' : '+';
		int a = abs(k);
		if (a >= 100)
			*o++ = (char)('0' + a / 100);
		*o++ = (char)('0' + a / 10 % 10);
		*o++ = (char)('0' + a % 10);
	}
	*o = 0;
	return (int)(o - buf);
}

static int is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static int bits64(uint64_t x)
{
	return x ? 64 - __builtin_clzll(x) : 0;
}

static int bits128(u128 x)
{
	return x >> 64 ? 64 + bits64((uint64_t)(x >> 64)) : bits64((uint64_t)x);
}

/* The double nearest q * 2^-s, sticky when something below q was cut off: q's top 53 bits rounded once, to even. */
static double nearest(u128 q, int sticky, int s)
{
	int sh = bits128(q) - 53;
	if (sh <= 0)
		return ldexp((double)(uint64_t)q, -s);   /* q < 2^53: exact (a caller with sticky has q >= 2^57) */
	u128 top = q >> sh, rest = q - (top << sh), half = (u128)1 << (sh - 1);
	if (rest > half || (rest == half && (sticky || (top & 1))))
		top++;
	return ldexp((double)(uint64_t)top, sh - s);   /* top <= 2^53, the result normal: exact */
}

int real17_decimal(int neg, uint64_t m, int e10, double *out)
{
	static const double pow10[] = { 1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
					1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22 };
	double d;
#if FLT_EVAL_METHOD != 0
	return 0;   /* extended precision would round twice */
#endif
	if (m == 0) {
		d = 0;
	} else if (m <= (1ull << 53) && e10 >= -22 && e10 <= 22) {   /* Clinger: both exact, one rounding */
		d = e10 < 0 ? (double)m / pow10[-e10] : (double)m * pow10[e10];
	} else if (e10 >= 0 && e10 <= 19) {   /* m * 10^e10 < 2^64 * 10^19 < 2^128, exactly */
		d = nearest((u128)m * pow10_u64[e10], 0, 0);
	} else if (e10 < 0 && e10 >= -21) {
		/* m shifted to the top of 128 bits over 10^k < 2^70: a quotient of at least 57 bits, the rest sticky */
		int s = 128 - bits64(m);
		u128 num = (u128)m << s, den = pow10_u128(-e10), q = num / den;
		d = nearest(q, q * den != num, s);
	} else {
		return 0;
	}
	*out = neg ? -d : d;
	return 1;
}

int real17_read_fast(const char *s, const char *end, double *out)
{
	const char *p = s + (*s == '-');
	uint64_t m = 0;
	int e10 = 0, ex = 0, neg_ex = 0, nd = 0;
	for (; p < end && is_digit(*p); p++) {
		if (nd >= 19)
			return 0;
		m = m * 10 + (uint64_t)(*p - '0');
		nd += m != 0;
	}
	if (p < end && *p == '.')
		for (p++; p < end && is_digit(*p); p++, e10--) {
			if (nd >= 19)
				return 0;
			m = m * 10 + (uint64_t)(*p - '0');
			nd += m != 0;
		}
	if (p < end && (*p == 'e' || *p == 'E')) {
		p++;
		neg_ex = *p == '-';
		p += *p == '-' || *p == '+';
		for (; p < end; p++) {
			if (ex > 1000)
				return 0;
			ex = ex * 10 + (*p - '0');
		}
	}
	return real17_decimal(*s == '-', m, e10 + (neg_ex ? -ex : ex), out);
}

double real17_read(const char *s, size_t n)
{
	double d;
	return real17_read_fast(s, s + n, &d) ? d : strtod(s, NULL);
}
