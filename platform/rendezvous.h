/*
 * rendezvous.h - the ranks of `gpuvet cluster run` meet over TCP (#49, #56):
 * rank 0 listens, every other rank connects to it, answers rank 0's
 * challenge with its hello and is welcomed or refused; from then on rank 0
 * and each rank exchange JSON objects, one per line, each with its MAC
 * (platform/rendezvous_wire.h: the job's token, GPUVET_CLUSTER_TOKEN, keys
 * them; without one they are checksums), at most RDZV_MAX_MSG bytes each.
 * A star: ranks > 0 talk to rank 0 only.
 *
 * Every wait has a deadline: timeouts are milliseconds relative to the call,
 * and no function blocks past its timeout.  Sockets are non-blocking, sends
 * use MSG_NOSIGNAL (a closed peer never raises SIGPIPE).  A peer that closes
 * its connection or sends a line that is not a JSON object with a valid MAC
 * (or one over the cap) is marked dead and reported once by rdzv_recv.  A
 * connection without a valid hello holds at most RDZV_HELLO_MAX bytes and
 * RDZV_HELLO_MS of rank 0's time, takes no rank and is told why it is
 * refused.  IPv4 and IPv6; errors are one lowercase line in err.
 */
#ifndef GPUVET_RENDEZVOUS_H
#define GPUVET_RENDEZVOUS_H

#include <stddef.h>
#include <jansson.h>

#define RDZV_MAX_MSG (64u << 20)   /* one message, its '\n' included */
#define RDZV_HOST_MAX 256          /* a host's text, NUL included */

struct rdzv;

/*
 * rank 0: listens on "HOST:PORT" (HOST may be a name, an IPv4 or [IPv6]; "*" or "" = any); token
 * is the job's secret (NULL or "": none, the run is not authenticated).  -1 with err such as
 * "cannot listen on 198.18.0.1:29517: Address already in use".
 */
int rdzv_listen(const char *hostport, int size, const char *token, struct rdzv **r, char *err, size_t errlen);
/*
 * rank 0: the caller's say on a hello whose proof holds, before its rank is given: 0 admits it
 * (and may add fields to welcome, the object the rank is welcomed with), -1 refuses it with why
 * (sent to the rank).  hello has "addr" (the peer's address as text).
 */
typedef int (*rdzv_admit_fn)(void *arg, int rank, const json_t *hello, json_t *welcome, char *why, size_t whylen);
void rdzv_set_admit(struct rdzv *r, rdzv_admit_fn fn, void *arg);
/* rank 0: what a connection arriving after rdzv_gather_hellos is told ("arrived after --wait ran out"). */
void rdzv_set_late_why(struct rdzv *r, const char *why);
/*
 * rank 0: accepts connections until all size-1 other ranks have been welcomed or timeout_ms
 * passes; returns how many arrived.  Each connection is sent a challenge (a fresh nonce) and must
 * answer with a hello proving the token within RDZV_HELLO_MS and RDZV_HELLO_MAX bytes; one that
 * does not, or names a rank out of range or already taken, or another size, or that admit
 * refuses, is sent a one-line refusal and closed, and takes no rank.  Once it returns, every
 * connection without a rank is refused, and so is every later one (rdzv_set_late_why).
 */
int rdzv_gather_hellos(struct rdzv *r, int timeout_ms);
/* rank 0: why the last connection that claimed rank R was refused, NULL when none was. */
const char *rdzv_refused_why(const struct rdzv *r, int rank);

struct rdzv_join {
	const char *token;          /* GPUVET_CLUSTER_TOKEN; NULL or "": none */
	double clock_shift_s;       /* added to this rank's wall clock as its hello says it (a test's shifted clock), 0 */
};
/*
 * ranks > 0: connects to rank 0, retrying until timeout_ms (rank 0 may start later, or drop a
 * connection that waited too long), answers its challenge with hello (the caller's object; rank,
 * size, nonce, clock and token are set here) and waits for its welcome.  -1 with err naming
 * HOST:PORT; when rank 0 refused this rank, err says "refused by rank 0: WHY".
 */
int rdzv_connect(const char *hostport, int rank, int size, const struct rdzv_join *j, json_t *hello, int timeout_ms,
		 struct rdzv **r, char *err, size_t errlen);
/* ranks > 0: rank 0's welcome ({"op":"welcome",...} with what admit added), NULL on rank 0. */
const json_t *rdzv_welcome(const struct rdzv *r);
/*
 * rank 0: rank R's hello (NULL when it never arrived), with "addr" added (the peer's IP as rank
 * 0's socket saw it: text, no port) and "clock_skew_s" / "clock_skew_unc_s" when it sent its
 * clock: its clock minus rank 0's, from the midpoint between the challenge sent and the hello
 * read, and half that round trip (the true skew lies within it).
 */
const json_t *rdzv_hello(const struct rdzv *r, int rank);
/* Whether the run is authenticated: this side has a token (rank 0: every rank then proved it). */
int rdzv_authenticated(const struct rdzv *r);
/* The IP this process talks to the rendezvous from (getsockname; rank 0: of its first accepted
 * connection, else the listen host), text, no port; "" when unknown. */
const char *rdzv_local_addr(const struct rdzv *r);
int rdzv_alive(const struct rdzv *r, int rank);   /* rank 0: connected and not dropped */
/*
 * rank 0: whether rank R's link has gone silent before the kernel gives up on it (RDZV_SILENT_S):
 * what rank 0 sent it has waited 5 s for an acknowledgement, or the idle connection's keepalive
 * probes go unanswered (TCP_INFO).  1 with why ("went silent (nothing acknowledged for 18 s)"), 0
 * when it acknowledges (alive, however slow to answer).
 */
int rdzv_silent(const struct rdzv *r, int rank, char *why, size_t whylen);
/* Sends one message: rank 0 to rank `to`; other ranks to rank 0 (`to` ignored). -1 with err
 * when the peer is gone or the send does not finish within timeout_ms. */
int rdzv_send(struct rdzv *r, int to, const json_t *msg, int timeout_ms, char *err, size_t errlen);
/* Receives the next message.  rank 0: from any live rank, *from set; a rank whose connection
 * closes (or sends garbage or a bad MAC, or goes silent) is marked dead and returned once as *from=R,
 * *msg=NULL (rc 0), with why in err ("closed the connection", "went silent (no answer for 25 s)"...).
 * Others: from rank 0 (*from = 0; rank 0 gone: -1).  Returns 0, 1 on timeout, -1 on error
 * (rank 0: no live rank left). */
int rdzv_recv(struct rdzv *r, int *from, json_t **msg, int timeout_ms, char *err, size_t errlen);
void rdzv_close(struct rdzv *r);

/* Beyond the design's list: */

/* rank 0: the port it listens on (the kernel's choice when PORT was 0), -1 when unknown. */
int rdzv_port(const struct rdzv *r);
/*
 * "HOST:PORT", "[IPV6]:PORT", "*:PORT" or ":PORT" into host (brackets removed; "" for any) and
 * port (0..65535, decimal, no sign).  A bare IPv6 address ("::1:29500") is refused: it cannot be
 * told from its port.  0, or -1 with a one-line reason in err.
 */
int rdzv_parse_hostport(const char *s, char host[RDZV_HOST_MAX], int *port, char *err, size_t errlen);
/* The inverse: "[h]:p" when h holds a ':', "*:p" when h is "", else "h:p"; returns snprintf's count. */
int rdzv_format_hostport(const char *host, int port, char *buf, size_t len);

#endif
