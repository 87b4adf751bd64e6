/*
 * nic.h - a node's network interface as the kernel states it (#56): the
 * interface that holds an address, and its link rate from
 * /sys/class/net/IF/speed (Mb/s; -1 or unreadable: unknown, as for lo and
 * most virtual interfaces).
 */
#ifndef GPUVET_NIC_H
#define GPUVET_NIC_H

#include <stddef.h>

/* The interface holding addr (IPv4 or IPv6 text) into ifname; -1 when none does. */
int nic_of_addr(const char *addr, char *ifname, size_t len);
/*
 * The link rate of the interface holding addr: 0 with *gbps (GB/s, 1e9 bytes/s: Mb/s / 8000)
 * and source ("sysfs eth0 speed 10000 Mb/s"); -1 when unknown, with why in source.  sysfs
 * (default "/sys/class/net") is where to read it, for tests.
 */
int nic_link_rate(const char *addr, const char *sysfs, double *gbps, char *source, size_t len);

#endif
