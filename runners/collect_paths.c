/* collect_paths.c - see collect_paths.h. */
#include "runners/collect_paths.h"
#include "common/util.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define SNIFF_BYTES 65536
#define WALK_DEPTH_MAX 16

/* path to import, or (why not NULL) an entry named with why it is skipped, in its place */
static void add_why(struct collect_paths *p, char *path, const char *why)
{
	if (p->n == p->cap) {
		p->cap = p->cap ? 2 * p->cap : 16;
		p->path = gv_realloc(p->path, p->cap * sizeof *p->path);
		p->why = gv_realloc(p->why, p->cap * sizeof *p->why);
	}
	p->why[p->n] = why;
	p->path[p->n++] = path;
}

static void add(struct collect_paths *p, char *path)
{
	add_why(p, path, NULL);
}

/* Why a directory's entry that is no regular file and no folder walked is skipped, in words. */
static const char *not_a_file(const char *path, const struct stat *st, int found, int depth)
{
	struct stat l;
	if (!found)
		return lstat(path, &l) == 0 && S_ISLNK(l.st_mode) ? "a link to nothing" : "cannot be read";
	if (S_ISDIR(st->st_mode))
		return depth >= WALK_DEPTH_MAX ? "a folder deeper than 16 levels" : NULL;
	if (S_ISFIFO(st->st_mode))
		return "a FIFO, not a file";
	if (S_ISCHR(st->st_mode) || S_ISBLK(st->st_mode))
		return lstat(path, &l) == 0 && S_ISLNK(l.st_mode) ? "a link to a device, not a file" : "a device, not a file";
	if (S_ISSOCK(st->st_mode))
		return "a socket, not a file";
	return S_ISREG(st->st_mode) ? NULL : "not a regular file";
}

/* dir's regular files, in name order, those of its sub-directories in their place. */
static int walk(const char *dir, struct collect_paths *p, int depth)
{
	struct dirent **ents;
	int n = scandir(dir, &ents, NULL, alphasort), rc = 0;
	if (n < 0) {
		gv_err("cannot import '%s': %s", dir, strerror(errno));
		return -1;
	}
	for (int i = 0; i < n; i++) {
		const char *name = ents[i]->d_name;
		struct stat st;
		char *path = NULL;
		if (!rc && strcmp(name, ".") && strcmp(name, "..")) {
			size_t len = strlen(dir);
			path = gv_asprintf("%s%s%s", dir, len && dir[len - 1] == '/' ? "" : "/", name);
			int found = stat(path, &st) == 0;
			const char *why = name[0] == '.' ? "a hidden entry (its name starts with '.')" :
					  not_a_file(path, &st, found, depth);
			if (why) {   /* every entry not read is named, with why (never a FIFO waited on) */
				add_why(p, path, why);
				path = NULL;
			} else if (S_ISDIR(st.st_mode)) {
				rc = walk(path, p, depth + 1);
			} else {
				add(p, path);
				path = NULL;
			}
		}
		free(path);
		free(ents[i]);
	}
	free(ents);
	return rc;
}

int collect_paths_expand(int n, char **args, struct collect_paths *out)
{
	memset(out, 0, sizeof *out);
	for (int i = 0; i < n; i++) {
		struct stat st;
		if (strcmp(args[i], "-") && stat(args[i], &st) == 0 && S_ISDIR(st.st_mode)) {
			out->dirs++;
			if (walk(args[i], out, 0)) {
				collect_paths_free(out);
				return -1;
			}
		} else {
			add(out, gv_strdup(args[i]));   /* a missing file is said by the import, in its turn */
		}
	}
	return 0;
}

void collect_paths_free(struct collect_paths *p)
{
	for (size_t i = 0; i < p->n; i++)
		free(p->path[i]);
	free(p->path);
	free(p->why);
	memset(p, 0, sizeof *p);
}

int collect_paths_is_fingerprint(const char *path, char *why, size_t size)
{
	static const char mark[] = "\"gpuvet.fingerprint/";
	FILE *f = fopen(path, "re");
	char *buf;
	size_t got;
	int yes;
	if (!f)
		return 1;   /* the import says why it cannot be read */
	buf = gv_malloc(SNIFF_BYTES + 1);
	got = fread(buf, 1, SNIFF_BYTES, f);
	fclose(f);
	buf[got] = 0;
	yes = memmem(buf, got, mark, sizeof mark - 1) != NULL;
	if (!yes && !memchr(buf, '{', got))
		snprintf(why, size, "not JSON");
	else if (!yes)
		snprintf(why, size, "not a gpuvet fingerprint (no \"schema\": \"gpuvet.fingerprint/N\")");
	free(buf);
	return yes;
}
