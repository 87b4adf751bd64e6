/*
 * blockdev.c - block-device safety checks and NVMe mount discovery (see
 * blockdev.h).  A device is refused when:
 *   - it or one of its partitions appears (by major:minor) in mountinfo,
 *   - it or one of its partitions has holders (/sys/dev/block/M:m/holders:
 *     device-mapper, md RAID, LVM, bcache),
 *   - it or one of its partitions is active swap (/proc/swaps).
 */
#include "platform/blockdev.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#define BLOCKDEV_MAX_PARTS 128

struct blockdev_id { unsigned maj, min; char name[64]; };

static void bd_reason(char *r, size_t n, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void bd_reason(char *r, size_t n, const char *fmt, ...)
{
	if (!r || !n)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(r, n, fmt, ap);
	va_end(ap);
}

/* Copies with truncation (names from /sys are short; never an overflow). */
static void bd_copy(char *dst, size_t size, const char *src)
{
	size_t n = strlen(src);
	if (n >= size)
		n = size - 1;
	memcpy(dst, src, n);
	dst[n] = 0;
}

void blockdev_unescape(char *s)
{
	char *w = s;
	for (char *p = s; *p; p++) {
		if (p[0] == '\\' && p[1] >= '0' && p[1] <= '3' && p[2] >= '0' && p[2] <= '7' &&
		    p[3] >= '0' && p[3] <= '7') {
			*w++ = (char)((p[1] - '0') * 64 + (p[2] - '0') * 8 + (p[3] - '0'));
			p += 3;
		} else {
			*w++ = *p;
		}
	}
	*w = 0;
}

/* One mountinfo line: maj:min, mount point (unescaped), read-only flag. */
struct bd_mount { unsigned maj, min; char point[PATH_MAX]; int ro; };

static int bd_parse_mount(char *line, struct bd_mount *m)
{
	char *save = NULL;
	char *f[6];
	char *tok = strtok_r(line, " \n", &save);
	for (int i = 0; i < 6; i++) {
		if (!tok)
			return -1;
		f[i] = tok;
		tok = strtok_r(NULL, " \n", &save);
	}
	if (sscanf(f[2], "%u:%u", &m->maj, &m->min) != 2)
		return -1;
	bd_copy(m->point, sizeof m->point, f[4]);
	blockdev_unescape(m->point);
	/* per-mount options: "rw,relatime" or "ro,..." */
	m->ro = !strncmp(f[5], "ro", 2) && (f[5][2] == 0 || f[5][2] == ',');
	return 0;
}

/* Mount point of maj:min into point, 1 if mounted, 0 if not, -1 unreadable. */
static int bd_mounted(const char *mountinfo, unsigned maj, unsigned min, char *point,
		      size_t plen)
{
	FILE *f = fopen(mountinfo, "re");
	if (!f)
		return -1;
	char *line = NULL;
	size_t cap = 0;
	int found = 0;
	struct bd_mount *m = malloc(sizeof *m);
	if (!m) {
		fclose(f);
		return -1;
	}
	while (!found && getline(&line, &cap, f) > 0) {
		if (bd_parse_mount(line, m) == 0 && m->maj == maj && m->min == min) {
			snprintf(point, plen, "%s", m->point);
			found = 1;
		}
	}
	free(m);
	free(line);
	fclose(f);
	return found;
}

/* 1 if a device with this maj:min is listed in /proc/swaps. */
static int bd_swap(const char *swaps, unsigned maj, unsigned min)
{
	FILE *f = fopen(swaps, "re");
	if (!f)
		return 0;
	char *line = NULL;
	size_t cap = 0;
	int found = 0, first = 1;
	while (!found && getline(&line, &cap, f) > 0) {
		if (first) { /* header line */
			first = 0;
			continue;
		}
		char *save = NULL, *name = strtok_r(line, " \t\n", &save);
		if (!name)
			continue;
		blockdev_unescape(name);
		struct stat st;
		if (stat(name, &st) == 0 && S_ISBLK(st.st_mode) && major(st.st_rdev) == maj &&
		    minor(st.st_rdev) == min)
			found = 1;
	}
	free(line);
	fclose(f);
	return found;
}

/* Names in /sys/dev/block/M:m/holders, comma-separated into out; count. */
static int bd_holders(unsigned maj, unsigned min, char *out, size_t olen)
{
	char p[96];
	snprintf(p, sizeof p, "/sys/dev/block/%u:%u/holders", maj, min);
	DIR *d = opendir(p);
	if (!d)
		return 0;
	int n = 0;
	struct dirent *e;
	out[0] = 0;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		size_t l = strlen(out);
		if (l + strlen(e->d_name) + 3 < olen) {
			if (n)
				memcpy(out + l, ", ", 3), l += 2;
			bd_copy(out + l, olen - l, e->d_name);
		}
		n++;
	}
	closedir(d);
	return n;
}

/* The device itself and its partitions (from sysfs); returns the count. */
static int bd_family(unsigned maj, unsigned min, struct blockdev_id *ids, int max)
{
	int n = 0;
	ids[n].maj = maj;
	ids[n].min = min;
	snprintf(ids[n].name, sizeof ids[n].name, "%u:%u", maj, min);
	n++;
	char dir[96];
	snprintf(dir, sizeof dir, "/sys/dev/block/%u:%u", maj, min);
	char real[PATH_MAX];
	if (!realpath(dir, real))
		return n;
	const char *base = strrchr(real, '/');
	bd_copy(ids[0].name, sizeof ids[0].name, base ? base + 1 : real);
	DIR *d = opendir(real);
	if (!d)
		return n;
	struct dirent *e;
	while ((e = readdir(d)) && n < max) {
		if (e->d_name[0] == '.')
			continue;
		char pf[PATH_MAX];
		if (snprintf(pf, sizeof pf, "%s/%s/partition", real, e->d_name) >= (int)sizeof pf ||
		    access(pf, F_OK))
			continue;
		if (snprintf(pf, sizeof pf, "%s/%s/dev", real, e->d_name) >= (int)sizeof pf)
			continue;
		FILE *f = fopen(pf, "re");
		if (!f)
			continue;
		unsigned a, b;
		if (fscanf(f, "%u:%u", &a, &b) == 2) {
			ids[n].maj = a;
			ids[n].min = b;
			bd_copy(ids[n].name, sizeof ids[n].name, e->d_name);
			n++;
		}
		fclose(f);
	}
	closedir(d);
	return n;
}

int blockdev_check_unused(const char *path, const char *mountinfo, const char *swaps,
			  char *reason, size_t reason_len)
{
	if (!mountinfo)
		mountinfo = "/proc/self/mountinfo";
	if (!swaps)
		swaps = "/proc/swaps";
	struct stat st;
	if (stat(path, &st)) {
		bd_reason(reason, reason_len, "cannot use block device '%s': %s", path,
			  strerror(errno));
		return -1;
	}
	if (!S_ISBLK(st.st_mode)) {
		bd_reason(reason, reason_len, "'%s' is not a block device", path);
		return -1;
	}
	struct blockdev_id *ids = calloc(BLOCKDEV_MAX_PARTS, sizeof *ids);
	if (!ids) {
		bd_reason(reason, reason_len, "out of memory");
		return -1;
	}
	int n = bd_family(major(st.st_rdev), minor(st.st_rdev), ids, BLOCKDEV_MAX_PARTS);
	int rc = 0;
	char point[PATH_MAX], holders[256];
	for (int i = 0; i < n && !rc; i++) {
		int m = bd_mounted(mountinfo, ids[i].maj, ids[i].min, point, sizeof point);
		if (m < 0) {
			bd_reason(reason, reason_len, "cannot read '%s' to check that '%s' is unused",
				  mountinfo, path);
			rc = -1;
		} else if (m && i == 0) {
			bd_reason(reason, reason_len, "'%s' is mounted at %s", path, point);
			rc = -1;
		} else if (m) {
			bd_reason(reason, reason_len, "partition %s of '%s' is mounted at %s",
				  ids[i].name, path, point);
			rc = -1;
		} else if (bd_holders(ids[i].maj, ids[i].min, holders, sizeof holders)) {
			if (i == 0)
				bd_reason(reason, reason_len, "'%s' has holders: %s", path, holders);
			else
				bd_reason(reason, reason_len, "partition %s of '%s' has holders: %s",
					  ids[i].name, path, holders);
			rc = -1;
		} else if (bd_swap(swaps, ids[i].maj, ids[i].min)) {
			if (i == 0)
				bd_reason(reason, reason_len, "'%s' is in use as swap", path);
			else
				bd_reason(reason, reason_len, "partition %s of '%s' is in use as swap",
					  ids[i].name, path);
			rc = -1;
		}
	}
	free(ids);
	return rc;
}

int blockdev_model_is_network(const char *model)
{
	/* NVMe-attached network volumes: AWS EBS on Nitro, GCP Persistent Disk */
	return model && (strstr(model, "Elastic Block Store") || strstr(model, "nvme_card-pd"));
}

/* The model of the NVMe controller in a sysfs device path (".../nvme/nvme0/..."). */
static int bd_nvme_model(const char *real, char *model, size_t len)
{
	const char *c = strstr(real, "/nvme/nvme");
	if (!c)
		return -1;
	size_t n = (size_t)(c - real) + 6;
	n += strcspn(real + n, "/");
	char p[PATH_MAX];
	if (snprintf(p, sizeof p, "%.*s/model", (int)n, real) >= (int)sizeof p)
		return -1;
	FILE *f = fopen(p, "re");
	if (!f)
		return -1;
	int ok = fgets(model, (int)len, f) != NULL;
	fclose(f);
	if (!ok)
		return -1;
	model[strcspn(model, "\n")] = 0;
	return 0;
}

/* Local NVMe if the sysfs path of the device runs through an nvme controller
 * that is not a network volume. */
static int bd_is_nvme_path(const char *sysdir, int depth)
{
	char real[PATH_MAX];
	if (depth > 4 || !realpath(sysdir, real))
		return 0;
	if (strstr(real, "/nvme")) {
		char model[256];
		return !(bd_nvme_model(real, model, sizeof model) == 0 &&
			 blockdev_model_is_network(model));
	}
	/* dm / md: NVMe when every slave is */
	char sl[PATH_MAX];
	if (snprintf(sl, sizeof sl, "%s/slaves", real) >= (int)sizeof sl)
		return 0;
	DIR *d = opendir(sl);
	if (!d)
		return 0;
	int n = 0, all = 1;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		char p[PATH_MAX];
		if (snprintf(p, sizeof p, "%s/%s", sl, e->d_name) >= (int)sizeof p)
			continue;
		n++;
		if (!bd_is_nvme_path(p, depth + 1))
			all = 0;
	}
	closedir(d);
	return n > 0 && all;
}

int blockdev_is_nvme(unsigned maj, unsigned min)
{
	if (maj == 0)
		return 0;
	char p[96];
	snprintf(p, sizeof p, "/sys/dev/block/%u:%u", maj, min);
	return bd_is_nvme_path(p, 0);
}

char *blockdev_largest_nvme_mount(const char *mountinfo)
{
	FILE *f = fopen(mountinfo ? mountinfo : "/proc/self/mountinfo", "re");
	if (!f)
		return NULL;
	char *line = NULL, *best = NULL;
	size_t cap = 0;
	double best_size = 0;
	struct bd_mount *m = malloc(sizeof *m);
	while (m && getline(&line, &cap, f) > 0) {
		if (bd_parse_mount(line, m) || m->ro || !blockdev_is_nvme(m->maj, m->min))
			continue;
		struct statvfs sv;
		if (statvfs(m->point, &sv) || (sv.f_flag & ST_RDONLY) || access(m->point, W_OK))
			continue;
		double size = (double)sv.f_blocks * (double)sv.f_frsize;
		/* bind mounts of one filesystem: keep the shortest path */
		if (size > best_size || (size == best_size && best &&
					 strlen(m->point) < strlen(best))) {
			char *dup = strdup(m->point);
			if (!dup)
				break;
			free(best);
			best = dup;
			best_size = size;
		}
	}
	free(m);
	free(line);
	fclose(f);
	return best;
}
