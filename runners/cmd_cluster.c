/*
 * cmd_cluster.c - `gpuvet cluster run` and `gpuvet cluster show`: the
 * options, then down to runners/cluster_*.c (cluster_int.h) for a run and
 * runners/cluster_show.c for a stored one.  docs/cluster.md.
 */
#include "runners/cli.h"
#include "runners/opts.h"
#include "runners/cluster_int.h"
#include "runners/cluster_show.h"
#include "runners/run.h"
#include "platform/rendezvous.h"
#include "platform/rendezvous_wire.h"
#include "judge/cluster.h"
#include "judge/policy.h"
#include "common/util.h"
#include "results/store.h"

#include <getopt.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define A(f) offsetof(struct cluster_opts, f)
static const struct gv_opt cluster_run_opts[] = {
	{ .name = "rendezvous", .has_arg = required_argument, .arg = "HOST:PORT",
	  .help = "where the ranks meet: rank 0 listens there (default: the first node of SLURM_JOB_NODELIST, or mpirun's host, port 29517)",
	  .type = GV_OPT_STR, .off = A(rendezvous) },
	{ .name = "pairs", .has_arg = required_argument, .arg = "all|ring|bisect",
	  .help = "which node pairs: every pair in rounds (default), each node with its next, or a few rounds that localize",
	  .type = GV_OPT_STR, .off = A(pairs) },
	{ .name = "profile", .has_arg = required_argument, .arg = "quick|standard|full",
	  .help = "each node's fingerprint (default quick)",
	  .type = GV_OPT_STR, .off = A(profile) },
	{ .name = "bench", .has_arg = required_argument, .arg = "a,b",
	  .help = "only these benches in each node's fingerprint (default: all of the profile)",
	  .type = GV_OPT_STR, .off = A(bench) },
	{ .name = "policy", .has_arg = required_argument, .arg = "FILE",
	  .help = "the acceptance policy: each node's gate and the fabric rules (default: built-in)",
	  .type = GV_OPT_STR, .off = A(policy) },
	{ .name = "size", .has_arg = required_argument, .arg = "N",
	  .help = "how many ranks (a Kubernetes Indexed Job's completions; checked against Slurm's or MPI's)",
	  .type = GV_OPT_INT, .off = A(size), .min = 1, .max = GV_CLUSTER_MAX_NODES },
	{ .name = "wait", .has_arg = required_argument, .arg = "SECONDS",
	  .help = "how long rank 0 waits for every rank to arrive (default 120); the late are named",
	  .type = GV_OPT_INT, .off = A(wait_s), .min = 1, .max = 86400 },
	{ .name = "pair-timeout", .has_arg = required_argument, .arg = "SECONDS",
	  .help = "the longest one pair may take, both ways and latency (default 30)",
	  .type = GV_OPT_INT, .off = A(pair_timeout_s), .min = 2, .max = 3600 },
	{ .name = "deadline", .has_arg = required_argument, .arg = "SECONDS",
	  .help = "the whole run's deadline, every phase inside it; a rank that answers late is named (default: from the profile and the size, docs/cluster.md)",
	  .type = GV_OPT_INT, .off = A(deadline_s), .min = 10, .max = 30 * 86400 },
	{ .name = "json", .has_arg = no_argument, .help = "rank 0: the cluster run as JSON; other ranks: their line as JSON",
	  .type = GV_OPT_FLAG, .off = A(json) },
	{ .name = "help", .has_arg = no_argument, .help = "this text", .type = GV_OPT_FLAG, .off = A(help) },
	{ .name = NULL },
};
#undef A
#define N_RUN_OPTS (sizeof cluster_run_opts / sizeof cluster_run_opts[0] - 1)

const struct gv_cmd_doc cmd_cluster_run_doc = {
	.name = "cluster run",
	.synopsis = "cluster run [--rendezvous HOST:PORT] [--pairs all|ring|bisect] [--profile P] [--deadline S] [--json]",
	.about = "Vets a cluster: started on every node by the cluster's engine (srun,\n"
		"mpirun, a Kubernetes Indexed Job), never by gpuvet. Every node stores its own\n"
		"fingerprint; every pair of nodes is measured in rounds of disjoint pairs\n"
		"(libfabric host to host, NCCL GPU to GPU); one all-reduce runs over every GPU.\n"
		"Rank 0 prints the cluster verdict and the nodes to drain (host, rank,\n"
		"address, why) and stores the cluster run; every other rank prints its line.\n"
		"Rank and size: SLURM_PROCID/SLURM_NTASKS, OMPI_COMM_WORLD_RANK/SIZE, or\n"
		"JOB_COMPLETION_INDEX with --size. The job's secret: GPUVET_CLUSTER_TOKEN, the\n"
		"same on every rank (at least 16 characters); without it the run works but is\n"
		"not authenticated, and says so. docs/cluster.md.",
	.opts = cluster_run_opts,
	.more = "exit (rank 0): 0 accept, 1 reject, 3 could not measure (a node missing or\n"
		"      lost, pairs that failed, rank 0's own link gone), 2 usage error; other\n"
		"      ranks: 1 when their node is to be drained, else their own gate's 0 or 3;\n"
		"      3 when refused by rank 0 or when rank 0 went away",
};

static const struct gv_opt cluster_opts_none[] = { { .name = NULL } };
const struct gv_cmd_doc cmd_cluster_doc = {
	.name = "cluster",
	.synopsis = "cluster run|show|import ...",
	.about = "Vets many machines at once: `cluster run` on every node, `cluster show`\n"
		"for a stored cluster run, `cluster import` for one printed as JSON.\n"
		"docs/cluster.md.",
	.opts = cluster_opts_none,
	.more = "subcommands:\n  run    every node, every node pair, one all-reduce; the verdict\n"
		"  show   a stored cluster run: nodes, pair matrix, verdict\n"
		"  import cluster runs from their JSON (`cluster run --json`, `cluster show --json`)",
};

static int parse(int argc, char **argv, struct cluster_opts *o)
{
	struct option lopts[N_RUN_OPTS + 1];
	gv_opts_getopt(cluster_run_opts, lopts, N_RUN_OPTS + 1);
	optind = 1;
	int ch;
	while ((ch = getopt_long(argc, argv, "h", lopts, NULL)) != -1) {
		if (ch == 'h') {
			o->help = 1;
			continue;
		}
		if (ch < 256)
			return gv_opt_refused("cluster run", argc, argv, lopts);
		if (gv_opts_store("cluster run", &cluster_run_opts[ch - 256], optarg, o))
			return GV_EXIT_USAGE;
	}
	if (optind < argc)
		return gv_usage_error("cluster run", "unexpected argument '%s'", argv[optind]);
	if (!o->wait_s)
		o->wait_s = 120;
	if (!o->pair_timeout_s)
		o->pair_timeout_s = 30;
	enum cluster_pairs k;
	if (o->pairs && cluster_pairs_parse(o->pairs, &k))
		return gv_usage_error("cluster run", "unknown --pairs '%s' (all, ring or bisect)", o->pairs);
	return 0;
}

/* Profile, selection, policy, inventory: as `gpuvet run` takes them. */
static int node_setup(struct cluster_node *n, const struct cluster_opts *o, struct policy **pol)
{
	char err[512];
	const char *p = o->profile;
	if (run_parse_profile(p, &n->cfg.profile))
		return gv_usage_error("cluster run", "unknown profile '%s' (quick, standard or full)", p);
	n->cfg.verbose = gv_verbose;
	n->sel = o->bench ? run_parse_selection(o->bench, err, sizeof err) : run_default_selection();
	if (!n->sel)
		return gv_usage_error("cluster run", "%s", err);
	for (const struct bench **b = n->sel; *b; b++)
		n->fingerprint_s += (*b)->deadline_s ? (*b)->deadline_s(&n->cfg) : 60;
	const char *nm = getenv("GPUVET_NO_METADATA");
	n->inv.no_metadata = nm && !strcmp(nm, "1");
	int prc = policy_load(o->policy, pol, err, sizeof err);
	if (prc) {
		gv_err(prc == -2 ? "cannot read policy '%s': %s" : "policy '%s': %s", o->policy ? o->policy : "built-in", err);
		return GV_EXIT_USAGE;
	}
	n->pol = *pol;
	return 0;
}

/* A test's shifted clock (GPUVET_TEST_CLOCK_SHIFT_S seconds), read only where test benches are allowed. */
static double clock_shift(void)
{
	const char *v = getenv("GPUVET_TEST_CLOCK_SHIFT_S");
	double d = 0;
	if (!v || !bench_test_benches_allowed() || gv_parse_double(v, &d))
		return 0;
	return d;
}

/* A rank > 0 joins: connects, is welcomed (rank 0's host, the time left of the run), opens its fabric, says ready. */
static int join(struct cluster_node *n, const struct cluster_engine *e, const char *where, struct rdzv **r)
{
	char err[512];
	json_t *hello = json_pack("{s:s}", "host", n->host);
	struct rdzv_join j = { .token = n->token, .clock_shift_s = clock_shift() };
	int wait = cluster_ms(n->o->wait_s + 10.0);
	int rc = rdzv_connect(where, e->rank, e->size, &j, hello, wait, r, err, sizeof err);
	json_decref(hello);
	if (rc) {
		gv_err("cluster: rank %d: %s", e->rank, err);
		return GV_EXIT_UNMEASURABLE;
	}
	const json_t *w = rdzv_welcome(*r), *left = json_object_get(w, "deadline_left_s");
	snprintf(n->rank0_host, sizeof n->rank0_host, "%s", json_string_value(json_object_get(w, "host")) ?
		 json_string_value(json_object_get(w, "host")) : "?");
	n->deadline_at = json_is_number(left) ? bench_now() + json_number_value(left) : 0;
	if (!rdzv_authenticated(*r))
		gv_debug("cluster: rank %d: not authenticated (no GPUVET_CLUSTER_TOKEN)", e->rank);
	cluster_node_open(n, rdzv_local_addr(*r));
	json_t *ready = cluster_node_hello(n);
	json_object_set_new(ready, "op", json_string("ready"));
	rc = rdzv_send(*r, 0, ready, wait, err, sizeof err);
	json_decref(ready);
	if (rc) {
		gv_err("cluster: rank %d: rank 0 (%s) went away: %s", e->rank, n->rank0_host, err);
		return GV_EXIT_UNMEASURABLE;
	}
	return cluster_work(n, *r);
}

/* Rank 0 listens, the others connect; then each does its part. */
static int meet(struct cluster_node *n, const struct cluster_engine *e, const char *where)
{
	char err[512], any[340];
	struct rdzv *r = NULL;
	int rc;
	if (e->rank == 0) {
		const char *port = strrchr(where, ':');
		snprintf(any, sizeof any, "*%s", port ? port : "");
		if (rdzv_listen(!n->o->rendezvous && e->listen_any ? any : where, e->size, n->token, &r, err, sizeof err)) {
			gv_err("cluster: %s", err);
			return GV_EXIT_UNMEASURABLE;
		}
		rc = cluster_coordinate(n, r, e);
	} else {
		rc = join(n, e, where, &r);
	}
	rdzv_close(r);
	return rc;
}

/* The job's secret from the environment: NULL none; -1 with a usage error when it is set but unfit. */
static int job_token(const char **token)
{
	const char *t = getenv("GPUVET_CLUSTER_TOKEN");
	*token = NULL;
	if (!t)
		return 0;
	size_t n = strlen(t);
	if (n < 16 || n > RDZV_TOKEN_MAX)
		return gv_usage_error("cluster run", "GPUVET_CLUSTER_TOKEN has %zu characters: give every rank the same secret "
				      "of 16 to %d (e.g. head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \\n'), or unset it",
				      n, RDZV_TOKEN_MAX);
	*token = t;
	return 0;
}

static int cluster_run(int argc, char **argv, const struct gv_global *g)
{
	struct cluster_opts o = { 0 };
	int rc = parse(argc, argv, &o);
	if (rc)
		return rc;
	if (o.help) {
		gv_cmd_help(&cmd_cluster_run_doc, stdout);
		return GV_EXIT_OK;
	}
	struct cluster_engine e;
	char err[512];
	if (cluster_engine_detect(o.size, &e, err, sizeof err))
		return gv_usage_error("cluster run", "%s", err);
	const char *where = o.rendezvous ? o.rendezvous : e.rendezvous[0] ? e.rendezvous : NULL;
	if (!where)
		return gv_usage_error("cluster run", "no rendezvous under %s: give --rendezvous HOST:PORT (rank 0's address)",
				      e.name);
	struct cluster_node n = { .o = &o, .rank = e.rank, .size = e.size, .t_start = bench_now() };
	struct policy *pol = NULL;
	if ((rc = job_token(&n.token)))
		return rc;
	if ((rc = node_setup(&n, &o, &pol))) {
		free(n.sel);
		return rc;
	}
	if (gethostname(n.host, sizeof n.host - 1))
		snprintf(n.host, sizeof n.host, "?");
	if (gv_store_open(gv_db_path(g), &n.s)) {
		gv_err("%s", store_open_error());
		rc = GV_EXIT_USAGE;
	} else {
		rc = meet(&n, &e, where);
		store_close(n.s);
	}
	cluster_node_close(&n);
	policy_free(pol);
	free(n.sel);
	return rc;
}

int cmd_cluster(int argc, char **argv, const struct gv_global *g)
{
	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		gv_cmd_help(&cmd_cluster_doc, argc < 2 ? stderr : stdout);
		return argc < 2 ? GV_EXIT_USAGE : GV_EXIT_OK;
	}
	if (!strcmp(argv[1], "run"))
		return cluster_run(argc - 1, argv + 1, g);
	if (!strcmp(argv[1], "show"))
		return cluster_show(argc - 1, argv + 1, g);
	if (!strcmp(argv[1], "import"))
		return cluster_import(argc - 1, argv + 1, g);
	return gv_usage_error("cluster", "unknown subcommand '%s' (run, show or import)", argv[1]);
}
