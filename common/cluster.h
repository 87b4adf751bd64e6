/*
 * cluster.h - a cluster run as plain data: its nodes, the pair matrix, the
 * cluster all-reduce, the analysis's findings and the verdict (#49).  One
 * owner for the shape every layer shares: runners/ fills it from the ranks,
 * judge/ schedules the pairs and analyses it (judge/cluster.h), results/
 * stores and loads it (results/store.h), reports/ draws it.  Its JSON form
 * (the wire between ranks' results, `cluster run --json`, `cluster show
 * --json`) is common/cluster_json.c: one writer, one reader.
 *
 * No I/O here; gv_cluster_free() releases what gv_cluster_new() and the
 * readers allocated.  Ranks are 0..nnodes-1 and index nodes[].  Figures
 * not measured are NAN.
 */
#ifndef GPUVET_CLUSTER_H
#define GPUVET_CLUSTER_H

#include <stddef.h>
#include <stdio.h>
#include <jansson.h>

#define GV_CLUSTER_MAX_NODES 4096
#define GV_CLUSTER_UUID_LEN  40

/* How a node took part. */
enum gv_node_state {
	GV_NODE_OK = 0,      /* arrived and reported its fingerprint */
	GV_NODE_MISSING,     /* never arrived at the rendezvous before its deadline */
	GV_NODE_LOST,        /* arrived, then its connection dropped or it missed a deadline */
};

/* One figure of a node's fingerprint, for the straggler analysis. */
struct gv_cluster_metric {
	char name[64];       /* an instance-level metric, or a per-GPU one reduced to its worst GPU */
	double value;
	int higher_better;   /* 1: more is better (TFLOP/s, GB/s), 0: less is better (latency) */
	double remeasured;   /* the same figure measured again, beside the suspect stragglers' second measurement; NAN when not */
};

struct gv_cluster_node {
	int rank;
	int state;                        /* enum gv_node_state */
	char host[128];                   /* its hostname */
	char addr[64];                    /* its address as the rendezvous saw it (IPv4/IPv6 text) */
	char run_uuid[GV_CLUSTER_UUID_LEN]; /* its stored fingerprint's run uuid, "" when none */
	char provider[32];                /* aws, lambda, alibaba, "" unknown */
	char instance_type[64];           /* its SKU, "" unknown */
	char gpu_model[64];               /* "" none */
	int ngpus;
	int verdict;                      /* its own gate: 0 accept, 1 reject, 3 could not measure, -1 not judged */
	char why[256];                    /* the verdict's reason sentence, or why it is missing or lost */
	struct gv_cluster_metric *metrics;
	size_t nmetrics;
	double clock_skew_s;              /* its clock minus rank 0's when its hello arrived, seconds; NAN unknown */
	double clock_skew_unc_s;          /* half the hello's round trip: the true skew lies within clock_skew_s +- this; NAN unknown */
	double link_gbps;                 /* its NIC's own stated rate (sysfs speed, libfabric link attributes), GB/s; NAN unknown */
	char link_source[96];             /* where that rate was read ("sysfs eth0 speed 400 Mb/s"), "" unknown */
};

/* How a pair's measurement ended. */
enum gv_pair_state {
	GV_PAIR_MEASURED = 0,
	GV_PAIR_FAILED,      /* tried and failed or timed out: why[] */
	GV_PAIR_SKIPPED,     /* not tried (a node missing or lost, or not in the schedule's rounds run) */
};

/* One pair of nodes, a < b, measured in round `round` of the schedule. */
struct gv_cluster_pair {
	int a, b;
	int round;
	int state;                        /* enum gv_pair_state */
	double gbps_ab, gbps_ba;          /* host to host (libfabric), GB/s each way */
	double lat_us;                    /* host to host one-way latency (half the round trip), microseconds */
	double nccl_gbps_ab, nccl_gbps_ba;/* GPU to GPU (NCCL send/recv), GB/s each way; NAN when not measured */
	char why[160];
};

/* One point of the cluster all-reduce curve (nccl-tests' formulas). */
struct gv_cluster_ar_point {
	double bytes;
	double time_us;
	double algbw_gbps;                /* bytes / time, GB/s */
	double busbw_gbps;                /* algbw * 2 (n-1) / n, GB/s */
};

/* What the analysis found (judge/cluster.h). */
enum gv_finding_kind {
	GV_FIND_MISSING = 0, /* a node never arrived */
	GV_FIND_LOST,        /* a node dropped out */
	GV_FIND_NODE_REJECTED,   /* its own fingerprint was rejected by the policy */
	GV_FIND_NODE_UNMEASURED, /* its own gate could not measure what the policy requires */
	GV_FIND_BAD_NODE,    /* every pair of the node is slow */
	GV_FIND_BAD_LINK,    /* one pair is slow alone: a link or route */
	GV_FIND_STRAGGLER,   /* its own fingerprint is an outlier against the cluster median */
	GV_FIND_FABRIC_RULE, /* a policy fabric rule failed cluster-wide (all-reduce, unmeasured pairs) */
	GV_FIND_COORDINATOR, /* rank 0 itself is the likely cause (it lost every rank at once, or all its own pairs failed) */
	GV_FIND_INTERMITTENT,/* a node whose pairs are slow or fail in some rounds and not others: a flapping port */
	GV_FIND_CLOCK_SKEW,  /* a node's clock far from rank 0's, either way */
	GV_FIND_SHARED_HOST, /* two ranks on one host: their pair is left out */
	GV_FIND_KINDS
};

struct gv_cluster_finding {
	int kind;                         /* enum gv_finding_kind */
	int rank;                         /* the node, -1 for a cluster-wide finding */
	int peer;                         /* the other node of a bad link, else -1 */
	int drain;                        /* 1: the node is on the list to drain */
	char evidence[384];               /* one sentence with the figures: against the median and the stated rate */
};

struct gv_cluster {
	char uuid[GV_CLUSTER_UUID_LEN];
	char started_at[32];              /* ISO 8601 UTC, as runs' */
	char engine[16];                  /* slurm, mpi, kubernetes */
	char schedule[8];                 /* all, ring, bisect */
	char transport[64];               /* the libfabric provider that carried the pairs ("tcp", "efa"...), "" none */
	char nccl_net[64];                /* NCCL's network for the GPU pairs and the all-reduce, "" none */
	char profile[16];                 /* the nodes' fingerprint profile */
	int nnodes;                       /* the size the engine gave */
	struct gv_cluster_node *nodes;    /* nnodes, index = rank */
	struct gv_cluster_pair *pairs;    /* every pair the schedule named, in round order */
	size_t npairs;
	int nrounds;
	struct gv_cluster_ar_point *ar;   /* the cluster all-reduce curve, ascending bytes */
	size_t nar;
	char ar_why[160];                 /* why there is no all-reduce ("no GPUs on the nodes"), "" when there is one */
	double stated_gbps;               /* the instance type's stated network rate, GB/s per node; NAN unknown */
	char stated_source[256];          /* where that rate is stated */
	double pair_median_gbps;          /* the cluster median: each node's own median pair figure (slower direction), their median; NAN none */
	double pair_healthy_gbps;         /* what healthy pairs reach host to host: the 0.9 quantile of the pairs' slower directions (judge/cluster_pairs.c); NAN none */
	int verdict;                      /* 0 accept, 1 reject, 3 could not measure, -1 not judged */
	char policy[80];                  /* the policy's name and digest the verdict used */
	int authenticated;                /* 1: every rank proved the job's token (GPUVET_CLUSTER_TOKEN); 0: the run was not authenticated */
	double deadline_s;                /* the whole run's deadline (--deadline), seconds; NAN unknown */
	struct gv_cluster_finding *findings;
	size_t nfindings;
};

/* A cluster of n nodes (ranks 0..n-1, state GV_NODE_MISSING, verdict -1, figures NAN); NULL on n out of range or OOM. */
struct gv_cluster *gv_cluster_new(int n);
void gv_cluster_free(struct gv_cluster *c);
/* Appends a finding (evidence printf-style); -1 on OOM. */
int gv_cluster_add_finding(struct gv_cluster *c, int kind, int rank, int peer, int drain, const char *fmt, ...)
	__attribute__((format(printf, 6, 7)));
/* Names of the enums, for JSON and for people ("missing", "bad_node", ...); "?" out of range. */
const char *gv_node_state_name(int state);
const char *gv_pair_state_name(int state);
const char *gv_finding_name(int kind);

/* JSON (common/cluster_json.c).  The writer's document is the reader's input; */
json_t *gv_cluster_to_json(const struct gv_cluster *c);
/* The same document printed to f (indented by 2, then a newline), its pairs made one at a time:
 * what `cluster run --json` and `cluster show --json` print.  -1 on a write error. */
int gv_cluster_write_json(const struct gv_cluster *c, FILE *f);
/* NULL with err on a document that is not one (a clear one-line reason). */
struct gv_cluster *gv_cluster_from_json(const json_t *doc, char *err, size_t errlen);
/* One node's metrics <-> JSON array [{name, value, higher_better}]. */
json_t *gv_cluster_metrics_to_json(const struct gv_cluster_node *n);
int gv_cluster_metrics_from_json(const json_t *arr, struct gv_cluster_node *n, char *err, size_t errlen);

#endif
