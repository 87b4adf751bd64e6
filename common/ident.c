/*
 * ident.c - identity strings and the escapes of stored text (see ident.h).
 */
#include "common/ident.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* Length of the UTF-8 sequence at s (at most n bytes) and its code point; 0 when invalid. */
size_t ident_utf8_next(const unsigned char *s, size_t n, uint32_t *cp)
{
	unsigned char c = s[0];
	size_t len;
	uint32_t v, min;
	if (c < 0x80) {
		*cp = c;
		return 1;
	} else if ((c & 0xe0) == 0xc0) {
		len = 2, v = c & 0x1f, min = 0x80;
	} else if ((c & 0xf0) == 0xe0) {
		len = 3, v = c & 0x0f, min = 0x800;
	} else if ((c & 0xf8) == 0xf0) {
		len = 4, v = c & 0x07, min = 0x10000;
	} else {
		return 0;
	}
	if (len > n)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		v = (v << 6) | (s[i] & 0x3f);
	}
	if (v < min || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff))
		return 0;
	*cp = v;
	return len;
}

static int is_control(uint32_t cp)
{
	return cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp <= 0x9f);
}

static int is_bidi(uint32_t cp)
{
	return (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069);
}

int ident_utf8_valid(const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	for (size_t i = 0; i < n;) {
		uint32_t cp;
		size_t k = ident_utf8_next(p + i, n - i, &cp);
		if (!k)
			return 0;
		i += k;
	}
	return 1;
}

const char *ident_check(const char *s)
{
	if (!s || !*s)
		return "is empty";
	size_t n = strlen(s);
	if (n > IDENT_MAX)
		return "is longer than 256 bytes";
	const unsigned char *p = (const unsigned char *)s;
	for (size_t i = 0; i < n;) {
		uint32_t cp;
		size_t k = ident_utf8_next(p + i, n - i, &cp);
		if (!k)
			return "is not valid utf-8";
		if (is_control(cp))
			return "holds a control character";
		if (is_bidi(cp))
			return "holds a bidirectional override";
		i += k;
	}
	return NULL;
}

void ident_escape(const char *s, char *out, size_t outlen)
{
	size_t w = 0;
	if (!outlen)
		return;
	const unsigned char *p = (const unsigned char *)(s ? s : "");
	size_t n = strlen((const char *)p);
	for (size_t i = 0; i < n;) {
		char tmp[16];
		uint32_t cp;
		size_t k = ident_utf8_next(p + i, n - i, &cp);
		if (!k) {
			snprintf(tmp, sizeof tmp, "\\x%02x", p[i]);
			k = 1;
		} else if (cp == 0x1b) {
			snprintf(tmp, sizeof tmp, "\\e");
		} else if (cp == '\\') {
			snprintf(tmp, sizeof tmp, "\\\\");
		} else if (cp < 0x80 && is_control(cp)) {
			snprintf(tmp, sizeof tmp, "\\x%02x", (unsigned)cp);
		} else if (is_control(cp) || is_bidi(cp)) {
			snprintf(tmp, sizeof tmp, "\\u{%04x}", (unsigned)cp);
		} else {
			memcpy(tmp, p + i, k);
			tmp[k] = 0;
		}
		size_t tl = strlen(tmp);
		if (w + tl + 1 > outlen)
			break;
		memcpy(out + w, tmp, tl);
		w += tl;
		i += k;
	}
	out[w] = 0;
}

int ident_csv_formula(const char *s)
{
	return s && (*s == '=' || *s == '+' || *s == '-' || *s == '@' || *s == '\t' || *s == '\r');
}
