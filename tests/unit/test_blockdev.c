/*
 * test_blockdev.c - the block-device safety checks on this machine's real
 * devices and mount table: the root filesystem's device (mounted) must be
 * refused, character devices and regular files are not block devices, and
 * a mount table that lists a device's major:minor makes it refused.  Nothing
 * is ever written to a device.
 */
#include "platform/blockdev.h"
#include "common/util.h"
#include "tests/unit/t.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

/* A /dev node of the filesystem mounted at /, found through sysfs; 0 if none. */
static int root_device(char *out, size_t len, unsigned *maj, unsigned *min)
{
	struct stat st;
	if (stat("/", &st))
		return 0;
	*maj = major(st.st_dev);
	*min = minor(st.st_dev);
	char p[96], real[4096];
	snprintf(p, sizeof p, "/sys/dev/block/%u:%u", *maj, *min);
	if (!realpath(p, real))
		return 0;
	const char *base = strrchr(real, '/');
	snprintf(out, len, "/dev/%s", base + 1);
	struct stat ds;
	return stat(out, &ds) == 0 && S_ISBLK(ds.st_mode) && ds.st_rdev == st.st_dev;
}

static void test_root_device_refused(void)
{
	char dev[256], reason[512];
	unsigned maj, min;
	if (!root_device(dev, sizeof dev, &maj, &min)) {
		fprintf(stderr, "note: root filesystem has no /dev block node here; case not run\n");
		return;
	}
	CHECK(blockdev_check_unused(dev, NULL, NULL, reason, sizeof reason) == -1);
	CHECK(strstr(reason, "is mounted at /") != NULL);
	CHECK(strstr(reason, dev) != NULL);
}

static void test_not_block(void)
{
	char reason[512];
	CHECK(blockdev_check_unused("/dev/null", NULL, NULL, reason, sizeof reason) == -1);
	CHECK_STR(reason, "'/dev/null' is not a block device");
	CHECK(blockdev_check_unused("Makefile", NULL, NULL, reason, sizeof reason) == -1);
	CHECK_STR(reason, "'Makefile' is not a block device");
	CHECK(blockdev_check_unused("/nonexistent-gpuvet", NULL, NULL, reason, sizeof reason) == -1);
	CHECK(strstr(reason, "cannot use block device '/nonexistent-gpuvet'") == reason);
}

/* Any block device node in /dev that this mount table does not list. */
static int unmounted_block_device(char *out, size_t len, struct stat *st)
{
	static const char *cands[] = { "/dev/loop0", "/dev/loop7", "/dev/zram0", "/dev/sdz" };
	for (size_t i = 0; i < sizeof cands / sizeof cands[0]; i++) {
		if (stat(cands[i], st) == 0 && S_ISBLK(st->st_mode)) {
			char reason[512];
			if (blockdev_check_unused(cands[i], NULL, NULL, reason, sizeof reason) == 0) {
				snprintf(out, len, "%s", cands[i]);
				return 1;
			}
		}
	}
	return 0;
}

static void test_mount_table_refuses(void)
{
	char dev[64], reason[512];
	struct stat st;
	if (!unmounted_block_device(dev, sizeof dev, &st)) {
		fprintf(stderr, "note: no unused block device node here; case not run\n");
		return;
	}
	/* the same device, listed in a mount table (mount point with an escaped space) */
	char path[] = "/tmp/gpuvet-mountinfo-XXXXXX";
	const char *tmp = getenv("TMPDIR");
	char *p = tmp ? gv_asprintf("%s/gpuvet-mountinfo-XXXXXX", tmp) : gv_strdup(path);
	int fd = mkstemp(p);
	CHECK(fd >= 0);
	FILE *f = fdopen(fd, "w");
	fprintf(f, "27 1 254:99 / / rw,relatime - ext4 /dev/other rw\n");
	fprintf(f, "31 27 %u:%u / /mnt/my\\040data rw,relatime - ext4 %s rw\n",
		major(st.st_rdev), minor(st.st_rdev), dev);
	fclose(f);
	CHECK(blockdev_check_unused(dev, p, "/nonexistent", reason, sizeof reason) == -1);
	char want[256];
	snprintf(want, sizeof want, "'%s' is mounted at /mnt/my data", dev);
	CHECK_STR(reason, want);
	/* an unreadable mount table refuses rather than guessing */
	CHECK(blockdev_check_unused(dev, "/nonexistent-mountinfo", NULL, reason, sizeof reason) == -1);
	CHECK(strstr(reason, "cannot read '/nonexistent-mountinfo'") == reason);
	unlink(p);
	free(p);
}

static void test_unescape(void)
{
	char s[] = "/a\\040b\\011c\\134d\\04";
	blockdev_unescape(s);
	CHECK_STR(s, "/a b\tc\\d\\04");
}

static void test_largest_nvme_mount(void)
{
	/* whatever this machine has: a writable mount point or none, never a crash */
	char *m = blockdev_largest_nvme_mount(NULL);
	if (m) {
		CHECK(m[0] == '/');
		CHECK(access(m, W_OK) == 0);
	}
	free(m);
	CHECK(blockdev_largest_nvme_mount("/nonexistent-mountinfo") == NULL);
	/* a virtio disk is not NVMe */
	unsigned maj, min;
	char dev[256];
	if (root_device(dev, sizeof dev, &maj, &min) && !strncmp(dev, "/dev/vd", 7))
		CHECK(!blockdev_is_nvme(maj, min));
	CHECK(!blockdev_is_nvme(0, 21)); /* proc, sysfs: no block device */
}

static void test_network_models(void)
{
	/* /sys/class/nvme/nvme0/model on AWS Nitro (EBS vs instance store) and GCP */
	CHECK(blockdev_model_is_network("Amazon Elastic Block Store              "));
	CHECK(!blockdev_model_is_network("Amazon EC2 NVMe Instance Storage        "));
	CHECK(blockdev_model_is_network("nvme_card-pd"));
	CHECK(!blockdev_model_is_network("nvme_card"));
	CHECK(!blockdev_model_is_network("SAMSUNG MZWLJ3T8HBLS-00007"));
	CHECK(!blockdev_model_is_network(NULL));
}

TEST_MAIN(T(test_network_models), T(test_root_device_refused), T(test_not_block), T(test_mount_table_refuses),
	  T(test_unescape), T(test_largest_nvme_mount))
