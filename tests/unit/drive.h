/*
 * drive.h - a bench driven in a unit test, without the run harness, as
 * runners/run.c drives it: in a child process, with a real bench_ctx writing
 * the protocol to a pipe, killed by SIGALRM at its deadline.  One copy for
 * every unit test of a bench (HACKING.md, "Adding a bench", step 4):
 *
 *     int st;
 *     char *out = bench_drive(&bench_mine, &cfg, &st);   // protocol lines, malloc'd
 *     CHECK(st == BENCH_OK && strstr(out, "\"name\":\"mine.rate.gbps\""));
 *     free(out);
 */
#ifndef GPUVET_TESTS_DRIVE_H
#define GPUVET_TESTS_DRIVE_H

#include "benches/bench.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

/* probe() then run(), as the harness's child does; the bench's status. */
static inline int bench_drive_once(const struct bench *b, const struct bench_config *cfg, int fd)
{
	struct bench_ctx *ctx = bench_ctx_new(fd, b->name);
	int st = b->probe ? b->probe(ctx, cfg) : BENCH_OK;
	if (st == BENCH_OK)
		st = b->run(ctx, cfg);
	bench_ctx_free(ctx);
	return st;
}

/* Runs the bench in a child; its protocol output (malloc'd, NUL-terminated) and status (-1: killed). */
static inline char *bench_drive(const struct bench *b, const struct bench_config *cfg, int *status)
{
	int p[2];
	if (pipe(p))
		return NULL;
	pid_t pid = fork();
	if (pid == 0) {
		close(p[0]);
		alarm((unsigned)b->deadline_s(cfg));
		_exit(bench_drive_once(b, cfg, p[1]));
	}
	close(p[1]);
	size_t n = 0, cap = 65536;
	char *out = malloc(cap);
	for (;;) {
		if (n + 4096 > cap) {
			cap *= 2;
			out = realloc(out, cap);
		}
		ssize_t r = read(p[0], out + n, cap - n - 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		n += (size_t)r;
	}
	out[n] = 0;
	close(p[0]);
	int ws = 0;
	waitpid(pid, &ws, 0);
	*status = WIFEXITED(ws) ? WEXITSTATUS(ws) : -1;
	return out;
}

#endif
