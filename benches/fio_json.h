/*
 * fio_json.h - reads the JSON that `fio --output-format=json` prints
 * (fio 3.x: "fio version", "jobs"[] with "read"/"write" blocks, "clat_ns"
 * percentiles).  Used by the nvme bench; parsing is separate so it can be
 * tested on real fio output (tests/fixtures/fio/) and fuzzed.
 */
#ifndef GPUVET_FIO_JSON_H
#define GPUVET_FIO_JSON_H

#include <stddef.h>

/* One direction (read or write) summed over the job entries. */
struct fio_dir {
	double bw_bytes;     /* bytes per second, summed over jobs */
	double iops;         /* summed over jobs */
	long long io_bytes;  /* bytes moved, summed */
	long long total_ios; /* I/Os completed, summed */
	/*
	 * Completion-latency percentiles in nanoseconds, NAN when fio gave none.
	 * With --group_reporting there is one job entry and these are exact;
	 * with several entries they come from the entry with the most I/Os.
	 */
	double clat_p50_ns, clat_p99_ns;
	double clat_mean_ns;
};

struct fio_result {
	char version[32];       /* "fio-3.33" */
	int njobs;              /* job entries in the output */
	int error;              /* first non-zero job "error" (an errno), else 0 */
	char error_job[64];     /* that job's name */
	double runtime_ms;      /* longest job's "job_runtime" (ms) */
	struct fio_dir read, write;
};

/*
 * Parses fio's JSON from text[0..len) (not necessarily NUL-terminated).
 * Text that fio prints before the JSON document (notes, warnings) and after
 * it is ignored.  0 on success; -1 with a one-line lowercase message in err
 * when there is no JSON document or it is not fio's.
 */
int fio_json_parse(const char *text, size_t len, struct fio_result *out, char *err,
		   size_t errlen);

#endif
