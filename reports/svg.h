/*
 * svg.h - inline SVG charts for the HTML report, written by gpuvet itself
 * (no library, no script, no external resource): line charts with axes,
 * ticks, units, a legend and shaded x intervals; horizontal bar charts.
 *
 * Every text (titles, labels, legend names) is HTML-escaped here; callers
 * pass raw strings.  Colours are presentation attributes, never style=""
 * attributes, so the report's Content-Security-Policy needs no
 * 'unsafe-inline'.
 */
#ifndef GPUVET_SVG_H
#define GPUVET_SVG_H

#include <stddef.h>
#include <stdio.h>

#define SVG_PALETTE 8

struct svg_series {
	const char *name;         /* legend label */
	const double *x, *y;      /* n points, x ascending */
	size_t n;
	int color;                /* palette index (mod SVG_PALETTE) */
	int legend;               /* 1: listed in the legend (0 for further lines of a group) */
	int dashed;
};

/* A shaded interval [x0, x1] of kind k (band_names[k] in the legend). */
struct svg_band {
	double x0, x1;
	int kind;
};

/* A horizontal reference line at y (a model's achievable figure, a clock limit, a fleet median). */
struct svg_ref {
	double y;
	const char *name;         /* label drawn at the line's right end and in the legend */
	int color;                /* palette index */
};

struct svg_chart {
	const char *title;
	const char *x_label;      /* with its unit: "time since soak start (s)" */
	const char *y_label;      /* with its unit: "SM clock (MHz)" */
	int x_log2;               /* log2 x axis (sizes) */
	int x_bytes;              /* x ticks as byte sizes: 4 KiB, 1 MiB, 1 GiB */
	int y_from_zero;          /* y axis starts at 0 (else fitted to the data) */
	int y_log10;              /* log10 y axis (values spanning decades: copy bandwidths); y <= 0 not drawn */
	int width, height;        /* 0: 720 x 260 */
	const struct svg_series *series;
	size_t n_series;
	const struct svg_band *bands;
	size_t n_bands;
	const char *const *band_names;  /* legend names of band kinds */
	size_t n_band_kinds;
	const double *band_opacity;     /* per band kind (NULL: 0.25): a normal state drawn lighter */
	const struct svg_ref *refs;     /* dashed horizontal reference lines, inside the y range */
	size_t n_refs;
};

/*
 * Writes one <svg> line chart.  Lines longer than the plot's width in
 * pixels are reduced to the minimum and maximum of each pixel column, so
 * a dip lasting one sample still shows.  Returns 0, -1 on a write error.
 */
int svg_line_chart(FILE *f, const struct svg_chart *c);

struct svg_bar {
	const char *label;
	double value;             /* NaN: drawn as "no data" */
	int color;
	int estimate;             /* drawn hollow and labelled "estimate" */
};

/* Horizontal bars, one per item, value printed with unit. Returns 0 or -1. */
int svg_bar_chart(FILE *f, const char *title, const char *unit, const struct svg_bar *bars,
		  size_t n, int width);

/* Tick positions for [lo, hi]: "nice" steps (1, 2, 5 x 10^k); returns the count (<= max). */
size_t svg_nice_ticks(double lo, double hi, size_t want, double *ticks, size_t max);
/* A byte size as "4 KiB", "256 MiB", "1 GiB" (powers of two) or "1.5 MB" otherwise. */
void svg_fmt_bytes(double b, char *buf, size_t size);
/* A number with about 3 significant digits ("1980", "0.35", "1.2e+06"). */
/* Log10 ticks for [lo, hi] (both > 0): 1, 2, 5 x 10^k; returns the count (<= max). */
size_t svg_log_ticks(double lo, double hi, double *ticks, size_t max);
void svg_fmt_num(double v, char *buf, size_t size);
/* Palette colour "#rrggbb" (Okabe-Ito, readable for colour-blind readers). */
const char *svg_color(int i);

#endif
