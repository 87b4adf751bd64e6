/*
 * proctree.h - nothing a bench starts outlives it.
 *
 * Every bench runs under a keeper process (keeper_main): a child
 * subreaper (prctl PR_SET_CHILD_SUBREAPER) that forks the bench, learns
 * the bench's work directories over a pipe, and when the bench ends, however
 * it ends (exit, crash, the harness's SIGTERM at a deadline or a stop, or
 * gpuvet itself killed: the keeper's parent-death signal is SIGTERM), kills
 * every process below it, including those that started their own sessions
 * (fio's job processes), and removes the work directories.  It then exits
 * as the bench did, so the harness sees the bench's own exit status.
 */
#ifndef GPUVET_PROCTREE_H
#define GPUVET_PROCTREE_H

#include <sys/types.h>

/*
 * SIGKILLs every descendant of this process (found through /proc) and
 * reaps those that become its children, until none is left or about 3 s
 * have passed.  When `watch` is reaped on the way its wait status goes to
 * *watch_status (and *watch_reaped is set).  Returns how many were killed.
 */
int proctree_kill_all(pid_t watch, int *watch_status, int *watch_reaped);

/*
 * Removes a bench work directory and what is inside (no symbolic link is
 * followed, depth bounded).  Only a directory whose last component starts
 * with "gpuvet-" is touched.  0 when it is gone.
 */
int proctree_remove_workdir(const char *path);

/*
 * Runs work(arg, keeper_fd) in a child of a keeper (this process becomes
 * it) as described above; never returns.  work writes one line per work
 * directory to keeper_fd (bench_workdir()).  The keeper closes its copy of
 * report_fd (the bench's report pipe) once the bench has it.
 */
void keeper_main(void (*work)(void *arg, int keeper_fd), void *arg, int report_fd)
	__attribute__((noreturn));

#endif
