/*
 * inv_parse.h - the pure parsers and formatters behind the inventory
 * (runners/inventory.c): text in, struct out, no I/O, so the unit tests feed
 * them captured files (tests/fixtures/inventory/) and the fuzzers feed them
 * anything (tests/fuzz/fuzz_inv_*.c).
 */
#ifndef GPUVET_INV_PARSE_H
#define GPUVET_INV_PARSE_H

#include <stddef.h>

/* ---- /proc/cpuinfo ---- */
struct inv_cpuinfo {
	char model[128];        /* "model name" (x86), else an ARM part name / "CPU part 0x..." */
	char vendor[64];        /* "vendor_id" (x86) or "CPU implementer 0x41" decoded */
	int logical;            /* "processor" entries */
	int sockets;            /* distinct "physical id" values (0 when the field is absent) */
	int cores_per_socket;   /* "cpu cores" of the first entry (0 when absent) */
	int hypervisor;         /* "hypervisor" among the x86 flags: running under a hypervisor */
};
/* Parses cpuinfo text (NUL-terminated); 0 on success, -1 when it has no processor entry. */
int inv_parse_cpuinfo(const char *text, struct inv_cpuinfo *out);

/* ---- /proc/meminfo ---- (bytes; -1 when the field is absent) */
struct inv_meminfo {
	long long total, available, swap_total, hugepages_total, hugepage_size;
};
/* 0 on success, -1 when MemTotal is missing. */
int inv_parse_meminfo(const char *text, struct inv_meminfo *out);

/* ---- /proc/self/mountinfo ---- */
struct inv_mount {
	unsigned major, minor;  /* st_dev of the mounted filesystem */
	char *mountpoint;       /* octal escapes (\040) decoded */
	char *fstype;
	char *source;           /* "/dev/nvme0n1p1", "overlay", ... (decoded) */
};
struct inv_mounts {
	size_t n;
	struct inv_mount *v;
};
/* Parses every well-formed line (malformed ones are skipped); returns the count. */
size_t inv_parse_mountinfo(const char *text, struct inv_mounts *out);
void inv_mounts_free(struct inv_mounts *m);

/* ---- /etc/os-release ---- */
/* Value of KEY (quotes and shell escapes removed) into buf; 0 found, -1 not. */
int inv_os_release_get(const char *text, const char *key, char *buf, size_t size);

/* ---- formatting shared by JSON and human output ---- */
/* NVML nvmlGpuVirtualizationMode_t as a string: "none", "passthrough",
 * "vgpu", "host_vgpu", "host_vsga"; "unknown" otherwise. */
const char *inv_virt_mode_name(int mode);
/* PCIe transfer rate per lane in GT/s for a generation (gen1 2.5 ... gen6 64); 0 if unknown. */
double inv_pcie_gts(int gen);
/* "gen4 x16" (either part "?" when <= 0) into buf; returns buf. */
char *inv_pcie_format(int gen, int width, char *buf, size_t size);
/* Bytes as "79.6 GiB" / "512 MiB" into buf; returns buf. */
char *inv_bytes_format(long long bytes, char *buf, size_t size);
/* CUDA driver version int (12040) as "12.4" into buf; returns buf. */
char *inv_cuda_version_format(int v, char *buf, size_t size);

/* ---- /sys ---- */
/* Transport of a block device from its resolved /sys/block/NAME path:
 * "nvme", "virtio", "sata", "scsi", "usb", "xen", "mmc" or "unknown". */
const char *inv_disk_transport(const char *syspath);
/* NVML bus id "00000000:18:00.0" as the sysfs name "0000:18:00.0" into buf;
 * 0 on success, -1 when it is not a bus id. */
int inv_pci_sysfs_id(const char *nvml_bus_id, char *buf, size_t size);

/* ---- kernel log: XID events of the NVIDIA driver ---- */
struct inv_xid {
	double ts_s;        /* seconds since boot, -1 when the line has no timestamp */
	char pci[24];       /* "0000:53:00" as the driver prints it (lowercased) */
	int xid;
};
/*
 * One kernel log record, as /dev/kmsg gives it ("6,1234,5678901234,-;NVRM: Xid
 * (PCI:0000:53:00): 79, pid=...") or as dmesg prints it ("[ 5678.901234] NVRM:
 * Xid (PCI:0000:53:00): 79, ..."): 0 and *out filled when it is an XID report,
 * -1 otherwise.  line need not be NUL-terminated (len bytes).
 */
int inv_parse_xid_record(const char *line, size_t len, struct inv_xid *out);
/* Whether an XID code is in the hardware list (issue 13: 48, 56-58, 62-64, 68-77,
 * 79-86, 88-89, 92, 94-105, 110-120, 122-125): a GPU, memory or link fault. */
int inv_xid_is_hardware(int xid);

#endif
