/*
 * proctree.c - the keeper of a bench process and the kill of a whole
 * process tree (see proctree.h).  A process group is not enough: fio's job
 * processes call setsid(), so kill(-pgid) misses them; a subreaper sees
 * them all, as its descendants while their parents live and as its own
 * children once their parents are gone.
 */
#include "runners/proctree.h"
#include "benches/bench.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#define KEEPER_MAX_DIRS 8
#define KILL_BUDGET_S 3.0

/* pid and parent pid of every process; grows as needed.  -1 on failure. */
static int proc_table(pid_t **pids, pid_t **ppids, size_t *n)
{
	DIR *d = opendir("/proc");
	if (!d)
		return -1;
	size_t cap = 0;
	*n = 0;
	*pids = *ppids = NULL;
	struct dirent *e;
	while ((e = readdir(d))) {
		char *end;
		long pid = strtol(e->d_name, &end, 10);
		if (*end || pid <= 0)
			continue;
		char path[64], buf[512];
		snprintf(path, sizeof path, "/proc/%ld/stat", pid);
		int fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		ssize_t got = read(fd, buf, sizeof buf - 1);
		close(fd);
		if (got <= 0)
			continue;
		buf[got] = 0;
		char *rp = strrchr(buf, ')'); /* the command name may hold anything */
		long ppid;
		if (!rp || sscanf(rp + 1, " %*c %ld", &ppid) != 1)
			continue;
		if (*n == cap) {
			cap = cap ? cap * 2 : 256;
			pid_t *a = realloc(*pids, cap * sizeof *a), *b;
			if (a)
				*pids = a;
			b = a ? realloc(*ppids, cap * sizeof *b) : NULL;
			if (!b) {
				closedir(d);
				return -1;
			}
			*ppids = b;
		}
		(*pids)[*n] = (pid_t)pid;
		(*ppids)[*n] = (pid_t)ppid;
		(*n)++;
	}
	closedir(d);
	return 0;
}

/* SIGKILLs the descendants of root seen now; how many. */
static int kill_descendants_once(pid_t root)
{
	pid_t *pids, *ppids;
	size_t n;
	if (proc_table(&pids, &ppids, &n)) {
		free(pids);
		free(ppids);
		return 0;
	}
	char *mark = calloc(n ? n : 1, 1);
	int killed = 0;
	for (int changed = 1; changed && mark;) {
		changed = 0;
		for (size_t i = 0; i < n; i++) {
			if (mark[i])
				continue;
			int below = ppids[i] == root;
			for (size_t j = 0; !below && j < n; j++)
				below = mark[j] && pids[j] == ppids[i];
			if (below) {
				mark[i] = 1;
				changed = 1;
				kill(pids[i], SIGKILL);
				killed++;
			}
		}
	}
	free(mark);
	free(pids);
	free(ppids);
	return killed;
}

int proctree_kill_all(pid_t watch, int *watch_status, int *watch_reaped)
{
	pid_t self = getpid();
	double until = bench_now() + KILL_BUDGET_S;
	int total = 0;
	for (;;) {
		int k = kill_descendants_once(self);
		total += k;
		int st;
		pid_t w;
		while ((w = waitpid(-1, &st, WNOHANG)) > 0)
			if (w == watch && watch_status) {
				*watch_status = st;
				if (watch_reaped)
					*watch_reaped = 1;
			}
		if ((!k && w < 0) || bench_now() > until)
			break;
		if (!k && w == 0) {
			/* only zombies of processes not yet reparented may be left */
			if (!kill_descendants_once(self))
				break;
		}
		usleep(5000);
	}
	return total;
}

/* Removes what is inside dirfd (depth-bounded); the caller removes the directory. */
static void remove_inside(int dirfd, int depth)
{
	DIR *d = fdopendir(dirfd);
	if (!d) {
		close(dirfd);
		return;
	}
	struct dirent *e;
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (unlinkat(dirfd, e->d_name, 0) == 0 || (errno != EISDIR && errno != EPERM))
			continue;
		if (depth < 4) {
			int sub = openat(dirfd, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (sub >= 0)
				remove_inside(sub, depth + 1);
		}
		unlinkat(dirfd, e->d_name, AT_REMOVEDIR);
	}
	closedir(d);
}

int proctree_remove_workdir(const char *path)
{
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	if (strncmp(base, "gpuvet-", 7))
		return -1;
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 0 : -1;
	remove_inside(fd, 0);
	return rmdir(path) == 0 || errno == ENOENT ? 0 : -1;
}

/* ---- the keeper ---- */

static volatile sig_atomic_t keeper_stop;

static void keeper_on_signal(int sig)
{
	keeper_stop = sig;
}

static void keeper_on_chld(int sig)
{
	(void)sig;
}

/* Reads work directory lines from fd into dirs (a partial line waits in part). */
static ssize_t keeper_read_dirs(int fd, char dirs[][PATH_MAX], int *ndirs, char *part, size_t *plen)
{
	char buf[4096];
	ssize_t got = read(fd, buf, sizeof buf);
	if (got < 0 && errno == EINTR)
		return 1;
	for (ssize_t i = 0; i < got; i++) {
		if (buf[i] != '\n') {
			if (*plen < PATH_MAX - 1)
				part[(*plen)++] = buf[i];
			continue;
		}
		part[*plen] = 0;
		if (*plen && *ndirs < KEEPER_MAX_DIRS)
			memcpy(dirs[(*ndirs)++], part, *plen + 1);
		*plen = 0;
	}
	return got;
}

void keeper_main(void (*work)(void *arg, int keeper_fd), void *arg, int report_fd)
{
	static char dirs[KEEPER_MAX_DIRS][PATH_MAX];
	static char part[PATH_MAX];
	int ndirs = 0;
	size_t plen = 0;
	prctl(PR_SET_CHILD_SUBREAPER, 1);

	sigset_t block, old;
	sigemptyset(&block);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGHUP);
	sigaddset(&block, SIGCHLD);
	sigprocmask(SIG_BLOCK, &block, &old);
	struct sigaction sa = { .sa_handler = keeper_on_signal };
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sa.sa_handler = keeper_on_chld;
	sigaction(SIGCHLD, &sa, NULL);

	int kp[2];
	if (pipe2(kp, O_CLOEXEC))
		_exit(125);
	pid_t me = getpid();
	pid_t w = fork();
	if (w < 0)
		_exit(125);
	if (w == 0) {
		close(kp[0]);
		signal(SIGTERM, SIG_DFL);
		signal(SIGINT, SIG_DFL);
		signal(SIGHUP, SIG_DFL);
		signal(SIGCHLD, SIG_DFL);
		sigprocmask(SIG_SETMASK, &old, NULL);
		prctl(PR_SET_CHILD_SUBREAPER, 0);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != me)
			_exit(125);
		work(arg, kp[1]);
		_exit(0);
	}
	close(kp[1]);
	close(report_fd); /* the parent must see the report pipe close when the bench ends */

	int wstatus = 0, reaped = 0, kfd = kp[0];
	sigset_t none;
	sigemptyset(&none);
	while (!reaped && !keeper_stop) {
		struct pollfd pfd = { .fd = kfd, .events = POLLIN };
		int pr = ppoll(&pfd, kfd >= 0 ? 1 : 0, NULL, &none);
		if (pr > 0 && kfd >= 0 && pfd.revents &&
		    keeper_read_dirs(kfd, dirs, &ndirs, part, &plen) <= 0) {
			close(kfd); /* the bench closed it (exited or exec'd) */
			kfd = -1;
		}
		int st;
		pid_t got;
		while ((got = waitpid(-1, &st, WNOHANG)) > 0)
			if (got == w) {
				wstatus = st;
				reaped = 1;
			}
	}
	/*
	 * The whole tree first, then what it said: a bench stopped between
	 * telling a work directory and making it (bench_mkworkdir) has told it
	 * by the time it is dead, so the pipe read after holds every one.
	 */
	proctree_kill_all(w, &wstatus, &reaped);
	if (kfd >= 0) {
		int fl = fcntl(kfd, F_GETFL);
		fcntl(kfd, F_SETFL, fl | O_NONBLOCK);
		while (keeper_read_dirs(kfd, dirs, &ndirs, part, &plen) > 0)
			;
		close(kfd);
	}
	for (int i = 0; i < ndirs; i++)
		proctree_remove_workdir(dirs[i]);
	if (!reaped)
		wstatus = keeper_stop ? keeper_stop : SIGKILL; /* as a signal death */
	if (reaped && WIFEXITED(wstatus))
		_exit(WEXITSTATUS(wstatus));
	int sig = reaped ? WTERMSIG(wstatus) : wstatus;
	struct rlimit no_core = { 0, 0 };
	setrlimit(RLIMIT_CORE, &no_core);
	signal(sig, SIG_DFL);
	sigset_t one;
	sigemptyset(&one);
	sigaddset(&one, sig);
	sigprocmask(SIG_UNBLOCK, &one, NULL);
	raise(sig);
	_exit(128 + sig);
}
