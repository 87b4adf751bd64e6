/*
 * test_nic.c - a node's interface and its stated link rate (platform/nic.h,
 * #56): the interface that holds 127.0.0.1 is lo; the rate read from a sysfs
 * tree made here (a speed in Mb/s, -1 for unknown, none at all, garbage),
 * since this machine's own interfaces may state none.
 */
#include "tests/unit/t.h"
#include "platform/nic.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static char root[64];

static void speed_file(const char *text)
{
	char path[128];
	snprintf(path, sizeof path, "%s/lo", root);
	mkdir(path, 0700);
	snprintf(path, sizeof path, "%s/lo/speed", root);
	if (!text) {
		unlink(path);
		return;
	}
	FILE *f = fopen(path, "w");
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

static void interface_of_an_address(void)
{
	char ifname[32];
	CHECK(nic_of_addr("127.0.0.1", ifname, sizeof ifname) == 0);
	CHECK_STR(ifname, "lo");
	CHECK(nic_of_addr("198.18.255.254", ifname, sizeof ifname) == -1);
	CHECK(nic_of_addr("", ifname, sizeof ifname) == -1);
}

static void link_rate(void)
{
	double gbps = 0;
	char src[96];
	snprintf(root, sizeof root, "/tmp/gpuvet-nic-XXXXXX");
	CHECK(mkdtemp(root) != NULL);
	speed_file("100000\n");   /* a 100 Gb/s NIC */
	CHECK(nic_link_rate("127.0.0.1", root, &gbps, src, sizeof src) == 0);
	CHECK_NEAR(gbps, 12.5, 1e-12);
	CHECK_STR(src, "sysfs lo speed 100000 Mb/s");
	speed_file("-1\n");   /* a virtual interface that states none */
	CHECK(nic_link_rate("127.0.0.1", root, &gbps, src, sizeof src) == -1 && strstr(src, "unknown"));
	speed_file("fast\n");
	CHECK(nic_link_rate("127.0.0.1", root, &gbps, src, sizeof src) == -1);
	speed_file(NULL);
	CHECK(nic_link_rate("127.0.0.1", root, &gbps, src, sizeof src) == -1 && strstr(src, "lo"));
	CHECK(nic_link_rate("198.18.255.254", root, &gbps, src, sizeof src) == -1 && strstr(src, "no interface"));
	char path[128];
	snprintf(path, sizeof path, "%s/lo", root);
	rmdir(path);
	rmdir(root);
}

TEST_MAIN(T(interface_of_an_address), T(link_rate))
