/*
 * fuzz_rendezvous_wire.c - the rendezvous' lines as rank 0 and a rank read
 * them (platform/rendezvous_wire.h) on any bytes: a hello (against a fixed
 * token, nonce and size), rank 0's first line (a challenge or a refusal), a
 * framed message (against a fixed key and sequence number).
 *
 * Invariants: a refusal says why in one non-empty line; an accepted hello
 * names a rank in 1..size-1 and is a JSON object; a rank claimed is in range
 * or -1; an accepted message is a JSON object; a line framed by
 * rdzv_wire_frame opens with the same key and number and with no other
 * (another sequence number, label or key is refused); the refusal line a
 * reason becomes is one line that rdzv_wire_first reads back as a refusal.
 *
 * Seeds (corpus/fuzz_rendezvous_wire/): a valid hello, a challenge, a
 * refusal, an old-style unframed hello, a framed message.
 */
#include "platform/rendezvous_wire.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define TOKEN "fuzz-token-0123456789"
#define SIZE 8

static void one_line(const char *why)
{
	if (!why[0] || strchr(why, '\n'))
		abort();
}

static void hello(const char *s, size_t n)
{
	uint8_t n0[RDZV_NONCE_LEN];
	memset(n0, 0x5a, sizeof n0);
	json_t *h = NULL;
	struct rdzv_hello_info hi;
	int claimed = -2;
	char why[256] = "";
	if (rdzv_wire_hello(s, n, TOKEN, n0, SIZE, &h, &hi, &claimed, why, sizeof why)) {
		one_line(why);
		if (h)
			abort();
	} else if (!json_is_object(h) || hi.rank < 1 || hi.rank >= SIZE || claimed != hi.rank) {
		abort();
	}
	if (claimed != -1 && (claimed < 1 || claimed >= SIZE))
		abort();
	json_decref(h);
}

static void first(const char *s, size_t n)
{
	uint8_t nonce[RDZV_NONCE_LEN];
	int auth = -1;
	char why[256] = "";
	int rc = rdzv_wire_first(s, n, nonce, &auth, why, sizeof why);
	if (rc && (strchr(why, '\n') || (rc == -1 && !why[0])))
		abort();
	if (rc == 0 && auth != 0 && auth != 1)
		abort();
	size_t len;
	char *line = rdzv_wire_refusal(s, &len);   /* any bytes as a reason: still one line that reads back */
	if (len < 2 || line[len - 1] != '\n' || memchr(line, '\n', len - 1) || rdzv_wire_first(line, len - 1, nonce, &auth, why, sizeof why) != 1)
		abort();
	free(line);
}

static void message(const char *s, size_t n)
{
	uint8_t key[RDZV_MAC_LEN], seq[8], other[8];
	memset(key, 0x33, sizeof key);
	rdzv_wire_seq(7, seq);
	rdzv_wire_seq(8, other);
	json_t *m = NULL;
	char why[256] = "";
	if (rdzv_wire_open(key, sizeof key, 'A', seq, 8, s, n, &m, why, sizeof why))
		one_line(why);
	else if (!json_is_object(m))
		abort();
	json_decref(m);
	/* framed here: opens with its own key and number only */
	size_t len;
	char *line = rdzv_wire_frame(key, sizeof key, 'A', seq, 8, s, n, &len);
	json_t *j = json_loadb(s, n, JSON_REJECT_DUPLICATES, NULL);
	int object = json_is_object(j);
	json_decref(j);
	if (rdzv_wire_open(key, sizeof key, 'A', seq, 8, line, len - 1, &m, why, sizeof why) != (object ? 0 : -1))
		abort();
	json_decref(m);
	if (!rdzv_wire_open(key, sizeof key, 'A', other, 8, line, len - 1, &m, why, sizeof why) ||
	    !rdzv_wire_open(key, sizeof key, 'B', seq, 8, line, len - 1, &m, why, sizeof why) ||
	    !rdzv_wire_open(key, 16, 'A', seq, 8, line, len - 1, &m, why, sizeof why))
		abort();
	free(line);
}

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n);
int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
	if (n < 1 || n > RDZV_HELLO_MAX + 1)
		return 0;
	char *s = malloc(n);   /* the bytes after the mode, NUL-terminated for the reason's C text */
	if (!s)
		return 0;
	memcpy(s, d + 1, n - 1);
	s[n - 1] = '\0';
	switch (d[0] % 3) {
	case 0:
		hello(s, n - 1);
		break;
	case 1:
		first(s, n - 1);
		break;
	default:
		message(s, n - 1);
		break;
	}
	free(s);
	return 0;
}
