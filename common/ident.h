/*
 * ident.h - one check for identity strings (provider, instance type, region,
 * and any name a user or an imported file gives), and the escapes that keep
 * stored text from doing harm where it is printed or exported.
 *
 * An identity is printable UTF-8: valid UTF-8 (no overlong forms, no
 * surrogates), no control character (C0, DEL, C1), no bidirectional
 * override or isolate (U+202A..U+202E, U+2066..U+2069), 1 to IDENT_MAX
 * bytes.  `run`, `inventory`, `results import` and `prices import` all use
 * ident_check, so what one accepts the others accept.
 */
#ifndef GPUVET_IDENT_H
#define GPUVET_IDENT_H

#include <stddef.h>
#include <stdint.h>

#define IDENT_MAX 256

/* NULL when s is a valid identity, else what is wrong ("holds a control character"). */
const char *ident_check(const char *s);

/* Length of the UTF-8 sequence at s (at most n bytes) and its code point; 0 when invalid. */
size_t ident_utf8_next(const unsigned char *s, size_t n, uint32_t *cp);

/*
 * A name as a reader sees it, for comparing names (ident_fold.c): NFKC's
 * compatibility characters that map to ASCII folded to it (fullwidth,
 * mathematical, circled, letterlike, ligatures, compatibility spaces),
 * lowercased, Cyrillic and Greek look-alikes of Latin letters folded to
 * them, spaces trimmed at either end and one inside.  Writes out (NUL-
 * terminated); NULL, or what is wrong: ident_check's reasons, or an
 * invisible character (zero-width space or joiner, soft hyphen, variation
 * selector, tag), which is refused rather than folded away.
 */
const char *ident_fold(const char *s, char *out, size_t outlen);

/* How many words s holds: runs of letters or digits, whitespace and invisible characters not counted. */
int ident_words(const char *s);

/* 1 when s[0..n) is valid UTF-8 (no overlong forms, no surrogates). */
int ident_utf8_valid(const char *s, size_t n);

/*
 * s made safe to print on a terminal, always NUL-terminated in out:
 * control characters and bytes of invalid UTF-8 as \xNN (ESC as \e),
 * bidirectional overrides as \u{NNNN}, a backslash doubled.
 */
void ident_escape(const char *s, char *out, size_t outlen);

/*
 * 1 when a CSV cell holding s would be read as a formula by a spreadsheet
 * (OWASP: it starts with = + - @, a tab or a carriage return): the exporter
 * then writes it with a leading single quote.
 */
int ident_csv_formula(const char *s);

#endif
