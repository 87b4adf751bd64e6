/*
 * rendezvous.h - the ranks of `gpuvet cluster run` meet over TCP (#49): rank 0
 * listens, every other rank connects to it and says hello, and from then on
 * rank 0 and each rank exchange JSON objects, one per line ('\n'-terminated,
 * compact), at most RDZV_MAX_MSG bytes each.  A star: ranks > 0 talk to rank 0
 * only.
 *
 * Every wait has a deadline: timeouts are milliseconds relative to the call,
 * and no function blocks past its timeout.  Sockets are non-blocking, sends
 * use MSG_NOSIGNAL (a closed peer never raises SIGPIPE).  A peer that closes
 * its connection or sends a line that is not a JSON object (or one over the
 * cap) is marked dead and reported once by rdzv_recv.  IPv4 and IPv6; errors
 * are one lowercase line in err.
 */
#ifndef GPUVET_RENDEZVOUS_H
#define GPUVET_RENDEZVOUS_H

#include <stddef.h>
#include <jansson.h>

#define RDZV_MAX_MSG (64u << 20)   /* one message, its '\n' included */
#define RDZV_HOST_MAX 256          /* a host's text, NUL included */

struct rdzv;

/* rank 0: listens on "HOST:PORT" (HOST may be a name, an IPv4 or [IPv6]; "*" or "" = any).
 * -1 with err such as "cannot listen on 198.18.0.1:29517: Address already in use". */
int rdzv_listen(const char *hostport, int size, struct rdzv **r, char *err, size_t errlen);
/* rank 0: accepts hellos until all size-1 other ranks have said one or timeout_ms passes.
 * Returns how many arrived.  A hello is the first message of a connection: {"rank":R,...};
 * a duplicate or out-of-range rank is refused (connection closed, logged with gv_debug). */
int rdzv_gather_hellos(struct rdzv *r, int timeout_ms);
/* ranks > 0: connects to rank 0, retrying until timeout_ms (rank 0 may start later), and sends
 * hello (the caller's object; "rank" is set by this function).  -1 with err naming HOST:PORT. */
int rdzv_connect(const char *hostport, int rank, int size, json_t *hello, int timeout_ms,
		 struct rdzv **r, char *err, size_t errlen);
/* rank 0: rank R's hello (NULL when it never arrived), with "addr" added: the peer's IP as
 * rank 0's socket saw it (text, no port). */
const json_t *rdzv_hello(const struct rdzv *r, int rank);
/* The IP this process talks to the rendezvous from (getsockname; rank 0: of its first accepted
 * connection, else the listen host), text, no port; "" when unknown. */
const char *rdzv_local_addr(const struct rdzv *r);
int rdzv_alive(const struct rdzv *r, int rank);   /* rank 0: connected and not dropped */
/* Sends one message: rank 0 to rank `to`; other ranks to rank 0 (`to` ignored). -1 with err
 * when the peer is gone or the send does not finish within timeout_ms. */
int rdzv_send(struct rdzv *r, int to, const json_t *msg, int timeout_ms, char *err, size_t errlen);
/* Receives the next message.  rank 0: from any live rank, *from set; a rank whose connection
 * closes (or sends garbage, or goes silent) is marked dead and returned once as *from=R,
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
