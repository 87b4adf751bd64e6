/*
 * cluster_import.c - `gpuvet cluster import FILE...`: a cluster run as
 * `cluster run --json` or `cluster show --json` printed it, stored in this
 * store.  A cluster vetted on nodes whose disks go with them (a Kubernetes
 * Job, a Slurm allocation on ephemeral instances) keeps its document, not its
 * store: this is how that document reaches the store a team reports from.
 *
 * A document is input like any other: read up to its bound, parsed and
 * checked whole by the one reader (common/cluster_json.c, fuzzed), then its
 * figures, dates and conclusions checked against what the analysis derives
 * again from its pairs and nodes under the policy it names (cluster_verify.c,
 * #56: a document is never believed, its verdict is derived) before a row is
 * written, then stored in one transaction.  One uuid, one cluster run (the
 * store's rule, store_put_cluster): a uuid already stored is "already
 * present" only when the stored run is the same document; a different one
 * under it is refused, the stored one kept.
 */
#include "runners/cluster_show.h"
#include "runners/cli.h"
#include "runners/opts.h"
#include "common/cluster.h"
#include "common/ident.h"
#include "common/util.h"
#include "judge/policy.h"
#include "results/store.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

/* A 4,096-node cluster run with every pair is about 2.1 GB of JSON; 1,024 nodes, 132 MB. */
#define CLUSTER_DOC_MAX ((size_t)3 << 30)

static const struct gv_opt import_opts[] = {
	{ .name = "policy", .has_arg = required_argument, .val = 'p', .arg = "FILE",
	  .help = "the policy the documents were judged under (default: the built-in)" },
	{ .name = "help", .has_arg = no_argument, .val = 'h', .arg = NULL, .help = "this text", .short_name = 'h' },
	{ .name = NULL },
};

const struct gv_cmd_doc cmd_cluster_import_doc = {
	.name = "cluster import",
	.synopsis = "cluster import [--policy FILE] FILE...     (- for standard input)",
	.about = "Stores cluster runs from the JSON `cluster run --json` or `cluster show\n"
		"--json` printed (one document a file), each checked whole before it is\n"
		"stored, in one transaction: every figure within physical bounds, its start\n"
		"a date as a run's, and its verdict, findings, drain list and exit code what\n"
		"gpuvet derives again from its own pairs and nodes under the policy it\n"
		"names (give that policy with --policy). A cluster run already stored is\n"
		"said and left; a different one under the same uuid is refused.",
	.opts = import_opts,
	.more = "exit: 0 every file stored or already present; 2 when a file could not be\n"
		"      read, is not a cluster run, disagrees with its own pairs and nodes (the\n"
		"      field named), or conflicts (the others are still stored)",
};

/* The document of path ("-": standard input), checked (cluster_verify); NULL with why. */
static struct gv_cluster *read_doc(const char *path, const struct policy *p, char *why, size_t wlen)
{
	size_t n = 0;
	char *text = gv_read_file_max(strcmp(path, "-") ? path : "/dev/stdin", CLUSTER_DOC_MAX + 1, &n);
	if (!text) {
		snprintf(why, wlen, "cannot be read: %s", strerror(errno));
		return NULL;
	}
	if (n > CLUSTER_DOC_MAX) {
		free(text);
		snprintf(why, wlen, "larger than %zu GiB, more than any cluster run", CLUSTER_DOC_MAX >> 30);
		return NULL;
	}
	json_error_t je;
	json_t *doc = json_loadb(text, n, JSON_REJECT_DUPLICATES, &je);
	free(text);
	if (!doc) {
		snprintf(why, wlen, "not JSON (line %d: %s)", je.line, je.text);
		return NULL;
	}
	struct gv_cluster *c = gv_cluster_from_json(doc, why, wlen);
	if (c && cluster_verify(doc, c, p, why, wlen)) {
		gv_cluster_free(c);
		c = NULL;
	}
	json_decref(doc);
	return c;
}

/* One file: 0 stored or already present (said), 1 not (said). */
static int import_one(struct store *s, const char *path, const struct policy *p)
{
	char why[512] = "", shown[4 * 256 + 1];
	ident_escape(strcmp(path, "-") ? path : "standard input", shown, sizeof shown);
	struct gv_cluster *c = read_doc(path, p, why, sizeof why);
	int rc = 1;
	if (!c) {
		gv_err("cluster import: %s: %s", shown, why);
		return 1;
	}
	int r = store_put_cluster(s, c);
	if (r == STORE_OK) {
		fprintf(stderr, "%s: cluster run %s (%d nodes, %s) stored\n", shown, c->uuid, c->nnodes, c->started_at);
		rc = 0;
	} else if (r == STORE_DUP) {
		fprintf(stderr, "%s: cluster run %s already present\n", shown, c->uuid);
		rc = 0;
	} else {
		gv_err("cluster import: %s: %s", shown, store_errmsg(s));
	}
	gv_cluster_free(c);
	return rc;
}

int cluster_import(int argc, char **argv, const struct gv_global *g)
{
	struct option lopts[4];
	char shorts[8], err[256];
	const char *policy = NULL;
	int c;
	gv_opts_getopt(import_opts, lopts, 4);
	optind = 1;
	while ((c = getopt_long(argc, argv, gv_opts_short(import_opts, shorts, sizeof shorts), lopts, NULL)) != -1) {
		switch (c) {
		case 'p': policy = optarg; break;
		case 'h': gv_cmd_help(&cmd_cluster_import_doc, stdout); return 0;
		default: return gv_opt_refused("cluster import", argc, argv, lopts);
		}
	}
	if (optind >= argc)
		return gv_usage_error("cluster import", "names no file (a cluster run's JSON, or - for standard input)");
	struct policy *p = NULL;
	if (policy_load(policy, &p, err, sizeof err)) {
		gv_err("cluster import: %s: %s", policy ? policy : "the built-in policy", err);
		return GV_EXIT_USAGE;
	}
	struct store *s;
	if (gv_store_open(gv_db_path(g), &s)) {
		gv_err("%s", store_open_error());
		policy_free(p);
		return GV_EXIT_USAGE;
	}
	int failed = 0;
	for (int i = optind; i < argc; i++)
		failed += import_one(s, argv[i], p);
	store_close(s);
	policy_free(p);
	return failed ? GV_EXIT_USAGE : GV_EXIT_OK;
}
