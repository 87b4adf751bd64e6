/*
 * test_rendezvous.c - platform/rendezvous.h for real (#49): rank 0 in this
 * process, the other ranks forked, over 127.0.0.1 with a port the kernel
 * chose.  All ranks arrive and talk both ways (a 1 MiB message too); a rank
 * that never arrives; a rank killed mid-conversation (reported once, the
 * others go on); a rank that connects before rank 0 listens; the port already
 * taken; rank 0 gone.  Time bounds are the timeout plus 5 s: they fail only a
 * wait that ignores its deadline.  Plus the HOST:PORT parser.  What rank 0
 * refuses (garbage, the token, idlers, a flood, a late rank):
 * test_rendezvous_auth.c.
 */
#include "tests/unit/t.h"
#include "platform/rendezvous.h"
#include "tests/unit/rdzv_t.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define SLACK_MS 5000

static struct rdzv *listen_any(int size, char addr[64])
{
	return listen_tok(size, NULL, addr);
}

/* A rank > 0 holding token: connects, answers each {"n":N} with {"echo":N*10,"big":...same size}, until {"bye":1}. */
static int echo_rank_tok(const char *addr, int rank, int size, const char *token)
{
	struct rdzv *r;
	char err[256];
	json_t *hello = json_pack("{s:s}", "host", "node");
	struct rdzv_join j = { .token = token };
	int rc = rdzv_connect(addr, rank, size, &j, hello, 10000, &r, err, sizeof err);
	json_decref(hello);
	if (rc) {
		fprintf(stderr, "rank %d: %s\n", rank, err);
		return 1;
	}
	for (;;) {
		int from;
		json_t *m;
		if (rdzv_recv(r, &from, &m, 20000, err, sizeof err) || from != 0) {
			fprintf(stderr, "rank %d: recv: %s\n", rank, err);
			return 2;
		}
		if (json_object_get(m, "bye")) {
			json_decref(m);
			break;
		}
		json_t *big = json_object_get(m, "big");
		json_t *a = json_pack("{s:I,s:O?}", "echo", json_integer_value(json_object_get(m, "n")) * 10, "big", big);
		json_decref(m);
		if (rdzv_send(r, 0, a, 20000, err, sizeof err)) {
			fprintf(stderr, "rank %d: send: %s\n", rank, err);
			return 3;
		}
		json_decref(a);
	}
	rdzv_close(r);
	return 0;
}

static pid_t spawn_echo(const char *addr, int rank, int size)
{
	pid_t p = fork();
	if (p == 0)
		_exit(echo_rank_tok(addr, rank, size, NULL));
	return p;
}

/* rank 0 sends {"n":n} (with a 1 MiB string when big) to `to` and checks the echo. */
static void ask(struct rdzv *r, int to, int n, int big)
{
	char err[256];
	json_t *q = json_pack("{s:i}", "n", n);
	char *s = NULL;
	if (big) {
		s = malloc(1 << 20);
		memset(s, 'x', (1 << 20) - 1);
		s[(1 << 20) - 1] = '\0';
		json_object_set_new(q, "big", json_string(s));
	}
	CHECK(rdzv_send(r, to, q, 10000, err, sizeof err) == 0);
	json_decref(q);
	int from = -1;
	json_t *a = NULL;
	CHECK(rdzv_recv(r, &from, &a, 10000, err, sizeof err) == 0);
	CHECK(from == to && a != NULL);
	CHECK(json_integer_value(json_object_get(a, "echo")) == n * 10);
	if (big)
		CHECK_STR(json_string_value(json_object_get(a, "big")), s);
	json_decref(a);
	free(s);
}

static void say_bye(struct rdzv *r, int to)
{
	char err[256];
	json_t *b = json_pack("{s:i}", "bye", 1);
	CHECK(rdzv_send(r, to, b, 10000, err, sizeof err) == 0);
	json_decref(b);
}

static void test_all_ranks_arrive_and_talk(void)
{
	char addr[64];
	struct rdzv *r = listen_any(4, addr);
	CHECK(r != NULL);
	if (!r)
		return;
	pid_t kids[3];
	for (int i = 0; i < 3; i++)
		kids[i] = spawn_echo(addr, i + 1, 4);
	CHECK(rdzv_gather_hellos(r, 20000) == 3);
	CHECK_STR(rdzv_local_addr(r), "127.0.0.1");
	for (int i = 1; i < 4; i++) {
		const json_t *h = rdzv_hello(r, i);
		CHECK(h && json_integer_value(json_object_get(h, "rank")) == i);
		CHECK_STR(json_string_value(json_object_get(h, "addr")), "127.0.0.1");
		CHECK_STR(json_string_value(json_object_get(h, "host")), "node");
		CHECK(rdzv_alive(r, i));
	}
	CHECK(rdzv_hello(r, 0) == NULL && !rdzv_alive(r, 0) && !rdzv_alive(r, 4));
	for (int i = 1; i < 4; i++)
		ask(r, i, i, i == 2);
	for (int i = 1; i < 4; i++)
		say_bye(r, i);
	for (int i = 0; i < 3; i++)
		CHECK(exit_code(kids[i]) == 0);
	/* each close is reported once, then nobody is left */
	int seen[4] = { 0 }, from;
	json_t *m;
	char err[256];
	for (int k = 0; k < 3; k++) {
		CHECK(rdzv_recv(r, &from, &m, 10000, err, sizeof err) == 0);
		CHECK(m == NULL && from >= 1 && from <= 3);
		if (from >= 1 && from <= 3)
			seen[from]++;
	}
	CHECK(seen[1] == 1 && seen[2] == 1 && seen[3] == 1);
	CHECK(rdzv_recv(r, &from, &m, 10000, err, sizeof err) == -1);
	CHECK(strstr(err, "no live rank left") != NULL);
	rdzv_close(r);
}

static void test_rank_that_never_arrives(void)
{
	char addr[64];
	struct rdzv *r = listen_any(3, addr);
	CHECK(r != NULL);
	if (!r)
		return;
	pid_t k = spawn_echo(addr, 2, 3);   /* rank 1 never comes */
	long long t0 = ms_now();
	CHECK(rdzv_gather_hellos(r, 1500) == 1);
	long long dt = ms_now() - t0;
	CHECK(dt >= 1400 && dt < 1500 + SLACK_MS);
	CHECK(rdzv_hello(r, 1) == NULL && rdzv_hello(r, 2) != NULL);
	char err[256];
	json_t *q = json_pack("{s:i}", "n", 1);
	CHECK(rdzv_send(r, 1, q, 1000, err, sizeof err) == -1 && strstr(err, "rank 1") != NULL);
	json_decref(q);
	ask(r, 2, 7, 0);
	say_bye(r, 2);
	CHECK(exit_code(k) == 0);
	rdzv_close(r);
}

static void test_rank_killed_mid_conversation(void)
{
	char addr[64];
	struct rdzv *r = listen_any(3, addr);
	CHECK(r != NULL);
	if (!r)
		return;
	pid_t k1 = spawn_echo(addr, 1, 3), k2 = spawn_echo(addr, 2, 3);
	CHECK(rdzv_gather_hellos(r, 20000) == 2);
	ask(r, 2, 1, 0);
	kill(k2, SIGKILL);
	CHECK(exit_code(k2) == 100 + SIGKILL);
	int from = -1;
	json_t *m = (json_t *)1;
	char err[256];
	long long t0 = ms_now();
	CHECK(rdzv_recv(r, &from, &m, 10000, err, sizeof err) == 0);
	CHECK(from == 2 && m == NULL);
	CHECK(ms_now() - t0 < SLACK_MS);
	CHECK(!rdzv_alive(r, 2) && rdzv_alive(r, 1));
	json_t *q = json_pack("{s:i}", "n", 1);
	CHECK(rdzv_send(r, 2, q, 1000, err, sizeof err) == -1 && strstr(err, "rank 2 is gone"));
	json_decref(q);
	ask(r, 1, 3, 0);   /* the other rank goes on */
	/* no second report for rank 2: a timeout */
	CHECK(rdzv_recv(r, &from, &m, 300, err, sizeof err) == 1);
	say_bye(r, 1);
	CHECK(exit_code(k1) == 0);
	rdzv_close(r);
}

/* A port that was free a moment ago (the kernel's choice, then released). */
static int free_port(void)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof a;
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) || getsockname(fd, (struct sockaddr *)&a, &len))
		return -1;
	close(fd);
	return ntohs(a.sin_port);
}

static void test_rank_connects_before_rank0_listens(void)
{
	int port = free_port();
	CHECK(port > 0);
	char addr[64];
	snprintf(addr, sizeof addr, "127.0.0.1:%d", port);
	pid_t k = spawn_echo(addr, 1, 2);
	usleep(700 * 1000);   /* the child is refused and retries meanwhile */
	struct rdzv *r = NULL;
	char err[256];
	CHECK(rdzv_listen(addr, 2, NULL, &r, err, sizeof err) == 0);
	if (!r) {
		kill(k, SIGKILL);
		exit_code(k);
		return;
	}
	CHECK(rdzv_gather_hellos(r, 20000) == 1);
	ask(r, 1, 5, 0);
	say_bye(r, 1);
	CHECK(exit_code(k) == 0);
	rdzv_close(r);
}

static void test_port_taken(void)
{
	char addr[64], err[256];
	struct rdzv *r = listen_any(2, addr), *r2 = NULL;
	CHECK(r != NULL);
	CHECK(rdzv_listen(addr, 2, NULL, &r2, err, sizeof err) == -1 && r2 == NULL);
	CHECK(strstr(err, "Address already in use") != NULL);
	CHECK(strstr(err, addr) != NULL && strstr(err, "cannot listen on") == err);
	CHECK(strchr(err, '\n') == NULL);
	rdzv_close(r);
	/* no rendezvous there: connect gives up at its deadline, naming the address */
	long long t0 = ms_now();
	CHECK(rdzv_connect(addr, 1, 2, NULL, NULL, 600, &r2, err, sizeof err) == -1);
	CHECK(ms_now() - t0 >= 500 && ms_now() - t0 < 600 + SLACK_MS);
	CHECK(strstr(err, addr) != NULL);
	CHECK(rdzv_listen("127.0.0.1", 2, NULL, &r2, err, sizeof err) == -1 && strstr(err, "no port"));
}

static int orphan_rank(const char *addr)
{
	struct rdzv *r;
	char err[256];
	if (rdzv_connect(addr, 1, 2, NULL, NULL, 10000, &r, err, sizeof err))
		return 1;
	int from;
	json_t *m;
	long long t0 = ms_now();
	int rc = rdzv_recv(r, &from, &m, 30000, err, sizeof err);
	long long dt = ms_now() - t0;
	int again = rdzv_recv(r, &from, &m, 30000, err, sizeof err);
	json_t *q = json_object();
	int sent = rdzv_send(r, 0, q, 1000, err, sizeof err);
	json_decref(q);
	rdzv_close(r);
	if (rc != -1 || dt >= SLACK_MS)
		return 2;
	return again == -1 && sent == -1 && strstr(err, "rank 0") ? 0 : 3;
}

static void test_rank0_gone(void)
{
	char addr[64];
	struct rdzv *r = listen_any(2, addr);
	CHECK(r != NULL);
	if (!r)
		return;
	pid_t k = fork();
	if (k == 0)
		_exit(orphan_rank(addr));
	CHECK(rdzv_gather_hellos(r, 20000) == 1);
	rdzv_close(r);
	CHECK(exit_code(k) == 0);
}

static int timeout_rank(const char *addr)
{
	struct rdzv *r;
	char err[256];
	if (rdzv_connect(addr, 1, 2, NULL, NULL, 10000, &r, err, sizeof err))
		return 1;
	int from;
	json_t *m;
	long long t0 = ms_now();
	int rc = rdzv_recv(r, &from, &m, 500, err, sizeof err);
	long long dt = ms_now() - t0;
	rdzv_close(r);
	return rc == 1 && dt >= 400 && dt < 500 + SLACK_MS ? 0 : 2;
}

static void test_recv_times_out(void)
{
	char addr[64];
	struct rdzv *r = listen_any(2, addr);
	CHECK(r != NULL);
	if (!r)
		return;
	pid_t k = fork();
	if (k == 0)
		_exit(timeout_rank(addr));
	CHECK(rdzv_gather_hellos(r, 20000) == 1);
	CHECK(exit_code(k) == 0);   /* rank 0 said nothing for its 500 ms */
	rdzv_close(r);
}

/* A child that connects to addr as rank 1 of 2 with hello {"host": host} and waits to be closed; its exit says it was welcomed. */
static pid_t spawn_join(const char *addr, const char *host, const char *want_local)
{
	pid_t p = fork();
	if (p)
		return p;
	struct rdzv *c = NULL;
	char err[256];
	json_t *h = json_pack("{s:s}", "host", host);
	if (rdzv_connect(addr, 1, 2, NULL, h, 10000, &c, err, sizeof err)) {
		fprintf(stderr, "join %s: %s\n", addr, err);
		_exit(1);
	}
	int ok = !want_local || !strcmp(rdzv_local_addr(c), want_local);
	int from;
	json_t *m = NULL;
	rdzv_recv(c, &from, &m, 10000, err, sizeof err);   /* until rank 0 closes */
	rdzv_close(c);
	_exit(ok ? 0 : 2);
}

static void test_ipv6_and_any(void)
{
	struct rdzv *r = NULL;
	char err[256], addr[64];
	if (rdzv_listen("[::1]:0", 2, NULL, &r, err, sizeof err)) {
		printf("skipped: no IPv6 loopback here (%s)\n", err);
	} else {
		snprintf(addr, sizeof addr, "[::1]:%d", rdzv_port(r));
		pid_t k = spawn_join(addr, "node", "::1");
		CHECK(rdzv_gather_hellos(r, 10000) == 1);
		CHECK_STR(json_string_value(json_object_get(rdzv_hello(r, 1), "addr")), "::1");
		rdzv_close(r);
		CHECK(exit_code(k) == 0);
	}
	/* "*": any address, an IPv4 client seen as IPv4 (not ::ffff:) */
	CHECK(rdzv_listen("*:0", 2, NULL, &r, err, sizeof err) == 0);
	snprintf(addr, sizeof addr, "127.0.0.1:%d", rdzv_port(r));
	pid_t k = spawn_join(addr, "node", "127.0.0.1");
	CHECK(rdzv_gather_hellos(r, 10000) == 1);
	CHECK_STR(json_string_value(json_object_get(rdzv_hello(r, 1), "addr")), "127.0.0.1");
	CHECK_STR(rdzv_local_addr(r), "127.0.0.1");
	rdzv_close(r);
	CHECK(exit_code(k) == 0);
	/* a name: every address it resolves to is tried (localhost may be ::1 first) */
	CHECK(rdzv_listen("127.0.0.1:0", 2, NULL, &r, err, sizeof err) == 0);
	snprintf(addr, sizeof addr, "localhost:%d", rdzv_port(r));
	k = spawn_join(addr, "by-name", NULL);
	CHECK(rdzv_gather_hellos(r, 10000) == 1);
	CHECK_STR(json_string_value(json_object_get(rdzv_hello(r, 1), "host")), "by-name");
	rdzv_close(r);
	CHECK(exit_code(k) == 0);
}

static void test_parse_hostport(void)
{
	char host[RDZV_HOST_MAX], err[256], buf[300];
	int port;
	static const struct { const char *in, *host; int port; } good[] = {
		{ "198.18.0.1:29517", "198.18.0.1", 29517 }, { "[fd00::1]:80", "fd00::1", 80 },
		{ "node-1.cluster.local:0", "node-1.cluster.local", 0 }, { "*:29500", "", 29500 },
		{ ":65535", "", 65535 }, { "[::]:1", "::", 1 },
	};
	for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
		CHECK(rdzv_parse_hostport(good[i].in, host, &port, err, sizeof err) == 0);
		CHECK_STR(host, good[i].host);
		CHECK(port == good[i].port);
		rdzv_format_hostport(host, port, buf, sizeof buf);
		char h2[RDZV_HOST_MAX];
		int p2;
		CHECK(rdzv_parse_hostport(buf, h2, &p2, err, sizeof err) == 0 && !strcmp(h2, host) && p2 == port);
	}
	static const char *const bad[] = { "", "host", "host:", "host:65536", "host:-1", "host:+80", "::1:29500",
					   "[::1]", "[::1]80", "[]:80", "[1.2.3.4]:80", "a b:1", "h:0x10", "[::1:80",
					   "host:123456", "h\n:1" };
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		err[0] = '\0';
		CHECK(rdzv_parse_hostport(bad[i], host, &port, err, sizeof err) == -1);
		CHECK(err[0] != '\0' && strchr(err, '\n') == NULL);
	}
	CHECK(rdzv_parse_hostport("::1:29500", host, &port, err, sizeof err) == -1 && strstr(err, "[ADDR]:PORT"));
}

TEST_MAIN(T(test_parse_hostport), T(test_all_ranks_arrive_and_talk), T(test_rank_that_never_arrives),
	  T(test_rank_killed_mid_conversation), T(test_rank_connects_before_rank0_listens), T(test_port_taken),
	  T(test_rank0_gone), T(test_recv_times_out), T(test_ipv6_and_any))
