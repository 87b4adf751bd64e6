/* mindex.c - see mindex.h: a sorted array, searched by bisection. */
#include "common/mindex.h"
#include "common/util.h"

#include <stdlib.h>
#include <string.h>

static int cmp_key(const char *name, long gpu, const struct mindex_ent *b)
{
	int c = strcmp(name, b->name);
	return c ? c : (gpu > b->gpu) - (gpu < b->gpu);
}

/* by key, then the order added: the first added of equal keys is found */
static int cmp_ent(const void *a, const void *b)
{
	const struct mindex_ent *x = a, *y = b;
	int c = cmp_key(x->name, x->gpu, y);
	return c ? c : (x->at > y->at) - (x->at < y->at);
}

void mindex_add(struct mindex *x, const char *name, long gpu, size_t at)
{
	if (!name)
		return;
	if (x->n == x->cap)
		x->e = gv_realloc(x->e, (x->cap = x->cap ? 2 * x->cap : 64) * sizeof *x->e);
	x->e[x->n++] = (struct mindex_ent){ name, gpu, at };
	x->sorted = 0;
}

int mindex_find(struct mindex *x, const char *name, long gpu, size_t *at)
{
	if (!name || !x->n)
		return -1;
	if (!x->sorted) {
		qsort(x->e, x->n, sizeof *x->e, cmp_ent);
		x->sorted = 1;
	}
	size_t lo = 0, hi = x->n;   /* the first entry not below the key */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (cmp_key(name, gpu, &x->e[mid]) > 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == x->n || cmp_key(name, gpu, &x->e[lo]))
		return -1;
	*at = x->e[lo].at;
	return 0;
}

void mindex_free(struct mindex *x)
{
	free(x->e);
	memset(x, 0, sizeof *x);
}
