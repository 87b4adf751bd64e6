/*
 * html_cluster.c - the report's Cluster section (issue 49): the newest stored cluster run's
 * verdict and why, the nodes to drain (host, rank, address, why), the other findings, the pair
 * matrix as an SVG heat map (each cell the pair's slower direction against what healthy pairs reach;
 * failed and unmeasured pairs marked; above HEAT_CELLS nodes a cell is a block of ranks and shows
 * its slowest pair) and the all-reduce curve.  No section when the store holds no cluster run.
 */
#include "reports/html.h"
#include "reports/report_int.h"
#include "reports/cluster_words.h"
#include "reports/html_escape.h"
#include "reports/svg.h"
#include "common/cluster.h"
#include "results/store.h"
#include "common/util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define HEAT_CELLS 64      /* cells per side at most: one a node up to here, a block of ranks above */
#define HEAT_LABELLED 16   /* up to this many nodes, rows are labelled with the host too */
#define NODE_ROWS 64       /* the nodes table's rows at most */

/* ---- loading (report_load.c calls it) ---- */

static int count_cluster(void *ud, const struct store_cluster_row *r)
{
	(void)r;
	(*(size_t *)ud)++;
	return 0;
}

int rep_cluster_load(struct store *s, struct rdoc *d, char *err, size_t errlen)
{
	d->cluster = NULL;
	d->clusters = 0;
	if (store_each_cluster(s, count_cluster, &d->clusters)) {
		snprintf(err, errlen, "%s", store_errmsg(s));
		return -1;
	}
	if (!d->clusters)
		return 0;
	int rc = store_load_cluster(s, NULL, &d->cluster);
	if (rc < 0 || !d->cluster) {
		snprintf(err, errlen, "%s", store_errmsg(s));
		return -1;
	}
	return 0;
}

/* ---- the heat map ---- */

/* The colour of a pair's slower direction as a fraction of what healthy pairs reach (the analysis's
 * reference; a run stored before it had one: the cluster median): display bins only. */
static const struct {
	double from;
	const char *color, *label;
} heat_bins[] = {
	{ 0.90, "#2166ac", "90 % of healthy and over" },
	{ 0.75, "#92c5de", "75 to 90 %" },
	{ 0.50, "#fddbc7", "50 to 75 %" },
	{ 0.25, "#ef8a62", "25 to 50 %" },
	{ -1.0, "#b2182b", "under 25 %" },
};
#define HEAT_FAILED_COLOR "#404040"
#define HEAT_UNMEASURED_COLOR "#d9d9d9"

static const char *heat_color(double frac)
{
	size_t i = 0;
	while (frac < heat_bins[i].from && i + 1 < sizeof heat_bins / sizeof heat_bins[0])
		i++;
	return heat_bins[i].color;
}

/* One cell: the slowest measured pair in it (index, its fraction) and how many failed or were skipped. */
struct heat_cell {
	double frac;
	size_t worst;
	int pairs, failed, skipped;
};

struct heat {
	int n, k;            /* cells per side, ranks per cell */
	struct heat_cell *cell;
	double median;
};

static void heat_build(const struct gv_cluster *c, double median, struct heat *h)
{
	h->k = (c->nnodes + HEAT_CELLS - 1) / HEAT_CELLS;
	h->n = (c->nnodes + h->k - 1) / h->k;
	h->median = median;
	h->cell = gv_calloc((size_t)h->n * h->n, sizeof *h->cell);
	for (size_t i = 0; i < (size_t)h->n * h->n; i++)
		h->cell[i].frac = NAN;
	for (size_t i = 0; i < c->npairs; i++) {
		const struct gv_cluster_pair *p = &c->pairs[i];
		if (p->a < 0 || p->b < 0 || p->a >= c->nnodes || p->b >= c->nnodes)
			continue;
		int x = p->a / h->k, y = p->b / h->k;
		double f = cluster_pair_slower(p) / median;
		for (int t = 0; t < 2; t++) {   /* both halves of the symmetric matrix */
			struct heat_cell *e = &h->cell[(size_t)(t ? y : x) * h->n + (t ? x : y)];
			e->pairs++;
			e->failed += p->state == GV_PAIR_FAILED;
			e->skipped += p->state != GV_PAIR_FAILED && p->state != GV_PAIR_MEASURED;
			if (!isnan(f) && (isnan(e->frac) || f < e->frac)) {
				e->frac = f;
				e->worst = i;
			}
			if (x == y)
				break;
		}
	}
}

/* A rank or a block of ranks, as the axes and tooltips name it. */
static void heat_name(FILE *f, const struct gv_cluster *c, const struct heat *h, int cell)
{
	int lo = cell * h->k, hi = lo + h->k - 1 < c->nnodes - 1 ? lo + h->k - 1 : c->nnodes - 1;
	if (h->k == 1) {
		fprintf(f, "rank %d ", lo);
		html_esc(f, c->nodes[lo].host[0] ? c->nodes[lo].host : "?");
	} else {
		fprintf(f, "ranks %d\xE2\x80\x93%d", lo, hi);
	}
}

static void heat_tooltip(FILE *f, const struct gv_cluster *c, const struct heat *h, int x, int y,
			 const struct heat_cell *e)
{
	char ab[32], ba[32];
	fputs("<title>", f);
	heat_name(f, c, h, x);
	fputs(" \xC3\x97 ", f);
	heat_name(f, c, h, y);
	if (!isnan(e->frac)) {
		const struct gv_cluster_pair *p = &c->pairs[e->worst];
		svg_fmt_num(p->gbps_ab, ab, sizeof ab);
		svg_fmt_num(p->gbps_ba, ba, sizeof ba);
		fprintf(f, ": %spair %d-%d %s / %s GB/s (%.0f %% of healthy)", h->k > 1 ? "slowest " : "", p->a, p->b,
			ab, ba, 100 * e->frac);
	}
	if (e->failed)
		fprintf(f, "; %d failed", e->failed);
	if (e->failed == 1 && h->k == 1) {
		for (size_t i = 0; i < c->npairs; i++)
			if (c->pairs[i].state == GV_PAIR_FAILED && ((c->pairs[i].a == x && c->pairs[i].b == y) ||
								    (c->pairs[i].a == y && c->pairs[i].b == x))) {
				fputs(": ", f);
				html_esc(f, c->pairs[i].why);
			}
	}
	if (e->skipped)
		fprintf(f, "; %d not measured", e->skipped);
	fputs("</title>", f);
}

static void heat_cells(FILE *f, const struct gv_cluster *c, const struct heat *h, int x0, int y0, int cs)
{
	for (int y = 0; y < h->n; y++)
		for (int x = 0; x < h->n; x++) {
			const struct heat_cell *e = &h->cell[(size_t)y * h->n + x];
			if (!e->pairs)
				continue;
			const char *fill = !isnan(e->frac) ? heat_color(e->frac) :
				e->failed ? HEAT_FAILED_COLOR : HEAT_UNMEASURED_COLOR;
			fprintf(f, "<g class=\"hc\" data-a=\"%d\" data-b=\"%d\"%s><rect x=\"%d\" y=\"%d\" width=\"%d\" "
				"height=\"%d\" fill=\"%s\" stroke=\"#ffffff\" stroke-width=\"0.5\">", x, y,
				e->failed ? " data-failed=\"1\"" : "", x0 + x * cs, y0 + y * cs, cs, cs, fill);
			heat_tooltip(f, c, h, x, y, e);
			fputs("</rect>", f);
			if (e->failed && cs >= 8)   /* a cross on a failed pair, whatever the colour */
				fprintf(f, "<path d=\"M%d %dl%d %dm0 %dl%d %d\" stroke=\"#ffffff\" stroke-width=\"1.2\"/>",
					x0 + x * cs + 2, y0 + y * cs + 2, cs - 4, cs - 4, -(cs - 4), -(cs - 4), cs - 4);
			if (e->skipped && !isnan(e->frac))   /* a block with pairs not measured beside measured ones */
				fprintf(f, "<path d=\"M%d %dh%dv%dz\" fill=\"%s\"/>", x0 + x * cs + cs / 2, y0 + y * cs,
					cs / 2, cs / 2, HEAT_UNMEASURED_COLOR);
			fputs("</g>\n", f);
		}
}

static void heat_labels(FILE *f, const struct gv_cluster *c, const struct heat *h, int x0, int y0, int cs)
{
	int step = cs >= 14 ? 1 : cs >= 7 ? 2 : 4;
	for (int i = 0; i < h->n; i += step) {
		int lo = i * h->k;
		fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" font-size=\"10\">%d</text>", x0 + i * cs + cs / 2,
			y0 - 4, lo);
		fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\" font-size=\"10\">", x0 - 4, y0 + i * cs + cs / 2 + 3);
		if (c->nnodes <= HEAT_LABELLED) {
			char host[24];
			gv_strlcpy(host, c->nodes[lo].host[0] ? c->nodes[lo].host : "?", 19);
			html_esc(f, host);
			fputs(strlen(c->nodes[lo].host) > 18 ? "\xE2\x80\xA6 " : " ", f);
		}
		fprintf(f, "%d</text>\n", lo);
	}
}

static void heat_legend(FILE *f, int x, int y)
{
	static const char *const extra[][2] = { { HEAT_FAILED_COLOR, "failed (crossed)" },
						{ HEAT_UNMEASURED_COLOR, "not measured (a corner: some)" } };
	size_t nb = sizeof heat_bins / sizeof heat_bins[0];
	for (size_t i = 0; i < nb + 2; i++) {
		const char *color = i < nb ? heat_bins[i].color : extra[i - nb][0];
		const char *label = i < nb ? heat_bins[i].label : extra[i - nb][1];
		int lx = x + (int)(i % 4) * 185, ly = y + (int)(i / 4) * 18;
		fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"12\" height=\"12\" fill=\"%s\"/>"
			"<text x=\"%d\" y=\"%d\" font-size=\"11\">", lx, ly, color, lx + 16, ly + 10);
		html_esc(f, label);
		fputs("</text>\n", f);
	}
}

static void heat_map(FILE *f, const struct gv_cluster *c, double median)
{
	struct heat h;
	heat_build(c, median, &h);
	int cs = 640 / h.n < 8 ? 8 : 640 / h.n > 28 ? 28 : 640 / h.n;
	int left = c->nnodes <= HEAT_LABELLED ? 150 : 40, top = 40, side = h.n * cs;
	int width = left + side + 20 > 760 ? left + side + 20 : 760, height = top + side + 60;
	fprintf(f, "<svg class=\"chart heat\" id=\"cluster-heat\" role=\"img\" width=\"%d\" height=\"%d\" "
		"viewBox=\"0 0 %d %d\" xmlns=\"http://www.w3.org/2000/svg\" data-cells=\"%d\" data-ranks-per-cell=\"%d\">\n",
		width, height, width, height, h.n, h.k);
	fprintf(f, "<text class=\"ct\" x=\"%d\" y=\"14\">Pairs host to host: the slower direction against the "
		"rate healthy pairs reach</text>\n", left);
	heat_labels(f, c, &h, left, top, cs);
	heat_cells(f, c, &h, left, top, cs);
	heat_legend(f, left > 60 ? 10 : left, top + side + 18);
	fputs("</svg>\n", f);
	if (h.k > 1)
		fprintf(f, "<p class=\"muted\">%d nodes: each cell is a block of %d ranks and shows its slowest pair "
			"(hover for which); <code>gpuvet cluster show --json</code> has every pair.</p>\n", c->nnodes, h.k);
	free(h.cell);
}

/* ---- the tables ---- */

static void drain_table(FILE *f, const struct gv_cluster *c)
{
	int rows = 0;
	for (int r = 0; r < c->nnodes; r++) {
		int first = 1;
		for (size_t i = 0; i < c->nfindings; i++) {
			const struct gv_cluster_finding *x = &c->findings[i];
			if (!x->drain || x->rank != r)
				continue;
			if (first) {
				if (!rows++)
					fputs("<h3>Nodes to drain</h3>\n<div class=\"scroll\"><table id=\"cluster-drain\"><thead><tr>"
					      "<th>host</th><th>rank</th><th>address</th><th>why</th></tr></thead><tbody>\n", f);
				fputs("<tr>", f);
				rep_td_text(f, c->nodes[r].host);
				fprintf(f, "<td class=n>%d</td>", r);
				rep_td_text(f, c->nodes[r].addr);
				fputs("<td>", f);
			}
			fputs(first ? "" : "; ", f);
			html_esc(f, gv_finding_name(x->kind));
			fputs(": ", f);
			html_esc(f, x->evidence);
			first = 0;
		}
		if (!first)
			fputs("</td></tr>\n", f);
	}
	if (rows)
		fputs("</tbody></table></div>\n", f);
}

static void findings_table(FILE *f, const struct gv_cluster *c)
{
	int rows = 0;
	for (size_t i = 0; i < c->nfindings; i++) {
		const struct gv_cluster_finding *x = &c->findings[i];
		int has_node = x->rank >= 0 && x->rank < c->nnodes, has_peer = x->peer >= 0 && x->peer < c->nnodes;
		if (x->drain && has_node)
			continue;
		if (!rows++)
			fputs("<h3>Other findings</h3>\n<div class=\"scroll\"><table id=\"cluster-findings\"><thead><tr>"
			      "<th>finding</th><th>nodes</th><th>evidence</th></tr></thead><tbody>\n", f);
		fputs("<tr>", f);
		rep_td_text(f, gv_finding_name(x->kind));
		fputs("<td>", f);
		if (has_node) {
			fprintf(f, "rank %d ", x->rank);
			html_esc(f, c->nodes[x->rank].host);
		}
		if (has_node && has_peer) {
			fprintf(f, " \xE2\x80\x93 rank %d ", x->peer);
			html_esc(f, c->nodes[x->peer].host);
		}
		fputs(has_node ? "</td>" : "cluster</td>", f);
		rep_td_text(f, x->evidence);
		fputs("</tr>\n", f);
	}
	if (rows)
		fputs("</tbody></table></div>\n", f);
}

static void nodes_table(FILE *f, const struct gv_cluster *c)
{
	static const char *const verdicts[] = { "accept", "reject", "?", "unmeasurable" };
	fprintf(f, "<details><summary>Nodes (%d)</summary>\n<div class=\"scroll\"><table id=\"cluster-nodes\"><thead><tr>"
		"<th>rank</th><th>host</th><th>address</th><th>state</th><th>instance type</th><th>GPUs</th>"
		"<th>own verdict</th><th>clock vs rank 0</th><th>NIC rate</th><th>run</th><th>why</th></tr></thead><tbody>\n",
		c->nnodes);
	for (int r = 0; r < c->nnodes && r < NODE_ROWS; r++) {
		const struct gv_cluster_node *n = &c->nodes[r];
		fprintf(f, "<tr><td class=n>%d</td>", r);
		rep_td_text(f, n->host);
		rep_td_text(f, n->addr);
		rep_td_text(f, gv_node_state_name(n->state));
		rep_td_text(f, n->instance_type);
		fprintf(f, "<td class=n>%d</td><td>", n->ngpus);
		rep_badge(f, n->verdict >= 0 && n->verdict <= 3 ? verdicts[n->verdict] : NULL);
		fputs("</td>", f);
		rep_td_num(f, n->clock_skew_s, " s");
		rep_td_num(f, n->link_gbps, " GB/s");
		rep_td_text(f, n->run_uuid[0] ? n->run_uuid : NULL);
		rep_td_text(f, n->why);
		fputs("</tr>\n", f);
	}
	fputs("</tbody></table></div>\n", f);
	if (c->nnodes > NODE_ROWS)
		fprintf(f, "<p class=\"muted\">The first %d of %d nodes; <code>gpuvet cluster show --json</code> lists "
			"them all.</p>\n", NODE_ROWS, c->nnodes);
	fputs("</details>\n", f);
}

static void allreduce_chart(FILE *f, const struct gv_cluster *c)
{
	if (!c->nar) {
		fputs("<p>No cluster all-reduce: ", f);
		html_esc(f, c->ar_why[0] ? c->ar_why : "not run");
		fputs(".</p>\n", f);
		return;
	}
	double *x = gv_calloc(c->nar, sizeof *x), *bus = gv_calloc(c->nar, sizeof *bus), *alg = gv_calloc(c->nar, sizeof *alg);
	for (size_t i = 0; i < c->nar; i++) {
		x[i] = c->ar[i].bytes;
		bus[i] = c->ar[i].busbw_gbps;
		alg[i] = c->ar[i].algbw_gbps;
	}
	struct svg_series ss[2] = { { "bus bandwidth", x, bus, c->nar, 0, 1, 0 },
				    { "algorithm bandwidth", x, alg, c->nar, 1, 1, 1 } };
	char title[160];
	snprintf(title, sizeof title, "Cluster all-reduce over every GPU%s%s", c->nccl_net[0] ? ", NCCL " : "",
		 c->nccl_net);   /* svg_line_chart escapes it */
	struct svg_chart ch = {
		.title = title, .x_label = "message size", .y_label = "bandwidth (GB/s)", .x_log2 = 1, .x_bytes = 1,
		.y_from_zero = 1, .series = ss, .n_series = 2, .width = 640, .height = 240,
	};
	svg_line_chart(f, &ch);
	free(x);
	free(bus);
	free(alg);
}

/* Whether the cluster run is the store's newest item: no run shown first, or that run is one of
 * the cluster's own nodes' runs (they start after the cluster run does), or it started before it. */
static int cluster_newest(const struct gv_cluster *c, const struct run_sum *top)
{
	if (!top)
		return 1;
	if (top->forced)
		return 0;   /* the page was asked for that run */
	for (int i = 0; top->uuid && i < c->nnodes; i++)
		if (!strcmp(c->nodes[i].run_uuid, top->uuid))
			return 1;
	return top->started && strncmp(top->started, c->started_at, 19) < 0;
}

int rep_cluster_headline(FILE *f, const struct rdoc *d, const struct report_page *pg)
{
	const struct gv_cluster *c = d->cluster;
	struct cluster_tally t;
	char why[512];
	if (!c || !cluster_newest(c, pg->top))
		return 0;
	cluster_tally(c, &t);
	cluster_why(c, &t, why, sizeof why);
	fprintf(f, "<h1 id=\"verdict\" class=\"%s\">Cluster %s: ", c->verdict == 0 ? "good" : c->verdict == 1 ? "bad" : "warn",
		cluster_verdict_word(c->verdict));
	html_esc(f, why);
	fputs("<br><small>the newest item of the store is this cluster run (<a href=\"#cluster\">Cluster</a>): ", f);
	html_esc(f, c->uuid);
	fputs(", started ", f);
	html_esc(f, rep_orq(c->started_at));
	fputs("</small></h1>", f);
	return 1;
}

/* The run's trust and bounds: authenticated or not, its deadline. */
static void trust_words(FILE *f, const struct gv_cluster *c)
{
	fputs(c->authenticated ? "; authenticated (every rank proved the job's token)" :
	      "; <b>not authenticated</b> (no GPUVET_CLUSTER_TOKEN: anyone who reached rank 0 could take part)", f);
	if (isfinite(c->deadline_s))
		fprintf(f, "; deadline %.0f s", c->deadline_s);
}

void rep_section_cluster(FILE *f, const struct rdoc *d, const struct report_page *pg)
{
	(void)pg;
	const struct gv_cluster *c = d->cluster;
	if (!c)
		return;
	struct cluster_tally t;
	char why[512], med[32];
	cluster_tally(c, &t);
	cluster_why(c, &t, why, sizeof why);
	svg_fmt_num(t.median, med, sizeof med);
	fprintf(f, "<section id=\"cluster\"><h2>Cluster</h2>\n<p id=\"cluster-verdict\"><b class=\"badge %s\">%s</b> ",
		c->verdict == 0 ? "accept" : c->verdict == 1 ? "reject" : "unmeasurable", cluster_verdict_word(c->verdict));
	html_esc(f, why);
	fputs("</p>\n<p class=\"muted\">Cluster run ", f);
	html_esc(f, c->uuid);
	fprintf(f, ": %d nodes started by ", c->nnodes);
	html_esc(f, rep_orq(c->engine));
	fputs(" at ", f);
	html_esc(f, rep_orq(c->started_at));
	fputs(", pairs over libfabric ", f);
	html_esc(f, c->transport[0] ? c->transport : "(none)");
	fprintf(f, ", median %s GB/s, schedule ", med);
	html_esc(f, rep_orq(c->schedule));
	fprintf(f, " in %d rounds", c->nrounds);
	trust_words(f, c);
	if (d->clusters > 1)
		fprintf(f, "; the newest of %zu cluster runs stored (<code>gpuvet cluster show ID</code> for the others)",
			d->clusters);
	fputs(".</p>\n", f);
	drain_table(f, c);
	findings_table(f, c);
	if (c->npairs)
		heat_map(f, c, t.healthy > 0 ? t.healthy : NAN);
	allreduce_chart(f, c);
	nodes_table(f, c);
	fputs("</section>\n", f);
}
