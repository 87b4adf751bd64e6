/* test_html.c - the report's escaping, hashing, charts and rendering. */
#include "tests/unit/t.h"
#include "reports/html.h"
#include "reports/html_escape.h"
#include "reports/sha256.h"
#include "reports/svg.h"
#include "common/util.h"

#include "results/store.h"

#include <dirent.h>
#include <sqlite3.h>
#include <unistd.h>
#include <stdlib.h>

/* Runs fn into a memory stream and returns the text (malloc'd). */
static char *capture_esc(long (*fn)(FILE *, const char *, size_t), const char *s, size_t n)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	fn(f, s, n);
	fclose(f);
	return buf;
}

static size_t count(const char *hay, const char *needle)
{
	size_t n = 0, l = strlen(needle);
	for (const char *p = hay; (p = strstr(p, needle)); p += l)
		n++;
	return n;
}

static void test_escape_text(void)
{
	char *s = capture_esc(html_esc_n, "<script>alert('x\")&</script>", 28);
	CHECK_STR(s, "&lt;script&gt;alert(&#39;x&quot;)&amp;&lt;/script&gt;");
	free(s);
	/* valid multibyte text passes untouched */
	s = capture_esc(html_esc_n, "caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80", 14);
	CHECK_STR(s, "caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80");
	free(s);
}

static void test_escape_invalid_utf8_and_controls(void)
{
	/* stray continuation, overlong '<', surrogate, truncated, NUL, ESC, DEL: each U+FFFD */
	static const char in[] = "a\x80" "b\xC0\xBC" "c\xED\xA0\x80" "d\x01\x7F" "e\xE2\x82";
	char *s = capture_esc(html_esc_n, in, sizeof in - 1);
	CHECK(strchr(s, '<') == NULL);
	CHECK(s[0] == 'a' && strstr(s, "b") && strstr(s, "e"));
	CHECK(count(s, "\xEF\xBF\xBD") >= 7);
	free(s);
	s = capture_esc(html_esc_n, "x\0y", 3);
	CHECK_STR(s, "x\xEF\xBF\xBDy");
	free(s);
	/* tab and newline are text */
	s = capture_esc(html_esc_n, "a\tb\nc", 5);
	CHECK_STR(s, "a\tb\nc");
	free(s);
}

static void test_escape_json(void)
{
	static const char in[] = "</script><!--\"\\\n\xE2\x80\xA8\xE2\x80\xA9&'";
	char *s = capture_esc(html_json_esc, in, sizeof in - 1);
	CHECK_STR(s, "\\u003c/script\\u003e\\u003c!--\\\"\\\\\\n\\u2028\\u2029\\u0026\\u0027");
	free(s);
}

static void test_utf8_len(void)
{
	unsigned cp = 0;
	CHECK(html_utf8_len((const unsigned char *)"\xF4\x8F\xBF\xBF", 4, &cp) == 4 && cp == 0x10FFFF);
	CHECK(html_utf8_len((const unsigned char *)"\xF4\x90\x80\x80", 4, &cp) == 0);  /* > U+10FFFF */
	CHECK(html_utf8_len((const unsigned char *)"\xE0\x80\xAF", 3, &cp) == 0);      /* overlong */
	CHECK(html_utf8_len((const unsigned char *)"\xC3", 1, &cp) == 0);              /* truncated */
}

static void test_sha256_vectors(void)
{
	uint8_t d[32];
	char b64[64];
	/* FIPS 180-4 examples */
	sha256_digest("abc", 3, d);
	CHECK(d[0] == 0xba && d[1] == 0x78 && d[31] == 0xad);
	sha256_csp_source("", 0, b64, sizeof b64);
	CHECK_STR(b64, "sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=");
	sha256_digest("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", 56, d);
	CHECK(d[0] == 0x24 && d[1] == 0x8d && d[30] == 0x06 && d[31] == 0xc1);
	/* 64-byte boundary: SHA-256 of 64 'a' */
	sha256_csp_source("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", 64, b64, sizeof b64);
	CHECK_STR(b64, "sha256-/+BU/nrgy23GXDr5th1SCfQ5hR20PQulmXM33xVGaOs=");
}

static void test_svg_helpers(void)
{
	double t[16];
	char buf[32];
	size_t n = svg_nice_ticks(0, 1980, 5, t, 16);
	CHECK(n >= 4 && n <= 7);
	CHECK(t[0] == 0);
	CHECK_NEAR(t[1] - t[0], 500, 1e-9);
	svg_fmt_bytes(4096, buf, sizeof buf);
	CHECK_STR(buf, "4 KiB");
	svg_fmt_bytes(1 << 30, buf, sizeof buf);
	CHECK_STR(buf, "1 GiB");
	svg_fmt_num(1980, buf, sizeof buf);
	CHECK_STR(buf, "1980");
	/* log ticks: 1, 2, 5 per decade, inside the range */
	n = svg_log_ticks(0.3, 2500, t, 16);
	CHECK(n == 12);   /* 0.5 1 2 5 10 20 50 100 200 500 1000 2000 */
	CHECK_NEAR(t[0], 0.5, 1e-12);
	CHECK_NEAR(t[n - 1], 2000, 1e-9);
	CHECK(svg_log_ticks(0, 10, t, 16) == 0);   /* no log axis through zero */
}

static char *line_chart(const struct svg_chart *c)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	CHECK(svg_line_chart(f, c) == 0);
	fclose(f);
	return buf;
}

/* A reference line is drawn, labelled and widens the y range to hold it; a log axis drops y <= 0. */
static void test_svg_refs_and_log_axis(void)
{
	double x[3] = { 4096, 65536, 1048576 }, y[3] = { 0, 3, 1900 };
	struct svg_series s = { "d2d", x, y, 3, 0, 1, 0 };
	struct svg_ref ref = { 63.0, "PCIe Gen5 x16 link", 2 };
	struct svg_chart c = { .title = "t", .x_label = "x", .y_label = "y", .x_log2 = 1, .y_log10 = 1,
			       .series = &s, .n_series = 1, .refs = &ref, .n_refs = 1 };
	char *out = line_chart(&c);
	CHECK(strstr(out, "class=\"ref\"") != NULL);
	CHECK(strstr(out, "PCIe Gen5 x16 link 63") != NULL);
	CHECK(strstr(out, ">1000<") != NULL && strstr(out, ">10<") != NULL);   /* decades, not 0..2000 */
	CHECK(strstr(out, ">0<") == NULL);
	free(out);
	/* linear: a reference above the data still shows */
	y[0] = 10;
	y[1] = 20;
	y[2] = 30;
	ref.y = 698;
	c.y_log10 = 0;
	out = line_chart(&c);
	CHECK(strstr(out, ">600<") != NULL);
	free(out);
}

static void test_svg_line_chart(void)
{
	double x[3000], y[3000];
	for (int i = 0; i < 3000; i++) {
		x[i] = i;
		y[i] = i == 1500 ? 100 : 1980;  /* a one-sample dip */
	}
	struct svg_series s = { "GPU 0 <b>", x, y, 3000, 0, 1, 0 };
	struct svg_band b = { 100, 200, 0 };
	static const char *const names[] = { "thermal throttling" };
	struct svg_chart c = { .title = "clocks & co", .x_label = "time (s)", .y_label = "clock (MHz)",
			       .series = &s, .n_series = 1, .bands = &b, .n_bands = 1, .band_names = names,
			       .n_band_kinds = 1 };
	char *out = line_chart(&c);
	CHECK(strstr(out, "clocks &amp; co") != NULL);
	CHECK(strstr(out, "GPU 0 &lt;b&gt;") != NULL);
	CHECK(strstr(out, "<b>") == NULL);
	CHECK(strstr(out, "thermal throttling") != NULL);
	CHECK(strstr(out, "fill-opacity=\"0.25\"") != NULL);   /* the shaded interval */
	CHECK(strstr(out, "clock (MHz)") && strstr(out, "time (s)"));
	CHECK(strstr(out, "style=") == NULL);                   /* CSP: no inline style attributes */
	/* 3000 points reduced to about two per pixel column, and the dip kept: y of 100 MHz is near the bottom */
	CHECK(count(out, ",") < 1500);
	{
		/* the plotted minimum: some point below 95% of the plot height */
		const char *p = strstr(out, "points=\"");
		double maxy = 0;
		CHECK(p != NULL);
		for (p = p + 8; p && *p && *p != '"';) {
			double px, py;
			if (sscanf(p, "%lf,%lf", &px, &py) == 2 && py > maxy)
				maxy = py;
			p = strchr(p, ' ');
			if (p)
				p++;
		}
		CHECK(maxy > 150);
	}
	free(out);

	/* log2 byte axis */
	double bx[] = { 4096, 65536, 1 << 20, 1 << 26 }, by[] = { 1, 5, 20, 24 };
	struct svg_series s2 = { "memcpy.h2d.pinned.gbps", bx, by, 4, 1, 1, 0 };
	struct svg_chart c2 = { .title = "bw", .x_label = "size", .y_label = "GB/s", .x_log2 = 1, .x_bytes = 1,
				.series = &s2, .n_series = 1 };
	out = line_chart(&c2);
	CHECK(strstr(out, "4 KiB") != NULL);
	CHECK(strstr(out, "64 MiB") != NULL || strstr(out, "16 MiB") != NULL);
	free(out);

	/* no data says so */
	struct svg_chart c3 = { .title = "empty", .series = NULL, .n_series = 0 };
	out = line_chart(&c3);
	CHECK(strstr(out, "no data") != NULL);
	free(out);
}

static void test_svg_bar_chart(void)
{
	struct svg_bar bars[] = {
		{ "aws p5.48xlarge <us-east-1>", 99.04, 0, 0 },
		{ "lambda gpu_1x_h100_sxm5 with a very long label that must be cut short", 300.7, 1, 1 },
		{ "no price", NAN, 2, 0 },
	};
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	CHECK(svg_bar_chart(f, "per $ & more", "TFLOP/s per USD per instance-hour", bars, 3, 600) == 0);
	fclose(f);
	CHECK(strstr(buf, "per $ &amp; more") != NULL);
	CHECK(strstr(buf, "&lt;us-east-1&gt;") != NULL);
	CHECK(strstr(buf, "301 (estimate)") != NULL && strstr(buf, "stroke-dasharray") != NULL);
	CHECK(strstr(buf, "no data") != NULL);
	CHECK(strstr(buf, "\xE2\x80\xA6") != NULL);                    /* the long label cut with an ellipsis */
	CHECK(strstr(buf, "that must be cut short</title>") != NULL);   /* and whole in its tooltip */
	CHECK(strstr(buf, "TFLOP/s per USD per instance-hour") != NULL);
	free(buf);
}

/* ---- rendering ---- */

static json_t *fp_make(int id, const char *itype, const char *started, int with_soak)
{
	json_t *fp = json_pack("{s:s, s:{s:i, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:i},"
			       " s:{s:s}, s:[], s:[], s:[], s:[], s:[]}",
			       "schema", "gpuvet.fingerprint/1",
			       "run", "id", id, "uuid", "00000000-0000-4000-8000-000000000000", "status", "complete",
			       "profile", "quick", "gpuvet_version", "0.1.0", "hostname", "synthetic-demo-data",
			       "started_at", started, "finished_at", started, "provider", "aws",
			       "instance_type", itype, "region", "us-east-1", "gpu_model", "H100-SXM", "gpu_count", 8,
			       "inventory", "note", "unit test",
			       "benches", "metrics", "samples", "flags", "verdicts");
	json_array_append_new(json_object_get(fp, "benches"),
			      json_pack("{s:s,s:s,s:s,s:f,s:n}", "name", "nvme", "status", "skipped",
					"reason", "fio not found", "duration_s", 0.0, "config"));
	json_array_append_new(json_object_get(fp, "metrics"),
			      json_pack("{s:s,s:s,s:i,s:f,s:s,s:{s:i}}", "bench", "gemm", "name", "gemm.bf16.tflops",
					"gpu", -1, "value", 5120.5, "unit", "TFLOP/s", "params", "m", 8192));
	json_array_append_new(json_object_get(fp, "flags"),
			      json_pack("{s:s,s:s,s:s,s:{s:s}}", "code", "THROTTLE_THERMAL", "severity", "critical",
					"message", "gpu 3 <hot>", "evidence", "why", "</pre><b>x</b>"));
	json_array_append_new(json_object_get(fp, "verdicts"),
			      json_pack("{s:s,s:s,s:s,s:{s:[s]}}", "verdict", "reject", "policy", "default", "at",
					started, "detail", "reasons", "THROTTLE_THERMAL on gpu 3"));
	if (with_soak) {
		json_t *pts = json_array(), *mask = json_array();
		for (int t = 0; t < 120; t++) {
			json_array_append_new(pts, json_pack("[f,f]", (double)t, t < 60 ? 1980.0 : 1600.0));
			json_array_append_new(mask, json_pack("[f,f]", (double)t, t >= 60 ? 32.0 : 0.0));
		}
		json_array_append_new(json_object_get(fp, "samples"),
				      json_pack("{s:s,s:s,s:i,s:o}", "bench", "soak", "series", "soak.sm_clock.mhz",
						"gpu", 0, "points", pts));
		json_array_append_new(json_object_get(fp, "samples"),
				      json_pack("{s:s,s:s,s:i,s:o}", "bench", "soak", "series",
						"soak.clock_events.mask", "gpu", 0, "points", mask));
	}
	return fp;
}

static char *render(const struct report_input *in, int *rc)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	*rc = report_render(in, f);
	fclose(f);
	return buf;
}

/* The text between the first a and the next b after it (malloc'd). */
static char *between(const char *s, const char *a, const char *b)
{
	const char *p = strstr(s, a), *q;
	if (!p)
		return NULL;
	p += strlen(a);
	q = strstr(p, b);
	return q ? strndup(p, (size_t)(q - p)) : NULL;
}

static void test_render_escapes_and_csp(void)
{
	json_t *fps[1] = { fp_make(7, "<script>alert(1)</script>", "2026-11-21T04:00:00Z", 1) };
	struct report_input in = { .fps = fps, .n_fps = 1, .generated_at = "2026-11-21T05:00:00Z" };
	int rc;
	char *out = render(&in, &rc), *script, *csp, want[80];

	CHECK(rc == 0);
	CHECK(strstr(out, "&lt;script&gt;alert(1)&lt;/script&gt;") != NULL);
	CHECK(strstr(out, "<script>alert") == NULL);
	CHECK(count(out, "<script") == 1);          /* only gpuvet's own */
	CHECK(strstr(out, "<b>x</b>") == NULL);     /* evidence escaped */
	CHECK(strstr(out, "gpu 3 &lt;hot&gt;") != NULL);
	CHECK(strstr(out, "style=\"") == NULL);
	CHECK(strstr(out, "http://") == NULL || count(out, "http://") == count(out, "http://www.w3.org/2000/svg"));
	/* the CSP names the exact hash of the inline script and of the stylesheet */
	script = between(out, "<script>", "</script>");
	csp = between(out, "Content-Security-Policy\" content=\"", "\"");
	CHECK(script && csp);
	if (script && csp) {
		sha256_csp_source(script, strlen(script), want, sizeof want);
		CHECK(strstr(csp, want) != NULL);
		CHECK(strstr(csp, "default-src 'none'") != NULL);
		CHECK(strstr(csp, "unsafe-inline") == NULL);
	}
	free(script);
	free(csp);
	/* the soak chart with its thermal shading, the skip reason, the verdict */
	CHECK(strstr(out, "thermal throttling") != NULL);
	CHECK(strstr(out, "fio not found") != NULL);
	CHECK(strstr(out, "badge reject") != NULL);
	CHECK(strstr(out, "Synthetic demo data") != NULL);
	free(out);
	json_decref(fps[0]);
}

static void test_render_detail_rule(void)
{
	json_t *fps[12];
	unsigned char force[12] = { 0 };
	char started[32];
	for (int i = 0; i < 12; i++) {
		snprintf(started, sizeof started, "2026-11-%02dT00:00:00Z", i + 1);
		fps[i] = fp_make(i + 1, i < 10 ? "p5.48xlarge" : "g5.xlarge", started, 0);
	}
	force[0] = 1;   /* the oldest, asked for by --run */
	struct report_input in = { .fps = fps, .n_fps = 12, .detail = force, .generated_at = "x" };
	int rc;
	char *out = render(&in, &rc);
	CHECK(rc == 0);
	/* newest 3 of p5 (10, 9, 8), both g5 (11, 12), and the forced run 1 */
	CHECK(count(out, "<section class=\"run\" id=\"run-") == 6);
	CHECK(strstr(out, "id=\"run-10\"") && strstr(out, "id=\"run-8\"") && strstr(out, "id=\"run-1\""));
	CHECK(strstr(out, "id=\"run-7\"") == NULL);
	/* and every run has its row */
	CHECK(strstr(out, "<td class=n>7</td>") != NULL);
	free(out);

	in.detail = NULL;
	in.detail_max = 2;
	out = render(&in, &rc);
	CHECK(count(out, "<section class=\"run\" id=\"run-") == 2);
	CHECK(strstr(out, "id=\"run-12\"") && strstr(out, "id=\"run-11\""));
	free(out);
	for (int i = 0; i < 12; i++)
		json_decref(fps[i]);
}

static void test_render_ranking_order(void)
{
	json_t *fps[1] = { fp_make(1, "p5.48xlarge", "2026-11-21T04:00:00Z", 0) };
	json_t *rk = json_pack("[{s:s,s:s,s:s,s:s,s:[{s:i,s:s,s:s,s:s,s:s,s:i,s:f,s:f,s:f,s:i,s:[],s:b},"
			       "{s:i,s:s,s:s,s:s,s:s,s:i,s:f,s:f,s:f,s:i,s:[],s:b}]}]",
			       "metric", "gemm.bf16.tflops", "unit", "TFLOP/s", "market", "on_demand", "per", "instance",
			       "rows",
			       "rank", 1, "provider", "lambda", "instance_type", "gpu_8x_h100_sxm5", "region", "us-east-1",
			       "gpu_model", "H100-SXM", "gpu_count", 8, "price_per_hour", 23.92, "value", 5000.0,
			       "value_per_dollar", 209.0, "runs", 0, "flags", "estimate", 1,
			       "rank", 2, "provider", "aws", "instance_type", "p5.48xlarge", "region", "us-east-1",
			       "gpu_model", "H100-SXM", "gpu_count", 8, "price_per_hour", 98.32, "value", 5120.5,
			       "value_per_dollar", 52.1, "runs", 1, "flags", "estimate", 0);
	struct report_input in = { .fps = fps, .n_fps = 1, .rankings = rk, .generated_at = "x" };
	int rc;
	char *out = render(&in, &rc), *table;
	CHECK(rc == 0);
	table = between(out, "id=\"rank\"", "</table>");
	CHECK(table != NULL);
	if (table) {
		char *a = strstr(table, "gpu_8x_h100_sxm5"), *b = strstr(table, "p5.48xlarge");
		CHECK(a && b && a < b);
		CHECK(strstr(table, "(estimate)") != NULL);
	}
	free(table);
	CHECK(strstr(out, "BF16 GEMM per dollar, on-demand prices") != NULL);  /* bar chart, labelled for people */
	free(out);
	json_decref(rk);
	json_decref(fps[0]);
}

/* The fleet's "Rejected for" from runs in memory: each rejected run's standing verdict's first failed check (a
 * flag, else a metric), read from the typed run; an imported verdict is history and an accept no reason. */
static void test_render_reject_reasons(void)
{
	static const char *const fail[4] = { "{\"failed\":[{\"flag\":\"XID\"}]}", "{\"failed\":[{\"metric\":\"gemm.bf16.tflops\"}]}",
					     "{\"failed\":[{\"flag\":\"XID\"}]}", NULL };
	json_t *fps[4];
	char started[32];
	for (int i = 0; i < 4; i++) {
		snprintf(started, sizeof started, "2026-11-%02dT00:00:00Z", i + 1);
		fps[i] = fp_make(i + 1, "p5.48xlarge", started, 0);
		json_t *vs = json_object_get(fps[i], "verdicts");
		json_array_clear(vs);
		json_array_append_new(vs, json_pack("{s:s,s:s,s:s,s:o}", "verdict", fail[i] ? "reject" : "accept", "policy",
						    "default", "at", started, "detail",
						    json_loads(fail[i] ? fail[i] : "{\"failed\":[]}", 0, NULL)));
	}
	/* run 4's newest verdict is an imported reject: history, not its standing, so no reason */
	json_array_append_new(json_object_get(fps[3], "verdicts"),
			      json_pack("{s:s,s:s,s:s,s:b,s:{s:[{s:s}]}}", "verdict", "reject", "policy", "default", "at",
					"2026-11-30T00:00:00Z", "imported", 1, "detail", "failed", "flag", "ECC_ERRORS"));
	struct report_input in = { .fps = fps, .n_fps = 4, .generated_at = "x" };
	int rc;
	char *out = render(&in, &rc), *why = out ? between(out, "<p>Rejected for: ", "</p>") : NULL;
	CHECK(rc == 0);
	CHECK(why != NULL);
	if (why) {
		CHECK(strstr(why, "<code>XID</code> on") != NULL);
		CHECK(strstr(why, "<code>gemm.bf16.tflops</code> on") != NULL);
		CHECK(strstr(why, "ECC_ERRORS") == NULL && strstr(why, "<code>?</code>") == NULL);
		CHECK(strstr(why, "XID</code> on <a") != NULL && strstr(why, ">2 runs<") != NULL);
	}
	free(why);
	free(out);
	for (int i = 0; i < 4; i++)
		json_decref(fps[i]);
}

static void test_render_write_error(void)
{
	json_t *fps[1] = { fp_make(1, "x", "2026-11-21T04:00:00Z", 1) };
	struct report_input in = { .fps = fps, .n_fps = 1, .generated_at = "x" };
	FILE *f = fopen("/dev/full", "w");
	CHECK(f != NULL);
	if (f) {
		setvbuf(f, NULL, _IONBF, 0);
		CHECK(report_render(&in, f) == -1);
		fclose(f);
	}
	json_decref(fps[0]);
}

/* ---- from a real store ---- */

static char *write_store(struct store *st, const struct report_opts *o, int *rc)
{
	char *buf = NULL, err[256] = "";
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	*rc = report_write(st, o, f, err, sizeof err);
	fclose(f);
	if (*rc)
		fprintf(stderr, "report_write: %s\n", err);
	return buf;
}

static size_t files_starting(const char *dir, const char *prefix)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	size_t n = 0;
	while (d && (e = readdir(d)))
		n += !strncmp(e->d_name, prefix, strlen(prefix));
	if (d)
		closedir(d);
	return n;
}

static void test_report_write_store(void)
{
	const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	char *db = gv_asprintf("%s/test_html_%d.db", tmp, (int)getpid()), *out, *path, err[256];
	struct store *st = NULL;
	int64_t ids[6];
	int rc;

	CHECK(store_open(db, &st) == STORE_OK);
	if (!st) {
		free(db);
		return;
	}
	for (int i = 0; i < 6; i++) {
		char started[32], uuid[40];
		snprintf(started, sizeof started, "2026-11-%02dT00:00:00Z", i + 1);
		json_t *fp = fp_make(0, i % 2 ? "g5.xlarge" : "p5.48xlarge", started, 1);
		snprintf(uuid, sizeof uuid, "00000000-0000-4000-8000-%012d", i);
		json_object_set_new(json_object_get(fp, "run"), "uuid", json_string(uuid));
		json_object_del(json_object_get(fp, "run"), "id");
		CHECK(store_import_fingerprint(st, fp, &ids[i]) == STORE_OK);
		json_decref(fp);
	}
	/* a price, so there is a ranking (rank_compute runs on this connection and on workers' own) */
	CHECK(sqlite3_exec(store_db(st), "INSERT INTO prices (provider, instance_type, region, market, price, unit,"
					  " currency, source, captured_at) VALUES ('aws', 'p5.48xlarge', 'us-east-1',"
					  " 'on_demand', 55.04, 'hour', 'USD', 'unit test', '2026-11-20')",
			   NULL, NULL, NULL) == SQLITE_OK);
	/* every run: rows for all six, detail loaded from the store, charts for the newest of each type */
	struct report_opts o = { 0 };
	out = write_store(st, &o, &rc);
	CHECK(rc == 0);
	CHECK(strstr(out, "<table class=\"sortable\" id=\"rank\">") != NULL);
	CHECK(strstr(out, "No ranking") == NULL);
	CHECK(strstr(out, "unit test, captured 2026-11-20") != NULL);     /* the price's source and date in its row */
	CHECK(count(out, "<section class=\"run\" id=\"run-") == 6);
	CHECK(count(out, "aria-label=\"Soak: SM clock") == 2);
	CHECK(strstr(out, "THROTTLE_THERMAL") != NULL);
	free(out);

	/* a size budget already spent: no detail, a note saying how many were left out */
	o.budget_bytes = 1;
	out = write_store(st, &o, &rc);
	CHECK(rc == 0);
	CHECK(count(out, "<section class=\"run\" id=\"run-") == 0);
	CHECK(strstr(out, "6 more runs left out of the detail") != NULL);
	free(out);

	/* --run: only that run, detailed whatever the budget */
	o.run_ids = &ids[1];
	o.n_run_ids = 1;
	out = write_store(st, &o, &rc);
	CHECK(rc == 0);
	CHECK(count(out, "<section class=\"run\" id=\"run-") == 1);
	CHECK(strstr(out, "1 of the store&#39;s 6 runs") != NULL || strstr(out, "1 of the store's 6 runs") != NULL);
	free(out);

	/* into a file: temp + rename; a failure leaves the earlier file and no temporary */
	path = gv_asprintf("%s/test_html_%d.html", tmp, (int)getpid());
	CHECK(report_write_file(st, NULL, path, err, sizeof err) == 0);
	{
		size_t len = 0;
		char *text = gv_read_file(path, &len);
		CHECK(text && !strncmp(text, "<!DOCTYPE html>", 15));
		free(text);
	}
	FILE *old = fopen(path, "w");
	if (old) {
		fputs("old", old);
		fclose(old);
	}
	int64_t missing = 9999;
	struct report_opts bad = { .run_ids = &missing, .n_run_ids = 1 };
	CHECK(report_write_file(st, &bad, path, err, sizeof err) == -1);
	CHECK(strstr(err, "not found") != NULL);
	{
		size_t len = 0;
		char *text = gv_read_file(path, &len);
		CHECK(text && !strcmp(text, "old"));
		free(text);
	}
	{
		char prefix[64];
		snprintf(prefix, sizeof prefix, "test_html_%d.html", (int)getpid());
		CHECK(files_starting(tmp, prefix) == 1);
	}
	CHECK(report_write_file(st, NULL, "/nonexistent-dir/x.html", err, sizeof err) == -1);
	CHECK(strstr(err, "/nonexistent-dir/x.html") != NULL);
	unlink(path);
	free(path);
	store_close(st);
	{
		char *w = gv_asprintf("%s-wal", db), *sh = gv_asprintf("%s-shm", db);
		unlink(db);
		unlink(w);
		unlink(sh);
		free(w);
		free(sh);
	}
	free(db);
}

TEST_MAIN(T(test_escape_text), T(test_escape_invalid_utf8_and_controls), T(test_escape_json),
	  T(test_utf8_len), T(test_sha256_vectors), T(test_svg_helpers), T(test_svg_refs_and_log_axis), T(test_svg_line_chart), T(test_svg_bar_chart),
	  T(test_render_escapes_and_csp), T(test_render_detail_rule), T(test_render_ranking_order),
	  T(test_render_write_error), T(test_render_reject_reasons), T(test_report_write_store))
