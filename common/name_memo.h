/*
 * name_memo.h - a thread's memo of what a fixed table says of a name.
 *
 * An import asks the same few dozen metric and series names of every run
 * (whose bench owns it, its row, its bounds), and each answer is a scan of
 * the benches' tables by pattern.  A caller keeps its answers in a
 * direct-mapped memo of its own, per thread (_Thread_local: the import's
 * parse-ahead thread and the writer ask at once), keyed by the name:
 *
 *     static _Thread_local struct name_memo_key keys[NAME_MEMO_SLOTS];
 *     static _Thread_local struct my_facts vals[NAME_MEMO_SLOTS];
 *     size_t at;
 *     int kept = name_memo_find(keys, name, &at);
 *     if (kept == 0) { vals[at] = look_up(name); name_memo_keep(&keys[at], name); }
 *     return kept < 0 ? look_up(name) : vals[at];
 *
 * A name longer than NAME_MEMO_LEN - 1 bytes, or met when its slots are
 * taken, is never kept (looked up each time).  The answer is the table's,
 * so only the time of a lookup depends on the memo.
 */
#ifndef GPUVET_NAME_MEMO_H
#define GPUVET_NAME_MEMO_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define NAME_MEMO_LEN 64
#define NAME_MEMO_SLOTS 512   /* a power of two */
#define NAME_MEMO_PROBES 8

struct name_memo_key {
	char name[NAME_MEMO_LEN];
	uint8_t used;
};

/* name's slot in *at: 1 when it holds name's answer, 0 when the caller fills it, -1 when name is not kept (too long,
 * or its NAME_MEMO_PROBES slots taken by other names: a memo full of a hostile file's names is never emptied). */
static inline int name_memo_find(const struct name_memo_key *keys, const char *name, size_t *at)
{
	uint32_t h = 2166136261u;
	size_t n = 0;
	for (; name[n]; n++)
		h = (h ^ (unsigned char)name[n]) * 16777619u;
	if (n >= NAME_MEMO_LEN)
		return -1;
	for (size_t k = 0; k < NAME_MEMO_PROBES; k++) {
		*at = (h + k) & (NAME_MEMO_SLOTS - 1);
		if (!keys[*at].used)
			return 0;
		if (!memcmp(keys[*at].name, name, n + 1))
			return 1;
	}
	return -1;
}

/* The slot now holds name's answer. */
static inline void name_memo_keep(struct name_memo_key *k, const char *name)
{
	memcpy(k->name, name, strlen(name) + 1);
	k->used = 1;
}

#endif
