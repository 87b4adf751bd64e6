/* fuzz_fio_json.c - fio's JSON output parser (benches/fio_json.c) on any bytes. */
#include "benches/fio_json.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* not NUL-terminated on purpose: the parser takes a length */
	char *copy = malloc(size ? size : 1);
	if (!copy)
		return 0;
	memcpy(copy, data, size);
	struct fio_result r;
	char err[256];
	if (fio_json_parse(copy, size, &r, err, sizeof err) == 0) {
		if (r.njobs < 1 || r.read.bw_bytes < 0 || r.write.iops < 0)
			abort();
		if (!isnan(r.read.clat_p50_ns) && r.read.clat_p50_ns < 0)
			abort();
	} else if (!err[0] || strlen(err) >= sizeof err) {
		abort();
	}
	free(copy);
	return 0;
}
