/*
 * collect.c - `results import` and `results merge` in bulk (collect.h).
 *
 * Import streams: common/jsplit.c finds each element of an array and only
 * that element is parsed, checked (results/fp_check.c) and stored, so a file
 * of 10k fingerprints takes the memory of a few: a thread splits and parses
 * up to JSPLIT_AHEAD elements ahead while this one is stored.  Fingerprints are written in
 * batches of about COLLECT_BATCH per transaction (one WAL commit each), each
 * file or source store inside a savepoint: a bad element undoes its whole
 * file, the files before it stay stored, and the command exits 2.
 */
#include "runners/collect.h"
#include "runners/collect_paths.h"
#include "runners/cli.h"
#include "runners/naming.h"
#include "runners/hooks.h"
#include "common/jtree.h"
#include "common/jsplit.h"
#include "common/util.h"
#include "results/store.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * What a file or source store added is said only once its batch is committed:
 * until then its lines wait in lines, its name in names.  A commit that
 * fails names every file it undid, so no file reported imported is lost.
 */
struct tally {
	long added, dup, since_commit;
	char *lines, *names;
	size_t nlines, nnames;
	FILE *fl, *fn;
};

static void tally_open(struct tally *t)
{
	memset(t, 0, sizeof *t);
	t->fl = open_memstream(&t->lines, &t->nlines);
	t->fn = open_memstream(&t->names, &t->nnames);
}

/* A line to print, and the file it is about, once the batch holding it is committed. */
static void tally_pending(struct tally *t, const char *file, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void tally_pending(struct tally *t, const char *file, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	if (t->fl && !gv_quiet)
		vfprintf(t->fl, fmt, ap);
	va_end(ap);
	if (t->fn)
		fprintf(t->fn, "%s'%s'", ftell(t->fn) > 0 ? ", " : "", file);
}

/* Empties what waits: printed when committed (say), dropped otherwise. */
static void tally_flush(struct tally *t, int say)
{
	if (t->fl && t->fn) {
		fflush(t->fl);
		if (say && t->nlines)
			fwrite(t->lines, 1, t->nlines, stdout);
		rewind(t->fl);
		rewind(t->fn);
		fflush(t->fl);
		fflush(t->fn);
		t->nlines = t->nnames = 0;
		if (t->lines)
			t->lines[0] = 0;
		if (t->names)
			t->names[0] = 0;
	}
}

static void tally_close(struct tally *t)
{
	if (t->fl)
		fclose(t->fl);
	if (t->fn)
		fclose(t->fn);
	free(t->lines);
	free(t->names);
}

/* Commits the batch (and opens the next when again): its files are said, or named as undone. */
static int batch_commit(struct store *s, struct tally *t, int again)
{
	t->since_commit = 0;
	if (store_batch_end(s, 1)) {
		fflush(t->fn);
		gv_err("%s; not stored: %s", store_errmsg(s), t->nnames && t->names ? t->names : "nothing");
		tally_flush(t, 0);
		return -1;
	}
	tally_flush(t, 1);
	if (again && store_batch_begin(s)) {
		gv_err("%s", store_errmsg(s));
		return -1;
	}
	return 0;
}

/* Commits the batch when it has grown past COLLECT_BATCH runs and opens the next. */
static int maybe_commit(struct store *s, struct tally *t)
{
	return t->since_commit < COLLECT_BATCH ? 0 : batch_commit(s, t, 1);
}

/* The run's GPU count as the file says it; -1 when absent or absurd (fp_check refuses it later). */
static int gpu_count_of(const struct jtree *jt, uint32_t run)
{
	long long n = jt_int(jt, jt_get(jt, run, "gpu_count"));
	return n >= 0 && n <= 4096 ? (int)n : -1;
}

/* One element of a file (parsed, or kind -2 with the parse error); 0 stored or already present,
 * -1 with the message printed. */
static int import_one(struct store *s, const char *path, int is_array, struct jsplit_item *it,
		      struct naming *nm, struct tally *t)
{
	char where[48] = "";
	if (is_array)
		snprintf(where, sizeof where, ": element %zu", it->index);
	if (it->kind == -2) {
		gv_err("cannot import '%s'%s: line %d: %s", path, where, it->t->line, it->t->err);
		jsplit_item_free(it);
		return -1;
	}
	/*
	 * The fingerprint is checked (results/fp_check.c) and stored, then the name it carries is
	 * checked against the catalog (judge/identity.h): a refusal fails the element, and the
	 * caller undoes its whole file, so nothing of it stays.
	 */
	int64_t id;
	const struct jtree *jt = it->t;
	uint32_t run = jt_get(jt, 1, "run");
	/* its rows were built in the parse thread (prep_rows); the store takes them */
	struct store_import_rows *rows = it->made ? it->made : store_import_prepare(jt);
	it->made = NULL;
	int r = store_import_prepared(s, jt, rows, &id);
	char why[512];
	const char *prov = NULL;
	if (r == STORE_OK &&
	    naming_apply(nm, jt_str(jt, jt_get(jt, run, "provider")), jt_str(jt, jt_get(jt, run, "instance_type")),
			 jt_str(jt, jt_get(jt, run, "region")), jt_str(jt, jt_get(jt, run, "gpu_model")),
			 gpu_count_of(jt, run), NULL, &prov, why, sizeof why)) {
		gv_err("cannot import '%s'%s: %s", path, where, why);
		jsplit_item_free(it);
		return -1;
	}
	jsplit_item_free(it);
	if (r == STORE_OK && naming_any(nm) && store_tag_run(s, id, nm->custom || nm->provider ? prov : NULL, nm->sku,
							     nm->region))
		r = STORE_ERR;
	if (r == STORE_DUP) {
		t->dup++;
		if (!gv_quiet && !is_array)
			printf("%s: %s\n", path, store_errmsg(s));   /* nothing written: nothing to undo */
		return 0;
	}
	if (r) {
		gv_err("cannot import '%s'%s: %s", path, where, store_errmsg(s));
		return -1;
	}
	t->added++;
	t->since_commit++;
	if (!is_array)
		tally_pending(t, path, "%s: imported as run %lld\n", path, (long long)id);
	return 0;
}

/* In the parse-ahead thread: each fingerprint checked and turned into its rows (results/import_rows.h). */
static void *prep_rows(const struct jtree *t, void *arg)
{
	(void)arg;
	return store_import_prepare(t);
}

static void drop_rows(void *rows)
{
	store_import_rows_free(rows);
}

static int import_file(struct store *s, const char *path, struct naming *nm, struct tally *t)
{
	FILE *f = strcmp(path, "-") ? fopen(path, "re") : stdin;
	if (!f) {
		gv_err("cannot import '%s': %s", path, strerror(errno));
		return -1;
	}
	if (store_batch_mark(s)) {
		gv_err("%s", store_errmsg(s));
		if (f != stdin)
			fclose(f);
		return -1;
	}
	/* the next elements are split, parsed, checked and made rows in a thread while this one is stored */
	struct jsplit_ahead a;
	struct jsplit_item it;
	const struct jsplit_prep prep = { prep_rows, drop_rows, NULL };
	jsplit_ahead_start(&a, f, &prep);
	long added0 = t->added, dup0 = t->dup;
	int r, rc = 0;
	while ((r = jsplit_ahead_next(&a, &it)) == 1 || r == -2)
		if ((rc = import_one(s, path, a.j.is_array, &it, nm, t)))
			break;
	if (r == -1) {
		gv_err("cannot import '%s': %s", path, a.j.err);
		rc = -1;
	}
	int was_array = a.j.is_array;
	jsplit_ahead_stop(&a);
	if (f != stdin)
		fclose(f);
	if (rc) {
		store_batch_unmark(s, 0);
		t->since_commit -= t->added - added0;
		t->added = added0;
		t->dup = dup0;
		return -1;
	}
	if (store_batch_unmark(s, 1)) {
		gv_err("%s", store_errmsg(s));
		return -1;
	}
	if (was_array)
		tally_pending(t, path, "%s: %ld run(s) imported, %ld already present\n", path, t->added - added0,
			      t->dup - dup0);
	return 0;
}

/*
 * Given several files or a directory, only fingerprints are imported: each other file is named,
 * with why it was skipped (collect_paths.h); one file named alone is imported or refused, as ever.
 */
int collect_import(struct store *s, int n, char **args, struct naming *nm)
{
	if (n < 1)
		return gv_usage_error("results", "import needs a fingerprint file or a directory");
	struct collect_paths cp;
	if (collect_paths_expand(n, args, &cp))
		return GV_EXIT_USAGE;
	int lenient = cp.n > 1 || cp.dirs, rc = 0;
	long skipped = 0;
	struct tally t;
	if (naming_open(nm, s)) {
		collect_paths_free(&cp);
		return GV_EXIT_USAGE;
	}
	if (store_batch_begin(s)) {
		gv_err("%s", store_errmsg(s));
		naming_close(nm);
		collect_paths_free(&cp);
		return GV_EXIT_USAGE;
	}
	tally_open(&t);
	for (size_t i = 0; i < cp.n && !rc; i++) {
		char why[160];
		if (cp.why[i] || (lenient && !collect_paths_is_fingerprint(cp.path[i], why, sizeof why))) {
			if (cp.why[i])
				snprintf(why, sizeof why, "%s", cp.why[i]);
			skipped++;
			if (!gv_quiet && t.fl)   /* in order with the files' lines, printed with them */
				fprintf(t.fl, "%s: skipped: %s\n", cp.path[i], why);
			continue;
		}
		rc = import_file(s, cp.path[i], nm, &t) || maybe_commit(s, &t);
	}
	naming_close(nm);
	/* what was imported before a bad file stays stored, unless the failure undid the batch (said) */
	if (batch_commit(s, &t, 0))
		rc = -1;
	if (!rc && skipped == (long)cp.n) {
		gv_err("no gpuvet fingerprint among the %zu file(s) given", cp.n);
		rc = -1;
	} else if (!rc && !gv_quiet && cp.n > 1) {
		printf("total: %ld run(s) imported, %ld already present", t.added, t.dup);
		printf(skipped ? ", %ld file(s) skipped (not fingerprints)\n" : "\n", skipped);
	}
	tally_close(&t);
	collect_paths_free(&cp);
	return rc ? GV_EXIT_USAGE : 0;
}

/* ", N still running (merge again when done)" for the merge line. */
static const char *live_note(int live)
{
	static char buf[64];
	snprintf(buf, sizeof buf, ", %d still running (merge again when done)", live);
	return buf;
}

static int merge_store(struct store *s, const char *path, struct tally *t)
{
	int added, skipped, live;
	if (store_batch_mark(s)) {
		gv_err("%s", store_errmsg(s));
		return -1;
	}
	int cadded = 0, cskipped = 0;   /* cluster runs (issue 49): after the runs their nodes name */
	/* each run derived as it is imported (store_set_derive): its flags its values earn, not the other store's */
	if (store_merge(s, path, NULL, &added, &skipped, &live) ||
	    store_merge_clusters(s, path, &cadded, &cskipped)) {
		gv_err("merge of '%s' stopped: %s", path, store_errmsg(s));
		store_batch_unmark(s, 0);
		return -1;
	}
	if (store_batch_unmark(s, 1)) {
		gv_err("%s", store_errmsg(s));
		return -1;
	}
	t->added += added;
	t->dup += skipped;
	t->since_commit += added;
	char clusters[96] = "";
	if (cadded || cskipped)
		snprintf(clusters, sizeof clusters, "; %d cluster run(s) added, %d already present", cadded, cskipped);
	tally_pending(t, path, "%s: %d run(s) added, %d already present%s%s\n", path, added, skipped,
		      live ? live_note(live) : "", clusters);
	return 0;
}

int collect_merge(struct store *s, int n, char **sources)
{
	if (n < 1)
		return gv_usage_error("results", "merge needs at least one database");
	struct tally t;
	int rc = 0;
	tally_open(&t);
	for (int i = 0; i < n && !rc; i++) {
		if (!strncmp(sources[i], "s3://", 5)) {
			int added = 0, skipped = 0;
			rc = collect_merge_s3(s, sources[i], &added, &skipped) ? -1 : 0;
			t.added += added;
			t.dup += skipped;
			continue;
		}
		if (store_batch_begin(s)) {
			gv_err("%s", store_errmsg(s));
			tally_close(&t);
			return GV_EXIT_USAGE;
		}
		/* consecutive stores share a batch until it holds COLLECT_BATCH runs */
		for (; i < n && strncmp(sources[i], "s3://", 5); i++)
			if ((rc = merge_store(s, sources[i], &t) || maybe_commit(s, &t)))
				break;
		i--;
		if (batch_commit(s, &t, 0)) {
			tally_close(&t);
			return GV_EXIT_USAGE;
		}
	}
	if (!rc && !gv_quiet && n > 1)
		printf("total: %ld run(s) added, %ld already present\n", t.added, t.dup);
	tally_close(&t);
	return rc ? GV_EXIT_USAGE : 0;
}
