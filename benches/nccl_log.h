/*
 * nccl_log.h - the transport NCCL chose, read from its debug output.
 *
 * With NCCL_DEBUG=INFO (subsystems INIT, GRAPH and NET) NCCL says how it
 * connected the ranks of a communicator, one line per connection and per
 * search result, each prefixed "host:pid:tid [dev] NCCL INFO ":
 *
 *   Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM/read       GPU-to-GPU copies (NVLink or PCIe)
 *   Channel 00 : 0[0] -> 1[1] via SHM/direct/direct      through host memory
 *   Channel 00/0 : 0[0] -> 8[0] [send] via NET/IB/0/GDRDMA   across nodes
 *   Pattern 4, crossNic 0, nChannels 16, bw 40.000000/40.000000, type NVL/PIX, sameChannels 1
 *                                                          the path the graph search found
 *   Connected NVLS / NVLS comm 0x.. headRank 0 nHeads 8 ...  NVLink SHARP (NVSwitch multicast)
 *   Using network IB                                       the network transport
 *   Connected all rings / Connected all trees / CollNet ... the algorithms set up
 *
 * "type A/B" names the intra-node path (A) and the path to the NIC (B):
 * LOC, NVL (NVLink), NVB (NVLink through a GPU), C2C, PIX/PXB (PCIe
 * switch), PXN, PHB (PCIe host bridge), SYS (across CPU sockets), NET.
 * The parser keeps the facts it recognises and ignores every other line.
 */
#ifndef GPUVET_NCCL_LOG_H
#define GPUVET_NCCL_LOG_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define NCCL_TP_P2P     0x01u  /* a "via P2P/..." connection */
#define NCCL_TP_SHM     0x02u  /* "via SHM/..." */
#define NCCL_TP_NET     0x04u  /* "via NET/..." */
#define NCCL_TP_NVLS    0x08u  /* NVLS set up ("Connected NVLS", "NVLS comm ...") */
#define NCCL_TP_COLLNET 0x10u  /* "via COLLNET" or "Connected CollNet" */

struct nccl_transport {
	unsigned seen;         /* NCCL_TP_* bits */
	char intra[8];         /* fastest intra-node path of any "type A/B" line ("NVL", "PIX", ...); "" none */
	char net[16];          /* "IB", "Socket", ... (from "Using network X" or "via NET/X/"); "" none */
	int connections;       /* "Channel ... via" lines */
	int lines;             /* "NCCL INFO" lines read */
};

/*
 * Reads NCCL's debug output text[0..len) (need not be NUL-terminated; any
 * bytes) into *t.  Always succeeds; t->lines 0 means nothing of NCCL's.
 */
void nccl_log_parse(const char *text, size_t len, struct nccl_transport *t);

/*
 * What NCCL chose, in words, into buf: "NVLS + P2P over NVLink",
 * "P2P over PCIe", "SHM (host memory)", "NET/IB", joined with " + " in
 * that order; "unknown" when no connection was seen.  Returns buf.
 */
const char *nccl_transport_summary(const struct nccl_transport *t, char *buf, size_t len);

/*
 * The same as a JSON object text into buf:
 * {"summary":"...","p2p":1,"shm":0,"net":"IB","nvls":1,"collnet":0,"intra_path":"NVL","connections":32}
 * Returns buf (truncated output is never produced: "{}" when buf is too small).
 */
const char *nccl_transport_json(const struct nccl_transport *t, char *buf, size_t len);

/*
 * Routes NCCL's INFO output (subsystems INIT,GRAPH,NET,ENV unless the user
 * chose some) to path, before the process's first NCCL call (NCCL reads
 * these once).  A user's own NCCL_DEBUG_FILE is left alone: returns 1 then,
 * else 0.
 */
int nccl_log_route(const char *path);
/* The file's size now (0 when absent): the offset a later nccl_log_read starts from. */
long nccl_log_size(const char *path);
/* nccl_log_parse of the file from byte `offset` on (at most 64 MiB; absent: nothing seen). */
void nccl_log_read(const char *path, long offset, struct nccl_transport *t);

#ifdef __cplusplus
}
#endif

#endif
