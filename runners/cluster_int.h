/*
 * cluster_int.h - what the parts of `gpuvet cluster run` share, below the
 * command (runners/cmd_cluster.c parses the options and calls down):
 * cluster_engine.c finds rank, size and the rendezvous the engine implies;
 * cluster_node.c is every rank's own work (its fingerprint, its side of a
 * pair, its part of the all-reduce); cluster_coord.c is rank 0's (the
 * rounds, the analysis, the store); cluster_worker.c is the other ranks'
 * loop.  None of them calls back into cmd_cluster.c.
 */
#ifndef GPUVET_CLUSTER_INT_H
#define GPUVET_CLUSTER_INT_H

#include <stddef.h>
#include <jansson.h>

#include "benches/bench.h"
#include "runners/inventory.h"

#define CLUSTER_DEFAULT_PORT 29517

/* Who this process is, as the engine that started it says. */
struct cluster_engine {
	char name[16];              /* slurm, mpi, kubernetes */
	int rank, size;
	char rendezvous[320];       /* the HOST:PORT the engine implies, "" none */
	int listen_any;             /* rank 0 listens on every address (a default rendezvous) */
	const char *nodelist;       /* Slurm's SLURM_JOB_NODELIST (the environment's), NULL otherwise */
};

/*
 * From the environment: SLURM_PROCID/SLURM_NTASKS (rendezvous: the first
 * host of SLURM_JOB_NODELIST), OMPI_COMM_WORLD_RANK/SIZE (rendezvous:
 * mpirun's host, from OMPI_MCA_orte_hnp_uri), JOB_COMPLETION_INDEX with
 * size_opt (--size; no default rendezvous).  size_opt > 0 must agree with
 * the engine's size.  0, or -1 with err (a usage error).
 */
int cluster_engine_detect(int size_opt, struct cluster_engine *e, char *err, size_t errlen);
/* The first host of a Slurm hostlist ("gpu[07-09,12],cpu1" -> "gpu07"); -1 when it is not one. */
int cluster_first_host(const char *hostlist, char *out, size_t outlen);
/* The host rank R runs on as the engine says: under Slurm with one task per node (the node list
 * names exactly size hosts) the R-th host of SLURM_JOB_NODELIST; -1 when the engine does not say. */
int cluster_rank_host(const struct cluster_engine *e, int rank, char *out, size_t outlen);

/* What every rank was told on its command line. */
struct cluster_opts {
	const char *rendezvous;     /* --rendezvous, or NULL: the engine's */
	const char *pairs;          /* all (default), ring, bisect */
	const char *profile;        /* quick (default), standard, full */
	const char *bench;          /* --bench a,b */
	const char *policy;         /* --policy FILE, NULL: built-in */
	int size;                   /* --size N (Kubernetes) */
	int wait_s;                 /* --wait: how long rank 0 waits for every rank to arrive */
	int pair_timeout_s;         /* --pair-timeout: one pair, both ways and latency */
	int deadline_s;             /* --deadline: the whole run; 0 until rank 0 sets its default (cluster_default_deadline) */
	int json;
	int help;
};

struct store;
struct policy;
struct fabric;
struct rdzv;

/* One rank's own side: its store, its gate, its fabric endpoint. */
struct cluster_node {
	const struct cluster_opts *o;
	struct bench_config cfg;
	const struct bench **sel;
	struct inventory_opts inv;
	struct store *s;
	const struct policy *pol;
	int rank, size;
	struct fabric *fab;         /* NULL: fab_why */
	char fab_why[200];
	char src_ip[64];            /* the address the fabric is bound to, "" any */
	int nccl_asked;
	int ngpus;                  /* 0: nccl_why */
	char nccl_why[200];
	char host[128];
	int fingerprint_s;          /* the selection's deadline, all benches: how long a fingerprint may take */
	const char *token;          /* GPUVET_CLUSTER_TOKEN, NULL: none (not authenticated) */
	double t_start;             /* bench_now() when the command started: the run's deadline counts from here */
	double link_gbps;           /* the NIC's own stated rate, GB/s, NAN unknown (cluster_node_open) */
	char link_source[96];       /* where it was read, or why unknown */
	/* ranks > 0, from rank 0's welcome */
	char rank0_host[128];       /* rank 0's host name */
	double deadline_at;         /* bench_now() by which rank 0 ends the run (its deadline), 0 unknown */
};

/* Opens this rank's fabric endpoint on src_ip and, the first time, asks NCCL for GPUs (reasons kept when not). */
void cluster_node_open(struct cluster_node *n, const char *src_ip);
void cluster_node_close(struct cluster_node *n);
/* What this rank tells rank 0 when it arrives: host, fabric address and provider, GPUs. */
json_t *cluster_node_hello(const struct cluster_node *n);
/*
 * Carries out one instruction from rank 0 ({"op": "fingerprint" | "pair" |
 * "nccl_uid" | "nccl_pair" | "allreduce", ...}) and returns the reply
 * ({"op": "reply", "of": OP, "ok": bool, ...}); never NULL.
 */
json_t *cluster_node_do(struct cluster_node *n, const json_t *msg);

/* rank 0: the whole run; the exit code (0 accept, 1 reject, 3 could not measure, 2 usage). */
int cluster_coordinate(struct cluster_node *n, struct rdzv *r, const struct cluster_engine *e);
/* ranks > 0: instructions until "done"; the exit code of this node's line. */
int cluster_work(struct cluster_node *n, struct rdzv *r);

struct gv_cluster;
/* Rank 0's hold on the other ranks while it drives them (cluster_exchange.c). */
struct cluster_xchg {
	struct cluster_node *n;     /* rank 0's own node */
	struct rdzv *r;
	struct gv_cluster *c;       /* node states: a rank lost or missing is sent nothing */
	int seq;                    /* of the last instruction sent: a late reply to an earlier one is dropped */
	double deadline_at;         /* bench_now() by which the run ends (--deadline), 0: none */
	int deadline_s;
	double reserve_s;           /* kept before it for the verdict: analysis, store, output, every rank's line */
	const char *step;           /* what the exchange asks ("its fingerprint", "round 3 of 7"), for a lost rank's why */
	int cut;                    /* the last exchange's wait was cut short by the deadline */
	double *alone_s;            /* per rank: how long rank 0 waited for it alone, every other rank answered */
};
/*
 * Sends msgs[i] to every rank i that has one (rank 0's own carried out
 * here: in a thread beside the others when beside is 1, before collecting
 * when 0), then waits up to timeout_ms for every reply into replies[i].  A
 * rank whose connection drops, or that does not answer in time, gets
 * replies[i] NULL and is marked lost with the reason.  msgs are the
 * caller's; replies are new references (NULL where none).
 */
void cluster_exchange(struct cluster_xchg *x, json_t **msgs, json_t **replies, int timeout_ms, int beside);
/* The first message op of every rank with pending[i] set, as cluster_exchange collects replies. */
void cluster_collect(struct cluster_xchg *x, const char *op, char *pending, json_t **replies, int timeout_ms);
/* The milliseconds a wait may take: want_ms, or what is left before the deadline less the reserve
 * when that is shorter (0 when nothing is left). */
int cluster_budget_ms(const struct cluster_xchg *x, int want_ms);
/*
 * The default --deadline, seconds, for a node's fingerprint time F (its selection's bench
 * deadlines added up), --wait W, --pair-timeout P and the schedule's rounds R:
 * W + 2 (F + 60) + 10 R + 3 (P + 15) + (4 P + 15) + 60 (docs/cluster.md "One deadline").
 */
int cluster_default_deadline(int fingerprint_s, int wait_s, int pair_timeout_s, int rounds);
/* rank 0, after the fingerprints: every node measures the suspect stragglers' benches again, side
 * by side, filling gv_cluster_metric.remeasured (cluster_remeasure.c). */
void cluster_remeasure(struct cluster_xchg *x);
/* When the deadline runs out: the ranks rank 0 waited for alone a tenth of the deadline (5 s at least)
 * are named too slow (lost), as the cause. */
void cluster_name_slow(struct cluster_xchg *x);
/* A rank that was there is lost from now on, with why (the first reason is kept). */
void cluster_mark_lost(struct gv_cluster *c, int rank, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Seconds -> milliseconds for a wait, saturating. */
int cluster_ms(double seconds);

#endif
