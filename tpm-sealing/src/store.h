/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/*
 * The key store of an appliance image: a partition readable before the
 * root is mounted (the EFI system partition), named by BTRFS_AUTH_STORE
 * in btrfs-auth.conf, whose directory btrfs-auth/ holds NAME.sealed.
 */
#define BA_CONF_STORE "BTRFS_AUTH_STORE"
#define BA_CONF_STORE_FSTYPE "BTRFS_AUTH_STORE_FSTYPE"
#define BA_STORE_MOUNT "/run/btrfs-auth/store"

/* Polls for a device node for at most wait_seconds; returns an exit code after logging. */
int ba_wait_for_device(const char *dev, unsigned wait_seconds, const char *what);

struct ba_store {
        char *keydir;  /* <mount point or directory>/btrfs-auth */
        bool mounted;
};

/*
 * Waits for dev, then mounts it (fstype, default vfat) at BA_STORE_MOUNT
 * in a mount namespace of this process only, so nobody else sees it and
 * it goes away with the process; creates the key directory.  A directory
 * (an ESP mounted already) is used as it is.  Returns an exit code after
 * logging.
 */
int ba_store_open(const char *dev, const char *fstype, unsigned wait_seconds, struct ba_store *st);
/* Flushes and unmounts; errors are logged. */
void ba_store_close(struct ba_store *st);
