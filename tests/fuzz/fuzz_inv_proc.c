/*
 * fuzz_inv_proc.c - the inventory's text parsers (platform/inv_parse.c) on
 * arbitrary input: /proc/cpuinfo, /proc/meminfo, /proc/self/mountinfo,
 * /etc/os-release, NVML PCI bus ids, the kernel log's XID records, and the metadata-answer check of
 * runners/cloud.c.  Every parser gets the same bytes; none may crash, leak
 * or read past the end.  Seeds: the real captures of tests/fixtures/inventory.
 */
#include "runners/cloud.h"
#include "platform/inv_parse.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);
	char buf[64];
	struct inv_cpuinfo ci;
	struct inv_meminfo mi;
	struct inv_mounts m;

	if (!s)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';   /* the readers hand the parsers NUL-terminated text */

	inv_parse_cpuinfo(s, &ci);
	if (strnlen(ci.model, sizeof ci.model) == sizeof ci.model ||
	    strnlen(ci.vendor, sizeof ci.vendor) == sizeof ci.vendor)
		abort();   /* fields must stay terminated */
	inv_parse_meminfo(s, &mi);
	inv_parse_mountinfo(s, &m);
	for (size_t i = 0; i < m.n; i++)
		if (!m.v[i].mountpoint || !m.v[i].fstype || !m.v[i].source)
			abort();
	inv_mounts_free(&m);
	inv_os_release_get(s, "PRETTY_NAME", buf, sizeof buf);
	inv_os_release_get(s, "NAME", buf, 1);
	inv_pci_sysfs_id(s, buf, sizeof buf);
	inv_disk_transport(s);
	cloud_value_ok(s, size);
	struct inv_xid x;
	if (!inv_parse_xid_record((const char *)data, size, &x) && strnlen(x.pci, sizeof x.pci) == sizeof x.pci)
		abort();   /* reads only size bytes (data is not terminated), and keeps pci terminated */
	free(s);
	return 0;
}
