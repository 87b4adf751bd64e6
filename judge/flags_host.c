/*
 * flags_host.c - HOST_STARVED: the host cannot feed its GPUs (see flags.h).
 *
 * What one GPU consumes is taken from a common training job whose data
 * loader runs on the CPU: ResNet-50 v1.5 on ImageNet with mixed precision.
 * NVIDIA measured it at 15977 img/s on a DGX A100 (8x A100 80GB), 1997 img/s
 * per GPU (FLAG_HOST_RN50_A100_IPS; DeepLearningExamples,
 * PyTorch/Classification/ConvNets/README.md, "Training performance: NVIDIA
 * DGX A100 (8x A100 80GB)", pytorch-20.12 container).  Another model's rate
 * is estimated from that figure scaled by the smaller of its dense FP16
 * tensor peak ratio and its memory bandwidth ratio to the A100 80GB
 * (common/gpus.c), since the job is bound by one or the other:
 *
 *   need_ips(model) = 1997 x min(fp16_peak / 312, mem_bw / 2039)
 *
 * (Check: V100 SXM2 gives 1997 x min(125/312, 900/2039) = 800 img/s; the same
 * page measured 7608 / 8 = 951 img/s on a DGX-1, so the estimate errs low,
 * never raising the flag on a host that keeps up.)
 *
 *   decode:  host.decode.images_per_s per GPU < need_ips
 *   memory:  triad GB/s per GPU on the GPUs' node < need_ips x FLAG_HOST_BYTES_PER_IMAGE / 1e9
 *
 * Decode alone is an upper bound on what the loader delivers (no crop,
 * no resize, no normalisation), so a host flagged here is starved for sure.
 */
#include "judge/flags.h"
#include "judge/flags_int.h"
#include "common/gpus.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

double flags_host_need_ips(const struct gpu_ref *ref)
{
	const struct gpu_ref *a100 = gpu_ref_find("A100-80-SXM");
	if (!ref || !a100 || !(a100->peak_tflops[GPU_FP16] > 0) || !(a100->mem_bw_gbps > 0))
		return -1;
	double fc = ref->peak_tflops[GPU_FP16] / a100->peak_tflops[GPU_FP16];
	double fm = ref->mem_bw_gbps / a100->mem_bw_gbps;
	double f = fc < fm ? fc : fm;
	return f > 0 ? FLAG_HOST_RN50_A100_IPS * f : -1;
}

/* Images/s per GPU: the bench's own per-GPU figure, else the instance figure over the run's GPUs. */
static int decode_per_gpu(struct fprun *r, int ngpu, double *v)
{
	double ips;
	if (!fprun_value(r, "host.decode.images_per_s_per_gpu", -1, v))
		return 0;
	if (ngpu > 0 && !fprun_value(r, "host.decode.images_per_s", -1, &ips)) {
		*v = ips / ngpu;
		return 0;
	}
	return -1;
}

/* Triad GB/s per GPU of the node the headline was measured on (its GPUs), else over all GPUs. */
static int membw_per_gpu(struct fprun *r, int ngpu, double *v, int *on_node)
{
	const struct fp_metric *m = fprun_metric(r, "host.membw.triad.gbps", -1);
	double k;
	if (!m || !isfinite(m->value) || ngpu <= 0)
		return -1;
	const struct fp_kv *kv = fp_obj_get(&m->params, "gpus_on_node");
	*on_node = kv && kv->type == FPV_NUM && kv->is_int && !fp_obj_num(&m->params, "gpus_on_node", &k) && k > 0 &&
		   k <= ngpu ? (int)k : ngpu;
	*v = m->value / *on_node;
	return 0;
}

void flags_host_starved(struct fprun *r, json_t *out)
{
	const struct gpu_ref *ref = r->d.model;
	int ngpu = r->d.ngpu, on_node = 0;
	double need = flags_host_need_ips(ref), dec = 0, bw = 0;
	if (!(need > 0))
		return;
	int dec_ok = !decode_per_gpu(r, ngpu, &dec), bw_ok = !membw_per_gpu(r, ngpu, &bw, &on_node);
	double need_bw = need * FLAG_HOST_BYTES_PER_IMAGE / 1e9;
	int dec_low = dec_ok && dec < need, bw_low = bw_ok && bw < need_bw;
	if (!dec_low && !bw_low)
		return;
	char msg[512];
	int n = 0;
	if (dec_low)
		n += snprintf(msg + n, sizeof msg - (size_t)n,
			      "jpeg decode %.0f images/s per gpu, under the %.0f images/s a %s gpu takes training resnet-50",
			      dec, need, ref->key);
	if (bw_low && n < (int)sizeof msg)
		snprintf(msg + n, sizeof msg - (size_t)n,
			 "%smemory bandwidth %.1f GB/s per gpu (triad, %d gpu(s) on the node), under the %.1f GB/s its data loader moves",
			 dec_low ? "; " : "", bw, on_node, need_bw);
	json_t *ev = json_pack("{s:i,s:s,s:f,s:f,s:s,s:{s:f,s:f,s:s}}", "gpu", -1, "reference", ref->key,
			       "need_images_per_s", need, "need_membw_gbps", need_bw, "source",
			       "NVIDIA DeepLearningExamples ResNet-50 v1.5 AMP, DGX A100: 1997 img/s per A100 80GB, "
			       "scaled by min(fp16 peak, memory bandwidth) ratio",
			       "thresholds", "FLAG_HOST_RN50_A100_IPS", FLAG_HOST_RN50_A100_IPS,
			       "FLAG_HOST_BYTES_PER_IMAGE", FLAG_HOST_BYTES_PER_IMAGE, "rule",
			       "per gpu value < need");
	if (dec_ok)
		json_object_set_new(ev, "decode_images_per_s_per_gpu", json_real(dec));
	if (bw_ok) {
		json_object_set_new(ev, "membw_triad_gbps_per_gpu", json_real(bw));
		json_object_set_new(ev, "gpus_on_node", json_integer(on_node));
	}
	flags_add(out, "HOST_STARVED", "warning", ev, "%s", msg);
}
