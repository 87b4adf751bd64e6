/* svg.c - see svg.h */
#include "reports/svg.h"
#include "reports/html_escape.h"

#include <math.h>
#include <string.h>

static const char *const palette[SVG_PALETTE] = {
	"#0072b2", "#d55e00", "#009e73", "#cc79a7", "#e69f00", "#56b4e9", "#000000", "#f0e442",
};
static const char *const band_palette[] = { "#d55e00", "#e69f00", "#999999", "#cc79a7", "#4a6f94" };
#define N_BAND_COLORS (sizeof band_palette / sizeof band_palette[0])

const char *svg_color(int i)
{
	if (i < 0)
		i = -i;
	return palette[i % SVG_PALETTE];
}

void svg_fmt_num(double v, char *buf, size_t size)
{
	double a = fabs(v);

	if (!isfinite(v))
		snprintf(buf, size, "n/a");
	else if (a != 0 && (a >= 1e6 || a < 1e-3))
		snprintf(buf, size, "%.2g", v);
	else if (a >= 100 || a == floor(a))
		snprintf(buf, size, "%.0f", v);
	else if (a >= 10)
		snprintf(buf, size, "%.1f", v);
	else if (a >= 1)
		snprintf(buf, size, "%.2f", v);
	else
		snprintf(buf, size, "%.3g", v);
}

void svg_fmt_bytes(double b, char *buf, size_t size)
{
	static const char *const bin[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	double v = b;
	int u = 0;

	if (!isfinite(b) || b < 0) {
		snprintf(buf, size, "n/a");
		return;
	}
	while (v >= 1024 && u < 4) {
		v /= 1024;
		u++;
	}
	if (v == floor(v))
		snprintf(buf, size, "%.0f %s", v, bin[u]);
	else
		snprintf(buf, size, "%.3g %s", v, bin[u]);
}

size_t svg_nice_ticks(double lo, double hi, size_t want, double *ticks, size_t max)
{
	double range, raw, mag, step;
	size_t n = 0;

	if (!isfinite(lo) || !isfinite(hi) || max == 0 || want == 0)
		return 0;
	if (hi < lo) {
		double t = lo;
		lo = hi;
		hi = t;
	}
	range = hi - lo;
	if (range <= 0) {
		ticks[0] = lo;
		return 1;
	}
	raw = range / (double)want;
	mag = pow(10, floor(log10(raw)));
	step = raw / mag < 1.5 ? mag : raw / mag < 3 ? 2 * mag : raw / mag < 7 ? 5 * mag : 10 * mag;
	for (double t = ceil(lo / step - 1e-9) * step; t <= hi + step * 1e-9 && n < max; t += step)
		ticks[n++] = fabs(t) < step * 1e-9 ? 0 : t;
	return n;
}

struct frame {
	double x0, x1, y0, y1;     /* data ranges (x in log2, y in log10 when log) */
	double L, T, PW, PH;       /* plot area in pixels */
	int xlog, ylog;
};

static double fx(const struct frame *fr, double x)
{
	double v = fr->xlog ? log2(x) : x;
	return fr->L + (v - fr->x0) / (fr->x1 - fr->x0) * fr->PW;
}

static double fy(const struct frame *fr, double y)
{
	double v = fr->ylog ? log10(y) : y;
	return fr->T + fr->PH - (v - fr->y0) / (fr->y1 - fr->y0) * fr->PH;
}

static int usable_x(const struct frame *fr, double x)
{
	return isfinite(x) && (!fr->xlog || x > 0);
}

static int usable_y(const struct frame *fr, double y)
{
	return isfinite(y) && (!fr->ylog || y > 0);
}

size_t svg_log_ticks(double lo, double hi, double *ticks, size_t max)
{
	static const double m[3] = { 1, 2, 5 };
	size_t n = 0;

	if (!(lo > 0) || !(hi >= lo) || !isfinite(hi) || max == 0)
		return 0;
	for (double e = floor(log10(lo)); e <= ceil(log10(hi)) && n < max; e += 1)
		for (int k = 0; k < 3 && n < max; k++) {
			double t = m[k] * pow(10, e);
			if (t >= lo * (1 - 1e-9) && t <= hi * (1 + 1e-9))
				ticks[n++] = t;
		}
	return n;
}

/* One series as a polyline, reduced to min/max per pixel column. */
static void draw_series(FILE *f, const struct frame *fr, const struct svg_series *s)
{
	long col = -1;
	double ymin = 0, ymax = 0, first_px = 0;
	size_t imin = 0, imax = 0, pts = 0;

	if (s->n == 0)
		return;
	fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\"%s points=\"",
		svg_color(s->color), s->dashed ? " stroke-dasharray=\"5 3\"" : "");
	for (size_t i = 0; i <= s->n; i++) {
		int flush = i == s->n;
		long c = 0;
		double px = 0;

		if (!flush) {
			if (!usable_x(fr, s->x[i]) || !usable_y(fr, s->y[i]))
				continue;
			px = fx(fr, s->x[i]);
			c = lround(px);
			flush = col >= 0 && c != col;
		}
		if (flush && col >= 0) {
			double a = imin <= imax ? ymin : ymax, b = imin <= imax ? ymax : ymin;
			/* whole pixels: finer positions add bytes, not detail */
			fprintf(f, "%s%.0f,%.0f", pts++ ? " " : "", first_px, fy(fr, a));
			if (a != b && lround(fy(fr, a)) != lround(fy(fr, b)))
				fprintf(f, " %.0f,%.0f", first_px, fy(fr, b));
		}
		if (i == s->n)
			break;
		if (col < 0 || c != col) {
			col = c;
			first_px = px;
			ymin = ymax = s->y[i];
			imin = imax = i;
		} else {
			if (s->y[i] < ymin) { ymin = s->y[i]; imin = i; }
			if (s->y[i] > ymax) { ymax = s->y[i]; imax = i; }
		}
	}
	fputs("\"><title>", f);
	html_esc(f, s->name);
	fputs("</title></polyline>\n", f);
}

/* Legend entries laid out in rows under the x label; returns the rows' height. */
struct legend_item { const char *name; const char *color; int band; double opacity; };

static double legend_height(const struct legend_item *it, size_t n, double W)
{
	double x = 0, rows = n ? 1 : 0;
	for (size_t i = 0; i < n; i++) {
		double w = 22 + 6.5 * (double)strlen(it[i].name);
		if (x > 0 && x + w > W - 20) {
			rows++;
			x = 0;
		}
		x += w;
	}
	return rows * 16;
}

static void legend_draw(FILE *f, const struct legend_item *it, size_t n, double W, double top)
{
	double x = 10, y = top;
	for (size_t i = 0; i < n; i++) {
		double w = 22 + 6.5 * (double)strlen(it[i].name);
		if (x > 10 && x + w > W - 10) {
			y += 16;
			x = 10;
		}
		if (it[i].band == 1)
			fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"12\" height=\"10\" fill=\"%s\" fill-opacity=\"%.2f\"/>",
				x, y - 9, it[i].color, it[i].opacity > 0 ? it[i].opacity + 0.05 : 0.3);
		else if (it[i].band == 2)   /* a reference line */
			fprintf(f, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
				   "stroke-width=\"1.5\" stroke-dasharray=\"3 2\"/>", x, x + 12, y - 4, y - 4, it[i].color);
		else
			fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"12\" height=\"3\" fill=\"%s\"/>", x, y - 5,
				it[i].color);
		fprintf(f, "<text x=\"%.1f\" y=\"%.1f\">", x + 16, y);
		html_esc(f, it[i].name);
		fputs("</text>\n", f);
		x += w;
	}
}

/* Reference lines over the data, each labelled at its right end (below the line when two meet). */
static void draw_refs(FILE *f, const struct frame *fr, const struct svg_ref *refs, size_t n)
{
	double last_y = -1e9;
	char buf[48];

	for (size_t i = 0; i < n; i++) {
		if (!usable_y(fr, refs[i].y))
			continue;
		double y = fy(fr, refs[i].y), ly = y - 3;
		if (fabs(ly - last_y) < 12)
			ly = y + 11;
		last_y = ly;
		svg_fmt_num(refs[i].y, buf, sizeof buf);
		fprintf(f, "<g class=\"ref\"><line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
			   "stroke-width=\"1.5\" stroke-dasharray=\"3 2\"/><text x=\"%.1f\" y=\"%.1f\" "
			   "text-anchor=\"end\" fill=\"%s\">", fr->L, fr->L + fr->PW, y, y, svg_color(refs[i].color),
			fr->L + fr->PW - 2, ly, svg_color(refs[i].color));
		html_esc(f, refs[i].name);
		fprintf(f, " %s</text></g>\n", buf);
	}
}

/* The data's range made a frame: whole decades on a log axis, from zero when asked, 5 % of air. */
static void fit_frame(struct frame *fr, const struct svg_chart *c)
{
	if (fr->ylog) {
		/* whole decades around the data */
		fr->y0 = floor(fr->y0 + 1e-9);
		fr->y1 = ceil(fr->y1 - 1e-9);
		if (fr->y1 <= fr->y0)
			fr->y1 = fr->y0 + 1;
	} else if (c->y_from_zero && fr->y0 > 0)
		fr->y0 = 0;
	if (fr->ylog) {
		/* fitted above */
	} else if (fr->y1 <= fr->y0) {
		double pad = fabs(fr->y0) > 0 ? fabs(fr->y0) * 0.05 : 1;
		fr->y0 -= pad;
		fr->y1 += pad;
	} else {
		double pad = (fr->y1 - fr->y0) * 0.05;
		fr->y1 += pad;
		if (!(c->y_from_zero && fr->y0 == 0))
			fr->y0 -= pad;
	}
	if (fr->x1 <= fr->x0) {
		fr->x0 -= 1;
		fr->x1 += 1;
	}
}

/* Grid, ticks and their labels on both axes. */
static void draw_ticks(FILE *f, const struct frame *fr, const struct svg_chart *c)
{
	double ticks[32], xt[64];
	size_t nt;
	char buf[48];
	/* y grid, ticks and labels */
	nt = fr->ylog ? svg_log_ticks(pow(10, fr->y0), pow(10, fr->y1), ticks, 32)
		     : svg_nice_ticks(fr->y0, fr->y1, 5, ticks, 32);
	for (size_t i = 0; i < nt; i++) {
		double y = fy(fr, ticks[i]);
		svg_fmt_num(ticks[i], buf, sizeof buf);
		fprintf(f, "<line class=\"grid\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>"
			   "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n",
			fr->L, fr->L + fr->PW, y, y, fr->L - 4, y + 4, buf);
	}
	/* x ticks: log2 axes at powers of two (every 1, 2 or 4 octaves), linear axes at nice steps */
	if (fr->xlog) {
		double span = fr->x1 - fr->x0;
		int every = span > 24 ? 4 : span > 12 ? 2 : 1;
		nt = 0;
		for (double e = ceil(fr->x0); e <= fr->x1 + 1e-9 && nt < 64; e += 1)
			if (((long)e % every) == 0)
				xt[nt++] = pow(2, e);
	} else {
		nt = svg_nice_ticks(fr->x0, fr->x1, 8, xt, 64);
	}
	for (size_t i = 0; i < nt; i++) {
		double x = fx(fr, xt[i]);
		if (c->x_bytes)
			svg_fmt_bytes(xt[i], buf, sizeof buf);
		else
			svg_fmt_num(xt[i], buf, sizeof buf);
		fprintf(f, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#888\"/>"
			   "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n",
			x, x, fr->T + fr->PH, fr->T + fr->PH + 4, x, fr->T + fr->PH + 16, buf);
	}
}

/* Shaded intervals (throttling) below the lines. */
static void draw_bands(FILE *f, const struct frame *fr, const struct svg_chart *c)
{
	/* shaded intervals below the lines */
	for (size_t b = 0; b < c->n_bands; b++) {
		double a = fmax(fr->L, fx(fr, c->bands[b].x0)), z = fmin(fr->L + fr->PW, fx(fr, c->bands[b].x1));
		if (!(z >= a))
			continue;
		size_t k = (size_t)c->bands[b].kind;
		fprintf(f, "<rect class=\"band b%zu\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\" "
			   "fill-opacity=\"%.2f\"><title>", k, a, fr->T, fmax(z - a, 1.0), fr->PH,
			band_palette[k % N_BAND_COLORS], c->band_opacity ? c->band_opacity[k] : 0.25);
		html_esc(f, k < c->n_band_kinds ? c->band_names[k] : "");
		fputs("</title></rect>\n", f);
	}
}

int svg_line_chart(FILE *f, const struct svg_chart *c)
{
	double W = c->width > 0 ? c->width : 720, H = c->height > 0 ? c->height : 260;
	struct frame fr = { .x0 = INFINITY, .x1 = -INFINITY, .y0 = INFINITY, .y1 = -INFINITY,
			    .L = 70, .T = 30, .xlog = c->x_log2, .ylog = c->y_log10 };
	struct legend_item items[64];
	size_t ni = 0, npts = 0;
	double lh;

	for (size_t i = 0; i < c->n_series; i++) {
		const struct svg_series *s = &c->series[i];
		for (size_t j = 0; j < s->n; j++) {
			if (!usable_x(&fr, s->x[j]) || !usable_y(&fr, s->y[j]))
				continue;
			double xv = fr.xlog ? log2(s->x[j]) : s->x[j], yv = fr.ylog ? log10(s->y[j]) : s->y[j];
			fr.x0 = fmin(fr.x0, xv);
			fr.x1 = fmax(fr.x1, xv);
			fr.y0 = fmin(fr.y0, yv);
			fr.y1 = fmax(fr.y1, yv);
			npts++;
		}
		if (s->legend && ni < 48)
			items[ni++] = (struct legend_item){ s->name ? s->name : "", svg_color(s->color), 0, 0 };
	}
	/* reference lines stay inside the y range, so the reader sees where the data sits against them */
	for (size_t i = 0; npts && i < c->n_refs; i++) {
		if (!usable_y(&fr, c->refs[i].y))
			continue;
		double yv = fr.ylog ? log10(c->refs[i].y) : c->refs[i].y;
		fr.y0 = fmin(fr.y0, yv);
		fr.y1 = fmax(fr.y1, yv);
		if (ni < 56)
			items[ni++] = (struct legend_item){ c->refs[i].name ? c->refs[i].name : "",
							    svg_color(c->refs[i].color), 2, 0 };
	}
	for (size_t k = 0; k < c->n_band_kinds && ni < 64; k++) {
		int used = 0;
		for (size_t b = 0; b < c->n_bands; b++)
			used |= c->bands[b].kind == (int)k;
		if (used)
			items[ni++] = (struct legend_item){ c->band_names[k], band_palette[k % N_BAND_COLORS], 1,
							    c->band_opacity ? c->band_opacity[k] : 0.25 };
	}
	lh = legend_height(items, ni, W);
	H += lh;
	fr.PW = W - fr.L - 34;
	fr.PH = H - lh - fr.T - 46;

	fprintf(f, "<svg class=\"chart\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 %.0f %.0f\" "
		   "width=\"%.0f\" height=\"%.0f\" role=\"img\" aria-label=\"", W, H, W, H);
	html_esc(f, c->title);
	fputs("\"><title>", f);
	html_esc(f, c->title);
	fprintf(f, "</title>\n<text class=\"ct\" x=\"10\" y=\"18\">");
	html_esc(f, c->title);
	fputs("</text>\n", f);
	if (npts == 0) {
		fprintf(f, "<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"middle\">no data</text></svg>\n", W / 2, H / 2);
		return ferror(f) ? -1 : 0;
	}
	fit_frame(&fr, c);
	draw_ticks(f, &fr, c);
	draw_bands(f, &fr, c);
	for (size_t i = 0; i < c->n_series; i++)
		draw_series(f, &fr, &c->series[i]);
	draw_refs(f, &fr, c->refs, c->n_refs);
	/* axes and their labels */
	fprintf(f, "<path d=\"M%.1f %.1fV%.1fH%.1f\" fill=\"none\" stroke=\"#333\"/>\n",
		fr.L, fr.T, fr.T + fr.PH, fr.L + fr.PW);
	fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">", fr.L + fr.PW / 2, fr.T + fr.PH + 34);
	html_esc(f, c->x_label);
	fprintf(f, "</text>\n<text x=\"14\" y=\"%.1f\" text-anchor=\"middle\" transform=\"rotate(-90 14 %.1f)\">",
		fr.T + fr.PH / 2, fr.T + fr.PH / 2);
	html_esc(f, c->y_label);
	fputs("</text>\n", f);
	legend_draw(f, items, ni, W, H - lh + 10);
	fputs("</svg>\n", f);
	return ferror(f) ? -1 : 0;
}

int svg_bar_chart(FILE *f, const char *title, const char *unit, const struct svg_bar *bars,
		  size_t n, int width)
{
	double W = width > 0 ? width : 720, L = 250, R = 110, row = 20, T = 30;
	double H = T + row * (double)(n ? n : 1) + 34, vmax = 0, ticks[16];
	size_t nt;
	char buf[48];

	for (size_t i = 0; i < n; i++)
		if (isfinite(bars[i].value) && bars[i].value > vmax)
			vmax = bars[i].value;
	fprintf(f, "<svg class=\"chart\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 %.0f %.0f\" "
		   "width=\"%.0f\" height=\"%.0f\" role=\"img\" aria-label=\"", W, H, W, H);
	html_esc(f, title);
	fputs("\"><title>", f);
	html_esc(f, title);
	fputs("</title>\n<text class=\"ct\" x=\"10\" y=\"18\">", f);
	html_esc(f, title);
	fputs("</text>\n", f);
	if (n == 0 || vmax <= 0) {
		fprintf(f, "<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"middle\">no data</text></svg>\n", W / 2, T + 14);
		return ferror(f) ? -1 : 0;
	}
	nt = svg_nice_ticks(0, vmax, 5, ticks, 16);
	if (nt && ticks[nt - 1] > vmax)
		vmax = ticks[nt - 1];
	double PW = W - L - R;
	for (size_t i = 0; i < nt; i++) {
		double x = L + ticks[i] / vmax * PW;
		svg_fmt_num(ticks[i], buf, sizeof buf);
		fprintf(f, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>"
			   "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n",
			x, x, T, T + row * (double)n, x, T + row * (double)n + 14, buf);
	}
	for (size_t i = 0; i < n; i++) {
		double y = T + row * (double)i, v = bars[i].value;
		char lab[96];
		size_t ll = strlen(bars[i].label ? bars[i].label : "");

		/* long labels are cut at a character boundary, the full text stays in <title> */
		if (ll > 38) {
			const unsigned char *p = (const unsigned char *)bars[i].label;
			size_t cut = 36;
			while (cut > 0 && (p[cut] & 0xC0) == 0x80)
				cut--;
			memcpy(lab, bars[i].label, cut);
			memcpy(lab + cut, "\xE2\x80\xA6", 4);
		} else {
			snprintf(lab, sizeof lab, "%s", bars[i].label ? bars[i].label : "");
		}
		fprintf(f, "<g><title>");
		html_esc(f, bars[i].label);
		fprintf(f, "</title><text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">", L - 6, y + 14);
		html_esc(f, lab);
		fputs("</text>", f);
		if (isfinite(v) && v > 0) {
			double w = v / vmax * PW;
			if (bars[i].estimate)
				fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\" "
					   "fill-opacity=\"0.15\" stroke=\"%s\" stroke-dasharray=\"4 2\"/>",
					L, y + 3, w, row - 6, svg_color(bars[i].color), svg_color(bars[i].color));
			else
				fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\"/>",
					L, y + 3, w, row - 6, svg_color(bars[i].color));
			svg_fmt_num(v, buf, sizeof buf);
			fprintf(f, "<text x=\"%.1f\" y=\"%.1f\">%s%s</text>", L + w + 4, y + 14, buf,
				bars[i].estimate ? " (estimate)" : "");
		} else {
			fprintf(f, "<text x=\"%.1f\" y=\"%.1f\">no data</text>", L + 4, y + 14);
		}
		fputs("</g>\n", f);
	}
	fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">", L + PW / 2, H - 4);
	html_esc(f, unit);
	fputs("</text></svg>\n", f);
	return ferror(f) ? -1 : 0;
}
