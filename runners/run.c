/*
 * run.c - the harness.  It owns isolation and timing: every bench runs in
 * its own child process (own process group, killed with the parent) with a
 * deadline; the child reports JSON lines on a pipe (benches/ctx.c) that the
 * parent stores as they arrive inside the bench's transaction, committed
 * when the bench ends.  A bench that crashes, hangs, or cannot run here is
 * recorded as failed, timed_out or skipped with the reason, and the run
 * goes on.  A run killed half way keeps every committed bench and stays
 * marked incomplete.
 */
#include "runners/run.h"
#include "runners/naming.h"
#include "common/util.h"
#include "common/version.h"
#include "runners/proctree.h"
#include "results/store.h"
#include "results/bench_rows.h"
#include "results/store_pending.h"
#include "common/gpus.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define KILL_GRACE_S 2.0          /* SIGTERM, then SIGKILL after this */
#define MAX_LINE (1u << 20)       /* a protocol line longer than this is dropped */
#define STEAL_SAMPLE_S 1.0

static volatile sig_atomic_t got_signal;

static void on_signal(int sig)
{
	got_signal = sig;
}

/* ---- selection ---- */

const struct bench **run_default_selection(void)
{
	size_t n = 0;
	for (const struct bench *const *b = bench_registry; *b; b++)
		n++;
	const struct bench **sel = gv_calloc(n + 1, sizeof *sel);
	size_t k = 0;
	for (const struct bench *const *b = bench_registry; *b; b++)
		if (!((*b)->flags & (BENCH_TEST_ONLY | BENCH_DEFAULT_OFF)))
			sel[k++] = *b;
	return sel;
}

int run_parse_profile(const char *name, enum bench_profile *out)
{
	if (!name || !strcmp(name, "quick"))
		*out = PROFILE_QUICK;
	else if (!strcmp(name, "standard"))
		*out = PROFILE_STANDARD;
	else if (!strcmp(name, "full"))
		*out = PROFILE_FULL;
	else
		return -1;
	return 0;
}

const struct bench **run_parse_selection(const char *list, char *err, size_t errlen)
{
	size_t n = 1;
	for (const char *p = list; *p; p++)
		n += *p == ',';
	const struct bench **sel = gv_calloc(n + 1, sizeof *sel);
	char *copy = gv_strdup(list), *save = NULL;
	size_t k = 0;
	for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		const struct bench *b = bench_find(tok);
		if (!b) {
			snprintf(err, errlen, "unknown bench '%s'", tok);
			goto fail;
		}
		int dup = 0;
		for (size_t i = 0; i < k; i++)
			dup |= sel[i] == b;
		if (!dup)
			sel[k++] = b;
	}
	if (!k) {
		snprintf(err, errlen, "no bench named in '%s'", list);
		goto fail;
	}
	free(copy);
	return sel;
fail:
	free(copy);
	free(sel);
	return NULL;
}

/* ---- /proc/stat steal ---- */

int run_read_cpu_times(const char *text, struct cpu_times *out)
{
	unsigned long long v[10] = { 0 };
	if (!text || strncmp(text, "cpu ", 4))
		return -1;
	int n = sscanf(text + 4, "%llu %llu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2],
		       &v[3], &v[4], &v[5], &v[6], &v[7], &v[8], &v[9]);
	if (n < 4)
		return -1;
	/* user nice system idle iowait irq softirq steal [guest guest_nice: already in user/nice] */
	out->total = 0;
	for (int i = 0; i < n && i < 8; i++)
		out->total += v[i];
	out->steal = n >= 8 ? v[7] : 0;
	return 0;
}

static int read_cpu_times(struct cpu_times *t)
{
	char buf[512];
	FILE *f = fopen("/proc/stat", "r");
	if (!f)
		return -1;
	char *ok = fgets(buf, sizeof buf, f);
	fclose(f);
	return ok ? run_read_cpu_times(buf, t) : -1;
}

static double steal_pct(const struct cpu_times *a, const struct cpu_times *b)
{
	unsigned long long dt = b->total - a->total;
	return dt ? 100.0 * (double)(b->steal - a->steal) / (double)dt : 0.0;
}

/* ---- progress ---- */

struct progress {
	int on;
	int idx, count;
	const char *name;
	double start, frac;
};

static void progress_draw(const struct progress *p)
{
	if (!p->on)
		return;
	char bar[21];
	int filled = (int)(p->frac * 20 + 0.5);
	for (int i = 0; i < 20; i++)
		bar[i] = i < filled ? '#' : '.';
	bar[20] = '\0';
	fprintf(stderr, "\r\033[K[%d/%d] %-10s [%s] %3.0f%%  %.0f s", p->idx, p->count, p->name, bar,
		p->frac * 100, bench_now() - p->start);
	fflush(stderr);
}

static void progress_clear(const struct progress *p)
{
	if (p->on) {
		fputs("\r\033[K", stderr);
		fflush(stderr);
	}
}

/* ---- one bench ---- */

struct bench_result {
	char status[16];
	char *reason;
	char *config;
	double duration;
	int nmetrics;
	int bad_lines;
	int out_of_bounds;   /* values outside their physical bounds, stored as null */
	int got_status;
};

static void set_reason(struct bench_result *r, const char *text)
{
	free(r->reason);
	r->reason = text ? gv_strdup(text) : NULL;
}

struct child_args {
	const struct bench *b;
	const struct bench_config *cfg;
	int wfd;
};

/* The bench process, below its keeper (runners/proctree.c). */
static void child_main(void *arg, int keeper_fd)
{
	const struct child_args *a = arg;
	const struct bench *b = a->b;
	int wfd = a->wfd;
	signal(SIGPIPE, SIG_IGN);
	/* a bench's stray printf must not corrupt the fingerprint on stdout */
	dup2(STDERR_FILENO, STDOUT_FILENO);
	int devnull = open("/dev/null", O_RDONLY);
	if (devnull >= 0) {
		dup2(devnull, STDIN_FILENO);
		close(devnull);
	}
	struct bench_ctx *ctx = bench_ctx_new(wfd, b->name);
	bench_ctx_set_keeper(ctx, keeper_fd);
	int rc = BENCH_OK;
	if (b->probe)
		rc = b->probe(ctx, a->cfg);
	if (rc == BENCH_OK)
		rc = b->run(ctx, a->cfg);
	char line[64];
	snprintf(line, sizeof line, "{\"t\":\"status\",\"status\":\"%s\"}\n",
		 rc == BENCH_OK ? "ok" : rc == BENCH_SKIP ? "skipped" : "failed");
	ssize_t w = write(wfd, line, strlen(line));
	(void)w;
	bench_ctx_free(ctx);
	fflush(NULL);
	_exit(0);
}

struct handler_env {
	json_t *rows;       /* metrics and samples received, written when the bench ends */
	struct store *s;
	int64_t run_id;
	const char *bench;
	const struct gpu_ref *ref;
	int gpu_count;
	struct bench_result *r;
	struct progress *prog;
	json_t *workdirs;   /* work directories the bench made: removed when it ends */
};

/*
 * Percent of the reference peak for a GEMM metric (the harness adds it so
 * benches never read the reference table): gpu_pct_of_peak()'s rule
 * (common/gpus.h) with the GPUs the bench loaded ("gpus" in its params).
 */
int run_pct_of_peak(const struct gpu_ref *ref, const char *name, int gpu, double value,
		    const json_t *params, int inventory_gpus, char dtype[16], double *pct, double *peak)
{
	json_int_t loaded = json_integer_value(json_object_get(params, "gpus"));
	return gpu_pct_of_peak(ref, name, gpu, value, loaded > 0 && loaded < 1 << 20 ? (int)loaded : 0,
			       inventory_gpus, dtype, pct, peak);
}

/*
 * A value no machine can give (benches/metric_bounds.c: a negative rate, a
 * GEMM past twice any GPU's peak) is a bench's bug or a broken reading: kept
 * as not measured (null), so that no rule passes on it, and said once per
 * bench.  1 when it was.
 */
static int out_of_bounds(struct handler_env *e, json_t *o, const char *name, int gpu, const char *key)
{
	json_t *v = json_object_get(o, key);
	char why[256];
	if (!json_is_number(v) || !metric_bound_check(name, gpu, json_number_value(v), e->gpu_count, why, sizeof why))
		return 0;
	if (!e->r->out_of_bounds++) {
		progress_clear(e->prog);
		gv_err("%s: %s; stored as not measured", e->bench, why);
	}
	json_object_set_new(o, key, json_null());
	return 1;
}

static void add_pct_of_peak(struct handler_env *e, const char *name, int gpu, double value, const json_t *mparams)
{
	char dtype[16], mname[64], params[160];
	double pct, peak;
	if (run_pct_of_peak(e->ref, name, gpu, value, mparams, e->gpu_count, dtype, &pct, &peak))
		return;
	snprintf(mname, sizeof mname, "gemm.%s.pct_of_peak", dtype);
	snprintf(params, sizeof params, "{\"peak_tflops\":%.6g,\"reference\":\"%s\"}", peak, e->ref->key);
	json_array_append_new(e->rows, json_pack("{s:s,s:s,s:i,s:f,s:s,s:o}", "t", "metric", "name", mname,
						 "gpu", gpu, "value", pct, "unit", "%",
						 "params", json_loads(params, 0, NULL)));
}

static void handle_line(struct handler_env *e, const char *line)
{
	json_error_t jerr;
	json_t *o = json_loads(line, 0, &jerr);
	const char *t = json_string_value(json_object_get(o, "t"));
	if (!o || !t) {
		e->r->bad_lines++;
		gv_debug("%s: ignoring a malformed report line", e->bench);
		json_decref(o);
		return;
	}
	if (!strcmp(t, "metric")) {
		const char *name = json_string_value(json_object_get(o, "name"));
		json_t *v = json_object_get(o, "value");
		json_t *p = json_object_get(o, "params");
		int gpu = (int)json_integer_value(json_object_get(o, "gpu"));
		if (!name || !(json_is_number(v) || json_is_null(v))) {
			e->r->bad_lines++;
		} else {
			v = out_of_bounds(e, o, name, gpu, "value") ? json_null() : v;
			json_array_append(e->rows, o);
			e->r->nmetrics++;
			if (json_is_number(v))
				add_pct_of_peak(e, name, gpu, json_number_value(v), p);
		}
	} else if (!strcmp(t, "sample")) {
		const char *series = json_string_value(json_object_get(o, "series"));
		if (!series) {
			e->r->bad_lines++;
		} else {
			out_of_bounds(e, o, series, (int)json_integer_value(json_object_get(o, "gpu")), "y");
			json_array_append(e->rows, o);
		}
	} else if (!strcmp(t, "reason")) {
		set_reason(e->r, json_string_value(json_object_get(o, "text")));
	} else if (!strcmp(t, "log")) {
		if (gv_verbose) {
			progress_clear(e->prog);
			gv_debug("%s: %s", e->bench, json_string_value(json_object_get(o, "text")));
		}
	} else if (!strcmp(t, "progress")) {
		e->prog->frac = json_number_value(json_object_get(o, "f"));
		progress_draw(e->prog);
	} else if (!strcmp(t, "workdir")) {
		const char *path = json_string_value(json_object_get(o, "path"));
		if (path && json_array_size(e->workdirs) < 8)
			json_array_append_new(e->workdirs, json_string(path));
	} else if (!strcmp(t, "config")) {
		free(e->r->config);
		e->r->config = json_dumps(json_object_get(o, "config"), JSON_COMPACT);
	} else if (!strcmp(t, "status")) {
		const char *st = json_string_value(json_object_get(o, "status"));
		if (st && (!strcmp(st, "ok") || !strcmp(st, "skipped") || !strcmp(st, "failed"))) {
			gv_strlcpy(e->r->status, st, sizeof e->r->status);
			e->r->got_status = 1;
		}
	} else {
		e->r->bad_lines++;
	}
	json_decref(o);
}

static void describe_exit(int wstatus, struct bench_result *r)
{
	char buf[160];
	if (WIFSIGNALED(wstatus)) {
		int sig = WTERMSIG(wstatus);
		snprintf(buf, sizeof buf, "bench crashed: %s (signal %d)%s%s", strsignal(sig), sig,
			 r->reason ? ": " : "", r->reason ? r->reason : "");
	} else {
		snprintf(buf, sizeof buf, "bench exited with status %d without a result", WEXITSTATUS(wstatus));
	}
	gv_strlcpy(r->status, "failed", sizeof r->status);
	set_reason(r, buf);
}

/* Kills the child's process group: SIGTERM, then SIGKILL after the grace period. */
static void kill_group(pid_t pid, int *wstatus)
{
	kill(-pid, SIGTERM);
	double until = bench_now() + KILL_GRACE_S;
	while (bench_now() < until) {
		pid_t w = waitpid(pid, wstatus, WNOHANG);
		if (w == pid) {
			kill(-pid, SIGKILL); /* stragglers in the group */
			return;
		}
		usleep(20000);
	}
	kill(-pid, SIGKILL);
	while (waitpid(pid, wstatus, 0) < 0 && errno == EINTR)
		;
}

struct steal_sampler {
	int ok;
	struct cpu_times first, last;
	double last_t, t0;
	struct store *s;
	int64_t run_id;
	double *points;  /* pairs t, pct */
	size_t n, cap;
};

static void steal_tick(struct steal_sampler *ss)
{
	double now = bench_now();
	if (!ss->ok || now - ss->last_t < STEAL_SAMPLE_S)
		return;
	struct cpu_times t;
	if (read_cpu_times(&t))
		return;
	if (ss->n + 2 > ss->cap) {
		ss->cap = ss->cap ? ss->cap * 2 : 256;
		ss->points = gv_realloc(ss->points, ss->cap * sizeof *ss->points);
	}
	ss->points[ss->n++] = now - ss->t0;
	ss->points[ss->n++] = steal_pct(&ss->last, &t);
	ss->last = t;
	ss->last_t = now;
}

/*
 * Writes the bench's rows and its bench row in one transaction
 * (results/bench_rows.c).  A finished bench is never dropped for a busy
 * store: while another process holds its write lock, the wait goes on,
 * said on stderr at each busy timeout; stopped (Ctrl-C, SIGTERM), the rows
 * are kept aside in a file that the next command opening the store for
 * writing stores (results/store_pending.h).  0 stored; -1 the store failed
 * (store_errmsg); -2 kept aside or lost, said here.
 */
static int flush_bench(struct handler_env *e)
{
	struct bench_outcome o = { e->r->status, e->r->reason, e->r->duration, e->r->config };
	double t0 = bench_now();
	char where[PATH_MAX + 600];
	int waited = 0;
	while (store_put_bench_rows(e->s, e->run_id, e->bench, e->rows, &o)) {
		if (!store_is_busy(e->s))
			return -1;
		progress_clear(e->prog);
		if (got_signal) {
			if (store_pending_keep(e->s, e->run_id, e->bench, e->rows, &o, where, sizeof where)) {
				gv_err("the %s results are lost: the store stayed busy and keeping them aside failed: %s",
				       e->bench, where);
				return -2;
			}
			gv_err("the store stayed busy: the %s results are kept in '%s'; the next gpuvet command that "
			       "writes to the store stores them", e->bench, where);
			return -2;
		}
		gv_err("the store is busy (another process holds its write lock): still waiting to store the %s results "
		       "(%.0f s; Ctrl-C keeps them in a file instead)", e->bench, bench_now() - t0);
		waited = 1;
	}
	if (waited)
		gv_err("stored the %s results after %.0f s", e->bench, bench_now() - t0);
	return 0;
}

/* The bench's own process (under its keeper); its pid, or -1 with the reason in r. */
static pid_t start_bench_process(const struct bench *b, const struct bench_config *cfg, int fds[2],
				 struct bench_result *r)
{
	fflush(NULL);
	pid_t parent = getpid();
	pid_t pid = fork();
	if (pid < 0) {
		close(fds[0]);
		close(fds[1]);
		gv_strlcpy(r->status, "failed", sizeof r->status);
		set_reason(r, "cannot start the bench process");
		return -1;
	}
	if (pid == 0) {
		close(fds[0]);
		/* own process group, so a stop reaches the keeper and the bench at once */
		setpgid(0, 0);
		prctl(PR_SET_PDEATHSIG, SIGTERM); /* gpuvet killed: the keeper cleans up */
		if (getppid() != parent)
			_exit(125);
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		struct child_args a = { b, cfg, fds[1] };
		keeper_main(child_main, &a, fds[1]);
	}
	setpgid(pid, pid); /* also from the parent: no race with kill(-pid) */
	close(fds[1]);
	return pid;
}

enum read_end { READ_EOF, READ_TIMED_OUT, READ_INTERRUPTED };

/* The bench's report lines, handled as they arrive, until it closes the pipe, the deadline or a stop. */
static enum read_end read_reports(struct handler_env *e, int fd, double start, int deadline, struct steal_sampler *ss)
{
	char *buf = gv_malloc(MAX_LINE + 1);
	size_t len = 0;
	int dropping = 0;
	enum read_end end = READ_EOF;
	for (;;) {
		double left = start + deadline - bench_now();
		if (left <= 0) {
			end = READ_TIMED_OUT;
			break;
		}
		if (got_signal) {
			end = READ_INTERRUPTED;
			break;
		}
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		int ms = (int)(left < STEAL_SAMPLE_S ? left * 1000 : STEAL_SAMPLE_S * 1000) + 1;
		int pr = poll(&pfd, 1, ms);
		steal_tick(ss);
		if (e->prog->on)
			progress_draw(e->prog);
		if (pr < 0 && errno == EINTR)
			continue;
		if (pr < 0)
			break;
		if (pr == 0)
			continue;
		ssize_t n = read(fd, buf + len, MAX_LINE - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break; /* 0: the child closed the pipe: exited */
		len += (size_t)n;
		size_t off = 0;
		for (char *nl; (nl = memchr(buf + off, '\n', len - off)) != NULL; off = (size_t)(nl - buf) + 1) {
			*nl = '\0';
			if (!dropping)
				handle_line(e, buf + off);
			dropping = 0;
		}
		memmove(buf, buf + off, len - off);
		len -= off;
		if (len == MAX_LINE) { /* an endless line: drop it */
			len = 0;
			dropping = 1;
			e->r->bad_lines++;
		}
	}
	free(buf);
	return end;
}

/* Waits for (or kills) the bench's process group and says how it ended. */
static void end_bench_process(struct handler_env *e, pid_t pid, double start, int deadline, enum read_end how)
{
	struct bench_result *r = e->r;
	int wstatus = 0;
	if (how != READ_EOF) {
		kill_group(pid, &wstatus);
		gv_strlcpy(r->status, how == READ_TIMED_OUT ? "timed_out" : "failed", sizeof r->status);
		char msg[160];
		if (how == READ_TIMED_OUT)
			snprintf(msg, sizeof msg, "no result within the %d s deadline: bench killed", deadline);
		else
			snprintf(msg, sizeof msg, "interrupted by %s", strsignal((int)got_signal));
		set_reason(r, msg);
		return;
	}
	/* pipe closed; the child is exiting (or closed it and hangs: bounded by the deadline) */
	for (;;) {
		pid_t w = waitpid(pid, &wstatus, WNOHANG);
		if (w == pid)
			break;
		if (bench_now() > start + deadline || got_signal) {
			kill_group(pid, &wstatus);
			if (!r->got_status) {
				gv_strlcpy(r->status, "timed_out", sizeof r->status);
				set_reason(r, "bench closed its pipe but did not exit: killed");
			}
			break;
		}
		usleep(10000);
	}
	kill(-pid, SIGKILL); /* anything the bench left behind in its group */
	if (!r->got_status)
		describe_exit(wstatus, r);
}

/* Runs one bench in a child; fills r.  Returns -1 when the store failed (run must stop). */
static int run_one(struct handler_env *e, const struct bench *b, const struct bench_config *cfg,
		   struct steal_sampler *ss)
{
	struct bench_result *r = e->r;
	int fds[2];
	double start = bench_now();
	int deadline = b->deadline_s ? b->deadline_s(cfg) : 60;

	if (pipe2(fds, O_CLOEXEC) < 0) {
		gv_strlcpy(r->status, "failed", sizeof r->status);
		set_reason(r, "cannot create a pipe for the bench");
		return 0;
	}
	pid_t pid = start_bench_process(b, cfg, fds, r);
	if (pid < 0)
		return 0;
	enum read_end how = read_reports(e, fds[0], start, deadline, ss);
	close(fds[0]);
	end_bench_process(e, pid, start, deadline, how);
	/* the keeper cleans up after the bench; this covers a keeper that was killed */
	proctree_kill_all(0, NULL, NULL);
	size_t wi;
	json_t *wd;
	json_array_foreach(e->workdirs, wi, wd)
		if (proctree_remove_workdir(json_string_value(wd)))
			gv_debug("%s: cannot remove work directory '%s'", e->bench, json_string_value(wd));
	if (r->got_status && strcmp(r->status, "ok") && !r->reason)
		set_reason(r, !strcmp(r->status, "skipped") ? "bench skipped without a reason" : "bench failed without a reason");
	r->duration = bench_now() - start;
	return 0;
}

/* The harness's own measurement, in its own bench transaction; -1 when the store refused it. */
static int record_steal(struct store *s, int64_t run_id, struct steal_sampler *ss)
{
	struct cpu_times end;
	if (!ss->ok || read_cpu_times(&end))
		return 0;   /* no /proc/stat: nothing measured, nothing lost */
	if (store_bench_begin(s, run_id, "harness"))
		return -1;
	double pct = steal_pct(&ss->first, &end);
	char params[96];
	snprintf(params, sizeof params, "{\"window_s\":%.1f,\"source\":\"/proc/stat\"}", bench_now() - ss->t0);
	if (store_put_metric(s, run_id, "harness", "host.cpu_steal.pct", -1, pct, "%", params) ||
	    store_put_series(s, run_id, "harness", "host.cpu_steal.pct", -1, ss->points, ss->n / 2)) {
		store_bench_abort(s);
		return -1;
	}
	return store_bench_end(s, run_id, "harness", "ok", NULL, bench_now() - ss->t0, NULL) ? -1 : 0;
}

/*
 * A clock before the GPU model was announced is wrong (results/fp_rows.c
 * refuses such a date at import): the run is measured and stored as the
 * clock says, and said, since the judge never picks a run by its date (a
 * plain accept judges the run stored last).
 */
static void warn_clock(const struct gpu_ref *ref)
{
	char now[32];
	time_t t = time(NULL);
	struct tm u;
	if (!ref || !ref->released || !gmtime_r(&t, &u))
		return;
	strftime(now, sizeof now, "%Y-%m", &u);
	if (strcmp(now, ref->released) < 0)
		gv_err("warning: this machine's clock reads %s, before the %s was announced (%s): its start time is "
		       "wrong; another store will refuse it at merge", now, ref->key, ref->released);
}

/* The run's row, after its name (given or from instance metadata) is checked; 0, or -1 said. */
static int begin_named_run(struct store *s, const struct run_request *rq, json_t *inv, int64_t *run_id)
{
	char hostname[256] = "", refused[512];
	gethostname(hostname, sizeof hostname - 1);
	int ngpu = inventory_gpu_count(inv);
	const char *model = inventory_gpu_model(inv), *provider = NULL;
	struct naming nm = { .custom = rq->custom };
	if (naming_open(&nm, s))
		return -1;
	int nrc = naming_apply(&nm, inventory_provider(inv), inventory_instance_type(inv), inventory_region(inv), model,
			       ngpu, rq->inv.sku ? "--sku" : "instance metadata", &provider, refused, sizeof refused);
	naming_close(&nm);
	if (nrc) {
		gv_err("%s", refused);
		return -1;
	}
	struct run_info ri = {
		.profile = bench_profile_name(rq->cfg.profile),
		.gpuvet_version = GPUVET_VERSION,
		.hostname = hostname,
		.provider = provider,
		.instance_type = inventory_instance_type(inv),
		.region = inventory_region(inv),
		.gpu_model = model,
		.gpu_count = ngpu,
		.inventory = inv,
		.build = gv_build(),
	};
	if (store_begin_run(s, &ri, run_id)) {
		gv_err("%s", store_errmsg(s));
		return -1;
	}
	warn_clock(gpu_ref_find(model));
	return 0;
}

/* One bench of the run: measured (or skipped for want of a GPU), stored, said; -1 when the store failed. */
static int bench_step(struct store *s, int64_t run_id, const struct run_request *rq, const struct bench *b,
		      json_t *inv, struct progress *prog, struct steal_sampler *ss)
{
	int ngpu = inventory_gpu_count(inv), rc = 0;
	const char *model = inventory_gpu_model(inv);
	struct bench_result r = { .status = "failed" };
	struct handler_env e = { .rows = json_array(), .s = s, .run_id = run_id, .bench = b->name,
				 .ref = model ? gpu_ref_find(model) : NULL, .gpu_count = ngpu, .r = &r, .prog = prog,
				 .workdirs = json_array() };
	prog->name = b->name;
	prog->start = bench_now();
	prog->frac = 0;
	progress_draw(prog);
	if ((b->flags & BENCH_NEEDS_GPU) && ngpu == 0) {
		const char *why = inventory_gpu_error(inv);
		char msg[512];
		snprintf(msg, sizeof msg, "no gpu visible%s%s", why ? ": " : "", why ? why : "");
		gv_strlcpy(r.status, "skipped", sizeof r.status);
		set_reason(&r, msg);
	} else {
		run_one(&e, b, &rq->cfg, ss);
	}
	if (r.bad_lines)
		gv_debug("%s: %d malformed report line(s) ignored", b->name, r.bad_lines);
	int frc = flush_bench(&e);
	json_decref(e.rows);
	json_decref(e.workdirs);
	progress_clear(prog);
	if (frc) {
		if (frc == -1)
			gv_err("%s", store_errmsg(s));
		rc = -1;
	}
	if (!gv_quiet && prog->on)
		fprintf(stderr, "%-10s %-9s %6.1f s%s%s\n", b->name, r.status, r.duration, r.reason ? "  " : "",
			r.reason ? r.reason : "");
	free(r.reason);
	free(r.config);
	return rc;
}

/* The run's end: the harness's own measurement, then its status; -1 when the store failed. */
static int end_run(struct store *s, int64_t run_id, struct steal_sampler *ss, int *interrupted)
{
	if (record_steal(s, run_id, ss)) {
		gv_err("host.cpu_steal.pct not stored: %s", store_errmsg(s));
		store_finish_run(s, run_id, "incomplete");   /* best effort: the store is failing */
		return -1;
	}
	if (got_signal) {
		*interrupted = 1;
		store_finish_run(s, run_id, "incomplete");
		return 0;
	}
	if (store_finish_run(s, run_id, "complete")) {
		gv_err("%s", store_errmsg(s));
		return -1;
	}
	return 0;
}

int run_execute(struct store *s, const struct run_request *rq, int64_t *run_id, int *interrupted)
{
	*interrupted = 0;
	got_signal = 0;
	json_t *inv = inventory_collect(&rq->inv);
	if (begin_named_run(s, rq, inv, run_id)) {
		json_decref(inv);
		return -1;
	}

	/* what a bench leaves orphaned comes to us, not to init: killed after each bench */
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	struct sigaction sa = { .sa_handler = on_signal }, old_int, old_term;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	store_set_stop_flag(s, &got_signal);   /* a stop ends a wait for a busy store at once */

	struct steal_sampler ss = { .s = s, .run_id = *run_id };
	ss.ok = read_cpu_times(&ss.first) == 0;
	ss.last = ss.first;
	ss.t0 = ss.last_t = bench_now();

	int count = 0, rc = 0;
	while (rq->benches[count])
		count++;
	struct progress prog = { .on = rq->progress, .count = count };
	for (int i = 0; i < count && !got_signal && rc == 0; i++) {
		prog.idx = i + 1;
		rc = bench_step(s, *run_id, rq, rq->benches[i], inv, &prog, &ss);
	}
	if (rc == 0)
		rc = end_run(s, *run_id, &ss, interrupted);
	free(ss.points);
	store_set_stop_flag(s, NULL);
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	prctl(PR_SET_CHILD_SUBREAPER, 0);
	json_decref(inv);
	return rc;
}
