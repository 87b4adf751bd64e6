/* fuzz_nccl_log.c - NCCL debug output parser (benches/nccl_log.c) on any bytes. */
#include "benches/nccl_log.h"

#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *copy = malloc(size ? size : 1);   /* not NUL-terminated: the parser takes a length */
	if (!copy)
		return 0;
	memcpy(copy, data, size);
	struct nccl_transport t;
	char sum[128], js[512];
	nccl_log_parse(copy, size, &t);
	nccl_transport_summary(&t, sum, sizeof sum);
	if (strlen(sum) >= sizeof sum || strlen(t.intra) >= sizeof t.intra || strlen(t.net) >= sizeof t.net)
		abort();
	json_t *j = json_loads(nccl_transport_json(&t, js, sizeof js), 0, NULL);
	if (!j)
		abort();   /* always valid JSON */
	json_decref(j);
	free(copy);
	return 0;
}
