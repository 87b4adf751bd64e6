/*
 * blockdev.h - what the nvme bench needs to know about block devices:
 * whether one is safe to write to (not mounted, no mounted partitions, no
 * holders such as dm/md/LVM, not swap) and which mounted filesystem is the
 * largest one backed by local NVMe.  Everything is read from
 * /proc/self/mountinfo, /proc/swaps and /sys; nothing is written.
 */
#ifndef GPUVET_BLOCKDEV_H
#define GPUVET_BLOCKDEV_H

#include <stddef.h>

/*
 * 0 when path is a block device that nothing uses, -1 with a lowercase
 * one-line reason otherwise ("'/dev/vda' is mounted at /", "'/dev/sdb' has
 * holders: dm-0", "'/x' is not a block device").  mountinfo and swaps name
 * the files to read (NULL: /proc/self/mountinfo, /proc/swaps).
 */
int blockdev_check_unused(const char *path, const char *mountinfo, const char *swaps,
			  char *reason, size_t reason_len);

/*
 * 1 when an NVMe controller's model names a network volume that only looks
 * like NVMe (AWS EBS on Nitro "Amazon Elastic Block Store", GCP Persistent
 * Disk "nvme_card-pd"): not local NVMe.
 */
int blockdev_model_is_network(const char *model);

/* 1 when device maj:min is local NVMe or a dm/md device built only on it. */
int blockdev_is_nvme(unsigned maj, unsigned min);

/*
 * The mount point of the largest writable filesystem on local NVMe, from
 * mountinfo (NULL: /proc/self/mountinfo); malloc'd, NULL when none.
 */
char *blockdev_largest_nvme_mount(const char *mountinfo);

/* Decodes mountinfo's octal escapes (\040 for space) in place. */
void blockdev_unescape(char *s);

#endif
