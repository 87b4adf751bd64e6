/*
 * policy_cluster.h - the fabric rules of a cluster run: the policy's `cluster:` section, parsed by
 * judge/policy_cluster.c from its table of keys (one row a key: the metric, the key, its kind and
 * range, and the field it sets), applied by judge/cluster*.c.  docs/acceptance.md "Fabric rules"
 * and judge/policies/default.yaml say why each default is what it is.  A fraction or limit of 0 is
 * a check that is off; a policy without the section takes the built-in default's.
 */
#ifndef GPUVET_POLICY_CLUSTER_H
#define GPUVET_POLICY_CLUSTER_H

struct policy_cluster {
	int line;                         /* the section's line, 0 when the policy has none */
	/* cluster.pair.gbps: each pair's slower direction, host to host */
	double pair_of_healthy;           /* min_fraction_of_healthy: x the rate healthy pairs reach */
	double pair_of_median;            /* min_fraction_of_median: x the cluster median */
	double pair_of_stated;            /* min_fraction_of_stated: x the stated rate per card (per flow over tcp) */
	double pair_of_link;              /* min_fraction_of_link: x the slower node's NIC rate (RDMA providers) */
	double pair_min_gbps;             /* min: GB/s, an absolute floor */
	double bad_node_share;            /* bad_node_share: a node this share of whose pairs is slow */
	/* cluster.nccl_pair.gbps: the same GPU 0 to GPU 0 through NCCL */
	double nccl_of_healthy, nccl_of_median, nccl_of_stated, nccl_min_gbps;
	/* cluster.pair.lat_us: each pair's one-way latency */
	double lat_of_healthy;            /* max_factor_of_healthy: x the latency healthy pairs reach */
	double lat_max_us;                /* max: microseconds, an absolute ceiling */
	/* cluster.allreduce.busbw.gbps: the all-reduce's busbw at its largest size */
	double ar_of_stated;              /* min_fraction_of_stated: x the stated rate per node */
	double ar_min_gbps;               /* min: GB/s */
	/* cluster.node.*: each node's own figures against the nodes' median */
	double node_below;                /* max_fraction_below_median (throughputs): the margin's floor */
	double node_above;                /* max_fraction_above_median (latencies): the margin's floor */
	double node_spread;               /* spread_multiple: the margin is at least this many robust deviations */
	/* cluster.node.clock_skew_s: a node's clock against the others' */
	double skew_max_s;                /* max: seconds either way */
	/* cluster.node.verdict */
	double node_unmeasured_reported;  /* unmeasured: reported (1) or counts (0); a double as every key's field */
};

/* The section's keys, for a test that every field has its one row: how many, and row i's metric,
 * key and the offset of the field it sets in struct policy_cluster (-1 past the end). */
#include <stddef.h>
size_t policy_cluster_keys(void);
int policy_cluster_key(size_t i, const char **metric, const char **key, size_t *off);

#endif
