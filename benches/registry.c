/*
 * registry.c - the one table of benches, in the order a run executes them.
 * Adding a bench: one extern line and one row; bench_metrics() and
 * metric_info_find() read the metric rows each bench declares.
 */
#include "benches/bench.h"
#include "common/name_memo.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern const struct bench bench_gemm;
extern const struct bench bench_memcpy;
extern const struct bench bench_allreduce;
extern const struct bench bench_nvme;
extern const struct bench bench_objstore;
extern const struct bench bench_ingest;
extern const struct bench bench_soak;
extern const struct bench bench_host;
extern const struct bench bench_null;

const struct bench *const bench_registry[] = {
	&bench_gemm,
	&bench_memcpy,
	&bench_allreduce,
	&bench_nvme,
	&bench_objstore,
	&bench_ingest,
	&bench_host,
	&bench_soak,
	&bench_null,
	NULL,
};


const struct metric_info *bench_metrics(const struct bench *b)
{
	static const struct metric_info none[] = { { NULL, NULL, NULL, 0, METRIC_PEAK_NONE } };
	return b->metrics ? b->metrics : none;
}

int metric_name_matches(const char *pattern, const char *name)
{
	const char *star = strchr(pattern, '*');
	if (!star)
		return !strcmp(pattern, name);
	size_t pre = (size_t)(star - pattern), post = strlen(star + 1), n = strlen(name);
	if (n < pre + post + 1 || strncmp(name, pattern, pre) || strcmp(name + n - post, star + 1))
		return 0;
	/* the '*' stands for one non-empty dotted word */
	for (size_t i = pre; i < n - post; i++)
		if (name[i] == '.')
			return 0;
	return 1;
}

/* Whether name is a metric of row m: its pattern, and a '*' that stands for one of words (NULL: any). */
static int metric_row_matches(const struct metric_info *m, const char *const *words, const char *name)
{
	const char *star = strchr(m->name, '*');
	if (!metric_name_matches(m->name, name))
		return 0;
	if (!star || !words)
		return 1;
	size_t pre = (size_t)(star - m->name), len = strlen(name) - pre - strlen(star + 1);
	for (const char *const *w = words; *w; w++)
		if (strlen(*w) == len && !strncmp(name + pre, *w, len))
			return 1;
	return 0;
}

/* What the harness adds to every run (runners/run.c), beside the benches' own rows. */
static const struct metric_info harness_metrics[] = {
	{ "host.cpu_steal.pct", "%", "CPU steal", METRIC_LOWER_IS_BETTER, METRIC_PEAK_NONE },
	{ NULL, NULL, NULL, 0, METRIC_PEAK_NONE },
};

static const struct metric_info *info_scan(const char *name)
{
	for (const struct metric_info *m = harness_metrics; m->name; m++)
		if (metric_row_matches(m, NULL, name))
			return m;
	for (const struct bench *const *b = bench_registry; *b; b++)
		for (const struct metric_info *m = bench_metrics(*b); m->name; m++)
			if (metric_row_matches(m, (*b)->words, name))
				return m;
	return NULL;
}

static const char *owner_scan(const char *name)
{
	for (const struct metric_info *m = harness_metrics; m->name; m++)
		if (metric_name_matches(m->name, name))
			return "harness";
	for (const struct bench *const *b = bench_registry; *b; b++)
		for (const struct metric_info *m = bench_metrics(*b); m->name; m++)
			if (metric_name_matches(m->name, name))
				return (*b)->name;
	return NULL;
}

/* What the harness samples in every run (runners/run.c). */
static const char *const harness_series[] = { "host.cpu_steal.pct", NULL };

static const char *series_scan(const char *name)
{
	for (const char *const *p = harness_series; *p; p++)
		if (metric_name_matches(*p, name))
			return "harness";
	for (const struct bench *const *b = bench_registry; *b; b++)
		for (const char *const *p = (*b)->series; p && *p; p++)
			if (metric_name_matches(*p, name))
				return (*b)->name;
	return NULL;
}

/* What the tables say of one name: its metric row, the bench that declares it as a metric, as a series. */
struct name_facts {
	const struct metric_info *info;
	const char *owner, *series_owner;
};

static struct name_facts facts_scan(const char *name)
{
	return (struct name_facts){ info_scan(name), owner_scan(name), series_scan(name) };
}

/* The facts of name, scanned once per thread and kept (common/name_memo.h): an import asks them of every row. */
static struct name_facts facts_of(const char *name)
{
	static _Thread_local struct name_memo_key keys[NAME_MEMO_SLOTS];
	static _Thread_local struct name_facts vals[NAME_MEMO_SLOTS];
	size_t at;
	int kept = name_memo_find(keys, name, &at);
	if (kept < 0)
		return facts_scan(name);
	if (!kept) {
		vals[at] = facts_scan(name);
		name_memo_keep(&keys[at], name);
	}
	return vals[at];
}

const struct metric_info *metric_info_find(const char *name)
{
	return name ? facts_of(name).info : NULL;
}

const char *metric_owner(const char *name)
{
	return name ? facts_of(name).owner : NULL;
}

const char *series_owner(const char *name)
{
	return name ? facts_of(name).series_owner : NULL;
}

const char *metric_label(const char *name, char *buf, size_t size)
{
	const struct metric_info *m = metric_info_find(name);
	const char *star = m ? strchr(m->name, '*') : NULL;
	if (!m) {
		snprintf(buf, size, "%s", name);
	} else if (!star) {
		snprintf(buf, size, "%s", m->label);
	} else {
		size_t pre = (size_t)(star - m->name), len = strcspn(name + pre, ".");
		char word[32];
		if (len >= sizeof word)
			len = sizeof word - 1;
		for (size_t i = 0; i < len; i++)
			word[i] = (char)toupper((unsigned char)name[pre + i]);
		word[len] = '\0';
		snprintf(buf, size, "%s %s", word, m->label);
	}
	return buf;
}

const struct bench *bench_find(const char *name)
{
	for (const struct bench *const *b = bench_registry; *b; b++) {
		if (strcmp((*b)->name, name))
			continue;
		if (((*b)->flags & BENCH_TEST_ONLY) && !bench_test_benches_allowed())
			return NULL;
		return *b;
	}
	return NULL;
}
