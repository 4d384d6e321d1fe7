/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdint.h>

#include "secure.h"
#include "util.h"

/*
 * How new an authenticated btrfs is on disk, read before it is mounted:
 * every superblock copy (64 KiB, 64 MiB, 256 GiB) of every device that
 * carries the filesystem, each counted only when its HMAC verifies with
 * the key.  A device belongs to the filesystem when its primary copy
 * names the fsid and verifies; the filesystem is complete when as many
 * distinct device ids are found as the superblock's num_devices.
 */
struct ba_disk_generation {
        uint64_t newest;         /* the newest authentic generation of any copy */
        uint64_t oldest_primary; /* the oldest authentic primary copy of any device */
        unsigned devices;        /* distinct devices found */
        unsigned copies;         /* authentic copies read */
};

/*
 * Looks at devices (NULL-terminated paths, or NULL) and the block devices in
 * /sys/class/block, waiting up to wait_s seconds for all of the
 * filesystem's devices to appear.  Returns an exit code after logging.
 */
int ba_disk_generation_read(const char *const *devices, const uint8_t fsid[BA_UUID_SIZE], const struct ba_secret *key,
                            unsigned wait_s, struct ba_disk_generation *g);

/* One superblock copy: 1 when it is fsid's, at offset, and its HMAC verifies; 0 when not; <0 crypto failure. */
int ba_sb_copy_authentic(const uint8_t sb[4096], uint64_t offset, const uint8_t fsid[BA_UUID_SIZE],
                         const struct ba_secret *key);
