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
 *   - anything else (a directory, a socket, a block device) is refused;
 *   - the store named by gv_outfile_guard() is never an output: PATH is
 *     refused when it resolves (same device and inode, through a link, or,
 *     not existing yet, by its resolved directory and name) to the store, its
 *     -wal, -shm or -journal, or anything in its pending folder; and an
 *     existing SQLite database, WAL or hot rollback journal (by its magic),
 *     or a name next to a database under its journal names (-wal, -shm,
 *     -journal), is never replaced, whichever database it is.
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

/* The store's path (--db): what no output may resolve to.  Called once, before any command. */
void gv_outfile_guard(const char *db_path);
/* 0, or -1 with err when PATH resolves to the guarded store or is an SQLite database or journal (above). */
int gv_outfile_refused(const char *path, char *err, size_t errlen);

/* 0, or -1 with a one-line err naming the file and the cause (nothing created). */
int gv_outfile_open(struct gv_outfile *o, const char *path, char *err, size_t errlen);
/*
 * Whether PATH could be opened as above, checked without creating anything
 * (a long command checks its -o before it measures): 0, or -1 with err.
 */
int gv_outfile_check(const char *path, char *err, size_t errlen);
/* gv_outfile_open for the store's own files (its pending folder): the guard above left out. */
int gv_outfile_open_own(struct gv_outfile *o, const char *path, char *err, size_t errlen);
/* Flushes, syncs and puts the file in place; 0, or -1 with err (the temporary removed, PATH untouched). */
int gv_outfile_commit(struct gv_outfile *o, char *err, size_t errlen);
/* Gives up: the temporary removed, PATH untouched. */
void gv_outfile_abort(struct gv_outfile *o);

#endif
