/*
 * rendezvous.c - the TCP rendezvous of `gpuvet cluster run` (platform/rendezvous.h).
 *
 * One non-blocking socket per peer (rank 0: one per other rank; others: one
 * to rank 0), each with an input buffer that poll() fills and rdzv_recv cuts
 * into '\n'-terminated lines.  While a send waits for room, every live socket
 * is still read into its buffer, so two sides sending large messages at once
 * cannot block each other.  A peer's death (EOF, reset, a line that is not a
 * JSON object, a line over RDZV_MAX_MSG) closes its socket; rank 0's
 * rdzv_recv first hands out the complete lines it had buffered, then the
 * death, once.  Addresses: platform/rendezvous_addr.c.
 */
#include "platform/rendezvous.h"
#include "common/util.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define RDZV_READ_CHUNK (256u << 10)
#define RDZV_RETRY_MS 100   /* between connection attempts to a rank 0 not yet listening */

struct rdzv_buf {
	char *d;
	size_t len, cap, scan;   /* scan: bytes already searched for '\n' */
};

struct rdzv_peer {
	int fd;                  /* -1: never connected or closed */
	int failed;              /* the connection died (EOF, error, garbage) */
	int reported;            /* rank 0: its death handed out by rdzv_recv */
	char why[96];            /* how it died */
	json_t *hello;           /* rank 0: its hello, with "addr" */
	struct rdzv_buf in;
};

struct rdzv_pending {            /* rank 0: accepted, no hello yet */
	int fd;
	char addr[64];
	struct rdzv_buf in;
};

struct rdzv {
	int rank, size;
	int lfd;                 /* rank 0's listener */
	int port;
	char local[64];
	int local_set;           /* rank 0: local taken from an accepted connection */
	char name[2 * RDZV_HOST_MAX];   /* HOST:PORT as given, for messages */
	struct rdzv_peer *peers; /* size entries; ranks > 0 use peers[0] */
	struct rdzv_pending *pend;
	size_t npend, cappend;
	struct pollfd *pfd;      /* size + cappend + 1 */
	int next;                /* rank 0: where rdzv_recv's round robin starts */
};

static long long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int left_ms(long long deadline)
{
	long long d = deadline - now_ms();
	return d < 0 ? 0 : d > 1000000000 ? 1000000000 : (int)d;
}

static long long deadline_of(int timeout_ms)
{
	return now_ms() + (timeout_ms < 0 ? 0 : timeout_ms);
}

/*
 * A peer whose link goes silent (a pulled cable, a dropped route: no FIN, no RST) is a dead
 * connection after RDZV_SILENT_S, whatever the phase: the kernel probes an idle connection
 * (keepalive) and gives up on data left unacknowledged (TCP_USER_TIMEOUT); the next read fails
 * with "Connection timed out" and the peer is lost then, not at the end of a wait that may last a
 * whole fingerprint.  The kernel answers the probes, so a peer busy in a bench stays alive.
 */
#define RDZV_KEEPIDLE_S 10
#define RDZV_KEEPINTVL_S 5
#define RDZV_KEEPCNT 3
#define RDZV_SILENT_S (RDZV_KEEPIDLE_S + RDZV_KEEPINTVL_S * RDZV_KEEPCNT)

static void sock_setup(int fd)
{
	int one = 1, idle = RDZV_KEEPIDLE_S, intvl = RDZV_KEEPINTVL_S, cnt = RDZV_KEEPCNT;
	unsigned int user_ms = RDZV_SILENT_S * 1000u;
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	fcntl(fd, F_SETFD, FD_CLOEXEC);
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof one);
	setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof idle);
	setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &intvl, sizeof intvl);
	setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof cnt);
	setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &user_ms, sizeof user_ms);
}

/* An address as text, no port; an IPv4-mapped IPv6 address as its IPv4. */
static void addr_text(const struct sockaddr_storage *sa, socklen_t len, char *out, size_t outlen)
{
	char h[NI_MAXHOST];
	out[0] = '\0';
	if (getnameinfo((const struct sockaddr *)sa, len, h, sizeof h, NULL, 0, NI_NUMERICHOST))
		return;
	const char *p = h;
	if (!strncmp(p, "::ffff:", 7) && strchr(p, '.'))
		p += 7;
	gv_strlcpy(out, p, outlen);
}

static void sock_addr(int fd, int peer, char *out, size_t outlen)
{
	struct sockaddr_storage sa;
	socklen_t len = sizeof sa;
	out[0] = '\0';
	if ((peer ? getpeername(fd, (struct sockaddr *)&sa, &len) : getsockname(fd, (struct sockaddr *)&sa, &len)) == 0)
		addr_text(&sa, len, out, outlen);
}

static void buf_free(struct rdzv_buf *b)
{
	free(b->d);
	memset(b, 0, sizeof *b);
}

/* Reads what the socket has.  0: still open; -1: closed or failed (why set); -2: over the cap. */
static int buf_fill(int fd, struct rdzv_buf *b, char *why, size_t whylen)
{
	for (;;) {
		if (b->len > RDZV_MAX_MSG)   /* a line over the cap, or enough lines kept for now */
			return memchr(b->d, '\n', b->len) ? 0 : -2;
		if (b->cap - b->len < RDZV_READ_CHUNK) {
			b->cap = b->len + RDZV_READ_CHUNK;
			b->d = gv_realloc(b->d, b->cap);
		}
		ssize_t n = recv(fd, b->d + b->len, b->cap - b->len, MSG_DONTWAIT);
		if (n > 0) {
			b->len += (size_t)n;
			continue;
		}
		if (n == 0) {
			snprintf(why, whylen, "closed the connection");
			return -1;
		}
		if (errno == EINTR)
			continue;
		if (errno == EAGAIN || errno == EWOULDBLOCK)   /* all read: over the cap without a line's end? */
			return b->len > RDZV_MAX_MSG && !memchr(b->d, '\n', b->len) ? -2 : 0;
		if (errno == ETIMEDOUT)   /* keepalive or TCP_USER_TIMEOUT: see sock_setup */
			snprintf(why, whylen, "went silent (no answer for %d s)", RDZV_SILENT_S);
		else
			snprintf(why, whylen, "connection failed: %s", strerror(errno));
		return -1;
	}
}

/* The next complete line, without its '\n' (NUL-terminated in place), or NULL; *n its length. */
static char *buf_line(struct rdzv_buf *b, size_t *n)
{
	char *nl = b->len > b->scan ? memchr(b->d + b->scan, '\n', b->len - b->scan) : NULL;
	if (!nl) {
		b->scan = b->len;
		return NULL;
	}
	*n = (size_t)(nl - b->d);
	*nl = '\0';
	return b->d;
}

/* Drops the line buf_line returned. */
static void buf_pop(struct rdzv_buf *b, size_t n)
{
	memmove(b->d, b->d + n + 1, b->len - n - 1);
	b->len -= n + 1;
	b->scan = 0;
	if (b->cap > 4 * RDZV_READ_CHUNK && b->len < RDZV_READ_CHUNK) {   /* give a big message's room back */
		b->cap = RDZV_READ_CHUNK;
		b->d = gv_realloc(b->d, b->cap);
	}
}

/* A line as a JSON object, or NULL. */
static json_t *line_parse(const char *s, size_t n)
{
	json_t *j = json_loadb(s, n, JSON_REJECT_DUPLICATES, NULL);
	if (j && !json_is_object(j)) {
		json_decref(j);
		j = NULL;
	}
	return j;
}

static void peer_kill(struct rdzv_peer *p, const char *why)
{
	if (p->fd >= 0)
		close(p->fd);
	p->fd = -1;
	if (!p->failed && why)
		gv_strlcpy(p->why, why, sizeof p->why);
	p->failed = 1;
}

static int peer_live(const struct rdzv_peer *p)
{
	return p->fd >= 0 && !p->failed;
}

/* The peers a process talks to: rank 0 all ranks 1..size-1, others peers[0]. */
static int peer_first(const struct rdzv *r) { return r->rank == 0 ? 1 : 0; }
static int peer_end(const struct rdzv *r) { return r->rank == 0 ? r->size : 1; }

/* Reads every live peer's socket into its buffer. */
static void peer_read(struct rdzv_peer *p)
{
	char why[96];
	int rc = buf_fill(p->fd, &p->in, why, sizeof why);
	if (rc == -2) {
		buf_free(&p->in);
		peer_kill(p, "sent a line over 64 MiB");
	} else if (rc == -1) {
		close(p->fd);   /* the complete lines it sent are still handed out; then its death */
		p->fd = -1;
		gv_strlcpy(p->why, why, sizeof p->why);
	}
}

/*
 * Waits up to wait_ms for input on any live peer (read into its buffer) or, when out >= 0, for
 * room to write on peer `out`.  1 when out is writable, 0 otherwise.
 */
static int pump(struct rdzv *r, int wait_ms, int out)
{
	nfds_t n = 0;
	for (int i = peer_first(r); i < peer_end(r); i++) {
		struct rdzv_peer *p = &r->peers[i];
		if (p->fd >= 0 && p->in.len > RDZV_MAX_MSG && !memchr(p->in.d, '\n', p->in.len)) {
			buf_free(&p->in);   /* a line over the cap, read whole with its hello */
			peer_kill(p, "sent a line over 64 MiB");
		}
		short ev = (short)((p->in.len > RDZV_MAX_MSG ? 0 : POLLIN) | (i == out ? POLLOUT : 0));
		if (p->fd < 0 || !ev)
			continue;   /* a full buffer is read again once rdzv_recv has taken its lines */
		r->pfd[n].fd = p->fd;
		r->pfd[n].events = ev;
		r->pfd[n].revents = 0;
		n++;
	}
	if (n == 0)
		return 0;
	int rc = poll(r->pfd, n, wait_ms);
	if (rc <= 0)
		return 0;
	int writable = 0;
	nfds_t k = 0;
	for (int i = peer_first(r); i < peer_end(r) && k < n; i++) {
		struct rdzv_peer *p = &r->peers[i];
		if (p->fd < 0 || r->pfd[k].fd != p->fd)
			continue;
		short ev = r->pfd[k++].revents;
		if (i == out && (ev & POLLOUT))
			writable = 1;
		if (ev & (POLLIN | POLLHUP | POLLERR))
			peer_read(p);
	}
	return writable;
}

/* ---- rank 0 ---- */

static struct rdzv *rdzv_new(int rank, int size, const char *name)
{
	struct rdzv *r = gv_calloc(1, sizeof *r);
	r->rank = rank;
	r->size = size;
	r->lfd = -1;
	r->port = -1;
	r->next = 1;
	gv_strlcpy(r->name, name, sizeof r->name);
	int npeers = rank == 0 ? size : 1;
	r->peers = gv_calloc((size_t)npeers, sizeof *r->peers);
	for (int i = 0; i < npeers; i++)
		r->peers[i].fd = -1;
	r->cappend = rank == 0 ? (size_t)size + 16 : 0;
	if (r->cappend)
		r->pend = gv_calloc(r->cappend, sizeof *r->pend);
	r->pfd = gv_calloc((size_t)npeers + r->cappend + 1, sizeof *r->pfd);
	return r;
}

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
	sock_setup(fd);
	*fd_out = fd;
	return 0;
}

int rdzv_listen(const char *hostport, int size, struct rdzv **r, char *err, size_t errlen)
{
	char host[RDZV_HOST_MAX], port[8];
	int portn;
	*r = NULL;
	if (size < 1)
		return gv_errf(err, errlen, "rendezvous size must be at least 1, not %d", size);
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
	*r = rdzv_new(0, size, hostport);
	(*r)->lfd = fd;
	struct sockaddr_storage sa;
	socklen_t len = sizeof sa;
	if (getsockname(fd, (struct sockaddr *)&sa, &len) == 0)
		(*r)->port = ntohs(sa.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&sa)->sin6_port
							    : ((struct sockaddr_in *)&sa)->sin_port);
	gv_strlcpy((*r)->local, host, sizeof (*r)->local);
	return 0;
}

static void pend_drop(struct rdzv *r, size_t i, const char *why)
{
	gv_debug("rendezvous: connection from %s refused: %s", r->pend[i].addr, why);
	close(r->pend[i].fd);
	buf_free(&r->pend[i].in);
	r->pend[i] = r->pend[--r->npend];
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
		addr_text(&sa, len, addr, sizeof addr);
		if (r->npend == r->cappend) {
			gv_debug("rendezvous: connection from %s refused: too many without a hello", addr);
			close(fd);
			continue;
		}
		sock_setup(fd);
		struct rdzv_pending *p = &r->pend[r->npend++];
		memset(p, 0, sizeof *p);
		p->fd = fd;
		gv_strlcpy(p->addr, addr, sizeof p->addr);
	}
}

/* The hello's rank, or why it is refused. */
static int hello_rank(const struct rdzv *r, const json_t *h, char *why, size_t whylen)
{
	json_t *jr = json_object_get(h, "rank"), *js = json_object_get(h, "size");
	if (!json_is_integer(jr)) {
		snprintf(why, whylen, "a hello without an integer rank");
		return -1;
	}
	json_int_t rank = json_integer_value(jr);
	if (rank < 1 || rank >= r->size) {
		snprintf(why, whylen, "rank %lld out of range 1..%d", (long long)rank, r->size - 1);
		return -1;
	}
	if (js && (!json_is_integer(js) || json_integer_value(js) != r->size)) {
		snprintf(why, whylen, "rank %lld says the size is not %d", (long long)rank, r->size);
		return -1;
	}
	if (r->peers[rank].hello) {
		snprintf(why, whylen, "rank %lld has already said hello", (long long)rank);
		return -1;
	}
	return (int)rank;
}

/* Reads a pending connection; 1 when its hello made it a rank. */
static int pend_read(struct rdzv *r, size_t i)
{
	struct rdzv_pending *p = &r->pend[i];
	char why[128];
	int rc = buf_fill(p->fd, &p->in, why, sizeof why);
	size_t n;
	char *line = buf_line(&p->in, &n);
	if (!line) {
		if (rc)
			pend_drop(r, i, rc == -2 ? "a hello over 64 MiB" : why);
		return 0;
	}
	json_t *h = line_parse(line, n);
	int rank = h ? hello_rank(r, h, why, sizeof why) : -1;
	if (!h)
		snprintf(why, sizeof why, "its first line is not a JSON object");
	if (rank < 0) {
		json_decref(h);
		pend_drop(r, i, why);
		return 0;
	}
	json_object_set_new(h, "addr", json_string(p->addr));
	struct rdzv_peer *peer = &r->peers[rank];
	if (!r->local_set) {
		sock_addr(p->fd, 0, r->local, sizeof r->local);
		r->local_set = 1;
	}
	peer->hello = h;
	buf_pop(&p->in, n);
	peer->in = p->in;    /* what it sent after the hello stays */
	peer->fd = p->fd;
	if (rc) {   /* it already closed (or overflowed): its lines first, then its death */
		close(peer->fd);
		peer->fd = -1;
		peer->failed = rc == -2;
		gv_strlcpy(peer->why, rc == -2 ? "sent a line over 64 MiB" : why, sizeof peer->why);
	}
	r->pend[i] = r->pend[--r->npend];
	gv_debug("rendezvous: rank %d arrived from %s", rank, json_string_value(json_object_get(h, "addr")));
	return 1;
}

static int arrived(const struct rdzv *r)
{
	int n = 0;
	for (int i = 1; i < r->size; i++)
		n += r->peers[i].hello != NULL;
	return n;
}

int rdzv_gather_hellos(struct rdzv *r, int timeout_ms)
{
	if (!r || r->rank != 0)
		return 0;
	long long deadline = deadline_of(timeout_ms);
	int n = arrived(r);
	while (n < r->size - 1) {
		r->pfd[0].fd = r->lfd;
		r->pfd[0].events = POLLIN;
		r->pfd[0].revents = 0;
		for (size_t i = 0; i < r->npend; i++) {
			r->pfd[i + 1].fd = r->pend[i].fd;
			r->pfd[i + 1].events = POLLIN;
			r->pfd[i + 1].revents = 0;
		}
		size_t np = r->npend;
		int wait = left_ms(deadline);
		if (poll(r->pfd, np + 1, wait) < 0 && errno != EINTR)
			break;
		for (size_t i = np; i-- > 0;)   /* backwards: pend_drop moves the last one into i */
			if (r->pfd[i + 1].revents && i < r->npend && r->pend[i].fd == r->pfd[i + 1].fd)
				n += pend_read(r, i);
		if (r->pfd[0].revents & POLLIN)
			accept_new(r);
		if (wait == 0)
			break;
	}
	return n;
}

/* ---- ranks > 0 ---- */

/* One attempt on one address: a connected socket, or -1 with errno-style e. */
static int connect_one(const struct addrinfo *ai, int wait_ms, int *e)
{
	int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
	if (fd < 0) {
		*e = errno;
		return -1;
	}
	sock_setup(fd);
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
			int e = 0, wait = left_ms(deadline);
			int fd = connect_one(ai, wait < 2000 ? wait : 2000, &e);
			if (fd >= 0) {
				freeaddrinfo(res);
				return fd;
			}
			snprintf(why, whylen, "%s", strerror(e));
		}
		freeaddrinfo(res);
		int wait = left_ms(deadline);
		if (wait > 0)
			poll(NULL, 0, wait < RDZV_RETRY_MS ? wait : RDZV_RETRY_MS);
	} while (left_ms(deadline) > 0);
	return -1;
}

int rdzv_connect(const char *hostport, int rank, int size, json_t *hello, int timeout_ms,
		 struct rdzv **r, char *err, size_t errlen)
{
	char host[RDZV_HOST_MAX], why[128];
	int port;
	*r = NULL;
	if (rank < 1 || rank >= size)
		return gv_errf(err, errlen, "rank %d is out of range 1..%d", rank, size - 1);
	if (rdzv_parse_hostport(hostport, host, &port, err, errlen))
		return -1;
	if (port == 0)
		return gv_errf(err, errlen, "cannot connect to rendezvous %s: port 0", hostport);
	long long deadline = deadline_of(timeout_ms);
	int fd = connect_retry(host, port, deadline, why, sizeof why);
	if (fd < 0)
		return gv_errf(err, errlen, "cannot connect to rendezvous %s within %d ms: %s", hostport, timeout_ms, why);
	struct rdzv *z = rdzv_new(rank, size, hostport);
	z->peers[0].fd = fd;
	sock_addr(fd, 0, z->local, sizeof z->local);
	json_t *h = hello ? json_deep_copy(hello) : json_object();
	if (!json_is_object(h)) {
		json_decref(h);
		rdzv_close(z);
		return gv_errf(err, errlen, "rendezvous hello must be a JSON object");
	}
	json_object_set_new(h, "rank", json_integer(rank));
	json_object_set_new(h, "size", json_integer(size));
	char e2[256];
	int rc = rdzv_send(z, 0, h, left_ms(deadline), e2, sizeof e2);
	json_decref(h);
	if (rc) {
		rdzv_close(z);
		return gv_errf(err, errlen, "rendezvous %s: hello: %s", hostport, e2);
	}
	*r = z;
	return 0;
}

/* ---- both ---- */

const json_t *rdzv_hello(const struct rdzv *r, int rank)
{
	if (!r || r->rank != 0 || rank < 1 || rank >= r->size)
		return NULL;
	return r->peers[rank].hello;
}

const char *rdzv_local_addr(const struct rdzv *r)
{
	return r ? r->local : "";
}

int rdzv_alive(const struct rdzv *r, int rank)
{
	if (!r)
		return 0;
	if (r->rank != 0)
		return rank == 0 && peer_live(&r->peers[0]);
	return rank >= 1 && rank < r->size && r->peers[rank].hello && peer_live(&r->peers[rank]);
}

int rdzv_port(const struct rdzv *r)
{
	return r ? r->port : -1;
}

static const char *peer_name(const struct rdzv *r, int i, char *buf, size_t len)
{
	snprintf(buf, len, "rank %d", r->rank == 0 ? i : 0);
	return buf;
}

int rdzv_send(struct rdzv *r, int to, const json_t *msg, int timeout_ms, char *err, size_t errlen)
{
	char who[32];
	int i = r->rank == 0 ? to : 0;
	if (r->rank == 0 && (to < 1 || to >= r->size))
		return gv_errf(err, errlen, "no rank %d to send to (size %d)", to, r->size);
	struct rdzv_peer *p = &r->peers[i];
	peer_name(r, i, who, sizeof who);
	if (!peer_live(p))
		return gv_errf(err, errlen, "%s is %s", who, p->failed || p->hello ? "gone" : "not connected");
	char *s = json_dumps(msg, JSON_COMPACT);
	if (!s)
		return gv_errf(err, errlen, "message to %s is not JSON", who);
	size_t n = strlen(s);
	if (n + 1 > RDZV_MAX_MSG) {
		free(s);
		return gv_errf(err, errlen, "message to %s of %zu bytes exceeds 64 MiB", who, n + 1);
	}
	s[n++] = '\n';   /* json_dumps' NUL becomes the line's end */
	long long deadline = deadline_of(timeout_ms);
	size_t off = 0;
	while (off < n && peer_live(p)) {
		ssize_t w = send(p->fd, s + off, n - off, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (w > 0) {
			off += (size_t)w;
			continue;
		}
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && errno != EAGAIN && errno != EWOULDBLOCK) {
			char why[96];
			snprintf(why, sizeof why, "connection failed: %s", strerror(errno));
			peer_kill(p, why);
			break;
		}
		int wait = left_ms(deadline);
		if (wait == 0)
			break;
		pump(r, wait, i);   /* reads everyone meanwhile, so a peer sending to us is not stuck */
	}
	free(s);
	if (off == n)
		return 0;
	if (peer_live(p) && off > 0)
		peer_kill(p, "a message to it was cut off at its deadline");
	if (!peer_live(p))
		return gv_errf(err, errlen, "%s is gone: %s", who, p->why);
	return gv_errf(err, errlen, "%s did not take a message within %d ms", who, timeout_ms);
}

/* rank 0: a buffered line or a death to hand out.  1 with from and msg set, 0 none. */
static int next_ready(struct rdzv *r, int *from, json_t **msg)
{
	if (peer_end(r) <= peer_first(r))
		return 0;
	for (int k = 0; k < peer_end(r) - peer_first(r); k++) {
		int i = peer_first(r) + (r->next - peer_first(r) + k) % (peer_end(r) - peer_first(r));
		struct rdzv_peer *p = &r->peers[i];
		if (p->failed || !p->in.d)
			continue;
		size_t n;
		char *line = buf_line(&p->in, &n);
		if (!line)
			continue;
		json_t *j = line_parse(line, n);
		buf_pop(&p->in, n);
		if (!j) {
			buf_free(&p->in);
			peer_kill(p, "sent a line that is not a JSON object");
			continue;
		}
		r->next = i + 1 < peer_end(r) ? i + 1 : peer_first(r);
		*from = r->rank == 0 ? i : 0;
		*msg = j;
		return 1;
	}
	for (int i = peer_first(r); i < peer_end(r); i++) {
		struct rdzv_peer *p = &r->peers[i];
		if (p->fd < 0 && (r->rank != 0 || p->hello) && !p->failed)   /* closed, every complete line handed out */
			p->failed = 1;
		if (p->failed && !p->reported && (r->rank != 0 || p->hello)) {
			p->reported = 1;
			buf_free(&p->in);
			gv_debug("rendezvous: rank %d %s", i, p->why);
			*from = r->rank == 0 ? i : 0;
			*msg = NULL;
			return 1;   /* rdzv_recv hands p->why on */
		}
	}
	return 0;
}

int rdzv_recv(struct rdzv *r, int *from, json_t **msg, int timeout_ms, char *err, size_t errlen)
{
	long long deadline = deadline_of(timeout_ms);
	*msg = NULL;
	*from = -1;
	for (;;) {
		if (next_ready(r, from, msg)) {
			if (!*msg && r->rank == 0)
				(void)gv_errf(err, errlen, "%s", r->peers[*from].why);
			if (*msg || r->rank == 0)
				return 0;
			return gv_errf(err, errlen, "rank 0 %s", r->peers[0].why);
		}
		if (r->rank != 0 && r->peers[0].failed)
			return gv_errf(err, errlen, "rank 0 %s", r->peers[0].why[0] ? r->peers[0].why : "is gone");
		int live = 0;
		for (int i = peer_first(r); i < peer_end(r); i++)
			live += r->peers[i].fd >= 0;
		if (!live)
			return gv_errf(err, errlen, "no live rank left");
		int wait = left_ms(deadline);
		pump(r, wait, -1);
		if (wait == 0) {
			if (next_ready(r, from, msg))
				return *msg || r->rank == 0 ? 0 : gv_errf(err, errlen, "rank 0 %s", r->peers[0].why);
			return 1;
		}
	}
}

void rdzv_close(struct rdzv *r)
{
	if (!r)
		return;
	for (int i = 0; i < peer_end(r); i++) {
		if (r->peers[i].fd >= 0)
			close(r->peers[i].fd);
		json_decref(r->peers[i].hello);
		buf_free(&r->peers[i].in);
	}
	for (size_t i = 0; i < r->npend; i++) {
		close(r->pend[i].fd);
		buf_free(&r->pend[i].in);
	}
	if (r->lfd >= 0)
		close(r->lfd);
	free(r->peers);
	free(r->pend);
	free(r->pfd);
	free(r);
}
