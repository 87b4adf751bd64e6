/*
 * fixture_t.h - the unit tests' fixture helpers, one copy for every test that
 * reads a fingerprint fixture: t_load() reads dir/file as JSON (a missing or
 * broken file is said on stderr with jansson's reason and read as NULL, so the
 * CHECK that follows fails with the cause beside it); t_find_flag() finds a
 * raised flag by code and GPU (-2: any GPU, -1: the run's own).
 */
#ifndef GPUVET_FIXTURE_T_H
#define GPUVET_FIXTURE_T_H

#include <jansson.h>
#include <stdio.h>
#include <string.h>

static inline json_t *t_load(const char *dir, const char *file)
{
	char path[512];
	json_error_t err;
	snprintf(path, sizeof path, "%s%s", dir, file);
	json_t *j = json_load_file(path, 0, &err);
	if (!j)
		fprintf(stderr, "cannot load %s: %s\n", path, err.text);
	return j;
}

static inline const json_t *t_find_flag(const json_t *flags, const char *code, int gpu)
{
	size_t i;
	json_t *f;
	json_array_foreach(flags, i, f) {
		json_t *g = json_object_get(json_object_get(f, "evidence"), "gpu");
		if (!strcmp(json_string_value(json_object_get(f, "code")), code) &&
		    (gpu == -2 || (json_is_integer(g) && json_integer_value(g) == gpu)))
			return f;
	}
	return NULL;
}

#endif
