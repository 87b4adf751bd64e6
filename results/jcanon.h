/*
 * jcanon.h - stored JSON text rewritten as jansson writes it with
 * JSON_COMPACT | JSON_SORT_KEYS, without building the document: what
 * `results export --format csv` prints for a metric's params, at close to
 * the speed of a copy (issue 17).
 *
 * It takes JSON whose strings are ASCII with only the escapes jansson
 * itself writes (\" \\ \b \f \n \r \t; no \u, no \/), whose keys have no
 * escape, with no duplicate key and at most JCANON_MEMBERS members per
 * object and JCANON_DEPTH levels: the text gpuvet stores.  Integers are
 * copied, reals printed as jansson prints them (%.17g, ".0" when integral,
 * a bare exponent), objects' members sorted by key.  Anything else returns
 * 1 and leaves the buffer as it was: the caller goes through jansson.
 */
#ifndef GPUVET_JCANON_H
#define GPUVET_JCANON_H

#include <stddef.h>
#include <string.h>

#define JCANON_DEPTH 32
#define JCANON_MEMBERS 128

struct jc_buf {
	char *p;
	size_t len, cap;
};

/* Appends the canonical form of text[0..n) to b: 0, or 1 (not taken, b as it was). */
int jcanon_sorted(const char *text, size_t n, struct jc_buf *b);
/* Makes room for n more bytes and a terminator. */
void jc_grow(struct jc_buf *b, size_t n);

/* Appends n bytes (and keeps a terminator after them). */
static inline void jc_put(struct jc_buf *b, const char *s, size_t n)
{
	if (b->len + n + 1 > b->cap)
		jc_grow(b, n);
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = 0;
}

#endif
