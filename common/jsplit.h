/*
 * jsplit.h - the top-level elements of a JSON array, one at a time, from a
 * stream: `results import` loads a file of 10k fingerprints in the memory
 * of one (jansson would parse the whole array at once).
 *
 * The splitter only finds each element's bytes (it tracks strings, their
 * escapes and bracket depth); the caller parses each element alone
 * (json_loadb), which checks it properly.  A document that is not an array
 * is one element: the whole text.
 */
#ifndef GPUVET_JSPLIT_H
#define GPUVET_JSPLIT_H

#include <stddef.h>
#include <stdio.h>

/* Largest element (bytes) accepted; a bigger one is an error, not a huge allocation. */
#define JSPLIT_MAX_ELEMENT (512u << 20)

struct jsplit {
	FILE *f;
	int state;        /* 0 before the document, 1 in the array, 2 done */
	int is_array;
	size_t index;     /* of the next element */
	long long offset; /* bytes read so far */
	char *buf;
	size_t len, cap;
	char err[160];
};

void jsplit_init(struct jsplit *j, FILE *f);
void jsplit_free(struct jsplit *j);
/*
 * The next element: 1 with *elem (valid until the next call, NUL-terminated)
 * and *len, 0 at the end of the document, -1 with a lowercase message in
 * j->err ("element 3 at byte 1234: ...").  j->index - 1 is the element's index.
 */
int jsplit_next(struct jsplit *j, const char **elem, size_t *len);

#endif
