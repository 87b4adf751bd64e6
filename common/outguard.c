/*
 * outguard.c - no output is the store (outfile.h, gv_outfile_guard).
 *
 * An output is written to a temporary beside PATH and renamed over it, so
 * what it would destroy is the file at PATH's resolved directory and name,
 * or, for a pipe or device written in place, the file PATH opens.  Both are
 * compared with the store's files: by name (the store may not exist yet:
 * `run --db X --report X`) and by device and inode (a hard link, a symlink,
 * another spelling).  Any existing SQLite database, write-ahead log or hot
 * rollback journal is refused too, by its magic (a WAL or journal of a
 * database whose writer crashed holds its committed rows), and any name
 * next to an SQLite database under its journal names (-wal, -shm,
 * -journal): gpuvet never writes an output over a database or its
 * journals, whoever's they are.
 */
#include "common/outfile.h"
#include "common/util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char *guard_db;   /* the store's path as given (--db), NULL when none */

void gv_outfile_guard(const char *db_path)
{
	free(guard_db);
	guard_db = db_path && *db_path ? gv_strdup(db_path) : NULL;
}

/* DIR resolved; a part that does not exist yet is kept as written after its resolved parent. */
static char *resolve_dir(const char *dir, int depth)
{
	char buf[PATH_MAX];
	if (realpath(dir, buf))
		return gv_strdup(buf);
	const char *slash = strrchr(dir, '/');
	if (depth > 64 || errno != ENOENT || !slash || slash == dir)
		return slash == dir ? gv_strdup(dir) : NULL;
	char *parent = gv_asprintf("%.*s", (int)(slash - dir), dir);
	char *rp = resolve_dir(parent, depth + 1);
	free(parent);
	if (!rp)
		return NULL;
	char *r = gv_asprintf("%s/%s", strcmp(rp, "/") ? rp : "", slash + 1);
	free(rp);
	return r;
}

/* Where a rename to PATH lands: its directory resolved, then its last name; NULL when unknown. */
static char *landing(const char *path)
{
	const char *slash = strrchr(path, '/');
	char *dir = slash ? gv_asprintf("%.*s", slash == path ? 1 : (int)(slash - path), path) : gv_strdup(".");
	char *rd = resolve_dir(dir, 0);
	free(dir);
	if (!rd)
		return NULL;
	char *r = gv_asprintf("%s/%s", strcmp(rd, "/") ? rd : "", slash ? slash + 1 : path);
	free(rd);
	return r;
}

/* Which of the store's files NAME is ("the store", "its -wal", ...), NULL for none. */
static const char *store_part(const char *name, const char *db)
{
	static const char *const sfx[] = { "", "-wal", "-shm", "-journal" };
	static const char *const what[] = { "the store", "the store's -wal", "the store's -shm", "the store's -journal" };
	size_t n = strlen(db);
	if (strncmp(name, db, n))
		return NULL;
	for (size_t i = 0; i < sizeof sfx / sizeof *sfx; i++)
		if (!strcmp(name + n, sfx[i]))
			return what[i];
	if (!strncmp(name + n, ".pending", 8) && (name[n + 8] == '\0' || name[n + 8] == '/'))
		return "the store's pending folder";
	return NULL;
}

static int same_file(const struct stat *a, const char *path)
{
	struct stat b;
	return stat(path, &b) == 0 && a->st_dev == b.st_dev && a->st_ino == b.st_ino;
}

/* Which of the store's files, or of its pending folder's, is the file ST; NULL for none. */
static const char *store_inode(const struct stat *st, const char *db)
{
	static const char *const sfx[] = { "", "-wal", "-shm", "-journal", ".pending" };
	static const char *const what[] = { "the store", "the store's -wal", "the store's -shm", "the store's -journal",
					    "the store's pending folder" };
	const char *hit = NULL;
	for (size_t i = 0; i < sizeof sfx / sizeof *sfx && !hit; i++) {
		char *p = gv_asprintf("%s%s", db, sfx[i]);
		if (same_file(st, p))
			hit = what[i];
		free(p);
	}
	char *pend = gv_asprintf("%s.pending", db);
	DIR *d = hit ? NULL : opendir(pend);
	struct dirent *e;
	while (d && !hit && (e = readdir(d)) != NULL) {
		struct stat k;
		if (fstatat(dirfd(d), e->d_name, &k, AT_SYMLINK_NOFOLLOW) == 0 && k.st_dev == st->st_dev &&
		    k.st_ino == st->st_ino)
			hit = "a file in the store's pending folder";
	}
	if (d)
		closedir(d);
	free(pend);
	return hit;
}

/* What the regular file PATH is by its first bytes: an SQLite database, WAL or hot rollback journal; NULL for none. */
static const char *sqlite_kind(const char *path)
{
	static const unsigned char db[16] = "SQLite format 3";   /* and its NUL */
	static const unsigned char wal0[4] = { 0x37, 0x7f, 0x06, 0x82 }, wal1[4] = { 0x37, 0x7f, 0x06, 0x83 };
	static const unsigned char journal[8] = { 0xd9, 0xd5, 0x05, 0xf9, 0x20, 0xa1, 0x63, 0xd7 };
	unsigned char head[16];
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)   /* another user's file, say: replaceable through its folder, but not known not to be one */
		return errno == EACCES ? "a file gpuvet may not read, so cannot tell from an SQLite database or journal" : NULL;
	ssize_t n = read(fd, head, sizeof head);
	close(fd);
	if (n == (ssize_t)sizeof head && !memcmp(head, db, sizeof db))
		return "an SQLite database";
	if (n >= 4 && (!memcmp(head, wal0, 4) || !memcmp(head, wal1, 4)))
		return "an SQLite write-ahead log (-wal), holding a database's committed rows";
	if (n >= 8 && !memcmp(head, journal, 8))
		return "an SQLite rollback journal, needed to repair a database";
	return NULL;
}

/* Whether PATH is named as a journal file (-wal, -shm, -journal) of an existing SQLite database: its name. */
static const char *beside_database(const char *path)
{
	static const char *const sfx[] = { "-wal", "-shm", "-journal" };
	size_t n = strlen(path);
	for (size_t i = 0; i < sizeof sfx / sizeof *sfx; i++) {
		size_t k = strlen(sfx[i]);
		if (n <= k || strcmp(path + n - k, sfx[i]))
			continue;
		char *db = gv_asprintf("%.*s", (int)(n - k), path);
		struct stat st;
		const char *kind = stat(db, &st) == 0 && S_ISREG(st.st_mode) ? sqlite_kind(db) : NULL;
		free(db);
		/* a database, or a file that cannot be told from one */
		if (kind && (!strcmp(kind, "an SQLite database") || strncmp(kind, "an SQLite ", 10)))
			return sfx[i];
	}
	return NULL;
}

/* Which of the store's files PATH resolves to, by name or by inode; NULL for none. */
static const char *resolves_to_store(const char *path, const struct stat *st, int exists)
{
	char *db = landing(guard_db), *at = landing(path), real[PATH_MAX];
	const char *hit = db && at ? store_part(at, db) : NULL;
	if (!hit && db && exists && realpath(path, real))
		hit = store_part(real, db);
	if (!hit && exists)
		hit = store_inode(st, guard_db);
	free(db);
	free(at);
	return hit;
}

int gv_outfile_refused(const char *path, char *err, size_t errlen)
{
	struct stat st;
	int exists = stat(path, &st) == 0;
	const char *hit = guard_db ? resolves_to_store(path, &st, exists) : NULL;
	if (hit) {
		snprintf(err, errlen, "refusing to write '%s': it is %s '%s' (name another file)", path,
			 hit, guard_db);
		return -1;
	}
	const char *kind = exists && S_ISREG(st.st_mode) ? sqlite_kind(path) : NULL;
	if (kind) {
		snprintf(err, errlen, "refusing to write '%s': it is %s, never replaced by an output", path, kind);
		return -1;
	}
	const char *sfx = beside_database(path);
	if (sfx) {
		snprintf(err, errlen,
			 "refusing to write '%s': it is the %s name of the SQLite database beside it, never an output "
			 "(name another file)", path, sfx);
		return -1;
	}
	return 0;
}
