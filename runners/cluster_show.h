/*
 * cluster_show.h - a cluster run as text for a person (issue 49): what rank 0 prints after
 * `gpuvet cluster run` and `gpuvet cluster show` prints.  The command itself is a subcommand of
 * `gpuvet cluster` (runners/cmd_cluster.c dispatches "show" here).
 */
#ifndef GPUVET_CLUSTER_SHOW_H
#define GPUVET_CLUSTER_SHOW_H

#include <jansson.h>
#include <stdio.h>

struct gv_cluster;
struct policy;
struct gv_global;
struct gv_cmd_doc;

/*
 * The verdict and why in one line ("REJECT: 1 node to drain, 1 bad link (4 nodes, 6 pairs)"),
 * then a "Drain:" line per node to drain (host, rank, address, why), the bad links, the other
 * findings, the pair figures (median, slowest pairs, what was not measured, the transport) and
 * the all-reduce's peak bus bandwidth or why there is none.  Stored strings are escaped for a
 * terminal.
 */
void cluster_print_text(const struct gv_cluster *c, FILE *out);
/*
 * `gpuvet cluster show [ID] [--json]` (argv[0] = "show"): the stored cluster run ID (its number,
 * uuid or a prefix of 4+ characters; default the one stored last) as text, or as the JSON of
 * `cluster run --json`.  0; 2 with one line when the store has none, or none of that ID.
 */
int cluster_show(int argc, char **argv, const struct gv_global *g);
extern const struct gv_cmd_doc cmd_cluster_show_doc;
/*
 * `gpuvet cluster import FILE...` (argv[0] = "import", runners/cluster_import.c): cluster runs from
 * the JSON `cluster run --json` / `cluster show --json` printed, each checked whole, then stored.
 * 0 when every file was stored or already present; 2 when one could not be (said, one line each).
 */
int cluster_import(int argc, char **argv, const struct gv_global *g);
/*
 * A cluster run from outside (doc, read into c by gv_cluster_from_json) checked before it is stored
 * (runners/cluster_verify.c): its figures within physical bounds, its start a date as runs' are, and
 * its verdict, findings, drain and links lists, exit code, median and stated rate what the analysis
 * derives again from its pairs and nodes under p (NULL: the built-in policy).  0, c then holding the
 * findings derived; or -1 with why naming the field.
 */
int cluster_verify(const json_t *doc, struct gv_cluster *c, const struct policy *p, char *why, size_t wlen);
extern const struct gv_cmd_doc cmd_cluster_import_doc;

#endif
