/*
 * test_store_io_faults.c - the store under failing I/O, as SQLite's own
 * tests do it: a VFS shim over the real one whose N-th write, sync or
 * truncate fails (SQLITE_IOERR, or SQLITE_FULL for a full disk), looped
 * over N = 1, 2, ... for a whole run written the way the harness writes it
 * (begin, one transaction per bench, finish) and for an import.  After each
 * N, through the real VFS: PRAGMA integrity_check is ok, every run
 * committed before is still there, and a bench whose commit returned OK is
 * there too.  The same for a cluster run (issue 49): stored whole or not at
 * all, the ones stored before kept.  (The allocator that fails at call N is
 * in test_store.c and test_store_cluster.c.)
 */
#include "tests/unit/t.h"
#include "results/store.h"
#include "common/cluster.h"

#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- the shim ---- */

static sqlite3_vfs *real_vfs;
static sqlite3_vfs shim_vfs;
static sqlite3_io_methods shim_io;
static const sqlite3_io_methods *real_io;
static long fail_at = -1, io_calls;
static int fail_code = SQLITE_IOERR_WRITE;

struct shim_file {
	sqlite3_file base;
	sqlite3_file *real;   /* follows this struct in the same allocation */
};

static int tick(void)
{
	return fail_at >= 0 && ++io_calls >= fail_at; /* from N on, as a dead disk */
}

static int shim_close(sqlite3_file *f)
{
	return ((struct shim_file *)f)->real->pMethods->xClose(((struct shim_file *)f)->real);
}

static int shim_read(sqlite3_file *f, void *b, int n, sqlite3_int64 off)
{
	sqlite3_file *r = ((struct shim_file *)f)->real;
	return r->pMethods->xRead(r, b, n, off);
}

static int shim_write(sqlite3_file *f, const void *b, int n, sqlite3_int64 off)
{
	sqlite3_file *r = ((struct shim_file *)f)->real;
	if (tick())
		return fail_code;
	return r->pMethods->xWrite(r, b, n, off);
}

static int shim_truncate(sqlite3_file *f, sqlite3_int64 size)
{
	sqlite3_file *r = ((struct shim_file *)f)->real;
	if (tick())
		return SQLITE_IOERR_TRUNCATE;
	return r->pMethods->xTruncate(r, size);
}

static int shim_sync(sqlite3_file *f, int flags)
{
	sqlite3_file *r = ((struct shim_file *)f)->real;
	if (tick())
		return SQLITE_IOERR_FSYNC;
	return r->pMethods->xSync(r, flags);
}

#define FWD(name, proto, args) \
	static int shim_##name proto { sqlite3_file *r = ((struct shim_file *)f)->real; \
		return r->pMethods->x##name args; }
FWD(FileSize, (sqlite3_file *f, sqlite3_int64 *p), (r, p))
FWD(Lock, (sqlite3_file *f, int l), (r, l))
FWD(Unlock, (sqlite3_file *f, int l), (r, l))
FWD(CheckReservedLock, (sqlite3_file *f, int *o), (r, o))
FWD(FileControl, (sqlite3_file *f, int op, void *a), (r, op, a))
FWD(SectorSize, (sqlite3_file *f), (r))
FWD(DeviceCharacteristics, (sqlite3_file *f), (r))
FWD(ShmMap, (sqlite3_file *f, int i, int sz, int ext, void volatile **pp), (r, i, sz, ext, pp))
FWD(ShmLock, (sqlite3_file *f, int off, int n, int fl), (r, off, n, fl))
FWD(ShmUnmap, (sqlite3_file *f, int del), (r, del))
FWD(Fetch, (sqlite3_file *f, sqlite3_int64 off, int n, void **pp), (r, off, n, pp))
FWD(Unfetch, (sqlite3_file *f, sqlite3_int64 off, void *p), (r, off, p))

static void shim_ShmBarrier(sqlite3_file *f)
{
	sqlite3_file *r = ((struct shim_file *)f)->real;
	r->pMethods->xShmBarrier(r);
}

static int shim_open(sqlite3_vfs *vfs, const char *name, sqlite3_file *f, int flags, int *out)
{
	(void)vfs;
	struct shim_file *sf = (struct shim_file *)f;
	sf->real = (sqlite3_file *)&sf[1];
	int rc = real_vfs->xOpen(real_vfs, name, sf->real, flags, out);
	if (rc != SQLITE_OK) {
		f->pMethods = NULL;
		return rc;
	}
	if (!real_io) {
		real_io = sf->real->pMethods;
		shim_io = (sqlite3_io_methods){
			.iVersion = real_io->iVersion, .xClose = shim_close, .xRead = shim_read,
			.xWrite = shim_write, .xTruncate = shim_truncate, .xSync = shim_sync,
			.xFileSize = shim_FileSize, .xLock = shim_Lock, .xUnlock = shim_Unlock,
			.xCheckReservedLock = shim_CheckReservedLock, .xFileControl = shim_FileControl,
			.xSectorSize = shim_SectorSize, .xDeviceCharacteristics = shim_DeviceCharacteristics,
			.xShmMap = shim_ShmMap, .xShmLock = shim_ShmLock, .xShmBarrier = shim_ShmBarrier,
			.xShmUnmap = shim_ShmUnmap, .xFetch = shim_Fetch, .xUnfetch = shim_Unfetch,
		};
	}
	f->pMethods = &shim_io;
	return SQLITE_OK;
}

static void shim_install(void)
{
	real_vfs = sqlite3_vfs_find(NULL);
	shim_vfs = *real_vfs;
	shim_vfs.zName = "gpuvet-faulty";
	shim_vfs.szOsFile = (int)sizeof(struct shim_file) + real_vfs->szOsFile;
	shim_vfs.xOpen = shim_open;
	sqlite3_vfs_register(&shim_vfs, 1); /* the default: the store opens through it */
}

static void shim_remove(void)
{
	sqlite3_vfs_unregister(&shim_vfs);
	sqlite3_vfs_register(real_vfs, 1);
}

/* ---- checks through the real VFS ---- */

static char dir[256];

static const char *tmp_db(const char *name)
{
	static char path[512];
	if (!dir[0]) {
		const char *t = getenv("TMPDIR");
		snprintf(dir, sizeof dir, "%s/gpuvet-test-io-XXXXXX", t ? t : "/tmp");
		if (!mkdtemp(dir))
			abort();
	}
	snprintf(path, sizeof path, "%s/%s", dir, name);
	return path;
}

/* count(*) of a query through the real VFS, -1 on error; integrity checked first. */
static int count_sound(const char *path, const char *sql)
{
	sqlite3 *db;
	int n = -1;
	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, real_vfs->zName) != SQLITE_OK)
		return -1;
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &st, NULL) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW && !strcmp((const char *)sqlite3_column_text(st, 0), "ok")) {
		sqlite3_finalize(st);
		if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
			n = sqlite3_column_int(st, 0);
	}
	sqlite3_finalize(st);
	sqlite3_close(db);
	return n;
}

/* One run as the harness writes it; how many benches were committed (STORE_OK). */
static int write_run(const char *path, int *finished)
{
	struct store *s;
	int committed = 0;
	*finished = 0;
	if (store_open(path, &s) != STORE_OK)
		return 0;
	struct run_info ri = { .profile = "quick", .gpuvet_version = "t", .provider = "aws",
			       .instance_type = "p5.48xlarge", .region = "us-east-1" };
	int64_t id;
	if (store_begin_run(s, &ri, &id) == STORE_OK) {
		for (int b = 0; b < 3; b++) {
			char name[16];
			snprintf(name, sizeof name, "b%d", b);
			if (store_bench_begin(s, id, name) != STORE_OK)
				break;
			int ok = store_put_metric(s, id, name, "x.value.count", -1, b, "count", NULL) == STORE_OK;
			for (int part = 0; ok && part < 5; part++) {   /* 50 points in 5 appends */
				double xy[20];
				for (int i = 0; i < 10; i++) {
					xy[2 * i] = part * 10 + i;
					xy[2 * i + 1] = 2.0 * (part * 10 + i);
				}
				ok = store_put_series(s, id, name, "x.series.count", 0, xy, 10) == STORE_OK;
			}
			if (!ok) {
				store_bench_abort(s);
				break;
			}
			if (store_bench_end(s, id, name, "ok", NULL, 0.1, NULL) != STORE_OK)
				break;
			committed++;
		}
		*finished = committed == 3 && store_finish_run(s, id, "complete") == STORE_OK;
	}
	store_close(s);
	return committed;
}

static void loop(int code)
{
	const char *p = tmp_db(code == SQLITE_FULL ? "full.db" : "ioerr.db");
	int fin;
	fail_code = code;
	CHECK(write_run(p, &fin) == 3 && fin); /* the baseline: one complete run */
	int base_runs = 1, base_benches = 3, survived = 0;
	for (long n = 1; n < 2000; n++) {
		io_calls = 0;
		fail_at = n;
		int committed = write_run(p, &fin);
		fail_at = -1;
		long used = io_calls;
		int runs = count_sound(p, "SELECT count(*) FROM runs WHERE status='complete'");
		int benches = count_sound(p, "SELECT count(*) FROM benches");
		CHECK(runs >= base_runs);               /* sound, and no complete run lost */
		CHECK(benches >= base_benches + committed); /* every committed bench kept */
		if (runs < base_runs || benches < base_benches + committed) {
			fprintf(stderr, "  at I/O %ld: runs %d (before %d), benches %d (before %d + %d)\n", n, runs,
				base_runs, benches, base_benches, committed);
			break;
		}
		base_runs = runs;
		base_benches = benches;
		survived++;
		if (fin && used < n)
			break; /* the whole run needed fewer I/O calls than n: every point was covered */
	}
	fprintf(stderr, "%s: %d failure points covered\n", code == SQLITE_FULL ? "full disk" : "i/o error", survived);
	CHECK(survived > 10);
}

static void test_run_under_io_errors(void)
{
	loop(SQLITE_IOERR_WRITE);
}

static void test_run_on_a_full_disk(void)
{
	loop(SQLITE_FULL);
}

/* A three-node cluster run of uuid ...-N, every pair measured; STORE_OK or the put's code. */
static int put_cluster(const char *path, long n)
{
	struct store *s;
	struct gv_cluster *c = gv_cluster_new(3);
	if (!c)
		return STORE_ERR;
	snprintf(c->uuid, sizeof c->uuid, "c1a5e7e1-0000-4000-8000-%012d", (int)n);
	snprintf(c->started_at, sizeof c->started_at, "2026-11-27T10:00:00Z");
	c->pairs = calloc(3, sizeof *c->pairs);
	for (int a = 0; c->pairs && a < 3; a++)
		for (int b = a + 1; b < 3; b++)
			c->pairs[c->npairs++] = (struct gv_cluster_pair){ .a = a, .b = b, .round = a + b - 1,
									  .gbps_ab = 11.8, .gbps_ba = 11.6, .lat_us = 28.5,
									  .nccl_gbps_ab = NAN, .nccl_gbps_ba = NAN };
	int rc = store_open(path, &s);
	if (rc == STORE_OK) {
		rc = store_put_cluster(s, c);
		store_close(s);
	}
	gv_cluster_free(c);
	return rc;
}

static void cluster_loop(int code)
{
	const char *p = tmp_db(code == SQLITE_FULL ? "cfull.db" : "cioerr.db");
	fail_code = code;
	CHECK(put_cluster(p, 0) == STORE_OK);
	int stored = 1, survived = 0;
	for (long n = 1; n < 2000; n++) {
		io_calls = 0;
		fail_at = n;
		int rc = put_cluster(p, n);
		fail_at = -1;
		long used = io_calls;
		stored += rc == STORE_OK;
		int clusters = count_sound(p, "SELECT count(*) FROM clusters");
		int pairs = count_sound(p, "SELECT count(*) FROM cluster_pairs");
		CHECK(clusters == stored && pairs == 3 * stored);   /* sound; each whole; none lost */
		if (clusters != stored || pairs != 3 * stored) {
			fprintf(stderr, "  at I/O %ld: %d cluster runs and %d pairs, %d stored\n", n, clusters, pairs, stored);
			break;
		}
		survived++;
		if (rc == STORE_OK && used < n)
			break;   /* the put needed fewer I/O calls than n */
	}
	fprintf(stderr, "cluster, %s: %d failure points covered\n", code == SQLITE_FULL ? "full disk" : "i/o error",
		survived);
	CHECK(survived > 5);
}

static void test_cluster_under_io_errors(void)
{
	cluster_loop(SQLITE_IOERR_WRITE);
}

static void test_cluster_on_a_full_disk(void)
{
	cluster_loop(SQLITE_FULL);
}

static void setup(void)
{
	shim_install();
}

static void teardown(void)
{
	shim_remove();
}

TEST_MAIN(T(setup), T(test_run_under_io_errors), T(test_run_on_a_full_disk), T(test_cluster_under_io_errors),
	  T(test_cluster_on_a_full_disk), T(teardown))
