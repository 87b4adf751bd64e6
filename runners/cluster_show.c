/*
 * cluster_show.c - a cluster run as text (cluster_show.h, issue 49): the verdict and why in one
 * line, the nodes to drain, the bad links, the pair figures and the all-reduce; and `gpuvet
 * cluster show [ID] [--json]`, which prints a stored one.  The findings are judge/'s
 * (judge/cluster.h): this file only says them.
 */
#include "runners/cluster_show.h"
#include "runners/cli.h"
#include "runners/opts.h"
#include "common/cluster.h"
#include "common/ident.h"
#include "common/stats.h"
#include "common/util.h"
#include "reports/cluster_words.h"
#include "reports/svg.h"
#include "results/store.h"

#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A stored string made safe for a terminal, "-" for none (round-robin buffers: several in one printf). */
static const char *tx(const char *v)
{
	static char bufs[8][4 * 384 + 8];
	static unsigned next;
	if (!v || !*v)
		return "-";
	char *b = bufs[next++ % 8];
	ident_escape(v, b, sizeof bufs[0]);
	return b;
}

/* A figure with about 3 significant digits (svg_fmt_num), round-robin buffers. */
static const char *num(double v)
{
	static char bufs[8][32];
	static unsigned next;
	char *b = bufs[next++ % 8];
	svg_fmt_num(v, b, sizeof bufs[0]);
	return b;
}

static void verdict_line(const struct gv_cluster *c, const struct cluster_tally *t, FILE *out)
{
	char why[512];
	cluster_why(c, t, why, sizeof why);
	fprintf(out, "%s: %s\n", cluster_verdict_word(c->verdict), why);
}

static const struct gv_cluster_node *node(const struct gv_cluster *c, int rank)
{
	return rank >= 0 && rank < c->nnodes ? &c->nodes[rank] : NULL;
}

/* One line per node to drain: host, rank, address, then every reason (finding kind: evidence). */
static void drain_lines(const struct gv_cluster *c, FILE *out)
{
	for (int r = 0; r < c->nnodes; r++) {
		int first = 1;
		for (size_t i = 0; i < c->nfindings; i++) {
			const struct gv_cluster_finding *f = &c->findings[i];
			if (!f->drain || f->rank != r)
				continue;
			if (first)
				fprintf(out, "Drain: %s (rank %d, %s): ", tx(c->nodes[r].host), r,
					c->nodes[r].addr[0] ? tx(c->nodes[r].addr) : "no address");
			fprintf(out, "%s%s: %s", first ? "" : "; ", gv_finding_name(f->kind), tx(f->evidence));
			first = 0;
		}
		if (!first)
			fputc('\n', out);
	}
}

/* The findings that name no node to drain: bad links, then the rest. */
static void finding_lines(const struct gv_cluster *c, FILE *out)
{
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < c->nfindings; i++) {
			const struct gv_cluster_finding *f = &c->findings[i];
			const struct gv_cluster_node *a = node(c, f->rank), *b = node(c, f->peer);
			if (f->drain && a)
				continue;
			if ((f->kind == GV_FIND_BAD_LINK) != (pass == 0))
				continue;
			if (pass == 0 && a && b)
				fprintf(out, "Bad link: %s (rank %d) - %s (rank %d): %s\n", tx(a->host), f->rank, tx(b->host),
					f->peer, tx(f->evidence));
			else if (a)
				fprintf(out, "Finding: %s %s (rank %d): %s\n", gv_finding_name(f->kind), tx(a->host), f->rank,
					tx(f->evidence));
			else
				fprintf(out, "Finding: %s: %s\n", gv_finding_name(f->kind), tx(f->evidence));
		}
}

static int cmp_slower(const void *x, const void *y, void *arg)
{
	const struct gv_cluster *c = arg;
	double a = cluster_pair_slower(&c->pairs[*(const size_t *)x]);
	double b = cluster_pair_slower(&c->pairs[*(const size_t *)y]);
	return a < b ? -1 : a > b;
}

#define SHOW_PAIRS 5   /* the slowest pairs named, and the pairs not measured */

static void slowest_line(const struct gv_cluster *c, const struct cluster_tally *t, FILE *out)
{
	size_t *ix = gv_calloc(t->measured ? t->measured : 1, sizeof *ix), n = 0;
	for (size_t i = 0; i < c->npairs && n < t->measured; i++)
		if (!isnan(cluster_pair_slower(&c->pairs[i])))
			ix[n++] = i;
	qsort_r(ix, n, sizeof *ix, cmp_slower, (void *)c);
	if (n)
		fputs("  slowest (a->b / b->a, % of what healthy pairs reach):", out);
	for (size_t k = 0; k < n && k < SHOW_PAIRS; k++) {
		const struct gv_cluster_pair *p = &c->pairs[ix[k]];
		fprintf(out, "%s %d-%d %s / %s GB/s", k ? "," : "", p->a, p->b, num(p->gbps_ab), num(p->gbps_ba));
		if (t->healthy > 0)
			fprintf(out, " (%.0f %%)", 100 * cluster_pair_slower(p) / t->healthy);
	}
	if (n)
		fputc('\n', out);
	free(ix);
}

static void unmeasured_line(const struct gv_cluster *c, const struct cluster_tally *t, FILE *out)
{
	size_t shown = 0;
	if (!t->failed && !t->skipped)
		return;
	fputs("  not measured:", out);
	for (size_t i = 0; i < c->npairs && shown < SHOW_PAIRS; i++) {
		const struct gv_cluster_pair *p = &c->pairs[i];
		if (p->state == GV_PAIR_MEASURED)
			continue;
		fprintf(out, "%s %d-%d %s", shown++ ? "," : "", p->a, p->b, gv_pair_state_name(p->state));
		if (p->why[0])
			fprintf(out, " (%s)", tx(p->why));
	}
	if (t->failed + t->skipped > shown)
		fprintf(out, ", and %zu more", t->failed + t->skipped - shown);
	fputc('\n', out);
}

/* The GPU-to-GPU figures: the median of the pairs' slower NCCL direction, when there are any. */
static void nccl_line(const struct gv_cluster *c, FILE *out)
{
	double *v = gv_calloc(c->npairs ? c->npairs : 1, sizeof *v);
	size_t n = 0;
	for (size_t i = 0; i < c->npairs; i++) {
		double a = c->pairs[i].nccl_gbps_ab, b = c->pairs[i].nccl_gbps_ba;
		if (!isnan(a) && !isnan(b))
			v[n++] = a < b ? a : b;
	}
	if (n)
		fprintf(out, "  GPU to GPU (NCCL %s): %zu pairs, median %s GB/s, slowest %s GB/s\n", tx(c->nccl_net), n,
			num(gv_median(v, n)), num((qsort(v, n, sizeof *v, gv_cmp_double), v[0])));
	free(v);
}

static void pairs_lines(const struct gv_cluster *c, const struct cluster_tally *t, FILE *out)
{
	fprintf(out, "Pairs: %zu of %zu measured host to host", t->measured, c->npairs);
	if (c->transport[0])
		fprintf(out, " over libfabric %s", tx(c->transport));
	fprintf(out, " in %d round%s (schedule %s); median %s GB/s (slower direction)", c->nrounds,
		c->nrounds == 1 ? "" : "s", tx(c->schedule), num(t->median));
	if (!isnan(c->pair_healthy_gbps))
		fprintf(out, ", healthy pairs %s GB/s", num(c->pair_healthy_gbps));
	if (!isnan(c->stated_gbps))
		fprintf(out, ", stated %s GB/s per node (%s)", num(c->stated_gbps), tx(c->stated_source));
	double *lat = gv_calloc(c->npairs ? c->npairs : 1, sizeof *lat);
	size_t nl = 0;
	for (size_t i = 0; i < c->npairs; i++)
		if (c->pairs[i].state == GV_PAIR_MEASURED && !isnan(c->pairs[i].lat_us))
			lat[nl++] = c->pairs[i].lat_us;
	if (nl)
		fprintf(out, ", latency median %s us", num(gv_median_inplace(lat, nl)));
	free(lat);
	fputc('\n', out);
	slowest_line(c, t, out);
	unmeasured_line(c, t, out);
	nccl_line(c, out);
}

static void allreduce_line(const struct gv_cluster *c, FILE *out)
{
	size_t best = c->nar;
	for (size_t i = 0; i < c->nar; i++)
		if (!isnan(c->ar[i].busbw_gbps) && (best == c->nar || c->ar[i].busbw_gbps > c->ar[best].busbw_gbps))
			best = i;
	if (best == c->nar) {
		fprintf(out, "All-reduce: none: %s\n", c->ar_why[0] ? tx(c->ar_why) : "not run");
		return;
	}
	char at[32], lo[32], hi[32];
	svg_fmt_bytes(c->ar[best].bytes, at, sizeof at);
	svg_fmt_bytes(c->ar[0].bytes, lo, sizeof lo);
	svg_fmt_bytes(c->ar[c->nar - 1].bytes, hi, sizeof hi);
	int gpus = 0;
	for (int r = 0; r < c->nnodes; r++)
		gpus += c->nodes[r].state == GV_NODE_OK ? c->nodes[r].ngpus : 0;
	fprintf(out, "All-reduce: peak bus bandwidth %s GB/s at %s (algbw %s GB/s), %d GPUs", num(c->ar[best].busbw_gbps),
		at, num(c->ar[best].algbw_gbps), gpus);
	if (c->nccl_net[0])
		fprintf(out, " over NCCL %s", tx(c->nccl_net));
	fprintf(out, "; %zu sizes from %s to %s\n", c->nar, lo, hi);
}

/* The nodes' clocks and NICs as the runtime measured them, when it did: "Nodes: clocks within 0.4 s of rank 0's; NIC ..." */
static void nodes_line(const struct gv_cluster *c, FILE *out)
{
	double worst = 0, link = NAN;
	int skews = 0, links = 0, same = 1, at = -1;
	const char *src = NULL;
	for (int i = 0; i < c->nnodes; i++) {
		const struct gv_cluster_node *n = &c->nodes[i];
		if (isfinite(n->clock_skew_s) && (skews++, fabs(n->clock_skew_s) >= fabs(worst))) {
			worst = n->clock_skew_s;
			at = i;
		}
		if (n->link_gbps > 0) {
			same &= !links || n->link_gbps == link;
			link = links++ ? (n->link_gbps < link ? n->link_gbps : link) : n->link_gbps;
			src = src ? src : n->link_source;
		}
	}
	if (!skews && !links)
		return;
	fputs("Nodes:", out);
	if (skews)
		fprintf(out, " clocks within %s s of rank 0's (the farthest: rank %d, %+.3g s)", num(fabs(worst)), at, worst);
	if (links)
		fprintf(out, "%s NIC rate %s%s GB/s%s stated on %d of %d nodes (%s)", skews ? ";" : "", same ? "" : "from ",
			num(link), same ? "" : " (they differ)", links, c->nnodes, tx(src));
	fputc('\n', out);
}

/* The last line: the cluster run itself, how it was run and under what trust. */
static void run_line(const struct gv_cluster *c, FILE *out)
{
	fprintf(out, "Cluster run %s: %d nodes by %s, started %s, profile %s", tx(c->uuid), c->nnodes, tx(c->engine),
		tx(c->started_at), tx(c->profile));
	if (c->policy[0])
		fprintf(out, ", policy %s", tx(c->policy));
	if (isfinite(c->deadline_s))
		fprintf(out, ", deadline %s s", num(c->deadline_s));
	fprintf(out, ", %s\n", c->authenticated ? "authenticated (every rank proved the job's token)" :
		"not authenticated (no GPUVET_CLUSTER_TOKEN: anyone who reached rank 0 could take part)");
}

void cluster_print_text(const struct gv_cluster *c, FILE *out)
{
	struct cluster_tally t;
	cluster_tally(c, &t);
	verdict_line(c, &t, out);
	drain_lines(c, out);
	finding_lines(c, out);
	pairs_lines(c, &t, out);
	allreduce_line(c, out);
	nodes_line(c, out);
	run_line(c, out);
}

/* ---- `gpuvet cluster show` ---- */

static const struct gv_opt show_opts[] = {
	{ .name = "json", .has_arg = no_argument, .val = 'j', .arg = NULL,
	  .help = "the cluster run as JSON, as `cluster run --json` prints it" },
	{ .name = "help", .has_arg = no_argument, .val = 'h', .arg = NULL, .help = "this text", .short_name = 'h' },
	{ .name = NULL },
};

const struct gv_cmd_doc cmd_cluster_show_doc = {
	.name = "cluster show",
	.synopsis = "cluster show [ID] [--json]     (default: the cluster run stored last)",
	.about = "A stored cluster run: the verdict and why, the nodes to drain (host, rank,\n"
		"address, why), the bad links, the pair figures and the all-reduce.  ID is the\n"
		"cluster run's number or a prefix (4+ characters) of its uuid.  Exit 0; 2 when\n"
		"the store holds no cluster run, or none of that ID.",
	.opts = show_opts,
	.more = NULL,
};

static int show_one(struct store *s, const char *id, int as_json)
{
	struct gv_cluster *c = NULL;
	int rc = store_load_cluster(s, id, &c);
	if (rc) {
		gv_err("%s", store_errmsg(s));
		return GV_EXIT_USAGE;
	}
	if (as_json) {
		rc = gv_cluster_write_json(c, stdout) != 0;
	} else {
		cluster_print_text(c, stdout);
	}
	gv_cluster_free(c);
	if (rc || fflush(stdout)) {
		gv_err("cluster show: cannot write the cluster run");
		return GV_EXIT_USAGE;
	}
	return 0;
}

int cluster_show(int argc, char **argv, const struct gv_global *g)
{
	struct option lopts[8];
	char shorts[16];
	int as_json = 0, c;
	gv_opts_getopt(show_opts, lopts, 8);
	optind = 1;
	while ((c = getopt_long(argc, argv, gv_opts_short(show_opts, shorts, sizeof shorts), lopts, NULL)) != -1) {
		switch (c) {
		case 'j': as_json = 1; break;
		case 'h': gv_cmd_help(&cmd_cluster_show_doc, stdout); return 0;
		default: return gv_opt_refused("cluster show", argc, argv, lopts);
		}
	}
	if (argc - optind > 1)
		return gv_usage_error("cluster show", "takes one cluster run, not '%s' too", argv[optind + 1]);
	struct store *s;
	if (gv_open_reading(g, GV_READ_ROWS, &s))
		return GV_EXIT_USAGE;
	int rc = show_one(s, optind < argc ? argv[optind] : NULL, as_json);
	store_close(s);
	return rc;
}
