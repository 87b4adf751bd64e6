/*
 * mindex.h - a run's metrics indexed once by (name, gpu), so a pass over a
 * run's rows that looks up another row of the same run is linear in the run
 * (n log n), never a scan per row.  The names are borrowed: they must outlive
 * the index.  The value kept is the caller's (a row's position, say).
 */
#ifndef GPUVET_MINDEX_H
#define GPUVET_MINDEX_H

#include <stddef.h>

struct mindex_ent {
	const char *name;
	long gpu;
	size_t at;       /* the caller's: the row's position */
};

struct mindex {
	struct mindex_ent *e;
	size_t n, cap;
	int sorted;
};

void mindex_add(struct mindex *x, const char *name, long gpu, size_t at);
/* The first row added under (name, gpu): 0 with *at, or -1 when none.  Sorts on first use. */
int mindex_find(struct mindex *x, const char *name, long gpu, size_t *at);
void mindex_free(struct mindex *x);

#endif
