/*
 * rendezvous_join.c - a rank's side of the arrivals (platform/rendezvous.h):
 * it connects to rank 0 (again and again: rank 0 may start later), reads its
 * challenge, answers with its hello and its proof, and waits for the welcome,
 * whose MAC proves rank 0 holds the same token.  A refusal ends it with rank
 * 0's reason; a connection rank 0 dropped without one (it waited too long)
 * is tried again until the deadline.
 */
#include "platform/rendezvous_int.h"
#include "common/crypto.h"
#include "common/util.h"

#include <errno.h>
#include <math.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* One attempt on one address: a connected socket, or -1 with errno-style e. */
static int connect_one(const struct addrinfo *ai, int wait_ms, int *e)
{
	int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
	if (fd < 0) {
		*e = errno;
		return -1;
	}
	rdzv_sock_setup(fd);
	if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0)
		return fd;
	if (errno != EINPROGRESS) {
		*e = errno;
		close(fd);
		return -1;
	}
	struct pollfd pf = { .fd = fd, .events = POLLOUT };
	int rc = poll(&pf, 1, wait_ms);
	int soerr = 0;
	socklen_t sl = sizeof soerr;
	if (rc == 1 && getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) == 0 && soerr == 0)
		return fd;
	*e = rc == 1 ? soerr : ETIMEDOUT;
	close(fd);
	return -1;
}

/* Resolves and connects, again and again until the deadline (rank 0 may not listen yet). */
static int connect_retry(const char *host, int port, long long deadline, char *why, size_t whylen)
{
	char ports[8];
	snprintf(ports, sizeof ports, "%d", port);
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICSERV };
	snprintf(why, whylen, "timed out");
	do {
		struct addrinfo *res = NULL;
		int g = getaddrinfo(*host ? host : NULL, ports, &hints, &res);
		if (g)
			snprintf(why, whylen, "%s", gai_strerror(g));
		for (struct addrinfo *ai = res; ai; ai = ai->ai_next) {
			int e = 0, wait = rdzv_left_ms(deadline);
			int fd = connect_one(ai, wait < 2000 ? wait : 2000, &e);
			if (fd >= 0) {
				freeaddrinfo(res);
				return fd;
			}
			snprintf(why, whylen, "%s", strerror(e));
		}
		freeaddrinfo(res);
		int wait = rdzv_left_ms(deadline);
		if (wait > 0)
			poll(NULL, 0, wait < RDZV_RETRY_MS ? wait : RDZV_RETRY_MS);
	} while (rdzv_left_ms(deadline) > 0);
	return -1;
}

/* The next line from rank 0 before the welcome (at most RDZV_HELLO_MAX bytes): 0 with *line, -1 closed, -2 timed out. */
static int read_line(int fd, struct rdzv_buf *b, long long deadline, char **line, size_t *n, char *why, size_t whylen)
{
	for (;;) {
		if ((*line = rdzv_buf_line(b, n)))
			return 0;
		int rc = rdzv_buf_fill(fd, b, RDZV_HELLO_MAX, why, whylen);
		if ((*line = rdzv_buf_line(b, n)))
			return 0;
		if (rc == -2) {
			snprintf(why, whylen, "rank 0 sent 4 KiB without a line's end");
			return -1;
		}
		if (rc)
			return -1;
		int wait = rdzv_left_ms(deadline);
		if (wait == 0)
			return -2;
		struct pollfd pf = { .fd = fd, .events = POLLIN };
		poll(&pf, 1, wait);
	}
}

/* This rank's hello, framed with its proof of the token over rank 0's nonce; malloc'd. */
static char *hello_line(const struct rdzv_join *j, json_t *hello, int rank, int size, const uint8_t n0[RDZV_NONCE_LEN],
			uint8_t nr[RDZV_NONCE_LEN], size_t *len)
{
	char hex[2 * RDZV_NONCE_LEN + 1];
	const char *tok = j && j->token ? j->token : "";
	json_t *h = hello ? json_deep_copy(hello) : json_object();
	if (!json_is_object(h) || gv_random_bytes(nr, RDZV_NONCE_LEN)) {
		json_decref(h);
		return NULL;
	}
	rdzv_hex(nr, RDZV_NONCE_LEN, hex);
	json_object_set_new(h, "rank", json_integer(rank));
	json_object_set_new(h, "size", json_integer(size));
	json_object_set_new(h, "nonce", json_string(hex));
	json_object_set_new(h, "clock", json_real(rdzv_wall() + (j ? j->clock_shift_s : 0)));
	json_object_set_new(h, "token", json_boolean(*tok));
	char *s = json_dumps(h, JSON_COMPACT);
	json_decref(h);
	if (!s)
		return NULL;
	char *line = rdzv_wire_frame((const uint8_t *)tok, strlen(tok), 'H', n0, RDZV_NONCE_LEN, s, strlen(s), len);
	free(s);
	return line;
}

enum { JOIN_OK = 0, JOIN_RETRY = 1, JOIN_FAIL = -1 };

/* The challenge, the hello, the welcome, on a connected socket.  JOIN_RETRY when rank 0 closed it without a word. */
static int handshake(struct rdzv *z, int fd, const struct rdzv_join *j, json_t *hello, long long deadline, char *why,
		     size_t whylen)
{
	struct rdzv_buf b = { 0 };
	char *line, e2[200];
	size_t n, hn;
	uint8_t n0[RDZV_NONCE_LEN], nr[RDZV_NONCE_LEN], seq[8];
	int auth = 0, rc = read_line(fd, &b, deadline, &line, &n, e2, sizeof e2);
	if (rc) {
		rdzv_buf_free(&b);
		if (rc == -1)
			return snprintf(why, whylen, "rank 0 %s before its challenge", e2), JOIN_RETRY;
		return gv_errf(why, whylen, "rank 0 accepted the connection but sent no challenge (is it a gpuvet?)");
	}
	rc = rdzv_wire_first(line, n, n0, &auth, e2, sizeof e2);
	rdzv_buf_pop(&b, n);
	char *hl = rc ? NULL : hello_line(j, hello, z->rank, z->size, n0, nr, &hn);
	if (rc || !hl || rdzv_write_all(fd, hl, hn, rdzv_left_ms(deadline), e2, sizeof e2)) {
		free(hl);
		rdzv_buf_free(&b);
		if (rc == 1)
			return gv_errf(why, whylen, "refused by rank 0: %s", e2);
		return gv_errf(why, whylen, "%s", rc ? e2 : hl ? e2 : "no hello could be made (no random source?)");
	}
	free(hl);
	rc = read_line(fd, &b, deadline, &line, &n, e2, sizeof e2);
	json_t *w = NULL;
	if (!rc && line[0] == '{' && rdzv_wire_first(line, n, n0, &auth, e2, sizeof e2) == 1) {
		rc = gv_errf(why, whylen, "refused by rank 0: %s", e2);
	} else if (rc == -1) {
		rdzv_buf_free(&b);
		return snprintf(why, whylen, "rank 0 %s after the hello", e2), JOIN_RETRY;
	} else if (rc) {
		rc = gv_errf(why, whylen, "rank 0 did not answer the hello");
	} else {
		rdzv_wire_key(j && j->token ? j->token : "", n0, nr, z->peers[0].key);
		rdzv_wire_seq(0, seq);
		if (rdzv_wire_open(z->peers[0].key, RDZV_MAC_LEN, 'A', seq, sizeof seq, line, n, &w, e2, sizeof e2) ||
		    strcmp(json_string_value(json_object_get(w, "op")) ? json_string_value(json_object_get(w, "op")) : "", "welcome"))
			rc = gv_errf(why, whylen, "rank 0's welcome does not prove this job's GPUVET_CLUSTER_TOKEN "
				     "(rank 0 holds another one, or none)");
		else
			rdzv_buf_pop(&b, n);
	}
	if (rc) {
		json_decref(w);
		rdzv_buf_free(&b);
		return JOIN_FAIL;
	}
	z->welcome = w;
	z->peers[0].seq_in = 1;
	z->peers[0].in = b;   /* what rank 0 sent after the welcome stays */
	return JOIN_OK;
}

int rdzv_connect(const char *hostport, int rank, int size, const struct rdzv_join *j, json_t *hello, int timeout_ms,
		 struct rdzv **r, char *err, size_t errlen)
{
	char host[RDZV_HOST_MAX], why[300];
	int port;
	*r = NULL;
	if (rank < 1 || rank >= size)
		return gv_errf(err, errlen, "rank %d is out of range 1..%d", rank, size - 1);
	if (j && j->token && strlen(j->token) > RDZV_TOKEN_MAX)
		return gv_errf(err, errlen, "GPUVET_CLUSTER_TOKEN is longer than %d bytes", RDZV_TOKEN_MAX);
	if (hello && !json_is_object(hello))
		return gv_errf(err, errlen, "rendezvous hello must be a JSON object");
	if (rdzv_parse_hostport(hostport, host, &port, err, errlen))
		return -1;
	if (port == 0)
		return gv_errf(err, errlen, "cannot connect to rendezvous %s: port 0", hostport);
	long long deadline = rdzv_deadline_of(timeout_ms);
	for (;;) {
		int fd = connect_retry(host, port, deadline, why, sizeof why);
		if (fd < 0)
			return gv_errf(err, errlen, "cannot connect to rendezvous %s within %d ms: %s", hostport, timeout_ms, why);
		struct rdzv *z = rdzv_new(rank, size, hostport, j ? j->token : NULL);
		int rc = handshake(z, fd, j, hello, deadline, why, sizeof why);
		if (rc == JOIN_OK) {
			z->peers[0].fd = fd;
			rdzv_sock_addr(fd, 0, z->local, sizeof z->local);
			*r = z;
			return 0;
		}
		close(fd);
		rdzv_close(z);
		if (rc == JOIN_FAIL || rdzv_left_ms(deadline) == 0)
			return gv_errf(err, errlen, "rendezvous %s: %s", hostport, why);
		gv_debug("rendezvous %s: %s; connecting again", hostport, why);
		poll(NULL, 0, RDZV_RETRY_MS);
	}
}

const json_t *rdzv_welcome(const struct rdzv *r)
{
	return r && r->rank != 0 ? r->welcome : NULL;
}
