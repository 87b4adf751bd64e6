/*
 * gvfault.c - fault injection for the whole gpuvet binary: an LD_PRELOAD
 * shim over the calls that put data on a disk, so that every write path of
 * a command can be made to meet a full disk (ENOSPC) or a failing one (EIO)
 * at each of its steps (tests/integration/test_fault_injection.py).
 *
 *   GVFAULT_MATCH       only calls on files whose path contains this text
 *                       count (the path of a descriptor from /proc/self/fd;
 *                       for rename, either name): stdout, stderr and pipes
 *                       never fail
 *   GVFAULT_AT=N        the N-th counted call fails, and every later one, as
 *                       a full or dead disk stays so (0 or unset: count only)
 *   GVFAULT_ERRNO       ENOSPC (default) or EIO
 *   GVFAULT_COUNT_FILE  at exit, the number of counted calls is written there
 *   GVFAULT_TRACE=1     each counted call is said on stderr (which step is which)
 *
 * Counted: write, pwrite(64), writev, pwritev, fsync, fdatasync,
 * ftruncate(64), fallocate(64), posix_fallocate(64), rename, renameat,
 * fflush and fclose of a stream on a matching file (fclose closes it all the
 * same, then fails).  A stdio stream's buffered writes reach the kernel
 * through libc's internal calls, which no shim sees: for stdio the steps are
 * the flush, the sync, the close and the rename, which is where gpuvet
 * checks.  Once ENOSPC has struck, statvfs of a matching path says the file
 * system is full, as it would.  Built without sanitizers (make check builds it into $(BUILD)/tests).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

static long counted, fail_at = -1;
static int fail_errno = ENOSPC, ready, trace;
static const char *match;
static pid_t first_pid;   /* the count is the first process's: forked children keep their copy */

__attribute__((constructor)) static void start(void)
{
	first_pid = getpid();
}

static void init(void)
{
	if (ready)
		return;
	ready = 1;
	const char *at = getenv("GVFAULT_AT"), *en = getenv("GVFAULT_ERRNO");
	match = getenv("GVFAULT_MATCH");
	if (at && atol(at) > 0)
		fail_at = atol(at);
	if (en && !strcmp(en, "EIO"))
		fail_errno = EIO;
	trace = getenv("GVFAULT_TRACE") != NULL;
}

static int path_matches(const char *p)
{
	return p && match && *match && strstr(p, match);
}

static int fd_matches(int fd)
{
	char link[64], path[PATH_MAX];
	init();
	if (!match || fd < 0)
		return 0;
	snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
	ssize_t n = readlink(link, path, sizeof path - 1);
	if (n <= 0)
		return 0;
	path[n] = 0;
	return path_matches(path);
}

/* 1 when this counted call must fail (errno set) */
#define step(m) step_(m, __func__)
static int step_(int matches, const char *call)
{
	if (!matches)
		return 0;
	counted++;
	if (trace)
		dprintf(2, "gvfault: step %ld: %s%s\n", counted, call, fail_at > 0 && counted >= fail_at ? " FAILS" : "");
	if (fail_at > 0 && counted >= fail_at) {
		errno = fail_errno;
		return 1;
	}
	return 0;
}

#define REAL(ret, name, ...) \
	static ret (*real)(__VA_ARGS__); \
	if (!real) \
		*(void **)&real = dlsym(RTLD_NEXT, name)

ssize_t write(int fd, const void *b, size_t n)
{
	REAL(ssize_t, "write", int, const void *, size_t);
	if (step(fd_matches(fd)))
		return -1;
	return real(fd, b, n);
}

ssize_t pwrite(int fd, const void *b, size_t n, off_t off)
{
	REAL(ssize_t, "pwrite", int, const void *, size_t, off_t);
	if (step(fd_matches(fd)))
		return -1;
	return real(fd, b, n, off);
}

ssize_t pwrite64(int fd, const void *b, size_t n, off64_t off)
{
	REAL(ssize_t, "pwrite64", int, const void *, size_t, off64_t);
	if (step(fd_matches(fd)))
		return -1;
	return real(fd, b, n, off);
}

ssize_t writev(int fd, const struct iovec *v, int n)
{
	REAL(ssize_t, "writev", int, const struct iovec *, int);
	if (step(fd_matches(fd)))
		return -1;
	return real(fd, v, n);
}

ssize_t pwritev(int fd, const struct iovec *v, int n, off_t off)
{
	REAL(ssize_t, "pwritev", int, const struct iovec *, int, off_t);
	if (step(fd_matches(fd)))
		return -1;
	return real(fd, v, n, off);
}

int fsync(int fd)
{
	REAL(int, "fsync", int);
	if (step(fd_matches(fd)))
		return -1;
	return real(fd);
}

int fdatasync(int fd)
{
	REAL(int, "fdatasync", int);
	if (step(fd_matches(fd)))
		return -1;
	return real(fd);
}

int ftruncate(int fd, off_t len)
{
	REAL(int, "ftruncate", int, off_t);
	if (step(fd_matches(fd)))
		return -1;
	return real(fd, len);
}

int ftruncate64(int fd, off64_t len)
{
	REAL(int, "ftruncate64", int, off64_t);
	if (step(fd_matches(fd)))
		return -1;
	return real(fd, len);
}

int fallocate(int fd, int mode, off_t off, off_t len)
{
	REAL(int, "fallocate", int, int, off_t, off_t);
	if (step(fd_matches(fd)))
		return -1;
	return real(fd, mode, off, len);
}

int fallocate64(int fd, int mode, off64_t off, off64_t len)
{
	REAL(int, "fallocate64", int, int, off64_t, off64_t);
	if (step(fd_matches(fd)))
		return -1;
	return real(fd, mode, off, len);
}

int posix_fallocate(int fd, off_t off, off_t len)
{
	REAL(int, "posix_fallocate", int, off_t, off_t);
	if (step(fd_matches(fd)))
		return errno;   /* returns the error, as posix_fallocate does */
	return real(fd, off, len);
}

int posix_fallocate64(int fd, off64_t off, off64_t len)
{
	REAL(int, "posix_fallocate64", int, off64_t, off64_t);
	if (step(fd_matches(fd)))
		return errno;
	return real(fd, off, len);
}

int rename(const char *from, const char *to)
{
	REAL(int, "rename", const char *, const char *);
	init();
	if (step(path_matches(from) || path_matches(to)))
		return -1;
	return real(from, to);
}

int renameat(int dfrom, const char *from, int dto, const char *to)
{
	REAL(int, "renameat", int, const char *, int, const char *);
	init();
	if (step(path_matches(from) || path_matches(to)))
		return -1;
	return real(dfrom, from, dto, to);
}

int fflush(FILE *f)
{
	REAL(int, "fflush", FILE *);
	if (f && step(fd_matches(fileno(f)))) {
		int e = errno;
		real(f);   /* what was buffered goes, as on a disk that fills while writing */
		errno = e;
		return EOF;
	}
	return real(f);
}

int fclose(FILE *f)
{
	REAL(int, "fclose", FILE *);
	if (f && step(fd_matches(fileno(f)))) {
		int e = errno;
		real(f);   /* closed all the same: a stream is gone after fclose, whatever it returns */
		errno = e;
		return EOF;
	}
	return real(f);
}

static int full_now(const char *path)
{
	init();
	return fail_errno == ENOSPC && fail_at > 0 && counted >= fail_at && path_matches(path);
}

int statvfs(const char *path, struct statvfs *b)
{
	REAL(int, "statvfs", const char *, struct statvfs *);
	int rc = real(path, b);
	if (rc == 0 && full_now(path))
		b->f_bavail = b->f_bfree = 0;
	return rc;
}

int statvfs64(const char *path, struct statvfs64 *b)
{
	REAL(int, "statvfs64", const char *, struct statvfs64 *);
	int rc = real(path, b);
	if (rc == 0 && full_now(path))
		b->f_bavail = b->f_bfree = 0;
	return rc;
}

__attribute__((destructor)) static void report_count(void)
{
	const char *out = getenv("GVFAULT_COUNT_FILE");
	if (!out || getpid() != first_pid)
		return;
	FILE *f = fopen(out, "w");
	if (!f)
		return;
	fprintf(f, "%ld\n", counted);
	/* the count file is not a matching file (never counted); the real fclose */
	int (*rc)(FILE *);
	*(void **)&rc = dlsym(RTLD_NEXT, "fclose");
	rc(f);
}
