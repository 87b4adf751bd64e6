/*
 * test_fio_json.c - fio's JSON parsed from real fio 3.33 output captured on
 * this project's build machine (tests/fixtures/fio/README.md), plus the
 * malformed inputs the nvme bench must turn into a clear failure.
 */
#include "benches/fio_json.h"
#include "common/util.h"
#include "tests/unit/t.h"

#include <stdlib.h>

static char *fixture(const char *name, size_t *len)
{
	char path[256];
	snprintf(path, sizeof path, "tests/fixtures/fio/%s", name);
	char *s = gv_read_file(path, len);
	if (!s)
		fprintf(stderr, "cannot read %s\n", path);
	return s;
}

static void test_seqread(void)
{
	size_t n;
	char *s = fixture("seqread_io_uring.json", &n);
	struct fio_result r;
	char err[256];
	CHECK(s && fio_json_parse(s, n, &r, err, sizeof err) == 0);
	CHECK_STR(r.version, "fio-3.33");
	CHECK(r.njobs == 1); /* group_reporting */
	CHECK(r.error == 0);
	CHECK_NEAR(r.read.bw_bytes, 1765120253.0, 0.5);
	CHECK(r.write.bw_bytes == 0);
	CHECK(r.read.io_bytes == 3562012672LL);
	CHECK(r.read.total_ios == 3397);
	CHECK_NEAR(r.read.clat_p50_ns, 18481152.0, 0.5);
	CHECK_NEAR(r.read.clat_p99_ns, 46923776.0, 0.5);
	CHECK(r.runtime_ms == 4028);
	free(s);
}

static void test_seqwrite(void)
{
	size_t n;
	char *s = fixture("seqwrite_io_uring.json", &n);
	struct fio_result r;
	CHECK(s && fio_json_parse(s, n, &r, NULL, 0) == 0);
	CHECK_NEAR(r.write.bw_bytes, 3918582820.0, 0.5);
	CHECK(r.read.bw_bytes == 0);
	CHECK(isnan(r.read.clat_p99_ns)); /* no reads: no read percentiles */
	CHECK(r.write.clat_p99_ns > 0);
	free(s);
}

static void test_randread(void)
{
	size_t n;
	char *s = fixture("randread_libaio.json", &n);
	struct fio_result r;
	CHECK(s && fio_json_parse(s, n, &r, NULL, 0) == 0);
	CHECK_NEAR(r.read.iops, 96486.256872, 1e-3);
	CHECK_NEAR(r.read.clat_p50_ns, 618496.0, 0.5);
	CHECK_NEAR(r.read.clat_p99_ns, 1482752.0, 0.5);
	CHECK(r.read.clat_p50_ns <= r.read.clat_p99_ns);
	free(s);
}

static void test_job_error(void)
{
	size_t n;
	char *s = fixture("error_eisdir.json", &n);
	struct fio_result r;
	CHECK(s && fio_json_parse(s, n, &r, NULL, 0) == 0);
	CHECK(r.error == 21); /* EISDIR */
	CHECK_STR(r.error_job, "seqread");
	free(s);
}

static void test_no_json(void)
{
	/* a missing engine: fio prints its complaint on stdout and no JSON */
	size_t n;
	char *s = fixture("error_no_engine.json", &n);
	struct fio_result r;
	char err[256];
	CHECK(s && fio_json_parse(s, n, &r, err, sizeof err) == -1);
	CHECK_STR(err, "fio printed no json output");
	free(s);
}

static void test_text_before_json(void)
{
	size_t n;
	char *s = fixture("randread_libaio.json", &n);
	char *t = gv_asprintf("note: both iodepth >= 1 and synchronous I/O engine\n%s\ntrailer\n", s);
	struct fio_result r;
	CHECK(fio_json_parse(t, strlen(t), &r, NULL, 0) == 0);
	CHECK_NEAR(r.read.iops, 96486.256872, 1e-3);
	free(t);
	free(s);
}

static void test_malformed(void)
{
	struct fio_result r;
	char err[256];
	const char *trunc = "{\n  \"fio version\" : \"fio-3.33\",\n  \"jobs\" : [ {";
	CHECK(fio_json_parse(trunc, strlen(trunc), &r, err, sizeof err) == -1);
	CHECK(strstr(err, "malformed fio json output") == err);
	const char *nojobs = "{\"fio version\":\"fio-3.33\",\"jobs\":[]}";
	CHECK(fio_json_parse(nojobs, strlen(nojobs), &r, err, sizeof err) == -1);
	CHECK_STR(err, "malformed fio json output: no jobs");
	const char *other = "{\"hello\":1}";
	CHECK(fio_json_parse(other, strlen(other), &r, err, sizeof err) == -1);
	CHECK(fio_json_parse("", 0, &r, err, sizeof err) == -1);
	CHECK(fio_json_parse(NULL, 0, &r, err, sizeof err) == -1);
	/* wrong types are ignored, never trusted */
	const char *types = "{\"fio version\":\"x\",\"jobs\":[{\"error\":\"no\",\"read\":"
			    "{\"bw_bytes\":-5,\"iops\":\"a\",\"clat_ns\":{\"percentile\":"
			    "{\"50.000000\":-1}}}}]}";
	CHECK(fio_json_parse(types, strlen(types), &r, err, sizeof err) == 0);
	CHECK(r.read.bw_bytes == 0 && r.read.iops == 0 && r.error == 0);
	CHECK(isnan(r.read.clat_p50_ns));
}

static void test_several_jobs_sum(void)
{
	const char *two = "{\"fio version\":\"fio-3.33\",\"jobs\":["
		"{\"jobname\":\"a\",\"error\":0,\"job_runtime\":1000,\"read\":{\"bw_bytes\":100,"
		"\"iops\":10,\"total_ios\":5,\"clat_ns\":{\"percentile\":{\"50.000000\":1,"
		"\"99.000000\":2}}}},"
		"{\"jobname\":\"b\",\"error\":5,\"job_runtime\":2000,\"read\":{\"bw_bytes\":50,"
		"\"iops\":5,\"total_ios\":9,\"clat_ns\":{\"percentile\":{\"50.000000\":3,"
		"\"99.000000\":4}}}}]}";
	struct fio_result r;
	CHECK(fio_json_parse(two, strlen(two), &r, NULL, 0) == 0);
	CHECK(r.njobs == 2);
	CHECK_NEAR(r.read.bw_bytes, 150, 0);
	CHECK_NEAR(r.read.iops, 15, 0);
	CHECK(r.read.total_ios == 14);
	CHECK_NEAR(r.read.clat_p99_ns, 4, 0); /* from the job with the most I/Os */
	CHECK(r.error == 5);
	CHECK_STR(r.error_job, "b");
	CHECK(r.runtime_ms == 2000);
}

TEST_MAIN(T(test_seqread), T(test_seqwrite), T(test_randread), T(test_job_error),
	  T(test_no_json), T(test_text_before_json), T(test_malformed), T(test_several_jobs_sum))
