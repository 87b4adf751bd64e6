/*
 * jtree.h - a strict JSON reader for bulk import: one pass over the text
 * into a flat, read-only tree (an array of nodes in document order), with
 * no allocation per value.
 *
 * Why not jansson here: `results import` of 10k fingerprints (283 MB) spent
 * most of its time in jansson's parser and in malloc/free for its values
 * (22 MB/s on the 2-core VM); this reads the same text several times faster.
 * jansson stays the library for building and writing JSON everywhere else.
 *
 * It accepts exactly what jansson's json_loadb(JSON_REJECT_DUPLICATES)
 * accepts, and reads the same values: RFC 8259 with an object or array at
 * the top, UTF-8 checked, no "\u0000", no lone surrogates, no duplicate key
 * in any object, integers that fit a long long, reals that do not overflow,
 * nesting up to 2048.  tests/fuzz/fuzz_jtree.c holds it to that, value by
 * value, against jansson itself.  One difference, on purpose: jansson lets
 * one NUL byte pass right after a number or a literal ("[1\0]": its stream
 * buffer takes a NUL for "empty"); this rejects a NUL byte anywhere outside
 * a string, as RFC 8259 does.
 *
 * A value is named by its node index; 0 is "absent" (the root is node 1).
 */
#ifndef GPUVET_JTREE_H
#define GPUVET_JTREE_H

#include <stddef.h>
#include <stdint.h>

enum jt_type { JT_ABSENT, JT_NULL, JT_FALSE, JT_TRUE, JT_INT, JT_REAL, JT_STR, JT_ARR, JT_OBJ };

#define JT_MAX_DEPTH 2048   /* jansson's JSON_PARSER_MAX_DEPTH */

struct jt_node {
	uint8_t type;       /* enum jt_type */
	uint32_t end;       /* index one past this value's last node: its next sibling */
	uint32_t n;         /* elements of an array, members of an object, bytes of a string */
	uint32_t src, len;  /* the value's text in the source */
	union {
		double d;       /* JT_REAL */
		long long i;    /* JT_INT */
		size_t s;       /* JT_STR: offset of the decoded, NUL-terminated bytes in strs */
	} u;
};

struct jtree {
	char *src;                 /* a copy of the text, NUL-terminated */
	size_t srclen;
	struct jt_node *nodes;     /* nodes[0] unused: index 0 means absent */
	size_t nnodes, capnodes;
	char *strs;
	size_t nstrs, capstrs;
	size_t maxstr;             /* the longest decoded string's length, bytes */
	uint32_t *scratch;         /* member keys while an object is checked for duplicates */
	size_t capscratch;
	int line;                  /* of a parse error, from 1 */
	char err[128];             /* a parse error, jansson-like ("duplicate object key") */
};

/* Parses text (len bytes) into t (initialised here; jt_free it either way).  0, or -1 with t->err. */
int jt_parse(struct jtree *t, const char *text, size_t len);
void jt_free(struct jtree *t);

static inline int jt_type(const struct jtree *t, uint32_t v)
{
	return v ? t->nodes[v].type : JT_ABSENT;
}

/* The value of key in object o; 0 when o is not an object or has no such key. */
uint32_t jt_get(const struct jtree *t, uint32_t o, const char *key);
/* The string, or NULL when v is not a string. */
static inline const char *jt_str(const struct jtree *t, uint32_t v)
{
	return jt_type(t, v) == JT_STR ? t->strs + t->nodes[v].u.s : NULL;
}
/* 1 when v is an integer (no fraction or exponent in the text). */
static inline int jt_is_int(const struct jtree *t, uint32_t v)
{
	return jt_type(t, v) == JT_INT;
}
/* v's integer, or 0 when v is not one. */
static inline long long jt_int(const struct jtree *t, uint32_t v)
{
	return jt_is_int(t, v) ? t->nodes[v].u.i : 0;
}
/* 1 with *out when v is a number, else 0. */
static inline int jt_number(const struct jtree *t, uint32_t v, double *out)
{
	int ty = jt_type(t, v);
	if (ty == JT_INT)
		*out = (double)t->nodes[v].u.i;
	else if (ty == JT_REAL)
		*out = t->nodes[v].u.d;
	return ty == JT_INT || ty == JT_REAL;
}
/* Elements of an array (0 for anything else). */
static inline size_t jt_size(const struct jtree *t, uint32_t v)
{
	return jt_type(t, v) == JT_ARR ? t->nodes[v].n : 0;
}

/* The first element of array a, and the one after e; 0 at the end. */
static inline uint32_t jt_first(const struct jtree *t, uint32_t a)
{
	return jt_size(t, a) ? a + 1 : 0;
}

static inline uint32_t jt_next(const struct jtree *t, uint32_t a, uint32_t e)
{
	uint32_t nx = t->nodes[e].end;
	return nx < t->nodes[a].end ? nx : 0;
}
/* v as compact JSON text (malloc'd; NULL for absent or null): its source without the white space. */
char *jt_text(const struct jtree *t, uint32_t v);

#define JT_CAT2(a, b) a##b
#define JT_CAT(a, b) JT_CAT2(a, b)
/* Each element e of array a, i counting from 0; a is evaluated once (a jt_get() there is not asked again per element). */
#define jt_foreach(t, a, i, e)                                                                                      \
	for (uint32_t JT_CAT(jt_arr_, __LINE__) = (a), JT_CAT(jt_go_, __LINE__) = 1; JT_CAT(jt_go_, __LINE__);       \
	     JT_CAT(jt_go_, __LINE__) = 0)                                                                           \
		for ((i) = 0, (e) = jt_first((t), JT_CAT(jt_arr_, __LINE__)); (e);                                   \
		     (i)++, (e) = jt_next((t), JT_CAT(jt_arr_, __LINE__), (e)))

#endif
