/*
 * nvme.c - local NVMe throughput through the real fio.
 *
 * Three fio jobs, each one fio process with --output-format=json, parsed by
 * benches/fio_json.c:
 *
 *   seqwrite  rw=write     bs=1M  numjobs=J iodepth=Q  direct=1  -> nvme.seqwrite.gbps
 *   seqread   rw=read      bs=1M  numjobs=J iodepth=Q  direct=1  -> nvme.seqread.gbps
 *   randread  rw=randread  bs=4k  numjobs=J iodepth=2Q direct=1  -> nvme.randread.kiops,
 *                                                     nvme.randread.p50_us, .p99_us (clat)
 *
 * Formulas are fio's own: GB/s = bw_bytes / 1e9 (group_reporting sums the
 * jobs), kIOPS = iops / 1e3, latencies are the clat_ns percentiles / 1e3.
 * Each job is time based (--runtime) over its own region of one file
 * (--offset_increment), so J jobs never touch the same blocks.
 *
 * The write job uses its own file, removed before the reads; the read jobs
 * use a second file that fio lays out with real writes first, so reads never
 * hit unwritten (fallocated) extents that a filesystem answers with zeros.
 *
 * Target: --nvme-dir, else the largest writable mount on local NVMe (NVMe
 * network volumes such as EBS on Nitro do not count), else $TMPDIR (/tmp).  Work files live in a fresh gpuvet-fio-XXXXXX directory
 * that is removed afterwards, on failure and on SIGTERM/SIGINT too.  A block
 * device is written only with --nvme-device and --nvme-allow-destructive, and
 * only when it is not mounted, has no mounted partitions, no holders and is
 * not swap (platform/blockdev.c).
 *
 * Engine: io_uring; when fio reports that io_uring cannot be used (seccomp,
 * old kernel, fio built without it) the job is rerun with libaio and the
 * remaining jobs use libaio.
 *
 * Which fio: the one a release tarball or .deb carries, libexec/fio beside
 * gpuvet's bin/ (found from /proc/self/exe, so a link to gpuvet or a copy of
 * the tree anywhere finds its own), else the first fio on $PATH.  The bench's
 * config names it (path, carried or PATH) and, once it has answered, the
 * version it says it is.
 */
#include "benches/bench.h"
#include "platform/blockdev.h"
#include "benches/fio_json.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define NVME_MAX_OUTPUT (4u << 20)   /* fio's JSON is a few KiB; cap what we keep */

/* What each profile runs. */
struct nvme_plan {
	long size_mb;     /* per job region */
	int jobs;         /* numjobs */
	int qd;           /* iodepth for the 1 MiB jobs; random reads use 2x */
	int runtime_s;    /* per fio job */
	int ramp_s;
};

static struct nvme_plan nvme_plan_for(enum bench_profile p)
{
	switch (p) {
	case PROFILE_FULL:
		return (struct nvme_plan){ .size_mb = 4096, .jobs = 4, .qd = 32, .runtime_s = 60,
					   .ramp_s = 5 };
	case PROFILE_STANDARD:
		return (struct nvme_plan){ .size_mb = 1024, .jobs = 4, .qd = 32, .runtime_s = 15,
					   .ramp_s = 2 };
	case PROFILE_QUICK:
	default:
		return (struct nvme_plan){ .size_mb = 64, .jobs = 4, .qd = 16, .runtime_s = 3,
					   .ramp_s = 0 };
	}
}

/* Layout of the read file at a pessimistic 100 MB/s, plus slack for fio's start-up. */
static int nvme_layout_s(const struct nvme_plan *pl)
{
	return (int)(pl->size_mb * pl->jobs / 100) + 10;
}

static int nvme_deadline(const struct bench_config *cfg)
{
	struct nvme_plan pl = nvme_plan_for(cfg->profile);
	/* three jobs, a possible io_uring->libaio rerun of the first, layout, slack */
	return 4 * (pl.runtime_s + pl.ramp_s + 15) + nvme_layout_s(&pl) + 20;
}

/* ---- cleanup, also from a signal handler (only async-signal-safe calls) ---- */

static char nvme_workdir[PATH_MAX];
static char nvme_files[2][PATH_MAX];
static volatile sig_atomic_t nvme_child = 0;

static void nvme_cleanup_files(void)
{
	for (int i = 0; i < 2; i++)
		if (nvme_files[i][0])
			unlink(nvme_files[i]);
	if (nvme_workdir[0])
		rmdir(nvme_workdir);
}

static void nvme_on_signal(int sig)
{
	if (nvme_child > 0) {
		kill(-(pid_t)nvme_child, SIGKILL);
		kill((pid_t)nvme_child, SIGKILL);
	}
	nvme_cleanup_files();
	signal(sig, SIG_DFL);
	raise(sig);
}

/* Removes everything fio may have left in the work directory, then it. */
static void nvme_cleanup(void)
{
	if (nvme_workdir[0]) {
		DIR *d = opendir(nvme_workdir);
		if (d) {
			struct dirent *e;
			while ((e = readdir(d))) {
				if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
					continue;
				char p[PATH_MAX];
				if (snprintf(p, sizeof p, "%s/%s", nvme_workdir, e->d_name) <
				    (int)sizeof p)
					unlink(p);
			}
			closedir(d);
		}
	}
	nvme_cleanup_files();
	nvme_workdir[0] = 0;
	nvme_files[0][0] = nvme_files[1][0] = 0;
}

/* strerror with a lowercase first letter, for messages in the project's style. */
static const char *nvme_strerror(int e)
{
	static char buf[128];
	snprintf(buf, sizeof buf, "%s", strerror(e));
	buf[0] = (char)tolower((unsigned char)buf[0]);
	return buf;
}

/* ---- finding and running fio ---- */

/* The fio this gpuvet carries, libexec/fio beside its bin/ (packaging/dist.sh), into out; 0 or -1. */
static int nvme_carried_fio(char *out, size_t len)
{
	char exe[PATH_MAX], path[PATH_MAX + 32];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (n <= 0)
		return -1;
	exe[n] = '\0';
	char *slash = strrchr(exe, '/');
	if (!slash)
		return -1;
	*slash = '\0';
	snprintf(path, sizeof path, "%s/../libexec/fio", exe);
	struct stat st;
	char real[PATH_MAX];
	if (stat(path, &st) || !S_ISREG(st.st_mode) || access(path, X_OK) || !realpath(path, real) ||
	    strlen(real) >= len)
		return -1;
	memcpy(out, real, strlen(real) + 1);
	return 0;
}

/* Full path of an executable `name` on $PATH into out; 0 or -1. */
static int nvme_which(const char *name, char *out, size_t len)
{
	const char *path = getenv("PATH");
	if (!path || !*path)
		return -1;
	char *copy = strdup(path), *save = NULL;
	if (!copy)
		return -1;
	int rc = -1;
	for (char *d = strtok_r(copy, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
		if (snprintf(out, len, "%s/%s", *d ? d : ".", name) >= (int)len)
			continue;
		struct stat st;
		if (stat(out, &st) == 0 && S_ISREG(st.st_mode) && access(out, X_OK) == 0) {
			rc = 0;
			break;
		}
	}
	free(copy);
	return rc;
}

struct nvme_buf { char *p; size_t n, cap; };

static void nvme_buf_add(struct nvme_buf *b, const char *data, size_t n)
{
	if (b->n + n > NVME_MAX_OUTPUT)
		n = NVME_MAX_OUTPUT - b->n;
	if (!n)
		return;
	if (b->n + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 8192;
		while (cap < b->n + n + 1)
			cap *= 2;
		char *p = realloc(b->p, cap);
		if (!p)
			abort();
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->n, data, n);
	b->n += n;
	b->p[b->n] = 0;
}

struct nvme_proc {
	struct nvme_buf out, err;
	int status;      /* waitpid status */
	int timed_out;
	int spawn_errno;
};

/*
 * Runs argv (argv[0] the full path), capturing stdout and stderr, killing
 * it after timeout_s.  0 when it ran (whatever its exit status), -1 when it
 * could not be started.
 */
static int nvme_spawn(char *const argv[], double timeout_s, struct nvme_proc *pr)
{
	memset(pr, 0, sizeof *pr);
	int po[2], pe[2], px[2];
	if (pipe2(po, O_CLOEXEC))
		return pr->spawn_errno = errno, -1;
	if (pipe2(pe, O_CLOEXEC)) {
		pr->spawn_errno = errno;
		close(po[0]);
		close(po[1]);
		return -1;
	}
	if (pipe2(px, O_CLOEXEC)) { /* carries exec's errno back */
		pr->spawn_errno = errno;
		close(po[0]); close(po[1]); close(pe[0]); close(pe[1]);
		return -1;
	}
	pid_t bench_pid = getpid();
	pid_t pid = fork();
	if (pid < 0) {
		pr->spawn_errno = errno;
		close(po[0]); close(po[1]); close(pe[0]); close(pe[1]); close(px[0]); close(px[1]);
		return -1;
	}
	if (pid == 0) {
		/*
		 * fio in a group of its own, so a timeout kills its job processes
		 * too; and told (SIGTERM, which fio turns into stopping its jobs)
		 * when this bench process dies, e.g. killed at the harness deadline.
		 */
		setpgid(0, 0);
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		if (getppid() != bench_pid) /* the bench died before the line above */
			_exit(127);
		int nul = open("/dev/null", O_RDONLY);
		if (nul >= 0)
			dup2(nul, STDIN_FILENO);
		dup2(po[1], STDOUT_FILENO);
		dup2(pe[1], STDERR_FILENO);
		signal(SIGTERM, SIG_DFL);
		signal(SIGINT, SIG_DFL);
		execv(argv[0], argv);
		int e = errno;
		ssize_t w = write(px[1], &e, sizeof e);
		(void)w;
		_exit(127);
	}
	setpgid(pid, pid); /* as the child does: no window where kill(-pid) misses */
	nvme_child = pid;
	close(po[1]);
	close(pe[1]);
	close(px[1]);
	int e = 0;
	ssize_t r = read(px[0], &e, sizeof e);
	close(px[0]);
	double end = bench_now() + timeout_s;
	struct pollfd fds[2] = { { .fd = po[0], .events = POLLIN }, { .fd = pe[0], .events = POLLIN } };
	int open_fds = 2;
	char buf[16384];
	while (open_fds > 0) {
		double left = end - bench_now();
		if (left <= 0) {
			pr->timed_out = 1;
			kill(-pid, SIGKILL);
			kill(pid, SIGKILL);
			break;
		}
		int n = poll(fds, 2, (int)(left * 1000) + 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			break;
		for (int i = 0; i < 2; i++) {
			if (fds[i].fd < 0 || !fds[i].revents)
				continue;
			ssize_t got = read(fds[i].fd, buf, sizeof buf);
			if (got > 0) {
				nvme_buf_add(i ? &pr->err : &pr->out, buf, (size_t)got);
			} else if (got == 0 || (errno != EINTR && errno != EAGAIN)) {
				close(fds[i].fd);
				fds[i].fd = -1;
				open_fds--;
			}
		}
	}
	for (int i = 0; i < 2; i++)
		if (fds[i].fd >= 0)
			close(fds[i].fd);
	while (waitpid(pid, &pr->status, 0) < 0 && errno == EINTR)
		;
	nvme_child = 0;
	if (r == (ssize_t)sizeof e && e) {
		pr->spawn_errno = e;
		return -1;
	}
	return 0;
}

static void nvme_proc_free(struct nvme_proc *pr)
{
	free(pr->out.p);
	free(pr->err.p);
	memset(pr, 0, sizeof *pr);
}

/* First non-empty line of text into out (fio's own message), trimmed. */
static void nvme_first_line(const char *text, char *out, size_t len)
{
	out[0] = 0;
	if (!text)
		return;
	while (*text) {
		while (*text == '\n' || *text == '\r' || *text == ' ' || *text == '\t')
			text++;
		size_t n = strcspn(text, "\r\n");
		if (n) {
			if (n >= len)
				n = len - 1;
			memcpy(out, text, n);
			out[n] = 0;
			return;
		}
	}
}

/* ---- one fio job ---- */

struct nvme_job {
	const char *name;      /* seqwrite | seqread | randread */
	const char *rw;        /* fio rw= */
	const char *bs;
	int iodepth;
	const char *file;
};

struct nvme_run {
	char fio[PATH_MAX];
	const char *fio_source;   /* "carried" (libexec/fio beside gpuvet) or "PATH" */
	char version[32];
	const char *engine;    /* io_uring, then maybe libaio */
	struct nvme_plan plan;
	int is_device;
	double deadline;       /* bench_now() by which everything must end */
};

/* True when fio's complaint is about io_uring itself (then libaio may work). */
static int nvme_io_uring_unusable(const struct nvme_proc *pr)
{
	const char *e = pr->err.p ? pr->err.p : "";
	const char *o = pr->out.p ? pr->out.p : "";
	return strstr(e, "io_uring") || strstr(o, "io_uring") ||
	       strstr(e, "failed to load engine") || strstr(o, "failed to load engine");
}

/*
 * Runs one job; 0 with res filled, -1 with a reason already reported
 * (why: a message naming fio's own words).
 */
static int nvme_fio_job(struct bench_ctx *ctx, struct nvme_run *nr, const struct nvme_job *job,
			struct fio_result *res, char *why, size_t whylen)
{
	char a_name[64], a_rw[64], a_bs[32], a_depth[32], a_jobs[32], a_size[48], a_inc[48],
	     a_runtime[32], a_ramp[32], a_engine[48], a_file[PATH_MAX + 16];
	snprintf(a_name, sizeof a_name, "--name=%s", job->name);
	snprintf(a_rw, sizeof a_rw, "--rw=%s", job->rw);
	snprintf(a_bs, sizeof a_bs, "--bs=%s", job->bs);
	snprintf(a_depth, sizeof a_depth, "--iodepth=%d", job->iodepth);
	snprintf(a_jobs, sizeof a_jobs, "--numjobs=%d", nr->plan.jobs);
	snprintf(a_size, sizeof a_size, "--size=%ldM", nr->plan.size_mb);
	snprintf(a_inc, sizeof a_inc, "--offset_increment=%ldM", nr->plan.size_mb);
	snprintf(a_runtime, sizeof a_runtime, "--runtime=%d", nr->plan.runtime_s);
	snprintf(a_ramp, sizeof a_ramp, "--ramp_time=%d", nr->plan.ramp_s);
	snprintf(a_file, sizeof a_file, "--filename=%s", job->file);
	for (int attempt = 0; attempt < 2; attempt++) {
		snprintf(a_engine, sizeof a_engine, "--ioengine=%s", nr->engine);
		char *argv[] = {
			nr->fio, a_name, "--output-format=json", "--eta=never", "--group_reporting",
			"--direct=1", a_engine, a_rw, a_bs, a_depth, a_jobs, a_size, a_inc,
			"--time_based", a_runtime, a_ramp, "--randrepeat=0", "--norandommap",
			"--allow_file_create=1", a_file, NULL,
		};
		double left = nr->deadline - bench_now();
		/* a job's own allowance: its runtime, the read file's layout, start-up slack */
		double own = nr->plan.runtime_s + nr->plan.ramp_s + 15 +
			     (!strcmp(job->name, "seqread") ? nvme_layout_s(&nr->plan) : 0);
		if (left > own)
			left = own;
		if (left < 1) {
			snprintf(why, whylen, "no time left for the fio %s job", job->name);
			return -1;
		}
		bench_log(ctx, "fio %s: engine %s, bs %s, %d jobs, iodepth %d, %ld MiB per job, %d s",
			  job->name, nr->engine, job->bs, nr->plan.jobs, job->iodepth,
			  nr->plan.size_mb, nr->plan.runtime_s);
		struct nvme_proc pr;
		if (nvme_spawn(argv, left, &pr)) {
			if (snprintf(why, whylen, "cannot run fio '%s': %s", nr->fio,
				     nvme_strerror(pr.spawn_errno)) >= (int)whylen)
				snprintf(why, whylen, "cannot run fio: %s", nvme_strerror(pr.spawn_errno));
			nvme_proc_free(&pr);
			return -1;
		}
		char line[512], perr[256];
		nvme_first_line(pr.err.p, line, sizeof line);
		if (pr.timed_out) {
			snprintf(why, whylen, "fio %s job did not finish before the deadline (%.0f s)",
				 job->name, left);
			nvme_proc_free(&pr);
			return -1;
		}
		int exited_ok = WIFEXITED(pr.status) && WEXITSTATUS(pr.status) == 0;
		int parsed = fio_json_parse(pr.out.p, pr.out.n, res, perr, sizeof perr);
		int failed = !exited_ok || parsed || res->error;
		if (failed && attempt == 0 && !strcmp(nr->engine, "io_uring") &&
		    nvme_io_uring_unusable(&pr)) {
			bench_log(ctx, "io_uring unusable here (%s); retrying with libaio",
				  line[0] ? line : "fio failed");
			nr->engine = "libaio";
			nvme_proc_free(&pr);
			continue;
		}
		if (failed) {
			/* fio's own words first: its stderr, else its JSON's job error */
			if (!line[0] && !parsed && res->error)
				snprintf(line, sizeof line, "job %s: error %d (%s)", res->error_job,
					 res->error, nvme_strerror(res->error));
			if (!line[0] && parsed)
				snprintf(line, sizeof line, "%s", perr);
			if (!line[0]) {
				if (WIFSIGNALED(pr.status))
					snprintf(line, sizeof line, "killed by signal %d",
						 WTERMSIG(pr.status));
				else
					snprintf(line, sizeof line, "exit status %d",
						 WIFEXITED(pr.status) ? WEXITSTATUS(pr.status) : -1);
			}
			snprintf(why, whylen, "fio %s job failed: %s", job->name, line);
			nvme_proc_free(&pr);
			return -1;
		}
		if (line[0])
			bench_log(ctx, "fio %s said: %s", job->name, line);
		snprintf(nr->version, sizeof nr->version, "%s", res->version);
		nvme_proc_free(&pr);
		return 0;
	}
	snprintf(why, whylen, "fio %s job failed with io_uring and libaio", job->name);
	return -1;
}

/* s as the inside of a JSON string into esc[len] (a path is the user's own: quotes, controls) */
static void nvme_json_esc(const char *s, char *esc, size_t len)
{
	size_t w = 0;
	for (const char *p = s; *p && w + 7 < len; p++) {
		unsigned char c = (unsigned char)*p;
		if (c == '"' || c == '\\') {
			esc[w++] = '\\';
			esc[w++] = (char)c;
		} else if (c < 0x20) {
			w += (size_t)snprintf(esc + w, len - w, "\\u%04x", c);
		} else {
			esc[w++] = (char)c;
		}
	}
	esc[w] = 0;
}

static void nvme_params(const struct nvme_run *nr, const struct nvme_job *job, const char *target,
			char *out, size_t len)
{
	char esc[PATH_MAX * 2];
	nvme_json_esc(target, esc, sizeof esc);
	snprintf(out, len,
		 "{\"fio\":\"%s\",\"engine\":\"%s\",\"rw\":\"%s\",\"bs\":\"%s\",\"jobs\":%d,"
		 "\"iodepth\":%d,\"size_mb_per_job\":%ld,\"runtime_s\":%d,\"ramp_s\":%d,"
		 "\"direct\":1,\"target\":\"%s\",\"%s\":\"%s\"}",
		 nr->version, nr->engine, job->rw, job->bs, nr->plan.jobs, job->iodepth,
		 nr->plan.size_mb, nr->plan.runtime_s, nr->plan.ramp_s,
		 nr->is_device ? "device" : "directory", nr->is_device ? "device" : "dir", esc);
}

/*
 * The bench's config: the plan, and which fio runs it (its path, carried or found on $PATH, and
 * once a job has run the version fio's JSON gives): the run's provenance of its disk figures.
 */
static void nvme_echo_config(struct bench_ctx *ctx, const struct bench_config *cfg, const struct nvme_run *nr)
{
	char path[PATH_MAX * 2], version[sizeof nr->version * 6], text[PATH_MAX * 2 + 512];
	nvme_json_esc(nr->fio, path, sizeof path);
	nvme_json_esc(nr->version, version, sizeof version);
	snprintf(text, sizeof text,
		 "{\"profile\":\"%s\",\"size_mb_per_job\":%ld,\"jobs\":%d,\"iodepth\":%d,"
		 "\"runtime_s\":%d,\"fio\":\"%s\",\"fio_source\":\"%s\"%s%s%s}", bench_profile_name(cfg->profile),
		 nr->plan.size_mb, nr->plan.jobs, nr->plan.qd, nr->plan.runtime_s, path, nr->fio_source,
		 version[0] ? ",\"fio_version\":\"" : "", version, version[0] ? "\"" : "");
	bench_config_echo(ctx, text);
}

/* ---- choosing the target ---- */

/* Size in bytes of a block device from sysfs, 0 when unknown. */
static unsigned long long nvme_device_bytes(const char *dev)
{
	struct stat st;
	if (stat(dev, &st) || !S_ISBLK(st.st_mode))
		return 0;
	char p[96];
	snprintf(p, sizeof p, "/sys/dev/block/%u:%u/size", major(st.st_rdev), minor(st.st_rdev));
	FILE *f = fopen(p, "re");
	if (!f)
		return 0;
	unsigned long long sectors = 0;
	if (fscanf(f, "%llu", &sectors) != 1)
		sectors = 0;
	fclose(f);
	return sectors * 512ull;
}

/* Shrinks the per-job size to fit `avail` bytes (half of it); -1 when too small. */
static int nvme_fit(struct nvme_plan *pl, unsigned long long avail)
{
	unsigned long long want = (unsigned long long)pl->size_mb * pl->jobs << 20;
	if (want <= avail / 2)
		return 0;
	long mb = (long)((avail / 2 / (unsigned long long)pl->jobs) >> 20);
	if (mb < 16)
		return -1;
	pl->size_mb = mb;
	return 0;
}

/*
 * What the figures are of, said with an ok result: a tmpfs measures
 * memory, a disk that is no NVMe drive measures that disk.
 */
static void nvme_what(struct bench_ctx *ctx, const char *target, int is_device)
{
	struct statfs fs;
	struct stat st;
	const char *what = "not an NVMe drive: the figures are of the disk behind it";
	if (is_device)
		what = "block device";
	else if (statfs(target, &fs) == 0 && fs.f_type == 0x01021994) /* TMPFS_MAGIC */
		what = "tmpfs: memory, not a drive";
	else if (stat(target, &st) == 0 && blockdev_is_nvme(major(st.st_dev), minor(st.st_dev)))
		what = "a local NVMe drive";
	bench_reason(ctx, "fio on %s (%s)", target, what);
}

/* The directory fio writes in (given, else the largest local NVMe mount, else a temporary one), checked
 * and given a work directory with room for the plan: BENCH_OK, or BENCH_FAIL with the reason said. */
static int nvme_prepare_dir(struct bench_ctx *ctx, const struct bench_config *cfg, struct nvme_run *nr,
			    char *target, size_t tlen, const char **why_dir_out)
{
	char *picked = NULL;
	const char *why_dir = "given with --nvme-dir";
	const char *dir = cfg->nvme_dir;
	if (!dir) {
		picked = blockdev_largest_nvme_mount(NULL);
		dir = picked;
		why_dir = "largest local NVMe mount";
	}
	if (!dir) {
		dir = getenv("TMPDIR");
		if (!dir || !*dir)
			dir = "/tmp";
		why_dir = "no local NVMe mount found; temporary directory";
	}
	snprintf(target, tlen, "%s", dir);
	free(picked);
	struct stat st;
	if (stat(target, &st)) {
		bench_reason(ctx, "cannot use nvme directory '%s': %s", target,
			     nvme_strerror(errno));
		return BENCH_FAIL;
	}
	if (!S_ISDIR(st.st_mode)) {
		bench_reason(ctx, "cannot use nvme directory '%s': not a directory", target);
		return BENCH_FAIL;
	}
	if (access(target, W_OK)) {
		bench_reason(ctx, "cannot write to nvme directory '%s': %s", target,
			     nvme_strerror(errno));
		return BENCH_FAIL;
	}
	if (bench_mkworkdir(ctx, target, "fio", nvme_workdir, sizeof nvme_workdir)) {
		bench_reason(ctx, "cannot write to nvme directory '%s': %s", target,
			     nvme_strerror(errno));
		nvme_workdir[0] = 0;
		return BENCH_FAIL;
	}
	struct statvfs sv;
	if (statvfs(target, &sv) == 0 &&
	    nvme_fit(&nr->plan, (unsigned long long)sv.f_bavail * sv.f_frsize)) {   /* fits the plan to the room */
		bench_reason(ctx, "not enough free space in nvme directory '%s' (%llu MiB)",
			     target,
			     ((unsigned long long)sv.f_bavail * sv.f_frsize) >> 20);
		nvme_cleanup();
		return BENCH_FAIL;
	}
	if (snprintf(nvme_files[0], sizeof nvme_files[0], "%s/write.dat", nvme_workdir) >=
	    (int)sizeof nvme_files[0] ||
	    snprintf(nvme_files[1], sizeof nvme_files[1], "%s/read.dat", nvme_workdir) >=
	    (int)sizeof nvme_files[1]) {
		bench_reason(ctx, "nvme directory path '%s' is too long", target);
		nvme_cleanup();
		return BENCH_FAIL;
	}
	*why_dir_out = why_dir;
	return BENCH_OK;
}

/* The metrics of fio job i (seqwrite, seqread, randread). */
static void nvme_job_metrics(struct bench_ctx *ctx, const struct nvme_run *nr, size_t i, const struct fio_result *res,
			     const char *params)
{
	if (i == 0) {
		bench_metric(ctx, "nvme.seqwrite.gbps", -1, res->write.bw_bytes / 1e9, "GB/s",
			     params);
		if (!nr->is_device)
			unlink(nvme_files[0]); /* free the space before the reads */
	} else if (i == 1) {
		bench_metric(ctx, "nvme.seqread.gbps", -1, res->read.bw_bytes / 1e9, "GB/s",
			     params);
	} else {
		bench_metric(ctx, "nvme.randread.kiops", -1, res->read.iops / 1e3, "kIOPS",
			     params);
		if (isfinite(res->read.clat_p50_ns))
			bench_metric(ctx, "nvme.randread.p50_us", -1, res->read.clat_p50_ns / 1e3,
				     "us", params);
		if (isfinite(res->read.clat_p99_ns))
			bench_metric(ctx, "nvme.randread.p99_us", -1, res->read.clat_p99_ns / 1e3,
				     "us", params);
	}
}

static int nvme_run_bench(struct bench_ctx *ctx, const struct bench_config *cfg)
{
	struct nvme_run nr = { .engine = "io_uring", .plan = nvme_plan_for(cfg->profile) };
	nr.deadline = bench_now() + nvme_deadline(cfg) - 5;
	char reason[1024];
	if (cfg->nvme_device && !cfg->nvme_allow_destructive) {
		bench_reason(ctx, "refusing to write to block device %s without "
			     "--nvme-allow-destructive", cfg->nvme_device);
		return BENCH_FAIL;
	}
	if (cfg->nvme_device) {
		if (blockdev_check_unused(cfg->nvme_device, NULL, NULL, reason, sizeof reason)) {
			bench_reason(ctx, "refusing to write to block device: %s", reason);
			return BENCH_FAIL;
		}
	}
	if (!nvme_carried_fio(nr.fio, sizeof nr.fio)) {
		nr.fio_source = "carried";
	} else if (!nvme_which("fio", nr.fio, sizeof nr.fio)) {
		nr.fio_source = "PATH";
	} else {
		bench_reason(ctx, "fio not found in PATH, nor carried beside gpuvet (libexec/fio)");
		return BENCH_SKIP;
	}
	bench_log(ctx, "fio %s (%s)", nr.fio, nr.fio_source);

	char target[PATH_MAX];
	const char *why_dir = "given with --nvme-dir";
	if (cfg->nvme_device) {
		nr.is_device = 1;
		snprintf(target, sizeof target, "%s", cfg->nvme_device);
		unsigned long long bytes = nvme_device_bytes(cfg->nvme_device);
		if (bytes && nvme_fit(&nr.plan, bytes * 2)) { /* a device may be filled whole */
			bench_reason(ctx, "block device %s is too small (%llu MiB)", cfg->nvme_device,
				     bytes >> 20);
			return BENCH_FAIL;
		}
	} else if (nvme_prepare_dir(ctx, cfg, &nr, target, sizeof target, &why_dir) != BENCH_OK) {
		return BENCH_FAIL;
	}
	bench_log(ctx, "nvme target %s (%s)", target, nr.is_device ? "block device" : why_dir);

	struct sigaction sa = { .sa_handler = nvme_on_signal }, old_term, old_int;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, &old_term);
	sigaction(SIGINT, &sa, &old_int);

	nvme_echo_config(ctx, cfg, &nr);

	const char *fw = nr.is_device ? target : nvme_files[0];
	const char *fr = nr.is_device ? target : nvme_files[1];
	const struct nvme_job jobs[] = {
		{ "seqwrite", "write", "1M", nr.plan.qd, fw },
		{ "seqread", "read", "1M", nr.plan.qd, fr },
		{ "randread", "randread", "4k", nr.plan.qd * 2, fr },
	};
	int status = BENCH_OK;
	char params[PATH_MAX * 2 + 512];
	for (size_t i = 0; i < sizeof jobs / sizeof jobs[0]; i++) {
		struct fio_result res;
		if (nvme_fio_job(ctx, &nr, &jobs[i], &res, reason, sizeof reason)) {
			bench_reason(ctx, "%s", reason);
			status = BENCH_FAIL;
			break;
		}
		if (i == 0)
			nvme_echo_config(ctx, cfg, &nr);   /* again, with the version fio said it is */
		nvme_params(&nr, &jobs[i], target, params, sizeof params);
		nvme_job_metrics(ctx, &nr, i, &res, params);
		bench_progress(ctx, (double)(i + 1) / 3.0);
	}
	if (status == BENCH_OK)
		nvme_what(ctx, target, nr.is_device);
	nvme_cleanup();
	sigaction(SIGTERM, &old_term, NULL);
	sigaction(SIGINT, &old_int, NULL);
	return status;
}

static const struct metric_info nvme_metrics[] = {
	{ "nvme.seqread.gbps", "GB/s", "NVMe seq read", METRIC_RANKABLE, METRIC_PEAK_NONE },
	{ "nvme.seqwrite.gbps", "GB/s", "NVMe seq write", METRIC_RANKABLE, METRIC_PEAK_NONE },
	{ "nvme.randread.kiops", "kIOPS", "NVMe 4 KiB random read", METRIC_RANKABLE, METRIC_PEAK_NONE },
	{ "nvme.randread.p50_us", "us", "NVMe read latency p50", METRIC_LOWER_IS_BETTER, METRIC_PEAK_NONE },
	{ "nvme.randread.p99_us", "us", "NVMe read latency p99", METRIC_LOWER_IS_BETTER, METRIC_PEAK_NONE },
	{ NULL, NULL, NULL, 0, METRIC_PEAK_NONE },
};

const struct bench bench_nvme = {
	.name = "nvme",
	.summary = "local NVMe through fio: sequential 1 MiB read/write, random 4 KiB read IOPS",
	.flags = 0,
	.deadline_s = nvme_deadline,
	.run = nvme_run_bench,
	.metrics = nvme_metrics,
};
