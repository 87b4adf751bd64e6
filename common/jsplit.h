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

#include "common/jtree.h"

#include <pthread.h>
#include <stddef.h>
#include <stdio.h>

/* Largest element (bytes) accepted; a bigger one is an error, not a huge allocation. */
#define JSPLIT_MAX_ELEMENT (512u << 20)
/* Bytes read from the file at a time. */
#define JSPLIT_READ (64u << 10)

struct jsplit {
	FILE *f;
	int state;        /* 0 before the document, 1 in the array, 2 done */
	int is_array;
	size_t index;     /* of the next element */
	long long offset; /* bytes read so far */
	char *buf;
	size_t len, cap;
	char *rb;          /* the file read JSPLIT_READ bytes at a time: rb[rpos..rlen) not yet taken */
	size_t rpos, rlen;
	size_t rsize;      /* bytes a read asks for, 1 to JSPLIT_READ (0: JSPLIT_READ); tests set it small
			      so that elements, strings and errors straddle reads */
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

/*
 * The elements parsed ahead: a thread splits and parses (json_loadb with
 * flags) up to JSPLIT_AHEAD elements while the caller stores the ones before
 * (an import's parse and its SQLite writes then share two cores).  In order;
 * without a thread (pthread_create failed) the same, one at a time.
 */
#define JSPLIT_AHEAD 8

struct jsplit_item {
	struct jtree *t;     /* the parsed element, or its parse error (t->err); the caller jt_free()s and frees it */
	int kind;            /* 1 an element, 0 the end, -1 split error (j.err), -2 parse error (t->err) */
	size_t index;        /* the element's index */
	void *made;          /* what the prep's make built from t (kind 1), or NULL; taken by the caller, or dropped */
	void (*drop)(void *made);
};

/*
 * More work on each parsed element, done in the same thread (an import checks
 * a fingerprint and builds its rows there): make(t, arg) for every element
 * that parsed, its result in item.made; drop frees one the caller never took.
 */
struct jsplit_prep {
	void *(*make)(const struct jtree *t, void *arg);
	void (*drop)(void *made);
	void *arg;
};

struct jsplit_ahead {
	struct jsplit j;     /* read by the caller only after the end or an error came */
	struct jsplit_prep prep;
	int threaded, stop;
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t not_empty, not_full;
	struct jsplit_item ring[JSPLIT_AHEAD];
	size_t head, count;
};

/* prep: NULL, or the work done on each parsed element in the thread (copied). */
void jsplit_ahead_start(struct jsplit_ahead *a, FILE *f, const struct jsplit_prep *prep);
/* Frees an item's tree, and what was made of it unless the caller took it (set made to NULL). */
void jsplit_item_free(struct jsplit_item *it);
/* The next item (its kind); kind 1 hands over it->v.  After 0 or -1, only stop. */
int jsplit_ahead_next(struct jsplit_ahead *a, struct jsplit_item *it);
/* Stops the thread, frees what it parsed that was not taken, and the splitter. */
void jsplit_ahead_stop(struct jsplit_ahead *a);

#endif
