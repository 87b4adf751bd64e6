/*
 * fetch_aws.c - AWS EC2 prices from the public bulk price list.
 *
 * The per-region offer file
 *   https://pricing.us-east-1.amazonaws.com/offers/v1.0/aws/AmazonEC2/current/REGION/index.csv
 * starts with five "key","value" lines (FormatVersion, Disclaimer,
 * Publication Date, Version, OfferCode), then the header, then one row per
 * SKU and term: several GB for us-east-1.  It is streamed from libcurl's
 * write callback through csvrows (libcsv) row by row; columns are found by
 * header name.  Kept: TermType OnDemand, Operating System Linux, Tenancy
 * Shared, Pre Installed S/W NA, CapacityStatus Used, License Model "No
 * License required", Product Family "Compute Instance", Instance Family
 * "GPU instance", Unit Hrs, for the NVIDIA GPU families below.  Lines that
 * cannot pass are skipped before libcsv sees them: those without the
 * strings "GPU instance", "Linux" and "Shared", then (csvrows' field
 * prefilters) those whose filter columns plainly hold another value.  The
 * prefilters only ever skip lines the exact filter would drop, so the
 * prices are the same with them off (fuzz_aws_csv checks exactly that).
 */
#include "pricing/csvrows.h"
#include "pricing/fetch.h"
#include "common/util.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* NVIDIA GPU families: instance type prefix -> reference GPU key (common/gpus.h) */
static const struct {
	const char *prefix;
	const char *gpu;
} families[] = {
	{ "p6-b200.", "B200" },     { "p5en.", "H200" },     { "p5e.", "H200" },
	{ "p5.", "H100-SXM" },      { "p4de.", "A100-80-SXM" },  { "p4d.", "A100-40-SXM" },
	{ "p3dn.", "V100-SXM2-32" }, { "p3.", "V100-SXM2-16" },    { "g6e.", "L40S" },
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
	int no_prefilter;
	int failed;
	char err[512];
};

static void afail(struct aws_parser *p, long line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void afail(struct aws_parser *p, long line, const char *fmt, ...)
{
	char where[64];
	va_list ap;
	snprintf(where, sizeof where, "aws price list line %ld", line);
	va_start(ap, fmt);
	csvrows_first_error(&p->failed, p->err, sizeof p->err, where, fmt, ap);
	va_end(ap);
}

static int eq(const char *a, const char *b) { return !strcmp(a, b); }

/* Field i is exactly want, byte for byte: a NUL inside the field is a difference, as in the prefilter. */
static int field_is(char **f, const size_t *lens, int i, const char *want)
{
	return lens[i] == strlen(want) && !memcmp(f[i], want, lens[i]);
}

/* "col must equal want" when the column exists */
static int col_is(struct aws_parser *p, char **f, const size_t *lens, enum acol c, const char *want)
{
	return p->map[c] < 0 || field_is(f, lens, p->map[c], want);
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

/* the columns a kept row must hold exactly these values in (on_row's filter) */
static const struct {
	enum acol col;
	const char *value;
} exact[] = {
	{ A_TERMTYPE, "OnDemand" },    { A_OS, "Linux" },     { A_TENANCY, "Shared" },
	{ A_PREINST, "NA" },           { A_CAPSTATUS, "Used" }, { A_LICENSE, "No License required" },
	{ A_PRODFAMILY, "Compute Instance" },
};

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
	if (p->no_prefilter)
		return 0;
	/* every NVIDIA GPU SKU has Instance Family "GPU instance": skip the rest unparsed */
	if (p->map[A_IFAMILY] >= 0) {
		/* a kept row holds all three values; the first is the rare one (span skipping) */
		csvrows_set_prefilter(p->rows, "GPU instance");
		csvrows_add_prefilter(p->rows, "Linux");
		csvrows_add_prefilter(p->rows, "Shared");
	}
	/* then the exact values on_row demands, read from the line where it is plain:
	 * most GPU rows that pass the needles are Reserved terms or other variants */
	for (size_t i = 0; i < sizeof exact / sizeof exact[0]; i++)
		if (p->map[exact[i].col] >= 0)
			csvrows_add_field_prefilter(p->rows, (size_t)p->map[exact[i].col], exact[i].value);
	return 0;
}

static int on_row(void *ud, char **f, const size_t *lens, size_t n, long line)
{
	struct aws_parser *p = ud;
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
	if (!field_is(f, lens, p->map[A_TERMTYPE], "OnDemand") || !field_is(f, lens, p->map[A_OS], "Linux") ||
	    !field_is(f, lens, p->map[A_TENANCY], "Shared") || !col_is(p, f, lens, A_PREINST, "NA") ||
	    !col_is(p, f, lens, A_CAPSTATUS, "Used") || !col_is(p, f, lens, A_LICENSE, "No License required") ||
	    !col_is(p, f, lens, A_PRODFAMILY, "Compute Instance") || !col_is(p, f, lens, A_IFAMILY, "GPU instance"))
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
	if (!isnan(r.gpu_count) && (r.gpu_count < 1 || r.gpu_count > PRICE_MAX_GPUS))
		return 0; /* a share of a GPU (g6f) is not an instance type gpuvet ranks */
	if (p->map[A_VCPU] >= 0) {
		double v = leading_number(f[p->map[A_VCPU]]);
		if (v >= 0 && v < 1e6)      /* as the Lambda fetcher: a feed's number is untrusted */
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

void aws_parser_set_prefilter(struct aws_parser *p, int on) { p->no_prefilter = !on; }

void aws_parser_free(struct aws_parser *p)
{
	if (!p)
		return;
	csvrows_free(p->rows);
	free(p);
}

int aws_parser_feed(struct aws_parser *p, const void *buf, size_t len)
{
	return csvrows_step(p->rows, buf, len, &p->failed, p->err, sizeof p->err, "aws price list", NULL);
}

int aws_parser_finish(struct aws_parser *p)
{
	if (csvrows_step(p->rows, NULL, 0, &p->failed, p->err, sizeof p->err, "aws price list", NULL) < 0)
		return -1;
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
		char shown[1024];
		snprintf(err, errlen, "aws price list from %s has no on-demand Linux GPU instance prices",
			 gv_redact(url, shown, sizeof shown));
		rc = -1;
	}
	long n = catalog_load_rows(a.load);
	aws_parser_free(a.p);
	if (rc < 0) {
		catalog_load_abort(a.load);
		catalog_note_failure(db, source, "aws", err);
	} else {
		char msg[160];
		gv_redact(url, msg, sizeof msg);
		rc = catalog_load_commit(a.load, "aws", msg, err, errlen);
		if (rc == 0 && rows)
			*rows = n;
	}
	free(url);
	return rc;
}

/* ---- spot: DescribeSpotPriceHistory ---- */

/* Text of the first <tag>..</tag> in [s, end), unescaped of nothing (EC2 values are plain); -1 if absent */
static int xml_text(const char *s, const char *end, const char *tag, char *out, size_t size)
{
	char open[48], close[48];
	snprintf(open, sizeof open, "<%s>", tag);
	snprintf(close, sizeof close, "</%s>", tag);
	const char *a = memmem(s, (size_t)(end - s), open, strlen(open));
	if (!a)
		return -1;
	a += strlen(open);
	const char *b = memmem(a, (size_t)(end - a), close, strlen(close));
	if (!b || (size_t)(b - a) >= size)
		return -1;
	memcpy(out, a, (size_t)(b - a));
	out[b - a] = '\0';
	return 0;
}

int aws_spot_parse(const char *xml, size_t len, price_emit_fn emit, void *ud, char *next_token,
		   size_t next_size, char *err, size_t errlen)
{
	const char *end = xml + len;
	const char *set = memmem(xml, len, "<spotPriceHistorySet", 20);
	if (next_token && next_size)
		next_token[0] = '\0';
	if (!set) {
		char code[96] = "", msg[200] = "";
		xml_text(xml, end, "Code", code, sizeof code);
		xml_text(xml, end, "Message", msg, sizeof msg);
		snprintf(err, errlen, "ec2 answer has no spotPriceHistorySet%s%s%s%s", code[0] ? ": " : "", code,
			 msg[0] ? ": " : "", msg);
		return -1;
	}
	const char *set_end = memmem(set, (size_t)(end - set), "</spotPriceHistorySet>", 22);
	if (!set_end) {
		snprintf(err, errlen, "ec2 answer is truncated (no </spotPriceHistorySet>)");
		return -1;
	}
	const char *p = set;
	for (;;) {
		const char *it = memmem(p, (size_t)(set_end - p), "<item>", 6);
		if (!it)
			break;
		const char *it_end = memmem(it, (size_t)(set_end - it), "</item>", 7);
		if (!it_end) {
			snprintf(err, errlen, "ec2 answer has an unterminated <item>");
			return -1;
		}
		char itype[96], az[64], price[64], ts[40], desc[64];
		if (xml_text(it, it_end, "instanceType", itype, sizeof itype) < 0 ||
		    xml_text(it, it_end, "availabilityZone", az, sizeof az) < 0 ||
		    xml_text(it, it_end, "spotPrice", price, sizeof price) < 0 ||
		    xml_text(it, it_end, "timestamp", ts, sizeof ts) < 0) {
			snprintf(err, errlen, "ec2 answer: an item lacks instanceType, availabilityZone, spotPrice or timestamp");
			return -1;
		}
		p = it_end + 7;
		if (xml_text(it, it_end, "productDescription", desc, sizeof desc) == 0 && strncmp(desc, "Linux/UNIX", 10))
			continue;
		double v;
		const char *gpu = aws_gpu_family(itype, NULL);
		if (!gpu)
			continue;
		if (gv_parse_double(price, &v) < 0 || v < 0) {
			snprintf(err, errlen, "ec2 answer: %s spot price '%s' is not a non-negative number", itype, price);
			return -1;
		}
		struct price_rec r;
		char e2[256];
		price_rec_init(&r);
		gv_strlcpy(r.provider, "aws", sizeof r.provider);
		gv_strlcpy(r.instance_type, itype, sizeof r.instance_type);
		gv_strlcpy(r.zone, az, sizeof r.zone);
		/* the region is the zone without its letter */
		gv_strlcpy(r.region, az, sizeof r.region);
		size_t rl = strlen(r.region);
		while (rl && r.region[rl - 1] >= 'a' && r.region[rl - 1] <= 'z' && rl > 1 && r.region[rl - 2] >= '0' &&
		       r.region[rl - 2] <= '9')
			r.region[--rl] = '\0';
		gv_strlcpy(r.gpu_model, gpu, sizeof r.gpu_model);
		gv_strlcpy(r.market, "spot", sizeof r.market);
		r.price = v;
		gv_strlcpy(r.unit, "hour", sizeof r.unit);
		gv_strlcpy(r.currency, "USD", sizeof r.currency);
		gv_strlcpy(r.source_version, "2016-11-15", sizeof r.source_version);
		gv_strlcpy(r.captured_at, ts, sizeof r.captured_at);
		if (emit(ud, &r, e2, sizeof e2) != 0) {
			snprintf(err, errlen, "%s %s: %s", itype, az, e2);
			return -1;
		}
	}
	if (next_token && next_size)
		xml_text(set_end, end, "nextToken", next_token, next_size);
	return 0;
}

struct spot_ctx {
	struct catalog_load *load;
	const char *source;
	char (*seen)[160];
	size_t nseen;
};

static int spot_emit(void *ud, const struct price_rec *r, char *err, size_t errlen)
{
	struct spot_ctx *c = ud;
	char key[160];
	snprintf(key, sizeof key, "%s/%s", r->instance_type, r->zone);
	/* newest first: keep the first price of each type and zone */
	for (size_t i = 0; i < c->nseen; i++)
		if (!strcmp(c->seen[i], key))
			return 0;
	c->seen = gv_realloc(c->seen, (c->nseen + 1) * sizeof *c->seen);
	gv_strlcpy(c->seen[c->nseen++], key, sizeof *c->seen);
	struct price_rec copy = *r;
	gv_strlcpy(copy.source, c->source, sizeof copy.source);
	return catalog_load_put(c->load, &copy, err, errlen);
}

/* RFC 3986 encoding of a query value */
static char *qenc(const char *s)
{
	static const char hex[] = "0123456789ABCDEF";
	char *o = gv_malloc(strlen(s) * 3 + 1), *q = o;
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
			*q++ = (char)c;
		} else {
			*q++ = '%';
			*q++ = hex[c >> 4];
			*q++ = hex[c & 15];
		}
	}
	*q = '\0';
	return o;
}

/* "&InstanceType.1=p5.48xlarge&..." for every AWS GPU type the store knows; their count into *n, NULL on error. */
static char *spot_type_params(sqlite3 *db, int *n, char *err, size_t errlen)
{
	char *types = gv_strdup("");
	size_t tlen = 0;
	struct catalog_sku *known = NULL;
	size_t nknown = 0;
	*n = 0;
	if (catalog_skus(db, "aws", &known, &nknown, err, errlen) < 0) {
		free(types);
		return NULL;
	}
	for (size_t i = 0; i < nknown; i++) {
		const char *t = known[i].instance_type;
		if (!aws_gpu_family(t, NULL))
			continue;
		char *e = qenc(t);
		char *piece = gv_asprintf("&InstanceType.%d=%s", ++*n, e);
		free(e);
		types = gv_realloc(types, tlen + strlen(piece) + 1);
		memcpy(types + tlen, piece, strlen(piece) + 1);
		tlen += strlen(piece);
		free(piece);
	}
	catalog_skus_free(known, nknown);
	return types;
}

int fetch_aws_spot(sqlite3 *db, const char *region, long *rows, char *err, size_t errlen)
{
	const char *id = getenv("AWS_ACCESS_KEY_ID"), *secret = getenv("AWS_SECRET_ACCESS_KEY");
	const char *token = getenv("AWS_SESSION_TOKEN"), *endpoint = getenv("GPUVET_AWS_EC2_URL");
	char source[96], sigv4[96], ep[160], now[32], next[2048] = "";
	struct spot_ctx c = { 0 };
	char *types = NULL, *userpwd = NULL, *tokhdr = NULL;
	int n = 0, rc = -1, pages = 0;

	if (!region || !*region)
		region = "us-east-1";
	if (!id || !*id || !secret || !*secret) {
		snprintf(err, errlen, "no aws credentials: spot prices need AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY");
		return -1;
	}
	for (const char *ch = region; *ch; ch++)
		if (!(islower((unsigned char)*ch) || isdigit((unsigned char)*ch) || *ch == '-')) {
			snprintf(err, errlen, "region '%s' is not an AWS region name", region);
			return -1;
		}
	if (!endpoint || !*endpoint) {
		snprintf(ep, sizeof ep, "https://ec2.%s.amazonaws.com/", region);
		endpoint = ep;
	}
	snprintf(source, sizeof source, "aws-spot:%s", region);
	snprintf(sigv4, sizeof sigv4, "aws:amz:%s:ec2", region);
	err[0] = '\0';

	types = spot_type_params(db, &n, err, errlen);
	if (!types)
		return -1;
	if (!n) {
		snprintf(err, errlen, "no aws gpu instance types known to ask spot prices for");
		goto out;
	}
	userpwd = gv_asprintf("%s:%s", id, secret);
	if (token && *token)
		tokhdr = gv_asprintf("X-Amz-Security-Token: %s", token);
	const char *hdrs[] = { tokhdr, NULL };
	gv_iso8601((long)time(NULL), now, sizeof now);
	char *enow = qenc(now);
	if (catalog_load_begin(db, &c.load, err, errlen) < 0) {
		free(enow);
		goto out;
	}
	c.source = source;
	do {
		char *enext = qenc(next);
		char *url = gv_asprintf("%s?Action=DescribeSpotPriceHistory&Version=2016-11-15"
					"&ProductDescription.1=Linux%%2FUNIX&StartTime=%s&MaxResults=1000%s%s%s",
					endpoint, enow, types, next[0] ? "&NextToken=" : "", enext);
		free(enext);
		struct fetch_req req = { .headers = tokhdr ? hdrs : NULL, .aws_sigv4 = sigv4, .userpwd = userpwd };
		char *body = NULL;
		size_t len = 0;
		int frc = fetch_small_req(&req, url, 8u << 20, &body, &len, NULL, err, errlen);
		free(url);
		if (frc < 0) {
			free(enow);
			goto out;
		}
		frc = aws_spot_parse(body, len, spot_emit, &c, next, sizeof next, err, errlen);
		free(body);
		if (frc < 0) {
			free(enow);
			goto out;
		}
	} while (next[0] && ++pages < 100);
	free(enow);
	if (catalog_load_rows(c.load) == 0) {
		snprintf(err, errlen, "ec2 returned no Linux spot prices for the %d gpu types in %s", n, region);
		goto out;
	}
	long got = catalog_load_rows(c.load);
	rc = catalog_load_commit(c.load, "aws", endpoint, err, errlen);
	c.load = NULL;
	if (rc == 0 && rows)
		*rows = got;
out:
	if (c.load) {
		catalog_load_abort(c.load);
		catalog_note_failure(db, source, "aws", err);
	}
	free(c.seen);
	free(types);
	free(userpwd);
	free(tokhdr);
	return rc;
}
