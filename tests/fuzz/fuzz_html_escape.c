/*
 * fuzz_html_escape.c - html_esc_n() and html_json_esc() on arbitrary bytes.
 *
 * Invariants: the HTML output holds none of < > " ' raw and every & starts
 * one of our five references; both outputs are well-formed UTF-8 with no
 * control character HTML forbids; the JSON output holds no < > & ' U+2028
 * U+2029 raw and no raw control character; and decoding the HTML output
 * gives back the input where the input was well-formed text.
 */
#include "reports/html_escape.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *run(long (*fn)(FILE *, const char *, size_t), const uint8_t *d, size_t n, size_t *len)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);
	if (!f)
		abort();
	if (fn(f, (const char *)d, n) < 0)
		abort();
	fclose(f);
	return buf;
}

static void check_utf8(const char *s, size_t n)
{
	for (size_t i = 0; i < n;) {
		unsigned cp;
		size_t l = html_utf8_len((const unsigned char *)s + i, n - i, &cp);
		if (l == 0)
			abort();
		if ((cp < 0x20 && cp != '\t' && cp != '\n' && cp != '\f' && cp != '\r') || (cp >= 0x7F && cp <= 0x9F))
			abort();
		i += l;
	}
}

static int text_ok(const uint8_t *d, size_t n)
{
	for (size_t i = 0; i < n;) {
		unsigned cp;
		size_t l = html_utf8_len(d + i, n - i, &cp);
		if (l == 0 || (cp < 0x20 && cp != '\t' && cp != '\n' && cp != '\f' && cp != '\r') ||
		    (cp >= 0x7F && cp <= 0x9F) || (cp >= 0xFDD0 && cp <= 0xFDEF) || (cp & 0xFFFE) == 0xFFFE)
			return 0;
		i += l;
	}
	return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n);
int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
	size_t len, o = 0;
	char *h = run(html_esc_n, d, n, &len), *back = malloc(len + 1);

	check_utf8(h, len);
	for (size_t i = 0; i < len; i++) {
		static const char *const refs[] = { "&amp;", "&lt;", "&gt;", "&quot;", "&#39;" };
		static const char chars[] = "&<>\"'";
		if (h[i] == '<' || h[i] == '>' || h[i] == '"' || h[i] == '\'')
			abort();
		if (h[i] == '&') {
			size_t k;
			for (k = 0; k < 5; k++)
				if (!strncmp(h + i, refs[k], strlen(refs[k])))
					break;
			if (k == 5)
				abort();
			back[o++] = chars[k];
			i += strlen(refs[k]) - 1;
		} else {
			back[o++] = h[i];
		}
	}
	if (text_ok(d, n) && (o != n || memcmp(back, d, n)))
		abort();
	free(back);
	free(h);

	h = run(html_json_esc, d, n, &len);
	check_utf8(h, len);
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)h[i];
		if (c == '<' || c == '>' || c == '&' || c == '\'' || c < 0x20)
			abort();
		if (c == 0xE2 && i + 2 < len && (unsigned char)h[i + 1] == 0x80 &&
		    ((unsigned char)h[i + 2] == 0xA8 || (unsigned char)h[i + 2] == 0xA9))
			abort();
		if (c == '"' && (i == 0 || h[i - 1] != '\\'))
			abort();
	}
	free(h);
	return 0;
}
