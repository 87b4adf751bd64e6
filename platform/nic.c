/*
 * nic.c - the interface of an address and its link rate (platform/nic.h).
 */
#include "platform/nic.h"
#include "common/util.h"

#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

int nic_of_addr(const char *addr, char *ifname, size_t len)
{
	struct ifaddrs *ifa = NULL;
	int rc = -1;
	if (!addr || !*addr || getifaddrs(&ifa))
		return -1;
	for (struct ifaddrs *i = ifa; i && rc; i = i->ifa_next) {
		char h[NI_MAXHOST];
		if (!i->ifa_addr || (i->ifa_addr->sa_family != AF_INET && i->ifa_addr->sa_family != AF_INET6))
			continue;
		socklen_t sl = i->ifa_addr->sa_family == AF_INET ? sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6);
		if (getnameinfo(i->ifa_addr, sl, h, sizeof h, NULL, 0, NI_NUMERICHOST))
			continue;
		char *pct = strchr(h, '%');   /* a link-local address's scope */
		if (pct)
			*pct = '\0';
		if (!strcmp(h, addr)) {
			gv_strlcpy(ifname, i->ifa_name, len);
			rc = 0;
		}
	}
	freeifaddrs(ifa);
	return rc;
}

int nic_link_rate(const char *addr, const char *sysfs, double *gbps, char *source, size_t len)
{
	char ifname[IF_NAMESIZE + 1], path[256];
	if (nic_of_addr(addr, ifname, sizeof ifname))
		return gv_errf(source, len, "no interface here holds %s", addr && *addr ? addr : "the address");
	snprintf(path, sizeof path, "%s/%s/speed", sysfs ? sysfs : "/sys/class/net", ifname);
	size_t n = 0;
	char *text = gv_read_file_max(path, 64, &n);
	long mbps = -1;
	char *word = text ? strtok(text, " \n") : NULL;
	if (!word || gv_parse_long(word, -1, 100000000L, &mbps))
		mbps = -1;
	free(text);
	if (mbps <= 0)
		return gv_errf(source, len, "sysfs %s speed unknown", ifname);
	*gbps = (double)mbps / 8000.0;
	snprintf(source, len, "sysfs %s speed %ld Mb/s", ifname, mbps);
	return 0;
}
