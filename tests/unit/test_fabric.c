/*
 * test_fabric.c - benches/fabric.h for real (#49): two forked processes on
 * 127.0.0.1, each with its own libfabric endpoint (the tcp provider, forced),
 * their addresses passed through pipes.  A pair measures both ways and the
 * latency, and both sides return the same figures; a peer killed mid-pair
 * and a peer that never comes end in -1 within the timeout plus 5 s; a
 * missing library and an unknown provider are refused with a reason naming
 * them; three nodes go through the round-robin schedule with no barrier
 * between rounds (a partner's hello may come while a node still measures);
 * a node whose partner stalls (stopped: its sends stay in flight) then
 * measures its next pair.  Each process loads libfabric itself (nothing before the fork).
 * Prints "skipped: ..." and passes only where libfabric is not installed.
 */
#include "tests/unit/t.h"
#include "benches/fabric.h"
#include "benches/fabric_int.h"

#include <dlfcn.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define SLACK_S 5.0

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* What a side sends its parent: its rc, figures, time taken, provider and error. */
struct side {
	int rc;
	struct fabric_pair_result r;
	double seconds;
	char provider[64];
	char err[256];
};

static void put_line(int fd, const char *s)
{
	size_t n = strlen(s);
	if (write(fd, s, n) != (ssize_t)n || write(fd, "\n", 1) != 1)
		_exit(90);
}

static int get_line(int fd, char *buf, size_t len)
{
	size_t n = 0;
	char c;
	while (n + 1 < len && read(fd, &c, 1) == 1 && c != '\n')
		buf[n++] = c;
	buf[n] = '\0';
	return n ? 0 : -1;
}

enum mode { PAIR, DIE_MID_PAIR, NEVER_PAIR };

/* One side: open on 127.0.0.1, swap addresses over (out, in), run the pair; *s back on res_fd. */
static int side(int lower, enum mode mode, int out, int in, int res_fd, const struct fabric_pair_opts *o)
{
	struct side s;
	memset(&s, 0, sizeof s);
	struct fabric *f = NULL;
	char peer[600];
	s.rc = fabric_open("127.0.0.1", &f, s.err, sizeof s.err);
	if (s.rc == 0) {
		snprintf(s.provider, sizeof s.provider, "%s", fabric_provider(f));
		put_line(out, fabric_addr(f));
		if (get_line(in, peer, sizeof peer))
			_exit(91);
		if (mode == NEVER_PAIR) {   /* here, but never measures: wait to be killed */
			pause();
			_exit(0);
		}
		if (mode == DIE_MID_PAIR)
			put_line(res_fd, "started");   /* the parent kills it a moment later */
		double t0 = now_s();
		s.rc = fabric_pair(f, peer, lower, o, &s.r, s.err, sizeof s.err);
		s.seconds = now_s() - t0;
	}
	if (write(res_fd, &s, sizeof s) != sizeof s)
		_exit(92);
	fabric_close(f);
	return 0;
}

struct run { pid_t pid[2]; int res[2]; };

static void start(struct run *r, const enum mode mode[2], const struct fabric_pair_opts *o)
{
	int ab[2], ba[2];
	if (pipe(ab) || pipe(ba))
		abort();
	for (int i = 0; i < 2; i++) {
		int res[2];
		if (pipe(res))
			abort();
		r->pid[i] = fork();
		if (r->pid[i] == 0) {
			close(res[0]);
			setenv("GPUVET_FABRIC_PROVIDER", "tcp", 1);
			_exit(side(i == 0, mode[i], i == 0 ? ab[1] : ba[1], i == 0 ? ba[0] : ab[0], res[1], o));
		}
		close(res[1]);
		r->res[i] = res[0];
	}
	close(ab[0]), close(ab[1]), close(ba[0]), close(ba[1]);
}

static int collect(struct run *r, int i, struct side *s)
{
	ssize_t n = read(r->res[i], s, sizeof *s);
	close(r->res[i]);
	int st = 0;
	waitpid(r->pid[i], &st, 0);
	return n == (ssize_t)sizeof *s ? 0 : -1;
}

/* 1 when libfabric cannot be loaded here at all (the only reason to skip).  Tried in a child:
 * this process never loads it (what it allocates for good would be leaks to LeakSanitizer). */
static int no_libfabric(void)
{
	pid_t p = fork();
	if (p == 0)
		_exit(dlopen("libfabric.so.1", RTLD_NOW | RTLD_LOCAL) ? 0 : 1);
	int st = 0;
	waitpid(p, &st, 0);
	return !WIFEXITED(st) || WEXITSTATUS(st) != 0;
}

static void test_pair_measures_both_ways(void)
{
	struct fabric_pair_opts o = { .seconds_each_way = 0.3, .lat_iters = 50, .timeout_ms = 30000 };
	const enum mode m[2] = { PAIR, PAIR };
	struct run r;
	struct side a, b;
	start(&r, m, &o);
	CHECK(collect(&r, 0, &a) == 0 && collect(&r, 1, &b) == 0);
	if (a.rc || b.rc)
		fprintf(stderr, "a: %s\nb: %s\n", a.err, b.err);
	CHECK(a.rc == 0 && b.rc == 0);
	CHECK(strstr(a.provider, "tcp") != NULL);
	CHECK(a.r.gbps_ab > 0 && a.r.gbps_ba > 0 && a.r.lat_us > 0);
	/* both sides end with the same three figures */
	CHECK(a.r.gbps_ab == b.r.gbps_ab && a.r.gbps_ba == b.r.gbps_ba && a.r.lat_us == b.r.lat_us);
	/* 0.3 s each way plus latency: well inside its timeout */
	CHECK(a.seconds >= 0.6 && a.seconds < 30 + SLACK_S);
	printf("tcp pair on 127.0.0.1: a->b %.3f GB/s, b->a %.3f GB/s, %.1f us\n", a.r.gbps_ab, a.r.gbps_ba,
	       a.r.lat_us);
}

static void test_peer_killed_mid_pair(void)
{
	/* long phases, so the kill lands while a streams to b */
	struct fabric_pair_opts o = { .seconds_each_way = 30, .timeout_ms = 4000 };
	const enum mode m[2] = { PAIR, DIE_MID_PAIR };
	struct run r;
	struct side a;
	start(&r, m, &o);
	char line[32];
	CHECK(get_line(r.res[1], line, sizeof line) == 0 && !strcmp(line, "started"));
	usleep(300 * 1000);
	kill(r.pid[1], SIGKILL);
	CHECK(collect(&r, 0, &a) == 0);
	struct side b;
	collect(&r, 1, &b);
	CHECK(a.rc == -1);
	CHECK(strstr(a.err, "peer") != NULL);
	CHECK(a.seconds < 4 + SLACK_S);
	printf("peer killed mid-pair: %s (after %.1f s)\n", a.err, a.seconds);
}

static void test_peer_never_pairs(void)
{
	struct fabric_pair_opts o = { .timeout_ms = 1500 };
	const enum mode m[2] = { PAIR, NEVER_PAIR };
	struct run r;
	struct side a, b;
	start(&r, m, &o);
	CHECK(collect(&r, 0, &a) == 0);
	kill(r.pid[1], SIGKILL);
	collect(&r, 1, &b);
	CHECK(a.rc == -1);
	CHECK_STR(a.err, "peer did not answer within 1.5 s");
	CHECK(a.seconds >= 1.4 && a.seconds < 1.5 + SLACK_S);
}

/* Three nodes through the round-robin schedule, no barrier between rounds: a node done early says
 * hello to its next partner while that one still measures its previous pair. */
static const int rounds3[3][2] = { { 0, 1 }, { 0, 2 }, { 1, 2 } };

static int node3(int me, int addr_out, int addrs_in, int res_fd)
{
	struct fabric *f = NULL;
	char err[256], addrs[3][600];
	if (fabric_open("127.0.0.1", &f, err, sizeof err))
		return 1;
	put_line(addr_out, fabric_addr(f));
	for (int i = 0; i < 3; i++)
		if (get_line(addrs_in, addrs[i], sizeof addrs[i]))
			return 2;
	struct fabric_pair_opts o = { .seconds_each_way = 0.2, .lat_iters = 20, .timeout_ms = 30000 };
	struct fabric_pair_result r[3];
	for (int k = 0; k < 3; k++) {
		memset(&r[k], 0, sizeof r[k]);
		int a = rounds3[k][0], b = rounds3[k][1];
		if (me != a && me != b)
			continue;
		if (fabric_pair(f, addrs[me == a ? b : a], me == a, &o, &r[k], err, sizeof err)) {
			fprintf(stderr, "node %d round %d: %s\n", me, k, err);
			return 3;
		}
	}
	if (write(res_fd, r, sizeof r) != sizeof r)
		return 4;
	fabric_close(f);
	return 0;
}

static void test_three_nodes_round_robin(void)
{
	int up[3][2], res[3][2], down[3][2];
	pid_t pid[3];
	for (int i = 0; i < 3; i++) {
		if (pipe(up[i]) || pipe(res[i]) || pipe(down[i]))
			abort();
		pid[i] = fork();
		if (pid[i] == 0) {
			setenv("GPUVET_FABRIC_PROVIDER", "tcp", 1);
			_exit(node3(i, up[i][1], down[i][0], res[i][1]));
		}
		close(up[i][1]), close(res[i][1]), close(down[i][0]);
	}
	char addrs[3][600];
	for (int i = 0; i < 3; i++)
		CHECK(get_line(up[i][0], addrs[i], sizeof addrs[i]) == 0);
	for (int i = 0; i < 3; i++) {
		for (int j = 0; j < 3; j++)
			put_line(down[i][1], addrs[j]);
		close(down[i][1]);
	}
	struct fabric_pair_result r[3][3];
	for (int i = 0; i < 3; i++) {
		CHECK(read(res[i][0], r[i], sizeof r[i]) == sizeof r[i]);
		close(res[i][0]), close(up[i][0]);
		int st = 0;
		waitpid(pid[i], &st, 0);
		CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	}
	for (int k = 0; k < 3; k++) {   /* both nodes of each round hold the same figures */
		const struct fabric_pair_result *a = &r[rounds3[k][0]][k], *b = &r[rounds3[k][1]][k];
		CHECK(a->gbps_ab > 0 && a->gbps_ba > 0 && a->lat_us > 0);
		CHECK(a->gbps_ab == b->gbps_ab && a->gbps_ba == b->gbps_ba && a->lat_us == b->lat_us);
	}
}

/* A stalled partner (stopped, so A's sends to it stay in flight), then a healthy one: the sends stuck
 * toward the first must not hold the second pair's window. */
struct stall_res { int rc1, rc2; double s1; struct fabric_pair_result r2; };

static int stall_node(int me, int up, int down, int res_fd)
{
	struct fabric *f = NULL;
	char err[256], addrs[3][600];
	if (fabric_open("127.0.0.1", &f, err, sizeof err))
		return 1;
	put_line(up, fabric_addr(f));
	for (int i = 0; i < 3; i++)
		if (get_line(down, addrs[i], sizeof addrs[i]))
			return 2;
	struct fabric_pair_opts stall = { .seconds_each_way = 30, .timeout_ms = 3000 },
				quick = { .seconds_each_way = 0.2, .lat_iters = 20, .timeout_ms = 30000 };
	struct stall_res s = { 0 };
	struct fabric_pair_result r;
	if (me == 0) {          /* A: B, then C */
		double t0 = now_s();
		s.rc1 = fabric_pair(f, addrs[1], 1, &stall, &r, err, sizeof err);
		s.s1 = now_s() - t0;
		s.rc2 = fabric_pair(f, addrs[2], 1, &quick, &s.r2, err, sizeof err);
		if (s.rc2)
			fprintf(stderr, "A with C: %s\n", err);
	} else if (me == 1) {   /* B: stopped by the parent while A streams to it */
		put_line(res_fd, "started");
		stall.timeout_ms = 600000;
		fabric_pair(f, addrs[0], 0, &stall, &r, err, sizeof err);
		return 3;
	} else {                /* C: at once; A comes once its pair with B has failed */
		s.rc2 = fabric_pair(f, addrs[0], 0, &quick, &s.r2, err, sizeof err);
	}
	if (write(res_fd, &s, sizeof s) != sizeof s)
		return 4;
	return 0;
}

static void test_pair_after_a_stalled_partner(void)
{
	int up[3][2], res[3][2], down[3][2];
	pid_t pid[3];
	for (int i = 0; i < 3; i++) {
		if (pipe(up[i]) || pipe(res[i]) || pipe(down[i]))
			abort();
		pid[i] = fork();
		if (pid[i] == 0) {
			setenv("GPUVET_FABRIC_PROVIDER", "tcp", 1);
			_exit(stall_node(i, up[i][1], down[i][0], res[i][1]));
		}
		close(up[i][1]), close(res[i][1]), close(down[i][0]);
	}
	char addrs[3][600], line[32];
	for (int i = 0; i < 3; i++)
		CHECK(get_line(up[i][0], addrs[i], sizeof addrs[i]) == 0);
	for (int i = 0; i < 3; i++) {
		for (int j = 0; j < 3; j++)
			put_line(down[i][1], addrs[j]);
		close(down[i][1]);
	}
	CHECK(get_line(res[1][0], line, sizeof line) == 0 && !strcmp(line, "started"));
	usleep(500 * 1000);
	kill(pid[1], SIGSTOP);
	struct stall_res a, c;
	CHECK(read(res[0][0], &a, sizeof a) == sizeof a);
	kill(pid[1], SIGKILL);
	CHECK(read(res[2][0], &c, sizeof c) == sizeof c);
	for (int i = 0; i < 3; i++) {
		close(res[i][0]), close(up[i][0]);
		waitpid(pid[i], NULL, 0);
	}
	CHECK(a.rc1 == -1 && a.s1 < 3 + SLACK_S);
	CHECK(a.rc2 == 0 && c.rc2 == 0);
	CHECK(a.r2.gbps_ab > 0 && a.r2.gbps_ab == c.r2.gbps_ab && a.r2.lat_us == c.r2.lat_us);
}

static int open_fails(const char *env, const char *val, const char *want1, const char *want2)
{
	setenv(env, val, 1);
	struct fabric *f = (struct fabric *)1;
	char err[256] = "";
	int rc = fabric_open("127.0.0.1", &f, err, sizeof err);
	if (rc != -1 || f != NULL)
		return 1;
	if (!strstr(err, want1) || !strstr(err, want2) || strchr(err, '\n'))
		return fprintf(stderr, "err: %s\n", err), 2;
	return 0;
}

static int in_child(int (*fn)(void))
{
	pid_t p = fork();
	if (p == 0)
		_exit(fn());
	int st = 0;
	waitpid(p, &st, 0);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 100;
}

static int missing_library(void)
{
	return open_fails("GPUVET_LIBFABRIC", "/nonexistent/libfabric.so.1", "/nonexistent/libfabric.so.1", "libfabric");
}

static int unknown_provider(void)
{
	return open_fails("GPUVET_FABRIC_PROVIDER", "nosuch", "no provider nosuch", "tcp");
}

static void test_missing_library_and_provider(void)
{
	CHECK(in_child(missing_library) == 0);
	CHECK(in_child(unknown_provider) == 0);
}

static void test_provider_preference(void)
{
	CHECK(fabric_prov_rank("efa", NULL) == 0);
	CHECK(fabric_prov_rank("verbs;ofi_rxm", NULL) == 1 && fabric_prov_rank("verbs", NULL) == 1);
	CHECK(fabric_prov_rank("tcp;ofi_rxm", NULL) == 2 && fabric_prov_rank("tcp", NULL) == 2);
	CHECK(fabric_prov_rank("udp;ofi_rxd", NULL) == -1 && fabric_prov_rank("shm", NULL) == -1);
	CHECK(fabric_prov_rank("sockets", NULL) == -1 && fabric_prov_rank("tcpx", NULL) == -1);
	CHECK(fabric_prov_rank("efa", "") == 0);   /* an empty GPUVET_FABRIC_PROVIDER forces nothing */
	CHECK(fabric_prov_rank("tcp;ofi_rxm", "tcp") == 0 && fabric_prov_rank("tcp;ofi_rxm", "tcp;ofi_rxm") == 0);
	CHECK(fabric_prov_rank("efa", "tcp") == -1 && fabric_prov_rank("tcp;ofi_rxm", "ofi_rxm") == -1);
	CHECK(fabric_prov_rank("sockets", "sockets") == 0);
}

int main(void)
{
	test_provider_preference();
	if (t_failed_checks) {
		fprintf(stderr, "FAIL test_provider_preference\n");
		return 1;
	}
	if (no_libfabric()) {
		printf("skipped: libfabric.so.1 is not installed (Debian: libfabric1)\n");
		return 0;
	}
	static const struct t_case cases[] = { T(test_missing_library_and_provider), T(test_pair_measures_both_ways),
					       T(test_peer_killed_mid_pair), T(test_peer_never_pairs),
					       T(test_three_nodes_round_robin), T(test_pair_after_a_stalled_partner) };
	int failed = 0;
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		t_cur_failed = 0;
		cases[i].fn();
		if (t_cur_failed)
			fprintf(stderr, "FAIL %s\n", cases[i].name), failed++;
	}
	printf("%zu passed, %d failed\n", sizeof cases / sizeof cases[0] - (size_t)failed, failed);
	return failed ? 1 : 0;
}
