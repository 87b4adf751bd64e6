/*
 * report_assets.h - the report's one stylesheet and one script,
 * reports/assets/report.css and report.js, compiled in by reports/html.c
 * (common/embed.h).  Both are allowed by their SHA-256 in the page's
 * Content-Security-Policy, so any other style or script is refused.
 *
 * The script only reorders and hides existing rows: it reads the DOM and
 * data-v attributes (numbers written by gpuvet), never builds markup from
 * strings.  "#sort=TABLE:COL:asc|desc" and "#filter=TABLE:TEXT" in the URL
 * (joined by '&') are applied on load.
 */
#ifndef GPUVET_REPORT_ASSETS_H
#define GPUVET_REPORT_ASSETS_H

/* NUL-terminated: each is also a C string (GV_EMBED in reports/html.c) */
extern const char gv_report_css[], gv_report_css_end[];
extern const char gv_report_js[], gv_report_js_end[];
#define REPORT_CSS gv_report_css
#define REPORT_JS gv_report_js

#endif
