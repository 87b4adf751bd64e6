/*
 * cluster_words.h - what a cluster run's verdict says, in words, once (issue 49): the line
 * `gpuvet cluster show` and rank 0 print first (runners/cluster_show.c) and the report's Cluster
 * section heads with (reports/html_cluster.c).  It counts and names what judge/'s analysis
 * found (common/cluster.h); it judges nothing itself.
 */
#ifndef GPUVET_CLUSTER_WORDS_H
#define GPUVET_CLUSTER_WORDS_H

#include <stddef.h>

struct gv_cluster;
struct gv_cluster_pair;

struct cluster_tally {
	size_t measured, failed, skipped;   /* pairs by state */
	int drain_nodes;                    /* nodes some finding says to drain */
	int links;                          /* bad links that drain no node */
	int others;                         /* the other findings that drain no node */
	double median;                      /* the analysis's pair median, else the median of the slower directions; NaN none */
	double healthy;                     /* what healthy pairs reach (the analysis's reference), else median; NaN none */
};

/* A pair's slower direction host to host (GB/s), NaN when it was not measured. */
double cluster_pair_slower(const struct gv_cluster_pair *p);
void cluster_tally(const struct gv_cluster *c, struct cluster_tally *t);
/* ACCEPT, REJECT, UNMEASURABLE (3), NOT JUDGED (-1), as accept's first word. */
const char *cluster_verdict_word(int verdict);
/*
 * Why, in one sentence, after the verdict word: "all 3 nodes accepted and 3 of 3 pairs measured,
 * median 11.7 GB/s host to host (3 nodes, 3 pairs)" or "1 node to drain, 1 bad link, 1 of 6 pairs
 * not measured (4 nodes, 6 pairs)".  Into buf (always terminated).
 */
void cluster_why(const struct gv_cluster *c, const struct cluster_tally *t, char *buf, size_t len);

#endif
