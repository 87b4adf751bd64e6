/*
 * fuzz_policy.c - the acceptance-policy parser (libyaml document API +
 * our validation) on arbitrary bytes; a policy that parses is evaluated
 * against a small fixed fingerprint.  Must never crash or leak, and every
 * refusal must name a line ("line N: ...").
 */
#include "judge/policy.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char fp_text[] =
	"{\"schema\":\"gpuvet.fingerprint/1\",\"run\":{\"uuid\":\"u\",\"gpu_model\":\"H100-SXM\",\"gpu_count\":1},"
	"\"inventory\":{\"gpus\":[{\"index\":0,\"pcie\":{\"gen_max\":5,\"width_max\":16}}]},"
	"\"benches\":[{\"name\":\"soak\",\"status\":\"ok\"}],"
	"\"metrics\":[{\"name\":\"gemm.bf16.pct_of_peak\",\"gpu\":-1,\"value\":70,\"unit\":\"%\"}],"
	"\"samples\":[{\"series\":\"soak.clock_events.mask\",\"gpu\":0,\"points\":[[0,72],[1,8]]}],"
	"\"flags\":[],\"verdicts\":[]}";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static json_t *fp;
	struct policy *p = NULL;
	char err[512] = "";
	if (!fp && !(fp = json_loads(fp_text, 0, NULL)))
		abort();
	if (policy_parse((const char *)data, size, "fuzz", &p, err, sizeof err)) {
		if (p || strncmp(err, "line ", 5))
			abort();
		return 0;
	}
	json_t *res = NULL;
	json_t *fleet = json_array();
	json_array_append(fleet, fp);
	policy_evaluate(p, fp, fleet, &res);
	if (!res)
		abort();
	json_decref(res);
	json_decref(fleet);
	policy_free(p);
	return 0;
}
