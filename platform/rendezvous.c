/*
 * rendezvous.c - the conversation of `gpuvet cluster run`'s ranks once they
 * have met (platform/rendezvous.h; the arrivals: rendezvous_accept.c for rank
 * 0, rendezvous_join.c for the others; below them rendezvous_util.c).
 *
 * One non-blocking socket per peer (rank 0: one per other rank; others: one
 * to rank 0), each with an input buffer that poll() fills and rdzv_recv cuts
 * into lines, each checked against its MAC and sequence number
 * (rendezvous_wire.h).  While a send waits for room, every live socket is
 * still read into its buffer, so two sides sending large messages at once
 * cannot block each other; rank 0 meanwhile refuses, with the reason, any
 * connection that arrives after the arrivals.  A peer's death (EOF, reset, a
 * line that is not a JSON object or whose MAC does not hold, a line over
 * RDZV_MAX_MSG) closes its socket; rank 0's rdzv_recv first hands out the
 * complete lines it had buffered, then the death, once.
 */
#include "platform/rendezvous_int.h"
#include "common/util.h"

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define PEER_MAX (RDZV_MAX_MSG + RDZV_FRAME_EXTRA)   /* one framed message, its MAC included */

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

/* Reads a live peer's socket into its buffer. */
static void peer_read(struct rdzv_peer *p)
{
	char why[96];
	int rc = rdzv_buf_fill(p->fd, &p->in, PEER_MAX, why, sizeof why);
	if (rc == -2) {
		rdzv_buf_free(&p->in);
		peer_kill(p, "sent a line over 64 MiB");
	} else if (rc == -1) {
		close(p->fd);   /* the complete lines it sent are still handed out; then its death */
		p->fd = -1;
		gv_strlcpy(p->why, why, sizeof p->why);
	}
}

/*
 * Waits up to wait_ms for input on any live peer (read into its buffer) or, when out >= 0, for
 * room to write on peer `out`; rank 0 also refuses what arrives on its listener.  1 when out is
 * writable, 0 otherwise.
 */
static int pump(struct rdzv *r, int wait_ms, int out)
{
	struct pollfd *pfd = rdzv_pfd(r, (size_t)(peer_end(r) - peer_first(r)) + 1);
	nfds_t n = 0;
	for (int i = peer_first(r); i < peer_end(r); i++) {
		struct rdzv_peer *p = &r->peers[i];
		if (p->fd >= 0 && p->in.len > PEER_MAX && !memchr(p->in.d, '\n', p->in.len)) {
			rdzv_buf_free(&p->in);   /* a line over the cap, read whole with its hello */
			peer_kill(p, "sent a line over 64 MiB");
		}
		short ev = (short)((p->in.len > PEER_MAX ? 0 : POLLIN) | (i == out ? POLLOUT : 0));
		if (p->fd < 0 || !ev)
			continue;   /* a full buffer is read again once rdzv_recv has taken its lines */
		pfd[n++] = (struct pollfd){ .fd = p->fd, .events = ev };
	}
	int listener = r->rank == 0 && r->lfd >= 0 && r->gathered;
	if (listener)
		pfd[n++] = (struct pollfd){ .fd = r->lfd, .events = POLLIN };
	if (n == 0)
		return 0;
	int rc = poll(pfd, n, wait_ms);
	if (rc <= 0)
		return 0;
	if (listener && (pfd[n - 1].revents & POLLIN))
		rdzv_refuse_late(r);
	int writable = 0;
	nfds_t k = 0;
	for (int i = peer_first(r); i < peer_end(r) && k < n; i++) {
		struct rdzv_peer *p = &r->peers[i];
		if (p->fd < 0 || pfd[k].fd != p->fd)
			continue;
		short ev = pfd[k++].revents;
		if (i == out && (ev & POLLOUT))
			writable = 1;
		if (ev & (POLLIN | POLLHUP | POLLERR))
			peer_read(p);
	}
	return writable;
}

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

int rdzv_silent(const struct rdzv *r, int rank, char *why, size_t whylen)
{
	if (!r || r->rank != 0 || rank < 1 || rank >= r->size || r->peers[rank].fd < 0)
		return 0;
	struct tcp_info ti;
	socklen_t len = sizeof ti;
	memset(&ti, 0, sizeof ti);
	if (getsockopt(r->peers[rank].fd, IPPROTO_TCP, TCP_INFO, &ti, &len))
		return 0;
	if (ti.tcpi_unacked && ti.tcpi_last_ack_recv >= 5000)   /* what rank 0 sent is not acknowledged */
		snprintf(why, whylen, "went silent (nothing acknowledged for %u s)", ti.tcpi_last_ack_recv / 1000);
	else if (ti.tcpi_probes)   /* idle, and the keepalive probes go unanswered */
		snprintf(why, whylen, "went silent (nothing heard for %u s, %u keepalive probe%s unanswered)",
			 ti.tcpi_last_ack_recv / 1000, ti.tcpi_probes, ti.tcpi_probes == 1 ? "" : "s");
	else
		return 0;
	return 1;
}

int rdzv_port(const struct rdzv *r)
{
	return r ? r->port : -1;
}

int rdzv_authenticated(const struct rdzv *r)
{
	return r && r->token[0];
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
	char *text = json_dumps(msg, JSON_COMPACT);
	if (!text)
		return gv_errf(err, errlen, "message to %s is not JSON", who);
	size_t n = strlen(text);
	if (n + RDZV_FRAME_EXTRA + 1 > PEER_MAX) {
		free(text);
		return gv_errf(err, errlen, "message to %s of %zu bytes exceeds 64 MiB", who, n + 1);
	}
	uint8_t seq[8];
	rdzv_wire_seq(p->seq_out++, seq);
	char *s = rdzv_wire_frame(p->key, sizeof p->key, r->rank == 0 ? 'A' : 'B', seq, sizeof seq, text, n, &n);
	free(text);
	long long deadline = rdzv_deadline_of(timeout_ms);
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
		int wait = rdzv_left_ms(deadline);
		if (wait == 0)
			break;
		pump(r, wait, i);   /* reads everyone meanwhile, so a peer sending to us is not stuck */
	}
	free(s);
	if (off == n)
		return 0;
	if (off == 0)
		p->seq_out--;   /* nothing of it left: the next message takes its number */
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
		char *line = rdzv_buf_line(&p->in, &n);
		if (!line)
			continue;
		uint8_t seq[8];
		char why[160];
		json_t *j = NULL;
		rdzv_wire_seq(p->seq_in++, seq);
		int bad = rdzv_wire_open(p->key, sizeof p->key, r->rank == 0 ? 'B' : 'A', seq, sizeof seq, line, n, &j, why,
					 sizeof why);
		rdzv_buf_pop(&p->in, n);
		if (bad) {
			rdzv_buf_free(&p->in);
			if (p->fd >= 0)
				close(p->fd);
			p->fd = -1;
			peer_kill(p, why);
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
			rdzv_buf_free(&p->in);
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
	long long deadline = rdzv_deadline_of(timeout_ms);
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
		int wait = rdzv_left_ms(deadline);
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
	if (r->rank == 0 && r->gathered)
		rdzv_refuse_late(r);   /* who waits in the listener's queue is told why, not reset */
	int npeers = r->rank == 0 ? r->size : 1;
	for (int i = 0; i < npeers; i++) {
		if (r->peers[i].fd >= 0)
			close(r->peers[i].fd);
		json_decref(r->peers[i].hello);
		rdzv_buf_free(&r->peers[i].in);
	}
	for (size_t i = 0; i < r->npend; i++) {
		close(r->pend[i].fd);
		rdzv_buf_free(&r->pend[i].in);
	}
	for (int i = 0; r->refused && i < r->size; i++)
		free(r->refused[i]);
	if (r->lfd >= 0)
		close(r->lfd);
	json_decref(r->welcome);
	free(r->refused);
	free(r->peers);
	free(r->pend);
	free(r->pfd);
	free(r);
}
