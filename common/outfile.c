/* outfile.c - see outfile.h */
#include "common/outfile.h"
#include "common/tmpguard.h"
#include "common/util.h"

#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void outfile_free(struct gv_outfile *o)
{
	free(o->path);
	free(o->tmp);
	o->path = o->tmp = NULL;
	o->f = NULL;
}

static int open_output(struct gv_outfile *o, const char *path, int guarded, char *err, size_t errlen)
{
	struct stat st;
	memset(o, 0, sizeof *o);
	if (!path || !*path) {
		snprintf(err, errlen, "no output file named");
		return -1;
	}
	if (guarded && gv_outfile_refused(path, err, errlen))
		return -1;
	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
		if (!S_ISFIFO(st.st_mode) && !S_ISCHR(st.st_mode)) {
			snprintf(err, errlen, "cannot write '%s': not a regular file, a pipe or a character device", path);
			return -1;
		}
		/* a pipe or a device: written in place, never replaced by a file */
		o->f = fopen(path, "we");
		if (!o->f) {
			snprintf(err, errlen, "cannot write '%s': %s", path, strerror(errno));
			return -1;
		}
		o->path = gv_strdup(path);
		return 0;
	}
	/* beside PATH; a name already near NAME_MAX gets a short temporary name instead */
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	if (strlen(base) + sizeof ".tmp.XXXXXX" - 1 > NAME_MAX)
		o->tmp = gv_asprintf("%.*s.gvtmp.XXXXXX", (int)(base - path), path);
	else
		o->tmp = gv_asprintf("%s.tmp.XXXXXX", path);
	int fd = mkstemp(o->tmp);
	if (fd < 0) {
		/* the name the user gave, and its directory: the temporary's name means nothing to them */
		int e = errno, dlen = base == path ? 1 : base - path > 1 ? (int)(base - path - 1) : 1;
		snprintf(err, errlen, "cannot write '%s': %.*s: %s", path, dlen, base == path ? "." : path, strerror(e));
		outfile_free(o);
		return -1;
	}
	tmpguard_set(o->tmp);
	o->f = fdopen(fd, "w");
	if (!o->f) {
		snprintf(err, errlen, "cannot write '%s': %s", o->tmp, strerror(errno));
		close(fd);
		unlink(o->tmp);
		tmpguard_clear();
		outfile_free(o);
		return -1;
	}
	o->path = gv_strdup(path);
	return 0;
}

int gv_outfile_open(struct gv_outfile *o, const char *path, char *err, size_t errlen)
{
	return open_output(o, path, 1, err, errlen);
}

int gv_outfile_open_own(struct gv_outfile *o, const char *path, char *err, size_t errlen)
{
	return open_output(o, path, 0, err, errlen);
}

int gv_outfile_check(const char *path, char *err, size_t errlen)
{
	struct stat st;
	if (!path || !*path) {
		snprintf(err, errlen, "no output file named");
		return -1;
	}
	if (gv_outfile_refused(path, err, errlen))
		return -1;
	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
		if ((S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode)) && access(path, W_OK) == 0)
			return 0;
		if (S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode)) {
			snprintf(err, errlen, "cannot write '%s': %s", path, strerror(errno));
			return -1;
		}
		snprintf(err, errlen, "cannot write '%s': not a regular file, a pipe or a character device", path);
		return -1;
	}
	const char *base = strrchr(path, '/');
	if (strlen(base ? base + 1 : path) > NAME_MAX) {
		snprintf(err, errlen, "cannot write '%s': %s", path, strerror(ENAMETOOLONG));
		return -1;
	}
	char *dir = base ? gv_asprintf("%.*s", base == path ? 1 : (int)(base - path), path) : gv_strdup(".");
	int rc = access(dir, W_OK | X_OK);
	if (rc)
		snprintf(err, errlen, "cannot write '%s': %s: %s", path, dir, strerror(errno));
	free(dir);
	return rc ? -1 : 0;
}

int gv_outfile_commit(struct gv_outfile *o, char *err, size_t errlen)
{
	int rc = 0;
	errno = 0;
	if (fflush(o->f) || (o->tmp && fsync(fileno(o->f)))) {
		snprintf(err, errlen, "cannot write '%s': %s", o->path, strerror(errno ? errno : EIO));
		rc = -1;
	}
	if (fclose(o->f) && rc == 0) {
		snprintf(err, errlen, "cannot write '%s': %s", o->path, strerror(errno ? errno : EIO));
		rc = -1;
	}
	if (o->tmp) {
		/* mkstemp makes 0600; an output is meant to be read: the umask decides, as for any new file */
		mode_t um = umask(0);
		umask(um);
		if (rc == 0 && chmod(o->tmp, 0666 & ~um))
			gv_debug("cannot set the mode of '%s': %s", o->tmp, strerror(errno));
		if (rc == 0 && rename(o->tmp, o->path)) {
			snprintf(err, errlen, "cannot write '%s': %s", o->path, strerror(errno));
			rc = -1;
		}
		if (rc)
			unlink(o->tmp);
		tmpguard_clear();
	}
	outfile_free(o);
	return rc;
}

void gv_outfile_abort(struct gv_outfile *o)
{
	if (o->f)
		fclose(o->f);
	if (o->tmp) {
		unlink(o->tmp);
		tmpguard_clear();
	}
	outfile_free(o);
}
