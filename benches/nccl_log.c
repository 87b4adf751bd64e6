/*
 * nccl_log.c - the transport NCCL chose, from its NCCL_DEBUG=INFO output
 * (format in nccl_log.h; recorded examples in tests/fixtures/nccl/).
 */
#include "benches/nccl_log.h"

#include "common/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* NCCL's path types, fastest first (src/graph/topo.h PATH_*); the index is the order. */
static const char *const path_types[] = { "NVL", "NVB", "C2C", "PIX", "PXB", "PXN", "PHB", "SYS", "NET", NULL };

static int path_rank(const char *s, size_t n)
{
	for (int i = 0; path_types[i]; i++)
		if (strlen(path_types[i]) == n && !memcmp(path_types[i], s, n))
			return i;
	return -1;
}

/* The first occurrence of the NUL-terminated needle in line[0..n), or NULL. */
static const char *find(const char *line, size_t n, const char *needle)
{
	size_t k = strlen(needle);
	for (size_t i = 0; k <= n && i <= n - k; i++)
		if (!memcmp(line + i, needle, k))
			return line + i;
	return NULL;
}

/* Copies the text at p (up to '/', '\r', end, and a space when stop_space) into out[0..cap). */
static void word_until(const char *p, const char *end, int stop_space, char *out, size_t cap)
{
	size_t i = 0;
	while (p < end && *p != '/' && !(stop_space && *p == ' ') && *p != '\r' && i + 1 < cap) {
		unsigned char c = (unsigned char)*p++;
		out[i++] = c >= 0x20 && c < 0x7f && c != '"' && c != '\\' ? (char)c : '?';   /* JSON-safe as it is */
	}
	out[i] = 0;
}

/*
 * A network's name at p, up to '/' or the end of the line: plugins' names have spaces
 * ("via NET/AWS Libfabric/0/GDRDMA", "Using network AWS Libfabric").
 */
static void net_name(const char *p, const char *end, char *out, size_t cap)
{
	const char *q = p;
	while (q < end && *q != '/' && *q != '\r')
		q++;
	while (q > p && q[-1] == ' ')
		q--;
	word_until(p, q, 0, out, cap);
}

static void via_line(const char *v, const char *end, struct nccl_transport *t)
{
	t->connections++;
	if (end - v >= 3 && !memcmp(v, "P2P", 3))
		t->seen |= NCCL_TP_P2P;
	else if (end - v >= 3 && !memcmp(v, "SHM", 3))
		t->seen |= NCCL_TP_SHM;
	else if (end - v >= 7 && !memcmp(v, "COLLNET", 7))
		t->seen |= NCCL_TP_COLLNET;
	else if (end - v >= 4 && !memcmp(v, "NET/", 4)) {
		t->seen |= NCCL_TP_NET;
		if (!t->net[0])
			net_name(v + 4, end, t->net, sizeof t->net);
	}
}

static void type_line(const char *ty, const char *end, struct nccl_transport *t)
{
	const char *p = ty;
	while (p < end && *p != '/' && *p != ',' && *p != ' ')
		p++;
	int r = path_rank(ty, (size_t)(p - ty));
	if (r < 0 || !strcmp(path_types[r], "NET"))
		return;
	if (!t->intra[0] || r < path_rank(t->intra, strlen(t->intra)))
		snprintf(t->intra, sizeof t->intra, "%s", path_types[r]);
}

static void one_line(const char *line, size_t n, struct nccl_transport *t)
{
	const char *end = line + n, *p = find(line, n, "NCCL INFO ");
	if (!p)
		return;
	t->lines++;
	p += 10;
	n = (size_t)(end - p);
	const char *v = find(p, n, " via ");
	if (v && find(p, n, "Channel "))
		via_line(v + 5, end, t);
	if (find(p, n, "Pattern ") && (v = find(p, n, ", type ")) != NULL)
		type_line(v + 7, end, t);
	if (find(p, n, "Connected NVLS") || (n >= 10 && !memcmp(p, "NVLS comm ", 10)))
		t->seen |= NCCL_TP_NVLS;
	if (find(p, n, "Connected CollNet") || find(p, n, "Connected COLLNET"))
		t->seen |= NCCL_TP_COLLNET;
	if (n >= 14 && !memcmp(p, "Using network ", 14))
		net_name(p + 14, end, t->net, sizeof t->net);
}

void nccl_log_parse(const char *text, size_t len, struct nccl_transport *t)
{
	memset(t, 0, sizeof *t);
	size_t i = 0;
	while (i < len) {
		const char *nl = memchr(text + i, '\n', len - i);
		size_t n = nl ? (size_t)(nl - (text + i)) : len - i;
		one_line(text + i, n, t);
		i += n + 1;
	}
}

static const char *p2p_words(const struct nccl_transport *t)
{
	if (!strcmp(t->intra, "NVL") || !strcmp(t->intra, "NVB"))
		return "P2P over NVLink";
	if (!strcmp(t->intra, "SYS"))
		return "P2P over PCIe across CPU sockets";
	if (t->intra[0] && strcmp(t->intra, "C2C"))
		return "P2P over PCIe";
	return "P2P";
}

const char *nccl_transport_summary(const struct nccl_transport *t, char *buf, size_t len)
{
	size_t o = 0;
	const char *part[5];
	char net[32];
	int k = 0;
	if (t->seen & NCCL_TP_NVLS)
		part[k++] = "NVLS";
	if (t->seen & NCCL_TP_P2P)
		part[k++] = p2p_words(t);
	if (t->seen & NCCL_TP_SHM)
		part[k++] = "SHM (host memory)";
	if (t->seen & NCCL_TP_NET) {
		snprintf(net, sizeof net, "NET/%s", t->net[0] ? t->net : "?");
		part[k++] = net;
	}
	if (t->seen & NCCL_TP_COLLNET)
		part[k++] = "CollNet";
	if (len == 0)
		return buf;
	buf[0] = 0;
	if (!k)
		snprintf(buf, len, "unknown");
	for (int i = 0; i < k && o < len; i++) {
		int w = snprintf(buf + o, len - o, "%s%s", i ? " + " : "", part[i]);
		o += w > 0 ? (size_t)w : 0;
	}
	return buf;
}

const char *nccl_transport_json(const struct nccl_transport *t, char *buf, size_t len)
{
	char sum[128];
	/* every text here is fixed or printable ASCII without '"' and '\\' (word_until()): JSON as it is */
	int w = snprintf(buf, len,
			 "{\"summary\":\"%s\",\"p2p\":%d,\"shm\":%d,\"net\":\"%s\",\"nvls\":%d,\"collnet\":%d,"
			 "\"intra_path\":\"%s\",\"connections\":%d}",
			 nccl_transport_summary(t, sum, sizeof sum), !!(t->seen & NCCL_TP_P2P), !!(t->seen & NCCL_TP_SHM),
			 (t->seen & NCCL_TP_NET) ? t->net : "", !!(t->seen & NCCL_TP_NVLS), !!(t->seen & NCCL_TP_COLLNET),
			 t->intra, t->connections);
	if (len && (w < 0 || (size_t)w >= len))
		snprintf(buf, len, "{}");
	return buf;
}

int nccl_log_route(const char *path)
{
	const char *lvl = getenv("NCCL_DEBUG");
	if (getenv("NCCL_DEBUG_FILE"))
		return 1;
	setenv("NCCL_DEBUG_FILE", path, 1);
	if (!lvl || (strcasecmp(lvl, "INFO") && strcasecmp(lvl, "TRACE")))
		setenv("NCCL_DEBUG", "INFO", 1);
	if (!getenv("NCCL_DEBUG_SUBSYS"))
		setenv("NCCL_DEBUG_SUBSYS", "INIT,GRAPH,NET,ENV", 1);
	return 0;
}

long nccl_log_size(const char *path)
{
	FILE *f = path && path[0] ? fopen(path, "rb") : NULL;
	long n = 0;
	if (f && fseek(f, 0, SEEK_END) == 0)
		n = ftell(f);
	if (f)
		fclose(f);
	return n > 0 ? n : 0;
}

void nccl_log_read(const char *path, long offset, struct nccl_transport *t)
{
	size_t n = 0;
	char *text = path && path[0] ? gv_read_file_max(path, 64u << 20, &n) : NULL;
	size_t off = offset > 0 && (size_t)offset < n ? (size_t)offset : 0;
	if (offset > 0 && (size_t)offset >= n)
		n = off = 0;
	nccl_log_parse(text ? text + off : "", text ? n - off : 0, t);
	free(text);
}
