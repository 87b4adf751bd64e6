/*
 * rendezvous_int.h - what the parts of the rendezvous share (platform/rendezvous.h):
 * rendezvous_util.c below them all (sockets, buffers, clocks, the struct's
 * life), rendezvous_accept.c rank 0's arrivals (listen, challenge, hello,
 * refusals), rendezvous_join.c a rank's (connect, hello, welcome),
 * rendezvous.c the conversation (send, receive, the pump) over both, and
 * rendezvous_wire.c the lines as bytes.  Parts call down only.
 */
#ifndef GPUVET_RENDEZVOUS_INT_H
#define GPUVET_RENDEZVOUS_INT_H

#include "platform/rendezvous.h"
#include "platform/rendezvous_wire.h"

#include <poll.h>
#include <stdint.h>
#include <sys/socket.h>

#define RDZV_READ_CHUNK (256u << 10)
#define RDZV_RETRY_MS 100          /* between connection attempts to a rank 0 not yet listening */
#define RDZV_HELLO_MS 5000         /* a connection that has said no valid hello by then is dropped */
#define RDZV_PENDING_MAX 256       /* connections without a hello held at once; the oldest goes first */

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

struct rdzv_buf {
	char *d;
	size_t len, cap, scan;   /* scan: bytes already searched for '\n' */
};

struct rdzv_peer {
	int fd;                  /* -1: never connected or closed */
	int failed;              /* the connection died (EOF, error, garbage) */
	int reported;            /* rank 0: its death handed out by rdzv_recv */
	char why[160];           /* how it died */
	json_t *hello;           /* rank 0: its hello, with "addr" and the clock's skew */
	uint8_t key[RDZV_MAC_LEN];   /* the connection's key (rendezvous_wire.h) */
	uint64_t seq_in, seq_out;    /* the next message's sequence number each way */
	struct rdzv_buf in;
};

struct rdzv_pending {            /* rank 0: accepted, no valid hello yet */
	int fd;
	char addr[64];
	long long since_ms;      /* accepted at (monotonic) */
	double sent_at;          /* the challenge sent at (rank 0's wall clock) */
	uint8_t nonce[RDZV_NONCE_LEN];
	struct rdzv_buf in;
};

struct rdzv {
	int rank, size;
	int lfd;                 /* rank 0's listener */
	int port;
	char local[64];
	int local_set;           /* rank 0: local taken from an accepted connection */
	char name[2 * RDZV_HOST_MAX];   /* HOST:PORT as given, for messages */
	char token[RDZV_TOKEN_MAX + 1]; /* GPUVET_CLUSTER_TOKEN, "" none */
	struct rdzv_peer *peers; /* size entries; ranks > 0 use peers[0] */
	struct rdzv_pending *pend;
	size_t npend, cappend;
	struct pollfd *pfd;      /* capfd entries */
	size_t capfd;
	int next;                /* rank 0: where rdzv_recv's round robin starts */
	int gathered;            /* rank 0: arrivals are over; a new connection is refused with late_why */
	char late_why[200];
	char **refused;          /* rank 0: per claimed rank, why its last connection was refused; NULL none */
	rdzv_admit_fn admit;
	void *admit_arg;
	json_t *welcome;         /* rank > 0: rank 0's welcome */
};

long long rdzv_now_ms(void);
double rdzv_wall(void);                          /* CLOCK_REALTIME, seconds */
int rdzv_left_ms(long long deadline);
long long rdzv_deadline_of(int timeout_ms);
void rdzv_sock_setup(int fd);
void rdzv_addr_text(const struct sockaddr_storage *sa, socklen_t len, char *out, size_t outlen);
void rdzv_sock_addr(int fd, int peer, char *out, size_t outlen);
/* Room for n pollfds in r->pfd. */
struct pollfd *rdzv_pfd(struct rdzv *r, size_t n);
struct rdzv *rdzv_new(int rank, int size, const char *name, const char *token);

void rdzv_buf_free(struct rdzv_buf *b);
/* Reads what the socket has, at most max bytes held.  0: still open; -1: closed or failed (why
 * set); -2: over max without a line's end. */
int rdzv_buf_fill(int fd, struct rdzv_buf *b, size_t max, char *why, size_t whylen);
/* The next complete line, without its '\n' (NUL-terminated in place), or NULL; *n its length. */
char *rdzv_buf_line(struct rdzv_buf *b, size_t *n);
void rdzv_buf_pop(struct rdzv_buf *b, size_t n);
/* Writes all n bytes to a non-blocking socket within timeout_ms; 0, or -1 with errno-style text. */
int rdzv_write_all(int fd, const char *s, size_t n, int timeout_ms, char *why, size_t whylen);

/* rank 0 (rendezvous_accept.c): takes and refuses what arrives on the listener after the arrivals. */
void rdzv_refuse_late(struct rdzv *r);

#endif
