/*
 * test_rendezvous_auth.c - what rank 0 of the rendezvous lets in and what it
 * refuses (#56, platform/rendezvous.h and rendezvous_wire.h), over 127.0.0.1
 * with forked clients that speak the wire by hand (rendezvous_wire.h's
 * functions, or raw bytes): garbage and old-style hellos, a rank out of
 * range, another size, a duplicate, each told why; the job's token (a rank
 * with it welcomed, without it or with another refused, a token on one side
 * only named so, a rank 0 without the token unable to welcome a rank that has
 * one); a message replayed or altered ends its connection; idle connections
 * expire after 5 s and take no rank; bytes without a hello are cut off at
 * 4 KiB; a late rank told it is late; the admit callback's refusal; the
 * clock's skew and its bound.  Plus HMAC-SHA256 against RFC 4231.
 */
#include "tests/unit/t.h"
#include "platform/rendezvous.h"
#include "platform/rendezvous_wire.h"
#include "common/crypto.h"
#include "tests/unit/rdzv_t.h"

#include <arpa/inet.h>
#include <math.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define TOKEN "test-token-0123456789abcdef"

/* What a hand-made client does, and what it must see. */
struct raw {
	int rank, size;
	const char *token;      /* its hello's proof key ("" none) */
	const char *pre;        /* sent instead of a hello (garbage, an old-style hello); NULL: a proper hello */
	size_t len;             /* then this many bytes of 'a', no line's end */
	const char *after;      /* after the welcome: one message framed as this rank's seq 0 */
	int replay;             /* ... and then that same framed line again */
	const char *want;       /* the refusal must hold this; NULL: it must be welcomed */
};

static int line_of(int fd, char *buf, size_t cap)
{
	size_t n = 0;
	while (n + 1 < cap) {
		ssize_t r = recv(fd, buf + n, 1, 0);
		if (r <= 0)
			return -1;
		if (buf[n] == '\n') {
			buf[n] = '\0';
			return (int)n;
		}
		n++;
	}
	return -1;
}

/* The proper hello: rank, size, a nonce, the token flag, framed with the proof over n0. */
static int send_hello(int fd, const struct raw *w, const uint8_t n0[32], uint8_t nr[32])
{
	char hex[65], text[512];
	gv_random_bytes(nr, 32);
	rdzv_hex(nr, 32, hex);
	snprintf(text, sizeof text, "{\"rank\":%d,\"size\":%d,\"nonce\":\"%s\",\"token\":%s,\"clock\":1}", w->rank, w->size,
		 hex, w->token[0] ? "true" : "false");
	size_t n;
	char *line = rdzv_wire_frame((const uint8_t *)w->token, strlen(w->token), 'H', n0, 32, text, strlen(text), &n);
	int rc = send(fd, line, n, MSG_NOSIGNAL) == (ssize_t)n ? 0 : -1;
	free(line);
	return rc;
}

/* After the welcome: `after` as its first framed message (again when replay), then `len` bytes. */
static void send_after(int fd, const struct raw *w, const uint8_t key[32])
{
	uint8_t seq[8];
	size_t n;
	rdzv_wire_seq(0, seq);
	char *line = w->after ? rdzv_wire_frame(key, 32, 'B', seq, 8, w->after, strlen(w->after), &n) : NULL;
	for (int i = 0; line && i < 1 + w->replay; i++)
		if (send(fd, line, n, MSG_NOSIGNAL) < 0)
			break;
	free(line);
}

static void send_fill(int fd, size_t len)
{
	char *b = malloc(1 << 16);
	memset(b, 'a', 1 << 16);
	while (len > 0) {
		ssize_t k = send(fd, b, len < (1u << 16) ? len : 1u << 16, MSG_NOSIGNAL);
		if (k <= 0)
			break;   /* rank 0 cut it off */
		len -= (size_t)k;
	}
	free(b);
}

static int raw_client(int port, const struct raw *w)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port), .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	struct timeval tv = { .tv_sec = 30 };
	char line[4096], why[256];
	uint8_t n0[32], nr[32], key[32];
	int auth;
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a))
		return 10;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
	int n = line_of(fd, line, sizeof line), first = n < 0 ? -1 : rdzv_wire_first(line, (size_t)n, n0, &auth, why, sizeof why);
	if (first == 1)   /* refused at once: a late arrival */
		return w->want && strstr(why, w->want) ? 0 : 16;
	if (first)
		return 11;
	if (w->pre ? send(fd, w->pre, strlen(w->pre), MSG_NOSIGNAL) < 0 : send_hello(fd, w, n0, nr))
		return 12;
	send_fill(fd, w->len);
	n = line_of(fd, line, sizeof line);
	if (n < 0)
		return w->want && !w->want[0] ? 0 : 13;   /* want "": cut off without a word is fine */
	if (line[0] == '{') {
		int rc = rdzv_wire_first(line, (size_t)n, n0, &auth, why, sizeof why);
		if (rc != 1 || !w->want || !strstr(why, w->want)) {
			fprintf(stderr, "rank %d refused: %s (wanted %s)\n", w->rank, rc == 1 ? why : line, w->want ? w->want : "a welcome");
			return 14;
		}
		return 0;
	}
	rdzv_wire_key(w->token, n0, nr, key);
	send_after(fd, w, key);
	char c;
	while (recv(fd, &c, 1, 0) > 0)   /* until rank 0 closes */
		;
	close(fd);
	return w->want ? 15 : 0;
}

static pid_t spawn_raw(int port, struct raw w)
{
	pid_t p = fork();
	if (p == 0)
		_exit(raw_client(port, &w));
	return p;
}

static void test_hmac_sha256_rfc4231(void)
{
	uint8_t key[20], out[32];
	char hex[65];
	memset(key, 0x0b, sizeof key);
	gv_hmac_sha256(key, sizeof key, "Hi There", 8, out);   /* RFC 4231 test case 1 */
	rdzv_hex(out, 32, hex);
	CHECK_STR(hex, "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
	gv_hmac_sha256("Jefe", 4, "what do ya want for nothing?", 28, out);   /* test case 2 */
	rdzv_hex(out, 32, hex);
	CHECK_STR(hex, "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
	const void *parts[2] = { "what do ya ", "want for nothing?" };
	size_t lens[2] = { 11, 17 };
	uint8_t out2[32];
	gv_hmac_sha256_parts("Jefe", 4, parts, lens, 2, out2);
	CHECK(gv_mem_equal(out, out2, 32));
	gv_hmac_sha256("", 0, "", 0, out);   /* an empty key: the unauthenticated run's checksum */
	rdzv_hex(out, 32, hex);
	CHECK_STR(hex, "b613679a0814d9ec772f95d778c35fc5ff1697c493715653c6c712144292c5ad");
}

static void test_garbage_range_size_duplicate(void)
{
	char addr[64], err[256];
	struct rdzv *r = listen_tok(5, NULL, addr);
	CHECK(r != NULL);
	if (!r)
		return;
	int port = rdzv_port(r);
	pid_t bad[5] = {
		spawn_raw(port, (struct raw){ .token = "", .pre = "hello?\n", .want = "no proof" }),
		spawn_raw(port, (struct raw){ .token = "", .pre = "{\"rank\":1,\"size\":5}\n", .want = "no proof" }),
		spawn_raw(port, (struct raw){ .rank = 9, .size = 5, .token = "", .want = "rank 9 is out of range 1..4" }),
		spawn_raw(port, (struct raw){ .rank = 3, .size = 7, .token = "", .want = "says the job has 7 ranks, rank 0 has 5" }),
		0,
	};
	pid_t k1 = spawn_raw(port, (struct raw){ .rank = 1, .size = 5, .token = "", .after = "{\"ok\":1}", .replay = 1 });
	CHECK(rdzv_gather_hellos(r, 2000) == 1);
	for (int i = 0; i < 4; i++)
		CHECK(exit_code(bad[i]) == 0);   /* each was told why, then closed */
	CHECK(strstr(rdzv_refused_why(r, 3), "says the job has 7 ranks") != NULL);
	CHECK(rdzv_refused_why(r, 2) == NULL && rdzv_hello(r, 3) == NULL);
	/* after the arrivals: a second rank 1 is told the arrivals are over */
	bad[4] = spawn_raw(port, (struct raw){ .rank = 1, .size = 5, .token = "", .want = "stopped waiting" });
	/* rank 1: its message once, then the replay of it ends the connection */
	int from, got = 0;
	json_t *m = NULL;
	CHECK(rdzv_recv(r, &from, &m, 10000, err, sizeof err) == 0 && from == 1 && json_object_get(m, "ok"));
	json_decref(m);
	CHECK(rdzv_recv(r, &from, &m, 10000, err, sizeof err) == 0 && from == 1 && m == NULL);
	CHECK(strstr(err, "MAC does not match") != NULL);
	got = rdzv_recv(r, &from, &m, 2000, err, sizeof err);
	CHECK(got == -1 && strstr(err, "no live rank left"));
	usleep(300 * 1000);   /* the late one has connected by now */
	rdzv_close(r);   /* the late one waiting in the listener's queue is told why as rank 0 closes */
	int e4 = exit_code(bad[4]), e1 = exit_code(k1);
	if (e4 || e1)
		fprintf(stderr, "late %d, rank 1 %d\n", e4, e1);
	CHECK(e4 == 0 && e1 == 0);
}

/*
 * A rank 1 of size that joins with token and, once welcomed, waits for {"n":7}; exit 0 when it came
 * (or, with want_refusal, when it was refused for that reason).
 */
static pid_t spawn_join(const char *addr, int size, const char *token, double shift, const char *want_refusal)
{
	pid_t p = fork();
	if (p)
		return p;
	struct rdzv *c = NULL;
	char err[400];
	struct rdzv_join j = { .token = token, .clock_shift_s = shift };
	int rc = rdzv_connect(addr, 1, size, &j, NULL, 10000, &c, err, sizeof err);
	if (want_refusal) {
		if (rc == 0 || !strstr(err, want_refusal))
			fprintf(stderr, "join: %s (wanted %s)\n", rc ? err : "welcomed", want_refusal);
		_exit(rc != 0 && strstr(err, want_refusal) ? 0 : 1);
	}
	if (rc) {
		fprintf(stderr, "join: %s\n", err);
		_exit(2);
	}
	int from;
	json_t *m = NULL;
	rc = rdzv_recv(c, &from, &m, 10000, err, sizeof err);
	int ok = rc == 0 && m && json_integer_value(json_object_get(m, "n")) == 7;
	json_decref(m);
	rdzv_close(c);
	_exit(ok ? 0 : 3);
}

static void test_token(void)
{
	char addr[64], err[256];
	struct rdzv *r = listen_tok(3, TOKEN, addr);   /* rank 2 never comes: the arrivals last their 3 s */
	CHECK(r != NULL);
	if (!r)
		return;
	CHECK(rdzv_authenticated(r));
	pid_t none = spawn_join(addr, 3, NULL, 0, "refused by rank 0: bad proof: that rank has no GPUVET_CLUSTER_TOKEN");
	pid_t other = spawn_join(addr, 3, "another-token-0123456789", 0, "refused by rank 0: bad proof: not this job's");
	pid_t good = spawn_join(addr, 3, TOKEN, 0, NULL);
	CHECK(rdzv_gather_hellos(r, 3000) == 1);
	CHECK(rdzv_refused_why(r, 1) != NULL && strstr(rdzv_refused_why(r, 1), "bad proof"));
	json_t *q = json_pack("{s:i}", "n", 7);
	CHECK(rdzv_send(r, 1, q, 5000, err, sizeof err) == 0);
	json_decref(q);
	CHECK(exit_code(none) == 0 && exit_code(other) == 0 && exit_code(good) == 0);
	rdzv_close(r);
	/* a rank with a token and a rank 0 without one: refused, and the rank is told it is rank 0 that has none */
	r = listen_tok(2, NULL, addr);
	CHECK(r && !rdzv_authenticated(r));
	pid_t k = spawn_join(addr, 2, TOKEN, 0, "rank 0 has none");
	CHECK(rdzv_gather_hellos(r, 3000) == 0);
	CHECK(exit_code(k) == 0);
	rdzv_close(r);
}

/* rank 0 welcomes whom the caller admits, and says why not otherwise. */
static int admit_odd(void *arg, int rank, const json_t *hello, json_t *welcome, char *why, size_t whylen)
{
	(void)rank;
	if (strcmp(json_string_value(json_object_get(hello, "addr")), "127.0.0.1")) {
		snprintf(why, whylen, "not from loopback");
		return -1;
	}
	if (*(int *)arg) {
		snprintf(why, whylen, "not today");
		return -1;
	}
	json_object_set_new(welcome, "deadline_left_s", json_real(42));
	return 0;
}

static void test_admit_and_clock(void)
{
	char addr[64], err[256];
	int refuse = 1;
	struct rdzv *r = listen_tok(2, TOKEN, addr);
	CHECK(r != NULL);
	if (!r)
		return;
	rdzv_set_admit(r, admit_odd, &refuse);
	pid_t k = spawn_join(addr, 2, TOKEN, 0, "refused by rank 0: not today");
	CHECK(rdzv_gather_hellos(r, 3000) == 0);
	CHECK(exit_code(k) == 0);
	rdzv_close(r);
	r = listen_tok(2, TOKEN, addr);
	refuse = 0;
	rdzv_set_admit(r, admit_odd, &refuse);
	k = spawn_join(addr, 2, TOKEN, 34560000.0, NULL);   /* 400 days ahead */
	CHECK(rdzv_gather_hellos(r, 10000) == 1);
	const json_t *h = rdzv_hello(r, 1);
	double skew = json_real_value(json_object_get(h, "clock_skew_s"));
	double unc = json_real_value(json_object_get(h, "clock_skew_unc_s"));
	/* one machine, one clock: the estimate is the shift within half the round trip */
	CHECK(unc >= 0 && unc < 5);
	CHECK(fabs(skew - 34560000.0) <= unc + 1e-3);
	json_t *q = json_pack("{s:i}", "n", 7);
	CHECK(rdzv_send(r, 1, q, 5000, err, sizeof err) == 0);
	json_decref(q);
	CHECK(exit_code(k) == 0);
	rdzv_close(r);
}

/*
 * The skew's bound is a bound even when rank 0 loses its core the moment its challenge is written (a
 * loaded machine: make test beside busy loops read 10 ms of skew with a bound of 0.3 ms): rank 0 and
 * the joining ranks share one CPU, so the woken joiner runs first and reads its clock before rank 0
 * goes on.  The challenge's time is read before it is sent, so the joiner's clock is never before it.
 */
static void test_clock_bound_holds_when_rank_0_is_preempted(void)
{
	cpu_set_t was, one;
	CHECK(sched_getaffinity(0, sizeof was, &was) == 0);
	CPU_ZERO(&one);
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &was)) {
			CPU_SET(c, &one);
			break;
		}
	CHECK(sched_setaffinity(0, sizeof one, &one) == 0);   /* the children inherit it */
	int bad = 0;
	for (int i = 0; i < 200; i++) {
		char addr[64], err[256];
		struct rdzv *r = listen_tok(2, TOKEN, addr);
		if (!r) {
			bad++;
			break;
		}
		pid_t k = spawn_join(addr, 2, TOKEN, 0, NULL);
		int got = rdzv_gather_hellos(r, 10000);
		const json_t *h = rdzv_hello(r, 1);
		double skew = json_real_value(json_object_get(h, "clock_skew_s"));
		double unc = json_real_value(json_object_get(h, "clock_skew_unc_s"));
		if (got != 1 || !(unc >= 0) || !(fabs(skew) <= unc + 1e-6)) {
			fprintf(stderr, "round %d: skew %.6f s, bound %.6f s\n", i, skew, unc);
			bad++;
		}
		json_t *q = json_pack("{s:i}", "n", 7);
		CHECK(rdzv_send(r, 1, q, 5000, err, sizeof err) == 0);
		json_decref(q);
		CHECK(exit_code(k) == 0);
		rdzv_close(r);
	}
	CHECK(bad == 0);
	sched_setaffinity(0, sizeof was, &was);
}

static void test_idlers_expire_and_floods_are_cut(void)
{
	char addr[64];
	struct rdzv *r = listen_tok(3, TOKEN, addr);
	CHECK(r != NULL);
	if (!r)
		return;
	int port = rdzv_port(r);
	pid_t idle[20];
	for (int i = 0; i < 20; i++)   /* say nothing: each is dropped 5 s after its challenge */
		idle[i] = spawn_raw(port, (struct raw){ .token = "", .pre = "", .want = "no hello within 5 s" });
	pid_t flood = spawn_raw(port, (struct raw){ .token = "", .pre = "", .len = 8u << 20, .want = "" });
	pid_t good = spawn_join(addr, 3, TOKEN, 0, NULL);
	long long t0 = ms_now();
	CHECK(rdzv_gather_hellos(r, 7000) == 1);   /* rank 2 never comes: rank 0 waits the whole 7 s */
	CHECK(ms_now() - t0 >= 6500);
	for (int i = 0; i < 20; i++)
		CHECK(exit_code(idle[i]) == 0);
	CHECK(exit_code(flood) == 0);
	CHECK(rdzv_hello(r, 1) != NULL);
	rdzv_close(r);
	CHECK(exit_code(good) == 3);   /* welcomed; rank 0 closed without a message */
}

TEST_MAIN(T(test_hmac_sha256_rfc4231), T(test_garbage_range_size_duplicate), T(test_token), T(test_admit_and_clock), T(test_clock_bound_holds_when_rank_0_is_preempted),
	  T(test_idlers_expire_and_floods_are_cut))
