/*
 * fuzz_policy.c - the acceptance-policy parser (libyaml document API +
 * our validation) on arbitrary bytes; a policy that parses is evaluated
 * against a small fixed fingerprint, and its fabric rules judge a small
 * fixed cluster run (judge/cluster.h: a slow node, a slow link, a failed
 * pair).  Must never crash or leak, and every refusal must name a line
 * ("line N: ...").
 */
#include "judge/policy.h"
#include "judge/cluster.h"

#include <math.h>

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
	struct gv_cluster *c = gv_cluster_new(5);
	if (!c || cluster_schedule(5, CLUSTER_PAIRS_ALL, &c->pairs, &c->npairs, &c->nrounds))
		abort();
	snprintf(c->transport, sizeof c->transport, "efa");
	for (int i = 0; i < 5; i++) {
		c->nodes[i].state = GV_NODE_OK;
		c->nodes[i].verdict = 0;
		c->nodes[i].ngpus = 8;
		snprintf(c->nodes[i].instance_type, sizeof c->nodes[i].instance_type, "p5.48xlarge");
	}
	for (size_t k = 0; k < c->npairs; k++) {
		struct gv_cluster_pair *q = &c->pairs[k];
		double f = q->a == 2 || q->b == 2 || (q->a == 0 && q->b == 4) ? 0.2 : 1;
		q->state = k == 3 ? GV_PAIR_FAILED : GV_PAIR_MEASURED;
		q->gbps_ab = q->gbps_ba = 12 * f;
	}
	if (cluster_analyse(c, p, err, sizeof err) || (c->verdict != 1 && c->verdict != 3 && c->verdict != 0))
		abort();
	gv_cluster_free(c);
	policy_free(p);
	return 0;
}
