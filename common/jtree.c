/*
 * jtree.c - a strict JSON reader into a flat tree (jtree.h).
 *
 * Recursive descent over a NUL-terminated copy of the text.  Nodes live in
 * one growing array, decoded strings in one growing buffer, so a document
 * costs a handful of allocations whatever its size.  Numbers go through
 * strtoll/strtod in the C locale (gpuvet never calls setlocale), after the
 * same grammar check as jansson's lexer.
 */
#include "common/jtree.h"
#include "common/util.h"
#include "common/real17.h"

#include <errno.h>
#include <float.h>
#include <stdint.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct ps {
	struct jtree *t;
	const char *p;
	int depth;
};

static int fail(struct ps *ps, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(struct ps *ps, const char *fmt, ...)
{
	struct jtree *t = ps->t;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(t->err, sizeof t->err, fmt, ap);
	va_end(ap);
	t->line = 1;
	for (const char *c = t->src; c < ps->p && c < t->src + t->srclen; c++)
		t->line += *c == '\n';
	return -1;
}

static void skip_ws(struct ps *ps)
{
	while (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r')
		ps->p++;
}

static int at_end(const struct ps *ps)
{
	return ps->p >= ps->t->src + ps->t->srclen;
}

static uint32_t new_node(struct ps *ps, int type)
{
	struct jtree *t = ps->t;
	if (t->nnodes == t->capnodes) {
		t->capnodes = t->capnodes ? 2 * t->capnodes : 256;
		t->nodes = gv_realloc(t->nodes, t->capnodes * sizeof *t->nodes);
	}
	uint32_t i = (uint32_t)t->nnodes++;
	memset(&t->nodes[i], 0, sizeof t->nodes[i]);
	t->nodes[i].type = (uint8_t)type;
	t->nodes[i].src = (uint32_t)(ps->p - t->src);
	return i;
}

/* Closes node i at the current position. */
static void close_node(struct ps *ps, uint32_t i)
{
	struct jt_node *n = &ps->t->nodes[i];
	n->end = (uint32_t)ps->t->nnodes;
	n->len = (uint32_t)(ps->p - ps->t->src) - n->src;
}

static int hexval(int c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* Four hex digits at p, or -1. */
static long hex4(const char *p)
{
	long v = 0;
	for (int i = 0; i < 4; i++) {
		int h = hexval((unsigned char)p[i]);
		if (h < 0)
			return -1;
		v = v * 16 + h;
	}
	return v;
}

static char *put_utf8(char *o, long cp)
{
	if (cp < 0x80) {
		*o++ = (char)cp;
	} else if (cp < 0x800) {
		*o++ = (char)(0xC0 | cp >> 6);
		*o++ = (char)(0x80 | (cp & 0x3F));
	} else if (cp < 0x10000) {
		*o++ = (char)(0xE0 | cp >> 12);
		*o++ = (char)(0x80 | (cp >> 6 & 0x3F));
		*o++ = (char)(0x80 | (cp & 0x3F));
	} else {
		*o++ = (char)(0xF0 | cp >> 18);
		*o++ = (char)(0x80 | (cp >> 12 & 0x3F));
		*o++ = (char)(0x80 | (cp >> 6 & 0x3F));
		*o++ = (char)(0x80 | (cp & 0x3F));
	}
	return o;
}

/* Bytes of the UTF-8 sequence at p (jansson's rules: no overlong form, no surrogate, at most U+10FFFF), or 0. */
static int utf8_len(const unsigned char *p)
{
	unsigned c = p[0];
	int n = c < 0x80 ? 1 : c < 0xC2 ? 0 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : c < 0xF5 ? 4 : 0;
	if (n < 2)
		return n;
	unsigned long cp = c & (0x3F >> (n - 1));
	for (int i = 1; i < n; i++) {
		if ((p[i] & 0xC0) != 0x80)
			return 0;
		cp = cp << 6 | (p[i] & 0x3F);
	}
	if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
		return 0;
	return n;
}

/* One \u escape (p at the 'u'), surrogate pairs joined; the code point, or -1 with the error set. */
static long unicode_escape(struct ps *ps, const char **p)
{
	long cp = hex4(*p + 1);
	if (cp < 0)
		return fail(ps, "invalid escape");
	*p += 5;
	if (cp >= 0xDC00 && cp <= 0xDFFF)
		return fail(ps, "invalid Unicode '\\u%04lX'", cp);
	if (cp >= 0xD800 && cp <= 0xDBFF) {
		long lo = (*p)[0] == '\\' && (*p)[1] == 'u' ? hex4(*p + 2) : -2;
		if (lo == -1)
			return fail(ps, "invalid escape");
		if (lo < 0xDC00 || lo > 0xDFFF)
			return fail(ps, "invalid Unicode '\\u%04lX'", cp);
		*p += 6;
		cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
	}
	if (cp == 0)
		return fail(ps, "\\u0000 is not allowed");
	return cp;
}

/* One escape after the backslash at *p; writes it to *o. */
static int escape(struct ps *ps, const char **p, char **o)
{
	static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
	char c = (*p)[1];
	if (c == 'u') {
		(*p)++;
		long cp = unicode_escape(ps, p);
		if (cp < 0)
			return -1;
		*o = put_utf8(*o, cp);
		return 0;
	}
	const char *k = c ? strchr(from, c) : NULL;
	if (!k)
		return fail(ps, "invalid escape");
	*(*o)++ = to[k - from];
	*p += 2;
	return 0;
}

/* A string at ps->p (the opening quote); its node. */
static int parse_string(struct ps *ps)
{
	struct jtree *t = ps->t;
	uint32_t i = new_node(ps, JT_STR);
	const char *q = ps->p + 1;
	while (*q != '"' && !(q >= t->src + t->srclen)) /* an upper bound of the decoded length */
		q += *q == '\\' && q[1] ? 2 : 1;
	size_t need = (size_t)(q - ps->p) + 1;
	if (t->nstrs + need > t->capstrs) {
		t->capstrs = (t->nstrs + need) * 2;
		t->strs = gv_realloc(t->strs, t->capstrs);
	}
	char *o0 = t->strs + t->nstrs, *o = o0;
	const char *p = ps->p + 1;
	for (;;) {
		/* printable ASCII but the quote and the backslash, copied as it is (the NUL ends the text) */
		while ((unsigned char)*p >= 0x20 && (unsigned char)*p < 0x80 && *p != '"' && *p != '\\')
			*o++ = *p++;
		unsigned char c = (unsigned char)*p;
		if (c == '"')
			break;
		if (p >= t->src + t->srclen) {
			ps->p = p;
			return fail(ps, "premature end of input");
		}
		if (c < 0x20) {
			ps->p = p;
			return fail(ps, "control character 0x%x", c);
		}
		if (c == '\\') {
			ps->p = p;
			if (escape(ps, &p, &o))
				return -1;
			continue;
		}
		int n = utf8_len((const unsigned char *)p);
		if (!n || p + n > t->src + t->srclen) {
			ps->p = p;
			return fail(ps, "unable to decode byte 0x%x", c);
		}
		memcpy(o, p, (size_t)n);
		o += n;
		p += n;
	}
	*o = 0;
	ps->p = p + 1;
	t->nodes[i].u.s = t->nstrs;
	t->nodes[i].n = (uint32_t)(o - o0);
	if ((size_t)(o - o0) > t->maxstr)
		t->maxstr = (size_t)(o - o0);
	t->nstrs += (size_t)(o - o0) + 1;
	close_node(ps, i);
	return 0;
}

static int is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* The digits at *p into m while it holds 19 significant ones (*nd of them; more: *over); how many were read. */
static int take_digits(const char **p, uint64_t *m, int *nd, int *over)
{
	const char *q = *p;
	for (; is_digit(*q); q++) {
		if (*nd >= 19) {
			*over = 1;
			continue;
		}
		*m = *m * 10 + (uint64_t)(*q - '0');
		*nd += *m != 0;
	}
	int n = (int)(q - *p);
	*p = q;
	return n;
}

/* An exponent's digits (at least one, checked) as a number, capped past what any double needs. */
static int exponent_of(const char **p)
{
	int ex = 0;
	for (; is_digit(**p); (*p)++)
		ex = ex < 100000 ? ex * 10 + (**p - '0') : ex;
	return ex;
}

/* The number's value from its digits as read, or strtoll/strtod where they do not fit; -1 with the error set. */
static int number_value(struct ps *ps, uint32_t i, const char *s, const char *p, int real, uint64_t m, int nd, int e10,
			int over)
{
	char *e;
	errno = 0;
	if (!real && !over && nd <= 18) {   /* at most 18 digits: a long long, as strtoll reads it */
		ps->t->nodes[i].u.i = *s == '-' ? -(long long)m : (long long)m;
		return 0;
	}
	if (real && !over && real17_decimal(*s == '-', m, e10, &ps->t->nodes[i].u.d))   /* strtod's double, exactly */
		return 0;
	if (real) {
		double d = strtod(s, &e);
		if (errno == ERANGE && (d == HUGE_VAL || d == -HUGE_VAL))
			return fail(ps, "real number overflow");
		ps->t->nodes[i].u.d = d;
	} else {
		long long v = strtoll(s, &e, 10);
		if (errno == ERANGE)
			return fail(ps, v < 0 ? "too big negative integer" : "too big integer");
		ps->t->nodes[i].u.i = v;
	}
	return e != p ? fail(ps, "invalid token") : 0;
}

/* A number, checked as jansson's lexer does, its digits read as they are checked. */
static int parse_number(struct ps *ps)
{
	const char *s = ps->p, *p = s;
	uint64_t m = 0;
	int nd = 0, over = 0, e10 = 0, real;
	if (*p == '-')
		p++;
	if (*p == '0')
		p++;
	else if (!take_digits(&p, &m, &nd, &over))
		return fail(ps, "invalid token");
	if (is_digit(*p))
		return fail(ps, "invalid token");
	real = *p == '.' || *p == 'e' || *p == 'E';
	if (*p == '.') {
		p++;
		int nf = take_digits(&p, &m, &nd, &over);   /* each a power of ten down (a digit past 19: strtod reads it) */
		if (!nf)
			return fail(ps, "invalid token");
		e10 -= nf;
	}
	if (*p == 'e' || *p == 'E') {
		p++;
		int neg = *p == '-';
		if (*p == '+' || *p == '-')
			p++;
		if (!is_digit(*p))
			return fail(ps, "invalid token");
		int ex = exponent_of(&p);
		e10 += neg ? -ex : ex;
	}
	uint32_t i = new_node(ps, real ? JT_REAL : JT_INT);
	if (number_value(ps, i, s, p, real, m, nd, e10, over))
		return -1;
	ps->p = p;
	close_node(ps, i);
	return 0;
}

static int literal(struct ps *ps, const char *word, int type)
{
	size_t n = strlen(word);
	if (strncmp(ps->p, word, n) || (ps->p[n] >= 'a' && ps->p[n] <= 'z') || (ps->p[n] >= 'A' && ps->p[n] <= 'Z'))
		return fail(ps, "invalid token");
	uint32_t i = new_node(ps, type);
	ps->p += n;
	close_node(ps, i);
	return 0;
}

static int parse_value(struct ps *ps);

static int parse_array(struct ps *ps)
{
	uint32_t i = new_node(ps, JT_ARR), n = 0;
	ps->p++;
	skip_ws(ps);
	if (*ps->p != ']') {
		for (;;) {
			if (parse_value(ps))
				return -1;
			n++;
			skip_ws(ps);
			if (*ps->p == ']')
				break;
			if (*ps->p != ',' || at_end(ps))
				return fail(ps, "']' expected");
			ps->p++;
			skip_ws(ps);
		}
	}
	ps->p++;
	ps->t->nodes[i].n = n;
	close_node(ps, i);
	return 0;
}

static uint32_t key_hash(const struct jtree *t, uint32_t k)
{
	uint32_t h = 2166136261u;
	const unsigned char *s = (const unsigned char *)t->strs + t->nodes[k].u.s;
	for (uint32_t i = 0; i < t->nodes[k].n; i++)
		h = (h ^ s[i]) * 16777619u;
	return h;
}

static int same_key(const struct jtree *t, uint32_t a, uint32_t b)
{
	return t->nodes[a].n == t->nodes[b].n && !memcmp(t->strs + t->nodes[a].u.s, t->strs + t->nodes[b].u.s, t->nodes[a].n);
}

/* 1 when object o has a key twice: pairwise for a few members, a hash set for more. */
static int has_duplicate_key(struct jtree *t, uint32_t o)
{
	uint32_t n = t->nodes[o].n, k = o + 1;
	if (n <= 8) {
		uint32_t keys[8];
		for (uint32_t m = 0; m < n; m++, k = t->nodes[k + 1].end) {
			for (uint32_t j = 0; j < m; j++)
				if (same_key(t, keys[j], k))
					return 1;
			keys[m] = k;
		}
		return 0;
	}
	size_t size = 16;
	while (size < 2 * (size_t)n)
		size *= 2;
	if (size > t->capscratch) {
		free(t->scratch);
		t->scratch = gv_malloc(size * sizeof *t->scratch);
		t->capscratch = size;
	}
	memset(t->scratch, 0, size * sizeof *t->scratch);
	for (uint32_t m = 0; m < n; m++, k = t->nodes[k + 1].end) {
		size_t h = key_hash(t, k) & (size - 1);
		for (; t->scratch[h]; h = (h + 1) & (size - 1))
			if (same_key(t, t->scratch[h], k))
				return 1;
		t->scratch[h] = k;
	}
	return 0;
}

static int parse_object(struct ps *ps)
{
	uint32_t i = new_node(ps, JT_OBJ), n = 0;
	ps->p++;
	skip_ws(ps);
	if (*ps->p != '}') {
		for (;;) {
			if (*ps->p != '"' || at_end(ps))
				return fail(ps, "string or '}' expected");
			if (parse_string(ps))
				return -1;
			skip_ws(ps);
			if (*ps->p != ':' || at_end(ps))
				return fail(ps, "':' expected");
			ps->p++;
			skip_ws(ps);
			if (parse_value(ps))
				return -1;
			n++;
			skip_ws(ps);
			if (*ps->p == '}')
				break;
			if (*ps->p != ',' || at_end(ps))
				return fail(ps, "'}' expected");
			ps->p++;
			skip_ws(ps);
		}
	}
	ps->t->nodes[i].n = n;
	if (has_duplicate_key(ps->t, i))
		return fail(ps, "duplicate object key");
	ps->p++;
	close_node(ps, i);
	return 0;
}

static int parse_value(struct ps *ps)
{
	if (at_end(ps))
		return fail(ps, "unexpected end of input");
	char c = *ps->p;
	if (c == '{' || c == '[') {
		if (++ps->depth > JT_MAX_DEPTH)
			return fail(ps, "maximum parsing depth reached");
		int rc = c == '{' ? parse_object(ps) : parse_array(ps);
		ps->depth--;
		return rc;
	}
	if (c == '"')
		return parse_string(ps);
	if (c == '-' || is_digit(c))
		return parse_number(ps);
	if (c == 't')
		return literal(ps, "true", JT_TRUE);
	if (c == 'f')
		return literal(ps, "false", JT_FALSE);
	if (c == 'n')
		return literal(ps, "null", JT_NULL);
	return fail(ps, "invalid token");
}

int jt_parse(struct jtree *t, const char *text, size_t len)
{
	memset(t, 0, sizeof *t);
	struct ps ps = { t, NULL, 0 };
	t->src = gv_malloc(len + 1);
	memcpy(t->src, text, len);
	t->src[len] = 0;
	t->srclen = len;
	ps.p = t->src;
	if (len >= UINT32_MAX)
		return fail(&ps, "text too long");
	new_node(&ps, JT_ABSENT);   /* node 0: absent */
	skip_ws(&ps);
	if ((*ps.p != '{' && *ps.p != '[') || at_end(&ps))
		return fail(&ps, "'[' or '{' expected");
	if (parse_value(&ps))
		return -1;
	skip_ws(&ps);
	if (!at_end(&ps))
		return fail(&ps, "end of file expected");
	return 0;
}

void jt_free(struct jtree *t)
{
	free(t->src);
	free(t->nodes);
	free(t->strs);
	free(t->scratch);
	memset(t, 0, sizeof *t);
}

uint32_t jt_get(const struct jtree *t, uint32_t o, const char *key)
{
	if (jt_type(t, o) != JT_OBJ)
		return 0;
	size_t klen = strlen(key);
	uint32_t k = o + 1;
	for (uint32_t m = 0; m < t->nodes[o].n; m++, k = t->nodes[k + 1].end)
		if (t->nodes[k].n == klen && !memcmp(t->strs + t->nodes[k].u.s, key, klen))
			return k + 1;
	return 0;
}





char *jt_text(const struct jtree *t, uint32_t v)
{
	int ty = jt_type(t, v);
	if (ty == JT_ABSENT || ty == JT_NULL)
		return NULL;
	const char *p = t->src + t->nodes[v].src, *end = p + t->nodes[v].len;
	char *out = gv_malloc(t->nodes[v].len + 1), *o = out;
	int in_str = 0;
	for (; p < end; p++) {
		char c = *p;
		if (in_str) {
			*o++ = c;
			if (c == '\\')
				*o++ = *++p;
			else if (c == '"')
				in_str = 0;
		} else if (c != ' ' && c != '\t' && c != '\n' && c != '\r') {
			*o++ = c;
			in_str = c == '"';
		}
	}
	*o = 0;
	return out;
}
