/*
 * rdzv_t.h - what the rendezvous' unit tests share (test_rendezvous.c,
 * test_rendezvous_auth.c): a millisecond clock, a child's exit code, a
 * listening rank 0 on 127.0.0.1 with a port the kernel chose.
 */
#ifndef GPUVET_RDZV_T_H
#define GPUVET_RDZV_T_H

#include "platform/rendezvous.h"

#include <stdio.h>
#include <sys/wait.h>
#include <time.h>

static inline long long ms_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* A child's exit status; 100 + the signal that killed it; 200 when it cannot be waited for. */
static inline int exit_code(pid_t p)
{
	int st = 0;
	if (waitpid(p, &st, 0) != p)
		return 200;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 100 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
}

/* A listening rank 0 of size with token (NULL: none) on 127.0.0.1; addr gets "127.0.0.1:PORT". */
static inline struct rdzv *listen_tok(int size, const char *token, char addr[64])
{
	struct rdzv *r = NULL;
	char err[256];
	if (rdzv_listen("127.0.0.1:0", size, token, &r, err, sizeof err)) {
		fprintf(stderr, "listen: %s\n", err);
		return NULL;
	}
	snprintf(addr, 64, "127.0.0.1:%d", rdzv_port(r));
	return r;
}

#endif
