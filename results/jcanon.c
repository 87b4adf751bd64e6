/*
 * jcanon.c - jansson's compact, key-sorted form of stored JSON text, on the
 * text (see jcanon.h).  A recursive descent that copies tokens into the
 * output buffer and, when an object's keys are out of order, rewrites that
 * object's members in key order in place.
 */
#include "results/jcanon.h"
#include "common/util.h"
#include "common/real17.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct jc {
	const char *p, *end;
	struct jc_buf *b;
	int depth;
};

void jc_grow(struct jc_buf *b, size_t n)
{
	size_t cap = b->cap ? b->cap : 256;
	while (b->len + n + 1 > cap)
		cap *= 2;
	b->p = gv_realloc(b->p, cap);
	b->cap = cap;
}

static void skip_ws(struct jc *c)
{
	while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r'))
		c->p++;
}

/* A string (key: no escape at all), copied with its quotes. */
static int string(struct jc *c, int key)
{
	const char *s = c->p++;
	while (c->p < c->end) {
		unsigned char ch = (unsigned char)*c->p;
		if (ch == '"') {
			c->p++;
			jc_put(c->b, s, (size_t)(c->p - s));
			return 0;
		}
		if (ch < 0x20 || ch >= 0x80)
			return 1;
		if (ch == '\\') {
			if (key || c->p + 1 >= c->end || !strchr("\"\\bfnrt", c->p[1]) || !c->p[1])
				return 1;
			c->p++;
		}
		c->p++;
	}
	return 1;
}

static int is_digit(const char *p, const char *end)
{
	return p < end && *p >= '0' && *p <= '9';
}

/* A real as jansson's jsonp_dtostr prints it: %.17g, ".0" when neither '.' nor 'e', exponent without '+' or leading zeros. */
static void put_real(struct jc_buf *b, double v)
{
	char buf[REAL17_BUF + 4];
	int n = real17_print(v, buf);
	if (!strchr(buf, '.') && !strchr(buf, 'e')) {
		memcpy(buf + n, ".0", 3);
		n += 2;
	}
	char *e = strchr(buf, 'e');
	if (e) {
		char *start = e + 1, *stop = e + 2;
		if (*start == '-')
			start++;
		while (*stop == '0')
			stop++;
		if (stop != start) {
			memmove(start, stop, (size_t)(buf + n + 1 - stop));
			n -= (int)(stop - start);
		}
	}
	jc_put(b, buf, (size_t)n);
}

/*
 * Whether a real token is already what put_real would print for its value,
 * decided without printing it (printing is most of an export's time):
 * 1 yes, 0 don't know (print it).  Only fixed notation "I.F" is judged:
 *  - F is "0": an integral value of at most 15 digits prints as itself;
 *  - up to 15 significant digits: it prints as itself iff the decimal is a
 *    double exactly, i.e. its digits M over 10^k are divisible by 5^k;
 *  - 17 significant digits (what %.17g makes of most values): iff it is
 *    the 17-digit decimal nearest the double strtod makes of it, decided
 *    exactly in 128-bit integers: |M*2^-e - m*10^k| < 2^(-e-1) for the
 *    double m*2^e.
 * %g's own rules come first: no trailing zero in F, at most 3 zeros after
 * "0." (else %g writes an exponent).
 */
static int real_is_canonical(const char *t, size_t n)
{
	const char *p = t, *dot = memchr(t, '.', n);
	if (!dot || memchr(t, 'e', n) || memchr(t, 'E', n))
		return 0;
	if (*p == '-')
		p++;
	const char *f = dot + 1, *end = t + n;
	size_t ilen = (size_t)(dot - p), flen = (size_t)(end - f);
	if (flen == 1 && *f == '0')
		return ilen <= 15 && !(ilen == 1 && *p == '0' && t[0] == '-') ? 1 : 0;
	if (end[-1] == '0')
		return 0;
	size_t sig, lead = 0;
	if (ilen == 1 && *p == '0') {
		while (f + lead < end && f[lead] == '0')
			lead++;
		if (lead > 3)
			return 0;
		sig = flen - lead;
	} else {
		sig = ilen + flen;
	}
	if ((sig > 15 && sig != 17) || flen > 25)
		return 0;
	unsigned __int128 M = 0;
	for (const char *q = p; q < end; q++)
		if (q != dot)
			M = M * 10 + (unsigned)(*q - '0');
	if (sig <= 15) {
		unsigned __int128 five = 1;
		for (size_t i = 0; i < flen; i++)
			five *= 5;
		return M % five == 0;
	}
	int e;
	double x = fabs(real17_read(t, n));
	double fr = frexp(x, &e);           /* x = fr * 2^e, 0.5 <= fr < 1 */
	uint64_t m = (uint64_t)ldexp(fr, 53);
	e -= 53;                            /* x = m * 2^e */
	if (e >= 0 || e < -68)
		return 0;
	unsigned __int128 pow10 = 1;
	for (size_t i = 0; i < flen; i++)
		pow10 *= 10;
	/* M < 10^17 < 2^57 and -e <= 68: M << -e fits; m * 10^flen < 2^53 * 10^25 < 2^137 may not */
	if (flen > 22)
		return 0;
	unsigned __int128 a = M << (unsigned)-e, b = (unsigned __int128)m * pow10;
	unsigned __int128 d = a > b ? a - b : b - a, half = (unsigned __int128)1 << (unsigned)(-e - 1);
	return d < half;
}

static int number(struct jc *c)
{
	const char *s = c->p;
	int real = 0;
	if (*c->p == '-')
		c->p++;
	if (!is_digit(c->p, c->end))
		return 1;
	if (*c->p == '0')
		c->p++;
	else
		while (is_digit(c->p, c->end))
			c->p++;
	if (c->p < c->end && *c->p == '.') {
		real = 1;
		c->p++;
		if (!is_digit(c->p, c->end))
			return 1;
		while (is_digit(c->p, c->end))
			c->p++;
	}
	if (c->p < c->end && (*c->p == 'e' || *c->p == 'E')) {
		real = 1;
		c->p++;
		if (c->p < c->end && (*c->p == '+' || *c->p == '-'))
			c->p++;
		if (!is_digit(c->p, c->end))
			return 1;
		while (is_digit(c->p, c->end))
			c->p++;
	}
	size_t n = (size_t)(c->p - s);
	if (!real) {
		/* jansson reads a long long: "-0" prints as 0, and more than 18 digits may not fit */
		if (n > 18 || (n == 2 && s[0] == '-' && s[1] == '0'))
			return 1;
		jc_put(c->b, s, n);
		return 0;
	}
	char tok[64];
	if (n >= sizeof tok)
		return 1;
	memcpy(tok, s, n);
	tok[n] = 0;
	int kept = real_is_canonical(tok, n);
	if (kept == 1) {
		jc_put(c->b, s, n);
		return 0;
	}
	double v = real17_read(tok, n);
	if (!isfinite(v))
		return 1;   /* jansson refuses an overflowing real */
	put_real(c->b, v);
	return 0;
}

static int value(struct jc *c);

struct member {
	size_t key, keylen;   /* the key without its quotes, as an offset in the output */
	size_t at, len;       /* the whole member ("key":value) */
};

static int key_cmp(const struct jc_buf *b, const struct member *x, const struct member *y)
{
	size_t n = x->keylen < y->keylen ? x->keylen : y->keylen;
	const unsigned char *a = (const unsigned char *)b->p + x->key, *c = (const unsigned char *)b->p + y->key;
	if (n && *a != *c)   /* most keys differ in their first byte: no call */
		return *a < *c ? -1 : 1;
	int r = memcmp(a, c, n);
	return r ? r : (x->keylen > y->keylen) - (x->keylen < y->keylen);
}

/* Rewrites the members from m[0].at on in key order; 1 on a duplicate key (jansson keeps the last). */
static int sort_members(struct jc_buf *b, struct member *m, size_t n)
{
	/* insertion sort: objects are small, and mostly near their order */
	for (size_t i = 1; i < n; i++) {
		struct member t = m[i];
		size_t j = i;
		while (j > 0 && key_cmp(b, &m[j - 1], &t) > 0) {
			m[j] = m[j - 1];
			j--;
		}
		m[j] = t;
	}
	for (size_t i = 1; i < n; i++)
		if (!key_cmp(b, &m[i - 1], &m[i]))
			return 1;
	size_t start = b->len, first = (size_t)-1;
	for (size_t i = 0; i < n; i++)
		if (m[i].at < first)
			first = m[i].at;
	/* the members in order after the text (no allocation per object), then moved over it */
	size_t total = start - first;   /* the members and the commas between them */
	if (b->len + total + 1 > b->cap)
		jc_grow(b, total);
	for (size_t i = 0; i < n; i++) {
		if (i)
			b->p[b->len++] = ',';
		memcpy(b->p + b->len, b->p + m[i].at, m[i].len);
		b->len += m[i].len;
	}
	memmove(b->p + first, b->p + start, total);
	b->len = start;
	b->p[start] = 0;
	return 0;
}

static int object(struct jc *c)
{
	struct member m[JCANON_MEMBERS];
	size_t n = 0;
	int sorted = 1;
	c->p++;
	jc_put(c->b, "{", 1);
	skip_ws(c);
	if (c->p < c->end && *c->p == '}') {
		c->p++;
		jc_put(c->b, "}", 1);
		return 0;
	}
	for (;;) {
		skip_ws(c);
		if (n == JCANON_MEMBERS || c->p >= c->end || *c->p != '"')
			return 1;
		if (n)
			jc_put(c->b, ",", 1);
		m[n].at = c->b->len;
		m[n].key = c->b->len + 1;
		if (string(c, 1))
			return 1;
		m[n].keylen = c->b->len - 1 - m[n].key;
		skip_ws(c);
		if (c->p >= c->end || *c->p != ':')
			return 1;
		c->p++;
		jc_put(c->b, ":", 1);
		if (value(c))
			return 1;
		m[n].len = c->b->len - m[n].at;
		if (n && key_cmp(c->b, &m[n - 1], &m[n]) >= 0)
			sorted = 0;
		n++;
		skip_ws(c);
		if (c->p < c->end && *c->p == ',') {
			c->p++;
			continue;
		}
		if (c->p < c->end && *c->p == '}') {
			c->p++;
			break;
		}
		return 1;
	}
	if (!sorted && sort_members(c->b, m, n))
		return 1;
	jc_put(c->b, "}", 1);
	return 0;
}

static int array(struct jc *c)
{
	c->p++;
	jc_put(c->b, "[", 1);
	skip_ws(c);
	if (c->p < c->end && *c->p == ']') {
		c->p++;
		jc_put(c->b, "]", 1);
		return 0;
	}
	for (int first = 1;; first = 0) {
		if (!first)
			jc_put(c->b, ",", 1);
		if (value(c))
			return 1;
		skip_ws(c);
		if (c->p < c->end && *c->p == ',') {
			c->p++;
			continue;
		}
		if (c->p < c->end && *c->p == ']') {
			c->p++;
			jc_put(c->b, "]", 1);
			return 0;
		}
		return 1;
	}
}

static int literal(struct jc *c, const char *word)
{
	size_t n = strlen(word);
	if ((size_t)(c->end - c->p) < n || memcmp(c->p, word, n))
		return 1;
	c->p += n;
	jc_put(c->b, word, n);
	return 0;
}

static int value(struct jc *c)
{
	int rc;
	skip_ws(c);
	if (c->p >= c->end)
		return 1;
	if (++c->depth > JCANON_DEPTH)
		return 1;
	switch (*c->p) {
	case '{': rc = object(c); break;
	case '[': rc = array(c); break;
	case '"': rc = string(c, 0); break;
	case 't': rc = literal(c, "true"); break;
	case 'f': rc = literal(c, "false"); break;
	case 'n': rc = literal(c, "null"); break;
	default: rc = number(c); break;
	}
	c->depth--;
	return rc;
}

int jcanon_sorted(const char *text, size_t n, struct jc_buf *b)
{
	size_t mark = b->len;
	struct jc c = { text, text + n, b, 0 };
	if (!text || value(&c))
		goto no;
	skip_ws(&c);
	if (c.p != c.end)
		goto no;
	return 0;
no:
	b->len = mark;
	if (b->p)
		b->p[mark] = 0;
	return 1;
}
