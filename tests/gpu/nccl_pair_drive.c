/*
 * nccl_pair_drive.c - benches/nccl_pair.h driven directly, one process per
 * rank, for tests/gpu/session.sh's `nccl-pair` step on a machine with 2 or
 * more GPUs (none lent yet: it has not run on GPUs).  Built here by
 * `make build/tests/gpu/nccl_pair_drive` (tests/gpu/bundle.sh carries it),
 * so the GPU paths can be checked before and apart from `gpuvet cluster
 * run`, which calls the same functions between real nodes.
 *
 *   nccl_pair_drive available
 *   nccl_pair_drive uid                         prints a fresh unique id (hex)
 *   nccl_pair_drive pair UID LOWER TIMEOUT_MS
 *   nccl_pair_drive allreduce UID FIRST_RANK NGPUS TOTAL MAX_BYTES TIMEOUT_MS
 *
 * Each prints one JSON object (the figures, or "error") and exits 0, or 1
 * on an error, 2 on usage.  The caller shares the id between the
 * processes (session.sh through a file); CUDA_VISIBLE_DEVICES picks each
 * process's GPU 0.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "benches/nccl_pair.h"

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int pair(char **argv)
{
	double ab = 0, ba = 0, t0 = now();
	char net[64], err[512];
	int rc = nccl_pair_run(argv[2], atoi(argv[3]), atoi(argv[4]), &ab, &ba, net, sizeof net, err, sizeof err);
	if (rc)
		printf("{\"op\":\"pair\",\"error\":\"%s\",\"seconds\":%.3f}\n", err, now() - t0);
	else
		printf("{\"op\":\"pair\",\"gbps_ab\":%.6g,\"gbps_ba\":%.6g,\"net\":\"%s\",\"seconds\":%.3f}\n", ab, ba, net,
		       now() - t0);
	return rc ? 1 : 0;
}

static int allreduce(char **argv)
{
	struct gv_cluster_ar_point pts[48];
	size_t n = sizeof pts / sizeof pts[0];
	double t0 = now();
	char net[64], err[512];
	int rc = nccl_cluster_allreduce(argv[2], atoi(argv[3]), atoi(argv[4]), atoi(argv[5]), atof(argv[6]),
					atoi(argv[7]), pts, &n, net, sizeof net, err, sizeof err);
	if (rc) {
		printf("{\"op\":\"allreduce\",\"error\":\"%s\",\"seconds\":%.3f}\n", err, now() - t0);
		return 1;
	}
	printf("{\"op\":\"allreduce\",\"net\":\"%s\",\"seconds\":%.3f,\"points\":[", net, now() - t0);
	for (size_t i = 0; i < n; i++)
		printf("%s{\"bytes\":%.0f,\"time_us\":%.6g,\"algbw_gbps\":%.6g,\"busbw_gbps\":%.6g}", i ? "," : "",
		       pts[i].bytes, pts[i].time_us, pts[i].algbw_gbps, pts[i].busbw_gbps);
	printf("]}\n");
	return 0;
}

int main(int argc, char **argv)
{
	char hex[2 * NCCL_PAIR_UID_BYTES + 1], why[512];
	int ngpus = 0;
	if (argc == 2 && !strcmp(argv[1], "available")) {
		int rc = nccl_pair_available(&ngpus, why, sizeof why);
		printf("{\"available\":%d,\"ngpus\":%d,\"why\":\"%s\"}\n", rc == 0, ngpus, rc ? why : "");
		return rc ? 1 : 0;
	}
	if (argc == 2 && !strcmp(argv[1], "uid")) {
		if (nccl_pair_uid(hex, why, sizeof why)) {
			fprintf(stderr, "nccl_pair_drive: %s\n", why);
			return 1;
		}
		printf("%s\n", hex);
		return 0;
	}
	if (argc == 5 && !strcmp(argv[1], "pair"))
		return pair(argv);
	if (argc == 8 && !strcmp(argv[1], "allreduce"))
		return allreduce(argv);
	fprintf(stderr, "usage: nccl_pair_drive available | uid | pair UID LOWER TIMEOUT_MS |\n"
			"       allreduce UID FIRST_RANK NGPUS TOTAL MAX_BYTES TIMEOUT_MS\n");
	return 2;
}
