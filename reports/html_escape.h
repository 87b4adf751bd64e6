/*
 * html_escape.h - writing untrusted text into HTML.
 *
 * Every string that comes from a store, a fingerprint or a price catalog
 * goes through one of these before it reaches the report.  The output is
 * always valid UTF-8: a byte that does not start a well-formed UTF-8
 * sequence, NUL and the C0/C1 control characters HTML forbids are written as
 * U+FFFD, so a hostile or corrupt name can neither break the markup nor
 * the encoding.
 */
#ifndef GPUVET_HTML_ESCAPE_H
#define GPUVET_HTML_ESCAPE_H

#include <stddef.h>
#include <stdio.h>

/*
 * Text and attribute values (double- or single-quoted): & < > " ' become
 * character references.  NULL writes nothing.  Returns the bytes written,
 * or -1 on a write error.
 */
long html_esc(FILE *f, const char *s);
long html_esc_n(FILE *f, const char *s, size_t n);

/*
 * The inside of a JSON string literal placed in an inline <script>: JSON's
 * own escapes plus < > & ' as \u003c.. and U+2028/U+2029 as \u2028/\u2029,
 * so the text can end neither the string, the script element nor a line
 * of JavaScript.  Returns the bytes written, or -1 on a write error.
 */
long html_json_esc(FILE *f, const char *s, size_t n);

/*
 * Length of the well-formed UTF-8 sequence at s (n bytes available): 1..4,
 * or 0 when it is not well formed (overlong, surrogate, > U+10FFFF,
 * truncated, stray continuation byte).  *cp receives the code point.
 */
size_t html_utf8_len(const unsigned char *s, size_t n, unsigned *cp);

#endif
