/*
 * ctx.c - the child side of the harness protocol.  Every report is one
 * JSON object on one line written to the pipe in a single write(2) (lines
 * are far below PIPE_BUF in practice; the parent copes with partial reads):
 *
 *   {"t":"metric","name":N,"gpu":G,"value":V,"unit":U,"params":{...}}
 *   {"t":"sample","series":S,"gpu":G,"x":X,"y":Y}
 *   {"t":"reason","text":T}      why the bench skipped or failed
 *   {"t":"progress","f":F}
 *   {"t":"log","text":T}
 *   {"t":"config","config":{...}}
 *   {"t":"workdir","path":P}     a work directory the harness removes when the bench ends
 *   {"t":"status","status":"ok|skipped|failed"}   last line, from the harness
 */
#include "benches/bench.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

struct bench_ctx {
	int fd;
	int keeper_fd;   /* the keeper's pipe (runners/proctree.c), -1 when none */
	char *name;
	double last_progress_t;
};

struct bench_ctx *bench_ctx_new(int fd, const char *bench_name)
{
	struct bench_ctx *c = calloc(1, sizeof *c);
	if (!c)
		abort();
	c->fd = fd;
	c->keeper_fd = -1;
	c->name = strdup(bench_name);
	if (!c->name)
		abort();
	return c;
}

void bench_ctx_set_keeper(struct bench_ctx *ctx, int keeper_fd)
{
	ctx->keeper_fd = keeper_fd;
}

void bench_ctx_free(struct bench_ctx *ctx)
{
	if (!ctx)
		return;
	free(ctx->name);
	free(ctx);
}

static void emit(struct bench_ctx *ctx, json_t *obj)
{
	char *line = json_dumps(obj, JSON_COMPACT | JSON_ENSURE_ASCII);
	json_decref(obj);
	if (!line)
		return;
	size_t n = strlen(line);
	char *buf = malloc(n + 2);
	if (!buf)
		abort();
	memcpy(buf, line, n);
	buf[n] = '\n';
	free(line);
	size_t off = 0;
	while (off < n + 1) {
		ssize_t w = write(ctx->fd, buf + off, n + 1 - off);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			break; /* parent gone: nothing left to tell */
		}
		off += (size_t)w;
	}
	free(buf);
}

/* JSON cannot carry NaN or infinity; such a value is a bench bug, sent as null. */
static json_t *num(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

void bench_metric(struct bench_ctx *ctx, const char *name, int gpu, double value,
		  const char *unit, const char *params_json)
{
	json_t *o = json_object();
	json_object_set_new(o, "t", json_string("metric"));
	json_object_set_new(o, "name", json_string(name));
	json_object_set_new(o, "gpu", json_integer(gpu));
	json_object_set_new(o, "value", num(value));
	json_object_set_new(o, "unit", json_string(unit ? unit : ""));
	if (params_json) {
		json_t *p = json_loads(params_json, 0, NULL);
		json_object_set_new(o, "params", p && json_is_object(p) ? p : json_object());
		if (p && !json_is_object(p))
			json_decref(p);
	}
	emit(ctx, o);
}

void bench_sample(struct bench_ctx *ctx, const char *series, int gpu, double x, double y)
{
	json_t *o = json_object();
	json_object_set_new(o, "t", json_string("sample"));
	json_object_set_new(o, "series", json_string(series));
	json_object_set_new(o, "gpu", json_integer(gpu));
	json_object_set_new(o, "x", num(x));
	json_object_set_new(o, "y", num(y));
	emit(ctx, o);
}

static void emit_text(struct bench_ctx *ctx, const char *type, const char *fmt, va_list ap)
{
	char buf[1024];
	vsnprintf(buf, sizeof buf, fmt, ap);
	json_t *o = json_object();
	json_object_set_new(o, "t", json_string(type));
	/* invalid UTF-8 from a tool's message must not drop the line */
	json_t *s = json_string(buf);
	json_object_set_new(o, "text", s ? s : json_string("(message not valid utf-8)"));
	emit(ctx, o);
}

void bench_reason(struct bench_ctx *ctx, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	emit_text(ctx, "reason", fmt, ap);
	va_end(ap);
}

void bench_log(struct bench_ctx *ctx, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	emit_text(ctx, "log", fmt, ap);
	va_end(ap);
}

void bench_progress(struct bench_ctx *ctx, double fraction)
{
	double now = bench_now();
	if (now - ctx->last_progress_t < 0.2 && fraction < 1.0)
		return;
	ctx->last_progress_t = now;
	json_t *o = json_object();
	json_object_set_new(o, "t", json_string("progress"));
	json_object_set_new(o, "f", num(fraction < 0 ? 0 : fraction > 1 ? 1 : fraction));
	emit(ctx, o);
}

void bench_config_echo(struct bench_ctx *ctx, const char *json_object_text)
{
	json_t *p = json_loads(json_object_text, 0, NULL);
	if (!p)
		return;
	json_t *o = json_object();
	json_object_set_new(o, "t", json_string("config"));
	json_object_set_new(o, "config", p);
	emit(ctx, o);
}

void bench_workdir(struct bench_ctx *ctx, const char *path)
{
	/* the keeper first: it outlives gpuvet itself being killed */
	size_t n = strlen(path);
	char *line = malloc(n + 2);
	if (!line)
		abort();
	memcpy(line, path, n);
	line[n] = '\n';
	if (ctx->keeper_fd >= 0 && !memchr(path, '\n', n)) {
		ssize_t w = write(ctx->keeper_fd, line, n + 1);
		(void)w;
	}
	free(line);
	json_t *o = json_object();
	json_object_set_new(o, "t", json_string("workdir"));
	json_t *s = json_string(path);
	if (!s) {
		json_decref(o);
		return;
	}
	json_object_set_new(o, "path", s);
	emit(ctx, o);
}

int bench_mkworkdir(struct bench_ctx *ctx, const char *parent, const char *kind, char *out, size_t outlen)
{
	static const char alnum[] = "abcdefghijklmnopqrstuvwxyz0123456789";
	unsigned char r[16];
	char name[sizeof r + 1];
	if (getrandom(r, sizeof r, 0) != (ssize_t)sizeof r)
		return -1;
	for (size_t i = 0; i < sizeof r; i++)
		name[i] = alnum[r[i] % (sizeof alnum - 1)];
	name[sizeof r] = 0;
	int n = snprintf(out, outlen, "%s/gpuvet-%s-%s", parent, kind, name);
	if (n < 0 || (size_t)n >= outlen) {
		errno = ENAMETOOLONG;
		return -1;
	}
	/* told first: the harness's removal of a directory that was never made is a no-op */
	bench_workdir(ctx, out);
	return mkdir(out, 0700);
}

/* Test hook for the null bench: bytes on the pipe as they are. */
void bench_ctx_raw_write(struct bench_ctx *ctx, const char *buf, size_t n);
void bench_ctx_raw_write(struct bench_ctx *ctx, const char *buf, size_t n)
{
	ssize_t w = write(ctx->fd, buf, n);
	(void)w;
}

/* Here, below every bench and the registry, so that a bench may ask too (a test's knob read only then). */
int bench_test_benches_allowed(void)
{
	const char *e = getenv("GPUVET_TEST_BENCHES");
	return e && !strcmp(e, "1");
}
