/*
 * test_inventory.c - the inventory's parsers on files captured from a real
 * machine (tests/fixtures/inventory/, see its README), its formatters, the
 * cloud heuristic, the NVML loader's failure paths and the readers.
 */
#include "tests/unit/t.h"
#include "platform/gv_nvml.h"
#include "runners/cloud.h"
#include "platform/inv_parse.h"
#include "runners/inventory.h"
#include "common/util.h"

#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#define FIX "tests/fixtures/inventory/"

static char *fixture(const char *name)
{
	char *t = gv_read_file(name, NULL);
	if (!t)
		fprintf(stderr, "cannot read fixture %s (run from the repository root)\n", name);
	return t;
}

static void test_cpuinfo_amd_vm(void)
{
	struct inv_cpuinfo ci;
	char *t = fixture(FIX "cpuinfo.amd-epyc-fc-vm");
	CHECK(t != NULL);
	if (!t)
		return;
	CHECK(inv_parse_cpuinfo(t, &ci) == 0);
	CHECK_STR(ci.model, "AMD EPYC");
	CHECK_STR(ci.vendor, "AuthenticAMD");
	CHECK(ci.logical == 2);
	CHECK(ci.sockets == 1);
	CHECK(ci.cores_per_socket == 2);
	CHECK(ci.hypervisor == 1);
	free(t);
}

static void test_cpuinfo_arm_and_bad(void)
{
	/* arm64 layout (kernel arch/arm64/kernel/cpuinfo.c): no model name, MIDR fields */
	static const char arm[] =
		"processor\t: 0\nBogoMIPS\t: 2000.00\nFeatures\t: fp asimd evtstrm sve\n"
		"CPU implementer\t: 0x41\nCPU architecture: 8\nCPU variant\t: 0x0\n"
		"CPU part\t: 0xd4f\nCPU revision\t: 0\n\n"
		"processor\t: 1\nCPU implementer\t: 0x41\nCPU part\t: 0xd4f\n";
	struct inv_cpuinfo ci;
	CHECK(inv_parse_cpuinfo(arm, &ci) == 0);
	CHECK_STR(ci.model, "Neoverse-V2");
	CHECK_STR(ci.vendor, "ARM");
	CHECK(ci.logical == 2);
	CHECK(ci.sockets == 0);
	CHECK(ci.hypervisor == 0);
	/* an unknown part is named by its number, never guessed */
	CHECK(inv_parse_cpuinfo("processor : 0\nCPU implementer : 0x99\nCPU part : 0x123\n", &ci) == 0);
	CHECK_STR(ci.model, "CPU part 0x123");
	CHECK_STR(ci.vendor, "implementer 0x99");
	/* "hypervisor" must be a whole flag word, and only in flags */
	CHECK(inv_parse_cpuinfo("processor : 0\nflags : fpu nohypervisorx\nmodel name : hypervisor\n", &ci) == 0);
	CHECK(ci.hypervisor == 0);
	CHECK(inv_parse_cpuinfo("", &ci) == -1);
	CHECK(inv_parse_cpuinfo("garbage without colons\n\n", &ci) == -1);
	/* physical id out of range is ignored, not a crash */
	CHECK(inv_parse_cpuinfo("processor : 0\nphysical id : 99999\n", &ci) == 0);
	CHECK(ci.sockets == 0);
}

static void test_meminfo(void)
{
	struct inv_meminfo mi;
	char *t = fixture(FIX "meminfo.fc-vm");
	CHECK(t != NULL);
	if (!t)
		return;
	CHECK(inv_parse_meminfo(t, &mi) == 0);
	CHECK(mi.total == 24684096LL * 1024);
	CHECK(mi.available == 24265656LL * 1024);
	CHECK(mi.swap_total == 0);
	CHECK(mi.hugepages_total == 0);
	CHECK(mi.hugepage_size == 2048LL * 1024);
	free(t);
	CHECK(inv_parse_meminfo("MemFree: 10 kB\n", &mi) == -1);
	/* a unit other than the kernel's "kB" is refused rather than misread */
	CHECK(inv_parse_meminfo("MemTotal: 10 MB\n", &mi) == -1);
	CHECK(inv_parse_meminfo("MemTotal: 99999999999999999999 kB\n", &mi) == -1);
	CHECK(inv_parse_meminfo("MemTotal: 3 kB\nMemAvailable: x kB\n", &mi) == 0);
	CHECK(mi.total == 3072 && mi.available == -1);
}

static void test_mountinfo(void)
{
	struct inv_mounts m;
	char *t = fixture(FIX "mountinfo.fc-vm");
	int found_root = 0;
	CHECK(t != NULL);
	if (!t)
		return;
	CHECK(inv_parse_mountinfo(t, &m) == 20);
	for (size_t i = 0; i < m.n; i++)
		if (!strcmp(m.v[i].mountpoint, "/")) {
			found_root = 1;
			CHECK(m.v[i].major == 254 && m.v[i].minor == 0);
			CHECK_STR(m.v[i].fstype, "ext4");
			CHECK_STR(m.v[i].source, "/dev/vda");
		}
	CHECK(found_root);
	inv_mounts_free(&m);
	free(t);

	/* proc(5) example with optional fields, an escaped space, and malformed lines */
	static const char txt[] =
		"36 35 98:0 /mnt1 /mnt\\040two rw,noatime master:1 shared:7 - ext3 /dev/root rw,errors=continue\n"
		"37 35 259:3 / /data rw - xfs /dev/nvme0n1p1 rw\n"
		"garbage\n"
		"38 35 x:1 / /bad rw - ext4 /dev/sda rw\n"
		"39 35 8:1 / /nodash rw ext4 /dev/sda rw x y\n"
		"40 35 8:2 / /trail\\134 rw - ext4 /dev/sda2 rw";
	CHECK(inv_parse_mountinfo(txt, &m) == 3);
	if (m.n == 3) {
		CHECK_STR(m.v[0].mountpoint, "/mnt two");
		CHECK_STR(m.v[0].fstype, "ext3");
		CHECK(m.v[0].major == 98 && m.v[0].minor == 0);
		CHECK_STR(m.v[1].source, "/dev/nvme0n1p1");
		CHECK(m.v[1].major == 259 && m.v[1].minor == 3);
		CHECK_STR(m.v[2].mountpoint, "/trail\\");
	}
	inv_mounts_free(&m);
	CHECK(inv_parse_mountinfo("", &m) == 0 && m.v == NULL);
}

static void test_os_release(void)
{
	char buf[128];
	char *t = fixture(FIX "os-release.debian12");
	CHECK(t != NULL);
	if (!t)
		return;
	CHECK(inv_os_release_get(t, "PRETTY_NAME", buf, sizeof buf) == 0);
	CHECK_STR(buf, "Debian GNU/Linux 12 (bookworm)");
	CHECK(inv_os_release_get(t, "VERSION_ID", buf, sizeof buf) == 0);
	CHECK_STR(buf, "12");
	CHECK(inv_os_release_get(t, "NO_SUCH_KEY", buf, sizeof buf) == -1);
	free(t);
	CHECK(inv_os_release_get("NAME=Ubuntu\n", "NAME", buf, sizeof buf) == 0);
	CHECK_STR(buf, "Ubuntu");
	CHECK(inv_os_release_get("X=\"a \\\"b\\\"\"\n", "X", buf, sizeof buf) == 0);
	CHECK_STR(buf, "a \"b\"");
	CHECK(inv_os_release_get("NAME=Ubuntu\n", "NAME", buf, 4) == 0);
	CHECK_STR(buf, "Ubu");
}

static void test_formatting(void)
{
	char b[64];
	CHECK_STR(inv_virt_mode_name(0), "none");
	CHECK_STR(inv_virt_mode_name(1), "passthrough");
	CHECK_STR(inv_virt_mode_name(2), "vgpu");
	CHECK_STR(inv_virt_mode_name(3), "host_vgpu");
	CHECK_STR(inv_virt_mode_name(4), "host_vsga");
	CHECK_STR(inv_virt_mode_name(5), "unknown");
	CHECK_STR(inv_virt_mode_name(-1), "unknown");
	CHECK_STR(inv_pcie_format(4, 16, b, sizeof b), "gen4 x16");
	CHECK_STR(inv_pcie_format(5, 8, b, sizeof b), "gen5 x8");
	CHECK_STR(inv_pcie_format(0, 16, b, sizeof b), "gen? x16");
	CHECK_STR(inv_pcie_format(3, 0, b, sizeof b), "gen3 x?");
	CHECK_NEAR(inv_pcie_gts(1), 2.5, 1e-9);
	CHECK_NEAR(inv_pcie_gts(3), 8.0, 1e-9);
	CHECK_NEAR(inv_pcie_gts(5), 32.0, 1e-9);
	CHECK_NEAR(inv_pcie_gts(6), 64.0, 1e-9);
	CHECK_NEAR(inv_pcie_gts(7), 0, 1e-9);
	CHECK_STR(inv_bytes_format(85899345920LL, b, sizeof b), "80.0 GiB");
	CHECK_STR(inv_bytes_format(512LL << 20, b, sizeof b), "512 MiB");
	CHECK_STR(inv_bytes_format(100, b, sizeof b), "100 B");
	CHECK_STR(inv_bytes_format(-1, b, sizeof b), "?");
	CHECK_STR(inv_bytes_format(274877906944LL, b, sizeof b), "256 GiB");
	CHECK_STR(inv_cuda_version_format(12040, b, sizeof b), "12.4");
	CHECK_STR(inv_cuda_version_format(13000, b, sizeof b), "13.0");
	CHECK_STR(inv_cuda_version_format(0, b, sizeof b), "?");
}

static void test_sysfs_helpers(void)
{
	char b[32];
	/* resolved /sys/block paths: vda from this machine, the others from kernels' sysfs layouts */
	CHECK_STR(inv_disk_transport("/sys/devices/pci0000:00/0000:00:02.0/virtio1/block/vda"), "virtio");
	CHECK_STR(inv_disk_transport("/sys/devices/pci0000:00/0000:00:1d.0/0000:03:00.0/nvme/nvme0/nvme0n1"), "nvme");
	CHECK_STR(inv_disk_transport("/sys/devices/pci0000:00/0000:00:17.0/ata3/host2/target2:0:0/2:0:0:0/block/sda"), "sata");
	CHECK_STR(inv_disk_transport("/sys/devices/pci0000:00/0000:00:14.0/usb2/2-1/2-1:1.0/host6/target6:0:0/6:0:0:0/block/sdb"), "usb");
	CHECK_STR(inv_disk_transport("/sys/devices/vbd-51712/block/xvda"), "xen");
	CHECK_STR(inv_disk_transport("/sys/devices/pci0000:00/0000:00:03.0/host0/target0:0:0/0:0:0:0/block/sda"), "scsi");
	CHECK_STR(inv_disk_transport("/sys/devices/platform/foo/block/x"), "unknown");
	CHECK(inv_pci_sysfs_id("00000000:18:00.0", b, sizeof b) == 0);
	CHECK_STR(b, "0000:18:00.0");
	CHECK(inv_pci_sysfs_id("00000001:AB:1F.3", b, sizeof b) == 0);
	CHECK_STR(b, "0001:ab:1f.3");
	CHECK(inv_pci_sysfs_id("18:00.0", b, sizeof b) == 0);
	CHECK_STR(b, "0000:18:00.0");
	CHECK(inv_pci_sysfs_id("not a bus id", b, sizeof b) == -1);
	CHECK(inv_pci_sysfs_id("0000:18:40.0", b, sizeof b) == -1);   /* device > 31 */
	CHECK(inv_pci_sysfs_id("00000000:18:00.0x", b, sizeof b) == -1);
}

static void test_cloud_guess(void)
{
	struct cloud_evidence e;
	char why[160];

	memset(&e, 0, sizeof e);
	CHECK(cloud_guess(&e, why, sizeof why) == NULL);
	CHECK_STR(why, "");
	gv_strlcpy(e.sys_vendor, "Amazon EC2", sizeof e.sys_vendor);
	CHECK_STR(cloud_guess(&e, why, sizeof why), "aws");
	CHECK(strstr(why, "Amazon EC2") != NULL);
	memset(&e, 0, sizeof e);
	gv_strlcpy(e.bios_version, "4.11.amazon", sizeof e.bios_version);
	CHECK_STR(cloud_guess(&e, why, sizeof why), "aws");
	memset(&e, 0, sizeof e);
	gv_strlcpy(e.hypervisor_uuid, "ec2e1916-9099-7caf-fd21-012345abcdef", sizeof e.hypervisor_uuid);
	CHECK_STR(cloud_guess(&e, why, sizeof why), "aws");
	memset(&e, 0, sizeof e);
	gv_strlcpy(e.sys_vendor, "Alibaba Cloud", sizeof e.sys_vendor);
	gv_strlcpy(e.product_name, "Alibaba Cloud ECS", sizeof e.product_name);
	CHECK_STR(cloud_guess(&e, why, sizeof why), "alibaba");
	/* Lambda needs both: the Lambda Stack source and a virtual machine */
	memset(&e, 0, sizeof e);
	e.lambda_repo = 1;
	CHECK(cloud_guess(&e, why, sizeof why) == NULL);
	e.hypervisor_flag = 1;
	CHECK_STR(cloud_guess(&e, why, sizeof why), "lambda");
	CHECK(strstr(why, "lambdalabs") != NULL);
	memset(&e, 0, sizeof e);
	e.hypervisor_flag = 1;
	gv_strlcpy(e.sys_vendor, "QEMU", sizeof e.sys_vendor);
	CHECK(cloud_guess(&e, why, sizeof why) == NULL);

	CHECK(cloud_value_ok("p5.48xlarge", 11));
	CHECK(cloud_value_ok("ecs.gn7i-c8g1.2xlarge", 21));
	CHECK(cloud_value_ok("gpu_8x_h100_sxm5", 16));
	CHECK(!cloud_value_ok("", 0));
	CHECK(!cloud_value_ok("<html>", 6));
	CHECK(!cloud_value_ok("a b", 3));
	CHECK(!cloud_value_ok("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", 64));
}

static void test_cloud_override_and_none(void)
{
	struct cloud_opts o = { .no_metadata = 1 };
	struct cloud_id id;
	char root[] = "/tmp/gv-inv-root-XXXXXX";
	CHECK(mkdtemp(root) != NULL);
	setenv("GPUVET_SYSROOT", root, 1);   /* no DMI, no apt sources: nothing to guess from */
	cloud_detect(&o, &id);
	CHECK_STR(id.provider, "unknown");
	CHECK_STR(id.source, "none");
	o.provider = "lambda";
	o.sku = "gpu_1x_h100_pcie";
	cloud_detect(&o, &id);
	CHECK_STR(id.provider, "lambda");
	CHECK_STR(id.instance_type, "gpu_1x_h100_pcie");
	CHECK_STR(id.region, "");
	CHECK_STR(id.source, "override");
	json_t *j = cloud_to_json(&id);
	CHECK(json_is_null(json_object_get(j, "region")));
	CHECK_STR(json_string_value(json_object_get(j, "instance_type")), "gpu_1x_h100_pcie");
	json_decref(j);
	unsetenv("GPUVET_SYSROOT");
	rmdir(root);
}

/* Runs fn in a child (gv_nvml_load caches its result per process); returns its exit code. */
static int in_child(int (*fn)(void))
{
	fflush(NULL);
	pid_t p = fork();
	if (p == 0)
		_exit(fn());
	int st = 0;
	if (p < 0 || waitpid(p, &st, 0) != p || !WIFEXITED(st))
		return -1;
	return WEXITSTATUS(st);
}

static int nvml_missing(void)
{
	char why[256] = "";
	setenv("GPUVET_NVML_LIB", "/nonexistent/libnvidia-ml.so.1", 1);
	if (gv_nvml_load(why, sizeof why) != NULL)
		return 1;
	if (strncmp(why, "nvidia driver not found: ", 25))
		return 2;
	/* cached: the second call gives the same answer */
	why[0] = '\0';
	if (gv_nvml_load(why, sizeof why) != NULL || !strstr(why, "nonexistent"))
		return 3;
	return 0;
}

static int nvml_not_nvml(void)
{
	char why[256] = "";
	setenv("GPUVET_NVML_LIB", "libm.so.6", 1);   /* a real library without NVML's symbols */
	if (gv_nvml_load(why, sizeof why) != NULL)
		return 1;
	return strstr(why, "lacks nvmlInit") ? 0 : 2;
}

static void test_nvml_load_failures(void)
{
	CHECK(in_child(nvml_missing) == 0);
	CHECK(in_child(nvml_not_nvml) == 0);
	CHECK(strstr(gv_nvml_strerror(NULL, NVML_ERROR_NOT_SUPPORTED), "3") != NULL);
}

/*
 * With GPUVET_TEST_FAKE_NVML set to the fake library's path (the integration
 * test builds it and reruns this binary): a child forked after the parent
 * initialised NVML must get a working table, not "Uninitialized".
 */
static int nvml_count_ok(void)
{
	char why[256] = "";
	unsigned n = 0;
	const struct gv_nvml *nv = gv_nvml_load(why, sizeof why);
	if (!nv)
		return 10;
	return nv->DeviceGetCount(&n) == NVML_SUCCESS && n == 2 ? 0 : 11;
}

static int nvml_fork_reinit(void)
{
	setenv("GPUVET_NVML_LIB", getenv("GPUVET_TEST_FAKE_NVML"), 1);
	if (nvml_count_ok())
		return 1;
	return in_child(nvml_count_ok);   /* a second level: the harness's bench child */
}

static void test_nvml_fork(void)
{
	if (!getenv("GPUVET_TEST_FAKE_NVML")) {
		printf("test_nvml_fork: skipped here, run by tests/integration/test_inventory.py\n");
		return;
	}
	CHECK(in_child(nvml_fork_reinit) == 0);
}

static void test_readers(void)
{
	json_error_t err;
	json_t *inv = json_loads("{\"gpus\":[{\"index\":0,\"reference_model\":\"H100-SXM\"},{\"index\":1}],"
				 "\"gpu_error\":null,\"cloud\":{\"provider\":\"aws\",\"instance_type\":\"p5.48xlarge\","
				 "\"region\":\"us-east-1\"}}", 0, &err);
	CHECK(inv != NULL);
	CHECK(inventory_gpu_count(inv) == 2);
	CHECK(inventory_gpu_error(inv) == NULL);
	CHECK_STR(inventory_gpu_model(inv), "H100-SXM");
	CHECK_STR(inventory_provider(inv), "aws");
	CHECK_STR(inventory_instance_type(inv), "p5.48xlarge");
	CHECK_STR(inventory_region(inv), "us-east-1");
	json_decref(inv);
	inv = json_loads("{\"gpus\":[],\"gpu_error\":\"nvidia driver not found: x\",\"cloud\":"
			 "{\"provider\":\"unknown\",\"instance_type\":null,\"region\":null}}", 0, &err);
	CHECK(inventory_gpu_count(inv) == 0);
	CHECK_STR(inventory_gpu_error(inv), "nvidia driver not found: x");
	CHECK(inventory_gpu_model(inv) == NULL);
	CHECK_STR(inventory_provider(inv), "unknown");
	CHECK(inventory_instance_type(inv) == NULL);
	CHECK(inventory_region(inv) == NULL);
	json_decref(inv);
	CHECK_STR(inventory_provider(NULL), "unknown");
}

static void test_collect_here(void)
{
	struct inventory_opts o = { .no_metadata = 1, .sku = "g5.xlarge" };
	static const char *const keys[] = { "host", "cpu", "memory", "numa", "disks", "gpus",
					    "gpu_error", "driver", "cloud" };
	json_t *inv = inventory_collect(&o);
	CHECK(json_is_object(inv));
	for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
		CHECK(json_object_get(inv, keys[i]) != NULL);
	CHECK(json_is_array(json_object_get(inv, "gpus")));
	/* zero GPUs always comes with a reason */
	if (inventory_gpu_count(inv) == 0)
		CHECK(inventory_gpu_error(inv) != NULL);
	CHECK(json_integer_value(json_object_get(json_object_get(inv, "memory"), "total_bytes")) > 0);
	CHECK(json_integer_value(json_object_get(json_object_get(inv, "cpu"), "threads")) > 0);
	CHECK_STR(inventory_instance_type(inv), "g5.xlarge");
	CHECK_STR(json_string_value(json_object_get(json_object_get(inv, "cloud"), "source")), "override");
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	CHECK(f != NULL);
	if (f) {
		inventory_print(inv, f);
		fclose(f);
		CHECK(strstr(buf, "Memory") != NULL && strstr(buf, "GiB") != NULL);
		CHECK(strstr(buf, "g5.xlarge") != NULL);
		free(buf);
	}
	json_decref(inv);
}

/* XID reports of the NVIDIA driver in the kernel log, as /dev/kmsg and dmesg give them. */
static void test_xid_records(void)
{
	struct inv_xid x;
	const char *k = "4,1234,5678901234,-;NVRM: Xid (PCI:0000:53:00): 79, pid=4242, name=python3, GPU has fallen off the bus.";
	CHECK(inv_parse_xid_record(k, strlen(k), &x) == 0);
	CHECK(x.xid == 79);
	CHECK_STR(x.pci, "0000:53:00");
	CHECK_NEAR(x.ts_s, 5678.901234, 1e-9);
	const char *d = "[ 1234.500000] NVRM: Xid (PCI:0000:C3:00): 13, pid='<unknown>', name=<unknown>, Graphics Exception";
	CHECK(inv_parse_xid_record(d, strlen(d), &x) == 0);
	CHECK(x.xid == 13 && !strcmp(x.pci, "0000:c3:00"));
	CHECK_NEAR(x.ts_s, 1234.5, 1e-9);
	const char *n = "NVRM: Xid (PCI:0000:53:00): 94, Contained ECC error";   /* no timestamp */
	CHECK(inv_parse_xid_record(n, strlen(n), &x) == 0 && x.xid == 94 && x.ts_s == -1);
	/* the length is honoured: the record stops before the code */
	CHECK(inv_parse_xid_record(k, 48, &x) == -1);
	CHECK(inv_parse_xid_record(k, 49, &x) == 0 && x.xid == 7);
	const char *bad[] = {
		"6,1,2,-;NVRM: loading NVIDIA UNIX x86_64 Kernel Module 580.159.04",
		"6,1,2,-;NVRM: Xid (PCI:0000:53:00): , pid=1",
		"6,1,2,-;NVRM: Xid (PCI:zz:00): 79, pid=1",
		"6,1,2,-;NVRM: Xid (PCI:0000:53:00) 79",
		"6,1,2,-;NVRM: Xid (PCI:0000:53:00): 79.5, pid=1",
		"",
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		CHECK(inv_parse_xid_record(bad[i], strlen(bad[i]), &x) == -1);
	/* the hardware list of issue 13, at its edges */
	static const int hw[] = { 48, 56, 58, 62, 64, 68, 77, 79, 86, 88, 89, 92, 94, 105, 110, 120, 122, 125 };
	static const int app[] = { 13, 31, 43, 45, 47, 49, 55, 59, 61, 65, 67, 78, 87, 90, 91, 93, 106, 109, 121, 126 };
	for (size_t i = 0; i < sizeof hw / sizeof hw[0]; i++)
		CHECK(inv_xid_is_hardware(hw[i]));
	for (size_t i = 0; i < sizeof app / sizeof app[0]; i++)
		CHECK(!inv_xid_is_hardware(app[i]));
}

TEST_MAIN(T(test_xid_records), T(test_cpuinfo_amd_vm), T(test_cpuinfo_arm_and_bad), T(test_meminfo), T(test_mountinfo),
	  T(test_os_release), T(test_formatting), T(test_sysfs_helpers), T(test_cloud_guess),
	  T(test_cloud_override_and_none), T(test_nvml_load_failures), T(test_nvml_fork), T(test_readers),
	  T(test_collect_here))
