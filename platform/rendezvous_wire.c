/*
 * rendezvous_wire.c - the rendezvous' lines as bytes (platform/rendezvous_wire.h):
 * framing, MACs (libcrypto's HMAC-SHA256, common/crypto.h), the challenge, the
 * refusal and the hello.  No sockets here.
 */
#include "platform/rendezvous_wire.h"
#include "common/crypto.h"
#include "common/util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char key_label[] = "gpuvet rendezvous key";

void rdzv_hex(const uint8_t *in, size_t n, char *out)
{
	static const char digits[] = "0123456789abcdef";
	for (size_t i = 0; i < n; i++) {
		out[2 * i] = digits[in[i] >> 4];
		out[2 * i + 1] = digits[in[i] & 15];
	}
	out[2 * n] = '\0';
}

static int nibble(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

int rdzv_unhex(const char *s, size_t slen, uint8_t *out, size_t n)
{
	if (slen != 2 * n)
		return -1;
	for (size_t i = 0; i < n; i++) {
		int hi = nibble(s[2 * i]), lo = nibble(s[2 * i + 1]);
		if (hi < 0 || lo < 0)
			return -1;
		out[i] = (uint8_t)(hi << 4 | lo);
	}
	return 0;
}

void rdzv_wire_key(const char *token, const uint8_t n0[RDZV_NONCE_LEN], const uint8_t nr[RDZV_NONCE_LEN],
		   uint8_t key[RDZV_MAC_LEN])
{
	uint8_t buf[sizeof key_label - 1 + 2 * RDZV_NONCE_LEN];
	memcpy(buf, key_label, sizeof key_label - 1);
	memcpy(buf + sizeof key_label - 1, n0, RDZV_NONCE_LEN);
	memcpy(buf + sizeof key_label - 1 + RDZV_NONCE_LEN, nr, RDZV_NONCE_LEN);
	gv_hmac_sha256(token ? token : "", token ? strlen(token) : 0, buf, sizeof buf, key);
}

void rdzv_wire_seq(uint64_t seq, uint8_t out[8])
{
	for (int i = 7; i >= 0; i--, seq >>= 8)
		out[i] = (uint8_t)(seq & 0xff);
}

void rdzv_wire_mac(const uint8_t *key, size_t klen, char label, const uint8_t *ctx, size_t ctxlen, const char *text,
		   size_t n, uint8_t out[RDZV_MAC_LEN])
{
	const uint8_t lb = (uint8_t)label;
	const void *part[3] = { &lb, ctx, text };
	size_t len[3] = { 1, ctxlen, n };
	gv_hmac_sha256_parts(key, klen, part, len, 3, out);
}

char *rdzv_wire_frame(const uint8_t *key, size_t klen, char label, const uint8_t *ctx, size_t ctxlen, const char *text,
		      size_t n, size_t *outlen)
{
	uint8_t mac[RDZV_MAC_LEN];
	rdzv_wire_mac(key, klen, label, ctx, ctxlen, text, n, mac);
	char *out = gv_malloc(RDZV_FRAME_EXTRA + n + 1);
	rdzv_hex(mac, sizeof mac, out);
	out[RDZV_MAC_HEX] = ' ';
	memcpy(out + RDZV_FRAME_EXTRA, text, n);
	out[RDZV_FRAME_EXTRA + n] = '\n';
	*outlen = RDZV_FRAME_EXTRA + n + 1;
	return out;
}

/* The JSON object of a text, or NULL. */
static json_t *object_of(const char *s, size_t n)
{
	json_t *j = json_loadb(s, n, JSON_REJECT_DUPLICATES, NULL);
	if (j && !json_is_object(j)) {
		json_decref(j);
		j = NULL;
	}
	return j;
}

/* The MAC of a framed line into mac; -1 when it is not framed. */
static int frame_mac(const char *line, size_t n, uint8_t mac[RDZV_MAC_LEN])
{
	return n < RDZV_FRAME_EXTRA || line[RDZV_MAC_HEX] != ' ' || rdzv_unhex(line, RDZV_MAC_HEX, mac, RDZV_MAC_LEN) ? -1 : 0;
}

int rdzv_wire_open(const uint8_t *key, size_t klen, char label, const uint8_t *ctx, size_t ctxlen, const char *line,
		   size_t n, json_t **msg, char *why, size_t whylen)
{
	uint8_t got[RDZV_MAC_LEN], want[RDZV_MAC_LEN];
	*msg = NULL;
	if (frame_mac(line, n, got))
		return gv_errf(why, whylen, "sent a line without a MAC (not a rank of this gpuvet)");
	rdzv_wire_mac(key, klen, label, ctx, ctxlen, line + RDZV_FRAME_EXTRA, n - RDZV_FRAME_EXTRA, want);
	if (!gv_mem_equal(got, want, sizeof got))
		return gv_errf(why, whylen, "sent a message whose MAC does not match (altered, replayed, or not this job's token)");
	*msg = object_of(line + RDZV_FRAME_EXTRA, n - RDZV_FRAME_EXTRA);
	return *msg ? 0 : gv_errf(why, whylen, "sent a line that is not a JSON object");
}

size_t rdzv_wire_challenge(const uint8_t nonce[RDZV_NONCE_LEN], int auth, char *out, size_t outlen)
{
	char hex[2 * RDZV_NONCE_LEN + 1];
	rdzv_hex(nonce, RDZV_NONCE_LEN, hex);
	int w = snprintf(out, outlen, "{\"gpuvet\":\"rendezvous\",\"version\":2,\"nonce\":\"%s\",\"auth\":%s}\n", hex,
			 auth ? "true" : "false");
	return w < 0 || (size_t)w >= outlen ? 0 : (size_t)w;
}

char *rdzv_wire_refusal(const char *why, size_t *outlen)
{
	char one[201];
	size_t k = 0;
	for (const char *p = why ? why : ""; *p && k + 1 < sizeof one; p++)
		one[k++] = (unsigned char)*p < ' ' ? ' ' : *p;
	one[k] = '\0';
	json_t *j = json_pack("{s:s}", "refused", one);
	char *s = j ? json_dumps(j, JSON_COMPACT) : NULL;
	json_decref(j);
	if (!s) {
		s = gv_strdup("{\"refused\":\"refused\"}");
	}
	size_t n = strlen(s);
	s = gv_realloc(s, n + 2);
	s[n] = '\n';
	s[n + 1] = '\0';
	*outlen = n + 1;
	return s;
}

int rdzv_wire_first(const char *line, size_t n, uint8_t nonce[RDZV_NONCE_LEN], int *auth, char *why, size_t whylen)
{
	json_t *j = object_of(line, n);
	const char *refused = json_string_value(json_object_get(j, "refused"));
	const char *hex = json_string_value(json_object_get(j, "nonce"));
	const json_t *a = json_object_get(j, "auth");
	int rc = -1;
	if (refused) {
		snprintf(why, whylen, "%.200s", refused);
		rc = 1;
	} else if (!j || strcmp(json_string_value(json_object_get(j, "gpuvet")) ? json_string_value(json_object_get(j, "gpuvet")) : "",
				"rendezvous")) {
		snprintf(why, whylen, "what listens there is not a gpuvet rendezvous");
	} else if (json_integer_value(json_object_get(j, "version")) != 2 || !hex || !json_is_boolean(a) ||
		   rdzv_unhex(hex, strlen(hex), nonce, RDZV_NONCE_LEN)) {
		snprintf(why, whylen, "rank 0 speaks another version of the rendezvous (a different gpuvet)");
	} else {
		*auth = json_is_true(a);
		rc = 0;
	}
	json_decref(j);
	return rc;
}

/* The hello's fields, once its proof holds; -1 with why. */
static int hello_fields(const json_t *h, int size, struct rdzv_hello_info *hi, char *why, size_t whylen)
{
	const json_t *jr = json_object_get(h, "rank"), *js = json_object_get(h, "size"), *jc = json_object_get(h, "clock");
	const char *nonce = json_string_value(json_object_get(h, "nonce"));
	if (!json_is_integer(jr))
		return gv_errf(why, whylen, "a hello without an integer rank");
	json_int_t rank = json_integer_value(jr);
	if (rank < 1 || rank >= size)
		return gv_errf(why, whylen, "rank %lld is out of range 1..%d", (long long)rank, size - 1);
	if (!json_is_integer(js) || json_integer_value(js) != size)
		return gv_errf(why, whylen, "rank %lld says the job has %s%lld ranks, rank 0 has %d", (long long)rank,
			       json_is_integer(js) ? "" : "no number of ", json_is_integer(js) ? (long long)json_integer_value(js) : 0LL,
			       size);
	if (!nonce || rdzv_unhex(nonce, strlen(nonce), hi->nonce, RDZV_NONCE_LEN))
		return gv_errf(why, whylen, "rank %lld's hello has no nonce", (long long)rank);
	hi->rank = (int)rank;
	hi->clock = json_is_number(jc) && isfinite(json_number_value(jc)) ? json_number_value(jc) : NAN;
	hi->token = json_is_true(json_object_get(h, "token"));
	return 0;
}

int rdzv_wire_hello(const char *line, size_t n, const char *token, const uint8_t n0[RDZV_NONCE_LEN], int size,
		    json_t **hello, struct rdzv_hello_info *hi, int *claimed, char *why, size_t whylen)
{
	uint8_t got[RDZV_MAC_LEN], want[RDZV_MAC_LEN];
	int have = token && *token;
	*hello = NULL;
	*claimed = -1;
	memset(hi, 0, sizeof *hi);
	if (frame_mac(line, n, got))
		return gv_errf(why, whylen, "its hello has no proof (a client that is not a rank of this gpuvet)");
	json_t *h = object_of(line + RDZV_FRAME_EXTRA, n - RDZV_FRAME_EXTRA);
	if (!h)
		return gv_errf(why, whylen, "its hello is not a JSON object");
	const json_t *jr = json_object_get(h, "rank");
	if (json_is_integer(jr) && json_integer_value(jr) >= 1 && json_integer_value(jr) < size)
		*claimed = (int)json_integer_value(jr);
	rdzv_wire_mac((const uint8_t *)(have ? token : ""), have ? strlen(token) : 0, 'H', n0, RDZV_NONCE_LEN,
		      line + RDZV_FRAME_EXTRA, n - RDZV_FRAME_EXTRA, want);
	int says = json_is_true(json_object_get(h, "token"));
	if (!gv_mem_equal(got, want, sizeof got)) {
		json_decref(h);
		if (have && !says)
			return gv_errf(why, whylen, "bad proof: that rank has no GPUVET_CLUSTER_TOKEN and rank 0 has one");
		if (!have && says)
			return gv_errf(why, whylen, "that rank has a GPUVET_CLUSTER_TOKEN and rank 0 has none: "
				       "give the same one to every rank, or to none");
		return gv_errf(why, whylen, have ? "bad proof: not this job's GPUVET_CLUSTER_TOKEN"
						  : "its hello is corrupted (its checksum does not match)");
	}
	if (hello_fields(h, size, hi, why, whylen)) {
		json_decref(h);
		return -1;
	}
	*hello = h;
	return 0;
}
