/*
 * ident_fold.c - names compared as a reader sees them, and text that says
 * something (ident.h ident_fold, ident_words).
 *
 * No ICU: the folding is the part of Unicode NFKC that maps a character to
 * ASCII (fullwidth forms, mathematical and circled letters and digits,
 * letterlike symbols, super- and subscript digits, the f-ligatures, the
 * compatibility spaces), then ASCII case folding, then the Cyrillic and
 * Greek capitals and letters drawn like Latin ones (Unicode's confusables
 * for a-z), so `Default`, `DEFAULT`, `Ｄｅｆａｕｌｔ` and a `dеfault` with a
 * Cyrillic е fold alike.  Spaces at either end go, runs of them inside are
 * one.  Invisible characters (zero-width, joiners, soft hyphen, variation
 * selectors, tags, fillers) are refused, never folded away: a name that
 * reads the same as another but is not would be a second name.
 */
#include "common/ident.h"

#include <stdint.h>
#include <string.h>

static int is_invisible(uint32_t cp)
{
	return cp == 0xad || cp == 0x34f || cp == 0x61c || cp == 0x115f || cp == 0x1160 || cp == 0x17b4 ||
	       cp == 0x17b5 || (cp >= 0x180b && cp <= 0x180f) || (cp >= 0x200b && cp <= 0x200f) ||
	       (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2060 && cp <= 0x206f) || cp == 0x3164 ||
	       (cp >= 0xfe00 && cp <= 0xfe0f) || cp == 0xfeff || cp == 0xffa0 || (cp >= 0xfff0 && cp <= 0xfffb) ||
	       (cp >= 0x1bca0 && cp <= 0x1bca3) || (cp >= 0x1d173 && cp <= 0x1d17a) ||
	       (cp >= 0xe0000 && cp <= 0xe0fff);
}

static int is_space(uint32_t cp)
{
	return cp == ' ' || cp == 0xa0 || cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200a) || cp == 0x202f ||
	       cp == 0x205f || cp == 0x3000;
}

/* Code points drawn like a Latin letter: Cyrillic, Greek, letterlike symbols, IPA. */
static const struct {
	uint32_t cp;
	char to;
} lookalike[] = {
	{ 0x410, 'a' }, { 0x412, 'b' }, { 0x415, 'e' }, { 0x41a, 'k' }, { 0x41c, 'm' }, { 0x41d, 'h' },
	{ 0x41e, 'o' }, { 0x420, 'p' }, { 0x421, 'c' }, { 0x422, 't' }, { 0x425, 'x' }, { 0x430, 'a' },
	{ 0x435, 'e' }, { 0x43e, 'o' }, { 0x440, 'p' }, { 0x441, 'c' }, { 0x443, 'y' }, { 0x445, 'x' },
	{ 0x405, 's' }, { 0x406, 'i' }, { 0x408, 'j' }, { 0x455, 's' }, { 0x456, 'i' }, { 0x458, 'j' },
	{ 0x4bb, 'h' }, { 0x4cf, 'l' }, { 0x501, 'd' }, { 0x51b, 'q' }, { 0x51d, 'w' },
	{ 0x391, 'a' }, { 0x392, 'b' }, { 0x395, 'e' }, { 0x396, 'z' }, { 0x397, 'h' }, { 0x399, 'i' },
	{ 0x39a, 'k' }, { 0x39c, 'm' }, { 0x39d, 'n' }, { 0x39f, 'o' }, { 0x3a1, 'p' }, { 0x3a4, 't' },
	{ 0x3a5, 'y' }, { 0x3a7, 'x' }, { 0x3bf, 'o' }, { 0x3b1, 'a' }, { 0x3b9, 'i' }, { 0x3bd, 'v' },
	{ 0x3c1, 'p' }, { 0x3c5, 'u' }, { 0x131, 'i' }, { 0x237, 'j' }, { 0x251, 'a' }, { 0x261, 'g' },
	{ 0x269, 'i' }, { 0x26a, 'i' }, { 0x299, 'b' }, { 0x29c, 'h' }, { 0x1d00, 'a' }, { 0x1d04, 'c' },
	{ 0x1d05, 'd' }, { 0x1d07, 'e' }, { 0x1d0b, 'k' }, { 0x1d0d, 'm' }, { 0x1d0f, 'o' }, { 0x1d18, 'p' },
	{ 0x1d1b, 't' }, { 0x1d1c, 'u' }, { 0x1d20, 'v' }, { 0x1d21, 'w' }, { 0x1d22, 'z' },
	{ 0x2102, 'c' }, { 0x210a, 'g' }, { 0x210b, 'h' }, { 0x210c, 'h' }, { 0x210d, 'h' }, { 0x210e, 'h' },
	{ 0x2110, 'i' }, { 0x2111, 'i' }, { 0x2112, 'l' }, { 0x2113, 'l' }, { 0x2115, 'n' }, { 0x2119, 'p' },
	{ 0x211a, 'q' }, { 0x211b, 'r' }, { 0x211c, 'r' }, { 0x211d, 'r' }, { 0x2124, 'z' }, { 0x2128, 'z' },
	{ 0x212a, 'k' }, { 0x212c, 'b' }, { 0x212d, 'c' }, { 0x212f, 'e' }, { 0x2130, 'e' }, { 0x2131, 'f' },
	{ 0x2133, 'm' }, { 0x2134, 'o' }, { 0x2139, 'i' }, { 0xb9, '1' }, { 0xb2, '2' }, { 0xb3, '3' },
	{ 0x2070, '0' }, { 0x2071, 'i' }, { 0x207f, 'n' },
};

/* The ASCII a code point folds to (lowercase), or 0 when it keeps its own. */
static char fold_one(uint32_t cp)
{
	if (cp < 0x80)
		return cp >= 'A' && cp <= 'Z' ? (char)(cp - 'A' + 'a') : (char)cp;
	if (cp >= 0xff01 && cp <= 0xff5e)   /* fullwidth ASCII */
		return fold_one(cp - 0xfee0);
	if (cp >= 0x1d400 && cp <= 0x1d6a3) {   /* mathematical alphabets: 52 letters each */
		uint32_t i = (cp - 0x1d400) % 52;
		return (char)(i < 26 ? 'a' + i : 'a' + i - 26);
	}
	if (cp >= 0x1d7ce && cp <= 0x1d7ff)
		return (char)('0' + (cp - 0x1d7ce) % 10);
	if (cp >= 0x24b6 && cp <= 0x24cf)
		return (char)('a' + cp - 0x24b6);
	if (cp >= 0x24d0 && cp <= 0x24e9)
		return (char)('a' + cp - 0x24d0);
	if (cp >= 0x2074 && cp <= 0x2079)
		return (char)('4' + cp - 0x2074);
	if (cp >= 0x2080 && cp <= 0x2089)
		return (char)('0' + cp - 0x2080);
	for (size_t i = 0; i < sizeof lookalike / sizeof lookalike[0]; i++)
		if (lookalike[i].cp == cp)
			return lookalike[i].to;
	return 0;
}

static const char *const ligatures[] = { "ff", "fi", "fl", "ffi", "ffl", "st", "st" };   /* U+FB00..U+FB06 */

const char *ident_fold(const char *s, char *out, size_t outlen)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");
	size_t n = strlen((const char *)p), w = 0;
	int space = 0;
	if (ident_check(s))
		return ident_check(s);
	for (size_t i = 0; i < n;) {
		uint32_t cp;
		size_t k = ident_utf8_next(p + i, n - i, &cp);
		char one[8] = "";
		i += k;
		if (is_invisible(cp))
			return "holds an invisible character (a zero-width space, joiner or the like)";
		if (is_space(cp)) {
			space = w > 0;   /* leading spaces go; inside, one */
			continue;
		}
		char c = fold_one(cp);
		if (cp >= 0xfb00 && cp <= 0xfb06)
			strcpy(one, ligatures[cp - 0xfb00]);
		else if (c)
			one[0] = c;
		else
			memcpy(one, p + i - k, k), one[k] = '\0';
		size_t len = strlen(one) + (size_t)space;
		if (w + len + 1 > outlen)
			return "is too long";
		if (space)
			out[w++] = ' ';
		memcpy(out + w, one, strlen(one));
		w += strlen(one);
		space = 0;
	}
	if (outlen)
		out[w < outlen ? w : outlen - 1] = '\0';
	return NULL;
}

int ident_words(const char *s)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");
	size_t n = strlen((const char *)p);
	int words = 0, in = 0;
	for (size_t i = 0; i < n;) {
		uint32_t cp;
		size_t k = ident_utf8_next(p + i, n - i, &cp);
		if (!k)
			return 0;
		i += k;
		char c = fold_one(cp);
		/* a letter or digit: ASCII ones and what folds to them, and any other script's visible characters
		   outside the punctuation, symbol and space blocks */
		int letter = c ? ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) :
			     !is_invisible(cp) && !is_space(cp) && cp >= 0xc0 && !(cp >= 0x2000 && cp <= 0x2bff) &&
			     !(cp >= 0x3000 && cp <= 0x303f) && cp != 0xd7 && cp != 0xf7;
		words += letter && !in;
		in = letter;
	}
	return words;
}
