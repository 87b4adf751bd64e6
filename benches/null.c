/*
 * null.c - a test-only bench that drives the harness (as fio's null
 * engine).  It measures nothing: its metric is named null.* and it can only
 * be selected when GPUVET_TEST_BENCHES=1, so it can never be reported as a
 * measurement.  GPUVET_NULL_MODE picks the behaviour:
 *   ok (default)  one metric, three samples
 *   fail          reports a reason and fails
 *   skip          skips with a reason
 *   crash         emits one metric, then dies of SIGSEGV
 *   abort         dies of SIGABRT
 *   hang          emits one metric, then sleeps forever (the deadline must kill it)
 *   slow          takes GPUVET_NULL_SECONDS seconds (default 2), reporting progress
 *   garbage       writes a malformed line on the protocol pipe, then one good metric
 *   impossible    reports its count as -1 and a series point of -5: values no machine
 *                 gives (benches/metric_bounds.c), which the harness stores as null
 *   tree          makes a gpuvet-null-* work directory in GPUVET_NULL_WORKDIR
 *                 with a file in it, starts a process in a session of its own
 *                 (as fio's job processes), then hangs: nothing may outlive the bench
 * In every mode that reports, GPUVET_NULL_GBPS=A[,B...] adds null.rate.gbps, a
 * throughput (a cluster run's straggler figure): A the first time, B the next
 * (the calls counted in the file GPUVET_NULL_COUNTER, when set), the last after.
 */
#include "benches/bench.h"

#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int null_deadline(const struct bench_config *cfg)
{
	(void)cfg;
	const char *d = getenv("GPUVET_NULL_DEADLINE");
	int v = d ? (int)strtol(d, NULL, 10) : 0;
	return v > 0 ? v : 30;
}

/* Mode tree: a work directory with a file, and a detached grandchild. */
static int null_tree(struct bench_ctx *ctx)
{
	const char *base = getenv("GPUVET_NULL_WORKDIR");
	char dir[PATH_MAX], file[PATH_MAX + 16];
	if (!base || bench_mkworkdir(ctx, base, "null", dir, sizeof dir)) {
		bench_reason(ctx, "null bench: cannot make a work directory");
		return BENCH_FAIL;
	}
	snprintf(file, sizeof file, "%s/work.dat", dir);
	int fd = open(file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd >= 0) {
		ssize_t w = write(fd, "work\n", 5);
		(void)w;
		close(fd);
	}
	pid_t p = fork();
	if (p == 0) {
		setsid();
		if (fork() == 0)
			for (;;)
				pause();
		for (;;)
			pause();
	}
	bench_progress(ctx, 0.5);
	for (;;)
		pause();
}

/* GPUVET_NULL_GBPS=A[,B...]: null.rate.gbps, the n-th value on the n-th call as GPUVET_NULL_COUNTER counts them. */
static void null_rate(struct bench_ctx *ctx)
{
	const char *list = getenv("GPUVET_NULL_GBPS"), *counter = getenv("GPUVET_NULL_COUNTER");
	if (!list)
		return;
	long calls = 0;
	if (counter) {   /* one byte appended per call: the file's size counts the calls before this one */
		int fd = open(counter, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
		if (fd >= 0) {
			calls = lseek(fd, 0, SEEK_END);
			ssize_t w = write(fd, "x", 1);
			(void)w;
			close(fd);
		}
	}
	const char *p = list;
	for (long i = 0; i < calls && strchr(p, ','); i++)
		p = strchr(p, ',') + 1;
	bench_metric(ctx, "null.rate.gbps", -1, strtod(p, NULL), "GB/s", "{\"reps\":3}");   /* a figure of several reps */
}

static int null_run(struct bench_ctx *ctx, const struct bench_config *cfg)
{
	(void)cfg;
	const char *mode = getenv("GPUVET_NULL_MODE");
	if (!mode)
		mode = "ok";
	if (!strcmp(mode, "skip")) {
		bench_reason(ctx, "null bench asked to skip");
		return BENCH_SKIP;
	}
	if (!strcmp(mode, "fail")) {
		bench_reason(ctx, "null bench asked to fail");
		return BENCH_FAIL;
	}
	bench_metric(ctx, "null.value.count", -1, strcmp(mode, "impossible") ? 42 : -1, "count", "{\"mode\":\"null\"}");
	null_rate(ctx);
	if (!strcmp(mode, "tree"))
		return null_tree(ctx);
	if (!strcmp(mode, "crash")) {
		raise(SIGSEGV);
	} else if (!strcmp(mode, "abort")) {
		abort();
	} else if (!strcmp(mode, "hang")) {
		for (;;)
			pause();
	} else if (!strcmp(mode, "slow")) {
		const char *s = getenv("GPUVET_NULL_SECONDS");
		int secs = s ? (int)strtol(s, NULL, 10) : 2;
		for (int i = 0; i < secs * 10; i++) {
			usleep(100000);
			bench_progress(ctx, (double)i / (secs * 10));
		}
	} else if (!strcmp(mode, "garbage")) {
		static const char junk[] = "{\"t\":\"metric\",\"name\":\n\x01\x02not json\n";
		ssize_t w = write(STDOUT_FILENO, junk, 0); /* keep stdout untouched */
		(void)w;
		bench_log(ctx, "about to send a malformed line");
		extern void bench_ctx_raw_write(struct bench_ctx *, const char *, size_t);
		bench_ctx_raw_write(ctx, junk, sizeof junk - 1);
		bench_metric(ctx, "null.after_garbage.count", -1, 1, "count", NULL);
	}
	for (int i = 0; i < 3; i++)
		bench_sample(ctx, "null.series.count", -1, i, i == 1 && !strcmp(mode, "impossible") ? -5 : i * 2.0);
	return BENCH_OK;
}

static const struct metric_info null_metrics[] = {
	{ "null.value.count", "count", "test value", 0, METRIC_PEAK_NONE },
	{ "null.after_garbage.count", "count", "test value", 0, METRIC_PEAK_NONE },
	{ "null.rate.gbps", "GB/s", "test rate", METRIC_RANKABLE, METRIC_PEAK_NONE },
	{ NULL, NULL, NULL, 0, METRIC_PEAK_NONE },
};

/* The series it samples (struct bench .series): judged under this bench only. */
static const char *const null_series[] = { "null.series.count", NULL };

const struct bench bench_null = {
	.name = "null",
	.summary = "test-only: drives the harness, measures nothing",
	.flags = BENCH_TEST_ONLY,
	.deadline_s = null_deadline,
	.run = null_run,
	.metrics = null_metrics,
	.series = null_series,
};
