/*
 * test_nccl_log.c - the transport NCCL chose, read from its debug output
 * (benches/nccl_log.c) on the recorded examples of tests/fixtures/nccl/
 * (their README says how they were written) and on text that is not NCCL's.
 */
#include "benches/nccl_log.h"
#include "common/util.h"
#include "tests/unit/t.h"

#include <jansson.h>
#include <stdlib.h>
#include <unistd.h>

static void parse_fixture(const char *name, struct nccl_transport *t, char *sum, size_t len)
{
	char path[256];
	size_t n = 0;
	snprintf(path, sizeof path, "tests/fixtures/nccl/%s", name);
	char *s = gv_read_file(path, &n);
	CHECK(s != NULL);
	nccl_log_parse(s ? s : "", s ? n : 0, t);
	nccl_transport_summary(t, sum, len);
	free(s);
}

static void test_h100_nvls(void)
{
	struct nccl_transport t;
	char sum[128];
	parse_fixture("h100x8-nvls.log", &t, sum, sizeof sum);
	CHECK_STR(sum, "NVLS + P2P over NVLink");
	CHECK(t.seen == (NCCL_TP_NVLS | NCCL_TP_P2P));
	CHECK_STR(t.intra, "NVL");
	CHECK(t.connections == 32);
	CHECK(t.lines > 40);
}

static void test_a100_ring(void)
{
	struct nccl_transport t;
	char sum[128];
	parse_fixture("a100x8-nvlink-ring.log", &t, sum, sizeof sum);
	/* "NVLS multicast support is not available" is not NVLS */
	CHECK_STR(sum, "P2P over NVLink");
	CHECK(!(t.seen & NCCL_TP_NVLS));
}

static void test_pcie(void)
{
	struct nccl_transport t;
	char sum[128];
	parse_fixture("l4x2-shm.log", &t, sum, sizeof sum);
	CHECK_STR(sum, "SHM (host memory)");
	CHECK_STR(t.intra, "SYS");
	parse_fixture("a10gx2-pcie-p2p.log", &t, sum, sizeof sum);
	CHECK_STR(sum, "P2P over PCIe");
	CHECK_STR(t.intra, "PIX");
}

static void test_two_nodes(void)
{
	struct nccl_transport t;
	char sum[128], js[512];
	parse_fixture("h100x16-two-nodes-ib.log", &t, sum, sizeof sum);
	CHECK_STR(sum, "P2P over NVLink + NET/IB");
	CHECK_STR(t.net, "IB");
	json_error_t e;
	json_t *j = json_loads(nccl_transport_json(&t, js, sizeof js), 0, &e);
	CHECK(j != NULL);
	CHECK_STR(json_string_value(json_object_get(j, "summary")), "P2P over NVLink + NET/IB");
	CHECK_STR(json_string_value(json_object_get(j, "net")), "IB");
	CHECK(json_integer_value(json_object_get(j, "p2p")) == 1);
	CHECK(json_integer_value(json_object_get(j, "nvls")) == 0);
	json_decref(j);
}

/* One node: "Using network Socket" is printed at init but no connection goes over it. */
static void test_network_named_but_unused(void)
{
	struct nccl_transport t;
	char sum[128], js[512];
	parse_fixture("a100x8-nvlink-ring.log", &t, sum, sizeof sum);
	CHECK(!(t.seen & NCCL_TP_NET));
	json_t *j = json_loads(nccl_transport_json(&t, js, sizeof js), 0, NULL);
	CHECK(j && !strcmp(json_string_value(json_object_get(j, "net")), ""));
	json_decref(j);
}

/*
 * The one real capture (tests/fixtures/gpu/h100-2026-11-25, NCCL 2.28.9): one rank on one H100,
 * so NCCL initialised, searched a graph ("type LOC/PIX") and named its network, but connected
 * nothing: no transport is claimed, and the network it never used is not reported as used.
 */
static void test_real_one_rank(void)
{
	struct nccl_transport t;
	char sum[128];
	parse_fixture("h100x1-one-rank-real.log", &t, sum, sizeof sum);
	CHECK(t.lines == 307);
	CHECK(t.seen == 0);
	CHECK(t.connections == 0);
	CHECK_STR(t.intra, "");        /* "type LOC/PIX": the rank talks to itself, no path between gpus */
	CHECK_STR(t.net, "Socket");   /* named at init ("Using network Socket")... */
	char js[512];
	json_t *j = json_loads(nccl_transport_json(&t, js, sizeof js), 0, NULL);
	CHECK(j && !strcmp(json_string_value(json_object_get(j, "net")), ""));   /* ...but never used */
	json_decref(j);
	CHECK_STR(sum, "unknown");
}

static void test_not_nccl(void)
{
	struct nccl_transport t;
	char sum[64], js[512];
	const char junk[] = "via P2P/CUMEM\nChannel 00 : 0 -> 1 via SHM\n\0\xff NCCL INF";
	nccl_log_parse(junk, sizeof junk - 1, &t);
	CHECK(t.lines == 0 && t.seen == 0);
	CHECK_STR(nccl_transport_summary(&t, sum, sizeof sum), "unknown");
	nccl_log_parse("", 0, &t);
	CHECK_STR(nccl_transport_summary(&t, sum, sizeof sum), "unknown");
	/* a network name with quotes or control bytes stays one valid JSON string */
	const char odd[] = "h:1:1 [0] NCCL INFO Channel 00/0 : 0[0] -> 8[0] [send] via NET/I\"B\\\x1b/0\n";
	nccl_log_parse(odd, sizeof odd - 1, &t);
	json_t *j = json_loads(nccl_transport_json(&t, js, sizeof js), 0, NULL);
	CHECK(j != NULL);
	json_decref(j);
	/* too small a buffer: never a cut JSON text */
	char tiny[8];
	CHECK_STR(nccl_transport_json(&t, tiny, sizeof tiny), "{}");
	char small[12];
	CHECK(strlen(nccl_transport_summary(&t, small, sizeof small)) < sizeof small);
}

/*
 * A network plugin's name has a space: AWS's aws-ofi-nccl registers itself as "AWS Libfabric"
 * (older releases "Libfabric"), and NCCL prints the name as it is at init and in each
 * connection line.  The whole name is kept, not its first word.
 */
static void test_plugin_network_name(void)
{
	struct nccl_transport t;
	char sum[64];
	const char log[] =
		"ip-10-0-0-1:1:1 [0] NCCL INFO Using network AWS Libfabric\n"
		"ip-10-0-0-1:1:1 [0] NCCL INFO Channel 00/0 : 0[0] -> 8[0] [send] via NET/AWS Libfabric/0/GDRDMA\r\n";
	nccl_log_parse(log, sizeof log - 1, &t);
	CHECK(t.seen & NCCL_TP_NET);
	CHECK_STR(t.net, "AWS Libfabric");
	CHECK_STR(nccl_transport_summary(&t, sum, sizeof sum), "NET/AWS Libfabric");
	const char ib[] = "h:1:1 [0] NCCL INFO Channel 00/0 : 0[0] -> 8[0] [send] via NET/IB/0/GDRDMA\n";
	nccl_log_parse(ib, sizeof ib - 1, &t);
	CHECK_STR(t.net, "IB");
}

/* nccl_log_read parses a file from an offset on: a second communicator's part of one process's log. */
static void test_read_from_offset(void)
{
	struct nccl_transport t;
	char path[512];
	const char *dir = getenv("TMPDIR");
	snprintf(path, sizeof path, "%s/gpuvet-test-nccl-log-XXXXXX", dir && *dir ? dir : "/tmp");
	int fd = mkstemp(path);
	const char first[] = "h:1:1 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM/read\n";
	const char second[] = "h:1:1 [0] NCCL INFO Channel 00/0 : 0[0] -> 8[0] [send] via NET/Socket/0\n";
	CHECK(fd >= 0);
	if (fd < 0)
		return;
	CHECK(write(fd, first, sizeof first - 1) == (ssize_t)(sizeof first - 1));
	long mark = nccl_log_size(path);
	CHECK(mark == (long)(sizeof first - 1));
	CHECK(write(fd, second, sizeof second - 1) == (ssize_t)(sizeof second - 1));
	close(fd);
	nccl_log_read(path, 0, &t);
	CHECK(t.connections == 2 && (t.seen & NCCL_TP_P2P) && (t.seen & NCCL_TP_NET));
	nccl_log_read(path, mark, &t);
	CHECK(t.connections == 1 && !(t.seen & NCCL_TP_P2P) && (t.seen & NCCL_TP_NET));
	CHECK_STR(t.net, "Socket");
	nccl_log_read(path, 1L << 30, &t);       /* past the end: nothing */
	CHECK(t.lines == 0);
	unlink(path);
	nccl_log_read(path, 0, &t);              /* gone: nothing, no error */
	CHECK(t.lines == 0);
	CHECK(nccl_log_size(path) == 0);
}

TEST_MAIN(T(test_h100_nvls), T(test_a100_ring), T(test_pcie), T(test_two_nodes), T(test_network_named_but_unused), T(test_real_one_rank),
	  T(test_not_nccl), T(test_plugin_network_name), T(test_read_from_offset))
