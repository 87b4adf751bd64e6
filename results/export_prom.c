/*
 * export_prom.c - Prometheus text exposition (node-exporter textfile
 * collector) of the latest run of each host; see export_prom.h.
 *
 * Families (all gauges, labels in braces):
 *   gpuvet_run_info{host,uuid,provider,instance_type,region,gpu_model,gpu_count,profile,status,version} 1
 *   gpuvet_run_start_time_seconds{host}, gpuvet_run_end_time_seconds{host}   unix time
 *   gpuvet_<metric>{host,gpu}           every stored metric; gpu="all" for the instance value
 *   gpuvet_bench_status{host,bench,status} 1
 *   gpuvet_flag{host,code,severity,gpu}  number of flags of that code/severity/gpu
 *   gpuvet_flags{host,severity}          number of flags per severity (0 when none)
 *   gpuvet_verdict{host,policy,verdict} 1, gpuvet_accepted{host,policy} 1 or 0
 * No timestamps (the textfile collector refuses them); families sorted by
 * name; a series appears once.
 */
#include "results/export_prom.h"
#include "results/export.h"
#include "common/ident.h"
#include "common/severity.h"
#include "results/store.h"
#include "common/util.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct fam {
	char *name, *help;
	json_t *lines;   /* array of "name{labels} value" */
	json_t *seen;    /* object: "name{labels}" -> true */
};

struct prom {
	struct fam *f;
	size_t n, cap;
};

static struct fam *fam_get(struct prom *p, const char *name, const char *help)
{
	for (size_t i = 0; i < p->n; i++)
		if (!strcmp(p->f[i].name, name))
			return &p->f[i];
	if (p->n == p->cap) {
		p->cap = p->cap ? p->cap * 2 : 32;
		p->f = gv_realloc(p->f, p->cap * sizeof *p->f);
	}
	struct fam *f = &p->f[p->n++];
	f->name = gv_strdup(name);
	f->help = gv_strdup(help);
	f->lines = json_array();
	f->seen = json_object();
	return f;
}

/*
 * Escaping of the text format: a label value escapes \\, \" and newline,
 * HELP text \\ and newline (help != 0).  Other control characters become
 * spaces and bytes of invalid UTF-8 U+FFFD, so nothing stored (an imported
 * or merged name) can end a line early, forge a series or make the file
 * unparseable.
 */
static void esc_text(const char *in, char *out, size_t outlen, int help)
{
	size_t k = 0;
	size_t n = in ? strlen(in) : 0;
	for (size_t i = 0; i < n && k + 4 < outlen;) {
		unsigned char c = (unsigned char)in[i];
		if (c == '\\' || (c == '"' && !help)) {
			out[k++] = '\\';
			out[k++] = (char)c;
			i++;
		} else if (c == '\n') {
			out[k++] = '\\';
			out[k++] = 'n';
			i++;
		} else if (c < 0x20 || c == 0x7f) {
			out[k++] = ' ';
			i++;
		} else if (c < 0x80) {
			out[k++] = (char)c;
			i++;
		} else {
			size_t len = (c & 0xe0) == 0xc0 ? 2 : (c & 0xf0) == 0xe0 ? 3 : (c & 0xf8) == 0xf0 ? 4 : 1;
			if (len > 1 && i + len <= n && ident_utf8_valid(in + i, len)) {
				memcpy(out + k, in + i, len);
				k += len;
				i += len;
			} else {
				memcpy(out + k, "\xef\xbf\xbd", 3);
				k += 3;
				i++;
			}
		}
	}
	out[k] = 0;
}

static void esc(const char *in, char *out, size_t outlen)
{
	esc_text(in, out, outlen, 0);
}

/* Adds a series; labels: NULL-terminated name, value pairs (values unescaped). */
static void series(struct prom *p, const char *name, const char *help, double v, ...)
{
	char lab[2048] = "", e[512], key[2600], val[64];
	size_t k = 0;
	va_list ap;
	const char *ln, *lv;
	va_start(ap, v);
	while ((ln = va_arg(ap, const char *)) && k < sizeof lab) {
		lv = va_arg(ap, const char *);
		esc(lv ? lv : "", e, sizeof e);
		k += (size_t)snprintf(lab + k, sizeof lab - k, "%s%s=\"%s\"", k ? "," : "", ln, e);
	}
	va_end(ap);
	snprintf(key, sizeof key, "%s{%s}", name, lab);
	struct fam *f = fam_get(p, name, help);
	if (json_object_get(f->seen, key))
		return;
	json_object_set_new(f->seen, key, json_true());
	if (isnan(v))
		snprintf(val, sizeof val, "NaN");
	else if (isinf(v))
		snprintf(val, sizeof val, v > 0 ? "+Inf" : "-Inf");
	else
		snprintf(val, sizeof val, "%.10g", v);
	char *line = gv_asprintf("%s %s", key, val);
	json_array_append_new(f->lines, json_string(line));
	free(line);
}

/* Adds v to an existing series (counts of flags). */
static void series_add(struct prom *p, const char *name, const char *help, const char *labels_key, double v)
{
	struct fam *f = fam_get(p, name, help);
	size_t i;
	json_t *l;
	size_t kl = strlen(labels_key);
	json_array_foreach(f->lines, i, l) {
		const char *s = json_string_value(l);
		if (!strncmp(s, labels_key, kl) && s[kl] == ' ') {
			double old = strtod(s + kl + 1, NULL);
			char *nl = gv_asprintf("%s %.10g", labels_key, old + v);
			json_array_set_new(f->lines, i, json_string(nl));
			free(nl);
			return;
		}
	}
	char *nl = gv_asprintf("%s %.10g", labels_key, v);
	json_array_append_new(f->lines, json_string(nl));
	json_object_set_new(f->seen, labels_key, json_true());
	free(nl);
}

static const struct {
	const char *abbr, *base;
	double factor;
} units[] = {
	{ "s", "seconds", 1 }, { "sec", "seconds", 1 }, { "ms", "seconds", 1e-3 }, { "us", "seconds", 1e-6 },
	{ "ns", "seconds", 1e-9 }, { "m", "seconds", 60 }, { "h", "seconds", 3600 }, { "d", "seconds", 86400 },
	{ "b", "bytes", 1 }, { "kb", "bytes", 1e3 }, { "mb", "bytes", 1e6 }, { "gb", "bytes", 1e9 },
	{ "tb", "bytes", 1e12 }, { "pb", "bytes", 1e15 },
};

void export_prom_name(const char *metric, char *out, size_t outlen, double *factor)
{
	char buf[256], *tok[64], *save = NULL;
	size_t nt = 0, k;
	*factor = 1;
	k = (size_t)snprintf(buf, sizeof buf, "%s", metric);
	if (k >= sizeof buf)
		buf[sizeof buf - 1] = 0;
	for (char *c = buf; *c; c++)
		if (!((*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9')))
			*c = (*c >= 'A' && *c <= 'Z') ? (char)(*c - 'A' + 'a') : '_';
	for (char *t = strtok_r(buf, "_", &save); t && nt < 64; t = strtok_r(NULL, "_", &save))
		tok[nt++] = t;
	/* a trailing "count" (gauge of a number of things): drop; reserved suffixes renamed */
	if (nt > 1 && !strcmp(tok[nt - 1], "count"))
		nt--;
	k = (size_t)snprintf(out, outlen, "gpuvet");
	for (size_t i = 0; i < nt && k < outlen; i++) {
		const char *t = tok[i];
		/* a rate's denominator ("images_per_s"): already per base unit, named in full */
		if (i > 0 && !strcmp(tok[i - 1], "per") && !strcmp(t, "s")) {
			k += (size_t)snprintf(out + k, outlen - k, "_second");
			continue;
		}
		for (size_t u = 0; u < sizeof units / sizeof units[0]; u++)
			if (!strcmp(t, units[u].abbr)) {
				if (i == nt - 1) {
					t = units[u].base;
					*factor = units[u].factor;
				} else {
					t = "";  /* an abbreviation inside the name: dropped */
				}
				break;
			}
		if (i == nt - 1 && (!strcmp(t, "total") || !strcmp(t, "sum") || !strcmp(t, "bucket")))
			t = !strcmp(t, "total") ? "all" : !strcmp(t, "sum") ? "summed" : "buckets";
		if (*t)
			k += (size_t)snprintf(out + k, outlen - k, "_%s", t);
	}
}

static const char *jstr(const json_t *o, const char *k)
{
	const char *v = json_string_value(json_object_get(o, k));
	return v ? v : "";
}

static double iso_time(const char *s)
{
	struct tm tm;
	memset(&tm, 0, sizeof tm);
	if (!s || !strptime(s, "%Y-%m-%dT%H:%M:%SZ", &tm))
		return NAN;
	return (double)timegm(&tm);
}

static void gpu_label(const json_t *o, char *buf, size_t len)
{
	json_int_t g = json_integer_value(json_object_get(o, "gpu"));
	if (g < 0)
		snprintf(buf, len, "all");
	else
		snprintf(buf, len, "%lld", (long long)g);
}

/* The families of this file: no metric (an imported one) may write into them. */
static int reserved_family(const char *name)
{
	static const char *const fams[] = { "gpuvet_run_info", "gpuvet_run_start_time_seconds",
					    "gpuvet_run_end_time_seconds", "gpuvet_bench_status", "gpuvet_flag",
					    "gpuvet_flags", "gpuvet_verdict", "gpuvet_accepted" };
	for (size_t i = 0; i < sizeof fams / sizeof fams[0]; i++)
		if (!strcmp(name, fams[i]))
			return 1;
	return 0;
}

static void add_run(struct prom *p, const json_t *fp)
{
	const json_t *run = json_object_get(fp, "run");
	const char *host = jstr(run, "hostname");
	char count[24], gpu[24], name[300], help[400];
	size_t i;
	json_t *e;
	snprintf(count, sizeof count, "%lld", (long long)json_integer_value(json_object_get(run, "gpu_count")));
	series(p, "gpuvet_run_info", "gpuvet run identity of the latest run of each host (value 1)", 1, "host", host,
	       "uuid", jstr(run, "uuid"), "provider", jstr(run, "provider"), "instance_type",
	       jstr(run, "instance_type"), "region", jstr(run, "region"), "gpu_model", jstr(run, "gpu_model"),
	       "gpu_count", count, "profile", jstr(run, "profile"), "status", jstr(run, "status"), "version",
	       jstr(run, "gpuvet_version"), NULL);
	double t = iso_time(json_string_value(json_object_get(run, "started_at")));
	if (!isnan(t))
		series(p, "gpuvet_run_start_time_seconds", "start of the gpuvet run, unix time", t, "host", host, NULL);
	t = iso_time(json_string_value(json_object_get(run, "finished_at")));
	if (!isnan(t))
		series(p, "gpuvet_run_end_time_seconds", "end of the gpuvet run, unix time", t, "host", host, NULL);

	json_array_foreach(json_object_get(fp, "metrics"), i, e) {
		const char *mn = json_string_value(json_object_get(e, "name"));
		json_t *v = json_object_get(e, "value");
		double factor;
		if (!mn || !json_is_number(v))
			continue;
		export_prom_name(mn, name, sizeof name, &factor);
		if (reserved_family(name) || !strcmp(name, "gpuvet"))
			continue;
		snprintf(help, sizeof help, "gpuvet metric %s in %s%s, latest run of each host", mn,
			 *jstr(e, "unit") ? jstr(e, "unit") : "its unit", factor != 1 ? " converted to base units" : "");
		gpu_label(e, gpu, sizeof gpu);
		series(p, name, help, json_number_value(v) * factor, "host", host, "gpu", gpu, NULL);
	}
	json_array_foreach(json_object_get(fp, "benches"), i, e)
		series(p, "gpuvet_bench_status", "gpuvet bench outcome (value 1): ok, skipped, failed, timed_out", 1,
		       "host", host, "bench", jstr(e, "name"), "status", jstr(e, "status"), NULL);

	int nsev[GV_SEVERITIES] = { 0 };
	json_array_foreach(json_object_get(fp, "flags"), i, e) {
		char he[256], ce[64], key[512];
		const char *sev = jstr(e, "severity");
		gpu_label(json_object_get(e, "evidence"), gpu, sizeof gpu);
		if (!json_is_integer(json_object_get(json_object_get(e, "evidence"), "gpu")))
			snprintf(gpu, sizeof gpu, "all");
		if (gv_severity_rank(sev) >= 0)
			nsev[gv_severity_rank(sev)]++;
		esc(host, he, sizeof he);
		esc(jstr(e, "code"), ce, sizeof ce);
		char se[64];
		esc(sev, se, sizeof se);
		snprintf(key, sizeof key, "gpuvet_flag{host=\"%s\",code=\"%s\",severity=\"%s\",gpu=\"%s\"}", he, ce, se, gpu);
		series_add(p, "gpuvet_flag", "number of gpuvet flags of this code, severity and gpu in the latest run", key, 1);
	}
	for (int k = GV_SEV_CRITICAL; k >= 0; k--)   /* worst first */
		series(p, "gpuvet_flags", "number of gpuvet flags per severity in the latest run", nsev[k], "host", host,
		       "severity", gv_severity_name(k), NULL);
	/* newest first: two texts of one policy name (two digests) export the latest verdict, once */
	for (i = json_array_size(json_object_get(fp, "verdicts")); i-- > 0;) {
		e = json_array_get(json_object_get(fp, "verdicts"), i);
		if (json_is_true(json_object_get(e, "imported")))
			continue;   /* judged elsewhere: history, not this run's verdict (docs/acceptance.md) */
		series(p, "gpuvet_verdict", "gpuvet acceptance verdict per policy (value 1): accept, reject, unmeasurable", 1,
		       "host", host, "policy", jstr(e, "policy"), "verdict", jstr(e, "verdict"), NULL);
		series(p, "gpuvet_accepted", "1 when the policy accepted the latest run, else 0",
		       !strcmp(jstr(e, "verdict"), "accept"), "host", host, "policy", jstr(e, "policy"), NULL);
	}
}

static int cmp_fam(const void *a, const void *b)
{
	return strcmp(((const struct fam *)a)->name, ((const struct fam *)b)->name);
}

static int later(const json_t *a, const json_t *b)
{
	/* a later than b: started_at (ISO, sortable), then run id */
	int c = strcmp(jstr(json_object_get(a, "run"), "started_at"), jstr(json_object_get(b, "run"), "started_at"));
	if (c)
		return c > 0;
	return json_integer_value(json_object_get(json_object_get(a, "run"), "id")) >
	       json_integer_value(json_object_get(json_object_get(b, "run"), "id"));
}

int export_prometheus_runs(struct store *s, const int64_t *ids, size_t n, FILE *out, char *err, size_t errlen)
{
	json_t *latest = json_object();   /* hostname -> fingerprint (samples dropped) */
	struct prom p = { 0 };
	int rc = 0;
	for (size_t i = 0; i < n; i++) {
		json_t *fp;
		if (store_load_fingerprint(s, ids[i], &fp)) {
			snprintf(err, errlen, "%s", store_errmsg(s));
			json_decref(latest);
			return -1;
		}
		json_object_del(fp, "samples");
		json_t *run = json_object_get(fp, "run");
		if (!json_object_get(run, "id"))
			json_object_set_new(run, "id", json_integer(ids[i]));
		const char *host = jstr(run, "hostname");
		json_t *cur = json_object_get(latest, host);
		if (!cur || later(fp, cur))
			json_object_set(latest, host, fp);
		json_decref(fp);
	}
	const char *host;
	json_t *fp;
	json_object_foreach(latest, host, fp)
		add_run(&p, fp);
	if (p.n)
		qsort(p.f, p.n, sizeof *p.f, cmp_fam);
	for (size_t i = 0; i < p.n; i++) {
		size_t j;
		json_t *l;
		char help[1024];
		esc_text(p.f[i].help, help, sizeof help, 1);
		fprintf(out, "# HELP %s %s\n# TYPE %s gauge\n", p.f[i].name, help, p.f[i].name);
		json_array_foreach(p.f[i].lines, j, l)
			fprintf(out, "%s\n", json_string_value(l));
		free(p.f[i].name);
		free(p.f[i].help);
		json_decref(p.f[i].lines);
		json_decref(p.f[i].seen);
	}
	free(p.f);
	json_decref(latest);
	if (ferror(out)) {
		snprintf(err, errlen, "cannot write the prometheus metrics");
		rc = -1;
	}
	return rc;
}

int export_prometheus(struct store *s, FILE *out, char *err, size_t errlen)
{
	int64_t *ids = NULL;
	size_t n = 0;
	if (store_list_runs(s, &ids, &n)) {
		snprintf(err, errlen, "%s", store_errmsg(s));
		return -1;
	}
	int rc = export_prometheus_runs(s, ids, n, out, err, errlen);
	free(ids);
	return rc;
}
