/* html_escape.c - see html_escape.h */
#include "reports/html_escape.h"

#include <string.h>

static const char REPLACEMENT[] = "\xEF\xBF\xBD";  /* U+FFFD */

size_t html_utf8_len(const unsigned char *s, size_t n, unsigned *cp)
{
	unsigned c, min;
	size_t len;

	if (n == 0)
		return 0;
	c = s[0];
	if (c < 0x80) {
		*cp = c;
		return 1;
	}
	if (c >= 0xC2 && c <= 0xDF) {
		len = 2; c &= 0x1F; min = 0x80;
	} else if (c >= 0xE0 && c <= 0xEF) {
		len = 3; c &= 0x0F; min = 0x800;
	} else if (c >= 0xF0 && c <= 0xF4) {
		len = 4; c &= 0x07; min = 0x10000;
	} else {
		return 0;
	}
	if (n < len)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xC0) != 0x80)
			return 0;
		c = (c << 6) | (s[i] & 0x3F);
	}
	if (c < min || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF))
		return 0;
	*cp = c;
	return len;
}

/* Code points HTML does not allow as text: NUL, C0 controls except tab,
 * LF, FF, CR; DEL and C1 controls; noncharacters. */
static int forbidden(unsigned cp)
{
	if (cp < 0x20)
		return !(cp == '\t' || cp == '\n' || cp == '\f' || cp == '\r');
	if (cp >= 0x7F && cp <= 0x9F)
		return 1;
	if (cp >= 0xFDD0 && cp <= 0xFDEF)
		return 1;
	return (cp & 0xFFFE) == 0xFFFE;
}

/* Writes s[0..n) through an escaping function for single characters. */
typedef const char *(*esc_fn)(unsigned cp, char buf[16]);

static long esc_write(FILE *f, const char *s, size_t n, esc_fn fn)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, run = 0;  /* run: start of the pending unescaped bytes */
	long total = 0;
	char buf[16];

	if (!s)
		return 0;
	while (i < n) {
		unsigned cp = 0;
		size_t len = html_utf8_len(p + i, n - i, &cp);
		const char *rep;

		if (len == 0) {
			rep = REPLACEMENT;
			len = 1;
		} else if (forbidden(cp)) {
			rep = REPLACEMENT;
		} else {
			rep = fn(cp, buf);
		}
		if (rep) {
			size_t rl = strlen(rep);
			if (i > run && fwrite(p + run, 1, i - run, f) != i - run)
				return -1;
			if (fwrite(rep, 1, rl, f) != rl)
				return -1;
			total += (long)(i - run + rl);
			run = i + len;
		}
		i += len;
	}
	if (i > run && fwrite(p + run, 1, i - run, f) != i - run)
		return -1;
	return total + (long)(i - run);
}

static const char *html_char(unsigned cp, char buf[16])
{
	(void)buf;
	switch (cp) {
	case '&': return "&amp;";
	case '<': return "&lt;";
	case '>': return "&gt;";
	case '"': return "&quot;";
	case '\'': return "&#39;";
	default: return NULL;
	}
}

long html_esc_n(FILE *f, const char *s, size_t n)
{
	return esc_write(f, s, n, html_char);
}

long html_esc(FILE *f, const char *s)
{
	return s ? esc_write(f, s, strlen(s), html_char) : 0;
}

static const char *json_char(unsigned cp, char buf[16])
{
	switch (cp) {
	case '"': return "\\\"";
	case '\\': return "\\\\";
	case '\n': return "\\n";
	case '\r': return "\\r";
	case '\t': return "\\t";
	case '\f': return "\\f";
	case '<': case '>': case '&': case '\'':
	case 0x2028: case 0x2029:
		snprintf(buf, 16, "\\u%04x", cp);
		return buf;
	default:
		return NULL;
	}
}

long html_json_esc(FILE *f, const char *s, size_t n)
{
	return esc_write(f, s, n, json_char);
}
