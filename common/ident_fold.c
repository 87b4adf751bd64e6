/*
 * ident_fold.c - names compared as a reader sees them, and text that says
 * something (ident.h ident_fold, ident_words).
 *
 * A name is first taken to Unicode's confusables skeleton (TR39, ICU's
 * uspoof_getSkeleton, issue 57) after NFKD with its combining marks removed:
 * `défault`, the squared 🄳, Lisu ꓒ and the like read as the Latin letters
 * they are drawn as.  Then the part of NFKC that maps a character to ASCII
 * (fullwidth forms, mathematical and circled letters and digits, letterlike
 * symbols, super- and subscript digits, the f-ligatures, the compatibility
 * spaces), ASCII case folding, and the Cyrillic, Greek and small-capital
 * letters drawn like Latin ones that the skeleton keeps as they are (ᴅᴇꜰᴀᴜʟᴛ),
 * so `Default`, `DEFAULT`, `Ｄｅｆａｕｌｔ` and a `dеfault` with a Cyrillic е
 * fold alike.  Spaces at either end go, runs of them inside are one.
 * Invisible characters (zero-width, joiners, soft hyphen, variation
 * selectors, tags, fillers, the line and paragraph separators, the blank
 * Braille pattern) are refused, never folded away: a name that reads the
 * same as another but is not would be a second name.
 */
#include "common/ident.h"

#include <stdint.h>
#include <string.h>
#include <unicode/uchar.h>
#include <unicode/unorm2.h>
#include <unicode/uspoof.h>
#include <unicode/ustring.h>

#define SKEL_UNITS 1024   /* UTF-16 units of a name on its way to its skeleton (ident.h names are short) */

static int is_invisible(uint32_t cp)
{
	return cp == 0xad || cp == 0x34f || cp == 0x61c || cp == 0x115f || cp == 0x1160 || cp == 0x17b4 ||
	       cp == 0x17b5 || (cp >= 0x180b && cp <= 0x180f) || (cp >= 0x200b && cp <= 0x200f) ||
	       (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2060 && cp <= 0x206f) || cp == 0x3164 ||
	       (cp >= 0xfe00 && cp <= 0xfe0f) || cp == 0xfeff || cp == 0xffa0 || (cp >= 0xfff0 && cp <= 0xfffb) ||
	       (cp >= 0x1bca0 && cp <= 0x1bca3) || (cp >= 0x1d173 && cp <= 0x1d17a) ||
	       (cp >= 0xe0000 && cp <= 0xe0fff) || cp == 0x2028 || cp == 0x2029 || cp == 0x2800;
}

/*
 * s's confusables skeleton (TR39) after NFKD without its combining marks, as UTF-8 in out;
 * 0, or -1 (out untouched) when ICU cannot say (too long, no data): the caller folds s itself.
 */
static int skeleton(const char *s, char *out, size_t outlen)
{
	UChar in[SKEL_UNITS], nf[SKEL_UNITS], bare[SKEL_UNITS], sk[SKEL_UNITS];
	UErrorCode e = U_ZERO_ERROR;
	int32_t n, m, k = 0, len;
	u_strFromUTF8(in, SKEL_UNITS, &n, s, -1, &e);
	const UNormalizer2 *nfkd = unorm2_getNFKDInstance(&e);
	m = U_SUCCESS(e) ? unorm2_normalize(nfkd, in, n, nf, SKEL_UNITS, &e) : 0;
	for (int32_t i = 0; U_SUCCESS(e) && i < m;) {
		UChar32 c;
		U16_NEXT(nf, i, m, c);
		int8_t t = u_charType(c);
		if (t != U_NON_SPACING_MARK && t != U_ENCLOSING_MARK && t != U_COMBINING_SPACING_MARK)
			U16_APPEND_UNSAFE(bare, k, c);
	}
	USpoofChecker *sc = U_SUCCESS(e) ? uspoof_open(&e) : NULL;
	len = U_SUCCESS(e) ? uspoof_getSkeleton(sc, 0, bare, k, sk, SKEL_UNITS, &e) : 0;
	if (sc)
		uspoof_close(sc);
	if (U_SUCCESS(e))
		u_strToUTF8(out, (int32_t)outlen, &n, sk, len, &e);
	return U_SUCCESS(e) && e != U_STRING_NOT_TERMINATED_WARNING && (size_t)n < outlen ? 0 : -1;
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
	{ 0xa730, 'f' }, { 0xa731, 's' }, { 0x29f, 'l' }, { 0x262, 'g' }, { 0x274, 'n' }, { 0x280, 'r' },
	{ 0x28f, 'y' }, { 0x1d0a, 'j' },   /* small capitals the confusables skeleton keeps as they are */
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

/* Whether s holds an invisible character (checked on the name as given, before any folding). */
static int has_invisible(const unsigned char *p, size_t n)
{
	for (size_t i = 0; i < n;) {
		uint32_t cp;
		size_t k = ident_utf8_next(p + i, n - i, &cp);
		if (!k || is_invisible(cp))
			return 1;
		i += k;
	}
	return 0;
}

const char *ident_fold(const char *s, char *out, size_t outlen)
{
	char skel[4 * SKEL_UNITS];
	const unsigned char *p = (const unsigned char *)(s ? s : "");
	size_t n = strlen((const char *)p), w = 0;
	int space = 0;
	if (ident_check(s))
		return ident_check(s);
	if (has_invisible(p, n))
		return "holds an invisible character (a zero-width space, joiner or the like)";
	if (!skeleton((const char *)p, skel, sizeof skel)) {
		p = (const unsigned char *)skel;
		n = strlen(skel);
	}
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
