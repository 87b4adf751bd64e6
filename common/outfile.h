/*
 * outfile.h - where a command's -o PATH output goes, the one way every
 * command writes it (results export, report):
 *   - a FIFO or a character device (a pipe, /dev/stdout, /dev/null) is
 *     written in place, never replaced;
 *   - a regular file, or a name that does not exist yet, is written to a
 *     unique temporary beside it (mkstemp: O_EXCL, so a symlink planted there
 *     is never followed), fsynced, and renamed over PATH on commit: a reader
 *     sees the old file or the whole new one, and two writers at once leave
 *     one whole file (the last rename);
 *   - anything else (a directory, a socket, a block device) is refused.
 * A SIGTERM, SIGINT or SIGHUP while writing removes the temporary
 * (common/tmpguard.h).
 */
#ifndef GPUVET_OUTFILE_H
#define GPUVET_OUTFILE_H

#include <stdio.h>

struct gv_outfile {
	FILE *f;        /* write here */
	char *path;     /* PATH as given */
	char *tmp;      /* the temporary, NULL when written in place */
};

/* 0, or -1 with a one-line err naming the file and the cause (nothing created). */
int gv_outfile_open(struct gv_outfile *o, const char *path, char *err, size_t errlen);
/*
 * Whether PATH could be opened as above, checked without creating anything
 * (a long command checks its -o before it measures): 0, or -1 with err.
 */
int gv_outfile_check(const char *path, char *err, size_t errlen);
/* Flushes, syncs and puts the file in place; 0, or -1 with err (the temporary removed, PATH untouched). */
int gv_outfile_commit(struct gv_outfile *o, char *err, size_t errlen);
/* Gives up: the temporary removed, PATH untouched. */
void gv_outfile_abort(struct gv_outfile *o);

#endif
