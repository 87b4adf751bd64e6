/*
 * rendezvous_util.c - below every part of the rendezvous
 * (platform/rendezvous_int.h): clocks, socket options, addresses as text,
 * the input buffers that poll() fills and the lines cut from them, a
 * bounded write, and the struct's life.
 */
#include "platform/rendezvous_int.h"
#include "common/util.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

long long rdzv_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

double rdzv_wall(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

int rdzv_left_ms(long long deadline)
{
	long long d = deadline - rdzv_now_ms();
	return d < 0 ? 0 : d > 1000000000 ? 1000000000 : (int)d;
}

long long rdzv_deadline_of(int timeout_ms)
{
	return rdzv_now_ms() + (timeout_ms < 0 ? 0 : timeout_ms);
}

void rdzv_sock_setup(int fd)
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
void rdzv_addr_text(const struct sockaddr_storage *sa, socklen_t len, char *out, size_t outlen)
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

void rdzv_sock_addr(int fd, int peer, char *out, size_t outlen)
{
	struct sockaddr_storage sa;
	socklen_t len = sizeof sa;
	out[0] = '\0';
	if ((peer ? getpeername(fd, (struct sockaddr *)&sa, &len) : getsockname(fd, (struct sockaddr *)&sa, &len)) == 0)
		rdzv_addr_text(&sa, len, out, outlen);
}

struct pollfd *rdzv_pfd(struct rdzv *r, size_t n)
{
	if (n > r->capfd) {
		r->capfd = n + 16;
		r->pfd = gv_realloc(r->pfd, r->capfd * sizeof *r->pfd);
	}
	return r->pfd;
}

struct rdzv *rdzv_new(int rank, int size, const char *name, const char *token)
{
	struct rdzv *r = gv_calloc(1, sizeof *r);
	r->rank = rank;
	r->size = size;
	r->lfd = -1;
	r->port = -1;
	r->next = 1;
	gv_strlcpy(r->name, name, sizeof r->name);
	gv_strlcpy(r->token, token ? token : "", sizeof r->token);
	int npeers = rank == 0 ? size : 1;
	r->peers = gv_calloc((size_t)npeers, sizeof *r->peers);
	for (int i = 0; i < npeers; i++)
		r->peers[i].fd = -1;
	if (rank == 0)
		r->refused = gv_calloc((size_t)size, sizeof *r->refused);
	snprintf(r->late_why, sizeof r->late_why, "it arrived after rank 0 stopped waiting for ranks");
	rdzv_pfd(r, (size_t)npeers + 1);
	return r;
}

void rdzv_buf_free(struct rdzv_buf *b)
{
	free(b->d);
	memset(b, 0, sizeof *b);
}

int rdzv_buf_fill(int fd, struct rdzv_buf *b, size_t max, char *why, size_t whylen)
{
	size_t chunk = max < RDZV_READ_CHUNK ? max + 1 : RDZV_READ_CHUNK;
	for (;;) {
		if (b->len > max)   /* a line over the cap, or enough lines kept for now */
			return memchr(b->d, '\n', b->len) ? 0 : -2;
		if (b->cap - b->len < chunk) {
			b->cap = b->len + chunk;
			b->d = gv_realloc(b->d, b->cap);
		}
		size_t room = b->cap - b->len;
		if (room > max + 1 - b->len)   /* never hold more than max + 1 bytes before a line's end */
			room = max + 1 - b->len;
		ssize_t n = recv(fd, b->d + b->len, room, MSG_DONTWAIT);
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
		if (errno == EAGAIN || errno == EWOULDBLOCK)
			return 0;
		if (errno == ETIMEDOUT)   /* keepalive or TCP_USER_TIMEOUT: see rendezvous_int.h */
			snprintf(why, whylen, "went silent (no answer for %d s)", RDZV_SILENT_S);
		else
			snprintf(why, whylen, "connection failed: %s", strerror(errno));
		return -1;
	}
}

char *rdzv_buf_line(struct rdzv_buf *b, size_t *n)
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

void rdzv_buf_pop(struct rdzv_buf *b, size_t n)
{
	memmove(b->d, b->d + n + 1, b->len - n - 1);
	b->len -= n + 1;
	b->scan = 0;
	if (b->cap > 4 * RDZV_READ_CHUNK && b->len < RDZV_READ_CHUNK) {   /* give a big message's room back */
		b->cap = RDZV_READ_CHUNK;
		b->d = gv_realloc(b->d, b->cap);
	}
}

int rdzv_write_all(int fd, const char *s, size_t n, int timeout_ms, char *why, size_t whylen)
{
	long long deadline = rdzv_deadline_of(timeout_ms);
	size_t off = 0;
	while (off < n) {
		ssize_t w = send(fd, s + off, n - off, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (w > 0) {
			off += (size_t)w;
			continue;
		}
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
			return gv_errf(why, whylen, "connection failed: %s", strerror(errno));
		int wait = rdzv_left_ms(deadline);
		if (wait == 0)
			return gv_errf(why, whylen, "did not take %zu bytes within %d ms", n, timeout_ms);
		struct pollfd pf = { .fd = fd, .events = POLLOUT };
		poll(&pf, 1, wait);
	}
	return 0;
}
