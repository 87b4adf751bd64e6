/*
 * fuzz_jsplit.c - the streaming array splitter of `results import`
 * (common/jsplit.c).  Properties: it never reads or writes out of bounds;
 * every element it yields is NUL-terminated at its length and starts and ends
 * with a non-blank byte; and when the whole input is valid JSON (jansson
 * says so), an array yields exactly its elements, each equal to jansson's
 * element, and anything else yields one element equal to the document.
 * The file is read a few bytes at a time (rsize), so that elements, strings
 * and errors straddle reads; the parse-ahead thread (jsplit_ahead_*), reading
 * 64 KiB at a time, yields the same sequence, byte offsets in errors too: each
 * element parsed (common/jtree.c, held to jansson's reading), the same end
 * or the same error (checked for inputs whose
 * first byte is a multiple of 4: a thread per input costs 5x the executions).
 */
#include "common/jsplit.h"
#include "jt_json.h"

#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The work a prep does in the parse thread: here, the element's node count, kept in memory it frees. */
static int prep_arg;

static void *count_nodes(const struct jtree *t, void *arg)
{
	size_t *n = malloc(sizeof *n);
	if (!n || arg != &prep_arg)
		abort();
	*n = t->nnodes;
	return n;
}

/* The split done again through the parse-ahead thread: same elements (parsed), same end; each
 * parsed element carries what the prep made of it, dropped with the item (ASan sees a leak). */
static void check_ahead(const uint8_t *data, size_t size, size_t n_plain, int r_plain, const char *err_plain)
{
	FILE *f = fmemopen((void *)data, size, "r");
	FILE *g = fmemopen((void *)data, size, "r");
	if (!f || !g)
		abort();
	struct jsplit plain;
	struct jsplit_ahead a;
	struct jsplit_item it;
	jsplit_init(&plain, g);
	struct jsplit_prep prep = { count_nodes, free, &prep_arg };
	jsplit_ahead_start(&a, f, &prep);
	size_t n = 0;
	int r;
	const char *e;
	size_t len;
	while ((r = jsplit_ahead_next(&a, &it)) == 1 || r == -2) {
		if (jsplit_next(&plain, &e, &len) != 1 || it.index != n)
			abort();
		json_t *want = json_loadb(e, len, JSON_REJECT_DUPLICATES, NULL);
		json_t *got = r == 1 ? jt_to_json(it.t, 1) : NULL;
		/* jtree rejects the NUL byte jansson lets pass after a number (common/jtree.h) */
		if (r == 1 ? !want || !json_equal(want, got) : (want && !memchr(e, 0, len)) || !it.t->err[0])
			abort();
		if (r == 1 ? !it.made || *(size_t *)it.made != it.t->nnodes : it.made != NULL)
			abort();
		json_decref(want);
		json_decref(got);
		jsplit_item_free(&it);
		n++;
	}
	if (n != n_plain || r != r_plain || (r < 0 && strcmp(a.j.err, err_plain)))
		abort();
	jsplit_ahead_stop(&a);
	jsplit_free(&plain);
	fclose(f);
	fclose(g);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!size)
		return 0;
	FILE *f = fmemopen((void *)data, size, "r");
	if (!f)
		return 0;
	json_t *whole = json_loadb((const char *)data, size, JSON_DECODE_ANY, NULL);
	struct jsplit j;
	jsplit_init(&j, f);
	j.rsize = 1 + size % 13;   /* reads of a few bytes; check_ahead's of 64 KiB give the same split */
	const char *e;
	size_t len, n = 0;
	int r;
	while ((r = jsplit_next(&j, &e, &len)) == 1) {
		if (e[len] != 0 || !len || e[0] == ' ' || e[0] == '\n' || e[len - 1] == ' ' || e[len - 1] == '\n')
			abort();
		if (whole) {
			json_t *one = json_loadb(e, len, JSON_DECODE_ANY, NULL);
			json_t *want = json_is_array(whole) ? json_array_get(whole, n) : whole;
			if (!one || !json_equal(one, want))
				abort();
			json_decref(one);
		}
		n++;
	}
	if (whole) {
		/* valid JSON is split whole; embedded NULs are where jansson and a FILE may differ */
		if (r != 0 && !memchr(data, 0, size))
			abort();
		if (r == 0 && json_is_array(whole) && n != json_array_size(whole))
			abort();
	}
	if (r < 0 && !j.err[0])
		abort();
	if (data[0] % 4 == 0)   /* a thread per input is slow: one input in four (by its first byte) */
		check_ahead(data, size, n, r, j.err);
	json_decref(whole);
	jsplit_free(&j);
	fclose(f);
	return 0;
}
