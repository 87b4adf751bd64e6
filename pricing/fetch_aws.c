/*
 * fetch_aws.c - AWS EC2 prices from the public bulk price list.
 *
 * The per-region offer file
 *   https://pricing.us-east-1.amazonaws.com/offers/v1.0/aws/AmazonEC2/current/REGION/index.csv
 * starts with five "key","value" lines (FormatVersion, Disclaimer,
 * Publication Date, Version, OfferCode), then the header, then one row per
 * SKU and term: several GB for us-east-1.  It is streamed from libcurl's
 * write callback through csvrows (libcsv) row by row; columns are found by
 * header name.  Lines without "GPU instance" (the Instance Family of every
 * GPU SKU) are skipped before libcsv sees them.  Kept: TermType OnDemand,
 * Operating System Linux, Tenancy Shared, Pre Installed S/W NA,
 * CapacityStatus Used, License Model "No License required", Unit Hrs,
 * for the NVIDIA GPU families below.
 */
#include "pricing/csvrows.h"
#include "pricing/fetch.h"
#include "runners/util.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* NVIDIA GPU families: instance type prefix -> reference GPU key (pricing/gpus.h) */
static const struct {
	const char *prefix;
	const char *gpu;
} families[] = {
	{ "p6-b200.", "B200" },     { "p5en.", "H200-SXM" },     { "p5e.", "H200-SXM" },
	{ "p5.", "H100-SXM" },      { "p4de.", "A100-80-SXM" },  { "p4d.", "A100-40-SXM" },
	{ "p3dn.", "V100-32-SXM" }, { "p3.", "V100-16-SXM" },    { "g6e.", "L40S" },
	{ "g6.", "L4" },            { "gr6.", "L4" },            { "g5.", "A10G" },
	{ "g4dn.", "T4" },
};

const char *aws_gpu_family(const char *instance_type, double *gpus)
{
	(void)gpus;
	for (size_t i = 0; i < sizeof families / sizeof families[0]; i++)
		if (!strncmp(instance_type, families[i].prefix, strlen(families[i].prefix)))
			return families[i].gpu;
	return NULL;
}

enum acol {
	A_TERMTYPE, A_PRICE, A_CURRENCY, A_UNIT, A_ITYPE, A_OS, A_TENANCY, A_PREINST, A_CAPSTATUS,
	A_LICENSE, A_PRODFAMILY, A_REGIONCODE, A_VCPU, A_MEMORY, A_GPU, A_IFAMILY, A_COUNT
};

static const struct {
	const char *name;
	int required;
} acols[A_COUNT] = {
	[A_TERMTYPE] = { "TermType", 1 },
	[A_PRICE] = { "PricePerUnit", 1 },
	[A_CURRENCY] = { "Currency", 1 },
	[A_UNIT] = { "Unit", 1 },
	[A_ITYPE] = { "Instance Type", 1 },
	[A_OS] = { "Operating System", 1 },
	[A_TENANCY] = { "Tenancy", 1 },
	[A_PREINST] = { "Pre Installed S/W", 0 },
	[A_CAPSTATUS] = { "CapacityStatus", 0 },
	[A_LICENSE] = { "License Model", 0 },
	[A_PRODFAMILY] = { "Product Family", 0 },
	[A_REGIONCODE] = { "Region Code", 0 },
	[A_VCPU] = { "vCPU", 0 },
	[A_MEMORY] = { "Memory", 0 },
	[A_GPU] = { "GPU", 0 },
	[A_IFAMILY] = { "Instance Family", 0 },
};

struct aws_parser {
	struct csvrows *rows;
	char region[64];
	price_emit_fn emit;
	void *ud;
	int have_header;
	size_t nheader;
	int map[A_COUNT];
	char version[64];
	char published[32];
	char offer[32];
	long emitted;
	int failed;
	char err[512];
};

static void afail(struct aws_parser *p, long line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void afail(struct aws_parser *p, long line, const char *fmt, ...)
{
	char msg[384];
	va_list ap;
	if (p->failed)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	p->failed = 1;
	snprintf(p->err, sizeof p->err, "aws price list line %ld: %s", line, msg);
}

static int eq(const char *a, const char *b) { return !strcmp(a, b); }

/* "col must equal want" when the column exists */
static int col_is(struct aws_parser *p, char **f, enum acol c, const char *want)
{
	return p->map[c] < 0 || eq(f[p->map[c]], want);
}

static double leading_number(const char *s)
{
	char *end;
	while (*s == ' ')
		s++;
	if (!isdigit((unsigned char)*s))
		return NAN;
	double v = strtod(s, &end);
	return end == s ? NAN : v;
}

static int header(struct aws_parser *p, char **f, size_t n, long line)
{
	for (int c = 0; c < A_COUNT; c++)
		p->map[c] = -1;
	for (size_t i = 0; i < n; i++)
		for (int c = 0; c < A_COUNT; c++)
			if (p->map[c] < 0 && eq(f[i], acols[c].name))
				p->map[c] = (int)i;
	for (int c = 0; c < A_COUNT; c++)
		if (acols[c].required && p->map[c] < 0) {
			afail(p, line, "missing column '%s' in the header", acols[c].name);
			return -1;
		}
	if (p->offer[0] && !eq(p->offer, "AmazonEC2")) {
		afail(p, line, "offer '%s' is not AmazonEC2", p->offer);
		return -1;
	}
	p->nheader = n;
	p->have_header = 1;
	/* every NVIDIA GPU SKU has Instance Family "GPU instance": skip the rest unparsed */
	if (p->map[A_IFAMILY] >= 0)
		csvrows_set_prefilter(p->rows, "GPU instance");
	return 0;
}

static int on_row(void *ud, char **f, const size_t *lens, size_t n, long line)
{
	struct aws_parser *p = ud;
	(void)lens;
	if (p->failed)
		return -1;
	if (!p->have_header) {
		if (n == 2) { /* preamble: "key","value" */
			if (eq(f[0], "Version"))
				gv_strlcpy(p->version, f[1], sizeof p->version);
			else if (eq(f[0], "Publication Date"))
				gv_strlcpy(p->published, f[1], sizeof p->published);
			else if (eq(f[0], "OfferCode"))
				gv_strlcpy(p->offer, f[1], sizeof p->offer);
			return 0;
		}
		if (line > 16) {
			afail(p, line, "no header row in the first lines (not an AWS price list CSV)");
			return -1;
		}
		return header(p, f, n, line);
	}
	if (n != p->nheader) {
		afail(p, line, "expected %zu fields as in the header, found %zu (truncated or corrupt)",
		      p->nheader, n);
		return -1;
	}
	if (!eq(f[p->map[A_TERMTYPE]], "OnDemand") || !eq(f[p->map[A_OS]], "Linux") ||
	    !eq(f[p->map[A_TENANCY]], "Shared") || !col_is(p, f, A_PREINST, "NA") ||
	    !col_is(p, f, A_CAPSTATUS, "Used") || !col_is(p, f, A_LICENSE, "No License required") ||
	    !col_is(p, f, A_PRODFAMILY, "Compute Instance"))
		return 0;
	const char *itype = f[p->map[A_ITYPE]];
	const char *gpu = aws_gpu_family(itype, NULL);
	if (!gpu)
		return 0;
	if (!eq(f[p->map[A_UNIT]], "Hrs")) {
		afail(p, line, "%s: unit '%s' where Hrs was expected", itype, f[p->map[A_UNIT]]);
		return -1;
	}
	double price;
	if (gv_parse_double(f[p->map[A_PRICE]], &price) < 0) {
		afail(p, line, "%s: price '%s' is not a number", itype, f[p->map[A_PRICE]]);
		return -1;
	}
	if (price < 0) {
		afail(p, line, "%s: price '%s' is negative", itype, f[p->map[A_PRICE]]);
		return -1;
	}
	if (price == 0)
		return 0; /* AWS lists $0.00 placeholder rows; not a price */

	struct price_rec r;
	char err[320];
	price_rec_init(&r);
	gv_strlcpy(r.provider, "aws", sizeof r.provider);
	if (gv_strlcpy(r.instance_type, itype, sizeof r.instance_type) >= sizeof r.instance_type) {
		afail(p, line, "instance type too long");
		return -1;
	}
	const char *region = p->map[A_REGIONCODE] >= 0 && f[p->map[A_REGIONCODE]][0] ?
				     f[p->map[A_REGIONCODE]] : p->region;
	gv_strlcpy(r.region, region, sizeof r.region);
	gv_strlcpy(r.gpu_model, gpu, sizeof r.gpu_model);
	if (p->map[A_GPU] >= 0)
		r.gpu_count = leading_number(f[p->map[A_GPU]]);
	if (p->map[A_VCPU] >= 0) {
		double v = leading_number(f[p->map[A_VCPU]]);
		if (!isnan(v))
			r.vcpus = (long)v;
	}
	if (p->map[A_MEMORY] >= 0)
		r.memory_gib = leading_number(f[p->map[A_MEMORY]]);
	gv_strlcpy(r.market, "on_demand", sizeof r.market);
	r.price = price;
	gv_strlcpy(r.unit, "hour", sizeof r.unit);
	gv_strlcpy(r.currency, f[p->map[A_CURRENCY]], sizeof r.currency);
	snprintf(r.source, sizeof r.source, "aws-bulk:%s", p->region);
	gv_strlcpy(r.source_version, p->version, sizeof r.source_version);
	if (p->published[0])
		gv_strlcpy(r.captured_at, p->published, sizeof r.captured_at);
	else
		gv_iso8601((long)time(NULL), r.captured_at, sizeof r.captured_at);
	if (p->emit(p->ud, &r, err, sizeof err) != 0) {
		afail(p, line, "%s: %s", itype, err);
		return -1;
	}
	p->emitted++;
	return 0;
}

struct aws_parser *aws_parser_new(const char *region, price_emit_fn emit, void *ud)
{
	struct aws_parser *p = gv_calloc(1, sizeof *p);
	p->rows = csvrows_new(on_row, p);
	if (!p->rows) {
		free(p);
		return NULL;
	}
	gv_strlcpy(p->region, region ? region : "", sizeof p->region);
	p->emit = emit;
	p->ud = ud;
	return p;
}

void aws_parser_free(struct aws_parser *p)
{
	if (!p)
		return;
	csvrows_free(p->rows);
	free(p);
}

static void take_csv_error(struct aws_parser *p)
{
	if (!p->failed) {
		p->failed = 1;
		snprintf(p->err, sizeof p->err, "aws price list %s", csvrows_error(p->rows));
	}
}

int aws_parser_feed(struct aws_parser *p, const void *buf, size_t len)
{
	if (p->failed)
		return -1;
	if (csvrows_feed(p->rows, buf, len) < 0) {
		take_csv_error(p);
		return -1;
	}
	return 0;
}

int aws_parser_finish(struct aws_parser *p)
{
	if (p->failed)
		return -1;
	if (csvrows_finish(p->rows) < 0) {
		take_csv_error(p);
		return -1;
	}
	if (!p->have_header) {
		snprintf(p->err, sizeof p->err, "aws price list: no header row (empty or not a price list)");
		p->failed = 1;
		return -1;
	}
	return 0;
}

const char *aws_parser_error(const struct aws_parser *p) { return p->failed ? p->err : ""; }

void aws_parser_stats(const struct aws_parser *p, long *emitted, long *lines, long *skipped)
{
	if (emitted)
		*emitted = p->emitted;
	if (lines)
		*lines = csvrows_lines(p->rows);
	if (skipped)
		*skipped = csvrows_skipped(p->rows);
}

/* ---- the fetch ---- */

struct aws_fetch {
	struct catalog_load *load;
	struct aws_parser *p;
	char *err;
	size_t errlen;
};

static int aws_emit(void *ud, const struct price_rec *r, char *err, size_t errlen)
{
	struct aws_fetch *a = ud;
	return catalog_load_put(a->load, r, err, errlen);
}

static int aws_data(void *ud, const char *buf, size_t len)
{
	struct aws_fetch *a = ud;
	if (aws_parser_feed(a->p, buf, len) < 0) {
		snprintf(a->err, a->errlen, "%s", aws_parser_error(a->p));
		return -1;
	}
	return 0;
}

/* "{region}" in the template is replaced by the region */
static char *expand_url(const char *tmpl, const char *region)
{
	const char *at = strstr(tmpl, "{region}");
	if (!at)
		return gv_strdup(tmpl);
	return gv_asprintf("%.*s%s%s", (int)(at - tmpl), tmpl, region, at + strlen("{region}"));
}

int fetch_aws(sqlite3 *db, const char *region, long *rows, char *err, size_t errlen)
{
	struct aws_fetch a = { .err = err, .errlen = errlen };
	const char *tmpl = getenv("GPUVET_AWS_PRICING_URL");
	char source[96];
	if (!region || !*region)
		region = "us-east-1";
	for (const char *c = region; *c; c++)
		if (!(islower((unsigned char)*c) || isdigit((unsigned char)*c) || *c == '-')) {
			snprintf(err, errlen, "region '%s' is not an AWS region name", region);
			return -1;
		}
	if (!tmpl || !*tmpl)
		tmpl = "https://pricing.us-east-1.amazonaws.com/offers/v1.0/aws/AmazonEC2/current/{region}/index.csv";
	char *url = expand_url(tmpl, region);
	snprintf(source, sizeof source, "aws-bulk:%s", region);
	err[0] = '\0';
	if (catalog_load_begin(db, &a.load, err, errlen) < 0) {
		free(url);
		return -1;
	}
	a.p = aws_parser_new(region, aws_emit, &a);
	struct fetch_req req = { .url = url, .on_data = aws_data, .ud = &a };
	int rc = fetch_run(&req, NULL, err, errlen);
	if (rc == 0 && aws_parser_finish(a.p) < 0) {
		snprintf(err, errlen, "%s", aws_parser_error(a.p));
		rc = -1;
	}
	if (rc == 0 && catalog_load_rows(a.load) == 0) {
		snprintf(err, errlen, "aws price list from %s has no on-demand Linux GPU instance prices", url);
		rc = -1;
	}
	long n = catalog_load_rows(a.load);
	aws_parser_free(a.p);
	if (rc < 0) {
		catalog_load_abort(a.load);
		catalog_note_failure(db, source, "aws", err);
	} else {
		char msg[160];
		snprintf(msg, sizeof msg, "%s", url);
		rc = catalog_load_commit(a.load, "aws", msg, err, errlen);
		if (rc == 0 && rows)
			*rows = n;
	}
	free(url);
	return rc;
}
