/* fpq.c - read-only queries on a fingerprint; see fpq.h. */
#include "results/fpq.h"
#include "common/gpus.h"
#include "common/gpu_evidence.h"
#include "common/mindex.h"
#include "common/stats.h"
#include "common/util.h"

#include <limits.h>
#include <stdio.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static int fpq_num(const json_t *obj, double *v, ...);
static const char *fpq_str(const json_t *obj, ...);

/*
 * A run's metrics indexed once by (name, gpu) (common/mindex.h), so the rules that look up a metric
 * per GPU and per rule are linear in the run, not a scan of it per lookup.  One array at a time per
 * thread, held (a reference) while indexed so that its address cannot be reused by another; a change
 * of its size rebuilds the index.  Small runs are scanned.
 */
#define FPQ_INDEX_MIN 64
static _Thread_local struct {
	json_t *arr;
	size_t n;
	struct mindex x;
} fpq_idx;

static void fpq_index_drop(void)
{
	json_decref(fpq_idx.arr);
	mindex_free(&fpq_idx.x);
	fpq_idx.arr = NULL;
	fpq_idx.n = 0;
}

static const json_t *metric_indexed(json_t *arr, const char *name, int gpu)
{
	size_t i, at;
	json_t *m;
	if (fpq_idx.arr != arr || fpq_idx.n != json_array_size(arr)) {
		fpq_index_drop();
		fpq_idx.arr = json_incref(arr);
		fpq_idx.n = json_array_size(arr);
		json_array_foreach(arr, i, m) {
			json_t *g = json_object_get(m, "gpu");
			if (json_is_integer(g) && json_integer_value(g) >= INT_MIN && json_integer_value(g) <= INT_MAX)
				mindex_add(&fpq_idx.x, json_string_value(json_object_get(m, "name")), (long)json_integer_value(g), i);
		}
	}
	return mindex_find(&fpq_idx.x, name, gpu, &at) ? NULL : json_array_get(arr, at);
}

const json_t *fpq_metric(const json_t *fp, const char *name, int gpu)
{
	size_t i;
	json_t *m, *arr = json_object_get(fp, "metrics");
	if (json_array_size(arr) >= FPQ_INDEX_MIN)
		return metric_indexed(arr, name, gpu);
	json_array_foreach(arr, i, m) {
		const char *n = json_string_value(json_object_get(m, "name"));
		json_t *g = json_object_get(m, "gpu");
		if (n && !strcmp(n, name) && json_is_integer(g) && json_integer_value(g) == gpu)
			return m;
	}
	return NULL;
}

const json_t *fpq_gpus(const json_t *fp)
{
	static json_t *empty;
	const json_t *g = json_object_get(json_object_get(fp, "inventory"), "gpus");
	if (json_is_array(g))
		return g;
	if (!empty)
		empty = json_array();  /* process-lifetime, never modified */
	return empty;
}

static int max_gpu_index(const json_t *arr)
{
	int best = -1;
	size_t i;
	json_t *e;
	json_array_foreach(arr, i, e) {
		json_t *g = json_object_get(e, "gpu");
		if (json_is_integer(g) && json_integer_value(g) > best && json_integer_value(g) < 4096)
			best = (int)json_integer_value(g);
	}
	return best;
}

int fpq_gpu_count(const json_t *fp)
{
	size_t n = json_array_size(fpq_gpus(fp));
	if (n)
		return (int)n;
	json_t *c = json_object_get(json_object_get(fp, "run"), "gpu_count");
	if (json_is_integer(c) && json_integer_value(c) > 0 && json_integer_value(c) < 4096)
		return (int)json_integer_value(c);
	int a = max_gpu_index(json_object_get(fp, "metrics"));
	int b = max_gpu_index(json_object_get(fp, "samples"));
	return (a > b ? a : b) + 1;
}

const char *fpq_run_str(const json_t *fp, const char *key)
{
	return json_string_value(json_object_get(json_object_get(fp, "run"), key));
}

static long pci_device(const json_t *g)
{
	const json_t *v = json_object_get(g, "pci_device_id");
	return gpu_pci_device_id(json_string_value(v), json_is_integer(v) ? json_integer_value(v) : -1);
}

int fpq_gpu_model(const json_t *fp, const struct gpu_ref **ref, char *why, size_t whylen)
{
	/* the device (its NVML name, memory and pci device id, as `gpuvet run` resolves it), never a label */
	const json_t *g0 = json_array_get(fpq_gpus(fp), 0);
	double bytes = 0;
	char buf[256];
	*ref = NULL;
	if (!g0) {
		snprintf(why, whylen, "the inventory lists no gpu");
		return FPQ_MODEL_NONE;
	}
	if (fpq_num(g0, &bytes, "memory_bytes", NULL))
		bytes = 0;
	const char *vm = fpq_str(g0, "virtualization_mode", "virtualization.mode", "virtualization", NULL);
	int vgpu = vm && strcasestr(vm, "vgpu") && !strcasestr(vm, "host");
	if (gpu_resolve_device(fpq_str(g0, "name", NULL), bytes, pci_device(g0), vgpu, ref, buf, sizeof buf) ==
	    GPU_EV_RESOLVED)
		return FPQ_MODEL_RESOLVED;
	snprintf(why, whylen, "gpu 0 resolves to no model gpuvet knows: %s", buf);
	return FPQ_MODEL_UNKNOWN;
}

const struct gpu_ref *fpq_gpu_ref(const json_t *fp)
{
	const struct gpu_ref *r;
	char why[256];
	return fpq_gpu_model(fp, &r, why, sizeof why) == FPQ_MODEL_RESOLVED ? r : NULL;
}

static const json_t *path_get(const json_t *obj, const char *path)
{
	char buf[128];
	if (gv_strlcpy(buf, path, sizeof buf) >= sizeof buf)
		return NULL;
	char *save = NULL;
	const json_t *cur = obj;
	for (char *t = strtok_r(buf, ".", &save); t && cur; t = strtok_r(NULL, ".", &save))
		cur = json_object_get(cur, t);
	return cur;
}

static int to_num(const json_t *j, double *v)
{
	static const char *const yes[] = { "enabled", "yes", "true", "on" };
	static const char *const no[] = { "disabled", "no", "false", "off", "none" };
	if (json_is_number(j)) {
		*v = json_number_value(j);
		return 0;
	}
	if (json_is_boolean(j)) {
		*v = json_is_true(j) ? 1 : 0;
		return 0;
	}
	const char *s = json_string_value(j);
	if (!s)
		return -1;
	for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++)
		if (!strcasecmp(s, yes[i])) {
			*v = 1;
			return 0;
		}
	for (size_t i = 0; i < sizeof no / sizeof no[0]; i++)
		if (!strcasecmp(s, no[i])) {
			*v = 0;
			return 0;
		}
	return gv_parse_double(s, v);
}

static int fpq_num(const json_t *obj, double *v, ...)
{
	va_list ap;
	const char *p;
	int rc = -1;
	if (!obj)
		return -1;
	va_start(ap, v);
	while ((p = va_arg(ap, const char *)))
		if (!to_num(path_get(obj, p), v)) {
			rc = 0;
			break;
		}
	va_end(ap);
	return rc;
}

static const char *fpq_str(const json_t *obj, ...)
{
	va_list ap;
	const char *p, *r = NULL;
	if (!obj)
		return NULL;
	va_start(ap, obj);
	while (!r && (p = va_arg(ap, const char *)))
		r = json_string_value(path_get(obj, p));
	va_end(ap);
	return r;
}

