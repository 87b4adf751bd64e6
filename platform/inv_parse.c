/* inv_parse.c - see inv_parse.h */
#include "platform/inv_parse.h"
#include "common/util.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Next line of text: [*line, *len) without the newline; advances *p. 0 at end. */
static int next_line(const char **p, const char **line, size_t *len)
{
	const char *s = *p, *nl;
	if (!*s)
		return 0;
	nl = strchr(s, '\n');
	*line = s;
	*len = nl ? (size_t)(nl - s) : strlen(s);
	*p = nl ? nl + 1 : s + *len;
	return 1;
}

/* Copies [s, s+n) trimmed of blanks on both ends into buf. */
static void copy_trim(char *buf, size_t size, const char *s, size_t n)
{
	while (n && isspace((unsigned char)*s))
		s++, n--;
	while (n && isspace((unsigned char)s[n - 1]))
		n--;
	if (!size)
		return;
	if (n >= size)
		n = size - 1;
	memcpy(buf, s, n);
	buf[n] = '\0';
}

/*
 * Splits a "key<blanks>: value" line.  Key trimmed into key (truncated to
 * ksize), value start and length returned; -1 when the line has no colon.
 */
static int split_kv(const char *line, size_t len, char *key, size_t ksize,
		    const char **val, size_t *vlen)
{
	const char *colon = memchr(line, ':', len);
	if (!colon)
		return -1;
	copy_trim(key, ksize, line, (size_t)(colon - line));
	*val = colon + 1;
	*vlen = len - (size_t)(colon + 1 - line);
	while (*vlen && isspace((unsigned char)**val))
		(*val)++, (*vlen)--;
	while (*vlen && isspace((unsigned char)(*val)[*vlen - 1]))
		(*vlen)--;
	return 0;
}

/* Parses a decimal or 0x-hex number in [s, s+n); -1 on failure. */
static long parse_num(const char *s, size_t n, int base)
{
	char buf[32];
	char *end;
	long v;
	if (!n || n >= sizeof buf)
		return -1;
	memcpy(buf, s, n);
	buf[n] = '\0';
	errno = 0;
	v = strtol(buf, &end, base);
	if (errno || end == buf || *end || v < 0)
		return -1;
	return v;
}

/* Does the blank-separated word list [s, s+n) contain word? */
static int has_word(const char *s, size_t n, const char *word)
{
	size_t wl = strlen(word);
	size_t i = 0;
	while (i < n) {
		while (i < n && isspace((unsigned char)s[i]))
			i++;
		size_t st = i;
		while (i < n && !isspace((unsigned char)s[i]))
			i++;
		if (i - st == wl && !memcmp(s + st, word, wl))
			return 1;
	}
	return 0;
}

/* ARM "CPU implementer" / "CPU part" codes of the server parts seen in GPU clouds
 * (Arm's Technical Reference Manuals, MIDR_EL1 PartNum field). */
static const struct { long impl; const char *name; } arm_impls[] = {
	{ 0x41, "ARM" }, { 0x4e, "NVIDIA" }, { 0xc0, "Ampere" }, { 0x48, "HiSilicon" },
	{ 0x61, "Apple" }, { 0x51, "Qualcomm" },
};
static const struct { long impl, part; const char *name; } arm_parts[] = {
	{ 0x41, 0xd0c, "Neoverse-N1" }, { 0x41, 0xd40, "Neoverse-V1" },
	{ 0x41, 0xd49, "Neoverse-N2" }, { 0x41, 0xd4f, "Neoverse-V2" },
	{ 0x41, 0xd84, "Neoverse-V3" }, { 0x41, 0xd8e, "Neoverse-N3" },
	{ 0xc0, 0xac3, "Ampere-1" }, { 0xc0, 0xac4, "Ampere-1a" },
};

int inv_parse_cpuinfo(const char *text, struct inv_cpuinfo *out)
{
	const char *p = text, *line, *val;
	size_t len, vlen;
	char key[64];
	long impl = -1, part = -1;
	unsigned char seen_phys[256 / 8] = { 0 };
	int first_done = 0;

	memset(out, 0, sizeof *out);
	while (next_line(&p, &line, &len)) {
		if (split_kv(line, len, key, sizeof key, &val, &vlen))
			continue;
		if (!strcmp(key, "processor")) {
			/* a second entry starts: only the first one's per-entry fields count */
			if (out->logical)
				first_done = 1;
			out->logical++;
		} else if (!strcmp(key, "model name") && !out->model[0]) {
			copy_trim(out->model, sizeof out->model, val, vlen);
		} else if (!strcmp(key, "vendor_id") && !out->vendor[0]) {
			copy_trim(out->vendor, sizeof out->vendor, val, vlen);
		} else if (!strcmp(key, "physical id")) {
			long id = parse_num(val, vlen, 10);
			if (id >= 0 && id < 256 && !(seen_phys[id / 8] & (1u << (id % 8)))) {
				seen_phys[id / 8] |= (unsigned char)(1u << (id % 8));
				out->sockets++;
			}
		} else if (!strcmp(key, "cpu cores") && !first_done && !out->cores_per_socket) {
			long c = parse_num(val, vlen, 10);
			if (c > 0 && c < 1 << 20)
				out->cores_per_socket = (int)c;
		} else if (!strcmp(key, "flags") && !first_done) {
			if (has_word(val, vlen, "hypervisor"))
				out->hypervisor = 1;
		} else if (!strcmp(key, "CPU implementer") && impl < 0) {
			impl = parse_num(val, vlen, 0);
		} else if (!strcmp(key, "CPU part") && part < 0) {
			part = parse_num(val, vlen, 0);
		}
	}
	if (!out->logical)
		return -1;
	if (impl >= 0) {
		const char *iname = NULL, *pname = NULL;
		for (size_t i = 0; i < sizeof arm_impls / sizeof arm_impls[0]; i++)
			if (arm_impls[i].impl == impl)
				iname = arm_impls[i].name;
		for (size_t i = 0; i < sizeof arm_parts / sizeof arm_parts[0]; i++)
			if (arm_parts[i].impl == impl && arm_parts[i].part == part)
				pname = arm_parts[i].name;
		if (!out->vendor[0]) {
			if (iname)
				gv_strlcpy(out->vendor, iname, sizeof out->vendor);
			else
				snprintf(out->vendor, sizeof out->vendor, "implementer 0x%lx", impl);
		}
		if (!out->model[0]) {
			if (pname)
				gv_strlcpy(out->model, pname, sizeof out->model);
			else if (part >= 0)
				snprintf(out->model, sizeof out->model, "CPU part 0x%lx", part);
		}
	}
	return 0;
}

int inv_parse_meminfo(const char *text, struct inv_meminfo *out)
{
	static const struct { const char *key; size_t off; int in_kb; } fields[] = {
		{ "MemTotal", offsetof(struct inv_meminfo, total), 1 },
		{ "MemAvailable", offsetof(struct inv_meminfo, available), 1 },
		{ "SwapTotal", offsetof(struct inv_meminfo, swap_total), 1 },
		{ "HugePages_Total", offsetof(struct inv_meminfo, hugepages_total), 0 },
		{ "Hugepagesize", offsetof(struct inv_meminfo, hugepage_size), 1 },
	};
	const char *p = text, *line, *val;
	size_t len, vlen;
	char key[64];

	out->total = out->available = out->swap_total = -1;
	out->hugepages_total = out->hugepage_size = -1;
	while (next_line(&p, &line, &len)) {
		if (split_kv(line, len, key, sizeof key, &val, &vlen))
			continue;
		for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
			if (strcmp(key, fields[i].key))
				continue;
			size_t nlen = 0;
			while (nlen < vlen && isdigit((unsigned char)val[nlen]))
				nlen++;
			const char *unit = val + nlen;
			size_t ulen = vlen - nlen;
			while (ulen && isspace((unsigned char)*unit))
				unit++, ulen--;
			long v = parse_num(val, nlen, 10);
			if (v < 0)
				break;
			long long bytes = v;
			if (fields[i].in_kb) {
				/* the kernel always writes "kB" (KiB); refuse anything else */
				if (ulen != 2 || memcmp(unit, "kB", 2))
					break;
				if (bytes > (long long)(9.2e18 / 1024))
					break;
				bytes *= 1024;
			} else if (ulen) {
				break;
			}
			memcpy((char *)out + fields[i].off, &bytes, sizeof bytes);
			break;
		}
	}
	return out->total >= 0 ? 0 : -1;
}

/* Decodes mountinfo's octal escapes (\040 space, \011 tab, \012 newline, \134 backslash). */
static char *unescape_field(const char *s, size_t n)
{
	char *o = gv_malloc(n + 1);
	size_t j = 0;
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '\\' && i + 3 < n &&
		    s[i + 1] >= '0' && s[i + 1] <= '3' && s[i + 2] >= '0' && s[i + 2] <= '7' &&
		    s[i + 3] >= '0' && s[i + 3] <= '7') {
			int c = (s[i + 1] - '0') * 64 + (s[i + 2] - '0') * 8 + (s[i + 3] - '0');
			o[j++] = c ? (char)c : '?';
			i += 3;
		} else {
			o[j++] = s[i];
		}
	}
	o[j] = '\0';
	return o;
}

/*
 * One mountinfo line (proc(5)):
 *   36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw,errors=continue
 *   (1)(2)(3)  (4)   (5)   (6)       (7...)    - (8)  (9)       (10)
 * Optional fields (7) end at a lone "-".
 */
static int parse_mount_line(const char *line, size_t len, struct inv_mount *m)
{
	const char *f[64];
	size_t fl[64];
	size_t nf = 0, i = 0;
	while (i < len && nf < 64) {
		while (i < len && line[i] == ' ')
			i++;
		if (i >= len)
			break;
		f[nf] = line + i;
		while (i < len && line[i] != ' ')
			i++;
		fl[nf] = (size_t)(line + i - f[nf]);
		nf++;
	}
	if (nf < 10)
		return -1;
	size_t dash = 0;
	for (size_t k = 6; k < nf; k++)
		if (fl[k] == 1 && f[k][0] == '-') {
			dash = k;
			break;
		}
	if (!dash || dash + 2 >= nf)
		return -1;
	/* major:minor */
	const char *colon = memchr(f[2], ':', fl[2]);
	if (!colon)
		return -1;
	long maj = parse_num(f[2], (size_t)(colon - f[2]), 10);
	long min = parse_num(colon + 1, fl[2] - (size_t)(colon + 1 - f[2]), 10);
	if (maj < 0 || min < 0 || maj > 0xfffff || min > 0xfffffff)
		return -1;
	m->major = (unsigned)maj;
	m->minor = (unsigned)min;
	m->mountpoint = unescape_field(f[4], fl[4]);
	m->fstype = unescape_field(f[dash + 1], fl[dash + 1]);
	m->source = unescape_field(f[dash + 2], fl[dash + 2]);
	return 0;
}

size_t inv_parse_mountinfo(const char *text, struct inv_mounts *out)
{
	const char *p = text, *line;
	size_t len, cap = 0;
	out->n = 0;
	out->v = NULL;
	while (next_line(&p, &line, &len)) {
		struct inv_mount m;
		if (parse_mount_line(line, len, &m))
			continue;
		if (out->n == cap) {
			cap = cap ? cap * 2 : 32;
			out->v = gv_realloc(out->v, cap * sizeof *out->v);
		}
		out->v[out->n++] = m;
	}
	return out->n;
}

void inv_mounts_free(struct inv_mounts *m)
{
	for (size_t i = 0; i < m->n; i++) {
		free(m->v[i].mountpoint);
		free(m->v[i].fstype);
		free(m->v[i].source);
	}
	free(m->v);
	m->v = NULL;
	m->n = 0;
}

int inv_os_release_get(const char *text, const char *key, char *buf, size_t size)
{
	const char *p = text, *line;
	size_t len, klen = strlen(key);
	if (!size)
		return -1;
	while (next_line(&p, &line, &len)) {
		if (len <= klen || memcmp(line, key, klen) || line[klen] != '=')
			continue;
		const char *v = line + klen + 1;
		size_t vl = len - klen - 1, j = 0;
		char q = 0;
		if (vl && (v[0] == '"' || v[0] == '\'')) {
			q = v[0];
			v++, vl--;
		}
		for (size_t i = 0; i < vl && j + 1 < size; i++) {
			if (q && v[i] == q)
				break;
			if (q == '"' && v[i] == '\\' && i + 1 < vl)
				i++;
			buf[j++] = v[i];
		}
		buf[j] = '\0';
		return 0;
	}
	buf[0] = '\0';
	return -1;
}

const char *inv_virt_mode_name(int mode)
{
	/* nvmlGpuVirtualizationMode_t: NONE 0, PASSTHROUGH 1, VGPU 2, HOST_VGPU 3, HOST_VSGA 4 */
	static const char *const names[] = { "none", "passthrough", "vgpu", "host_vgpu", "host_vsga" };
	if (mode < 0 || (size_t)mode >= sizeof names / sizeof names[0])
		return "unknown";
	return names[mode];
}

double inv_pcie_gts(int gen)
{
	static const double gts[] = { 0, 2.5, 5.0, 8.0, 16.0, 32.0, 64.0 };
	if (gen < 1 || (size_t)gen >= sizeof gts / sizeof gts[0])
		return 0;
	return gts[gen];
}

char *inv_pcie_format(int gen, int width, char *buf, size_t size)
{
	char g[16], w[16];
	if (gen > 0)
		snprintf(g, sizeof g, "%d", gen);
	else
		gv_strlcpy(g, "?", sizeof g);
	if (width > 0)
		snprintf(w, sizeof w, "%d", width);
	else
		gv_strlcpy(w, "?", sizeof w);
	snprintf(buf, size, "gen%s x%s", g, w);
	return buf;
}

char *inv_bytes_format(long long bytes, char *buf, size_t size)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB" };
	double v = (double)bytes;
	size_t u = 0;
	if (bytes < 0) {
		snprintf(buf, size, "?");
		return buf;
	}
	while (v >= 1024 && u + 1 < sizeof units / sizeof units[0]) {
		v /= 1024;
		u++;
	}
	if (u == 0)
		snprintf(buf, size, "%lld B", bytes);
	else
		snprintf(buf, size, v >= 100 ? "%.0f %s" : "%.1f %s", v, units[u]);
	return buf;
}

char *inv_cuda_version_format(int v, char *buf, size_t size)
{
	/* NVML: 1000 * major + 10 * minor (12040 -> 12.4) */
	if (v <= 0)
		snprintf(buf, size, "?");
	else
		snprintf(buf, size, "%d.%d", v / 1000, (v % 1000) / 10);
	return buf;
}

const char *inv_disk_transport(const char *syspath)
{
	/* ordered: an NVMe or virtio disk behind PCI also has "pci" in its path */
	if (strstr(syspath, "/nvme"))
		return "nvme";
	if (strstr(syspath, "/virtio"))
		return "virtio";
	if (strstr(syspath, "/usb"))
		return "usb";
	if (strstr(syspath, "/ata"))
		return "sata";
	if (strstr(syspath, "/vbd-"))
		return "xen";
	if (strstr(syspath, "/mmc"))
		return "mmc";
	if (strstr(syspath, "/host") && strstr(syspath, "/target"))
		return "scsi";
	return "unknown";
}

int inv_pci_sysfs_id(const char *id, char *buf, size_t size)
{
	/* [domain:]bus:device.function, hex; NVML writes an 8-digit domain */
	unsigned dom = 0, bus, dev, fn;
	char tail;
	/* sscanf's %x would also take signs, blanks and "0x": allow only the bus id alphabet */
	if (!*id || strspn(id, "0123456789abcdefABCDEF:.") != strlen(id) || strlen(id) > 20)
		return -1;
	int n = sscanf(id, "%x:%x:%x.%x%c", &dom, &bus, &dev, &fn, &tail);
	if (n != 4) {
		dom = 0;
		if (sscanf(id, "%x:%x.%x%c", &bus, &dev, &fn, &tail) != 3)
			return -1;
	}
	if (dom > 0xffff || bus > 0xff || dev > 0x1f || fn > 7)
		return -1;
	snprintf(buf, size, "%04x:%02x:%02x.%x", dom, bus, dev, fn);
	return 0;
}

/* ---- kernel log XIDs ---- */

int inv_xid_is_hardware(int x)
{
	static const int ranges[][2] = { { 48, 48 }, { 56, 58 }, { 62, 64 }, { 68, 77 }, { 79, 86 }, { 88, 89 },
					 { 92, 92 }, { 94, 105 }, { 110, 120 }, { 122, 125 } };
	for (size_t i = 0; i < sizeof ranges / sizeof ranges[0]; i++)
		if (x >= ranges[i][0] && x <= ranges[i][1])
			return 1;
	return 0;
}

/* Index of needle in hay[0..len), or -1. */
static long find_in(const char *hay, size_t len, const char *needle)
{
	size_t n = strlen(needle);
	for (size_t i = 0; n <= len && i + n <= len; i++)
		if (!memcmp(hay + i, needle, n))
			return (long)i;
	return -1;
}

/* A decimal number (with an optional fraction) at p[0..len); its length, 0 when none. */
static size_t num_at(const char *p, size_t len, double *v)
{
	size_t i = 0;
	double x = 0, scale = 0;
	while (i < len && p[i] >= '0' && p[i] <= '9' && i < 18)
		x = x * 10 + (p[i++] - '0');
	if (!i)
		return 0;
	if (i < len && p[i] == '.') {
		scale = 1;
		for (i++; i < len && p[i] >= '0' && p[i] <= '9'; i++) {
			scale /= 10;
			x += (p[i] - '0') * scale;
		}
	}
	*v = x;
	return i;
}

static double record_ts(const char *line, size_t len)
{
	double v;
	size_t i = 0, k;
	if (len && line[0] == '[') {            /* dmesg: "[ 5678.901234] " */
		for (i = 1; i < len && line[i] == ' '; i++)
			;
		k = num_at(line + i, len - i, &v);
		return k && i + k < len && line[i + k] == ']' ? v : -1;
	}
	/* /dev/kmsg: "pri,seq,usec,flags;" */
	for (int field = 0; field < 2; field++) {
		while (i < len && line[i] != ',' && line[i] != ';')
			i++;
		if (i >= len || line[i] != ',')
			return -1;
		i++;
	}
	k = num_at(line + i, len - i, &v);
	return k && i + k < len && (line[i + k] == ',' || line[i + k] == ';') ? v / 1e6 : -1;
}

int inv_parse_xid_record(const char *line, size_t len, struct inv_xid *out)
{
	static const char tag[] = "NVRM: Xid (PCI:";
	long at = find_in(line, len, tag);
	if (at < 0)
		return -1;
	size_t i = (size_t)at + sizeof tag - 1, j = 0;
	char pci[sizeof out->pci];
	while (i < len && line[i] != ')' && j + 1 < sizeof pci) {
		char c = line[i++];
		if (!strchr("0123456789abcdefABCDEF:.", c))
			return -1;
		pci[j++] = (char)(c >= 'A' && c <= 'F' ? c - 'A' + 'a' : c);
	}
	pci[j] = '\0';
	if (!j || i + 2 >= len || line[i] != ')' || line[i + 1] != ':')
		return -1;
	for (i += 2; i < len && line[i] == ' '; i++)
		;
	double x;
	size_t k = num_at(line + i, len - i, &x);
	if (!k || x > 100000 || x != (double)(long)x)
		return -1;
	memcpy(out->pci, pci, j + 1);
	out->xid = (int)x;
	out->ts_s = record_ts(line, len);
	return 0;
}
