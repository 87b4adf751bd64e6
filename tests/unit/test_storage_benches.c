/*
 * test_storage_benches.c - the nvme and objstore benches driven directly,
 * without the run harness: each case runs a bench in a child process with a
 * real bench_ctx writing to a pipe (as runners/run.c does) and checks the
 * protocol lines it sent.
 *
 * Driver mode, for tests/integration/test_nvme.py and test_objstore.py (so
 * they can exercise the benches before and besides `gpuvet run`):
 *   GPUVET_DRIVE_BENCH=nvme|objstore [GPUVET_DRIVE_PROFILE=quick|standard|full]
 *   [GPUVET_DRIVE_NVME_DIR=... GPUVET_DRIVE_NVME_DEVICE=... GPUVET_DRIVE_NVME_ALLOW=1
 *    GPUVET_DRIVE_OBJSTORE_URL=... GPUVET_DRIVE_OBJSTORE_ENDPOINT=...
 *    GPUVET_DRIVE_OBJSTORE_CONCURRENCY=N]
 * runs the bench once with its protocol lines on stdout and a last line
 * {"t":"status","status":"ok|skipped|failed"}; it dies of SIGALRM at the
 * bench's deadline, as the harness would kill it.
 */
#include "benches/bench.h"
#include "tests/unit/t.h"
#include "tests/unit/drive.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern const struct bench bench_nvme;
extern const struct bench bench_objstore;

static const char *status_name(int st)
{
	return st == BENCH_OK ? "ok" : st == BENCH_SKIP ? "skipped" : "failed";
}


static void test_objstore_without_url_skips(void)
{
	struct bench_config cfg = { .profile = PROFILE_QUICK };
	int st;
	char *out = bench_drive(&bench_objstore, &cfg, &st);
	CHECK(st == BENCH_SKIP);
	CHECK(out && strstr(out, "no object store configured (--objstore-url)"));
	free(out);
}

static void test_objstore_bad_url_fails(void)
{
	struct bench_config cfg = { .profile = PROFILE_QUICK, .objstore_url = "ftp://x/y" };
	int st;
	char *out = bench_drive(&bench_objstore, &cfg, &st);
	CHECK(st == BENCH_FAIL);
	CHECK(out && strstr(out, "\"t\":\"reason\""));
	CHECK(out && strstr(out, "unsupported object store url"));
	free(out);
}

static void test_objstore_s3_url_without_bucket_fails(void)
{
	struct bench_config cfg = { .profile = PROFILE_QUICK, .objstore_url = "s3://" };
	int st;
	char *out = bench_drive(&bench_objstore, &cfg, &st);
	CHECK(st == BENCH_FAIL);
	CHECK(out && strstr(out, "s3 url"));
	free(out);
}

static void test_nvme_device_without_allow_fails(void)
{
	struct bench_config cfg = { .profile = PROFILE_QUICK, .nvme_device = "/dev/nvme9n9" };
	int st;
	char *out = bench_drive(&bench_nvme, &cfg, &st);
	CHECK(st == BENCH_FAIL);
	CHECK(out && strstr(out, "refusing to write to block device /dev/nvme9n9 without "
				 "--nvme-allow-destructive"));
	free(out);
}

static void test_nvme_not_a_block_device_fails(void)
{
	struct bench_config cfg = { .profile = PROFILE_QUICK, .nvme_device = "/dev/null",
				    .nvme_allow_destructive = 1 };
	int st;
	char *out = bench_drive(&bench_nvme, &cfg, &st);
	CHECK(st == BENCH_FAIL);
	CHECK(out && strstr(out, "'/dev/null' is not a block device"));
	free(out);
}

static void test_nvme_without_fio_skips(void)
{
	char *old = getenv("PATH") ? strdup(getenv("PATH")) : NULL;
	setenv("PATH", "/nonexistent-gpuvet", 1);
	struct bench_config cfg = { .profile = PROFILE_QUICK, .nvme_dir = "." };
	int st;
	char *out = bench_drive(&bench_nvme, &cfg, &st);
	CHECK(st == BENCH_SKIP);
	CHECK(out && strstr(out, "fio not found in PATH"));
	free(out);
	if (old)
		setenv("PATH", old, 1);
	free(old);
}

static void test_nvme_missing_dir_fails(void)
{
	struct bench_config cfg = { .profile = PROFILE_QUICK, .nvme_dir = "/nonexistent-gpuvet/d" };
	int st;
	char *out = bench_drive(&bench_nvme, &cfg, &st);
	CHECK(st == BENCH_FAIL);
	CHECK(out && strstr(out, "cannot use nvme directory '/nonexistent-gpuvet/d': no such file"));
	free(out);
}

static void test_deadlines_bounded(void)
{
	for (int p = PROFILE_QUICK; p <= PROFILE_FULL; p++) {
		struct bench_config cfg = { .profile = (enum bench_profile)p };
		int dn = bench_nvme.deadline_s(&cfg), dobj = bench_objstore.deadline_s(&cfg);
		CHECK(dn > 0 && dn <= 900);
		CHECK(dobj > 0 && dobj <= 900);
	}
	struct bench_config q = { .profile = PROFILE_QUICK };
	CHECK(bench_nvme.deadline_s(&q) <= 120);
	CHECK(bench_objstore.deadline_s(&q) <= 120);
}

/* ---- driver mode ---- */

static int drive_from_env(const char *name)
{
	const struct bench *b = !strcmp(name, "nvme") ? &bench_nvme
			      : !strcmp(name, "objstore") ? &bench_objstore : NULL;
	if (!b) {
		fprintf(stderr, "test_storage_benches: unknown bench '%s'\n", name);
		return 2;
	}
	struct bench_config cfg = { .profile = PROFILE_QUICK };
	const char *p = getenv("GPUVET_DRIVE_PROFILE");
	if (p && !strcmp(p, "standard"))
		cfg.profile = PROFILE_STANDARD;
	else if (p && !strcmp(p, "full"))
		cfg.profile = PROFILE_FULL;
	cfg.nvme_dir = getenv("GPUVET_DRIVE_NVME_DIR");
	cfg.nvme_device = getenv("GPUVET_DRIVE_NVME_DEVICE");
	cfg.nvme_allow_destructive = getenv("GPUVET_DRIVE_NVME_ALLOW") != NULL;
	cfg.objstore_url = getenv("GPUVET_DRIVE_OBJSTORE_URL");
	cfg.objstore_endpoint = getenv("GPUVET_DRIVE_OBJSTORE_ENDPOINT");
	const char *c = getenv("GPUVET_DRIVE_OBJSTORE_CONCURRENCY");
	cfg.objstore_concurrency = c ? (int)strtol(c, NULL, 10) : 0;
	alarm((unsigned)b->deadline_s(&cfg));
	fflush(stdout);
	int st = bench_drive_once(b, &cfg, STDOUT_FILENO);
	printf("{\"t\":\"status\",\"status\":\"%s\"}\n", status_name(st));
	return 0;
}

int main(void)
{
	const char *d = getenv("GPUVET_DRIVE_BENCH");
	if (d)
		return drive_from_env(d);
	static const struct t_case cases[] = {
		T(test_objstore_without_url_skips),
		T(test_objstore_bad_url_fails),
		T(test_objstore_s3_url_without_bucket_fails),
		T(test_nvme_device_without_allow_fails),
		T(test_nvme_not_a_block_device_fails),
		T(test_nvme_without_fio_skips),
		T(test_nvme_missing_dir_fails),
		T(test_deadlines_bounded),
	};
	int passed = 0, failed = 0;
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		t_cur_failed = 0;
		cases[i].fn();
		if (t_cur_failed) {
			failed++;
			fprintf(stderr, "FAIL %s\n", cases[i].name);
		} else {
			passed++;
		}
	}
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
