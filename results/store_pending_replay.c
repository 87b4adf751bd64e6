/*
 * store_pending_replay.c - benches kept aside while the store was busy,
 * stored by the next command that opens it for writing (store_pending.h).
 *
 * A kept bench is input like any other, since anyone who may write the
 * folder may have put a file there:
 *   - the folder is opened without following a link and without blocking,
 *     and so is each file: a FIFO, a device, a link or a file over
 *     PENDING_MAX_BYTES is never opened or read, but moved aside once;
 *   - a file is claimed before it is read: opened, locked (flock, held
 *     until it is stored or given back) and renamed to a private name
 *     (.claim.PID.NAME): of several writers at once one stores it.  A claim
 *     is live only while a process holds its lock (a lock dies with its
 *     process; a PID may be reused, or be another user's): one nobody holds
 *     is taken back and stored by the next replay;
 *   - it is read and checked whole (the fields, and its rows by the rules of
 *     `results import`, results/fp_check.h), and its samples grouped
 *     (results/bench_rows.h, linear), before the write lock is taken;
 *   - it is stored only into the run it came from, while that run is not
 *     complete, and only if the run does not hold the bench yet: checked in
 *     the transaction that writes it.
 * What cannot be stored now (the store failed) is given back its name and
 * said; what can never be stored (refused, too large, not a file, for a run
 * that cannot take it) is moved aside once to NAME.refused, named with why
 * and what to do, and never read again; what is stored (or was already) is
 * removed.
 */
#include "results/store_pending.h"
#include "results/bench_rows.h"
#include "results/fp_check.h"
#include "results/store_int.h"
#include "common/ident.h"
#include "common/jtree.h"
#include "common/util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#define PENDING_MAX_BYTES (64u << 20)   /* a bench's rows: a 180,000-series sweep is 12 MB */
#define REFUSED ".refused"
#define CLAIM ".claim."
#define KEPT_SKIP (-2)                    /* the gate: not to be stored (why said) */
#define KEPT_HELD (-1)                    /* the gate: the run holds the bench already */

struct kept {
	int dfd;                    /* the pending folder */
	int fd;                     /* the claimed file, locked while claimed */
	char name[NAME_MAX + 1];    /* as found */
	char priv[NAME_MAX + 1];    /* while claimed */
	char shown[PATH_MAX + 4 * NAME_MAX + 8];   /* folder/name, escaped for a terminal */
	const char *why;            /* the gate's reason, when KEPT_SKIP */
	const char *uuid;
	int64_t run_id;
	const char *bench;
};

/* The claimed file's text; NULL with why (a file swapped for another kind after the claim is refused here). */
static char *read_claimed(const struct kept *k, size_t *n, char *why, size_t wlen)
{
	struct stat st;
	int fd = k->fd;
	if (fstat(fd, &st)) {
		snprintf(why, wlen, "cannot be read: %s", strerror(errno));
		return NULL;
	}
	if (!S_ISREG(st.st_mode) || st.st_size > (off_t)PENDING_MAX_BYTES) {
		snprintf(why, wlen, "%s", S_ISREG(st.st_mode) ? "are too large" : "are not a regular file");
		return NULL;
	}
	char *text = gv_malloc((size_t)st.st_size + 1);
	ssize_t r = 0;
	for (*n = 0; *n < (size_t)st.st_size && (r = pread(fd, text + *n, (size_t)st.st_size - *n, (off_t)*n)) > 0;)
		*n += (size_t)r;
	if (r < 0) {
		snprintf(why, wlen, "cannot be read: %s", strerror(errno));
		free(text);
		return NULL;
	}
	text[*n] = '\0';
	return text;
}

/* The document, checked as `results import` checks a fingerprint's rows; NULL with why. */
static json_t *check_doc(const char *text, size_t n, char *why, size_t wlen)
{
	static const char *const statuses[] = { "ok", "skipped", "failed", "timed_out" };
	struct jtree t;
	char err[256];
	if (jt_parse(&t, text, n) || jt_type(&t, 1) != JT_OBJ) {
		snprintf(why, wlen, "are not a JSON object");
		jt_free(&t);
		return NULL;
	}
	const char *bench = jt_str(&t, jt_get(&t, 1, "bench")), *status = jt_str(&t, jt_get(&t, 1, "status"));
	int known = 0;
	for (size_t i = 0; status && i < sizeof statuses / sizeof *statuses; i++)
		known |= !strcmp(status, statuses[i]);
	if (!fp_uuid_ok(jt_str(&t, jt_get(&t, 1, "run_uuid"))))
		snprintf(why, wlen, "name no run (run_uuid is not a lowercase uuid)");
	else if (!bench || ident_check(bench))
		snprintf(why, wlen, "name no bench (bench %s)", bench ? ident_check(bench) : "missing");
	else if (!known)
		snprintf(why, wlen, "have no bench status (ok, skipped, failed or timed_out)");
	else if (fp_check_kept_rows(&t, jt_get(&t, 1, "rows"), err, sizeof err))
		snprintf(why, wlen, "are refused: %s", err);
	else
		why[0] = '\0';
	jt_free(&t);
	return why[0] ? NULL : json_loadb(text, n, JSON_REJECT_DUPLICATES, NULL);
}

/* Inside the write transaction: the run is the one the file names, not complete, without the bench. */
static int replay_gate(struct store *s, void *arg)
{
	struct kept *k = arg;
	sqlite3_stmt *st;
	if (store_prepare(s, "SELECT status, uuid = ?2, EXISTS (SELECT 1 FROM benches WHERE run_id = ?1 AND name = ?3)"
			     " FROM runs WHERE id = ?1", &st))
		return STORE_ERR;
	sqlite3_bind_int64(st, 1, k->run_id);
	store_bind_text(st, 2, k->uuid);
	store_bind_text(st, 3, k->bench);
	int rc = sqlite3_step(st);
	const char *status = rc == SQLITE_ROW ? (const char *)sqlite3_column_text(st, 0) : NULL;
	if (rc != SQLITE_ROW || !sqlite3_column_int(st, 1))
		k->why = "belong to a run this store does not hold";
	else if (status && !strcmp(status, "complete"))
		k->why = "belong to a complete run, which they cannot change";
	rc = k->why ? KEPT_SKIP : sqlite3_column_int(st, 2) ? KEPT_HELD : 0;
	sqlite3_finalize(st);
	return rc;
}

/* The checked document into its run; 0 stored, KEPT_HELD, KEPT_SKIP (k->why), or a store_rc. */
static int store_doc(struct store *s, struct kept *k, json_t *doc)
{
	k->uuid = json_string_value(json_object_get(doc, "run_uuid"));
	k->bench = json_string_value(json_object_get(doc, "bench"));
	if (store_resolve_run(s, k->uuid, &k->run_id)) {
		k->why = "belong to a run this store does not hold";
		return KEPT_SKIP;
	}
	struct bench_outcome o = { json_string_value(json_object_get(doc, "status")),
				   json_string_value(json_object_get(doc, "reason")),
				   json_number_value(json_object_get(doc, "duration_s")),
				   json_string_value(json_object_get(doc, "config")) };
	struct bench_prepared *p = bench_rows_prepare(json_object_get(doc, "rows"));
	if (!p) {
		k->why = "are too large for this machine's memory";
		return KEPT_SKIP;
	}
	int rc = bench_rows_put(s, k->run_id, k->bench, p, &o, replay_gate, k);
	bench_rows_free(p);
	return rc;
}

/* The claimed file's name given back (left for later); said when that fails. */
static void unclaim(const struct kept *k)
{
	if (renameat(k->dfd, k->priv, k->dfd, k->name))
		gv_err("cannot give kept bench results '%s' their name back: %s", k->shown, strerror(errno));
}

/*
 * A file that can never be stored, moved aside once to NAME.refused (from FROM, its name or
 * its claim) and named with why and what to do: no later command reads it again.
 */
static void set_aside(int dfd, const char *from, const char *name, const char *shown, const char *why)
{
	char aside[NAME_MAX + 1];
	snprintf(aside, sizeof aside, "%s" REFUSED, name);
	if (renameat(dfd, from, dfd, aside)) {
		if (errno != ENOENT)   /* ENOENT: another writer moved it first */
			gv_err("kept bench results '%s' %s, and cannot be moved aside: %s", shown, why, strerror(errno));
		return;
	}
	gv_err("kept bench results '%s' %s: never stored, moved aside to '%s" REFUSED "' and not read again "
	       "(look at it, then remove it)", shown, why, shown);
}

/* One claimed file: 1 stored (removed), 0 left (said). */
static int replay_claimed(struct store *s, struct kept *k)
{
	char why[512] = "";
	size_t n = 0;
	char *text = read_claimed(k, &n, why, sizeof why);
	json_t *doc = text ? check_doc(text, n, why, sizeof why) : NULL;
	free(text);
	if (text && !doc && !why[0])
		snprintf(why, sizeof why, "are not readable JSON");
	int rc = doc ? store_doc(s, k, doc) : KEPT_SKIP;
	if (rc == 0)
		gv_err("stored the %s results of run %lld kept in '%s' while the store was busy", k->bench,
		       (long long)k->run_id, k->shown);
	else if (rc != KEPT_HELD && rc != KEPT_SKIP)
		gv_err("kept bench results '%s' not stored yet: %s", k->shown, store_errmsg(s));
	json_decref(doc);
	if (rc == 0 || rc == KEPT_HELD) {
		if (unlinkat(k->dfd, k->priv, 0))
			gv_err("cannot remove '%s' (its results are stored): %s", k->shown, strerror(errno));
	} else if (rc == KEPT_SKIP) {
		set_aside(k->dfd, k->priv, k->name, k->shown, why[0] ? why : k->why);
	} else {
		unclaim(k);
	}
	close(k->fd);   /* the claim's lock goes with it */
	return rc == 0;
}

/*
 * A claim nobody holds (its lock died with its process, whatever process has its PID now): its
 * file's name given back, NULL when none or the claim is live.
 */
static char *reclaim_stale(int dfd, const char *dir, const char *name)
{
	char *end;
	long pid = strtol(name + strlen(CLAIM), &end, 10);
	if (*end != '.' || pid <= 0 || !end[1])
		return NULL;
	int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		if (errno != ENOENT) {   /* ENOENT: its writer stored it meanwhile; else said, never skipped silently */
			char esc[4 * NAME_MAX + 1];
			ident_escape(name, esc, sizeof esc);
			gv_err("kept bench results claimed as '%s/%s' (by process %ld) cannot be opened: %s: left; "
			       "its owner's next command stores them, or remove the file", dir, esc, pid, strerror(errno));
		}
		return NULL;
	}
	char *back = NULL;
	if (!flock(fd, LOCK_EX | LOCK_NB) && !renameat(dfd, name, dfd, end + 1)) {
		gv_debug("kept bench '%s' claimed by process %ld, which holds it no more: taken back", end + 1, pid);
		back = gv_strdup(end + 1);
	}
	close(fd);
	return back;
}

/* The entry NAME opened, locked and renamed to k->priv: 0 claimed (k->fd held), -1 not ours. */
static int claim(struct kept *k, const char *name)
{
	struct stat a, b;
	k->fd = openat(k->dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (k->fd < 0) {
		if (errno != ENOENT)   /* ENOENT: another writer claimed it first */
			gv_err("kept bench results '%s' cannot be claimed: %s: left for later", k->shown, strerror(errno));
		return -1;
	}
	if (flock(k->fd, LOCK_EX | LOCK_NB) || renameat(k->dfd, name, k->dfd, k->priv)) {
		close(k->fd);   /* held or taken by another writer */
		return -1;
	}
	if (fstat(k->fd, &a) || fstatat(k->dfd, k->priv, &b, AT_SYMLINK_NOFOLLOW) || a.st_ino != b.st_ino ||
	    a.st_dev != b.st_dev) {
		unclaim(k);   /* another file took the name between the open and the rename */
		close(k->fd);
		return -1;
	}
	return 0;
}

/* One entry of the folder: 1 stored. */
static int replay_entry(struct store *s, int dfd, const char *dir, const char *name)
{
	struct kept k = { .dfd = dfd, .fd = -1 };
	struct stat st;
	char esc[4 * NAME_MAX + 1];
	size_t len = strlen(name);
	if (len < 6 || strcmp(name + len - 5, ".json") || name[0] == '.' || len > NAME_MAX - 32)
		return 0;   /* a temporary being written is dot-named or not .json; one set aside ends in .refused */
	ident_escape(name, esc, sizeof esc);
	snprintf(k.shown, sizeof k.shown, "%s/%s", dir, esc);
	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW))
		return 0;   /* taken by another writer */
	if (!S_ISREG(st.st_mode) || st.st_size > (off_t)PENDING_MAX_BYTES) {
		set_aside(dfd, name, name, k.shown, S_ISREG(st.st_mode) ? "are larger than 64 MiB" : "are not a regular file");
		return 0;
	}
	snprintf(k.name, sizeof k.name, "%s", name);
	snprintf(k.priv, sizeof k.priv, CLAIM "%ld.%s", (long)getpid(), name);
	return claim(&k, name) ? 0 : replay_claimed(s, &k);
}

/* The folder's entry names (a snapshot: claims rename entries while we go). */
static char **list_names(int dfd, size_t *n)
{
	int fd = dup(dfd);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	char **names = NULL;
	size_t cap = 0;
	struct dirent *e;
	*n = 0;
	if (!d) {
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	while ((e = readdir(d)) != NULL) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (*n == cap)
			names = gv_realloc(names, (cap = cap ? 2 * cap : 16) * sizeof *names);
		names[(*n)++] = gv_strdup(e->d_name);
	}
	closedir(d);
	return names;
}

int store_pending_replay(struct store *s)
{
	char dir[PATH_MAX];
	if (sto_pending_dir(s, dir, sizeof dir))
		return 0;
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (dfd < 0) {
		struct stat ls;
		int e = errno;
		if (e != ENOENT)   /* absent: nothing was ever kept */
			gv_err("kept bench results: '%s' is not a folder gpuvet can read (%s): not read", dir,
			       !lstat(dir, &ls) && S_ISLNK(ls.st_mode) ? "a symbolic link" : strerror(e));
		return 0;
	}
	size_t n = 0;
	char **names = list_names(dfd, &n);
	int stored = 0;
	for (size_t i = 0; i < n; i++) {
		if (!strncmp(names[i], CLAIM, strlen(CLAIM))) {
			char *back = reclaim_stale(dfd, dir, names[i]);
			free(names[i]);
			names[i] = back ? back : gv_strdup("");
		}
		stored += replay_entry(s, dfd, dir, names[i]);
	}
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	close(dfd);
	rmdir(dir);   /* gone once empty; kept while anything waits */
	return stored;
}
