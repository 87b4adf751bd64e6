/*
 * rendezvous_accept.c - rank 0's side of the arrivals (platform/rendezvous.h):
 * it listens, sends every connection a challenge, and gives a rank only to a
 * hello that proves the job's token (platform/rendezvous_wire.h), names a
 * free rank of this size and that the caller admits.  A connection without a
 * valid hello holds at most RDZV_HELLO_MAX bytes for at most RDZV_HELLO_MS,
 * in a table that only grows to RDZV_PENDING_MAX (the oldest goes first):
 * idle sockets cannot keep a rank out.  Every refused connection is sent its
 * reason, one line, before it is closed.
 */
#include "platform/rendezvous_int.h"
#include "common/crypto.h"
#include "common/util.h"

#include <errno.h>
#include <math.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int listen_on(const struct addrinfo *ai, int any, int *fd_out)
{
	int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
	if (fd < 0)
		return errno;
	int one = 1, zero = 0;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	if (ai->ai_family == AF_INET6 && any)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof zero);   /* "*": both families */
	if (bind(fd, ai->ai_addr, ai->ai_addrlen) || listen(fd, SOMAXCONN)) {
		int e = errno;
		close(fd);
		return e;
	}
	rdzv_sock_setup(fd);
	*fd_out = fd;
	return 0;
}

int rdzv_listen(const char *hostport, int size, const char *token, struct rdzv **r, char *err, size_t errlen)
{
	char host[RDZV_HOST_MAX], port[8];
	int portn;
	*r = NULL;
	if (size < 1)
		return gv_errf(err, errlen, "rendezvous size must be at least 1, not %d", size);
	if (token && strlen(token) > RDZV_TOKEN_MAX)
		return gv_errf(err, errlen, "GPUVET_CLUSTER_TOKEN is longer than %d bytes", RDZV_TOKEN_MAX);
	if (rdzv_parse_hostport(hostport, host, &portn, err, errlen))
		return -1;
	snprintf(port, sizeof port, "%d", portn);
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE | AI_NUMERICSERV };
	hints.ai_family = *host ? AF_UNSPEC : AF_INET6;
	struct addrinfo *res = NULL;
	int g = getaddrinfo(*host ? host : NULL, port, &hints, &res);
	if (g && !*host) {   /* no IPv6 on this machine: any IPv4 */
		hints.ai_family = AF_INET;
		g = getaddrinfo(NULL, port, &hints, &res);
	}
	if (g)
		return gv_errf(err, errlen, "cannot listen on %s: %s", hostport, gai_strerror(g));
	int fd = -1, e = 0;
	for (struct addrinfo *ai = res; ai && fd < 0; ai = ai->ai_next)
		e = listen_on(ai, !*host, &fd);
	freeaddrinfo(res);
	if (fd < 0)
		return gv_errf(err, errlen, "cannot listen on %s: %s", hostport, strerror(e));
	*r = rdzv_new(0, size, hostport, token);
	(*r)->lfd = fd;
	(*r)->cappend = 16;
	(*r)->pend = gv_calloc((*r)->cappend, sizeof *(*r)->pend);
	struct sockaddr_storage sa;
	socklen_t len = sizeof sa;
	if (getsockname(fd, (struct sockaddr *)&sa, &len) == 0)
		(*r)->port = ntohs(sa.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&sa)->sin6_port
							    : ((struct sockaddr_in *)&sa)->sin_port);
	gv_strlcpy((*r)->local, host, sizeof (*r)->local);
	return 0;
}

void rdzv_set_admit(struct rdzv *r, rdzv_admit_fn fn, void *arg)
{
	r->admit = fn;
	r->admit_arg = arg;
}

void rdzv_set_late_why(struct rdzv *r, const char *why)
{
	gv_strlcpy(r->late_why, why, sizeof r->late_why);
}

const char *rdzv_refused_why(const struct rdzv *r, int rank)
{
	return r && r->refused && rank >= 1 && rank < r->size ? r->refused[rank] : NULL;
}

/*
 * Tells a connection why it is refused and closes it: the line is sent (if the socket takes it at
 * once), then the write side shut, what it sent meanwhile read away, so the close sends a FIN behind
 * the line rather than a reset that could discard it.
 */
static void refuse_fd(int fd, const char *addr, const char *why)
{
	size_t n;
	char *line = rdzv_wire_refusal(why, &n);
	ssize_t w = send(fd, line, n, MSG_NOSIGNAL | MSG_DONTWAIT);
	(void)w;
	free(line);
	shutdown(fd, SHUT_WR);
	char sink[4096];
	for (int i = 0; i < 4 && recv(fd, sink, sizeof sink, MSG_DONTWAIT) > 0; i++)
		;
	close(fd);
	gv_debug("rendezvous: connection from %s refused: %s", addr, why);
}

static void pend_drop(struct rdzv *r, size_t i, int claimed, const char *why)
{
	struct rdzv_pending *p = &r->pend[i];
	if (claimed >= 1 && claimed < r->size) {
		free(r->refused[claimed]);
		r->refused[claimed] = gv_asprintf("a connection from %s claiming it was refused: %s", p->addr, why);
	}
	refuse_fd(p->fd, p->addr, why);
	rdzv_buf_free(&p->in);
	r->pend[i] = r->pend[--r->npend];
}

static void pend_add(struct rdzv *r, int fd, const char *addr)
{
	if (r->npend == RDZV_PENDING_MAX) {   /* the oldest goes: a flood of idlers cannot lock out a rank */
		size_t old = 0;
		for (size_t i = 1; i < r->npend; i++)
			if (r->pend[i].since_ms < r->pend[old].since_ms)
				old = i;
		pend_drop(r, old, -1, "too many connections without a hello; the oldest is dropped");
	}
	if (r->npend == r->cappend) {
		r->cappend *= 2;
		r->pend = gv_realloc(r->pend, r->cappend * sizeof *r->pend);
	}
	struct rdzv_pending *p = &r->pend[r->npend];
	memset(p, 0, sizeof *p);
	p->fd = fd;
	gv_strlcpy(p->addr, addr, sizeof p->addr);
	char line[192], why[96];
	size_t n = 0;
	if (gv_random_bytes(p->nonce, sizeof p->nonce) == 0)
		n = rdzv_wire_challenge(p->nonce, r->token[0] != '\0', line, sizeof line);
	/* the clock before the challenge leaves: the peer's reading, taken once it has the challenge, is never
	 * earlier, however long this process waits for its core after the write (the skew's bound holds) */
	p->sent_at = rdzv_wall();
	if (!n || rdzv_write_all(fd, line, n, 0, why, sizeof why)) {
		gv_debug("rendezvous: connection from %s dropped: %s", addr, n ? why : "no random nonce");
		close(fd);
		return;
	}
	p->since_ms = rdzv_now_ms();
	r->npend++;
}

static void accept_new(struct rdzv *r)
{
	for (;;) {
		struct sockaddr_storage sa;
		socklen_t len = sizeof sa;
		int fd = accept(r->lfd, (struct sockaddr *)&sa, &len);
		if (fd < 0)
			return;   /* EAGAIN, or an error of that one connection */
		char addr[64];
		rdzv_addr_text(&sa, len, addr, sizeof addr);
		rdzv_sock_setup(fd);
		if (r->gathered)
			refuse_fd(fd, addr, r->late_why);
		else
			pend_add(r, fd, addr);
	}
}

void rdzv_refuse_late(struct rdzv *r)
{
	if (r->rank == 0 && r->lfd >= 0)
		accept_new(r);
}

/* The welcome, sent framed as the connection's first message from rank 0; -1 with why. */
static int welcome(struct rdzv *r, struct rdzv_peer *peer, json_t *w, int fd, char *why, size_t whylen)
{
	uint8_t seq[8];
	json_object_set_new(w, "op", json_string("welcome"));
	char *s = json_dumps(w, JSON_COMPACT);
	if (!s)
		return gv_errf(why, whylen, "its welcome could not be written");
	size_t n;
	rdzv_wire_seq(peer->seq_out++, seq);
	char *line = rdzv_wire_frame(peer->key, sizeof peer->key, 'A', seq, sizeof seq, s, strlen(s), &n);
	free(s);
	int rc = rdzv_write_all(fd, line, n, 2000, why, whylen);
	free(line);
	(void)r;
	return rc;
}

/* The hello as stored: the caller's fields, the peer's address and its clock against ours. */
static void hello_note(json_t *h, const struct rdzv_pending *p, const struct rdzv_hello_info *hi)
{
	json_object_set_new(h, "addr", json_string(p->addr));
	json_object_del(h, "clock_skew_s");
	json_object_del(h, "clock_skew_unc_s");
	if (!isnan(hi->clock)) {
		double got = rdzv_wall();
		json_object_set_new(h, "clock_skew_s", json_real(hi->clock - (p->sent_at + got) / 2));
		json_object_set_new(h, "clock_skew_unc_s", json_real((got - p->sent_at) / 2));
	}
}

/* A hello whose proof holds: a rank, or why not.  0 admitted (the peer set up), -1 with why. */
static int admit(struct rdzv *r, struct rdzv_pending *p, json_t *h, const struct rdzv_hello_info *hi, char *why,
		 size_t whylen)
{
	struct rdzv_peer *peer = &r->peers[hi->rank];
	if (peer->hello)
		return gv_errf(why, whylen, "rank %d is already taken (by a connection from %s)", hi->rank,
			       json_string_value(json_object_get(peer->hello, "addr")));
	hello_note(h, p, hi);
	json_t *w = json_object();
	if (r->admit && r->admit(r->admit_arg, hi->rank, h, w, why, whylen)) {
		json_decref(w);
		return -1;
	}
	rdzv_wire_key(r->token, p->nonce, hi->nonce, peer->key);
	peer->seq_in = peer->seq_out = 0;
	int rc = welcome(r, peer, w, p->fd, why, whylen);
	json_decref(w);
	return rc;
}

/* Reads a pending connection; 1 when its hello made it a rank. */
static int pend_read(struct rdzv *r, size_t i)
{
	struct rdzv_pending *p = &r->pend[i];
	char why[200];
	int rc = rdzv_buf_fill(p->fd, &p->in, RDZV_HELLO_MAX, why, sizeof why);
	size_t n;
	char *line = rdzv_buf_line(&p->in, &n);
	if (!line) {
		if (rc == -2)
			pend_drop(r, i, -1, "it sent 4 KiB without a hello");
		else if (rc)
			pend_drop(r, i, -1, why);
		return 0;
	}
	json_t *h = NULL;
	struct rdzv_hello_info hi;
	int claimed = -1;
	if (rdzv_wire_hello(line, n, r->token, p->nonce, r->size, &h, &hi, &claimed, why, sizeof why) ||
	    admit(r, p, h, &hi, why, sizeof why)) {
		json_decref(h);
		pend_drop(r, i, claimed, why);
		return 0;
	}
	struct rdzv_peer *peer = &r->peers[hi.rank];
	if (!r->local_set) {
		rdzv_sock_addr(p->fd, 0, r->local, sizeof r->local);
		r->local_set = 1;
	}
	peer->hello = h;
	rdzv_buf_pop(&p->in, n);
	peer->in = p->in;    /* what it sent after the hello stays */
	peer->fd = p->fd;
	if (rc) {   /* it already closed: its lines first, then its death */
		close(peer->fd);
		peer->fd = -1;
		gv_strlcpy(peer->why, why, sizeof peer->why);
	}
	r->pend[i] = r->pend[--r->npend];
	gv_debug("rendezvous: rank %d arrived from %s", hi.rank, json_string_value(json_object_get(h, "addr")));
	return 1;
}

static int arrived(const struct rdzv *r)
{
	int n = 0;
	for (int i = 1; i < r->size; i++)
		n += r->peers[i].hello != NULL;
	return n;
}

/* Drops the connections that said no hello in time; the poll timeout until the next one is due. */
static int pend_expire(struct rdzv *r, int wait)
{
	long long now = rdzv_now_ms();
	for (size_t i = r->npend; i-- > 0;) {
		long long due = r->pend[i].since_ms + RDZV_HELLO_MS;
		if (due <= now)
			pend_drop(r, i, -1, "it said no hello within 5 s of its challenge");
		else if (due - now < wait)
			wait = (int)(due - now);
	}
	return wait;
}

int rdzv_gather_hellos(struct rdzv *r, int timeout_ms)
{
	if (!r || r->rank != 0)
		return 0;
	long long deadline = rdzv_deadline_of(timeout_ms);
	int n = arrived(r);
	while (n < r->size - 1 && !r->gathered) {
		int wait = pend_expire(r, rdzv_left_ms(deadline));
		size_t np = r->npend;
		struct pollfd *pfd = rdzv_pfd(r, np + 1);
		pfd[0] = (struct pollfd){ .fd = r->lfd, .events = POLLIN };
		for (size_t i = 0; i < np; i++)
			pfd[i + 1] = (struct pollfd){ .fd = r->pend[i].fd, .events = POLLIN };
		if (poll(pfd, np + 1, wait) < 0 && errno != EINTR)
			break;
		for (size_t i = np; i-- > 0;)   /* backwards: pend_drop moves the last one into i */
			if (r->pfd[i + 1].revents && i < r->npend && r->pend[i].fd == r->pfd[i + 1].fd)
				n += pend_read(r, i);
		if (r->pfd[0].revents & POLLIN)
			accept_new(r);
		if (rdzv_left_ms(deadline) == 0)
			break;
	}
	r->gathered = 1;
	if (n == r->size - 1)
		snprintf(r->late_why, sizeof r->late_why, "every rank of this job has already arrived");
	while (r->npend)
		pend_drop(r, r->npend - 1, -1, r->late_why);
	return n;
}
