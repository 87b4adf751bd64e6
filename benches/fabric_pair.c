/*
 * fabric_pair.c - one pair's measurement over the endpoint of benches/fabric.c.
 *
 * The protocol (a = the lower rank, b = the other; both call fabric_pair):
 *   1. each sends HELLO and waits for the other's (the peer is there, its
 *      receives are posted; a HELLO that came during an earlier pair is kept);
 *   2. a streams DATA messages of msg_bytes for seconds_each_way, FABRIC_WINDOW
 *      in flight, then END carrying how many it sent; b times them: bytes
 *      received after the first message over the time from the first to the
 *      last one's completion (the first message's bytes are left out: its
 *      completion starts the clock);
 *   3. the same from b to a;
 *   4. a sends an 8-byte ping, b answers with one, 10 warm-up and lat_iters
 *      timed round trips; latency = the median round trip / 2;
 *   5. each sends FIGS with what it measured, so both return the same three.
 * Every message starts with the sender's address hash (a ping is only that),
 * so what a previous, failed partner still sends is ignored.  Every wait
 * reads the completion queues in a loop against the pair's deadline.
 * GB/s = 1e9 bytes/s.
 */
#include "benches/fabric_int.h"
#include "common/stats.h"
#include "common/util.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <time.h>

#define FP_MAGIC 0x67764662u   /* "gvFb" */
#define FP_WARMUP 10
#define FP_WAIT_MS 50          /* one sleep in the queue at most, then the clock is read again */

enum { FP_HELLO = 1, FP_DATA, FP_END, FP_FIGS };

struct fp_hdr {
	uint32_t magic, kind;
	uint64_t from;
	double v[3];
};

struct fp {
	struct fabric *f;
	fi_addr_t peer;
	uint64_t peer_hash;
	double deadline, timeout_s;
	int hello, figs;
	long rx_n, rx_end;
	double rx_t0, rx_t1, rx_bytes;
	double fig[3];
	long pings;
	char *err;
	size_t errlen;
};

static double fp_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int fp_fail(struct fp *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fp_fail(struct fp *p, const char *fmt, ...)
{
	if (p->err && p->errlen) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(p->err, p->errlen, fmt, ap);
		va_end(ap);
	}
	return -1;
}

static int fp_late(struct fp *p)
{
	return fp_fail(p, "peer did not answer within %g s", p->timeout_s);
}

/* One message that arrived in a receive buffer. */
static void fp_handle(struct fp *p, const unsigned char *buf, size_t len)
{
	struct fabric *f = p->f;
	uint64_t from;
	if (len == sizeof from) {
		memcpy(&from, buf, sizeof from);
		p->pings += from == p->peer_hash;
		return;
	}
	struct fp_hdr h;
	if (len < sizeof h)
		return;
	memcpy(&h, buf, sizeof h);
	if (h.magic != FP_MAGIC)
		return;
	if (h.from != p->peer_hash) {
		if (h.kind == FP_HELLO && f->nearly < FABRIC_AV_CACHE)
			f->early[f->nearly++] = h.from;
		return;
	}
	double t = fp_now();
	switch (h.kind) {
	case FP_HELLO: p->hello = 1; break;
	case FP_DATA:
		if (p->rx_n++ == 0)
			p->rx_t0 = t;
		else
			p->rx_bytes += (double)len;
		p->rx_t1 = t;
		break;
	case FP_END: p->rx_end = isfinite(h.v[0]) && h.v[0] >= 0 && h.v[0] < 1e15 ? (long)h.v[0] : 0; break;
	case FP_FIGS:
		p->figs = 1;
		memcpy(p->fig, h.v, sizeof p->fig);
		break;
	default: break;
	}
}

static struct fabric_txop *fp_txop(const struct fabric *f, void *ctx)
{
	struct fabric_txop *op = ctx;
	return op >= f->tx && op < f->tx + FABRIC_TX_SLOTS ? op : NULL;
}

static struct fabric_rxop *fp_rxop(const struct fabric *f, void *ctx)
{
	struct fabric_rxop *op = ctx;
	return op >= f->rx && op < f->rx + FABRIC_RX_SLOTS ? op : NULL;
}

static void fp_tx_done(struct fabric *f, struct fabric_txop *op)
{
	if (op && op->busy) {
		op->busy = 0;
		f->tx_busy--;
	}
}

/* A queue read's error that says the connection went away. */
static int fp_conn_gone(int rc)
{
	return rc == -FI_ENOENT || rc == -FI_ECONNRESET || rc == -FI_ECONNABORTED || rc == -FI_ENOTCONN;
}

/* The queue's error entry: 0 when it may be ignored, -1 (err set) when it ends the pair. */
static int fp_cq_error(struct fp *p)
{
	struct fabric *f = p->f;
	struct fi_cq_err_entry e;
	memset(&e, 0, sizeof e);
	if (fi_cq_readerr(f->cq, &e, 0) < 0)
		return 0;
	struct fabric_txop *tx = fp_txop(f, e.op_context);
	struct fabric_rxop *rx = fp_rxop(f, e.op_context);
	if (tx) {
		fp_tx_done(f, tx);
		if (tx->dest != p->peer)
			return 0;   /* a send to an earlier partner */
		return fp_fail(p, "peer connection failed: %s", fabric_strerr(f, e.err));
	}
	if (rx && e.err != FI_ECANCELED)
		rx->repost = 1;
	gv_debug("fabric: a receive failed: %s", fabric_strerr(f, e.err));
	return 0;
}

/* Posts again the receives taken (one that finds no room now: the next pass). */
static int fp_repost(struct fp *p)
{
	struct fabric *f = p->f;
	for (int i = 0; i < FABRIC_RX_SLOTS; i++) {
		int rc = f->rx[i].repost ? fabric_post_rx(f, i) : 0;
		if (rc == 0)
			f->rx[i].repost = 0;
		else if (rc != -FI_EAGAIN)
			return fp_fail(p, "libfabric (%s): fi_recv: %s", f->provider, fabric_strerr(f, rc));
	}
	return 0;
}

/*
 * Takes what completed, waiting up to wait_ms (never past the deadline) for something to: a
 * queue with a wait object sleeps in fi_cq_sread, one without is read again after a yield.
 * 0, or -1 with err.
 */
static int fp_progress(struct fp *p, int wait_ms)
{
	struct fabric *f = p->f;
	struct fi_cq_msg_entry e[16];
	double left = (p->deadline - fp_now()) * 1000;
	if (wait_ms > left)
		wait_ms = left > 0 ? (int)left : 0;
	ssize_t n = fi_cq_read(f->cq, e, 16);
	if (n == -FI_EAGAIN && f->cq_wait && wait_ms > 0)
		n = fi_cq_sread(f->cq, e, 16, NULL, wait_ms);
	for (ssize_t i = 0; i < n; i++) {
		struct fabric_rxop *rx = fp_rxop(f, e[i].op_context);
		fp_tx_done(f, fp_txop(f, e[i].op_context));
		if (rx) {
			fp_handle(p, rx->buf, e[i].len);
			rx->repost = 1;
		}
	}
	if (n == -FI_EAVAIL && fp_cq_error(p))
		return -1;
	if (n < 0 && n != -FI_EAGAIN && n != -FI_EAVAIL && n != -FI_ETIMEDOUT)
		/* the tcp provider tells a peer that died mid-pair this way too (-FI_ENOENT under load), not only by an
		   error entry: a pair has one peer, so a queue gone with its connection is said as the peer's */
		return fp_fail(p, "%slibfabric (%s): fi_cq_read: %s", fp_conn_gone((int)n) ? "peer connection failed: " : "",
			       f->provider, fabric_strerr(f, (int)n));
	if (n == -FI_EAGAIN && !f->cq_wait && wait_ms > 0)
		sched_yield();   /* a polled queue: let the peer run where they share a CPU */
	return fp_repost(p);
}

static int fp_busy_to_peer(const struct fp *p)
{
	int n = 0;
	for (int i = 0; i < FABRIC_TX_SLOTS; i++)
		n += p->f->tx[i].busy && p->f->tx[i].dest == p->peer;
	return n;
}

/* Posts one send (data: the shared buffer; else the op's own bytes), waiting for a free op and room. */
static int fp_send(struct fp *p, const void *msg, size_t len, int data)
{
	struct fabric *f = p->f;
	for (;;) {
		struct fabric_txop *op = NULL;
		for (int i = 0; i < FABRIC_TX_SLOTS && !op; i++)
			if (!f->tx[i].busy)
				op = &f->tx[i];
		if (op) {
			if (!data)
				memcpy(op->msg, msg, len);
			void *buf = data ? f->txdata : op->msg;
			void *desc = f->mr_local ? fi_mr_desc(data ? f->txmr : f->ctlmr) : NULL;
			ssize_t rc = fi_send(f->ep, buf, len, desc, p->peer, &op->ctx);
			if (rc == 0) {
				op->busy = 1;
				op->dest = p->peer;
				f->tx_busy++;
				return 0;
			}
			if (rc != -FI_EAGAIN)
				return fp_fail(p, "libfabric (%s): fi_send: %s", f->provider, fabric_strerr(f, (int)rc));
		}
		if (fp_progress(p, FP_WAIT_MS))
			return -1;
		if (fp_now() > p->deadline)
			return fp_late(p);
	}
}

static int fp_ctl(struct fp *p, uint32_t kind, double v0, double v1)
{
	struct fp_hdr h = { .magic = FP_MAGIC, .kind = kind, .from = p->f->hash, .v = { v0, v1, 0 } };
	return fp_send(p, &h, sizeof h, 0);
}

static int fp_have_hello(const struct fp *p) { return p->hello; }
static int fp_have_end(const struct fp *p) { return p->rx_end >= 0 && p->rx_n >= p->rx_end; }
static int fp_have_figs(const struct fp *p) { return p->figs; }
static int fp_sent_all(const struct fp *p) { return fp_busy_to_peer(p) == 0; }

static int fp_wait(struct fp *p, int (*done)(const struct fp *))
{
	while (!done(p)) {
		if (fp_progress(p, FP_WAIT_MS))
			return -1;
		if (fp_now() > p->deadline)
			return fp_late(p);
	}
	return 0;
}

static int fp_wait_pings(struct fp *p, long n)
{
	while (p->pings < n) {
		if (fp_progress(p, FP_WAIT_MS))
			return -1;
		if (fp_now() > p->deadline)
			return fp_late(p);
	}
	return 0;
}

/* Sender of one direction: DATA for `seconds` (at least 2 messages), then END. */
static int fp_stream(struct fp *p, double seconds)
{
	double end = fp_now() + seconds;
	long sent = 0;
	while (sent < 2 || fp_now() < end) {
		if (fp_busy_to_peer(p) >= FABRIC_WINDOW) {   /* sends stuck toward an earlier, dead partner do not count */
			if (fp_progress(p, FP_WAIT_MS))
				return -1;
			if (fp_now() > p->deadline)
				return fp_late(p);
			continue;
		}
		if (fp_send(p, NULL, p->f->msg_bytes, 1))
			return -1;
		sent++;
	}
	return fp_ctl(p, FP_END, (double)sent, 0);
}

/* Receiver of one direction: GB/s of what arrived after the first message. */
static int fp_take(struct fp *p, double *gbps)
{
	if (fp_wait(p, fp_have_end))
		return -1;
	double dt = p->rx_t1 - p->rx_t0;
	if (p->rx_n < 2 || !(dt > 0))
		return fp_fail(p, "peer sent too little to time (%ld messages)", p->rx_n);
	*gbps = p->rx_bytes / dt / 1e9;
	return 0;
}

/* Step 4: the lower side times round trips, the other answers.  *lat_us on the lower side. */
static int fp_latency(struct fp *p, int lower, int iters, double *lat_us)
{
	double *rtt = gv_calloc((size_t)iters, sizeof *rtt);
	uint64_t me = p->f->hash;
	int rc = 0;
	for (int k = 0; k < FP_WARMUP + iters && !rc; k++) {
		double t0 = fp_now();
		if (lower)
			rc = fp_send(p, &me, sizeof me, 0) || fp_wait_pings(p, k + 1);
		else
			rc = fp_wait_pings(p, k + 1) || fp_send(p, &me, sizeof me, 0);
		if (k >= FP_WARMUP)
			rtt[k - FP_WARMUP] = fp_now() - t0;
	}
	if (!rc && lower)
		*lat_us = gv_median_inplace(rtt, (size_t)iters) / 2 * 1e6;
	free(rtt);
	return rc ? -1 : 0;
}

/* A HELLO from this peer that came while an earlier pair was under way. */
static void fp_early(struct fp *p)
{
	struct fabric *f = p->f;
	for (int i = 0; i < f->nearly; i++)
		if (f->early[i] == p->peer_hash) {
			p->hello = 1;
			f->early[i] = f->early[--f->nearly];
			return;
		}
}

static int fp_run(struct fp *p, int lower, const struct fabric_pair_opts *o, struct fabric_pair_result *res)
{
	double mine = NAN, lat = NAN;
	fp_early(p);
	if (fp_ctl(p, FP_HELLO, 0, 0) || fp_wait(p, fp_have_hello))
		return -1;
	for (int dir = 0; dir < 2; dir++) {   /* 0: a->b, 1: b->a */
		int sender = lower == (dir == 0);
		if (sender ? fp_stream(p, o->seconds_each_way) : fp_take(p, &mine))
			return -1;
	}
	if (fp_latency(p, lower, o->lat_iters, &lat))
		return -1;
	if (fp_ctl(p, FP_FIGS, mine, lat) || fp_wait(p, fp_have_figs) || fp_wait(p, fp_sent_all))
		return -1;
	res->gbps_ab = lower ? p->fig[0] : mine;
	res->gbps_ba = lower ? mine : p->fig[0];
	res->lat_us = lower ? lat : p->fig[1];
	if (!(res->gbps_ab > 0) || !(res->gbps_ba > 0) || !(res->lat_us > 0))
		return fp_fail(p, "peer reported no figures");
	return 0;
}

int fabric_pair(struct fabric *f, const char *peer_addr, int lower, const struct fabric_pair_opts *o,
		struct fabric_pair_result *res, char *err, size_t errlen)
{
	struct fabric_pair_opts d = o ? *o : (struct fabric_pair_opts){ 0 };
	if (!d.msg_bytes)
		d.msg_bytes = 1u << 20;
	if (!(d.seconds_each_way > 0))
		d.seconds_each_way = 0.5;
	if (d.lat_iters <= 0)
		d.lat_iters = 200;
	if (d.timeout_ms <= 0)
		d.timeout_ms = 20000;
	res->gbps_ab = res->gbps_ba = res->lat_us = NAN;
	if (d.msg_bytes < sizeof(struct fp_hdr) || d.msg_bytes > (256u << 20)) {
		snprintf(err, errlen, "fabric message size %zu is out of range %zu..%u", d.msg_bytes,
			 sizeof(struct fp_hdr), 256u << 20);
		return -1;
	}
	struct fp p = { .f = f, .rx_end = -1, .err = err, .errlen = errlen, .timeout_s = d.timeout_ms / 1000.0 };
	p.deadline = fp_now() + p.timeout_s;
	p.peer_hash = fabric_fnv(peer_addr ? peer_addr : "");
	if (!peer_addr || !strcmp(peer_addr, f->addr))
		return fp_fail(&p, "fabric pair needs the other node's address, not this one's");
	if (fabric_buffers(f, d.msg_bytes, err, errlen) || fabric_peer(f, peer_addr, &p.peer, err, errlen))
		return -1;
	struct fp_hdr h = { .magic = FP_MAGIC, .kind = FP_DATA, .from = f->hash };
	memcpy(f->txdata, &h, sizeof h);   /* every data message says who sent it */
	if (fp_run(&p, lower, &d, res)) {
		f->broken = 1;   /* fabric_close leaves it open (fabric.c says why) */
		return -1;
	}
	return 0;
}
