/*
 * inventory.c - what machine is this (see inventory.h).
 *
 * Each part is collected by its own function into its own JSON member and
 * never fails the whole: what cannot be read is null (or, for the GPUs, an
 * empty list and "gpu_error" with the reason).  The text parsers live in
 * inv_parse.c, the cloud identity in cloud.c.
 */
#include "runners/inventory.h"
#include "runners/cloud.h"
#include "platform/inv_parse.h"
#include "common/util.h"
#include "platform/gv_nvml.h"
#include "common/gpus.h"
#include "common/gpu_evidence.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <hwloc.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

static json_t *str_or_null(const char *s)
{
	return s && *s ? json_string(s) : json_null();
}

/* First line of a small file, trimmed, into buf; -1 when unreadable or empty. */
static int inv_read_line(const char *path, char *buf, size_t size)
{
	char *t = gv_read_file(path, NULL);
	buf[0] = '\0';
	if (!t)
		return -1;
	size_t n = strcspn(t, "\n");
	while (n && isspace((unsigned char)t[n - 1]))
		n--;
	size_t st = 0;
	while (st < n && isspace((unsigned char)t[st]))
		st++;
	n -= st;
	if (n >= size)
		n = size - 1;
	memcpy(buf, t + st, n);
	buf[n] = '\0';
	free(t);
	return n ? 0 : -1;
}

static int inv_read_ll(const char *path, long long *v)
{
	char buf[64], *end;
	if (inv_read_line(path, buf, sizeof buf))
		return -1;
	long long x = strtoll(buf, &end, 10);
	if (*end)
		return -1;
	*v = x;
	return 0;
}

/* ---------------------------------------------------------------- host */

static json_t *inv_host(const struct inv_cpuinfo *ci)
{
	char host[256] = "", os[256] = "", vendor[128], product[128];
	struct utsname u;
	char *osr;
	int have_u = uname(&u) == 0;

	if (gethostname(host, sizeof host - 1))
		host[0] = '\0';
	osr = gv_read_file("/etc/os-release", NULL);
	if (!osr)
		osr = gv_read_file("/usr/lib/os-release", NULL);
	if (osr) {
		if (inv_os_release_get(osr, "PRETTY_NAME", os, sizeof os))
			inv_os_release_get(osr, "NAME", os, sizeof os);
		free(osr);
	}
	inv_read_line("/sys/class/dmi/id/sys_vendor", vendor, sizeof vendor);
	inv_read_line("/sys/class/dmi/id/product_name", product, sizeof product);
	return json_pack("{s:o, s:o, s:o, s:o, s:b, s:o, s:o}",
			 "hostname", str_or_null(host),
			 "kernel", str_or_null(have_u ? u.release : NULL),
			 "arch", str_or_null(have_u ? u.machine : NULL),
			 "os", str_or_null(os),
			 "virtualized", ci->hypervisor,
			 "dmi_sys_vendor", str_or_null(vendor),
			 "dmi_product_name", str_or_null(product));
}

/* ---------------------------------------------------------------- cpu, numa (hwloc) */

static json_t *inv_cpu(hwloc_topology_t topo, const struct inv_cpuinfo *ci, int have_ci)
{
	int sockets = -1, cores = -1, threads = -1;
	const char *model = have_ci && ci->model[0] ? ci->model : NULL;
	if (topo) {
		sockets = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PACKAGE);
		cores = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);
		threads = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU);
		if (!model && sockets > 0) {
			hwloc_obj_t pkg = hwloc_get_obj_by_type(topo, HWLOC_OBJ_PACKAGE, 0);
			model = pkg ? hwloc_obj_get_info_by_name(pkg, "CPUModel") : NULL;
		}
	} else if (have_ci) {
		threads = ci->logical;
		sockets = ci->sockets > 0 ? ci->sockets : -1;
		if (ci->cores_per_socket > 0 && sockets > 0)
			cores = ci->cores_per_socket * sockets;
	}
	json_t *j = json_pack("{s:o, s:o}", "model", str_or_null(model),
			      "vendor", str_or_null(have_ci ? ci->vendor : NULL));
	json_object_set_new(j, "sockets", sockets > 0 ? json_integer(sockets) : json_null());
	json_object_set_new(j, "cores", cores > 0 ? json_integer(cores) : json_null());
	json_object_set_new(j, "threads", threads > 0 ? json_integer(threads) : json_null());
	return j;
}

static json_t *inv_numa(hwloc_topology_t topo)
{
	json_t *a = json_array();
	if (!topo)
		return a;
	int n = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_NUMANODE);
	for (int i = 0; i < n; i++) {
		hwloc_obj_t o = hwloc_get_obj_by_type(topo, HWLOC_OBJ_NUMANODE, (unsigned)i);
		char *cpus = NULL;
		if (!o)
			continue;
		if (o->cpuset && hwloc_bitmap_list_asprintf(&cpus, o->cpuset) < 0)
			cpus = NULL;
		json_array_append_new(a, json_pack("{s:i, s:o, s:I}", "node", (int)o->os_index,
						   "cpus", str_or_null(cpus),
						   "memory_bytes", (json_int_t)o->attr->numanode.local_memory));
		free(cpus);
	}
	return a;
}

/* ---------------------------------------------------------------- memory */

static json_t *inv_memory(void)
{
	struct inv_meminfo mi;
	char *t = gv_read_file("/proc/meminfo", NULL);
	int ok = t && inv_parse_meminfo(t, &mi) == 0;
	free(t);
	if (!ok)
		return json_null();
#define LL_OR_NULL(v) ((v) >= 0 ? json_integer((json_int_t)(v)) : json_null())
	return json_pack("{s:o, s:o, s:o, s:o, s:o}",
			 "total_bytes", LL_OR_NULL(mi.total),
			 "available_bytes", LL_OR_NULL(mi.available),
			 "swap_bytes", LL_OR_NULL(mi.swap_total),
			 "hugepages_total", LL_OR_NULL(mi.hugepages_total),
			 "hugepage_size_bytes", LL_OR_NULL(mi.hugepage_size));
#undef LL_OR_NULL
}

/* ---------------------------------------------------------------- disks */

/* Block devices whose mounts count as the disk's: the disk, its partitions, their holders. */
struct inv_devset {
	size_t n;
	struct { unsigned maj, min; char name[64]; } v[64];
};

static void devset_add(struct inv_devset *s, const char *name)
{
	char path[PATH_MAX], buf[32];
	unsigned maj, min;
	if (s->n >= sizeof s->v / sizeof s->v[0])
		return;
	snprintf(path, sizeof path, "/sys/class/block/%s/dev", name);
	if (inv_read_line(path, buf, sizeof buf) || sscanf(buf, "%u:%u", &maj, &min) != 2)
		return;
	for (size_t i = 0; i < s->n; i++)
		if (s->v[i].maj == maj && s->v[i].min == min)
			return;
	s->v[s->n].maj = maj;
	s->v[s->n].min = min;
	gv_strlcpy(s->v[s->n].name, name, sizeof s->v[s->n].name);
	s->n++;
}

static void devset_add_holders(struct inv_devset *s, const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	if (!d)
		return;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			devset_add(s, e->d_name);
	closedir(d);
}

static int devset_match(const struct inv_devset *s, const struct inv_mount *m)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->v[i].maj == m->major && s->v[i].min == m->minor)
			return 1;
	/* btrfs and friends report an anonymous st_dev: go by the source device */
	if (!strncmp(m->source, "/dev/", 5)) {
		char real[PATH_MAX];
		const char *base;
		if (!realpath(m->source, real))
			gv_strlcpy(real, m->source, sizeof real);
		base = strrchr(real, '/');
		base = base ? base + 1 : real;
		for (size_t i = 0; i < s->n; i++)
			if (!strcmp(s->v[i].name, base))
				return 1;
	}
	return 0;
}

static int skip_block(const char *name)
{
	static const char *const virt[] = { "loop", "ram", "zram", "nbd", "fd", "sr" };
	for (size_t i = 0; i < sizeof virt / sizeof virt[0]; i++)
		if (!strncmp(name, virt[i], strlen(virt[i])))
			return 1;
	return 0;
}

static json_t *inv_disk(const char *name, const struct inv_mounts *mounts)
{
	char path[PATH_MAX], real[PATH_MAX], model[128];
	long long sectors = -1, rot = -1;
	struct inv_devset set = { 0 };
	json_t *mps = json_array();
	DIR *d;
	struct dirent *e;

	snprintf(path, sizeof path, "/sys/block/%s", name);
	if (!realpath(path, real))
		gv_strlcpy(real, path, sizeof real);
	if (strstr(real, "/devices/virtual/")) {   /* dm-, md, loop: shown through their disks */
		json_decref(mps);
		return NULL;
	}
	snprintf(path, sizeof path, "/sys/block/%s/size", name);
	inv_read_ll(path, &sectors);
	if (sectors <= 0) {                        /* empty slot (card reader, no medium) */
		json_decref(mps);
		return NULL;
	}
	snprintf(path, sizeof path, "/sys/block/%s/queue/rotational", name);
	inv_read_ll(path, &rot);
	snprintf(path, sizeof path, "/sys/block/%s/device/model", name);
	inv_read_line(path, model, sizeof model);

	devset_add(&set, name);
	snprintf(path, sizeof path, "/sys/block/%s/holders", name);
	devset_add_holders(&set, path);
	snprintf(path, sizeof path, "/sys/block/%s", name);
	d = opendir(path);
	if (d) {
		while ((e = readdir(d))) {
			char p2[PATH_MAX];
			if (strncmp(e->d_name, name, strlen(name)))
				continue;
			snprintf(p2, sizeof p2, "/sys/block/%s/%s/partition", name, e->d_name);
			if (access(p2, F_OK))
				continue;
			devset_add(&set, e->d_name);
			snprintf(p2, sizeof p2, "/sys/block/%s/%s/holders", name, e->d_name);
			devset_add_holders(&set, p2);
		}
		closedir(d);
	}
	for (size_t i = 0; i < mounts->n; i++) {
		if (!devset_match(&set, &mounts->v[i]))
			continue;
		int dup = 0;
		for (size_t k = 0; k < json_array_size(mps); k++)
			if (!strcmp(json_string_value(json_array_get(mps, k)), mounts->v[i].mountpoint))
				dup = 1;
		if (!dup && json_array_size(mps) < 32)
			json_array_append_new(mps, json_string(mounts->v[i].mountpoint));
	}
	return json_pack("{s:s, s:o, s:I, s:o, s:s, s:o}",
			 "name", name,
			 "model", str_or_null(model),
			 "size_bytes", (json_int_t)(sectors * 512),   /* /sys size is in 512-byte units */
			 "rotational", rot < 0 ? json_null() : json_boolean(rot),
			 "transport", inv_disk_transport(real),
			 "mountpoints", mps);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static json_t *inv_disks(void)
{
	json_t *a = json_array();
	struct inv_mounts mounts = { 0 };
	char *mi = gv_read_file("/proc/self/mountinfo", NULL);
	DIR *d;
	struct dirent *e;
	char *names[256];
	size_t nn = 0;

	if (mi) {
		inv_parse_mountinfo(mi, &mounts);
		free(mi);
	}
	d = opendir("/sys/block");
	if (d) {
		while ((e = readdir(d)) && nn < sizeof names / sizeof names[0])
			if (e->d_name[0] != '.' && !skip_block(e->d_name))
				names[nn++] = gv_strdup(e->d_name);
		closedir(d);
	}
	qsort(names, nn, sizeof names[0], cmp_str);
	for (size_t i = 0; i < nn; i++) {
		json_t *j = inv_disk(names[i], &mounts);
		if (j)
			json_array_append_new(a, j);
		free(names[i]);
	}
	inv_mounts_free(&mounts);
	return a;
}

/* ---------------------------------------------------------------- GPUs (NVML) */

#define NV_CALL(n, fn, ...) ((n)->fn ? (n)->fn(__VA_ARGS__) : NVML_ERROR_FUNCTION_NOT_FOUND)

static json_t *nv_uint(const struct gv_nvml *n, nvmlReturn_t rc, unsigned v)
{
	(void)n;
	return rc == NVML_SUCCESS ? json_integer(v) : json_null();
}

static json_t *nv_enable(nvmlReturn_t rc, nvmlEnableState_t s)
{
	if (rc != NVML_SUCCESS)
		return json_null();
	return json_string(s == NVML_FEATURE_ENABLED ? "enabled" : "disabled");
}

static json_t *inv_gpu_pcie(const struct gv_nvml *n, nvmlDevice_t d)
{
	unsigned cg = 0, cw = 0, mg = 0, gmg = 0, mw = 0;
	nvmlReturn_t r1 = NV_CALL(n, DeviceGetCurrPcieLinkGeneration, d, &cg);
	nvmlReturn_t r2 = NV_CALL(n, DeviceGetCurrPcieLinkWidth, d, &cw);
	nvmlReturn_t r3 = NV_CALL(n, DeviceGetMaxPcieLinkGeneration, d, &mg);
	nvmlReturn_t r4 = NV_CALL(n, DeviceGetGpuMaxPcieLinkGeneration, d, &gmg);
	nvmlReturn_t r5 = NV_CALL(n, DeviceGetMaxPcieLinkWidth, d, &mw);
	return json_pack("{s:o, s:o, s:o, s:o, s:o}",
			 "gen_current", nv_uint(n, r1, cg),
			 "width_current", nv_uint(n, r2, cw),
			 "gen_max", nv_uint(n, r3, mg),          /* device + system (slot) max */
			 "gen_gpu_max", nv_uint(n, r4, gmg),     /* what the GPU itself supports */
			 "width_max", nv_uint(n, r5, mw));
}

static json_t *inv_gpu_nvlink(const struct gv_nvml *n, nvmlDevice_t d)
{
	int links = 0, active = 0;
	for (unsigned l = 0; l < NVML_NVLINK_MAX_LINKS; l++) {
		nvmlEnableState_t s;
		nvmlReturn_t rc = NV_CALL(n, DeviceGetNvLinkState, d, l, &s);
		if (rc != NVML_SUCCESS)
			continue;   /* link index absent on this part */
		links++;
		if (s == NVML_FEATURE_ENABLED)
			active++;
	}
	if (!links)
		return json_null();
	json_t *o = json_pack("{s:i, s:i}", "links", links, "links_active", active);
	/* error counters summed over the links, where NVML has them (null otherwise) */
	static const struct { nvmlNvLinkErrorCounter_t c; const char *name; } ctrs[] = {
		{ NVML_NVLINK_ERROR_DL_REPLAY, "replay" }, { NVML_NVLINK_ERROR_DL_RECOVERY, "recovery" },
		{ NVML_NVLINK_ERROR_DL_CRC_FLIT, "crc_flit" }, { NVML_NVLINK_ERROR_DL_CRC_DATA, "crc_data" },
	};
	json_t *errs = json_object();
	for (size_t k = 0; k < sizeof ctrs / sizeof ctrs[0]; k++) {
		unsigned long long sum = 0, v;
		int any = 0;
		for (unsigned l = 0; l < NVML_NVLINK_MAX_LINKS; l++)
			if (NV_CALL(n, DeviceGetNvLinkErrorCounter, d, l, ctrs[k].c, &v) == NVML_SUCCESS) {
				sum += v;
				any = 1;
			}
		json_object_set_new(errs, ctrs[k].name, any ? json_integer((json_int_t)sum) : json_null());
	}
	json_object_set_new(o, "errors", errs);
	return o;
}

static json_t *inv_ecc_counts(const struct gv_nvml *n, nvmlDevice_t d, nvmlEccCounterType_t c)
{
	unsigned long long corr = 0, unc = 0;
	nvmlReturn_t r1 = NV_CALL(n, DeviceGetTotalEccErrors, d, NVML_MEMORY_ERROR_TYPE_CORRECTED, c, &corr);
	nvmlReturn_t r2 = NV_CALL(n, DeviceGetTotalEccErrors, d, NVML_MEMORY_ERROR_TYPE_UNCORRECTED, c, &unc);
	return json_pack("{s:o, s:o}",
			 "corrected", r1 == NVML_SUCCESS ? json_integer((json_int_t)corr) : json_null(),
			 "uncorrected", r2 == NVML_SUCCESS ? json_integer((json_int_t)unc) : json_null());
}

static json_t *inv_gpu_ecc(const struct gv_nvml *n, nvmlDevice_t d)
{
	nvmlEnableState_t cur, pend;
	nvmlReturn_t rc = NV_CALL(n, DeviceGetEccMode, d, &cur, &pend);
	if (rc != NVML_SUCCESS)
		return json_null();   /* consumer GPUs and some vGPU profiles have no ECC */
	return json_pack("{s:o, s:o, s:o, s:o}",
			 "current", nv_enable(rc, cur), "pending", nv_enable(rc, pend),
			 "volatile", inv_ecc_counts(n, d, NVML_VOLATILE_ECC),
			 "aggregate", inv_ecc_counts(n, d, NVML_AGGREGATE_ECC));
}

static json_t *inv_gpu_retired(const struct gv_nvml *n, nvmlDevice_t d)
{
	unsigned sbe = 0, dbe = 0;
	nvmlEnableState_t pend;
	/* count only: a zero-sized buffer asks for the number of pages */
	nvmlReturn_t r1 = NV_CALL(n, DeviceGetRetiredPages, d,
				  NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS, &sbe, NULL);
	nvmlReturn_t r2 = NV_CALL(n, DeviceGetRetiredPages, d,
				  NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR, &dbe, NULL);
	nvmlReturn_t r3 = NV_CALL(n, DeviceGetRetiredPagesPendingStatus, d, &pend);
	int ok1 = r1 == NVML_SUCCESS || r1 == NVML_ERROR_INSUFFICIENT_SIZE;
	int ok2 = r2 == NVML_SUCCESS || r2 == NVML_ERROR_INSUFFICIENT_SIZE;
	if (!ok1 && !ok2 && r3 != NVML_SUCCESS)
		return json_null();   /* Ampere+ remap rows instead */
	return json_pack("{s:o, s:o, s:o}",
			 "sbe", ok1 ? json_integer(sbe) : json_null(),
			 "dbe", ok2 ? json_integer(dbe) : json_null(),
			 "pending", r3 == NVML_SUCCESS ? json_boolean(pend == NVML_FEATURE_ENABLED) : json_null());
}

static json_t *inv_gpu_remap(const struct gv_nvml *n, nvmlDevice_t d)
{
	unsigned corr = 0, unc = 0, pend = 0, fail = 0;
	nvmlReturn_t rc = NV_CALL(n, DeviceGetRemappedRows, d, &corr, &unc, &pend, &fail);
	if (rc != NVML_SUCCESS)
		return json_null();
	return json_pack("{s:i, s:i, s:b, s:b}", "correctable", (int)corr, "uncorrectable", (int)unc,
			 "pending", pend != 0, "failure", fail != 0);
}

static json_t *inv_gpu_numa(const struct gv_nvml *n, nvmlDevice_t d, const char *bus_id, const char **src)
{
	unsigned node = 0;
	char sid[32], path[128];
	long long v;
	*src = NULL;
	if (NV_CALL(n, DeviceGetNumaNodeId, d, &node) == NVML_SUCCESS) {
		*src = "nvml";
		return json_integer(node);
	}
	if (!bus_id || inv_pci_sysfs_id(bus_id, sid, sizeof sid))
		return json_null();
	snprintf(path, sizeof path, "/sys/bus/pci/devices/%s/numa_node", sid);
	if (inv_read_ll(path, &v) || v < 0)   /* -1: the platform gives no affinity */
		return json_null();
	*src = "sysfs";
	return json_integer(v);
}

static json_t *inv_gpu(const struct gv_nvml *n, unsigned idx)
{
	nvmlDevice_t d;
	nvmlReturn_t rc = NV_CALL(n, DeviceGetHandleByIndex, idx, &d);
	char name[NVML_DEVICE_NAME_V2_BUFFER_SIZE] = "", uuid[NVML_DEVICE_UUID_V2_BUFFER_SIZE] = "";
	char serial[NVML_DEVICE_SERIAL_BUFFER_SIZE] = "", vbios[NVML_DEVICE_VBIOS_VERSION_BUFFER_SIZE] = "";
	nvmlMemory_t mem;
	nvmlPciInfo_t pci;
	nvmlGpuVirtualizationMode_t vm;
	unsigned mig_cur = 0, mig_pend = 0, plimit = 0, sm = 0, memclk = 0;
	const char *numa_src = NULL;
	json_t *g;

	if (rc != NVML_SUCCESS)
		return json_pack("{s:i, s:s}", "index", (int)idx, "error", gv_nvml_strerror(n, rc));
	if (NV_CALL(n, DeviceGetName, d, name, sizeof name) != NVML_SUCCESS)
		name[0] = '\0';
	if (NV_CALL(n, DeviceGetUUID, d, uuid, sizeof uuid) != NVML_SUCCESS)
		uuid[0] = '\0';
	if (NV_CALL(n, DeviceGetSerial, d, serial, sizeof serial) != NVML_SUCCESS)
		serial[0] = '\0';
	if (NV_CALL(n, DeviceGetVbiosVersion, d, vbios, sizeof vbios) != NVML_SUCCESS)
		vbios[0] = '\0';
	int have_mem = NV_CALL(n, DeviceGetMemoryInfo, d, &mem) == NVML_SUCCESS;
	int have_pci = NV_CALL(n, DeviceGetPciInfo, d, &pci) == NVML_SUCCESS;
	if (have_pci)
		pci.busId[sizeof pci.busId - 1] = '\0';

	/* the model from the evidence the import checks hold a file to: name, memory, pci device id */
	const struct gpu_ref *ref = NULL;
	char why[256], devid[16];
	rc = NV_CALL(n, DeviceGetVirtualizationMode, d, &vm);
	if (name[0] && have_mem)
		gpu_resolve_device(name, (double)mem.total, have_pci ? gpu_pci_device_id(NULL, pci.pciDeviceId) : -1,
				   rc == NVML_SUCCESS && vm == NVML_GPU_VIRTUALIZATION_MODE_VGPU, &ref, why, sizeof why);
	snprintf(devid, sizeof devid, "0x%08X", have_pci ? pci.pciDeviceId : 0u);   /* as nvidia-smi -q says it */

	g = json_pack("{s:i, s:o, s:o, s:o, s:o, s:o, s:o}",
		      "index", (int)idx, "name", str_or_null(name), "uuid", str_or_null(uuid),
		      "serial", str_or_null(serial), "vbios", str_or_null(vbios),
		      "memory_bytes", have_mem ? json_integer((json_int_t)mem.total) : json_null(),
		      "pci_bus_id", have_pci ? str_or_null(pci.busId) : json_null());
	json_object_set_new(g, "pci_device_id", have_pci ? json_string(devid) : json_null());
	json_object_set_new(g, "pcie", inv_gpu_pcie(n, d));
	json_object_set_new(g, "nvlink", inv_gpu_nvlink(n, d));
	json_object_set_new(g, "ecc", inv_gpu_ecc(n, d));
	json_object_set_new(g, "retired_pages", inv_gpu_retired(n, d));
	json_object_set_new(g, "remapped_rows", inv_gpu_remap(n, d));
	rc = NV_CALL(n, DeviceGetVirtualizationMode, d, &vm);
	json_object_set_new(g, "virtualization_mode",
			    rc == NVML_SUCCESS ? json_string(inv_virt_mode_name((int)vm)) : json_null());
	rc = NV_CALL(n, DeviceGetMigMode, d, &mig_cur, &mig_pend);
	json_object_set_new(g, "mig", rc == NVML_SUCCESS
			    ? json_pack("{s:s, s:s}",
					"current", mig_cur == NVML_DEVICE_MIG_ENABLE ? "enabled" : "disabled",
					"pending", mig_pend == NVML_DEVICE_MIG_ENABLE ? "enabled" : "disabled")
			    : json_null());   /* NOT_SUPPORTED: a GPU without MIG */
	json_object_set_new(g, "numa_node", inv_gpu_numa(n, d, have_pci ? pci.busId : NULL, &numa_src));
	json_object_set_new(g, "numa_source", str_or_null(numa_src));
	rc = NV_CALL(n, DeviceGetEnforcedPowerLimit, d, &plimit);
	json_object_set_new(g, "power_limit_w", rc == NVML_SUCCESS ? json_real(plimit / 1000.0) : json_null());
	nvmlReturn_t r1 = NV_CALL(n, DeviceGetMaxClockInfo, d, NVML_CLOCK_SM, &sm);
	nvmlReturn_t r2 = NV_CALL(n, DeviceGetMaxClockInfo, d, NVML_CLOCK_MEM, &memclk);
	json_object_set_new(g, "max_clocks_mhz", json_pack("{s:o, s:o}", "sm", nv_uint(n, r1, sm),
							   "memory", nv_uint(n, r2, memclk)));
	json_object_set_new(g, "reference_model", str_or_null(ref ? ref->key : NULL));
	return g;
}

/* Fills inv's "gpus", "gpu_error" and "driver". */
static void inv_gpus(json_t *inv)
{
	char why[256] = "";
	const struct gv_nvml *n = gv_nvml_load(why, sizeof why);
	json_t *gpus = json_array();
	unsigned count = 0;

	if (!n) {
		json_object_set_new(inv, "gpus", gpus);
		json_object_set_new(inv, "gpu_error", json_string(why[0] ? why : "nvml not usable"));
		json_object_set_new(inv, "driver", json_null());
		return;
	}
	char ver[NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE] = "", cuda[16] = "";
	int cv = 0;
	if (NV_CALL(n, SystemGetDriverVersion, ver, sizeof ver) != NVML_SUCCESS)
		ver[0] = '\0';
	if (NV_CALL(n, SystemGetCudaDriverVersion, &cv) == NVML_SUCCESS && cv > 0)
		inv_cuda_version_format(cv, cuda, sizeof cuda);
	json_object_set_new(inv, "driver", json_pack("{s:o, s:o}", "version", str_or_null(ver),
						     "cuda_version", str_or_null(cuda)));
	nvmlReturn_t rc = NV_CALL(n, DeviceGetCount, &count);
	if (rc != NVML_SUCCESS) {
		json_object_set_new(inv, "gpus", gpus);
		json_object_set_new(inv, "gpu_error", json_sprintf("nvmlDeviceGetCount: %s",
								    gv_nvml_strerror(n, rc)));
		return;
	}
	for (unsigned i = 0; i < count && i < 64; i++)
		json_array_append_new(gpus, inv_gpu(n, i));
	json_object_set_new(inv, "gpus", gpus);
	json_object_set_new(inv, "gpu_error",
			    count ? json_null() : json_string("nvidia driver loaded but no gpu is visible"));
}

/* ---------------------------------------------------------------- kernel log XIDs */

/* Index of the GPU whose NVML bus id ("00000000:53:00.0") the driver's "0000:53:00" names; -1. */
static int xid_gpu(const json_t *gpus, const char *pci)
{
	size_t i, n = strlen(pci);
	json_t *g;
	json_array_foreach(gpus, i, g) {
		char id[32];
		const char *b = json_string_value(json_object_get(g, "pci_bus_id"));
		if (b && !inv_pci_sysfs_id(b, id, sizeof id) && !strncasecmp(id, pci, n) && (id[n] == '.' || !id[n]))
			return (int)json_integer_value(json_object_get(g, "index"));
	}
	return -1;
}

/*
 * XIDs the driver logged since boot (the kernel ring buffer: /dev/kmsg, one record per read, not
 * blocking), each with its age (uptime - the record's time).  Unreadable (dmesg_restrict without
 * CAP_SYSLOG): "error" says why and "events" is null, not empty.
 */
static json_t *inv_xid_history(const json_t *gpus)
{
	const char *root = getenv("GPUVET_SYSROOT");
	char path[PATH_MAX], up[PATH_MAX];
	snprintf(path, sizeof path, "%s/dev/kmsg", root ? root : "");
	snprintf(up, sizeof up, "%s/proc/uptime", root ? root : "");
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return json_pack("{s:s,s:n,s:s+}", "source", "/dev/kmsg", "events", "error", "cannot read /dev/kmsg: ",
				 strerror(errno));
	size_t cap = 1 << 16, len = 0, max = 8u << 20;
	char *buf = gv_malloc(cap);
	for (;;) {
		if (cap - len < 8192) {
			if (cap >= max)
				break;
			cap *= 2;
			buf = gv_realloc(buf, cap);
		}
		ssize_t r = read(fd, buf + len, cap - len - 1);
		if (r > 0)
			len += (size_t)r;
		else if (r < 0 && (errno == EPIPE || errno == EINTR))
			continue;   /* records overwritten while reading: go on with the next */
		else
			break;      /* EAGAIN: no more records; 0: end of a plain file */
	}
	close(fd);
	double uptime = -1;
	char *u = gv_read_file(up, NULL);
	if (!u || sscanf(u, "%lf", &uptime) != 1)
		uptime = -1;
	free(u);
	json_t *events = json_array();
	for (size_t i = 0; i < len;) {
		const char *nl = memchr(buf + i, '\n', len - i);
		size_t l = nl ? (size_t)(nl - (buf + i)) : len - i;
		struct inv_xid x;
		if (!inv_parse_xid_record(buf + i, l, &x)) {
			int gi = xid_gpu(gpus, x.pci);
			double age = x.ts_s >= 0 && uptime >= x.ts_s ? uptime - x.ts_s : -1;
			if (json_array_size(events) >= 256)
				json_array_remove(events, 0);   /* keep the newest */
			json_array_append_new(events, json_pack("{s:i,s:s,s:o,s:o,s:b}", "xid", x.xid, "pci", x.pci,
				"gpu", gi >= 0 ? json_integer(gi) : json_null(), "age_s", age >= 0 ? json_real(age) : json_null(),
				"hardware", inv_xid_is_hardware(x.xid)));
		}
		i += l + 1;
	}
	free(buf);
	return json_pack("{s:s,s:o,s:n}", "source", "/dev/kmsg", "events", events, "error");
}

/* ---------------------------------------------------------------- collect */

json_t *inventory_collect(const struct inventory_opts *o)
{
	static const struct inventory_opts none = { 0 };
	struct inv_cpuinfo ci;
	struct cloud_opts co;
	struct cloud_id id;
	hwloc_topology_t topo = NULL;
	char *t;
	int have_ci = 0;
	json_t *inv;

	if (!o)
		o = &none;
	t = gv_read_file("/proc/cpuinfo", NULL);
	if (t) {
		have_ci = inv_parse_cpuinfo(t, &ci) == 0;
		free(t);
	}
	if (!have_ci)
		memset(&ci, 0, sizeof ci);
	if (hwloc_topology_init(&topo) == 0) {
		if (hwloc_topology_load(topo) != 0) {
			gv_debug("inventory: hwloc cannot load the topology");
			hwloc_topology_destroy(topo);
			topo = NULL;
		}
	} else {
		topo = NULL;
	}

	inv = json_object();
	json_object_set_new(inv, "host", inv_host(&ci));
	json_object_set_new(inv, "cpu", inv_cpu(topo, &ci, have_ci));
	json_object_set_new(inv, "memory", inv_memory());
	json_object_set_new(inv, "numa", inv_numa(topo));
	json_object_set_new(inv, "disks", inv_disks());
	inv_gpus(inv);
	json_object_set_new(inv, "xid_history", inv_xid_history(json_object_get(inv, "gpus")));
	if (topo)
		hwloc_topology_destroy(topo);

	memset(&co, 0, sizeof co);
	co.provider = o->provider;
	co.sku = o->sku;
	co.region = o->region;
	co.no_metadata = o->no_metadata;
	co.timeout_ms = o->metadata_timeout_ms;
	co.hypervisor_flag = ci.hypervisor;
	cloud_detect(&co, &id);
	json_object_set_new(inv, "cloud", cloud_to_json(&id));
	return inv;
}

/* ---------------------------------------------------------------- readers */

int inventory_gpu_count(const json_t *inv)
{
	return (int)json_array_size(json_object_get(inv, "gpus"));
}

const char *inventory_gpu_error(const json_t *inv)
{
	if (inventory_gpu_count(inv) > 0)
		return NULL;
	return json_string_value(json_object_get(inv, "gpu_error"));
}

const char *inventory_gpu_model(const json_t *inv)
{
	json_t *g0 = json_array_get(json_object_get(inv, "gpus"), 0);
	return json_string_value(json_object_get(g0, "reference_model"));
}

static const char *cloud_field(const json_t *inv, const char *key)
{
	return json_string_value(json_object_get(json_object_get(inv, "cloud"), key));
}

const char *inventory_provider(const json_t *inv)
{
	const char *p = cloud_field(inv, "provider");
	return p ? p : "unknown";
}

const char *inventory_instance_type(const json_t *inv) { return cloud_field(inv, "instance_type"); }
const char *inventory_region(const json_t *inv) { return cloud_field(inv, "region"); }

/* ---------------------------------------------------------------- human output */

#define LABEL "%-10s"

static const char *js(const json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

static long long ji(const json_t *o, const char *key, long long dflt)
{
	json_t *v = json_object_get(o, key);
	return json_is_integer(v) ? (long long)json_integer_value(v) : dflt;
}

static void print_gpu(const json_t *g, FILE *f)
{
	char b1[32], b2[32], b3[32];
	const json_t *pcie = json_object_get(g, "pcie"), *ecc = json_object_get(g, "ecc");
	const json_t *nvl = json_object_get(g, "nvlink"), *rr = json_object_get(g, "remapped_rows");
	const json_t *rp = json_object_get(g, "retired_pages"), *mig = json_object_get(g, "mig");
	const json_t *clk = json_object_get(g, "max_clocks_mhz");
	char label[16];

	snprintf(label, sizeof label, "GPU %lld", ji(g, "index", 0));
	if (js(g, "error")) {
		fprintf(f, LABEL "unreadable: %s\n", label, js(g, "error"));
		return;
	}
	fprintf(f, LABEL "%s, %s", label, js(g, "name") ? js(g, "name") : "?",
		inv_bytes_format(ji(g, "memory_bytes", -1), b1, sizeof b1));
	fprintf(f, ", reference model %s\n", js(g, "reference_model") ? js(g, "reference_model") : "unknown");
	fprintf(f, LABEL "uuid %s, serial %s, vbios %s\n", "", js(g, "uuid") ? js(g, "uuid") : "?",
		js(g, "serial") ? js(g, "serial") : "?", js(g, "vbios") ? js(g, "vbios") : "?");
	int cg = (int)ji(pcie, "gen_current", 0), cw = (int)ji(pcie, "width_current", 0);
	fprintf(f, LABEL "pci %s, pcie %s (%.1f GT/s per lane) of max %s", "",
		js(g, "pci_bus_id") ? js(g, "pci_bus_id") : "?",
		inv_pcie_format(cg, cw, b1, sizeof b1), inv_pcie_gts(cg),
		inv_pcie_format((int)ji(pcie, "gen_max", 0), (int)ji(pcie, "width_max", 0), b2, sizeof b2));
	if (ji(pcie, "gen_gpu_max", 0) > 0 && ji(pcie, "gen_gpu_max", 0) != ji(pcie, "gen_max", 0))
		fprintf(f, " (gpu supports gen%lld)", ji(pcie, "gen_gpu_max", 0));
	if (ji(g, "numa_node", -1) >= 0)
		fprintf(f, ", numa node %lld\n", ji(g, "numa_node", -1));
	else
		fprintf(f, ", numa node unknown\n");
	fprintf(f, LABEL, "");
	if (json_is_object(nvl))
		fprintf(f, "nvlink %lld/%lld links active", ji(nvl, "links_active", 0), ji(nvl, "links", 0));
	else
		fprintf(f, "nvlink none");
	if (json_is_object(ecc)) {
		const json_t *v = json_object_get(ecc, "volatile"), *a = json_object_get(ecc, "aggregate");
		fprintf(f, ", ecc %s (pending %s), errors volatile %lld corrected / %lld uncorrected, "
			   "aggregate %lld / %lld\n",
			js(ecc, "current") ? js(ecc, "current") : "?", js(ecc, "pending") ? js(ecc, "pending") : "?",
			ji(v, "corrected", -1), ji(v, "uncorrected", -1),
			ji(a, "corrected", -1), ji(a, "uncorrected", -1));
	} else {
		fprintf(f, ", ecc not supported\n");
	}
	if (json_is_object(rr))
		fprintf(f, LABEL "remapped rows %lld correctable, %lld uncorrectable, pending %s, failure %s\n", "",
			ji(rr, "correctable", 0), ji(rr, "uncorrectable", 0),
			json_is_true(json_object_get(rr, "pending")) ? "yes" : "no",
			json_is_true(json_object_get(rr, "failure")) ? "yes" : "no");
	if (json_is_object(rp))
		fprintf(f, LABEL "retired pages %lld single-bit, %lld double-bit, pending %s\n", "",
			ji(rp, "sbe", 0), ji(rp, "dbe", 0),
			json_is_true(json_object_get(rp, "pending")) ? "yes" : "no");
	fprintf(f, LABEL "virtualization %s, mig %s", "",
		js(g, "virtualization_mode") ? js(g, "virtualization_mode") : "unknown",
		json_is_object(mig) ? js(mig, "current") : "not supported");
	if (json_is_object(mig) && strcmp(js(mig, "current"), js(mig, "pending")))
		fprintf(f, " (pending %s)", js(mig, "pending"));
	json_t *pl = json_object_get(g, "power_limit_w");
	if (json_is_number(pl))
		fprintf(f, ", power limit %.0f W", json_number_value(pl));
	snprintf(b3, sizeof b3, "%lld", ji(clk, "sm", -1));
	fprintf(f, ", max clocks sm %s MHz, memory %lld MHz\n", ji(clk, "sm", -1) >= 0 ? b3 : "?",
		ji(clk, "memory", -1));
}

void inventory_print(const json_t *inv, FILE *f)
{
	const json_t *host = json_object_get(inv, "host"), *cpu = json_object_get(inv, "cpu");
	const json_t *mem = json_object_get(inv, "memory"), *numa = json_object_get(inv, "numa");
	const json_t *disks = json_object_get(inv, "disks"), *gpus = json_object_get(inv, "gpus");
	const json_t *drv = json_object_get(inv, "driver"), *cloud = json_object_get(inv, "cloud");
	char b1[32], b2[32], b3[32];
	size_t i;
	json_t *v;

	fprintf(f, LABEL "%s: %s, kernel %s %s", "Host", js(host, "hostname") ? js(host, "hostname") : "?",
		js(host, "os") ? js(host, "os") : "unknown os",
		js(host, "kernel") ? js(host, "kernel") : "?", js(host, "arch") ? js(host, "arch") : "");
	if (json_is_true(json_object_get(host, "virtualized")))
		fprintf(f, ", virtual machine%s%s", js(host, "dmi_sys_vendor") ? " by " : "",
			js(host, "dmi_sys_vendor") ? js(host, "dmi_sys_vendor") : "");
	fputc('\n', f);
	fprintf(f, LABEL "%s, %lld socket%s, %lld cores, %lld threads\n", "CPU",
		js(cpu, "model") ? js(cpu, "model") : "unknown model",
		ji(cpu, "sockets", 0), ji(cpu, "sockets", 0) == 1 ? "" : "s",
		ji(cpu, "cores", 0), ji(cpu, "threads", 0));
	if (json_is_object(mem))
		fprintf(f, LABEL "%s total, %s available, swap %s\n", "Memory",
			inv_bytes_format(ji(mem, "total_bytes", -1), b1, sizeof b1),
			inv_bytes_format(ji(mem, "available_bytes", -1), b2, sizeof b2),
			inv_bytes_format(ji(mem, "swap_bytes", -1), b3, sizeof b3));
	json_array_foreach(numa, i, v)
		fprintf(f, LABEL "node %lld: cpus %s, %s\n", i ? "" : "NUMA", ji(v, "node", -1),
			js(v, "cpus") ? js(v, "cpus") : "?",
			inv_bytes_format(ji(v, "memory_bytes", -1), b1, sizeof b1));
	if (!json_array_size(disks))
		fprintf(f, LABEL "none found\n", "Disks");
	json_array_foreach(disks, i, v) {
		const json_t *mps = json_object_get(v, "mountpoints");
		json_t *rot = json_object_get(v, "rotational");
		/* the kernel's rotational flag; virtio disks often claim 1 whatever backs them */
		fprintf(f, LABEL "%-10s %10s  %-7s %s", i ? "" : "Disks", js(v, "name"),
			inv_bytes_format(ji(v, "size_bytes", -1), b1, sizeof b1), js(v, "transport"),
			json_is_null(rot) ? "rotational ?" : json_is_true(rot) ? "rotational" : "non-rotational");
		if (js(v, "model"))
			fprintf(f, "  %s", js(v, "model"));
		if (json_array_size(mps)) {
			size_t k;
			json_t *m;
			fputs("  mounted on ", f);
			json_array_foreach(mps, k, m)
				fprintf(f, "%s%s", k ? ", " : "", json_string_value(m));
		}
		fputc('\n', f);
	}
	if (json_is_object(drv))
		fprintf(f, LABEL "nvidia %s, cuda %s\n", "Driver",
			js(drv, "version") ? js(drv, "version") : "?",
			js(drv, "cuda_version") ? js(drv, "cuda_version") : "?");
	const json_t *xh = json_object_get(inv, "xid_history"), *xev = json_object_get(xh, "events");
	if (json_is_array(xev) && !json_array_size(xev))
		fprintf(f, LABEL "none in the kernel log since boot\n", "XIDs");
	else if (json_is_array(xev))
		json_array_foreach(xev, i, v) {
			const json_t *age = json_object_get(v, "age_s"), *gi = json_object_get(v, "gpu");
			fprintf(f, LABEL "xid %lld%s on ", i ? "" : "XIDs", ji(v, "xid", -1),
				json_is_true(json_object_get(v, "hardware")) ? " (hardware)" : "");
			if (json_is_integer(gi))
				fprintf(f, "gpu %lld", (long long)json_integer_value(gi));
			else
				fprintf(f, "pci %s", js(v, "pci") ? js(v, "pci") : "?");
			if (json_is_number(age))
				fprintf(f, ", %.1f h ago", json_number_value(age) / 3600);
			fputc('\n', f);
		}
	else if (js(xh, "error"))
		fprintf(f, LABEL "unknown (%s)\n", "XIDs", js(xh, "error"));
	else
		fprintf(f, LABEL "none\n", "Driver");
	if (!json_array_size(gpus))
		fprintf(f, LABEL "none (%s)\n", "GPUs",
			js(inv, "gpu_error") ? js(inv, "gpu_error") : "no reason given");
	json_array_foreach(gpus, i, v)
		print_gpu(v, f);
	fprintf(f, LABEL "%s", "Cloud", js(cloud, "provider") ? js(cloud, "provider") : "unknown");
	if (js(cloud, "instance_type"))
		fprintf(f, " %s", js(cloud, "instance_type"));
	if (js(cloud, "region"))
		fprintf(f, ", region %s", js(cloud, "region"));
	if (js(cloud, "zone"))
		fprintf(f, ", zone %s", js(cloud, "zone"));
	if (js(cloud, "instance_id"))
		fprintf(f, ", instance %s", js(cloud, "instance_id"));
	fprintf(f, " (source %s", js(cloud, "source") ? js(cloud, "source") : "none");
	if (js(cloud, "evidence"))
		fprintf(f, ": %s", js(cloud, "evidence"));
	fputs(")\n", f);
}
