/*
 * rendezvous_wire.h - the rendezvous' lines as bytes (#56): the challenge
 * rank 0 sends on accept, the refusal it sends before closing, the hello a
 * rank answers with (its proof), and every later message framed with its
 * MAC.  Pure functions of their input, apart from the sockets
 * (platform/rendezvous*.c), so they can be fuzzed
 * (tests/fuzz/fuzz_rendezvous_wire.c).  docs/cluster.md "The per-job secret".
 *
 *   challenge  {"gpuvet":"rendezvous","version":2,"nonce":"<64 hex>","auth":true}     plain JSON
 *   refusal    {"refused":"<why>"}                                                    plain JSON
 *   hello      <64 hex MAC> {"rank":R,"size":N,"nonce":"<64 hex>","clock":T,"token":B,...}
 *              MAC = HMAC-SHA256(token, 'H' || rank 0's nonce || the JSON text)
 *   message    <64 hex MAC> {...}
 *              MAC = HMAC-SHA256(K, dir || seq as 8 bytes big-endian || the JSON text)
 *              K = HMAC-SHA256(token, "gpuvet rendezvous key" || rank 0's nonce || the rank's nonce)
 *              dir 'A' from rank 0 to a rank, 'B' back; seq counts each direction's messages from 0
 *              (rank 0's welcome is its 0), so a message cannot be replayed, reordered, reflected or
 *              moved to another connection, and only a holder of the token can make one.
 *
 * Without a token (GPUVET_CLUSTER_TOKEN unset) the key is empty: the same lines, a checksum
 * against corruption, no proof of anything (the challenge says "auth":false).
 */
#ifndef GPUVET_RENDEZVOUS_WIRE_H
#define GPUVET_RENDEZVOUS_WIRE_H

#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

#define RDZV_NONCE_LEN 32
#define RDZV_MAC_LEN 32
#define RDZV_MAC_HEX (2 * RDZV_MAC_LEN)
#define RDZV_FRAME_EXTRA (RDZV_MAC_HEX + 1)   /* the MAC's hex and its space, before the JSON */
#define RDZV_HELLO_MAX 4096                   /* bytes a connection may send before its hello is taken */
#define RDZV_TOKEN_MAX 1024                   /* GPUVET_CLUSTER_TOKEN's length, at most */

/* What a rank's hello says, once its proof holds. */
struct rdzv_hello_info {
	int rank;
	uint8_t nonce[RDZV_NONCE_LEN];   /* the rank's own nonce: half of the connection's key */
	double clock;                    /* its wall clock (seconds since 1970) when it sent the hello; NAN none */
	int token;                       /* it says it holds a token */
};

/* n bytes as lowercase hex into out (2n + 1 bytes). */
void rdzv_hex(const uint8_t *in, size_t n, char *out);
/* 2n hex characters (either case) into n bytes; -1 when s is not exactly that. */
int rdzv_unhex(const char *s, size_t slen, uint8_t *out, size_t n);

/* The connection's key K from the token ("" or NULL: none) and both nonces. */
void rdzv_wire_key(const char *token, const uint8_t n0[RDZV_NONCE_LEN], const uint8_t nr[RDZV_NONCE_LEN],
		   uint8_t key[RDZV_MAC_LEN]);
/* The MAC of a line: HMAC-SHA256(key, label || ctx || text). */
void rdzv_wire_mac(const uint8_t *key, size_t klen, char label, const uint8_t *ctx, size_t ctxlen, const char *text,
		   size_t n, uint8_t out[RDZV_MAC_LEN]);
/* seq as the 8 bytes a message's MAC covers. */
void rdzv_wire_seq(uint64_t seq, uint8_t out[8]);

/* A framed line (MAC hex, space, text, '\n'), malloc'd, its length in *outlen. */
char *rdzv_wire_frame(const uint8_t *key, size_t klen, char label, const uint8_t *ctx, size_t ctxlen, const char *text,
		      size_t n, size_t *outlen);
/*
 * A framed line (without its '\n') checked and parsed: 0 with *msg a JSON object (new
 * reference); -1 with why ("its MAC does not match (not this job's token, or altered)", "not
 * framed", "not a JSON object").  The line is not changed.
 */
int rdzv_wire_open(const uint8_t *key, size_t klen, char label, const uint8_t *ctx, size_t ctxlen, const char *line,
		   size_t n, json_t **msg, char *why, size_t whylen);

/* The challenge line ('\n' ended) into out (at least 160 bytes); its length. */
size_t rdzv_wire_challenge(const uint8_t nonce[RDZV_NONCE_LEN], int auth, char *out, size_t outlen);
/* The refusal line ('\n' ended), malloc'd; why cut to 200 bytes and made one line. */
char *rdzv_wire_refusal(const char *why, size_t *outlen);
/*
 * rank > 0: rank 0's first line (no '\n'): 0 a challenge (nonce, auth set), 1 a refusal (its
 * reason in why), -1 neither (why says what it is).
 */
int rdzv_wire_first(const char *line, size_t n, uint8_t nonce[RDZV_NONCE_LEN], int *auth, char *why, size_t whylen);
/*
 * rank 0: a hello line (no '\n') answering challenge n0, checked against the token ("" or NULL:
 * none) and the job's size: 0 with *hello (new reference, the JSON object) and *hi; -1 with why,
 * the reason rank 0 sends back (bad proof, a token on one side only, rank out of range, another
 * size...).  *claimed is the rank the hello names when it names one in range (for rank 0 to say
 * which rank a refused connection claimed), else -1.
 */
int rdzv_wire_hello(const char *line, size_t n, const char *token, const uint8_t n0[RDZV_NONCE_LEN], int size,
		    json_t **hello, struct rdzv_hello_info *hi, int *claimed, char *why, size_t whylen);

#endif
