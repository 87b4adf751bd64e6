/*
 * report_strs.c - one copy of each repeated string the report's run
 * summaries hold (see report_int.h): a fleet's runs share a few providers,
 * instance types, regions, models, versions, hosts and verdicts, so a run
 * holds pointers into this set instead of a dozen small copies of its own.
 */
#include "reports/report_int.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct rep_strs {
	char **slot;
	size_t cap, n;
};

struct rep_strs *rep_strs_new(void)
{
	struct rep_strs *p = gv_calloc(1, sizeof *p);
	p->cap = 64;
	p->slot = gv_calloc(p->cap, sizeof *p->slot);
	return p;
}

static char **find_slot(char **slot, size_t cap, const char *s)
{
	size_t i = (size_t)(gv_hash_str(s) & (cap - 1));
	while (slot[i] && strcmp(slot[i], s))
		i = (i + 1) & (cap - 1);
	return &slot[i];
}

static void grow(struct rep_strs *p)
{
	size_t cap = p->cap * 2;
	char **slot = gv_calloc(cap, sizeof *slot);
	for (size_t i = 0; i < p->cap; i++)
		if (p->slot[i])
			*find_slot(slot, cap, p->slot[i]) = p->slot[i];
	free(p->slot);
	p->slot = slot;
	p->cap = cap;
}

const char *rep_strs_get(struct rep_strs *p, const char *s)
{
	char **at;
	if (!s)
		return NULL;
	if (2 * (p->n + 1) > p->cap)
		grow(p);
	at = find_slot(p->slot, p->cap, s);
	if (!*at) {
		*at = gv_strdup(s);
		p->n++;
	}
	return *at;
}

void rep_strs_free(struct rep_strs *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->cap; i++)
		free(p->slot[i]);
	free(p->slot);
	free(p);
}
