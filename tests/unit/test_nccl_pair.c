/*
 * test_nccl_pair.c - the NCCL cluster paths (benches/nccl_pair.h, #49) on a
 * machine without a GPU: the unique id's hex form both ways, the argument
 * checks made before NCCL is touched, and the skip reasons.  Every case
 * that may load CUDA or NCCL runs in a child process with its own
 * environment (CUDA_VISIBLE_DEVICES="" hides any GPU; GPUVET_NCCL_LIB
 * pointing nowhere stands for a machine without NCCL), so the loader state
 * of one case never leaks into the next.  What runs on GPUs is
 * tests/gpu/session.sh's `cluster` step.
 */
#include "tests/unit/t.h"
#include "benches/nccl_pair.h"
#include "platform/gpu_dl.h"

#include <math.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#define HEXLEN (2 * NCCL_PAIR_UID_BYTES)
#define NO_NCCL "/nonexistent/gpuvet-test/libnccl.so.2"

static char child_text[512];   /* what the child wrote: its err or why */

/* fn in a child with CUDA hidden (and NCCL missing when no_nccl); its exit code, its text in child_text. */
static int in_child(int (*fn)(char *out, size_t outlen), int no_nccl)
{
	int fds[2];
	if (pipe(fds))
		return 100;
	fflush(NULL);
	pid_t p = fork();
	if (p == 0) {
		char out[512] = "";
		close(fds[0]);
		setenv("CUDA_VISIBLE_DEVICES", "", 1);
		if (no_nccl)
			setenv("GPUVET_NCCL_LIB", NO_NCCL, 1);
		int rc = fn(out, sizeof out);
		if (write(fds[1], out, strlen(out)) < 0)
			rc = 101;
		exit(rc);   /* not _exit: the atexit handler removes NCCL's log directory */
	}
	close(fds[1]);
	ssize_t n = read(fds[0], child_text, sizeof child_text - 1);
	child_text[n > 0 ? n : 0] = 0;
	close(fds[0]);
	int st = 0;
	waitpid(p, &st, 0);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 100;
}

static void test_uid_hex_round_trip(void)
{
	unsigned char id[NCCL_PAIR_UID_BYTES], back[NCCL_PAIR_UID_BYTES];
	char hex[HEXLEN + 1], err[128];
	for (int i = 0; i < NCCL_PAIR_UID_BYTES; i++)
		id[i] = (unsigned char)(i * 2 + (i & 1 ? 0x81 : 0));   /* every nibble value, both halves */
	nccl_pair_uid_encode(id, hex);
	CHECK(strlen(hex) == HEXLEN);
	CHECK(strncmp(hex, "00830487", 8) == 0);
	CHECK(strspn(hex, "0123456789abcdef") == HEXLEN);
	memset(back, 0, sizeof back);
	CHECK(nccl_pair_uid_decode(hex, back, err, sizeof err) == 0);
	CHECK(memcmp(id, back, sizeof id) == 0);
	/* upper case is the same id */
	for (int i = 0; i < HEXLEN; i++)
		if (hex[i] >= 'a')
			hex[i] = (char)(hex[i] - 'a' + 'A');
	memset(back, 0, sizeof back);
	CHECK(nccl_pair_uid_decode(hex, back, err, sizeof err) == 0);
	CHECK(memcmp(id, back, sizeof id) == 0);
}

static void test_uid_bad_hex_refused(void)
{
	unsigned char id[NCCL_PAIR_UID_BYTES];
	char hex[HEXLEN + 2], err[128];
	memset(hex, 'a', HEXLEN);
	hex[HEXLEN] = 0;
	CHECK(nccl_pair_uid_decode(hex, id, err, sizeof err) == 0);
	hex[HEXLEN - 1] = 0;                       /* one digit short */
	CHECK(nccl_pair_uid_decode(hex, id, err, sizeof err) == -1);
	CHECK(strstr(err, "255 hex digits, expected 256") != NULL);
	hex[HEXLEN - 1] = 'a';
	hex[HEXLEN] = 'a';                          /* one too many */
	hex[HEXLEN + 1] = 0;
	CHECK(nccl_pair_uid_decode(hex, id, err, sizeof err) == -1);
	CHECK(strstr(err, "more than 256 hex digits") != NULL);
	hex[HEXLEN] = 0;
	hex[17] = 'g';                              /* not a digit */
	CHECK(nccl_pair_uid_decode(hex, id, err, sizeof err) == -1);
	CHECK(strstr(err, "offset 17") != NULL);
	hex[17] = ' ';
	CHECK(nccl_pair_uid_decode(hex, id, err, sizeof err) == -1);
	CHECK(nccl_pair_uid_decode("", id, err, sizeof err) == -1);
	CHECK(nccl_pair_uid_decode(NULL, id, err, sizeof err) == -1);
}

static void test_npoints(void)
{
	CHECK(nccl_cluster_npoints(1 << 20) == 1);
	CHECK(nccl_cluster_npoints(8 << 20) == 4);                /* 1, 2, 4, 8 MiB */
	CHECK(nccl_cluster_npoints(1.5 * (1 << 20)) == 2);        /* 1 MiB, then the largest itself */
	CHECK(nccl_cluster_npoints(8.0 * (1ull << 30)) == 14);    /* 1 MiB .. 8 GiB */
	CHECK(nccl_cluster_npoints((1 << 20) - 1) == 0);
	CHECK(nccl_cluster_npoints(NAN) == 0);
	CHECK(nccl_cluster_npoints(-1) == 0);
}

static const char *const good_uid =
	"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

/* One bad argument set; returns 0 when refused with its own reason and NCCL never opened. */
static int one_bad_call(int first, int ngpus, int total, double max_bytes, size_t cap, const char *uid,
			const char *expect, char *out, size_t outlen)
{
	struct gv_cluster_ar_point pts[16];
	size_t n = cap;
	char net[32] = "x", err[256] = "";
	int rc = nccl_cluster_allreduce(uid, first, ngpus, total, max_bytes, 1000, pts, &n, net, sizeof net, err,
					sizeof err);
	snprintf(out, outlen, "%s", err);
	if (rc != -1 || !strstr(err, expect) || net[0])
		return 1;
	/* GPUVET_NCCL_LIB points nowhere: any NCCL call would have left the loader's error */
	return gpu_dl_nccl_error() != NULL ? 2 : 0;
}

static int bad_args(char *out, size_t outlen)
{
	int r = 0;
	r = r ? r : one_bad_call(0, 1, 0, 1 << 20, 16, good_uid, "0 ranks in all", out, outlen);
	r = r ? r : one_bad_call(0, 1, -3, 1 << 20, 16, good_uid, "-3 ranks in all", out, outlen);
	r = r ? r : one_bad_call(-1, 1, 4, 1 << 20, 16, good_uid, "first rank -1 with 1 gpus is out of range", out, outlen);
	r = r ? r : one_bad_call(3, 2, 4, 1 << 20, 16, good_uid, "first rank 3 with 2 gpus is out of range for 4", out, outlen);
	r = r ? r : one_bad_call(0, 0, 4, 1 << 20, 16, good_uid, "0 gpus on this node", out, outlen);
	r = r ? r : one_bad_call(0, 1, 4, 1000, 16, good_uid, "must be 1 MiB", out, outlen);
	r = r ? r : one_bad_call(0, 1, 4, 64 << 20, 6, good_uid, "room for 6 points, 7 sizes", out, outlen);
	r = r ? r : one_bad_call(0, 1, 4, 1 << 20, 16, "zz", "hex digits", out, outlen);
	return r ? 10 + r : 0;
}

static void test_cluster_args_checked_before_nccl(void)
{
	CHECK(in_child(bad_args, 1) == 0);
	if (child_text[0])
		fprintf(stderr, "  last refusal: %s\n", child_text);
}

static int available_here(char *out, size_t outlen)
{
	int n = -1;
	int rc = nccl_pair_available(&n, out, outlen);
	return rc == -1 && n == 0 ? 0 : 1;
}

static void test_available_names_what_is_missing(void)
{
	/* this machine: NCCL loads (the toolkit's), no GPU */
	CHECK(in_child(available_here, 0) == 0);
	CHECK(strstr(child_text, "no NVIDIA GPU (") != NULL);
	CHECK(strstr(child_text, "NCCL") == NULL);
	/* and without NCCL both are named */
	CHECK(in_child(available_here, 1) == 0);
	CHECK(strstr(child_text, "no NVIDIA GPU (") != NULL);
	CHECK(strstr(child_text, "; NCCL not found: cannot load " NO_NCCL) != NULL);
}

static int pair_without_gpu(char *out, size_t outlen)
{
	double ab = 0, ba = 0;
	char net[32] = "x";
	if (nccl_pair_run(good_uid, 1, 0, &ab, &ba, net, sizeof net, out, outlen) != -1 || !strstr(out, "timeout 0 ms"))
		return 1;
	if (nccl_pair_run("abc", 1, 1000, &ab, &ba, net, sizeof net, out, outlen) != -1 || !strstr(out, "hex digits"))
		return 2;
	/* well-formed, but no GPU: fails at once with the CUDA error, figures NAN (lower 0: rank 1) */
	if (nccl_pair_run(good_uid, 0, 1000, &ab, &ba, net, sizeof net, out, outlen) != -1)
		return 3;
	return isnan(ab) && isnan(ba) && !net[0] && strstr(out, "nccl pair (rank 1 of 2, gpu 0): cuda") ? 0 : 4;
}

static void test_pair_run_fails_cleanly_without_gpu(void)
{
	CHECK(in_child(pair_without_gpu, 0) == 0);
	fprintf(stderr, "  nccl_pair_run here: %s\n", child_text);
}

static int cluster_without_gpu(char *out, size_t outlen)
{
	struct gv_cluster_ar_point pts[8];
	size_t n = 8;
	char net[32] = "x";
	if (nccl_cluster_allreduce(good_uid, 2, 2, 4, 4 << 20, 1000, pts, &n, net, sizeof net, out, outlen) != -1)
		return 1;
	return n == 0 && !net[0] && strstr(out, "cluster all-reduce (ranks 2..3 of 4): cuda") ? 0 : 2;
}

static void test_cluster_fails_cleanly_without_gpu(void)
{
	CHECK(in_child(cluster_without_gpu, 0) == 0);
	fprintf(stderr, "  nccl_cluster_allreduce here: %s\n", child_text);
}

static int uid_here(char *out, size_t outlen)
{
	char a[HEXLEN + 1], b[HEXLEN + 1];
	unsigned char id[NCCL_PAIR_UID_BYTES];
	if (nccl_pair_uid(a, out, outlen))
		return 1;
	if (nccl_pair_uid(b, out, outlen))
		return 2;
	/* NCCL makes the id without a GPU (its bootstrap address and a random magic): each call its own */
	return strlen(a) == HEXLEN && !nccl_pair_uid_decode(a, id, out, outlen) && strcmp(a, b) ? 0 : 3;
}

static void test_uid_from_nccl(void)
{
	CHECK(in_child(uid_here, 0) == 0);
	CHECK(in_child(uid_here, 1) == 1);
	CHECK(strstr(child_text, "ncclGetUniqueId: ncclSystemError: cannot load " NO_NCCL) != NULL);
}

TEST_MAIN(T(test_uid_hex_round_trip), T(test_uid_bad_hex_refused), T(test_npoints), T(test_uid_from_nccl),
	  T(test_cluster_args_checked_before_nccl), T(test_available_names_what_is_missing),
	  T(test_pair_run_fails_cleanly_without_gpu), T(test_cluster_fails_cleanly_without_gpu))
