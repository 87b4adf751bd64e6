/*
 * collect_paths.h - what `results import` reads when given several files or
 * a directory: every regular file under a directory (sorted by path, so run
 * numbers follow it), and which of them are gpuvet fingerprints, so that
 * `results import tests/fixtures/gpu/` imports the fingerprints and names
 * each other file it skipped, with why.
 */
#ifndef GPUVET_COLLECT_PATHS_H
#define GPUVET_COLLECT_PATHS_H

#include <stddef.h>

struct collect_paths {
	char **path;      /* owned */
	const char **why; /* a directory's entry skipped (a FIFO, a device, a link to nothing, a hidden one): why; NULL to import */
	size_t n, cap;
	int dirs;         /* how many of the arguments were directories */
};

/* The n arguments, a directory's files in its place.  0, or -1 with the error said (exit 2). */
int collect_paths_expand(int n, char **args, struct collect_paths *out);
void collect_paths_free(struct collect_paths *p);
/*
 * 1 when path looks like a gpuvet fingerprint (or an array of them): its first 64 KiB name the
 * fingerprint schema; else 0 with why into buf.  A file that is one, malformed, is then refused by
 * the import as ever: only what is not a fingerprint at all is skipped.
 */
int collect_paths_is_fingerprint(const char *path, char *why, size_t size);

#endif
